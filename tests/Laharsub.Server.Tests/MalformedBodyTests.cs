using System.Text.Json;
using System.Text;
using Laharsub.Server.Tests.Support;
using Laharsub.Testing;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;

namespace Laharsub.Server.Tests;

/// <summary>
/// A request body that is malformed or never arrives gets 400 or 408 with a problem detail, one
/// warning in the log (no error, no stack trace), and publishes nothing.
/// </summary>
public sealed class MalformedBodyTests : IAsyncLifetime
{
    /// <summary>Kestrel's slowest allowed grace period is just over its 1 s heartbeat; 2 s keeps the slow-body test short.</summary>
    internal static readonly MinDataRate QuickBodyDataRate = new(bytesPerSecond: 240, gracePeriod: TimeSpan.FromSeconds(2));

    private readonly LogRecorder _logs = new();
    private LaharsubTestServer _server = null!;
    private HttpClient _client = null!;
    private long _topic;

    public async Task InitializeAsync()
    {
        _server = await LaharsubTestServer.StartAsync(services: s =>
        {
            s.AddSingleton<ILoggerProvider>(_logs);
            s.Configure<KestrelServerOptions>(kestrel => kestrel.Limits.MinRequestBodyDataRate = QuickBodyDataRate);
        });
        _client = _server.CreateClient();
        _topic = await _client.CreateTopicAsync();
    }

    public async Task DisposeAsync()
    {
        _client.Dispose();
        await _server.DisposeAsync();
        _logs.Dispose();
    }

    [Theory]
    [InlineData("ZZ\r\nx\r\n0\r\n\r\n", "Bad chunk size")]
    [InlineData("1\r\nxyz\r\n0\r\n\r\n", "Bad chunk suffix")]
    [InlineData("80000000\r\nx\r\n0\r\n\r\n", "Bad chunk size")]
    [InlineData("FFFFFFFFFFFFFFFFFF\r\nx\r\n0\r\n\r\n", "Bad chunk size")]
    [InlineData("1\r\nx\n0\r\n\r\n", "Bad chunk suffix")]
    [InlineData("0\r\nbad trailer\r\n\r\n", "Invalid request header")]
    public async Task ABrokenChunkedBodyIs400WithAProblemDetailAndOneWarning(string chunkedBody, string expectedReason)
    {
        var request = $"POST /ps/topics/{_topic} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n{chunkedBody}";

        var response = await SendAsync(request);

        Assert.Equal(400, response.Status);
        var detail = AssertProblem(response, 400);
        Assert.Contains(expectedReason, detail);
        Assert.Contains("chunked encoding", detail);
        await AssertOneWarningAndNothingPublishedAsync();
    }

    [Fact]
    public async Task ABodyThatNeverArrivesIs408WithAProblemDetailAndOneWarning()
    {
        var request = $"POST /ps/topics/{_topic} HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabcde";

        var response = await SendAsync(request);

        Assert.Equal(408, response.Status);
        Assert.Contains("Kestrel:Limits:MinRequestBodyDataRate", AssertProblem(response, 408));
        await AssertOneWarningAndNothingPublishedAsync();
    }

    private async Task<RawResponse> SendAsync(string request)
    {
        using var timeout = new CancellationTokenSource(WireClient.Bound);
        var response = await RawHttp.ExchangeAsync(_server.BaseAddress, Encoding.ASCII.GetBytes(request), timeout.Token);
        Assert.True(response is not null, "the server closed the connection without answering");
        return response;
    }

    private static string AssertProblem(RawResponse response, int status)
    {
        Assert.Equal("application/problem+json", response.Header("Content-Type"));
        using var problem = JsonDocument.Parse(response.Body);
        Assert.Equal(status, problem.RootElement.GetProperty("status").GetInt32());
        return problem.RootElement.GetProperty("detail").GetString()!;
    }

    private async Task AssertOneWarningAndNothingPublishedAsync()
    {
        // The bad request's own line; the start-up lines (such as Open mode's warning) are not about it.
        var entry = Assert.Single(_logs.Entries, e => e.Category.Contains("BadRequestExceptionHandler", StringComparison.Ordinal));
        Assert.DoesNotContain(_logs.Entries, e => e.Level >= LogLevel.Error);
        Assert.All(_logs.Entries.Where(e => e.Level == LogLevel.Warning && e != entry),
            e => Assert.Equal("Laharsub.Server.LaharsubAccess", e.Category));
        Assert.Equal(LogLevel.Warning, entry.Level);
        Assert.Null(entry.Exception);
        Assert.DoesNotContain("\n", entry.Message);
        Assert.Equal(0, (await _client.GetTopicAsync(_topic)).GetProperty("lastMessageId").GetInt64());
    }
}

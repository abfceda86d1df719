using System.Diagnostics;
using System.Net;
using System.Net.Http.Headers;
using System.Text;
using System.Text.Json;
using Laharsub.Server.Host.Composition;
using Laharsub.Server.Tests.Support;
using Laharsub.Testing;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;

namespace Laharsub.Server.Tests.Access.Backend;

/// <summary>
/// Backend mode: the application's own HTTP endpoint (here a Python process, as a non-.NET application's would be)
/// decides from the caller's forwarded Authorization or Cookie; its answers are kept for the time they give; no
/// valid answer in time refuses (fails closed). The fast path leaves every request to the pipeline.
/// </summary>
public sealed class BackendAuthorizationTests : IAsyncLifetime
{
    private static readonly TimeSpan Bound = WireClient.Bound;

    private Process _receiver = null!;
    private Uri _receiverAddress = null!;

    public async Task InitializeAsync()
    {
        var script = Path.Combine(AppContext.BaseDirectory, "Access", "Backend", "receiver.py");
        var start = new ProcessStartInfo("python3", [script]) { RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false };
        _receiver = Process.Start(start) ?? throw new InvalidOperationException("python3 could not be started: install Debian's python3 for the backend receiver.");
        var line = await _receiver.StandardOutput.ReadLineAsync().WaitAsync(Bound)
            ?? throw new InvalidOperationException($"The backend receiver exited at start: {await _receiver.StandardError.ReadToEndAsync()}");
        _receiverAddress = new Uri($"http://127.0.0.1:{int.Parse(line["listening ".Length..])}/");
    }

    public Task DisposeAsync()
    {
        _receiver.Kill(entireProcessTree: true);
        _receiver.Dispose();
        return Task.CompletedTask;
    }

    private readonly LogRecorder _logs = new();

    /// <summary>
    /// A server asking the receiver within <paramref name="timeout"/>: 15 s (inside the requests' bound of 20 s) unless a
    /// test needs the refusal at the timeout, so that a loaded machine's slow receiver is not mistaken for a refusing one.
    /// </summary>
    private Task<LaharsubTestServer> StartServerAsync(bool fastPath = true, string timeout = "00:00:15") => LaharsubTestServer.StartAsync(
        services: s => s.AddSingleton<ILoggerProvider>(_logs),
        settings: new Dictionary<string, string?>
        {
            ["Laharsub:Auth:Mode"] = "Backend",
            ["Laharsub:Auth:Backend:Url"] = new Uri(_receiverAddress, "authorize").ToString(),
            ["Laharsub:Auth:Backend:Timeout"] = timeout,
            [StandaloneHost.FastPathSetting] = fastPath ? "true" : "false",
        });

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public async Task TheBackendDecidesFromTheForwardedCredentials(bool fastPath)
    {
        await using var server = await StartServerAsync(fastPath);
        using var requests = new FastPathRequestCounter(server.Services);
        using var ann = Client(server, "Bearer ann");
        using var bob = Client(server, cookie: "user=bob");
        using var anonymous = server.CreateClient();

        var annsTopic = await CreateAsync(ann, "ann-orders", HttpStatusCode.Created);
        var bobsTopic = await CreateAsync(bob, "bob-orders", HttpStatusCode.Created);
        await CreateAsync(ann, "bob-more", HttpStatusCode.Forbidden);
        await CreateAsync(anonymous, "ann-more", HttpStatusCode.Unauthorized);
        await ExpectAsync(ann, HttpMethod.Post, $"topics/{annsTopic}", HttpStatusCode.Created, "hello");
        await ExpectAsync(ann, HttpMethod.Get, $"subscriptions?topics={annsTopic}:1&timeout=0", HttpStatusCode.OK);
        await ExpectAsync(ann, HttpMethod.Get, $"subscriptions?topics={annsTopic}:1,{bobsTopic}:1&timeout=0", HttpStatusCode.Forbidden);
        await ExpectAsync(bob, HttpMethod.Post, $"topics/{annsTopic}", HttpStatusCode.Forbidden, "not mine");
        await ExpectAsync(anonymous, HttpMethod.Get, $"subscriptions?topics={bobsTopic}:1&timeout=0", HttpStatusCode.Unauthorized);

        // The same question again is answered from what the backend said (cacheSeconds 60): no call.
        var calls = await CallsAsync();
        await ExpectAsync(ann, HttpMethod.Get, $"subscriptions?topics={annsTopic}:1&timeout=0", HttpStatusCode.OK);
        Assert.Equal(calls, await CallsAsync());

        using var stored = await ann.GetAsync($"topics/{annsTopic}").WaitAsync(Bound);
        Assert.Equal(1, JsonDocument.Parse(await stored.Content.ReadAsStringAsync()).RootElement.GetProperty("lastMessageId").GetInt64());
        Assert.Equal(0, requests.Count("poll") + requests.Count("publish"));
    }

    [Theory]
    [InlineData("Bearer slow")]
    [InlineData("Bearer broken")]
    public async Task NoValidAnswerInTimeRefuses(string authorization)
    {
        // The slow user is answered after 30 s: refused at the 5 s timeout.
        await using var server = await StartServerAsync(timeout: "00:00:05");
        using var caller = Client(server, authorization);
        var watch = Stopwatch.StartNew();

        await CreateAsync(caller, authorization[7..] + "-topic", HttpStatusCode.Forbidden);

        // Refused at the timeout (5 s here), not after the slow backend's 30 s.
        Assert.True(watch.Elapsed < TimeSpan.FromSeconds(25), $"refused after {watch.Elapsed}");
    }

    private static HttpClient Client(LaharsubTestServer server, string? authorization = null, string? cookie = null)
    {
        var client = server.CreateClient();
        if (authorization is not null)
        {
            client.DefaultRequestHeaders.TryAddWithoutValidation("Authorization", authorization);
        }
        if (cookie is not null)
        {
            client.DefaultRequestHeaders.TryAddWithoutValidation("Cookie", cookie);
        }
        return client;
    }

    private async Task<long> CreateAsync(HttpClient client, string label, HttpStatusCode expected)
    {
        using var created = await client.PostAsync("topics", new StringContent($$"""{"label":"{{label}}"}""", Encoding.UTF8, "application/json")).WaitAsync(Bound);
        var body = await created.Content.ReadAsStringAsync();
        Assert.True(created.StatusCode == expected, $"creating {label}: {(int)created.StatusCode} {body}{await WhatHappenedAsync()}");
        return expected == HttpStatusCode.Created ? JsonDocument.Parse(body).RootElement.GetProperty("topicId").GetInt64() : 0;
    }

    private async Task ExpectAsync(HttpClient client, HttpMethod method, string path, HttpStatusCode expected, string? text = null)
    {
        using var request = new HttpRequestMessage(method, path) { Content = text is null ? null : new StringContent(text) };
        using var response = await client.SendAsync(request).WaitAsync(Bound);
        var body = await response.Content.ReadAsStringAsync();
        Assert.True(response.StatusCode == expected, $"{method} {path}: {(int)response.StatusCode} {body}{await WhatHappenedAsync()}");
        if ((int)expected is 401 or 403)
        {
            Assert.Contains("Nothing was changed", JsonDocument.Parse(body).RootElement.GetProperty("detail").GetString());
        }
    }

    private async Task<long> CallsAsync() => JsonDocument.Parse(await ReceiverLogAsync()).RootElement.GetProperty("calls").GetInt64();

    private async Task<string> ReceiverLogAsync()
    {
        using var http = new HttpClient();
        return await http.GetStringAsync(new Uri(_receiverAddress, "calls")).WaitAsync(Bound);
    }

    /// <summary>For a failure's message: the questions the receiver answered, and what the server warned of.</summary>
    private async Task<string> WhatHappenedAsync() =>
        $"\nreceiver: {await ReceiverLogAsync()}\nserver warnings: {string.Join(" | ", _logs.Entries.Select(e => e.Message))}";
}

using System.Collections.Concurrent;
using System.Diagnostics.Metrics;
using System.Globalization;
using System.Net;
using System.Net.Sockets;
using System.Security.Cryptography;
using System.Text;
using System.Text.Json;
using Laharsub.Server.Tests.Support;
using Laharsub.Testing;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Time.Testing;

namespace Laharsub.Server.Tests.Presence;

/// <summary>
/// Presence webhooks (docs/protocol.md, "Webhooks"): signed calls that a local receiver verifies, in order,
/// once each; to a receiver that is down, retried, then dropped, logged and counted; and the bound on waiting calls.
/// </summary>
public sealed class PresenceWebhookTests
{
    private const string Secret = "0123456789abcdef0123";
    private static readonly TimeSpan Grace = TimeSpan.FromSeconds(15);

    [Fact]
    public async Task AMembersLifeReachesTheReceiverSignedOnceEachAsJoinOccupiedLeaveVacated()
    {
        await using var receiver = await Receiver.StartAsync(Secret);
        var clock = new FakeTimeProvider();
        var start = clock.GetUtcNow().ToUnixTimeSeconds();
        await using var server = await LaharsubTestServer.StartAsync(services: s => s.AddSingleton<TimeProvider>(clock), settings: new Dictionary<string, string?>
        {
            ["Laharsub:Presence:Webhook:Url"] = receiver.Url,
            ["Laharsub:Presence:Webhook:Secret"] = Secret,
        });
        using var client = server.CreateClient();
        var (topic, _) = await client.CreatePresenceTopicAsync();
        var (sentinelTopic, _) = await client.CreatePresenceTopicAsync();

        var data = Uri.EscapeDataString("""{"name":"Alice"}""");
        Assert.Equal(HttpStatusCode.NoContent, (await client.PollAsync($"topics={topic}&timeout=0&client=alice&member={data}")).Status);
        await Eventually.HoldsAsync(() => Task.FromResult(receiver.Calls.Count == 2), WireClient.Bound, "join and occupied arrive");
        await clock.AdvanceUntilAsync(() => Task.FromResult(receiver.Calls.Count == 4), TimeSpan.FromSeconds(1), "leave and vacated arrive");

        // Calls go out one at a time in order: once the sentinel's pair (another topic) has arrived, a
        // repeat of alice's would have arrived before it.
        await clock.AdvanceInStepsAsync(2 * Grace, TimeSpan.FromSeconds(1));
        Assert.Equal(HttpStatusCode.NoContent, (await client.PollAsync($"topics={sentinelTopic}&timeout=0&client=bob")).Status);
        await Eventually.HoldsAsync(() => Task.FromResult(receiver.Calls.Count >= 6), WireClient.Bound, "the sentinel's join and occupied arrive");

        Assert.Empty(receiver.Refused);
        var calls = receiver.Calls.ToArray();
        Assert.Equal(
            [("join", topic, "alice", 1), ("occupied", topic, "alice", 1), ("leave", topic, "alice", 0), ("vacated", topic, "alice", 0),
             ("join", sentinelTopic, "bob", 1), ("occupied", sentinelTopic, "bob", 1)],
            calls.Select(c => (c.Body.GetProperty("type").GetString(), c.Body.GetProperty("topicId").GetInt64(),
                c.Body.GetProperty("member").GetString(), c.Body.GetProperty("occupancy").GetInt32())));
        var now = clock.GetUtcNow();
        foreach (var call in calls)
        {
            Assert.Equal(["type", "topicId", "member", "data", "occupancy", "at"], call.Body.EnumerateObject().Select(p => p.Name));
            Assert.Equal("application/json", call.ContentType);
            // t and at are the server's (fake) clock: within this test's span of it.
            Assert.InRange(call.SignedAt, start, now.ToUnixTimeSeconds());
            Assert.InRange(call.Body.GetProperty("at").GetDateTimeOffset(), DateTimeOffset.FromUnixTimeSeconds(start), now);
        }
        Assert.All(calls[..4], c => Assert.Equal("""{"name":"Alice"}""", c.Body.GetProperty("data").GetRawText()));
        Assert.All(calls[4..], c => Assert.Equal(JsonValueKind.Null, c.Body.GetProperty("data").ValueKind));
    }

    [Fact]
    public async Task TheReceiversVerificationRefusesACallSignedWithAnotherSecretOrAnAlteredBody()
    {
        // Proves that the verification above can fail: the same receiver, calls signed by the server's own signer.
        await using var receiver = await Receiver.StartAsync(Secret);
        using var http = new HttpClient();
        var body = Encoding.UTF8.GetBytes("""{"type":"join","topicId":1,"member":"mallory","data":null,"occupancy":1,"at":"2026-11-26T18:00:00+00:00"}""");
        var t = DateTimeOffset.UtcNow.ToUnixTimeSeconds();

        Assert.Equal(HttpStatusCode.Unauthorized, await receiver.PostAsync(http, body, Laharsub.Server.Delivery.PresenceWebhook.Sign(Encoding.UTF8.GetBytes("another secret, 20+ chars"), t, body)));
        Assert.Equal(HttpStatusCode.Unauthorized, await receiver.PostAsync(http, [.. body, (byte)' '], Laharsub.Server.Delivery.PresenceWebhook.Sign(Encoding.UTF8.GetBytes(Secret), t, body)));
        Assert.Equal(HttpStatusCode.Unauthorized, await receiver.PostAsync(http, body, null));
        Assert.Equal(HttpStatusCode.OK, await receiver.PostAsync(http, body, Laharsub.Server.Delivery.PresenceWebhook.Sign(Encoding.UTF8.GetBytes(Secret), t, body)));
        Assert.Equal(3, receiver.Refused.Count);
        Assert.Single(receiver.Calls);
    }
    [Fact]
    public async Task ACallToAReceiverThatIsDownIsRetriedThenDroppedLoggedAndCounted()
    {
        var logs = new LogRecorder();
        await using var server = await StartAsync(logs, maxAttempts: 3, maxOutstanding: 100, retryDelay: "00:00:00.010");
        using var dropped = new DropCounter(server);
        using var client = server.CreateClient();
        var (topic, _) = await client.CreatePresenceTopicAsync();

        await client.PollAsync($"topics={topic}&timeout=0&client=alice");

        // join and occupied: each tried three times, then dropped.
        await Eventually.HoldsAsync(() => Task.FromResult(dropped.Count("failed") == 2), WireClient.Bound, "both calls are dropped after their attempts");
        Assert.Equal(2, logs.Entries.Count(e => e.Message.Contains("dropped after 3 attempts", StringComparison.Ordinal)));
    }

    [Fact]
    public async Task CallsBeyondMaxOutstandingAreDroppedAtOnceLoggedAndCounted()
    {
        var logs = new LogRecorder();
        // The first call waits ten minutes for its retry, so the queue of one fills.
        await using var server = await StartAsync(logs, maxAttempts: 2, maxOutstanding: 1, retryDelay: "00:10:00");
        using var dropped = new DropCounter(server);
        using var client = server.CreateClient();
        var (topic, _) = await client.CreatePresenceTopicAsync();

        foreach (var member in new[] { "alice", "bob", "carol" })
        {
            await client.PollAsync($"topics={topic}&timeout=0&client={member}");
        }

        // Four calls (three joins and occupied): one sending, at most one waiting, the others dropped.
        await Eventually.HoldsAsync(() => Task.FromResult(dropped.Count("full") >= 2), WireClient.Bound, "calls beyond the bound are dropped");
        Assert.Contains(logs.Entries, e => e.Message.Contains("MaxOutstanding", StringComparison.Ordinal));
    }

    private static async Task<LaharsubTestServer> StartAsync(LogRecorder logs, int maxAttempts, int maxOutstanding, string retryDelay)
    {
        // A port nobody listens on: the receiver is down.
        using var probe = new TcpListener(IPAddress.Loopback, 0);
        probe.Start();
        var port = ((IPEndPoint)probe.LocalEndpoint).Port;
        probe.Stop();
        return await LaharsubTestServer.StartAsync(services: s => s.AddSingleton<ILoggerProvider>(logs), settings: new Dictionary<string, string?>
        {
            ["Laharsub:Presence:Webhook:Url"] = $"http://127.0.0.1:{port}/hook",
            ["Laharsub:Presence:Webhook:Secret"] = Secret,
            ["Laharsub:Presence:Webhook:MaxAttempts"] = maxAttempts.ToString(System.Globalization.CultureInfo.InvariantCulture),
            ["Laharsub:Presence:Webhook:MaxOutstanding"] = maxOutstanding.ToString(System.Globalization.CultureInfo.InvariantCulture),
            ["Laharsub:Presence:Webhook:FirstRetryDelay"] = retryDelay,
        });
    }

    /// <summary>Counts one server's <c>laharsub.presence.webhook.dropped</c> by reason.</summary>
    private sealed class DropCounter : IDisposable
    {
        private readonly MeterListener _listener = new();
        private readonly ConcurrentDictionary<string, long> _counts = new();

        public DropCounter(LaharsubTestServer server)
        {
            var meters = server.Services.GetRequiredService<IMeterFactory>();
            _listener.InstrumentPublished = (instrument, listener) =>
            {
                if (instrument.Name == "laharsub.presence.webhook.dropped" && ReferenceEquals(instrument.Meter.Scope, meters))
                {
                    listener.EnableMeasurementEvents(instrument);
                }
            };
            _listener.SetMeasurementEventCallback<long>((_, value, tags, _) =>
            {
                foreach (var tag in tags)
                {
                    if (tag.Key == "reason")
                    {
                        _counts.AddOrUpdate((string)tag.Value!, value, (_, count) => count + value);
                    }
                }
            });
            _listener.Start();
        }

        public long Count(string reason) => _counts.TryGetValue(reason, out var count) ? count : 0;

        public void Dispose() => _listener.Dispose();
    }

    /// <summary>
    /// A webhook receiver on loopback that checks <c>Laharsub-Signature</c> as docs/protocol.md tells
    /// receivers to, computed here independently of the server: verified calls are kept and answered 200,
    /// others are counted in <see cref="Refused"/> and answered 401.
    /// </summary>
    private sealed class Receiver : IAsyncDisposable
    {
        private readonly WebApplication _app;
        private readonly byte[] _secret;

        private Receiver(WebApplication app, string secret)
        {
            _app = app;
            _secret = Encoding.UTF8.GetBytes(secret);
        }

        public ConcurrentQueue<(long SignedAt, string? ContentType, JsonElement Body)> Calls { get; } = new();

        public ConcurrentQueue<string> Refused { get; } = new();

        public string Url => _app.Urls.First() + "/hook";

        public static async Task<Receiver> StartAsync(string secret)
        {
            var builder = WebApplication.CreateSlimBuilder();
            builder.WebHost.UseUrls("http://127.0.0.1:0");
            builder.Logging.ClearProviders();
            var app = builder.Build();
            var receiver = new Receiver(app, secret);
            app.MapPost("/hook", receiver.ReceiveAsync);
            await app.StartAsync().WaitAsync(WireClient.Bound);
            return receiver;
        }

        public async Task<HttpStatusCode> PostAsync(HttpClient http, byte[] body, string? signature)
        {
            using var request = new HttpRequestMessage(HttpMethod.Post, Url) { Content = new ByteArrayContent(body) };
            if (signature is not null)
            {
                request.Headers.TryAddWithoutValidation("Laharsub-Signature", signature);
            }
            using var response = await http.SendAsync(request).WaitAsync(WireClient.Bound);
            return response.StatusCode;
        }

        private async Task<IResult> ReceiveAsync(HttpRequest request)
        {
            using var buffer = new MemoryStream();
            await request.Body.CopyToAsync(buffer);
            var body = buffer.ToArray();
            var header = request.Headers["Laharsub-Signature"].ToString();
            if (Verify(header, body) is not { } signedAt)
            {
                Refused.Enqueue(header);
                return Results.Unauthorized();
            }
            Calls.Enqueue((signedAt, request.ContentType, JsonDocument.Parse(body).RootElement.Clone()));
            return Results.Ok();
        }

        /// <summary>The header's <c>t</c> when its <c>v1</c> is the HMAC-SHA256 of <c>"t.body"</c> with the secret; otherwise null.</summary>
        private long? Verify(string header, byte[] body)
        {
            var parts = header.Split(',');
            if (parts.Length != 2 || !parts[0].StartsWith("t=", StringComparison.Ordinal) || !parts[1].StartsWith("v1=", StringComparison.Ordinal)
                || !long.TryParse(parts[0].AsSpan(2), NumberStyles.None, CultureInfo.InvariantCulture, out var t))
            {
                return null;
            }
            using var hmac = new HMACSHA256(_secret);
            var expected = Convert.ToHexString(hmac.ComputeHash([.. Encoding.ASCII.GetBytes($"{t}."), .. body]));
            return string.Equals(expected, parts[1][3..], StringComparison.OrdinalIgnoreCase) ? t : null;
        }

        public async ValueTask DisposeAsync() => await _app.DisposeAsync();
    }
}

using System.Collections.Concurrent;
using System.Diagnostics.Metrics;
using System.Net;
using System.Net.Sockets;
using Laharsub.Server.Tests.Support;
using Laharsub.Testing;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;

namespace Laharsub.Server.Tests.Presence;

/// <summary>Presence webhooks to a receiver that is down: retried, then dropped, logged and counted; and the bound on waiting calls.</summary>
public sealed class PresenceWebhookTests
{
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
            ["Laharsub:Presence:Webhook:Secret"] = "0123456789abcdef0123",
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
}

using System.Collections.Concurrent;
using System.Diagnostics.Metrics;
using System.Net.Sockets;
using System.Text;
using Laharsub.Server.Tests.Support;
using Laharsub.Testing;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Time.Testing;

namespace Laharsub.Server.Tests.Streams;

/// <summary>
/// A stream whose client stops reading is ended once one write has waited <c>Streams:MaxWriteWait</c> on the
/// server's clock (docs/protocol.md, "Streams"), and counted as <c>too_slow</c>; the client resumes from its
/// cursors on a new stream.
/// </summary>
public sealed class StreamWriteDeadlineTests
{
    private static readonly TimeSpan MaxWriteWait = TimeSpan.FromSeconds(30);

    [Theory]
    [InlineData("sse")]
    [InlineData("websocket")]
    public async Task AStreamWhoseClientStopsReadingIsEndedAfterMaxWriteWait(string transport)
    {
        var clock = new FakeTimeProvider();
        await using var server = await LaharsubTestServer.StartAsync(o =>
        {
            o.MaxMessageBytes = 256 * 1024;
            o.MaxMessagesPerTopic = 1000;
            o.MaxRetainedBytes = 512L * 1024 * 1024;
            o.MessageTimeToLive = TimeSpan.FromDays(1);
            o.Streams.MaxWriteWait = MaxWriteWait;
        }, services => services.AddSingleton<TimeProvider>(clock));
        using var outcomes = new PollOutcomes(server);
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();
        using var timeout = new CancellationTokenSource(WireClient.Bound);
        // A small receive buffer, never read: the server's writes soon wait on this client.
        using var deaf = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { ReceiveBufferSize = 4096 };
        await deaf.ConnectAsync(server.BaseAddress.Host, server.BaseAddress.Port, timeout.Token);
        var path = $"{server.ApiAddress.AbsolutePath}subscriptions?topics={topic}";
        var head = transport == "sse"
            ? $"GET {path} HTTP/1.1\r\nHost: test\r\nAccept: text/event-stream\r\n\r\n"
            : $"GET {path} HTTP/1.1\r\nHost: test\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
              + $"Sec-WebSocket-Key: {Convert.ToBase64String(new byte[16])}\r\nSec-WebSocket-Protocol: laharsub.v1\r\n\r\n";
        await deaf.SendAsync(Encoding.ASCII.GetBytes(head), timeout.Token);
        await Eventually.HoldsAsync(() => Task.FromResult(server.WaitingPolls(topic) == 1), WireClient.Bound, "the stream never waited");
        // A quiet stream has no write waiting (a heartbeat's is done at once): time alone ends nothing.
        for (var i = 0; i < 4; i++)
        {
            clock.Advance(MaxWriteWait + TimeSpan.FromMilliseconds(1));
        }
        await Eventually.HoldsAsync(() => Task.FromResult(server.WaitingPolls(topic) == 1), WireClient.Bound, "the quiet stream stopped waiting");
        Assert.Equal(0, outcomes.Count("too_slow"));

        var body = new byte[256 * 1024];
        Array.Fill(body, (byte)'x');
        var published = 0;
        // Until the server's write waits on the client: each turn publishes one more message and then moves the
        // clock past MaxWriteWait; only a write that is still waiting then ends the stream.
        while (outcomes.Count("too_slow") == 0 && published < 400)
        {
            await client.PublishAsync(topic, body, "text/plain");
            published++;
            clock.Advance(MaxWriteWait + TimeSpan.FromMilliseconds(1));
        }

        Assert.Equal(1, outcomes.Count("too_slow"));
        await Eventually.HoldsAsync(() => Task.FromResult(server.WaitingPolls(topic) == 0), WireClient.Bound, "the ended stream still waits on its topic");
    }

    /// <summary>Counts <c>laharsub.polls</c> of one server by <c>laharsub.poll.outcome</c>.</summary>
    private sealed class PollOutcomes : IDisposable
    {
        private readonly MeterListener _listener = new();
        private readonly ConcurrentDictionary<string, long> _counts = new();

        public PollOutcomes(LaharsubTestServer server)
        {
            var meters = server.Services.GetRequiredService<IMeterFactory>();
            _listener.InstrumentPublished = (instrument, listener) =>
            {
                if (instrument.Name == "laharsub.polls" && ReferenceEquals(instrument.Meter.Scope, meters))
                {
                    listener.EnableMeasurementEvents(instrument);
                }
            };
            _listener.SetMeasurementEventCallback<long>((_, value, tags, _) =>
            {
                foreach (var tag in tags)
                {
                    if (tag.Key == "laharsub.poll.outcome")
                    {
                        _counts.AddOrUpdate((string)tag.Value!, value, (_, count) => count + value);
                    }
                }
            });
            _listener.Start();
        }

        public long Count(string outcome) => _counts.GetValueOrDefault(outcome);

        public void Dispose() => _listener.Dispose();
    }
}

using System.Diagnostics.Metrics;
using System.Net.Sockets;
using System.Text;
using Laharsub.Server.Transport;
using Laharsub.Server.Tests.Support;
using Laharsub.Testing;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Time.Testing;

namespace Laharsub.Server.Tests.Streams;

/// <summary>
/// A WebSocket whose client sends frames but does not read costs bounded memory (docs/protocol.md,
/// "WebSocket"): while its run waits on a write, the socket queues at most
/// <see cref="WebSocketSession.MaxQueuedFrames"/> subscribe and unsubscribe frames and then stops
/// reading, until <c>MaxWriteWait</c> ends it.
/// </summary>
public sealed class WebSocketFrameQueueTests
{
    private static readonly TimeSpan MaxWriteWait = TimeSpan.FromSeconds(30);

    [Fact]
    public async Task ASocketThatDoesNotReadQueuesAtMostTheBoundOfFramesThenStopsReadingUntilMaxWriteWaitEndsIt()
    {
        var clock = new FakeTimeProvider();
        await using var server = await LaharsubTestServer.StartAsync(o =>
        {
            o.MaxMessageBytes = 256 * 1024;
            o.MaxRetainedBytes = 512L * 1024 * 1024;
            o.MessageTimeToLive = TimeSpan.FromDays(1);
            o.Streams.MaxWriteWait = MaxWriteWait;
        }, services => services.AddSingleton<TimeProvider>(clock));
        using var meters = new SocketMeters(server);
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();
        var other = await client.CreateTopicAsync();
        using var timeout = new CancellationTokenSource(WireClient.Bound);
        // A small receive buffer, never read: the server's writes soon wait on this client.
        using var deaf = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { ReceiveBufferSize = 4096 };
        await deaf.ConnectAsync(server.BaseAddress.Host, server.BaseAddress.Port, timeout.Token);
        await deaf.SendAsync(Encoding.ASCII.GetBytes(
            $"GET {server.ApiAddress.AbsolutePath}subscriptions?topics={topic} HTTP/1.1\r\nHost: test\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + $"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: {Convert.ToBase64String(new byte[16])}\r\nSec-WebSocket-Protocol: laharsub.v1\r\n\r\n"), timeout.Token);
        await Eventually.HoldsAsync(() => Task.FromResult(server.WaitingPolls(topic) == 1), WireClient.Bound, "the socket's subscription never waited");
        // 16 MiB for a client that reads nothing: the run's write waits on it.
        var body = new byte[256 * 1024];
        Array.Fill(body, (byte)'x');
        for (var i = 0; i < 64; i++)
        {
            await client.PublishAsync(topic, body, "text/plain");
        }

        // Valid frames, each a change the run must apply: alternately unsubscribe and subscribe to another topic.
        const int sent = 2000;
        var frames = new List<byte>();
        for (var i = 0; i < sent; i++)
        {
            frames.AddRange(MaskedTextFrame(i % 2 == 0
                ? $$"""{"type":"unsubscribe","id":"u{{i}}","topics":"{{other}}"}"""
                : $$"""{"type":"subscribe","id":"s{{i}}","topics":"{{other}}"}"""));
        }
        await deaf.SendAsync(frames.ToArray(), timeout.Token);
        // The run is stuck in its write, so it takes none of them: the socket queues the bound and reads no further.
        await Eventually.HoldsAsync(() => Task.FromResult(meters.Queued >= WebSocketSession.MaxQueuedFrames), WireClient.Bound,
            $"the socket queued {meters.Queued} frames, not {WebSocketSession.MaxQueuedFrames}");

        // MaxWriteWait passes for the stuck write: the socket is ended as too slow, and its queue goes with it.
        clock.Advance(MaxWriteWait + TimeSpan.FromMilliseconds(1));
        await Eventually.HoldsAsync(() => Task.FromResult(meters.TooSlow == 1 && meters.Queued == 0), WireClient.Bound,
            $"the socket was not ended as too slow ({meters.TooSlow}) or left {meters.Queued} frames queued");
        Assert.Equal(WebSocketSession.MaxQueuedFrames, meters.MostQueued);
        await Eventually.HoldsAsync(() => Task.FromResult(server.WaitingPolls(topic) == 0), WireClient.Bound, "the ended socket still waits on its topic");
    }

    /// <summary>A client's text frame (masked, as a client's must be, with a zero key: the payload reads as is).</summary>
    private static byte[] MaskedTextFrame(string text)
    {
        var payload = Encoding.UTF8.GetBytes(text);
        Assert.True(payload.Length < 126, "a short frame");
        return [0x81, (byte)(0x80 | payload.Length), 0, 0, 0, 0, .. payload];
    }

    /// <summary>One server's <c>laharsub.websocket.frames.queued</c> (now and at most) and its streams ended <c>too_slow</c>.</summary>
    private sealed class SocketMeters : IDisposable
    {
        private readonly MeterListener _listener = new();
        private readonly Lock _lock = new();
        private long _queued, _mostQueued, _tooSlow;

        public SocketMeters(LaharsubTestServer server)
        {
            var meters = server.Services.GetRequiredService<IMeterFactory>();
            _listener.InstrumentPublished = (instrument, listener) =>
            {
                if (instrument.Name is "laharsub.websocket.frames.queued" or "laharsub.polls" && ReferenceEquals(instrument.Meter.Scope, meters))
                {
                    listener.EnableMeasurementEvents(instrument);
                }
            };
            _listener.SetMeasurementEventCallback<long>((instrument, value, tags, _) =>
            {
                lock (_lock)
                {
                    if (instrument.Name == "laharsub.polls")
                    {
                        foreach (var tag in tags)
                        {
                            _tooSlow += tag is { Key: "laharsub.poll.outcome", Value: "too_slow" } ? value : 0;
                        }
                        return;
                    }
                    _queued += value;
                    _mostQueued = Math.Max(_mostQueued, _queued);
                }
            });
            _listener.Start();
        }

        public long Queued
        {
            get { lock (_lock) { return _queued; } }
        }

        public long MostQueued
        {
            get { lock (_lock) { return _mostQueued; } }
        }

        public long TooSlow
        {
            get { lock (_lock) { return _tooSlow; } }
        }

        public void Dispose() => _listener.Dispose();
    }
}

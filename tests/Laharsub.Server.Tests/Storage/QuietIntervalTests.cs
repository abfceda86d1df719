using System.Text;
using System.Threading.Channels;
using Laharsub.Server.Delivery;
using Laharsub.Server.Storage;
using Laharsub.Server.Storage.InMemory;
using Laharsub.Testing;
using Microsoft.Extensions.Options;
using Microsoft.Extensions.Time.Testing;

namespace Laharsub.Server.Tests.Storage;

/// <summary>
/// A wait that ends quietly (a stream's heartbeat, a poll's timeout) with no topic signalled reads nothing from
/// the store: nothing it follows changed. On Redis a read is a script, and 80,000 idle streams' heartbeats were
/// most of the reads of the 100,000-connection run (docs/scale-out.md). A signal racing the heartbeat is never lost.
/// </summary>
public sealed class QuietIntervalTests : IDisposable
{
    private static readonly TimeSpan Bound = TimeSpan.FromSeconds(15);
    private static readonly TimeSpan Interval = TimeSpan.FromSeconds(15);
    private readonly FakeTimeProvider _clock = new();
    private readonly TopicSignals _signals = new();
    private readonly InMemoryStore _inner;
    private readonly CountingStore _store;
    private readonly SubscriptionRunner _runner;

    public QuietIntervalTests()
    {
        _inner = new InMemoryStore(Options.Create(new LaharsubStoreOptions()), _signals, _clock);
        _store = new CountingStore(_inner);
        _runner = new SubscriptionRunner(_store, _signals, Options.Create(new LaharsubDeliveryOptions()));
    }

    public void Dispose() => _inner.Dispose();

    [Fact]
    public async Task AStreamsHeartbeatsReadNothingAndAMessageAfterThemIsStillDelivered()
    {
        var topic = (await _inner.CreateTopicAsync())!.TopicId;
        using var stop = new CancellationTokenSource();
        var events = Channel.CreateUnbounded<string>();
        var run = Start(topic, events, keepsWaiting: true, stop.Token);
        await WaitUntilWaitingAsync(topic);
        var readsWhenWaiting = _store.Reads;

        for (var i = 0; i < 3; i++)
        {
            _clock.Advance(Interval);
            Assert.Equal("heartbeat", await events.Reader.ReadAsync().AsTask().WaitAsync(Bound));
            await WaitUntilWaitingAsync(topic);
        }
        var readsAfterHeartbeats = _store.Reads;
        await _inner.PublishAsync(topic, "m1"u8.ToArray(), "text/plain");

        Assert.Equal("m1", await events.Reader.ReadAsync().AsTask().WaitAsync(Bound));
        Assert.Equal(readsWhenWaiting, readsAfterHeartbeats);
        Assert.True(_store.Reads > readsAfterHeartbeats, "the message was delivered without a read");
        stop.Cancel();
        await run.WaitAsync(Bound);
    }

    [Fact]
    public async Task APollThatTimesOutQuietlyReadsOnlyOnce()
    {
        var topic = (await _inner.CreateTopicAsync())!.TopicId;
        var events = Channel.CreateUnbounded<string>();
        var run = Start(topic, events, keepsWaiting: false, CancellationToken.None);
        await WaitUntilWaitingAsync(topic);

        _clock.Advance(Interval);
        await run.WaitAsync(Bound);

        Assert.Equal("heartbeat", await events.Reader.ReadAsync().AsTask().WaitAsync(Bound));
        Assert.Equal(1, _store.Reads);
        Assert.Equal(0, _signals.WaitingOn(topic));
    }

    [Fact]
    public async Task MessagesPublishedAsTheHeartbeatFiresAreEachDelivered()
    {
        var topic = (await _inner.CreateTopicAsync())!.TopicId;
        using var stop = new CancellationTokenSource();
        var events = Channel.CreateUnbounded<string>();
        var run = Start(topic, events, keepsWaiting: true, stop.Token);
        await WaitUntilWaitingAsync(topic);

        const int Rounds = 300;
        var heartbeats = 0;
        for (var i = 0; i < Rounds; i++)
        {
            // The publish's signal races the heartbeat's timer: whichever wins, the message must come, and soon.
            var publish = Task.Run(async () => await _inner.PublishAsync(topic, Encoding.UTF8.GetBytes($"m{i}"), "text/plain"));
            _clock.Advance(Interval);
            await publish.WaitAsync(Bound);
            string next;
            while ((next = await events.Reader.ReadAsync().AsTask().WaitAsync(Bound)) == "heartbeat")
            {
                heartbeats++;
            }
            Assert.Equal($"m{i}", next);
        }

        Assert.InRange(heartbeats, 0, Rounds);
        stop.Cancel();
        await run.WaitAsync(Bound);
    }

    private Task Start(long topic, Channel<string> events, bool keepsWaiting, CancellationToken stop) =>
        _runner.RunAsync([new Subscription(topic, 1)], answerBytes: null, new SubscriptionWait(Interval, _clock, stop, CancellationToken.None),
            new RecordingSink(events.Writer, keepsWaiting));

    private async Task WaitUntilWaitingAsync(long topic)
    {
        using var timeout = new CancellationTokenSource(Bound);
        while (_signals.WaitingOn(topic) == 0)
        {
            await Task.Yield();
            timeout.Token.ThrowIfCancellationRequested();
        }
    }

    /// <summary>Records each message's body and each quiet end ("heartbeat"); a stream goes on after one, a poll does not.</summary>
    private readonly struct RecordingSink(ChannelWriter<string> events, bool keepsWaiting) : ISubscriptionSink
    {
        public bool WantsPositions => false;

        public ValueTask<bool> PositionedAsync(Subscription[] positions) => ValueTask.FromResult(true);

        public ValueTask<bool> DeliverAsync(PollResult result)
        {
            foreach (var message in result.Messages)
            {
                events.TryWrite(Encoding.UTF8.GetString(message.Body.Span));
            }
            return ValueTask.FromResult(true);
        }

        public ValueTask<bool> WaitEndedAsync(WaitEnd reason)
        {
            if (reason == WaitEnd.TimedOut)
            {
                events.TryWrite("heartbeat");
                return ValueTask.FromResult(keepsWaiting);
            }
            return ValueTask.FromResult(false);
        }

        public void Failed()
        {
        }
    }

    /// <summary>Counts the reads the runner asks of the store.</summary>
    private sealed class CountingStore(ILaharsubStore inner) : ForwardingStore(inner)
    {
        private int _reads;

        public int Reads => Volatile.Read(ref _reads);

        public override ValueTask ReadAsync(ReadOnlyMemory<TopicReadRequest> requests, Memory<TopicReadResult> results, List<Message> messages,
            CancellationToken cancellationToken = default)
        {
            Interlocked.Increment(ref _reads);
            return Inner.ReadAsync(requests, results, messages, cancellationToken);
        }
    }
}

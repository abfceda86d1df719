using System.Net;
using Laharsub.LoadTestClient.Measurement;

namespace Laharsub.LoadTestClient.Load;

/// <summary>
/// One simulated chat participant: a long-poll loop over its topics (on its own raw HTTP/1.1
/// connection, <see cref="RawPoller"/>, in the target's protocol, <see cref="IPollWire"/>) that
/// resumes from its cursors and checks every delivered id, and (driven by the
/// <see cref="PublishScheduler"/>, when it is one of its topic's publishers) a publisher to its home topic.
/// </summary>
internal sealed class SimulatedClient : IPollResponseSink, IRawPollHandler
{
    private readonly LoadEngine _engine;
    private readonly DeliveryVerifier[] _topics;
    private readonly Dictionary<long, DeliveryVerifier>? _byTopicId;
    private readonly IPollWire _wire;
    private readonly RawPoller _poller;
    private long _receivedAt;

    public SimulatedClient(LoadEngine engine, Uri apiAddress, long homeTopicId, IReadOnlyList<long> subscribedTopicIds, long phaseMicroseconds, bool publishes = true)
    {
        _engine = engine;
        HomeTopicId = homeTopicId;
        // Absolute and parsed once: with several instances each client publishes to its own.
        PublishUri = new Uri(apiAddress, engine.Protocol.PublishPath(homeTopicId));
        PhaseMicroseconds = phaseMicroseconds;
        Publishes = publishes;
        _topics = subscribedTopicIds.Select(id => new DeliveryVerifier(id, engine.Protocol.ConsecutiveMessageIds)).ToArray();
        _byTopicId = _topics.Length > 4 ? _topics.ToDictionary(t => t.TopicId) : null;
        _wire = engine.Protocol.CreatePollWire(_topics);
        _poller = new RawPoller(engine.Http, engine.Protocol.PollAddressAt(apiAddress), _wire.Accept);
    }

    public long HomeTopicId { get; }
    public Uri PublishUri { get; }

    /// <summary>Whether this client publishes (every client does, except in shapes with fewer publishers than readers).</summary>
    public bool Publishes { get; }

    /// <summary>Offset of this client's publishes within each interval, spreading all publishers evenly.</summary>
    public long PhaseMicroseconds { get; }

    public IReadOnlyList<DeliveryVerifier> Topics => _topics;

    /// <summary>This client's poll requests and answers in the target's protocol.</summary>
    public IPollWire Wire => _wire;

    public Task PollLoopAsync(CancellationToken cancellationToken) => _poller.RunAsync(this, cancellationToken);

    bool IRawPollHandler.TryWriteQuery(Span<byte> destination, out int written) => _wire.TryWriteQuery(destination, out written);

    bool IRawPollHandler.TryWriteHeaders(Span<byte> destination, out int written) => _wire.TryWriteHeaders(destination, out written);

    bool IRawPollHandler.OnResponse(in RawPollResponse response)
    {
        // Every message of the response arrived now: one timestamp for all of them, as a browser
        // client would see them.
        _receivedAt = MonotonicClock.NowMicroseconds;
        if (_wire.IsEmpty(response.Status))
        {
            _engine.CountEmptyPoll();
            return true;
        }
        if (response.Status != (int)HttpStatusCode.OK)
        {
            _engine.Counters.AddStatus(response.Status);
            return false;
        }
        _wire.Read(response, this);
        _engine.CountPoll();
        return true;
    }

    void IRawPollHandler.OnError(Exception exception)
    {
        if (exception is FormatException)
        {
            _engine.Counters.AddStatus(0);
        }
        else
        {
            _engine.Counters.AddTransportError();
        }
    }

    void IPollResponseSink.OnMessage(long topicId, long messageId, ReadOnlySpan<byte> body)
    {
        if (Find(topicId) is not { } verifier)
        {
            _engine.Counters.AddStatus(0);
            return;
        }
        var kind = verifier.Observe(messageId, _engine.Counters);
        if (kind != DeliveryKind.Duplicate && MessageStamp.TryRead(body, out var intended, out var created))
        {
            _engine.RecordDelivery(intended, created, _receivedAt);
        }
    }

    void IPollResponseSink.OnGap(long topicId, long fromMessageId, long toMessageId) =>
        Find(topicId)?.ObserveGap(fromMessageId, toMessageId, _engine.Counters);

    // A reset is a notice, never a delivery: only the messages that follow it are.
    void IPollResponseSink.OnReset(long topicId, long firstMessageId, bool epochChanged) =>
        Find(topicId)?.ObserveReset(firstMessageId, epochChanged, _engine.Counters);

    void IPollResponseSink.OnTopicDeleted(long topicId) => _engine.Counters.AddDeletedNotice();

    void IPollResponseSink.OnEpoch(long topicId, ReadOnlySpan<byte> epoch) => Find(topicId)?.ObserveEpoch(epoch);

    private DeliveryVerifier? Find(long topicId)
    {
        if (_byTopicId is not null)
        {
            return _byTopicId.GetValueOrDefault(topicId);
        }
        foreach (var topic in _topics)
        {
            if (topic.TopicId == topicId)
            {
                return topic;
            }
        }
        return null;
    }
}

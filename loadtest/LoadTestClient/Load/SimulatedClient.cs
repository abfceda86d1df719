using System.Buffers.Text;
using System.Net;
using Laharsub.LoadTestClient.Measurement;

namespace Laharsub.LoadTestClient.Load;

/// <summary>
/// One simulated chat participant: a long-poll loop over its topics (on its own raw HTTP/1.1
/// connection, <see cref="RawPoller"/>) that resumes from its cursors and checks every delivered id,
/// and (driven by the <see cref="PublishScheduler"/>) a publisher to its home topic.
/// </summary>
internal sealed class SimulatedClient : IPollResponseSink, IRawPollHandler
{
    private readonly LoadEngine _engine;
    private readonly DeliveryVerifier[] _topics;
    private readonly Dictionary<long, DeliveryVerifier>? _byTopicId;
    private readonly RawPoller _poller;
    private byte[] _scratch = new byte[64];
    private long _receivedAt;

    public SimulatedClient(LoadEngine engine, long homeTopicId, IReadOnlyList<long> subscribedTopicIds, long phaseMicroseconds)
    {
        _engine = engine;
        HomeTopicId = homeTopicId;
        PublishPath = $"topics/{homeTopicId}";
        PhaseMicroseconds = phaseMicroseconds;
        _topics = subscribedTopicIds.Select(id => new DeliveryVerifier(id)).ToArray();
        _byTopicId = _topics.Length > 4 ? _topics.ToDictionary(t => t.TopicId) : null;
        _poller = new RawPoller(engine.Http, engine.Plan.ApiAddress, engine.Plan.Format == WireFormatKind.Json ? "application/json" : "multipart/mixed");
    }

    public long HomeTopicId { get; }
    public string PublishPath { get; }

    /// <summary>Offset of this client's publishes within each interval, spreading all publishers evenly.</summary>
    public long PhaseMicroseconds { get; }

    public IReadOnlyList<DeliveryVerifier> Topics => _topics;

    public Task PollLoopAsync(CancellationToken cancellationToken) => _poller.RunAsync(this, cancellationToken);

    bool IRawPollHandler.TryWriteQuery(Span<byte> destination, out int written)
    {
        written = 0;
        if (!Append(destination, ref written, "timeout="u8) || !Append(destination, ref written, _engine.Plan.PollTimeoutSeconds)
            || !Append(destination, ref written, "&topics="u8))
        {
            return false;
        }
        for (var i = 0; i < _topics.Length; i++)
        {
            if ((i > 0 && !Append(destination, ref written, ","u8))
                || !Append(destination, ref written, _topics[i].TopicId)
                || !Append(destination, ref written, ":"u8)
                || !Append(destination, ref written, _topics[i].Next))
            {
                return false;
            }
        }
        return true;
    }

    bool IRawPollHandler.OnResponse(int status, ReadOnlySpan<byte> contentType, ReadOnlySpan<byte> body)
    {
        // Every message of the response arrived now: one timestamp for all of them, as a browser
        // client would see them.
        _receivedAt = MonotonicClock.NowMicroseconds;
        if (status == (int)HttpStatusCode.NoContent)
        {
            _engine.CountEmptyPoll();
            return true;
        }
        if (status != (int)HttpStatusCode.OK)
        {
            _engine.Counters.AddStatus(status);
            return false;
        }
        if (_engine.Plan.Format == WireFormatKind.Json)
        {
            PollResponseReader.ReadJson(body, this, ref _scratch);
        }
        else
        {
            PollResponseReader.ReadMultipart(body, PollResponseReader.BoundaryOf(contentType), this);
        }
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

    private static bool Append(Span<byte> destination, ref int written, ReadOnlySpan<byte> text)
    {
        if (!text.TryCopyTo(destination[written..]))
        {
            return false;
        }
        written += text.Length;
        return true;
    }

    private static bool Append(Span<byte> destination, ref int written, long number)
    {
        if (!Utf8Formatter.TryFormat(number, destination[written..], out var count))
        {
            return false;
        }
        written += count;
        return true;
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

    void IPollResponseSink.OnReset(long topicId, long firstMessageId) =>
        Find(topicId)?.ObserveReset(firstMessageId, _engine.Counters);

    void IPollResponseSink.OnTopicDeleted(long topicId) => _engine.Counters.AddDeletedNotice();

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

using System.Net;
using System.Text.Json;
using Laharsub.LoadTestClient.Measurement;

namespace Laharsub.LoadTestClient.Load;

/// <summary>
/// One simulated chat participant: a subscription to its topics that resumes from its cursors and
/// checks every delivered id (a long-poll loop on its own raw HTTP/1.1 connection, <see cref="RawPoller"/>;
/// or a Server-Sent Events stream, <see cref="RawEventStream"/>; or a WebSocket, <see cref="SocketSubscriber"/>;
/// each in the target's protocol), and (driven by the <see cref="PublishScheduler"/>, when it is one of
/// its topic's publishers) a publisher to its home topic, on its WebSocket where the target takes that.
/// </summary>
internal sealed class SimulatedClient : IPollResponseSink, IRawPollHandler, IEventStreamHandler, ISocketHandler, IDisposable
{
    private readonly LoadEngine _engine;
    private readonly DeliveryVerifier[] _topics;
    private readonly Dictionary<long, DeliveryVerifier>? _byTopicId;
    private readonly IPollWire _wire;
    private readonly RawPoller? _poller;
    private readonly IEventStreamWire? _eventWire;
    private readonly RawEventStream? _eventStream;
    private readonly SocketSubscriber? _socket;
    private long _receivedAt;

    public SimulatedClient(LoadEngine engine, int client, Uri apiAddress, long homeTopicId, IReadOnlyList<long> subscribedTopicIds, long phaseMicroseconds, bool publishes = true)
    {
        _engine = engine;
        Index = client;
        HomeTopicId = homeTopicId;
        // Absolute and parsed once: with several instances each client publishes to its own.
        PublishUri = new Uri(apiAddress, engine.Protocol.PublishPath(homeTopicId));
        PhaseMicroseconds = phaseMicroseconds;
        Publishes = publishes;
        _topics = subscribedTopicIds.Select(id => new DeliveryVerifier(id, engine.Protocol.ConsecutiveMessageIds)).ToArray();
        _byTopicId = _topics.Length > 4 ? _topics.ToDictionary(t => t.TopicId) : null;
        // One token per client, as each user of an application has their own.
        var token = engine.Plan.Jwt?.ClientToken(client, publishes ? homeTopicId : null, subscribedTopicIds, engine.Plan.TokenLifetime);
        Authorization = token is null ? null : "Bearer " + token;
        _wire = engine.Protocol.CreatePollWire(_topics, client, token);
        var subscriptionAddress = engine.Protocol.PollAddressAt(apiAddress);
        Transport = engine.Plan.TransportOf(client);
        switch (Transport)
        {
            case TransportKind.Sse:
                _eventWire = engine.Protocol.CreateEventStreamWire(_topics, client, token);
                _eventStream = new RawEventStream(engine.Http, subscriptionAddress);
                break;
            case TransportKind.WebSocket:
                _socket = new SocketSubscriber(engine.Http, subscriptionAddress, engine.Protocol.CreateWebSocketWire(_topics, client, token), this);
                PublishSocket = Transports.PublishesOnSocket(engine.Plan.Target, Transport) ? _socket : null;
                break;
            default:
                _poller = new RawPoller(engine.Http, subscriptionAddress, _wire.Accept);
                break;
        }
    }

    /// <summary>How this client receives (the run's transport, or long poll for its share of long pollers).</summary>
    public TransportKind Transport { get; }

    /// <summary>The client's number in the run (across all its processes).</summary>
    public int Index { get; }

    public long HomeTopicId { get; }
    public Uri PublishUri { get; }

    /// <summary>The <c>Authorization</c> of this client's REST publishes in Jwt mode (<c>Bearer</c> and its token); null in Open mode.</summary>
    public string? Authorization { get; }

    /// <summary>Whether this client publishes (every client does, except in shapes with fewer publishers than readers).</summary>
    public bool Publishes { get; }

    /// <summary>Offset of this client's publishes within each interval, spreading all publishers evenly.</summary>
    public long PhaseMicroseconds { get; }

    public IReadOnlyList<DeliveryVerifier> Topics => _topics;

    /// <summary>This client's poll requests and answers in the target's protocol.</summary>
    public IPollWire Wire => _wire;

    /// <summary>The WebSocket this client publishes on (--transport websocket against Laharsub); null when it publishes with REST requests.</summary>
    public SocketSubscriber? PublishSocket { get; }

    /// <summary>Holds the client's subscription (its polls, stream or socket) until cancelled.</summary>
    public Task SubscribeAsync(CancellationToken cancellationToken) =>
        _eventStream is not null ? _eventStream.RunAsync(this, cancellationToken)
        : _socket is not null ? _socket.RunAsync(cancellationToken)
        : _poller!.RunAsync(this, cancellationToken);

    public void Dispose() => _socket?.Dispose();

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

    void IRawPollHandler.OnError(Exception exception) => CountError(exception);

    bool IEventStreamHandler.TryWriteQuery(Span<byte> destination, out int written) => _eventWire!.TryWriteQuery(destination, out written);

    bool IEventStreamHandler.TryWriteHeaders(Span<byte> destination, out int written) => _eventWire!.TryWriteHeaders(destination, out written);

    StreamSignal IEventStreamHandler.OnHead(int status)
    {
        if (status != (int)HttpStatusCode.OK)
        {
            _engine.Counters.AddStatus(status);
            return StreamSignal.None;
        }
        return _eventWire!.OpenAtHead ? StreamSignal.Opened : StreamSignal.None;
    }

    StreamSignal IEventStreamHandler.OnEvent(in ServerSentEvent sse, long receivedAt)
    {
        // Every event of one read arrived then: one timestamp for all of them.
        _receivedAt = receivedAt;
        return _eventWire!.Read(sse, this);
    }

    void IEventStreamHandler.OnError(Exception exception) => CountError(exception);

    void ISocketHandler.OnReceived(long receivedAt) => _receivedAt = receivedAt;

    void ISocketHandler.OnStatus(int status) => _engine.Counters.AddStatus(status);

    void ISocketHandler.OnError(Exception exception) => CountError(exception);

    void ISocketHandler.OnPublishAnswered(in PendingPublish publish, long messageId)
    {
        _engine.PublishAnswered(HomeTopicId, publish.Started, publish.Measured, messageId);
        _engine.PublishCompleted();
    }

    void ISocketHandler.OnPublishRefused(in PendingPublish publish, int status)
    {
        _engine.PublishRefused(status);
        _engine.PublishCompleted();
    }

    void ISocketHandler.OnPublishLost(in PendingPublish publish)
    {
        _engine.PublishLost();
        _engine.PublishCompleted();
    }

    /// <summary>An answer that could not be read counts as status 0; a broken connection as a transport error.</summary>
    private void CountError(Exception exception)
    {
        if (exception is FormatException or JsonException)
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
            _engine.RecordDelivery(this, topicId, intended, created, _receivedAt);
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

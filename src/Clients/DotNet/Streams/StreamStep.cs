namespace Laharsub.Client.Streams;

/// <summary>An open stream (Server-Sent Events or WebSocket), read one step at a time by the subscription loop.</summary>
internal interface IStreamSession : IAsyncDisposable
{
    /// <summary>Which transport this is.</summary>
    LaharsubTransport Transport { get; }

    /// <summary>The index of the API address the stream was opened on, for failover.</summary>
    int Address { get; }

    /// <summary>
    /// The next thing that happened on the stream. Never throws for what the subscription recovers from;
    /// throws <see cref="OperationCanceledException"/> when <paramref name="cancellationToken"/> fires.
    /// </summary>
    /// <param name="changed">Fires when the subscription's topic set changes: returns <see cref="StreamStepKind.Changed"/>.</param>
    /// <param name="cancellationToken">The reader's cancellation.</param>
    ValueTask<StreamStep> NextAsync(CancellationToken changed, CancellationToken cancellationToken);
}

/// <summary>What a stream delivered or how it ended.</summary>
internal readonly record struct StreamStep(StreamStepKind Kind, SubscriptionEvent? Event = null, Exception? Error = null, long TopicId = 0, string? Detail = null, long? Answers = null,
    IReadOnlyList<KeyValuePair<long, string>>? Epochs = null)
{
    public static StreamStep Delivered(SubscriptionEvent item) => new(StreamStepKind.Event, item);

    public static readonly StreamStep Changed = new(StreamStepKind.Changed);
    public static readonly StreamStep Stopped = new(StreamStepKind.Stopped);
    public static readonly StreamStep Drained = new(StreamStepKind.Drained);

    /// <summary>
    /// The stream started (SSE <c>open</c>), or a WebSocket's subscriptions were set (<c>subscribed</c>, answering the
    /// change frames up to <paramref name="answers"/>, with each topic's epoch in <paramref name="epochs"/>).
    /// </summary>
    public static StreamStep Subscribed(long? answers = null, IReadOnlyList<KeyValuePair<long, string>>? epochs = null) =>
        new(StreamStepKind.Subscribed, Answers: answers, Epochs: epochs);

    /// <summary>The server does not know a topic; on a WebSocket, answering the change frames up to <paramref name="answers"/>.</summary>
    public static StreamStep TopicNotFound(long topicId, string? detail, long? answers = null) => new(StreamStepKind.TopicNotFound, TopicId: topicId, Detail: detail, Answers: answers);

    /// <summary>WebSocket: an event of the topic was not kept (the reader is behind); what follows of the topic is not delivered until it is asked for again.</summary>
    public static StreamStep Overflowed(long topicId) => new(StreamStepKind.Overflowed, TopicId: topicId);

    public static StreamStep Ended(Exception why) => new(StreamStepKind.Ended, Error: why);

    public static StreamStep Failed(Exception why) => new(StreamStepKind.Failed, Error: why);

    public static StreamStep NotStarted(Exception why) => new(StreamStepKind.NotStarted, Error: why);

    public static StreamStep Fatal(Exception why) => new(StreamStepKind.Fatal, Error: why);
}

internal enum StreamStepKind
{
    /// <summary>A message or notice: <see cref="StreamStep.Event"/>.</summary>
    Event,
    /// <summary>The stream started, or (WebSocket) a change of its topics took effect.</summary>
    Subscribed,
    /// <summary>The topic set changed; the stream was not read further.</summary>
    Changed,
    /// <summary>WebSocket: an event of <see cref="StreamStep.TopicId"/> could not be kept for the reader.</summary>
    Overflowed,
    /// <summary>WebSocket: the reader has caught up with every event held for it, and topics overflowed meanwhile: ask for them again.</summary>
    Drained,
    /// <summary>The server does not know <see cref="StreamStep.TopicId"/>.</summary>
    TopicNotFound,
    /// <summary>The server ended the stream and asked the client to reconnect (shutting down, token expired, reading too slowly).</summary>
    Ended,
    /// <summary>The connection failed, or fell silent: reconnect after a backoff, perhaps elsewhere.</summary>
    Failed,
    /// <summary>The stream did not start within the time limit (a proxy may buffer it).</summary>
    NotStarted,
    /// <summary>Something a retry cannot fix: <see cref="StreamStep.Error"/> ends the subscription.</summary>
    Fatal,
    /// <summary>The subscription or the client was disposed.</summary>
    Stopped,
}

using Laharsub.Client.Streams;

namespace Laharsub.Client;

/// <summary>How one long poll, or the opening of a stream, ended, for the subscription loop to act on.</summary>
internal sealed class PollOutcome
{
    public static readonly PollOutcome Empty = new(PollOutcomeKind.Empty);
    public static readonly PollOutcome Changed = new(PollOutcomeKind.Changed);
    public static readonly PollOutcome Stopped = new(PollOutcomeKind.Stopped);

    private PollOutcome(PollOutcomeKind kind) => Kind = kind;

    public PollOutcomeKind Kind { get; private init; }

    /// <summary>The events of a delivered answer, in the server's order.</summary>
    public IReadOnlyList<SubscriptionEvent> Events { get; private init; } = [];

    /// <summary>How long to wait before the next poll, after a failure.</summary>
    public TimeSpan Delay { get; private init; }

    /// <summary>Why the poll failed (set for <see cref="PollOutcomeKind.Retry"/>).</summary>
    public Exception? Error { get; private init; }

    /// <summary>The topic the server does not know.</summary>
    public long TopicId { get; private init; }

    /// <summary>The server's explanation of the unknown topic.</summary>
    public string? Detail { get; private init; }

    /// <summary>The stream that was opened (set for <see cref="PollOutcomeKind.Connected"/>).</summary>
    public IStreamSession? Session { get; private init; }

    public static PollOutcome Delivered(IReadOnlyList<SubscriptionEvent> events) => new(PollOutcomeKind.Delivered) { Events = events };

    public static PollOutcome Retry(TimeSpan delay, Exception error) => new(PollOutcomeKind.Retry) { Delay = delay, Error = error };

    public static PollOutcome TopicNotFound(long topicId, string? detail) => new(PollOutcomeKind.TopicNotFound) { TopicId = topicId, Detail = detail };

    public static PollOutcome Connected(IStreamSession session) => new(PollOutcomeKind.Connected) { Session = session };

    public static PollOutcome Refused(LaharsubException refusal) => new(PollOutcomeKind.Refused) { Error = refusal };
}

/// <summary>The ways a long poll ends.</summary>
internal enum PollOutcomeKind
{
    /// <summary>Messages or notices arrived.</summary>
    Delivered,
    /// <summary>204: nothing within the hold time, or the server is shutting down. Poll again at once.</summary>
    Empty,
    /// <summary>The topic set changed while the poll waited; it was abandoned.</summary>
    Changed,
    /// <summary>The subscription or the client was disposed.</summary>
    Stopped,
    /// <summary>A network error, timeout, 5xx or 429: poll again after <see cref="PollOutcome.Delay"/>.</summary>
    Retry,
    /// <summary>404 naming one of the topics.</summary>
    TopicNotFound,
    /// <summary>A stream is open: read it with <see cref="PollOutcome.Session"/>.</summary>
    Connected,
    /// <summary>
    /// The server (or a proxy) answered a stream's request with something other than the stream, and not
    /// with an error that every transport would get: <see cref="LaharsubTransport.Auto"/> tries the next
    /// transport; a transport chosen on purpose ends the subscription with <see cref="PollOutcome.Error"/>.
    /// </summary>
    Refused,
}

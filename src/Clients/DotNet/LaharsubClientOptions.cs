namespace Laharsub.Client;

/// <summary>
/// How a <see cref="LaharsubClient"/> polls, times out and retries. The client copies the options
/// when it is built, so changing an instance afterwards does not affect existing clients.
/// </summary>
public sealed class LaharsubClientOptions
{
    /// <summary>
    /// The Laharsub API root, e.g. <c>http://localhost:5000/ps/</c>, for a client registered with
    /// <see cref="Microsoft.Extensions.DependencyInjection.LaharsubServiceCollectionExtensions.AddLaharsubClient"/>.
    /// The constructors take their addresses as arguments and do not read it.
    /// </summary>
    public Uri? ApiAddress { get; set; }

    /// <summary>
    /// How long the server holds a poll when nothing arrives (whole seconds, 1 s to 1 h; default 30 s).
    /// Must not exceed the server's <c>MaxPollTimeout</c> (2 minutes by default). The HTTP timeout of
    /// each poll is this plus <see cref="RequestTimeout"/>, so a poll is never cut short by the client.
    /// </summary>
    public TimeSpan PollTimeout { get; set; } = TimeSpan.FromSeconds(30);

    /// <summary>The format long polls ask for; <see cref="PollFormat.Multipart"/> by default (see its remarks). Streams are JSON.</summary>
    public PollFormat PollFormat { get; set; } = PollFormat.Multipart;

    /// <summary>
    /// How subscriptions receive messages: <see cref="LaharsubTransport.Auto"/> (the default) tries a
    /// WebSocket, then Server-Sent Events, then long polling, and keeps the first that works. Every
    /// transport delivers the same events with the same cursors, retries and failover.
    /// </summary>
    /// <remarks>
    /// A stream must start within <see cref="RequestTimeout"/>. An open event stream that receives nothing,
    /// not even the server's heartbeat (every 15 s by default), for <see cref="PollTimeout"/> plus
    /// <see cref="RequestTimeout"/> is taken for dead and opened again; an open WebSocket is pinged every
    /// <see cref="PollTimeout"/> and given up when no pong comes within <see cref="RequestTimeout"/>, or when
    /// a change of its topics is not answered within <see cref="RequestTimeout"/>.
    /// </remarks>
    public LaharsubTransport Transport { get; set; } = LaharsubTransport.Auto;

    /// <summary>
    /// How many events a WebSocket subscription holds for its reader before it stops taking the topics
    /// that overflow and asks for them again from their cursors once the reader has caught up (for tests).
    /// </summary>
    internal int StreamQueueCapacity { get; set; } = 1000;

    /// <summary>
    /// Whether every publish carries an <c>Idempotency-Key</c> (a new random one per call unless
    /// <see cref="PublishOptions.IdempotencyKey"/> gives one), default on. With a key, a publish whose
    /// outcome is unknown (a timeout, a connection lost before the answer, an instance that stopped) is sent
    /// again with the same key, so it is stored once; without one it is not retried after such a failure, and
    /// the caller learns that it may or may not have been stored. Turn it off for a server older than keys.
    /// </summary>
    public bool IdempotentPublishes { get; set; } = true;

    /// <summary>
    /// The time limit of one attempt of a non-poll request, and the margin added to
    /// <see cref="PollTimeout"/> for polls (default 30 s).
    /// </summary>
    public TimeSpan RequestTimeout { get; set; } = TimeSpan.FromSeconds(30);

    /// <summary>
    /// The first retry delay after a network error or a 5xx (default 1 s). Each further failure doubles
    /// the ceiling up to <see cref="MaxRetryDelay"/>; the actual delay is drawn at random below the
    /// ceiling ("full jitter") so that many clients of a restarted server do not return in step.
    /// </summary>
    public TimeSpan RetryDelay { get; set; } = TimeSpan.FromSeconds(1);

    /// <summary>The largest retry delay (default 30 s). A <c>Retry-After</c> from the server is honoured even when longer.</summary>
    public TimeSpan MaxRetryDelay { get; set; } = TimeSpan.FromSeconds(30);

    /// <summary>
    /// The longest <c>Retry-After</c> that a non-poll request waits out before trying again (default
    /// 2 minutes). A server that asks for a longer wait, such as a rate limit counted per hour, gets the
    /// request's <see cref="LaharsubException"/> thrown at once, so the caller decides what to do.
    /// Subscriptions wait out any <c>Retry-After</c>.
    /// </summary>
    public TimeSpan MaxRetryAfter { get; set; } = TimeSpan.FromMinutes(2);

    /// <summary>
    /// How many times a non-poll request is tried in all before its error is thrown (default 4).
    /// Subscriptions retry for as long as they run.
    /// </summary>
    public int MaxRequestAttempts { get; set; } = 4;

    /// <summary>
    /// Supplies the bearer token for a server in Jwt mode (the shape SignalR's client uses). Called
    /// before every request; after a <c>401</c> it is called once more (the token may have expired) and the
    /// request is sent again with the new token. A <see langword="null"/> or empty token sends the request
    /// without one. <see langword="null"/> (the default): no tokens. Cache tokens in the provider: it runs
    /// on every poll.
    /// </summary>
    public Func<CancellationToken, ValueTask<string?>>? AccessTokenProvider { get; set; }

    /// <summary>
    /// The clock the client waits on and reads (default <see cref="TimeProvider.System"/>): retry
    /// delays and <c>Retry-After</c> waits, the time limits of requests and polls, and the current time
    /// that a <c>Retry-After</c> date is measured from. For tests (a fake clock that the test moves, so
    /// that retries happen without waiting) and for hosts that control time. The connection timeouts
    /// of the handler that the client builds for itself, and a given <see cref="HttpClient"/>'s own
    /// <see cref="HttpClient.Timeout"/>, follow the system clock.
    /// </summary>
    public TimeProvider TimeProvider
    {
        get => _timeProvider;
        set
        {
            _timeProvider = value;
            TimeProviderSet = true;
        }
    }

    private TimeProvider _timeProvider = TimeProvider.System;

    /// <summary>Whether <see cref="TimeProvider"/> was set, so that AddLaharsubClient gives the container's clock only to options that chose none.</summary>
    internal bool TimeProviderSet { get; private set; }

    internal LaharsubClientOptions Validated()
    {
        var copy = (LaharsubClientOptions)MemberwiseClone();
        if (PollTimeout < TimeSpan.FromSeconds(1) || PollTimeout > TimeSpan.FromHours(1) || PollTimeout.Ticks % TimeSpan.TicksPerSecond != 0)
        {
            throw new ArgumentException($"PollTimeout is {PollTimeout}: use whole seconds from 1 second to 1 hour (and no more than the server's MaxPollTimeout).", "options");
        }
        if (!Enum.IsDefined(PollFormat))
        {
            throw new ArgumentException($"PollFormat {(int)PollFormat} is unknown: use PollFormat.Multipart or PollFormat.Json.", "options");
        }
        if (!Enum.IsDefined(Transport))
        {
            throw new ArgumentException($"Transport {(int)Transport} is unknown: use LaharsubTransport.Auto, WebSocket, ServerSentEvents or LongPolling.", "options");
        }
        if (RequestTimeout <= TimeSpan.Zero || RequestTimeout > TimeSpan.FromHours(1))
        {
            throw new ArgumentException($"RequestTimeout is {RequestTimeout}: use a positive time of at most 1 hour.", "options");
        }
        if (RetryDelay <= TimeSpan.Zero || MaxRetryDelay < RetryDelay || MaxRetryDelay > TimeSpan.FromHours(1))
        {
            throw new ArgumentException($"RetryDelay is {RetryDelay} and MaxRetryDelay {MaxRetryDelay}: use a positive RetryDelay no greater than MaxRetryDelay, which is at most 1 hour.", "options");
        }
        if (MaxRetryAfter < TimeSpan.Zero || MaxRetryAfter > TimeSpan.FromDays(1))
        {
            throw new ArgumentException($"MaxRetryAfter is {MaxRetryAfter}: use a time from 0 (never wait out a Retry-After) to 1 day.", "options");
        }
        if (MaxRequestAttempts < 1)
        {
            throw new ArgumentException($"MaxRequestAttempts is {MaxRequestAttempts}: use 1 (no retry) or more.", "options");
        }
        if (TimeProvider is null)
        {
            throw new ArgumentException("TimeProvider is null: use TimeProvider.System (the default) or a clock of your own.", "options");
        }
        return copy;
    }
}

using System.Globalization;
using System.Runtime.CompilerServices;
using System.Text;
using Laharsub.Client.Streams;

namespace Laharsub.Client;

/// <summary>
/// Subscriptions to any number of topics, served by ONE connection at a time: a WebSocket, a Server-Sent
/// Events stream or a long poll (<see cref="LaharsubClientOptions.Transport"/>; <see cref="Transport"/>
/// says which). Tracks a cursor per topic (the smallest message id still wanted) and delivers messages
/// and notices through <see cref="ReadAllAsync"/>, the same whatever the transport. Topics can be added
/// and removed while it runs (a WebSocket is told with a frame; an event stream is opened again, a
/// waiting poll sent again, with the new set), and no message is lost or delivered twice.
/// </summary>
/// <remarks>
/// Failed polls and streams (network errors, timeouts, 5xx, 429) are retried with backoff for as long as the
/// subscription runs; notices (<see cref="GapNotice"/>, <see cref="ResetNotice"/>,
/// <see cref="TopicDeletedNotice"/>, <see cref="TopicNotFoundNotice"/>) are delivered as events and the
/// subscription goes on. Only an answer the client cannot recover from (any other 4xx, e.g. more topics
/// than the server's <c>MaxSubscriptionsPerPoll</c>) ends the enumeration with a <see cref="LaharsubException"/>.
/// </remarks>
public sealed partial class LaharsubSubscription : IAsyncDisposable
{
    private readonly LaharsubClient _client;
    private readonly object _gate = new();
    /// <summary>Topic id → cursor and epoch, in the order topics were added (the server groups answers by topic anyway).</summary>
    private readonly Dictionary<long, TopicCursor> _cursors = [];
    private readonly CancellationTokenSource _stopping;
    private readonly CancellationToken _stopped;
    /// <summary>Cancelled (and replaced) whenever the caller changes the topic set.</summary>
    private CancellationTokenSource _changed = new();
    private int _reading;
    private int _disposed;
    /// <summary>Whether the transport is found by trying them in turn (<see cref="LaharsubTransport.Auto"/>).</summary>
    private readonly bool _auto;
    /// <summary>The transport the next connection tries.</summary>
    private LaharsubTransport _candidate;
    /// <summary>The transport in use (a <see cref="LaharsubTransport"/>), -1 before one was established.</summary>
    private int _transport = -1;
    /// <summary>Why the transport tried before <see cref="_candidate"/> was given up, for <see cref="TransportChanged"/>.</summary>
    private Exception? _fallbackReason;
    /// <summary>Whether the running enumeration has connected, and lost its connection since, for <see cref="Connected"/> and <see cref="Reconnected"/>.</summary>
    private ConnectionState _connection;
    private TimeSpan _conflationInterval;
    private bool _startAtLatest;
    /// <summary>Whether the next connection still asks for <c>latest=true</c> (until the first delivery).</summary>
    private bool _latestPending;

    /// <summary>The largest <see cref="ConflationInterval"/> the server accepts.</summary>
    private static readonly TimeSpan MaxConflationInterval = TimeSpan.FromMinutes(1);

    private enum ConnectionState
    {
        /// <summary>Not connected yet in this enumeration.</summary>
        None,
        Up,
        /// <summary>Was connected, and is retrying.</summary>
        Lost,
    }

    internal LaharsubSubscription(LaharsubClient client, IEnumerable<KeyValuePair<long, TopicCursor>> cursors)
    {
        _client = client;
        foreach (var (topicId, cursor) in cursors)
        {
            _cursors[topicId] = cursor;
        }
        _stopping = CancellationTokenSource.CreateLinkedTokenSource(client.Disposing);
        _stopped = _stopping.Token;
        _auto = client.Options.Transport == LaharsubTransport.Auto;
        _candidate = _auto ? LaharsubTransport.WebSocket : client.Options.Transport;
    }

    /// <summary>
    /// Raised before each retry of a failed poll or stream, with why it failed (a network error, a timeout, a
    /// malformed answer, a <see cref="LaharsubException"/> for a 5xx or 429, a stream that broke or that
    /// the server ended, asking to reconnect) and how long the subscription waits before connecting
    /// again; the sender is the subscription. The subscription itself
    /// never gives up on such failures; this is how an application sees that it is not getting through
    /// (a wrong address, a server that is down) and decides whether to go on. Runs on the enumerating
    /// thread: keep it short.
    /// </summary>
    public event EventHandler<RetryingEventArgs>? Retrying;

    /// <summary>
    /// Raised when the subscription starts using a transport: when its first connection is established,
    /// and when <see cref="LaharsubTransport.Auto"/> fell back to another transport (with why, in
    /// <see cref="TransportChangedEventArgs.Reason"/>); the sender is the subscription. Runs on the
    /// enumerating thread: keep it short.
    /// </summary>
    public event EventHandler<TransportChangedEventArgs>? TransportChanged;

    /// <summary>
    /// Raised when an enumeration of <see cref="ReadAllAsync"/> first gets through to the server (a stream
    /// started, a poll answered), after any failed tries before; the sender is the subscription, and
    /// <see cref="Transport"/> says how it is connected. Runs on the enumerating thread: keep it short.
    /// </summary>
    public event EventHandler? Connected;

    /// <summary>
    /// Raised when the subscription gets through again after it was connected and then lost its
    /// connection (what <see cref="Retrying"/> reported); it carries on from its cursors, so nothing
    /// was lost or is delivered twice. The sender is the subscription. Runs on the enumerating thread:
    /// keep it short.
    /// </summary>
    public event EventHandler? Reconnected;

    /// <summary>
    /// Raised when an enumeration of <see cref="ReadAllAsync"/> ends: the subscription or its client was
    /// disposed, the enumeration's token fired, the caller stopped enumerating, or (with
    /// <see cref="SubscriptionClosedEventArgs.Error"/>) an answer the subscription cannot recover from.
    /// The sender is the subscription. Runs on the enumerating thread: keep it short.
    /// </summary>
    public event EventHandler<SubscriptionClosedEventArgs>? Closed;

    /// <summary>
    /// The transport in use: <see cref="LaharsubTransport.WebSocket"/>, <see cref="LaharsubTransport.ServerSentEvents"/>
    /// or <see cref="LaharsubTransport.LongPolling"/> once a connection was established (a stream
    /// started, a poll answered); <see langword="null"/> before.
    /// </summary>
    public LaharsubTransport? Transport => Volatile.Read(ref _transport) is var transport and >= 0 ? (LaharsubTransport)transport : null;

    /// <summary>
    /// A snapshot of each subscribed topic's cursor: the smallest message id not yet delivered, and the
    /// topic's epoch once the server has reported it. It covers every event <see cref="ReadAllAsync"/>
    /// has already returned, so saving it after processing an event (it serializes with
    /// System.Text.Json) and passing it to <see cref="LaharsubClient.Subscribe(IReadOnlyDictionary{long, TopicCursor})"/>
    /// later resumes exactly after that event, and is told if a topic was re-created meanwhile.
    /// </summary>
    public IReadOnlyDictionary<long, TopicCursor> Cursors
    {
        get
        {
            lock (_gate)
            {
                return new Dictionary<long, TopicCursor>(_cursors);
            }
        }
    }

    /// <summary>
    /// Subscribes to a topic from a given cursor, or moves the cursor of a topic already subscribed.
    /// A waiting poll is replaced, an event stream opened again, a WebSocket told, at once.
    /// </summary>
    /// <param name="topicId">The topic's id (positive).</param>
    /// <param name="from">The smallest message id wanted: 1 for everything still retained, a saved cursor to resume.</param>
    /// <param name="epoch">
    /// The topic's epoch that <paramref name="from"/> belongs to (<see cref="CreatedTopic.Epoch"/>,
    /// <see cref="TopicInfo.Epoch"/>, a saved <see cref="TopicCursor.Epoch"/>), so that a re-created
    /// topic is reported with a <see cref="ResetNotice"/>. <see langword="null"/> when not known: the
    /// epoch already known for a subscribed topic is kept, and a new topic learns it from the first answer.
    /// </param>
    /// <exception cref="ArgumentException">The topic id or cursor is not positive, or the epoch is not one the server could have sent.</exception>
    public void Add(long topicId, long from, string? epoch = null)
    {
        LaharsubClient.ThrowIfNotId(topicId);
        if (from <= 0)
        {
            throw new ArgumentOutOfRangeException(nameof(from), from, $"{from} is not a cursor: use a message id (1 for everything retained).");
        }
        Epochs.ThrowIfInvalid(epoch);
        Change(topicId, cursors =>
        {
            cursors[topicId] = new TopicCursor(from, epoch ?? (cursors.TryGetValue(topicId, out var known) ? known.Epoch : null));
            return true;
        });
    }

    /// <summary>
    /// Subscribes to a topic from the next message published to it. Asks the server where the topic
    /// ends, so that the cursor is known (and can be saved) from the start. Does nothing if the topic is
    /// already subscribed (its cursor is kept).
    /// </summary>
    /// <param name="topicId">The topic's id (positive).</param>
    /// <param name="cancellationToken">Stops waiting for the server.</param>
    /// <exception cref="LaharsubException"><c>404</c> when the topic does not exist.</exception>
    public async Task AddAsync(long topicId, CancellationToken cancellationToken = default)
    {
        LaharsubClient.ThrowIfNotId(topicId);
        ObjectDisposedException.ThrowIf(_stopped.IsCancellationRequested, this);
        var topic = await _client.GetTopicAsync(topicId, cancellationToken).ConfigureAwait(false);
        Change(topicId, cursors => cursors.TryAdd(topicId, new TopicCursor(topic.LastMessageId + 1, topic.Epoch)));
    }

    /// <summary>Unsubscribes from a topic; nothing more is delivered for it, even from an answer already received.</summary>
    /// <param name="topicId">The topic's id.</param>
    /// <returns>Whether the topic was subscribed.</returns>
    public bool Remove(long topicId)
    {
        var removed = false;
        Change(topicId, cursors => removed = cursors.Remove(topicId));
        return removed;
    }

    /// <summary>
    /// Delivers messages and notices for the subscribed topics, in id order within each topic, until
    /// <paramref name="cancellationToken"/> fires (then <see cref="OperationCanceledException"/>) or the
    /// subscription is disposed (then the enumeration simply ends). With no topics subscribed it waits
    /// for one to be added. One enumeration at a time.
    /// </summary>
    /// <param name="cancellationToken">Stops the enumeration, aborting the outstanding poll or stream.</param>
    /// <exception cref="LaharsubException">The server refused the subscription for a reason a retry cannot fix, or refused the transport chosen in <see cref="LaharsubClientOptions.Transport"/>.</exception>
    /// <exception cref="InvalidOperationException">Another enumeration of this subscription is running.</exception>
    public async IAsyncEnumerable<SubscriptionEvent> ReadAllAsync([EnumeratorCancellation] CancellationToken cancellationToken = default)
    {
        if (Interlocked.Exchange(ref _reading, 1) == 1)
        {
            throw new InvalidOperationException("This subscription is already being read: enumerate ReadAllAsync once at a time.");
        }
        Exception? error = null;
        try
        {
            // The loop runs in an enumerator of its own so that the error that ends it can be caught
            // here for Closed: an iterator cannot yield inside a try that has a catch.
            var events = ReadCoreAsync(cancellationToken).GetAsyncEnumerator(cancellationToken);
            await using (events.ConfigureAwait(false))
            {
                while (true)
                {
                    try
                    {
                        if (!await events.MoveNextAsync().ConfigureAwait(false))
                        {
                            break;
                        }
                    }
                    catch (Exception exception) when (exception is not OperationCanceledException || !cancellationToken.IsCancellationRequested)
                    {
                        error = exception;
                        throw;
                    }
                    var current = events.Current;
                    try
                    {
                        Track(current);
                    }
                    catch (Exception exception)
                    {
                        // A state view's document that does not deserialize as its type: the caller's to see.
                        error = exception;
                        throw;
                    }
                    yield return current;
                }
            }
        }
        finally
        {
            _connection = ConnectionState.None;
            Volatile.Write(ref _reading, 0);
            foreach (var view in StateViews())
            {
                view.Closed(error);
            }
            Closed?.Invoke(this, new SubscriptionClosedEventArgs(error));
        }
    }

    private async IAsyncEnumerable<SubscriptionEvent> ReadCoreAsync([EnumeratorCancellation] CancellationToken cancellationToken)
    {
        var failures = 0;
        while (!_stopped.IsCancellationRequested)
        {
            cancellationToken.ThrowIfCancellationRequested();
            var (query, changed) = Snapshot();
            if (query is null)
            {
                await WaitAsync(Timeout.InfiniteTimeSpan, changed, cancellationToken).ConfigureAwait(false);
                continue;
            }
            var transport = _candidate;
            var outcome = transport switch
            {
                LaharsubTransport.WebSocket => await _client.OpenWebSocketAsync(query, failures, this, changed, _stopped, cancellationToken).ConfigureAwait(false),
                LaharsubTransport.ServerSentEvents => await _client.OpenEventStreamAsync(query, failures, changed, _stopped, cancellationToken).ConfigureAwait(false),
                _ => await _client.PollAsync(query, failures, changed, _stopped, cancellationToken).ConfigureAwait(false),
            };
            switch (outcome.Kind)
            {
                case PollOutcomeKind.Retry:
                    failures++;
                    await RetryAfterAsync(outcome.Error!, outcome.Delay, cancellationToken).ConfigureAwait(false);
                    continue;
                case PollOutcomeKind.Refused:
                    if (FallBack(transport, outcome.Error!))
                    {
                        continue;
                    }
                    throw outcome.Error!;
                case PollOutcomeKind.TopicNotFound:
                    failures = 0;
                    if (transport == LaharsubTransport.LongPolling)
                    {
                        Established(transport);
                    }
                    if (!Drop(outcome.TopicId))
                    {
                        if (ChangedSince(changed))
                        {
                            // The caller removed the topic while the poll was out: nothing to report.
                            continue;
                        }
                        throw new LaharsubException(System.Net.HttpStatusCode.NotFound, "Topic not found",
                            $"The server reports topic {outcome.TopicId} unknown, but this subscription did not ask for it: {outcome.Detail}", topicId: outcome.TopicId);
                    }
                    yield return new TopicNotFoundNotice(outcome.TopicId, outcome.Detail);
                    continue;
                case PollOutcomeKind.Delivered:
                    failures = 0;
                    Established(transport);
                    CaughtUp();
                    break;
                case PollOutcomeKind.Connected:
                    CaughtUp();
                    break;
                case PollOutcomeKind.Empty:
                    failures = 0;
                    Established(transport);
                    continue;
                default:
                    failures = 0;
                    continue;
            }
            if (outcome.Kind == PollOutcomeKind.Delivered)
            {
                foreach (var item in outcome.Events)
                {
                    // After a change, the rest of this answer is dropped unconsumed: the next poll, with
                    // the new set and the cursors as they stand, asks for exactly what is still wanted.
                    if (changed.IsCancellationRequested || _stopped.IsCancellationRequested)
                    {
                        break;
                    }
                    cancellationToken.ThrowIfCancellationRequested();
                    if (Apply(item, changed))
                    {
                        yield return item;
                    }
                }
                continue;
            }

            // A stream: read it until it ends, then connect again (at once, or after a backoff).
            var session = outcome.Session!;
            var socket = session as WebSocketSession;
            var end = StreamStep.Stopped;
            await using (session.ConfigureAwait(false))
            {
                var started = false;
                // A WebSocket is told about changes of the topic set, and goes on; an event stream is opened again.
                var streamChanged = changed;
                var reading = true;
                while (reading)
                {
                    var step = await session.NextAsync(streamChanged, cancellationToken).ConfigureAwait(false);
                    switch (step.Kind)
                    {
                        case StreamStepKind.Event:
                            cancellationToken.ThrowIfCancellationRequested();
                            if (Apply(step.Event!, socket is null ? changed : null))
                            {
                                yield return step.Event!;
                            }
                            break;
                        case StreamStepKind.Subscribed:
                            Unfence(step.Answers);
                            LearnEpochs(step.Epochs);
                            if (!started)
                            {
                                started = true;
                                failures = 0;
                                Established(session.Transport);
                                Volatile.Write(ref _socket, socket);
                            }
                            break;
                        case StreamStepKind.TopicNotFound:
                            Unfence(step.Answers);
                            if (DropUnlessFenced(step.TopicId))
                            {
                                yield return new TopicNotFoundNotice(step.TopicId, step.Detail);
                            }
                            break;
                        case StreamStepKind.Changed when socket is not null:
                            streamChanged = await SyncAsync(socket, overflowed: false).ConfigureAwait(false);
                            break;
                        case StreamStepKind.Overflowed:
                            Overflowed(step.TopicId);
                            break;
                        case StreamStepKind.Drained when socket is not null:
                            streamChanged = await SyncAsync(socket, overflowed: true).ConfigureAwait(false);
                            break;
                        default:
                            end = step;
                            reading = false;
                            break;
                    }
                }
                Interlocked.CompareExchange(ref _socket, null, socket);
            }
            switch (end.Kind)
            {
                case StreamStepKind.Ended or StreamStepKind.Failed:
                    // A stream that broke or fell silent may mean the instance is gone: the next try goes
                    // to the next address (at once, as a poll would). One the server ended on purpose is
                    // opened again after a short random wait, so that the clients of a stopping instance
                    // do not all come back at the same moment (nor, during its shutdown, in a tight loop).
                    failures++;
                    TimeSpan delay;
                    if (end.Kind == StreamStepKind.Failed && IsBroken(end.Error!))
                    {
                        _client.FailOver(session.Address);
                        delay = _client.FailoverBackoff(failures);
                    }
                    else
                    {
                        delay = _client.Backoff(failures);
                    }
                    await RetryAfterAsync(end.Error!, delay, cancellationToken).ConfigureAwait(false);
                    break;
                case StreamStepKind.NotStarted:
                    if (!FallBack(transport, end.Error!))
                    {
                        failures++;
                        await RetryAfterAsync(end.Error!, _client.Backoff(failures), cancellationToken).ConfigureAwait(false);
                    }
                    break;
                case StreamStepKind.Fatal:
                    throw end.Error!;
                default:
                    // Stopped, or (event stream) changed: connect again at once.
                    break;
            }
        }
    }

    /// <summary>Stops the subscription: aborts the outstanding poll or stream and ends the enumeration.</summary>
    public ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref _disposed, 1) == 0)
        {
            _stopping.Cancel();
            // Unhooks from the client's token; the cached _stopped token stays readable.
            _stopping.Dispose();
        }
        return ValueTask.CompletedTask;
    }

    /// <summary>
    /// The query for a new connection with the current set (null when empty) and the token that fires when
    /// the set changes. The connection starts from these cursors, so what a WebSocket was still to be told
    /// is void.
    /// </summary>
    private (string? Query, CancellationToken Changed) Snapshot()
    {
        lock (_gate)
        {
            _touched.Clear();
            _overflowed.Clear();
            _fences.Clear();
            if (_cursors.Count == 0)
            {
                return (null, _changed.Token);
            }
            var query = Topics(_cursors, prefix: "topics=");
            if (_conflationInterval > TimeSpan.Zero)
            {
                query += string.Create(CultureInfo.InvariantCulture, $"&conflate={(long)_conflationInterval.TotalMilliseconds}");
            }
            if (_latestPending)
            {
                query += "&latest=true";
            }
            return (query + PresenceQuery(), _changed.Token);
        }
    }

    /// <summary>
    /// Asks the server for conflation (docs/protocol.md, "Conflation"): deliveries at least this far
    /// apart, each with only the latest message of each topic; what is skipped comes as a
    /// <see cref="ConflatedNotice"/>. <see cref="TimeSpan.Zero"/> (the default) conflates nothing. Over
    /// long polling the interval counts from each poll's arrival, on streams from the previous delivery.
    /// Takes effect from the next poll or connection.
    /// </summary>
    /// <exception cref="ArgumentOutOfRangeException">Negative, above one minute, or not whole milliseconds.</exception>
    public TimeSpan ConflationInterval
    {
        get
        {
            lock (_gate)
            {
                return _conflationInterval;
            }
        }
        set
        {
            if (value < TimeSpan.Zero || value > MaxConflationInterval || value.Ticks % TimeSpan.TicksPerMillisecond != 0)
            {
                throw new ArgumentOutOfRangeException(nameof(value), value, $"A conflation interval is whole milliseconds from 0 (none) to {MaxConflationInterval.TotalMilliseconds}.");
            }
            lock (_gate)
            {
                _conflationInterval = value;
            }
        }
    }

    /// <summary>
    /// Whether the subscription, when it starts, skips each topic that is behind its cursor to its
    /// latest retained message (the server's <c>latest=true</c>), announcing the rest with a
    /// <see cref="ConflatedNotice"/>. Asked of the subscription's first delivery only; after that every
    /// message comes. Set it before <see cref="ReadAllAsync"/>.
    /// </summary>
    public bool StartAtLatest
    {
        get
        {
            lock (_gate)
            {
                return _startAtLatest;
            }
        }
        set
        {
            lock (_gate)
            {
                _startAtLatest = value;
                _latestPending = value;
            }
        }
    }

    /// <summary>The first delivery came: <see cref="StartAtLatest"/> has done its part.</summary>
    private void CaughtUp()
    {
        lock (_gate)
        {
            _latestPending = false;
        }
    }

    /// <summary>Topics and cursors in the compact syntax: <c>14:43~9f3c0a1b2c3d4e5f,15:1,16:state</c>.</summary>
    private static string Topics(IEnumerable<KeyValuePair<long, TopicCursor>> cursors, string prefix = "")
    {
        var query = new StringBuilder(prefix, prefix.Length + 32);
        foreach (var (topicId, cursor) in cursors)
        {
            // id:from~epoch or id:state; '~' is unreserved in URLs and epochs are [0-9A-Za-z_-], so nothing needs escaping.
            query.Append(CultureInfo.InvariantCulture, $"{topicId}:{cursor}").Append(',');
        }
        query.Length--;
        return query.ToString();
    }

    /// <summary>
    /// Changes the topic set and abandons the poll (or event stream) that waits with the old one. The
    /// topic changed is held back on a WebSocket until the server has taken the change (see <see cref="_fences"/>).
    /// </summary>
    private void Change(long topicId, Func<Dictionary<long, TopicCursor>, bool> change)
    {
        CancellationTokenSource previous;
        lock (_gate)
        {
            if (change(_cursors))
            {
                _touched.Add(topicId);
                _fences[topicId] = NotSent;
            }
            previous = _changed;
            _changed = new CancellationTokenSource();
        }
        // Outside the lock: cancellation runs the poll's callbacks synchronously.
        previous.Cancel();
        previous.Dispose();
    }

    /// <summary>Drops a topic the server no longer has, without abandoning anything (the next poll simply omits it).</summary>
    private bool Drop(long topicId)
    {
        lock (_gate)
        {
            return _cursors.Remove(topicId);
        }
    }

    /// <summary>Whether the topic set changed after the snapshot whose token is <paramref name="changed"/>.</summary>
    private bool ChangedSince(CancellationToken changed)
    {
        lock (_gate)
        {
            return _changed.Token != changed;
        }
    }

    /// <summary>
    /// Applies the protocol's cursor rule for one event; <see langword="false"/> when the event must not be
    /// delivered: its topic was removed, or the message was delivered already, or the event belongs to an
    /// answer or stream the subscription no longer stands by. For a poll or an event stream (made with the
    /// snapshot whose token is <paramref name="changed"/>) that is any change of the topic set since; for a
    /// WebSocket (<paramref name="changed"/> <see langword="null"/>), a change of this topic that the server
    /// has not answered yet. Both are checked here, under the lock that a change takes, because a check
    /// before this call could pass just before an Add moves a cursor back, and applying the old answer
    /// would then move it past messages the caller asked for again.
    /// </summary>
    private bool Apply(SubscriptionEvent item, CancellationToken? changed)
    {
        lock (_gate)
        {
            if ((changed is { } token ? _changed.Token != token : _fences.ContainsKey(item.TopicId))
                || !_cursors.TryGetValue(item.TopicId, out var cursor))
            {
                return false;
            }
            // Every message and notice names the incarnation it belongs to: a cursor that had no epoch
            // (from an epoch-less save, or Add without one) learns it here, and sends it from the next poll on.
            var epoch = item.Epoch ?? cursor.Epoch;
            switch (item)
            {
                case LaharsubMessage message:
                    if (message.MessageId < cursor.From)
                    {
                        return false;
                    }
                    _cursors[item.TopicId] = new TopicCursor(message.MessageId + 1, epoch);
                    return true;
                case GapNotice gap:
                    _cursors[item.TopicId] = new TopicCursor(Math.Max(cursor.From, gap.ToMessageId + 1), epoch);
                    return true;
                case ConflatedNotice conflated:
                    _cursors[item.TopicId] = new TopicCursor(Math.Max(cursor.From, conflated.ToMessageId + 1), epoch);
                    return true;
                case StateNotice state:
                    _cursors[item.TopicId] = new TopicCursor(state.Version + 1, epoch);
                    return true;
                case ResetNotice reset:
                    // A state view's topic starts again from the new incarnation's document, which the
                    // server sends after the reset; if the connection breaks before it, the next asks for it.
                    _cursors[item.TopicId] = _states.ContainsKey(item.TopicId) ? TopicCursor.ForState : new TopicCursor(reset.FirstMessageId, epoch);
                    return true;
                case TopicDeletedNotice:
                    _cursors.Remove(item.TopicId);
                    return true;
                default:
                    return true;
            }
        }
    }

    /// <summary>
    /// Moves on from <paramref name="failed"/> to the next transport, if the subscription finds its
    /// transport (<see cref="LaharsubTransport.Auto"/>) and one is left; <see langword="false"/> otherwise.
    /// </summary>
    private bool FallBack(LaharsubTransport failed, Exception reason)
    {
        if (!_auto || failed == LaharsubTransport.LongPolling)
        {
            return false;
        }
        _candidate = failed == LaharsubTransport.WebSocket ? LaharsubTransport.ServerSentEvents : LaharsubTransport.LongPolling;
        _fallbackReason = reason;
        return true;
    }

    /// <summary>
    /// Records the transport in use, raising <see cref="TransportChanged"/> when it is a new one, then
    /// <see cref="Connected"/> or <see cref="Reconnected"/> when the subscription was not connected.
    /// </summary>
    private void Established(LaharsubTransport transport)
    {
        if (Interlocked.Exchange(ref _transport, (int)transport) != (int)transport)
        {
            var reason = _fallbackReason;
            _fallbackReason = null;
            TransportChanged?.Invoke(this, new TransportChangedEventArgs(transport, reason));
        }
        var was = _connection;
        _connection = ConnectionState.Up;
        if (was == ConnectionState.None)
        {
            Connected?.Invoke(this, EventArgs.Empty);
        }
        else if (was == ConnectionState.Lost)
        {
            Reconnected?.Invoke(this, EventArgs.Empty);
        }
    }

    /// <summary>Whether a stream's failure may mean that its instance is gone (rather than, say, a malformed frame).</summary>
    private static bool IsBroken(Exception error) =>
        LaharsubClient.IsUnreachable(error) || error is System.Net.WebSockets.WebSocketException or TimeoutException;

    /// <summary>Reports a failure with <see cref="Retrying"/>, then waits <paramref name="delay"/> (unless the subscription ends first).</summary>
    private async Task RetryAfterAsync(Exception error, TimeSpan delay, CancellationToken cancellationToken)
    {
        if (_connection == ConnectionState.Up)
        {
            _connection = ConnectionState.Lost;
        }
        Retrying?.Invoke(this, new RetryingEventArgs(error, delay));
        await WaitAsync(delay, CancellationToken.None, cancellationToken).ConfigureAwait(false);
    }

    /// <summary>Waits for <paramref name="delay"/>, a change of the topic set, or the subscription's end; throws only when <paramref name="cancellationToken"/> fires.</summary>
    private async Task WaitAsync(TimeSpan delay, CancellationToken changed, CancellationToken cancellationToken)
    {
        using var wait = CancellationTokenSource.CreateLinkedTokenSource(changed, _stopped, cancellationToken);
        await Task.Delay(delay, _client.TimeProvider, wait.Token).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
        cancellationToken.ThrowIfCancellationRequested();
    }
}

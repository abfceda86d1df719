using System.Globalization;
using System.Runtime.CompilerServices;
using System.Text;

namespace Laharsub.Client;

/// <summary>
/// Subscriptions to any number of topics, served by ONE long poll at a time. Tracks a cursor per topic
/// (the smallest message id still wanted) and delivers messages and notices through
/// <see cref="ReadAllAsync"/>. Topics can be added and removed while it runs: a waiting poll is
/// abandoned and sent again with the new set, and no message is lost or delivered twice.
/// </summary>
/// <remarks>
/// Failed polls (network errors, timeouts, 5xx, 429) are retried with backoff for as long as the
/// subscription runs; notices (<see cref="GapNotice"/>, <see cref="ResetNotice"/>,
/// <see cref="TopicDeletedNotice"/>, <see cref="TopicNotFoundNotice"/>) are delivered as events and the
/// subscription goes on. Only an answer the client cannot recover from (any other 4xx, e.g. more topics
/// than the server's <c>MaxSubscriptionsPerPoll</c>) ends the enumeration with a <see cref="LaharsubException"/>.
/// </remarks>
public sealed class LaharsubSubscription : IAsyncDisposable
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

    internal LaharsubSubscription(LaharsubClient client, IEnumerable<KeyValuePair<long, TopicCursor>> cursors)
    {
        _client = client;
        foreach (var (topicId, cursor) in cursors)
        {
            _cursors[topicId] = cursor;
        }
        _stopping = CancellationTokenSource.CreateLinkedTokenSource(client.Disposing);
        _stopped = _stopping.Token;
    }

    /// <summary>
    /// Raised before each retry of a failed poll, with why it failed (a network error, a timeout, a
    /// malformed answer, or a <see cref="LaharsubException"/> for a 5xx or 429) and how long the
    /// subscription waits before polling again; the sender is the subscription. The subscription itself
    /// never gives up on such failures; this is how an application sees that it is not getting through
    /// (a wrong address, a server that is down) and decides whether to go on. Runs on the enumerating
    /// thread: keep it short.
    /// </summary>
    public event EventHandler<RetryingEventArgs>? Retrying;

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
    /// A waiting poll is replaced at once.
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
        Change(cursors => cursors[topicId] = new TopicCursor(from, epoch ?? (cursors.TryGetValue(topicId, out var known) ? known.Epoch : null)));
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
        Change(cursors => cursors.TryAdd(topicId, new TopicCursor(topic.LastMessageId + 1, topic.Epoch)));
    }

    /// <summary>Unsubscribes from a topic; nothing more is delivered for it, even from an answer already received.</summary>
    /// <param name="topicId">The topic's id.</param>
    /// <returns>Whether the topic was subscribed.</returns>
    public bool Remove(long topicId)
    {
        var removed = false;
        Change(cursors => removed = cursors.Remove(topicId));
        return removed;
    }

    /// <summary>
    /// Polls and delivers messages and notices for the subscribed topics, in id order within each
    /// topic, until <paramref name="cancellationToken"/> fires (then <see cref="OperationCanceledException"/>)
    /// or the subscription is disposed (then the enumeration simply ends). With no topics subscribed it
    /// waits for one to be added. One enumeration at a time.
    /// </summary>
    /// <param name="cancellationToken">Stops the enumeration, aborting the outstanding poll.</param>
    /// <exception cref="LaharsubException">The server refused the poll for a reason a retry cannot fix.</exception>
    /// <exception cref="InvalidOperationException">Another enumeration of this subscription is running.</exception>
    public async IAsyncEnumerable<SubscriptionEvent> ReadAllAsync([EnumeratorCancellation] CancellationToken cancellationToken = default)
    {
        if (Interlocked.Exchange(ref _reading, 1) == 1)
        {
            throw new InvalidOperationException("This subscription is already being read: enumerate ReadAllAsync once at a time.");
        }
        try
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
                var outcome = await _client.PollAsync(query, failures, changed, _stopped, cancellationToken).ConfigureAwait(false);
                switch (outcome.Kind)
                {
                    case PollOutcomeKind.Retry:
                        failures++;
                        Retrying?.Invoke(this, new RetryingEventArgs(outcome.Error!, outcome.Delay));
                        await WaitAsync(outcome.Delay, CancellationToken.None, cancellationToken).ConfigureAwait(false);
                        continue;
                    case PollOutcomeKind.TopicNotFound:
                        failures = 0;
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
                        break;
                    default:
                        failures = 0;
                        continue;
                }
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
            }
        }
        finally
        {
            Volatile.Write(ref _reading, 0);
        }
    }

    /// <summary>Stops the subscription: aborts the outstanding poll and ends the enumeration.</summary>
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

    /// <summary>The poll query for the current set (null when empty) and the token that fires when the set changes.</summary>
    private (string? Query, CancellationToken Changed) Snapshot()
    {
        lock (_gate)
        {
            if (_cursors.Count == 0)
            {
                return (null, _changed.Token);
            }
            var query = new StringBuilder("topics=", 8 + _cursors.Count * 24);
            foreach (var (topicId, cursor) in _cursors)
            {
                // id:from~epoch; '~' is unreserved in URLs and epochs are [0-9A-Za-z_-], so nothing needs escaping.
                query.Append(CultureInfo.InvariantCulture, $"{topicId}:{cursor.From}");
                if (cursor.Epoch is not null)
                {
                    query.Append('~').Append(cursor.Epoch);
                }
                query.Append(',');
            }
            query.Length--;
            return (query.ToString(), _changed.Token);
        }
    }

    /// <summary>Changes the topic set and abandons the poll that waits with the old one.</summary>
    private void Change(Action<Dictionary<long, TopicCursor>> change)
    {
        CancellationTokenSource previous;
        lock (_gate)
        {
            change(_cursors);
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
    /// Applies the protocol's cursor rule for one event of the answer to the poll made with the snapshot
    /// whose token is <paramref name="changed"/>; <see langword="false"/> when the event must not be
    /// delivered: its topic was removed, the message was delivered already, or the topic set changed
    /// since that snapshot. The last is checked here, under the lock that a change takes, because a
    /// check before this call could pass just before an Add moves a cursor back, and applying the old
    /// answer would then move it past messages the caller asked for again.
    /// </summary>
    private bool Apply(SubscriptionEvent item, CancellationToken changed)
    {
        lock (_gate)
        {
            if (_changed.Token != changed || !_cursors.TryGetValue(item.TopicId, out var cursor))
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
                case ResetNotice reset:
                    _cursors[item.TopicId] = new TopicCursor(reset.FirstMessageId, epoch);
                    return true;
                case TopicDeletedNotice:
                    _cursors.Remove(item.TopicId);
                    return true;
                default:
                    return true;
            }
        }
    }

    /// <summary>Waits for <paramref name="delay"/>, a change of the topic set, or the subscription's end; throws only when <paramref name="cancellationToken"/> fires.</summary>
    private async Task WaitAsync(TimeSpan delay, CancellationToken changed, CancellationToken cancellationToken)
    {
        using var wait = CancellationTokenSource.CreateLinkedTokenSource(changed, _stopped, cancellationToken);
        await Task.Delay(delay, _client.TimeProvider, wait.Token).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
        cancellationToken.ThrowIfCancellationRequested();
    }
}

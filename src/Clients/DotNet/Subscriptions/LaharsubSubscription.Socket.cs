using System.Net;
using Laharsub.Client.Streams;
using Laharsub.Client.Wire;

namespace Laharsub.Client;

public sealed partial class LaharsubSubscription
{
    /// <summary>A fence whose frame is not sent yet.</summary>
    private const long NotSent = long.MaxValue;

    /// <summary>
    /// WebSocket: the topics whose events are held back, each until the server answers the change frame
    /// with this sequence number (<see cref="NotSent"/> until that frame is sent). When a topic is added,
    /// moved or removed while the socket runs, what the server sends for it until it has taken the change
    /// belongs to the old position: delivering it could skip what the caller asked for again. The server
    /// answers frames in order, on the one socket that also carries the events, so the answer
    /// (<c>subscribed</c>, or the <c>problem</c> of an unknown topic) marks where the new position's
    /// events start. Guarded by <see cref="_gate"/>.
    /// </summary>
    private readonly Dictionary<long, long> _fences = [];
    /// <summary>WebSocket: topics changed by the caller that the server is still to be told about.</summary>
    private readonly HashSet<long> _touched = [];
    /// <summary>WebSocket: topics whose events did not fit in the socket's queue: asked for again once the reader has caught up. Used on the reader's side only.</summary>
    private readonly HashSet<long> _overflowed = [];
    private long _frameSequence;
    private long _overflowedEvents;
    /// <summary>The WebSocket in use, once it has started; publishes go on it.</summary>
    private WebSocketSession? _socket;

    /// <summary>Events a WebSocket could not hold for a slow reader, and asked for again (for tests).</summary>
    internal long OverflowedEvents => Interlocked.Read(ref _overflowedEvents);

    /// <summary>
    /// Publishes bytes as one message: on the subscription's WebSocket when it has one open
    /// (<see cref="Transport"/> is <see cref="LaharsubTransport.WebSocket"/>), which costs no request,
    /// else exactly as <see cref="LaharsubClient.PublishAsync(long, ReadOnlyMemory{byte}, string, PublishOptions?, CancellationToken)"/>.
    /// </summary>
    /// <remarks>
    /// On the socket the publish is one <c>publish</c> frame answered by <c>published</c> (the same ids and
    /// epoch as the HTTP answer) or <c>problem</c> (thrown as the same exception the HTTP answer would be,
    /// with its status, title and detail), within <see cref="LaharsubClientOptions.RequestTimeout"/>. The frame
    /// carries the idempotency key HTTP would send (<see cref="PublishOptions.IdempotencyKey"/>, else a new one
    /// while <see cref="LaharsubClientOptions.IdempotentPublishes"/> is on). A frame that could not be sent, and
    /// a <c>503</c> of an instance that is stopping, publish over HTTP instead: nothing was stored. When the
    /// outcome is unknown (the socket closed after the frame went out, or no answer in time), a keyed publish is
    /// sent again over HTTP with the same key, so the server stores it once; without a key the call throws
    /// <see cref="IOException"/> or <see cref="TimeoutException"/>: the message may or may not have been stored.
    /// </remarks>
    /// <param name="topicId">The topic's id (positive).</param>
    /// <param name="body">The message: at least one byte, at most the server's <c>MaxMessageBytes</c> (256 KiB by default).</param>
    /// <param name="contentType">A media type such as <c>image/png</c>; subscribers receive it unchanged.</param>
    /// <param name="options">Conditions such as <see cref="PublishOptions.ExpectedEpoch"/>; <see langword="null"/> for none.</param>
    /// <param name="cancellationToken">Stops waiting for the answer (the message may be stored already).</param>
    /// <returns>The message's topic and final id, and the topic's epoch.</returns>
    /// <exception cref="EpochMismatchException">The topic is not the incarnation <see cref="PublishOptions.ExpectedEpoch"/> names; nothing was published.</exception>
    /// <exception cref="LaharsubException">The server refused: <c>404</c> unknown topic, <c>413</c> too large, ...</exception>
    public async Task<PublishedMessage> PublishAsync(long topicId, ReadOnlyMemory<byte> body, string contentType, PublishOptions? options = null, CancellationToken cancellationToken = default)
    {
        var expectedEpoch = LaharsubClient.ValidatePublish(topicId, body, contentType, options);
        var key = _client.IdempotencyKeyFor(options);
        try
        {
            if (await TryPublishOnSocketAsync(id => SocketFrames.Publish(id, topicId, body.Span, contentType, expectedEpoch, key), key, cancellationToken).ConfigureAwait(false) is [var published])
            {
                return published;
            }
        }
        catch (LaharsubException problem) when (problem.StatusCode == HttpStatusCode.PreconditionFailed && expectedEpoch is not null)
        {
            throw new EpochMismatchException(topicId, expectedEpoch, problem.ProblemEpoch, problem.Title, problem.Detail);
        }
        return await _client.PublishCoreAsync(topicId, body, contentType, expectedEpoch, key, cancellationToken).ConfigureAwait(false);
    }

    /// <summary>
    /// Publishes one message to several topics, all or none: on the subscription's WebSocket when it has one
    /// open (one <c>publish</c> frame naming every topic), else exactly as
    /// <see cref="LaharsubClient.PublishManyAsync(IEnumerable{long}, ReadOnlyMemory{byte}, string, PublishOptions?, CancellationToken)"/>;
    /// the socket's answers, fallbacks and retries are those of
    /// <see cref="PublishAsync(long, ReadOnlyMemory{byte}, string, PublishOptions?, CancellationToken)"/>.
    /// </summary>
    /// <param name="topicIds">The topics: distinct positive ids, at most the server's <c>MaxTopicsPerPublish</c> (100 by default).</param>
    /// <param name="body">The message: at least one byte, at most the server's <c>MaxMessageBytes</c>.</param>
    /// <param name="contentType">A media type such as <c>application/json</c>; subscribers receive it unchanged.</param>
    /// <param name="options">The topics' expected epochs (<see cref="PublishOptions.ExpectedEpochs"/>) and the idempotency key; <see langword="null"/> for none.</param>
    /// <param name="cancellationToken">Stops waiting for the answer (the message may be stored already).</param>
    /// <returns>Each message's topic, id and epoch, in the order of <paramref name="topicIds"/>.</returns>
    /// <exception cref="LaharsubException">
    /// The server refused, having published nothing: <c>404</c> a topic is missing, <c>412</c> another incarnation
    /// (the problem's <c>topics</c> extension names each refusing topic), <c>403</c> a topic the token may not publish to, ...
    /// </exception>
    public async Task<IReadOnlyList<PublishedMessage>> PublishManyAsync(IEnumerable<long> topicIds, ReadOnlyMemory<byte> body, string contentType,
        PublishOptions? options = null, CancellationToken cancellationToken = default)
    {
        var topics = LaharsubClient.ValidatePublishMany(topicIds, body, contentType, options);
        var key = _client.IdempotencyKeyFor(options);
        return await TryPublishOnSocketAsync(id => SocketFrames.PublishMany(id, topics, body.Span, contentType, key), key, cancellationToken).ConfigureAwait(false)
            ?? await _client.PublishManyCoreAsync(topics, body, contentType, key, cancellationToken).ConfigureAwait(false);
    }

    /// <summary>
    /// Publishes on the WebSocket if one is open; <see langword="null"/> when the caller is to publish over HTTP
    /// instead: no socket, a frame not sent, an instance stopping (<c>503</c>, nothing stored), or an outcome
    /// unknown with a key, which makes the HTTP publish a safe repeat.
    /// </summary>
    private async Task<IReadOnlyList<PublishedMessage>?> TryPublishOnSocketAsync(Func<string, byte[]> frameFor, string? key, CancellationToken cancellationToken)
    {
        if (Volatile.Read(ref _socket) is not { IsClosed: false } socket)
        {
            return null;
        }
        try
        {
            return await socket.TryPublishAsync(frameFor, cancellationToken).ConfigureAwait(false);
        }
        catch (LaharsubException problem) when (problem.StatusCode == HttpStatusCode.ServiceUnavailable)
        {
            // The instance is stopping and stored nothing: over HTTP, the publish reaches one that stays.
            return null;
        }
        catch (Exception unknown) when (key is not null && unknown is IOException or TimeoutException)
        {
            // Stored or not: the same key over HTTP gets the stored answer, or stores it now, once.
            return null;
        }
    }

    /// <summary>
    /// Publishes text as one message with content type <c>text/plain; charset=utf-8</c>, as
    /// <see cref="PublishAsync(long, ReadOnlyMemory{byte}, string, PublishOptions?, CancellationToken)"/> does.
    /// </summary>
    /// <param name="topicId">The topic's id (positive).</param>
    /// <param name="text">The message text, not empty.</param>
    /// <param name="cancellationToken">Stops waiting for the answer (the message may be stored already).</param>
    public Task<PublishedMessage> PublishAsync(long topicId, string text, CancellationToken cancellationToken = default)
    {
        ArgumentException.ThrowIfNullOrEmpty(text);
        return PublishAsync(topicId, System.Text.Encoding.UTF8.GetBytes(text), LaharsubClient.TextContentType, options: null, cancellationToken);
    }

    /// <summary>Called by the WebSocket's receive loop for each event it could not hold for the reader.</summary>
    internal void Dropped() => Interlocked.Increment(ref _overflowedEvents);

    /// <summary>Whether topics overflowed the WebSocket's queue and are still to be asked for again.</summary>
    internal bool HasOverflowed
    {
        get
        {
            lock (_gate)
            {
                return _overflowed.Count > 0;
            }
        }
    }

    /// <summary>
    /// An event of the topic was not kept for the reader: from here on (the events before it were kept,
    /// and are delivered) its events are held back, and the topic is asked for again from its cursor
    /// once the reader has caught up.
    /// </summary>
    private void Overflowed(long topicId)
    {
        lock (_gate)
        {
            if (_cursors.ContainsKey(topicId))
            {
                // Even over a fence of a change already sent: its answer may come before what was dropped.
                _fences[topicId] = NotSent;
                _overflowed.Add(topicId);
            }
        }
    }

    /// <summary>
    /// Tells the WebSocket about the topics the caller changed (or, <paramref name="overflowed"/>, those
    /// that did not fit in its queue): a <c>subscribe</c> frame with their cursors as they stand and an
    /// <c>unsubscribe</c> frame with the topics removed. Their events stay held back until the server
    /// answers. Returns the token that fires at the next change.
    /// </summary>
    private async Task<CancellationToken> SyncAsync(WebSocketSession socket, bool overflowed)
    {
        byte[]? subscribe = null, unsubscribe = null;
        long subscribeSequence = 0, unsubscribeSequence = 0;
        CancellationToken changed;
        lock (_gate)
        {
            var topics = overflowed ? _overflowed : _touched;
            var added = new List<KeyValuePair<long, TopicCursor>>();
            var removed = new List<long>();
            foreach (var topicId in topics)
            {
                if (_cursors.TryGetValue(topicId, out var cursor))
                {
                    added.Add(KeyValuePair.Create(topicId, cursor));
                }
                else
                {
                    removed.Add(topicId);
                }
            }
            topics.Clear();
            if (added.Count > 0)
            {
                var sequence = ++_frameSequence;
                foreach (var (topicId, _) in added)
                {
                    _fences[topicId] = sequence;
                }
                subscribe = SocketFrames.Change(subscribe: true, sequence, Topics(added));
                subscribeSequence = sequence;
            }
            if (removed.Count > 0)
            {
                foreach (var topicId in removed)
                {
                    // Nothing of it is delivered anyway: it has no cursor.
                    _fences.Remove(topicId);
                }
                unsubscribeSequence = ++_frameSequence;
                unsubscribe = SocketFrames.Change(subscribe: false, unsubscribeSequence, string.Join(',', removed));
            }
            changed = _changed.Token;
        }
        // A frame that cannot be sent aborts the socket, and one the server does not answer within
        // RequestTimeout gives it up: either way the reader's next step is the socket's end, and the
        // subscription connects again from its cursors.
        if (subscribe is not null)
        {
            await socket.SendChangeAsync(subscribe, subscribeSequence).ConfigureAwait(false);
        }
        if (unsubscribe is not null)
        {
            await socket.SendChangeAsync(unsubscribe, unsubscribeSequence).ConfigureAwait(false);
        }
        return changed;
    }

    /// <summary>
    /// Takes the epochs a WebSocket's <c>subscribed</c> frame names for topics whose cursors have none (bare cursors,
    /// or topics that delivered nothing yet), as a delivery's epoch would be taken: the next connection then sends
    /// them, and a topic re-created meanwhile is reported as a reset instead of being read as the same topic. A topic
    /// with a change not answered yet is left as it is (the frame describes the set before that change).
    /// </summary>
    private void LearnEpochs(IReadOnlyList<KeyValuePair<long, string>>? epochs)
    {
        if (epochs is null)
        {
            return;
        }
        lock (_gate)
        {
            foreach (var (topicId, epoch) in epochs)
            {
                if (!_fences.ContainsKey(topicId) && _cursors.TryGetValue(topicId, out var cursor) && cursor.Epoch is null)
                {
                    _cursors[topicId] = cursor with { Epoch = epoch };
                }
            }
        }
    }

    /// <summary>The server has taken the change frames up to <paramref name="answers"/>: their topics' events are delivered again.</summary>
    private void Unfence(long? answers)
    {
        if (answers is not { } answered)
        {
            return;
        }
        lock (_gate)
        {
            foreach (var (topicId, sequence) in _fences)
            {
                if (sequence <= answered)
                {
                    _fences.Remove(topicId);
                }
            }
        }
    }

    /// <summary>Drops a topic the WebSocket's server does not know, unless a later change of it is still to be answered.</summary>
    private bool DropUnlessFenced(long topicId)
    {
        lock (_gate)
        {
            return !_fences.ContainsKey(topicId) && _cursors.Remove(topicId);
        }
    }
}

using System.Buffers;
using System.Collections.Concurrent;
using System.Net;
using System.Net.WebSockets;
using System.Text.Json;
using System.Threading.Channels;
using Laharsub.Client.Wire;

namespace Laharsub.Client.Streams;

/// <summary>
/// A <c>laharsub.v1</c> WebSocket (docs/protocol.md, "WebSocket"). A receive loop reads every frame as it
/// arrives, so that the answers to publishes are seen however far behind the subscription's reader is;
/// it answers those itself and hands messages, notices and the answers to topic changes to the reader, in
/// the order the server sent them. It holds at most <see cref="LaharsubClientOptions.StreamQueueCapacity"/>
/// events for the reader: past that, an event is not kept, and an <see cref="StreamStepKind.Overflowed"/>
/// step takes its place in the queue. From that step on the subscription delivers nothing more of the
/// topic, and once the reader has caught up (<see cref="StreamStepKind.Drained"/>) asks for it again
/// from its cursor, which then stands right after the last event kept. Nothing is lost, and memory stays
/// bounded for a slow reader.
/// </summary>
internal sealed class WebSocketSession : IStreamSession
{
    private const int MaxFrameBytes = 64 * 1024 * 1024;

    private readonly WebSocket _socket;
    private readonly LaharsubClient.Exchange _exchange;
    private readonly LaharsubClient _client;
    private readonly LaharsubSubscription _owner;
    private readonly CancellationToken _stopped;
    private readonly Channel<StreamStep> _steps = Channel.CreateUnbounded<StreamStep>(new UnboundedChannelOptions { SingleReader = true, SingleWriter = true });
    private readonly ConcurrentDictionary<string, TaskCompletionSource<IReadOnlyList<PublishedMessage>>> _publishes = new();
    /// <summary>One sender at a time (the WebSocket allows one send beside one receive). Never disposed: a late publish may still release it.</summary>
    private readonly SemaphoreSlim _sending = new(1, 1);
    private readonly CancellationTokenSource _closing = new();
    /// <summary>Fires when the server has sent no frame within RequestTimeout of the upgrade.</summary>
    private readonly CancellationTokenSource _startDeadline;
    private readonly int _capacity;
    private readonly Task _receiving;
    private int _queued;
    private volatile bool _started;
    /// <summary>The last change frame sent (reader's side) and the last the server answered (written by the receive loop).</summary>
    private long _changeSent, _changeAnswered;
    /// <summary>Fires when a change frame has waited RequestTimeout for its answer; re-armed at each answer while more wait.</summary>
    private CancellationTokenSource? _answerDeadline;
    private long _deadlineArmedAt = -1;
    private volatile bool _closed;
    private long _publishIds;
    /// <summary>Why this side aborted the socket, when it did: what the reader is told rather than the abort's own cancellation.</summary>
    private volatile Exception? _abortedFor;

    public WebSocketSession(WebSocket socket, LaharsubClient.Exchange exchange, int address, LaharsubClient client, LaharsubSubscription owner, CancellationToken stopped)
    {
        _socket = socket;
        _exchange = exchange;
        Address = address;
        _client = client;
        _owner = owner;
        _stopped = stopped;
        _capacity = client.Options.StreamQueueCapacity;
        _startDeadline = new CancellationTokenSource(client.Options.RequestTimeout, client.TimeProvider);
        _receiving = ReceiveAsync();
    }

    public LaharsubTransport Transport => LaharsubTransport.WebSocket;

    public int Address { get; }

    /// <summary>Whether the socket has stopped receiving (closed, failed or disposed).</summary>
    public bool IsClosed => _closed;

    public async ValueTask<StreamStep> NextAsync(CancellationToken changed, CancellationToken cancellationToken)
    {
        while (true)
        {
            cancellationToken.ThrowIfCancellationRequested();
            if (_stopped.IsCancellationRequested)
            {
                return StreamStep.Stopped;
            }
            if (changed.IsCancellationRequested)
            {
                // Before the events held: the change's frames go out at once (the events of the topics it
                // touches are not delivered meanwhile; the others lose nothing by waiting).
                return StreamStep.Changed;
            }
            if (_steps.Reader.TryRead(out var step))
            {
                if (step.Kind == StreamStepKind.Event)
                {
                    Interlocked.Decrement(ref _queued);
                }
                return step;
            }
            if (_owner.HasOverflowed)
            {
                return StreamStep.Drained;
            }
            var deadline = _started ? CancellationToken.None : _startDeadline.Token;
            var unanswered = AnswerDeadline();
            if (unanswered.IsCancellationRequested)
            {
                return StreamStep.Failed(new TimeoutException(
                    "The server did not answer a subscribe or unsubscribe frame within RequestTimeout: the socket is given up and opened again from the cursors."));
            }
            using var wait = CancellationTokenSource.CreateLinkedTokenSource(changed, _stopped, cancellationToken, deadline, unanswered);
            try
            {
                if (!await _steps.Reader.WaitToReadAsync(wait.Token).ConfigureAwait(false))
                {
                    // Not reached: the receive loop writes how the socket ended before it completes.
                    return StreamStep.Failed(new IOException("The WebSocket closed."));
                }
            }
            catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
            {
                throw;
            }
            catch (OperationCanceledException) when (_stopped.IsCancellationRequested)
            {
                return StreamStep.Stopped;
            }
            catch (OperationCanceledException) when (changed.IsCancellationRequested)
            {
                return StreamStep.Changed;
            }
            catch (OperationCanceledException) when (unanswered.IsCancellationRequested)
            {
                // Checked again at the top: the answer may have come just now.
                continue;
            }
            catch (OperationCanceledException exception)
            {
                return StreamStep.NotStarted(new TimeoutException("The WebSocket sent no frame within RequestTimeout of its upgrade.", exception));
            }
        }
    }

    /// <summary>
    /// The token that fires when a change frame has waited too long for its answer (none when all are
    /// answered): a server that stops reading frames would otherwise hold the changed topics back for good.
    /// </summary>
    private CancellationToken AnswerDeadline()
    {
        var answered = Interlocked.Read(ref _changeAnswered);
        if (_changeSent <= answered)
        {
            _answerDeadline?.Dispose();
            _answerDeadline = null;
            return CancellationToken.None;
        }
        if (_answerDeadline is null || _deadlineArmedAt != answered)
        {
            // Armed when a frame starts waiting, and again at each answer while later frames still wait.
            _answerDeadline?.Dispose();
            _answerDeadline = new CancellationTokenSource(_client.Options.RequestTimeout, _client.TimeProvider);
            _deadlineArmedAt = answered;
        }
        return _answerDeadline.Token;
    }

    /// <summary>Sends a <c>subscribe</c> or <c>unsubscribe</c> frame whose id is <c>c{sequence}</c>, whose answer is then awaited.</summary>
    public Task<bool> SendChangeAsync(ReadOnlyMemory<byte> frame, long sequence)
    {
        _changeSent = Math.Max(_changeSent, sequence);
        return SendAsync(frame);
    }

    private void Answered(long? sequence)
    {
        if (sequence is not { } answered)
        {
            return;
        }
        long seen;
        while ((seen = Interlocked.Read(ref _changeAnswered)) < answered && Interlocked.CompareExchange(ref _changeAnswered, answered, seen) != seen)
        {
        }
    }

    /// <summary>
    /// Sends a frame, one sender at a time, within RequestTimeout. <see langword="false"/> when it could
    /// not be sent whole; then the socket is aborted (its receive loop reports the failure), and the server
    /// got at most part of the frame, which it cannot act on.
    /// </summary>
    public async Task<bool> SendAsync(ReadOnlyMemory<byte> frame)
    {
        if (_closed)
        {
            return false;
        }
        using var timeout = new CancellationTokenSource(_client.Options.RequestTimeout, _client.TimeProvider);
        // The reason is recorded before the abort, so the receive loop (which the abort ends at once) reports
        // it; a token handed to the socket's send would abort first and leave the loop a bare cancellation.
        using var abortWhenLate = timeout.Token.UnsafeRegister(static session => ((WebSocketSession)session!).AbortForSlowSend(), this);
        try
        {
            await _sending.WaitAsync(timeout.Token).ConfigureAwait(false);
        }
        catch (OperationCanceledException)
        {
            return false;
        }
        try
        {
            await _socket.SendAsync(frame, WebSocketMessageType.Text, endOfMessage: true, CancellationToken.None).ConfigureAwait(false);
            return true;
        }
        catch (Exception exception) when (exception is WebSocketException or IOException or OperationCanceledException or ObjectDisposedException or InvalidOperationException)
        {
            _socket.Abort();
            return false;
        }
        finally
        {
            _sending.Release();
        }
    }

    /// <summary>Aborts the socket because a frame could not be sent within RequestTimeout, and says so to the reader.</summary>
    private void AbortForSlowSend()
    {
        _abortedFor ??= new TimeoutException(
            "The server did not take a frame within RequestTimeout: the socket is given up and opened again from the cursors.");
        _socket.Abort();
    }

    /// <summary>
    /// Publishes with the <c>publish</c> frame <paramref name="frameFor"/> makes for a frame id, and waits for
    /// its answer: the message of each topic, in the frame's order. <see langword="null"/> when the frame
    /// could not be sent (nothing was published: the caller publishes over HTTP instead).
    /// </summary>
    /// <exception cref="LaharsubException">The server refused it (a <c>problem</c> frame).</exception>
    /// <exception cref="IOException">The socket closed after the frame was sent, before the answer: the message may or may not have been stored.</exception>
    /// <exception cref="TimeoutException">No answer within RequestTimeout: the message may or may not have been stored.</exception>
    public async Task<IReadOnlyList<PublishedMessage>?> TryPublishAsync(Func<string, byte[]> frameFor, CancellationToken cancellationToken)
    {
        if (_closed)
        {
            return null;
        }
        var id = SocketFrames.PublishId(Interlocked.Increment(ref _publishIds));
        var answer = new TaskCompletionSource<IReadOnlyList<PublishedMessage>>(TaskCreationOptions.RunContinuationsAsynchronously);
        _publishes[id] = answer;
        // Registered before this check, so the receive loop's last sweep sees it if the socket closes after.
        if (_closed)
        {
            _publishes.TryRemove(id, out _);
            return null;
        }
        var frame = frameFor(id);
        var timeLimit = _client.Options.RequestTimeout;
        using var timeout = new CancellationTokenSource(timeLimit, _client.TimeProvider);
        using var waiting = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken, timeout.Token);
        try
        {
            // The caller's cancellation stops the waiting, not the send: cancelling a send aborts the socket.
            if (!await SendAsync(frame).WaitAsync(waiting.Token).ConfigureAwait(false))
            {
                _publishes.TryRemove(id, out _);
                return null;
            }
            return await answer.Task.WaitAsync(waiting.Token).ConfigureAwait(false);
        }
        catch (OperationCanceledException exception) when (!answer.Task.IsCompleted)
        {
            _publishes.TryRemove(id, out _);
            if (cancellationToken.IsCancellationRequested)
            {
                throw;
            }
            throw new TimeoutException($"Laharsub did not answer the publish on the WebSocket within {timeLimit} (LaharsubClientOptions.RequestTimeout). The message may or may not have been stored.", exception);
        }
    }

    private async Task ReceiveAsync()
    {
        // The constructor returns first; the loop runs on.
        await Task.Yield();
        var buffer = ArrayPool<byte>.Shared.Rent(16 * 1024);
        var messages = new JsonMessageReader();
        // The topics reported overflowed since the server last took a change (one report each is enough).
        var overflowed = new HashSet<long>();
        StreamStep end;
        try
        {
            while (true)
            {
                var length = 0;
                ValueWebSocketReceiveResult received;
                do
                {
                    if (length == buffer.Length)
                    {
                        if (buffer.Length >= MaxFrameBytes)
                        {
                            throw new InvalidDataException($"The server sent a frame longer than {MaxFrameBytes} bytes.");
                        }
                        var larger = ArrayPool<byte>.Shared.Rent(buffer.Length * 2);
                        buffer.AsSpan(0, length).CopyTo(larger);
                        ArrayPool<byte>.Shared.Return(buffer);
                        buffer = larger;
                    }
                    received = await _socket.ReceiveAsync(buffer.AsMemory(length), _closing.Token).ConfigureAwait(false);
                    length += received.Count;
                }
                while (!received.EndOfMessage && received.MessageType != WebSocketMessageType.Close);
                if (received.MessageType == WebSocketMessageType.Close)
                {
                    end = Closed();
                    break;
                }
                if (received.MessageType != WebSocketMessageType.Text)
                {
                    throw new InvalidDataException("The server sent a binary frame; laharsub.v1 frames are JSON text.");
                }
                _started = true;
                if (Parse(buffer.AsSpan(0, length), messages) is not { } step)
                {
                    continue;
                }
                if (step.Kind == StreamStepKind.Event)
                {
                    if (Volatile.Read(ref _queued) >= _capacity)
                    {
                        _owner.Dropped();
                        if (overflowed.Add(step.Event!.TopicId))
                        {
                            _steps.Writer.TryWrite(StreamStep.Overflowed(step.Event.TopicId));
                        }
                        continue;
                    }
                    Interlocked.Increment(ref _queued);
                }
                else if (step.Kind == StreamStepKind.Subscribed)
                {
                    overflowed.Clear();
                }
                _steps.Writer.TryWrite(step);
            }
        }
        catch (Exception exception)
        {
            // Whatever ends the loop ends the socket: the reader is told, and reconnects from its cursors.
            end = StreamStep.Failed(_abortedFor ?? (Notices.IsMalformedJson(exception)
                ? new InvalidDataException($"The server sent a malformed frame: {exception.Message}", exception)
                : exception));
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(buffer);
            _closed = true;
            foreach (var id in _publishes.Keys)
            {
                if (_publishes.TryRemove(id, out var waiting))
                {
                    waiting.TrySetException(new IOException("The WebSocket closed before the server answered the publish: the message may or may not have been stored."));
                }
            }
        }
        _steps.Writer.TryWrite(end);
        _steps.Writer.TryComplete();
    }

    /// <summary>
    /// The epochs of a <c>subscribed</c> frame's <c>topics</c> (<c>[{"topicId":14,"epoch":"...","from":43}]</c>):
    /// the only word of a topic's incarnation before it delivers anything.
    /// </summary>
    private static List<KeyValuePair<long, string>>? ReadEpochs(ref Utf8JsonReader reader)
    {
        reader.Read();
        if (reader.TokenType != JsonTokenType.StartArray)
        {
            reader.Skip();
            return null;
        }
        var epochs = new List<KeyValuePair<long, string>>();
        while (reader.Read() && reader.TokenType == JsonTokenType.StartObject)
        {
            long topicId = 0;
            string? epoch = null;
            while (reader.Read() && reader.TokenType == JsonTokenType.PropertyName)
            {
                if (reader.ValueTextEquals("topicId"u8)) topicId = Notices.ReadInt64(ref reader);
                else if (reader.ValueTextEquals("epoch"u8)) epoch = Notices.ReadEpoch(ref reader);
                else
                {
                    reader.Read();
                    reader.Skip();
                }
            }
            if (topicId > 0 && epoch is not null)
            {
                epochs.Add(new(topicId, epoch));
            }
        }
        return epochs;
    }

    /// <summary>How the server's close frame ends the stream (docs/protocol.md, close codes).</summary>
    private StreamStep Closed()
    {
        var code = (int?)_socket.CloseStatus;
        var description = _socket.CloseStatusDescription;
        var why = $"The server closed the WebSocket with {code} ({description})";
        return code switch
        {
            // Stopping, token expired, access to be decided again, reading too slowly: reconnect and resume from the cursors.
            1001 or 4001 or 4002 or 4008 => StreamStep.Ended(new IOException(why + ": reconnecting.")),
            4000 => StreamStep.Fatal(new LaharsubException(HttpStatusCode.BadRequest, "Not this protocol",
                $"The server closed the WebSocket because this client sent something that is not a laharsub.v1 frame: {description}")),
            _ => StreamStep.Failed(new IOException(why + ".")),
        };
    }

    /// <summary>
    /// Reads one server frame: messages and notices become events; answers to publishes complete them
    /// here; <c>subscribed</c> and the problems of topic changes become steps.
    /// </summary>
    private StreamStep? Parse(ReadOnlySpan<byte> frame, JsonMessageReader messages)
    {
        var reader = new Utf8JsonReader(frame);
        if (!reader.Read() || reader.TokenType != JsonTokenType.StartObject)
        {
            throw new InvalidDataException("A frame is not a JSON object.");
        }
        string? type = null, id = null, epoch = null;
        List<KeyValuePair<long, string>>? epochs = null;
        SubscriptionEvent? item = null;
        long topicId = 0, messageId = 0;
        var problem = ReadOnlySpan<byte>.Empty;
        var publishedMessages = ReadOnlySpan<byte>.Empty;
        while (reader.Read() && reader.TokenType == JsonTokenType.PropertyName)
        {
            if (reader.ValueTextEquals("type"u8))
            {
                reader.Read();
                type = reader.GetString();
            }
            else if (reader.ValueTextEquals("id"u8))
            {
                reader.Read();
                id = reader.TokenType == JsonTokenType.String ? reader.GetString() : null;
            }
            else if (reader.ValueTextEquals("message"u8))
            {
                ExpectObject(ref reader);
                item = messages.Read(ref reader);
            }
            else if (reader.ValueTextEquals("notice"u8))
            {
                ExpectObject(ref reader);
                item = Notices.Read(ref reader);
            }
            else if (reader.ValueTextEquals("problem"u8))
            {
                ExpectObject(ref reader);
                var start = (int)reader.TokenStartIndex;
                reader.Skip();
                problem = frame[start..(int)reader.BytesConsumed];
            }
            else if (reader.ValueTextEquals("messages"u8))
            {
                reader.Read();
                if (reader.TokenType != JsonTokenType.StartArray)
                {
                    throw new InvalidDataException($"A published frame has {reader.TokenType} where the messages array was expected.");
                }
                var start = (int)reader.TokenStartIndex;
                reader.Skip();
                publishedMessages = frame[start..(int)reader.BytesConsumed];
            }
            else if (reader.ValueTextEquals("topics"u8)) epochs = ReadEpochs(ref reader);
            else if (reader.ValueTextEquals("topicId"u8)) topicId = Notices.ReadInt64(ref reader);
            else if (reader.ValueTextEquals("messageId"u8)) messageId = Notices.ReadInt64(ref reader);
            else if (reader.ValueTextEquals("epoch"u8)) epoch = Notices.ReadEpoch(ref reader);
            else
            {
                reader.Read();
                reader.Skip();
            }
        }
        switch (type)
        {
            case "message" or "notice":
                // A notice of a type this client does not know names no messages of ours.
                return item is null ? null : StreamStep.Delivered(item);
            case "subscribed":
                Answered(SocketFrames.ChangeSequence(id));
                return StreamStep.Subscribed(SocketFrames.ChangeSequence(id), epochs);
            case "published":
                if (id is not null && _publishes.TryRemove(id, out var published))
                {
                    if (!publishedMessages.IsEmpty)
                    {
                        // A publish to several topics: REST's answer, each message in the frame's order.
                        var list = JsonSerializer.Deserialize(publishedMessages, ClientJsonContext.Default.ListPublishedMessage);
                        if (list is null || list.Count == 0 || list.Exists(m => m is null || m.TopicId <= 0 || m.MessageId <= 0))
                        {
                            published.TrySetException(new InvalidDataException("The server's 'published' frame has malformed messages."));
                        }
                        else
                        {
                            list.ForEach(Epochs.Checked);
                            published.TrySetResult(list);
                        }
                    }
                    else if (topicId <= 0 || messageId <= 0)
                    {
                        published.TrySetException(new InvalidDataException("The server's 'published' frame lacks its topicId or messageId."));
                    }
                    else
                    {
                        published.TrySetResult([new PublishedMessage(topicId, messageId) { Epoch = epoch }]);
                    }
                }
                return null;
            case "problem":
                var refusal = LaharsubClient.ParseProblemObject(problem);
                if (SocketFrames.IsPublishId(id))
                {
                    // The answer to a publish (perhaps one that stopped waiting).
                    if (_publishes.TryRemove(id!, out var refused))
                    {
                        refused.TrySetException(refusal);
                    }
                    return null;
                }
                var answers = SocketFrames.ChangeSequence(id);
                Answered(answers);
                if (refusal.StatusCode == HttpStatusCode.NotFound && refusal.TopicId is { } missing)
                {
                    return StreamStep.TopicNotFound(missing, refusal.Detail, answers);
                }
                // A topic change refused (403, too many topics): what a long poll with that set would be told.
                return (int)refusal.StatusCode is >= 400 and < 500 ? StreamStep.Fatal(refusal) : StreamStep.Failed(refusal);
            default:
                // Frame types from newer servers.
                return null;
        }
    }

    private static void ExpectObject(ref Utf8JsonReader reader)
    {
        reader.Read();
        if (reader.TokenType != JsonTokenType.StartObject)
        {
            throw new InvalidDataException($"A frame has {reader.TokenType} where an object was expected.");
        }
    }

    public async ValueTask DisposeAsync()
    {
        if (_socket.State is WebSocketState.Open or WebSocketState.CloseReceived)
        {
            // Says goodbye (or answers the server's close), so that the server sees a clean end.
            using var timeout = new CancellationTokenSource(_client.Options.RequestTimeout, _client.TimeProvider);
            try
            {
                await _sending.WaitAsync(timeout.Token).ConfigureAwait(false);
                try
                {
                    await _socket.CloseOutputAsync(WebSocketCloseStatus.NormalClosure, "The subscription stopped.", timeout.Token).ConfigureAwait(false);
                }
                finally
                {
                    _sending.Release();
                }
            }
            catch (Exception exception) when (exception is WebSocketException or IOException or OperationCanceledException or ObjectDisposedException or InvalidOperationException)
            {
                // Gone already: nothing to say goodbye to.
            }
        }
        await _closing.CancelAsync().ConfigureAwait(false);
        _socket.Abort();
        await _receiving.ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
        _socket.Dispose();
        _exchange.Dispose();
        _startDeadline.Dispose();
        _answerDeadline?.Dispose();
        _closing.Dispose();
    }
}

using System.Buffers;
using System.Net.WebSockets;
using System.Text;
using System.Text.Json;
using Laharsub.Server.Access;
using Laharsub.Server.Delivery;
using Laharsub.Server.Diagnostics;
using Laharsub.Server.Storage;
using Laharsub.Server.Wire;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Mvc;

namespace Laharsub.Server.Transport;

/// <summary>
/// One WebSocket: a run of the subscription's topics, started again whenever a frame changes them,
/// and a receive loop for the client's frames. Sends are serialized; nothing is queued per socket
/// (a run waits for its writes, and a slow reader reads later from retention).
/// </summary>
internal sealed partial class WebSocketSession(IWebSocketCaller caller, SubscriptionServices services, Pacing pacing, PresenceIdentity? member) : IDisposable
{
    /// <summary>Close codes that say what to do (docs/protocol.md).</summary>
    public const int CloseNotThisProtocol = 4000, CloseTokenExpired = 4001, CloseRedecide = 4002;

    /// <summary>
    /// Subscribe and unsubscribe frames a socket reads ahead of its run: a run stuck in a write to a client
    /// that does not read takes none, and the socket then stops reading its client (TCP's backpressure)
    /// until the run takes them or <c>MaxWriteWait</c> ends the socket.
    /// </summary>
    public const int MaxQueuedFrames = 16;

    /// <summary>How long a socket the server closed waits for the client's close frame (a browser answers at once).</summary>
    private static readonly TimeSpan CloseHandshakeWait = TimeSpan.FromSeconds(2);

    private static ReadOnlySpan<byte> MessageStart => "{\"type\":\"message\",\"message\":"u8;
    private static ReadOnlySpan<byte> NoticeStart => "{\"type\":\"notice\",\"notice\":"u8;

    private readonly SemaphoreSlim _sending = new(1, 1);
    /// <summary>A frame buffer grown past this by a large message is let go after its send, so that a socket keeps little.</summary>
    private const int KeptFrameBytes = 16 * 1024;

    private ArrayBufferWriter<byte> _frame = new(512);
    private readonly StreamCursors _cursors = new();
    private readonly Lock _changesLock = new();
    private readonly List<(string? Id, bool Subscribe, List<Subscription> Topics)> _changes = [];
    /// <summary>Completed when the run takes the queued frames; set while <see cref="MaxQueuedFrames"/> are queued.</summary>
    private TaskCompletionSource? _taken;
    private CancellationTokenSource? _run;
    private WebSocket _socket = null!;
    private StreamWriteDeadline? _deadline;

    /// <summary>Whether the current run gave its positions (else its input stands, less an unknown topic).</summary>
    private bool _positioned;
    private long? _unknownTopic;
    /// <summary>The frames the current run answers (its first <c>subscribed</c>, or a <c>problem</c> for a topic one named).</summary>
    private List<(string? Id, List<Subscription> Topics)> _answering = [];

    private SubscriptionServices Services => services;

    public void Dispose()
    {
        _sending.Dispose();
        _deadline?.Dispose();
    }

    /// <summary>Runs an accepted socket's session until it closes: the pipeline's socket, or one the fast path accepted itself.</summary>
    public static async Task RunAsync(WebSocket socket, IWebSocketCaller caller, SubscriptionServices services, Subscription[] initial, Conflation conflation,
        PresenceIdentity? member)
    {
        // The URL's conflation holds for the socket's whole life, whatever topics its frames add.
        using var session = new WebSocketSession(caller, services, TransportPacing.Stream(services, conflation), member);
        await session.RunAsync(socket, initial).ConfigureAwait(false);
    }

    private async Task RunAsync(WebSocket socket, Subscription[] initial)
    {
        _socket = socket;
        services.Metrics.PollStarted();
        _deadline = new StreamWriteDeadline(services.TimeProvider, services.Streams.MaxWriteWait, () =>
        {
            services.Metrics.PollEnded("too_slow", 0);
            _socket.Abort();
            caller.Abort();
            CancelRun();
        });
        var outcome = "closed";
        var lifetime = await caller.LifetimeAsync().ConfigureAwait(false);
        var left = lifetime is { } ends ? ends.EndsAt - services.TimeProvider.GetUtcNow() : Timeout.InfiniteTimeSpan;
        using var expired = new CancellationTokenSource(left > TimeSpan.Zero || left == Timeout.InfiniteTimeSpan ? left : TimeSpan.Zero, services.TimeProvider);
        using var receiving = CancellationTokenSource.CreateLinkedTokenSource(caller.Gone);
        var receiver = ReceiveAsync(receiving.Token);
        try
        {
            var subscriptions = initial;
            var stopping = services.Lifetime.ApplicationStopping;
            while (_socket.State == WebSocketState.Open && !stopping.IsCancellationRequested && !expired.IsCancellationRequested)
            {
                using var run = CancellationTokenSource.CreateLinkedTokenSource(caller.Gone, expired.Token);
                lock (_changesLock)
                {
                    _run = run;
                    if (_changes.Count > 0)
                    {
                        run.Cancel();
                    }
                }
                try
                {
                    _positioned = false;
                    _unknownTopic = null;
                    if (subscriptions.Length == 0)
                    {
                        _cursors.Reset([]);
                        _positioned = true;
                        await SendSubscribedAsync([]).ConfigureAwait(false);
                        await WaitAsync(run.Token, stopping).ConfigureAwait(false);
                    }
                    else
                    {
                        var wait = new SubscriptionWait(Timeout.InfiniteTimeSpan, services.TimeProvider, run.Token, stopping);
                        await services.Runner.RunAsync(subscriptions, services.Wire.JsonAnswerBytes, wait, new SocketSink(this), pacing, member).ConfigureAwait(false);
                    }
                }
                finally
                {
                    lock (_changesLock)
                    {
                        // Disposed at the end of this iteration, however it ends: a frame or the write deadline
                        // arriving later must not cancel it.
                        _run = null;
                    }
                }
                subscriptions = ApplyChanges(subscriptions);
            }
            if (expired.IsCancellationRequested && _socket.State == WebSocketState.Open && lifetime?.Redecide == true)
            {
                outcome = "redecide";
                await CloseAsync((WebSocketCloseStatus)CloseRedecide,
                    "Access is decided again every Laharsub:Auth:StreamDecisionLifetime: reconnect and resume from your cursors.").ConfigureAwait(false);
            }
            else if (expired.IsCancellationRequested && _socket.State == WebSocketState.Open)
            {
                outcome = "token_expired";
                await CloseAsync((WebSocketCloseStatus)CloseTokenExpired,
                    "The token expired: get a fresh token, reconnect and resume from your cursors.").ConfigureAwait(false);
            }
            else if (stopping.IsCancellationRequested && _socket.State == WebSocketState.Open)
            {
                outcome = "shutdown";
                await CloseAsync(WebSocketCloseStatus.EndpointUnavailable,
                    "The server is stopping: reconnect (another instance answers) and resume from your cursors.").ConfigureAwait(false);
            }
        }
        catch (Exception failure) when (failure is WebSocketException or OperationCanceledException)
        {
            // The client went away mid-write: nobody to tell.
        }
        finally
        {
            services.Metrics.PollEnded(outcome, 0);
            if (_socket.State == WebSocketState.CloseSent)
            {
                // The close handshake: the client answers with its close frame, which ends the receiver.
                // Cancelling a pending receive aborts the connection (RST), and the client may then never
                // read the close frame just sent.
                receiving.CancelAfter(CloseHandshakeWait);
            }
            else
            {
                await receiving.CancelAsync().ConfigureAwait(false);
            }
            await receiver.ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
            lock (_changesLock)
            {
                services.Metrics.FramesQueued(-_changes.Count);
                _changes.Clear();
            }
            _socket.Dispose();
        }
    }

    private static async Task WaitAsync(CancellationToken changed, CancellationToken stopping)
    {
        using var either = CancellationTokenSource.CreateLinkedTokenSource(changed, stopping);
        await Task.Delay(Timeout.InfiniteTimeSpan, either.Token).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
    }

    /// <summary>The next run's subscriptions: where this run left each topic, with the frames' changes applied.</summary>
    private Subscription[] ApplyChanges(Subscription[] ran)
    {
        if (!_positioned)
        {
            // The run stopped at its first read (a topic that does not exist): its input stands, without that topic.
            _cursors.Reset(ran);
            if (_unknownTopic is { } unknown)
            {
                _cursors.Remove(unknown);
            }
        }
        lock (_changesLock)
        {
            _answering = [];
            foreach (var (id, subscribe, topics) in _changes)
            {
                foreach (var topic in topics)
                {
                    if (!subscribe)
                    {
                        _cursors.Remove(topic.TopicId);
                    }
                    else if (topic.From is not null || !_cursors.Contains(topic.TopicId))
                    {
                        _cursors.Set(topic);
                    }
                }
                _answering.Add((id, topics));
            }
            services.Metrics.FramesQueued(-_changes.Count);
            _changes.Clear();
            _taken?.TrySetResult();
            _taken = null;
        }
        return _cursors.ToSubscriptions();
    }

    private async Task ReceiveAsync(CancellationToken cancellationToken)
    {
        var buffer = ArrayPool<byte>.Shared.Rent(4096);
        try
        {
            while (true)
            {
                if (QueueFull() is { } taken)
                {
                    // Not read meanwhile: the client's further frames wait in its own socket.
                    await taken.WaitAsync(cancellationToken).ConfigureAwait(false);
                }
                var length = 0;
                ValueWebSocketReceiveResult received;
                do
                {
                    if (length == buffer.Length)
                    {
                        if (buffer.Length >= services.Streams.MaxReceiveFrameBytes)
                        {
                            await RefuseAsync($"A frame may be at most {services.Streams.MaxReceiveFrameBytes} bytes (Laharsub:Streams:MaxReceiveFrameBytes).").ConfigureAwait(false);
                            return;
                        }
                        var larger = ArrayPool<byte>.Shared.Rent(Math.Min(buffer.Length * 2, services.Streams.MaxReceiveFrameBytes));
                        buffer.AsSpan(0, length).CopyTo(larger);
                        ArrayPool<byte>.Shared.Return(buffer);
                        buffer = larger;
                    }
                    received = await _socket.ReceiveAsync(buffer.AsMemory(length), cancellationToken).ConfigureAwait(false);
                    length += received.Count;
                }
                while (!received.EndOfMessage && received.MessageType != WebSocketMessageType.Close);
                switch (received.MessageType)
                {
                    case WebSocketMessageType.Close:
                        // The client's close: answered, as the close handshake asks, then the run ends.
                        CancelRun();
                        await CloseAsync(WebSocketCloseStatus.NormalClosure, "Closed by the client.").ConfigureAwait(false);
                        return;
                    case WebSocketMessageType.Binary:
                        await RefuseAsync("Frames are JSON text frames (docs/protocol.md, \"WebSocket\"); this one was binary.").ConfigureAwait(false);
                        return;
                }
                if (!await HandleAsync(buffer.AsMemory(0, length)).ConfigureAwait(false))
                {
                    return;
                }
            }
        }
        catch (Exception failure) when (failure is WebSocketException or OperationCanceledException)
        {
            CancelRun();
        }
        catch (Exception)
        {
            // Nothing may leave a socket that no longer reads its client's frames: it is dropped, and the
            // client reconnects and resumes from its cursors.
            CancelRun();
            _socket.Abort();
            throw;
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(buffer);
        }
    }

    /// <summary>Closes a socket whose client does not speak the protocol, saying why.</summary>
    private async Task RefuseAsync(string reason)
    {
        // Closed first, then the run ended: a run ended while the socket is still open starts again, and
        // would send the client a subscribed frame before the close.
        await CloseAsync((WebSocketCloseStatus)CloseNotThisProtocol, reason).ConfigureAwait(false);
        CancelRun();
    }

    /// <summary>What completes when the run takes the queued frames, while <see cref="MaxQueuedFrames"/> are queued; else null.</summary>
    private Task? QueueFull()
    {
        lock (_changesLock)
        {
            if (_changes.Count < MaxQueuedFrames)
            {
                return null;
            }
            _taken ??= new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            return _taken.Task;
        }
    }

    private void CancelRun()
    {
        lock (_changesLock)
        {
            _run?.Cancel();
        }
    }

    /// <summary>Handles one client frame; false when the socket is being closed.</summary>
    private async Task<bool> HandleAsync(ReadOnlyMemory<byte> frame)
    {
        WebSocketClientFrame parsed;
        try
        {
            parsed = WebSocketClientFrame.Parse(frame.Span);
        }
        catch (JsonException)
        {
            await RefuseAsync("A frame is one JSON object with a \"type\" (docs/protocol.md, \"WebSocket\"); this one is not JSON.").ConfigureAwait(false);
            return false;
        }
        ProblemDetails? problem;
        try
        {
            problem = parsed.InvalidText is { } invalid
                ? Invalid(invalid, $"\"{invalid}\" is not Unicode text. {UnicodeText.Rule} Nothing was changed.")
                : parsed.WrongType is { } field
                ? Invalid(field, field == "body"
                    ? "\"body\" is the message as a JSON string (its text, or its base64 with \"encoding\":\"base64\"), not a number, object, array or boolean; nothing was published."
                    : $"\"{field}\" is a string (a JSON text value), not an object, array or boolean; nothing was changed.")
                : parsed.Type switch
            {
                "subscribe" or "unsubscribe" => await ChangeAsync(parsed).ConfigureAwait(false),
                "publish" => await PublishAsync(parsed).ConfigureAwait(false),
                _ => Invalid("type", $"'{parsed.Type}' is not a frame type: send subscribe, unsubscribe or publish."),
            };
        }
        catch (LaharsubStoreUnavailableException unavailable)
        {
            // REST's 503 (StoreUnavailableHandler), with its Retry-After as retryAfter, as the frame's other refusals carry it.
            var answer = StoreUnavailableAnswer.From(unavailable);
            problem = Problems.Status(StatusCodes.Status503ServiceUnavailable, answer.Title, answer.Detail).ProblemDetails;
            problem.Extensions["store"] = answer.Store;
            problem.Extensions["retryAfter"] = (long)answer.RetryAfterSeconds;
        }
        if (problem is not null)
        {
            await SendProblemAsync(parsed.Id, problem).ConfigureAwait(false);
        }
        return true;
    }

    private async ValueTask<ProblemDetails?> ChangeAsync(WebSocketClientFrame frame)
    {
        var topics = new List<Subscription>();
        if (frame.Topics is null)
        {
            return Invalid("topics", "Name the topics, e.g. {\"type\":\"subscribe\",\"topics\":\"14:43,15\"}.");
        }
        if (SubscriptionQuery.ParseCursors(frame.Topics, "topics", services.Options, topics) is { } error)
        {
            return Invalid(error.Parameter, error.Message);
        }
        var subscribe = frame.Type == "subscribe";
        if (subscribe)
        {
            foreach (var topic in topics)
            {
                if (!await caller.AllowsAsync(LaharsubOperation.Subscribe, topic.TopicId).ConfigureAwait(false))
                {
                    return Forbidden(LaharsubOperation.Subscribe, topic.TopicId);
                }
            }
        }
        lock (_changesLock)
        {
            var pending = _changes.Sum(change => change.Subscribe ? change.Topics.Count : 0);
            if (subscribe && _cursors.Count + pending + topics.Count > services.Options.MaxSubscriptionsPerPoll)
            {
                return Invalid("topics", $"A socket follows at most {services.Options.MaxSubscriptionsPerPoll} topics (Laharsub:MaxSubscriptionsPerPoll); unsubscribe from some, or open another socket.");
            }
            _changes.Add((frame.Id, subscribe, topics));
            services.Metrics.FramesQueued(1);
            _run?.Cancel();
        }
        return null;
    }

    private static HttpValidationProblemDetails Invalid(string parameter, string message) => Problems.Invalid(parameter, message).ProblemDetails;

    private static ProblemDetails Forbidden(LaharsubOperation operation, long topicId) => new()
    {
        Status = StatusCodes.Status403Forbidden,
        Title = "Forbidden",
        // The session does not know who decided: a token's laharsub claim (Jwt mode) or the application's authorization (Host mode).
        Detail = $"This socket's caller may not {operation.Name()} on topic {topicId}: a token's laharsub claim (Jwt mode) or the application's authorization (Host mode) decides; nothing was changed (docs/access-control.md).",
        Extensions = { ["topicId"] = topicId, ["operation"] = operation.Name() },
    };

    private Task SendSubscribedAsync(Subscription[] positions) => SendFramesAsync(writer =>
    {
        var answering = _answering.Count == 0 ? [(null, [])] : _answering;
        foreach (var (id, _) in answering)
        {
            WriteJson(writer, json =>
            {
                json.WriteString("type"u8, "subscribed"u8);
                if (id is not null)
                {
                    json.WriteString("id"u8, id);
                }
                StreamPositions.Write(json, positions);
            });
        }
        _answering = [];
    });

    private Task SendProblemAsync(string? id, ProblemDetails problem) => SendFramesAsync(writer => WriteJson(writer, json =>
    {
        json.WriteString("type"u8, "problem"u8);
        if (id is not null)
        {
            json.WriteString("id"u8, id);
        }
        json.WritePropertyName("problem"u8);
        json.WriteStartObject();
        json.WriteNumber("status"u8, problem.Status ?? StatusCodes.Status400BadRequest);
        json.WriteString("title"u8, problem.Title);
        json.WriteString("detail"u8, problem.Detail);
        if (problem is HttpValidationProblemDetails { Errors.Count: > 0 } validation)
        {
            json.WriteStartObject("errors"u8);
            foreach (var (field, messages) in validation.Errors)
            {
                json.WriteStartArray(field);
                foreach (var message in messages)
                {
                    json.WriteStringValue(message);
                }
                json.WriteEndArray();
            }
            json.WriteEndObject();
        }
        foreach (var (name, value) in problem.Extensions)
        {
            switch (value)
            {
                case long number:
                    json.WriteNumber(name, number);
                    break;
                case RefusedTopic[] topics:
                    json.WritePropertyName(name);
                    JsonSerializer.Serialize(json, topics, LaharsubJsonContext.Default.RefusedTopicArray);
                    break;
                case Dictionary<string, string[]> errors:
                    json.WritePropertyName(name);
                    JsonSerializer.Serialize(json, errors, LaharsubJsonContext.Default.DictionaryStringStringArray);
                    break;
                case not null:
                    json.WriteString(name, value.ToString());
                    break;
            }
        }
        json.WriteEndObject();
    }));

    private static void WriteJson(ArrayBufferWriter<byte> writer, Action<Utf8JsonWriter> body)
    {
        using var json = new Utf8JsonWriter(writer);
        json.WriteStartObject();
        body(json);
        json.WriteEndObject();
    }

    /// <summary>
    /// Writes the deliveries of <paramref name="result"/> as frames, or else the JSON objects that
    /// <paramref name="build"/> writes, one frame each; one sender at a time, the sends bounded by
    /// <c>MaxWriteWait</c>: a client that does not read is closed rather than waited for.
    /// </summary>
    private async Task SendFramesAsync(Action<ArrayBufferWriter<byte>> build, PollResult? result = null)
    {
        await _sending.WaitAsync(caller.Gone).ConfigureAwait(false);
        try
        {
            if (result is not null)
            {
                foreach (var notice in result.Notices)
                {
                    _frame.ResetWrittenCount();
                    _frame.Write(NoticeStart);
                    _frame.Write(WireFormat.EncodeNotice(notice));
                    _frame.Write("}"u8);
                    await SendAsync().ConfigureAwait(false);
                }
                foreach (var message in result.Messages)
                {
                    var element = WireFormat.JsonElement(message);
                    _frame.ResetWrittenCount();
                    if (_frame.FreeCapacity < MessageStart.Length + element.Length + 1)
                    {
                        // Its exact size: grown by doubling, a large message's frame would hold up to twice its bytes.
                        _frame = new ArrayBufferWriter<byte>(MessageStart.Length + element.Length + 1);
                    }
                    _frame.Write(MessageStart);
                    _frame.Write(element);
                    _frame.Write("}"u8);
                    await SendAsync().ConfigureAwait(false);
                }
                return;
            }
            // Control frames: each JSON object the builder wrote is one frame.
            _frame.ResetWrittenCount();
            build(_frame);
            var written = _frame.WrittenMemory;
            foreach (var (start, end) in JsonObjects(written.Span))
            {
                await Bounded(_socket.SendAsync(written[start..end], WebSocketMessageType.Text, endOfMessage: true, CancellationToken.None)).ConfigureAwait(false);
            }
        }
        finally
        {
            if (_frame.Capacity > KeptFrameBytes)
            {
                _frame = new ArrayBufferWriter<byte>(512);
            }
            // Ended as too slow, the aborted socket failed the send: the deadline counted it and cancelled the run.
            _sending.Release();
        }
    }

    /// <summary>Where each of the JSON objects written one after another starts and ends.</summary>
    private static List<(int Start, int End)> JsonObjects(ReadOnlySpan<byte> written)
    {
        var objects = new List<(int, int)>();
        var reader = new Utf8JsonReader(written, new JsonReaderOptions { AllowMultipleValues = true });
        var start = 0;
        while (reader.Read())
        {
            reader.Skip();
            var end = (int)reader.BytesConsumed;
            objects.Add((start, end));
            start = end;
        }
        return objects;
    }

    // Without a token: the write deadline bounds the send, and an uncancellable send takes the socket's fast path.
    private ValueTask SendAsync() =>
        Bounded(_socket.SendAsync(_frame.WrittenMemory, WebSocketMessageType.Text, endOfMessage: true, CancellationToken.None));

    /// <summary>A send that did not complete at once is watched by the write deadline.</summary>
    private ValueTask Bounded(ValueTask send) => send.IsCompleted ? send : _deadline!.WatchAsync(send);

    private async Task CloseAsync(WebSocketCloseStatus status, string reason)
    {
        // A close reason is at most 123 bytes.
        var text = Encoding.UTF8.GetByteCount(reason) <= 123 ? reason : reason[..120];
        await _sending.WaitAsync(caller.Gone).ConfigureAwait(false);
        try
        {
            if (_socket.State is WebSocketState.Open or WebSocketState.CloseReceived)
            {
                using var bounded = new CancellationTokenSource(services.Streams.MaxWriteWait);
                await _socket.CloseOutputAsync(status, text, bounded.Token).ConfigureAwait(false);
            }
        }
        finally
        {
            _sending.Release();
        }
    }

    /// <summary>The runner's side: positions and deliveries become frames, and the cursors follow them.</summary>
    private readonly struct SocketSink(WebSocketSession session) : ISubscriptionSink
    {
        public bool WantsPositions => true;

        public async ValueTask<bool> PositionedAsync(Subscription[] positions)
        {
            session._cursors.Reset(positions);
            session._positioned = true;
            await session.SendSubscribedAsync(positions).ConfigureAwait(false);
            return true;
        }

        public async ValueTask<bool> DeliverAsync(PollResult result)
        {
            if (result.RefusedTopicId is { } unknown)
            {
                // Unknown, or full of members: either way the socket goes on without the topic.
                session._unknownTopic = unknown;
                // The frame that named the topic, if one did (else it came with the URL).
                var naming = session._answering.FindLast(frame => frame.Topics.Exists(topic => topic.TopicId == unknown)).Id;
                await session.SendProblemAsync(naming, Problems.Refused(result, session.Services.Options.Presence.MaxMembersPerTopic).ProblemDetails).ConfigureAwait(false);
                return false;
            }
            using var activity = LaharsubActivitySource.StartDelivery("websocket", result.Messages);
            foreach (var notice in result.Notices)
            {
                session._cursors.Apply(notice);
            }
            foreach (var message in result.Messages)
            {
                session._cursors.Apply(message);
            }
            await session.SendFramesAsync(static _ => { }, result).ConfigureAwait(false);
            session.Services.Metrics.StreamWrote(result.Messages);
            return true;
        }

        public ValueTask<bool> WaitEndedAsync(WaitEnd reason) => ValueTask.FromResult(false);

        public void Failed() => session.Services.Metrics.PollEnded("error", 0);
    }
}

using System.Buffers;
using System.IO.Pipelines;
using System.Net;
using System.Net.WebSockets;
using System.Security.Cryptography;
using HttpMethod = Microsoft.AspNetCore.Server.Kestrel.Core.Internal.Http.HttpMethod;
using HttpVersion = Microsoft.AspNetCore.Server.Kestrel.Core.Internal.Http.HttpVersion;
using System.Runtime.InteropServices;
using System.Text;
using System.Text.Json;
using Laharsub.Server.Delivery;
using Laharsub.Server.Diagnostics;
using Laharsub.Server.Limits;
using Laharsub.Server.Storage;
using Laharsub.Server.Transport;
using Laharsub.Server.Wire;
using Microsoft.AspNetCore.Connections;
using Microsoft.AspNetCore.Connections.Features;
using Microsoft.AspNetCore.Server.Kestrel.Core.Internal.Http;

namespace Laharsub.Server.FastPath;

/// <summary>
/// One connection on the fast path: reads requests with Kestrel's own HTTP/1.1 parser, answers those it
/// takes, and gives the connection to Kestrel at the first one it does not, with that request still unread.
/// </summary>
internal sealed class FastPathConnection : IHttpRequestLineHandler, IHttpHeadersHandler, IPollResponder
{
    private enum Kind { None, Poll, Publish }

    /// <summary>What the parsed head says: wait for more, ours to answer, the pipeline's (this request), or Kestrel's (the rest of the connection).</summary>
    private enum Parsed { Incomplete, Complete, Pipeline, Kestrel }

    private const long NoDeadline = long.MaxValue;

    /// <summary>Above any body size Kestrel or Laharsub accepts, and small enough to add to a head's length.</summary>
    private const long MaxContentLength = 1L << 40;

    private readonly FastPathConnectionHandler.State _state;
    private readonly ConnectionContext _connection;
    private readonly ConnectionDelegate _kestrel;
    private readonly PipeReader _input;
    private readonly PipeWriter _output;

    // The request being parsed (reset for each one).
    private Kind _kind;
    private bool _notOurs;

    /// <summary>Why the request (or the rest of the connection) is the pipeline's: the first reason found, as the metric's tag.</summary>
    private string? _pipelineReason;

    /// <summary>The request is one only Kestrel's connection handling answers (another protocol, framing it alone knows, an upgrade).</summary>
    private bool _kestrelOnly;

    /// <summary>
    /// The request carries a header that keeps it off the fast path and that its client sends on every request
    /// (<see cref="IsSentEveryTime"/>): the connection is Kestrel's from this request on, since handing each
    /// request over on its own costs more than the pipeline alone.
    /// </summary>
    private bool _pipelineForGood;
    private bool _ranKestrel;
    private KestrelRequestRun? _kestrelRun;
    private string? _query;

    /// <summary>The poll asks for an event stream (<c>Accept: text/event-stream</c>), resuming from <see cref="_lastEventId"/> if set.</summary>
    private bool _eventStream;
    private string? _lastEventId;
    private int _accepts;
    private long _topicId;
    private int _hosts;
    private int _headers;
    private long _contentLength = -1;
    private string? _contentType;

    /// <summary>A publish's <c>Idempotency-Key</c> (unquoted), recorded with it in the store's step.</summary>
    private string? _idempotencyKey;

    /// <summary>A WebSocket upgrade of the poll's URL (<c>Upgrade: websocket</c>), and what its handshake sends.</summary>
    private bool _webSocket;
    private bool _connectionUpgrade;
    private bool _webSocketVersion13;
    private string? _webSocketKey;
    private string? _webSocketProtocols;
    private int _webSocketHeaders;
    private bool _origin;

    /// <summary>When the connection is aborted unless the request (or the next one) has arrived: Kestrel's keep-alive and header timeouts.</summary>
    private long _deadline = NoDeadline;
    private int _requests;
    private volatile bool _requestStarted;
    private volatile bool _partialRequestTimedOut;
    private Served _pollOutcome;

    /// <summary>The taken poll's status code and start, for hosting's request metrics (<see cref="HostingTelemetry"/>).</summary>
    private int _pollStatus;
    private long _pollStarted;

    /// <summary>Set once the connection is waiting between requests, so that a shutdown can end that wait.</summary>
    private volatile bool _idle;
    private volatile bool _closeRequested;

    [ThreadStatic]
    private static List<Subscription>? t_subscriptions;

    public FastPathConnection(FastPathConnectionHandler.State state, ConnectionContext connection, ConnectionDelegate kestrel)
    {
        _state = state;
        _connection = connection;
        _kestrel = kestrel;
        _input = connection.Transport.Input;
        _output = connection.Transport.Output;
    }

    public async Task RunAsync()
    {
        // Kestrel's own timeouts do not watch a connection before it reaches Kestrel's HTTP handling: the
        // fast path keeps deadlines of its own, checked on Kestrel's once-a-second heartbeat.
        _connection.Features.Get<IConnectionHeartbeatFeature>()?.OnHeartbeat(static self => ((FastPathConnection)self).OnHeartbeat(), this);
        using var closing = _connection.Features.Get<IConnectionLifetimeNotificationFeature>()?.ConnectionClosedRequested
            .UnsafeRegister(static self => ((FastPathConnection)self!).OnCloseRequested(), this);
        try
        {
            while (true)
            {
                ReadResult read;
                SetDeadline(_state.Limits.KeepAliveTimeout);
                _requestStarted = false;
                _idle = true;
                if (_closeRequested)
                {
                    return;
                }
                try
                {
                    read = await _input.ReadAsync().ConfigureAwait(false);
                }
                finally
                {
                    _idle = false;
                }
                if (read.IsCanceled)
                {
                    if (_closeRequested)
                    {
                        // A shutdown ended the wait for the next request.
                        return;
                    }
                    // A partial request's deadline that passed as the rest arrived cancelled this read instead.
                    _partialRequestTimedOut = false;
                    _input.AdvanceTo(read.Buffer.Start);
                    continue;
                }
                if (await ServeAsync(read).ConfigureAwait(false) == Served.Close)
                {
                    return;
                }
            }
        }
        catch (Exception failure) when (failure is ConnectionResetException or ConnectionAbortedException or IOException or OperationCanceledException)
        {
            // The client went away, or the connection was aborted (a deadline passed): nothing to answer.
        }
        catch (Exception failure)
        {
            // As Kestrel does with an application's exception: logged, and the connection closed.
            FastPathConnectionHandler.Failed(_state.Logger, failure, _kind.ToString(), _connection.ConnectionId);
        }
        finally
        {
            _deadline = NoDeadline;
        }
    }

    private enum Served { Next, Close }

    /// <summary>The length of "request" that gives Kestrel the rest of the connection.</summary>
    private const long WholeConnection = long.MaxValue;

    /// <summary>Serves the request at the start of <paramref name="read"/>, waiting for more of it if it is not whole yet.</summary>
    private async ValueTask<Served> ServeAsync(ReadResult read)
    {
        while (true)
        {
            var buffer = read.Buffer;
            if (buffer.IsEmpty && read.IsCompleted)
            {
                _input.AdvanceTo(buffer.End);
                return Served.Close;
            }
            var parsed = Parse(buffer, out var headEnd);
            if (parsed == Parsed.Complete && _kind == Kind.Publish && buffer.Slice(headEnd).Length < _contentLength)
            {
                parsed = Parsed.Incomplete;
            }
            if (parsed == Parsed.Kestrel)
            {
                return await PipelineAsync(read, WholeConnection).ConfigureAwait(false);
            }
            if (parsed == Parsed.Incomplete)
            {
                if (read.IsCompleted || buffer.Length > _state.MaxHeadBytes + Math.Max(0, _contentLength))
                {
                    // A request cut short, or larger than Kestrel's limits: Kestrel answers it as it would.
                    _pipelineReason = "kestrel_limits";
                    return await PipelineAsync(read, WholeConnection).ConfigureAwait(false);
                }
                if (!_requestStarted)
                {
                    // The request has begun: the rest of it has a few seconds to arrive here (it usually
                    // follows at once) before Kestrel takes the connection over.
                    _requestStarted = true;
                    SetDeadline(_state.PartialRequestWait);
                }
                _input.AdvanceTo(buffer.Start, buffer.End);
                read = await _input.ReadAsync().ConfigureAwait(false);
                if (read.IsCanceled)
                {
                    if (!_partialRequestTimedOut)
                    {
                        return Served.Close;
                    }
                    // The rest is slow to come: Kestrel takes the connection, with its own timeouts for the
                    // rest of this request (408 and the body data rate) from now on.
                    _pipelineReason = "slow_request";
                    return await PipelineAsync(read, WholeConnection).ConfigureAwait(false);
                }
                continue;
            }
            _deadline = NoDeadline;
            _requests++;
            var requestLength = buffer.Slice(buffer.Start, headEnd).Length + Math.Max(0, _contentLength);
            if (parsed == Parsed.Pipeline)
            {
                return await PipelineAsync(read, requestLength).ConfigureAwait(false);
            }
            var answered = _kind != Kind.Poll ? await PublishAsync(buffer, headEnd).ConfigureAwait(false)
                : _webSocket ? await WebSocketAsync(headEnd).ConfigureAwait(false)
                : _eventStream ? await StreamAsync(headEnd).ConfigureAwait(false)
                : await PollAsync(headEnd).ConfigureAwait(false);
            return answered ?? await PipelineAsync(read, _webSocket ? WholeConnection : requestLength).ConfigureAwait(false);
        }
    }

    /// <summary>
    /// Kestrel's HTTP/1.1 handling answers the request at the start of <paramref name="pending"/> (read, not
    /// yet advanced past) through the application's pipeline; the connection comes back after it unless
    /// Kestrel chose to close it, or <paramref name="requestLength"/> gave it the whole connection.
    /// </summary>
    private async ValueTask<Served> PipelineAsync(ReadResult pending, long requestLength)
    {
        _deadline = NoDeadline;
        var run = new KestrelRequestRun(_connection, pending, requestLength, first: !_ranKestrel);
        _ranKestrel = true;
        // Counted as it is handed over, so that the count is there by the time its client has the answer.
        _state.Metrics.FastPath(requestLength == WholeConnection ? "handed_over" : "pipeline", _pipelineReason ?? "other");
        Volatile.Write(ref _kestrelRun, run);
        try
        {
            await _kestrel(run).ConfigureAwait(false);
        }
        finally
        {
            Volatile.Write(ref _kestrelRun, null);
        }
        return requestLength != WholeConnection && run.KeepsAlive && !_connection.ConnectionClosed.IsCancellationRequested ? Served.Next : Served.Close;
    }

    /// <summary>Parses the request head at the start of <paramref name="buffer"/>.</summary>
    private Parsed Parse(in ReadOnlySequence<byte> buffer, out SequencePosition headEnd)
    {
        headEnd = buffer.Start;
        _kind = Kind.None;
        _notOurs = false;
        _pipelineReason = null;
        _kestrelOnly = false;
        _pipelineForGood = false;
        _query = null;
        _eventStream = false;
        _lastEventId = null;
        _accepts = 0;
        _hosts = 0;
        _headers = 0;
        _contentLength = -1;
        _contentType = null;
        _idempotencyKey = null;
        _webSocket = false;
        _connectionUpgrade = false;
        _webSocketVersion13 = false;
        _webSocketKey = null;
        _webSocketProtocols = null;
        _webSocketHeaders = 0;
        _origin = false;
        // Only text that starts like a request line is parsed here; anything else (TLS, HTTP/2's preface)
        // goes to Kestrel without the parser, which would throw on much of it.
        var first = buffer.FirstSpan;
        if (first.Length > 0 && !char.IsAsciiLetterUpper((char)first[0]))
        {
            _pipelineReason = "not_http1";
            return Parsed.Kestrel;
        }
        var reader = new SequenceReader<byte>(buffer);
        long lineLength;
        try
        {
            if (!_state.Parser.ParseRequestLine(this, ref reader))
            {
                return Parsed.Incomplete;
            }
            lineLength = reader.Consumed;
            if (_kestrelOnly)
            {
                return Parsed.Kestrel;
            }
            if (!_state.Parser.ParseHeaders(this, ref reader))
            {
                return Parsed.Incomplete;
            }
        }
        catch (Exception)
        {
            // Kestrel's parser refuses it: Kestrel answers it with the 400 it always does, and closes.
            _pipelineReason = "malformed";
            return Parsed.Kestrel;
        }
        headEnd = reader.Position;
        // At or near Kestrel's size limits, Kestrel decides (414, 431) by its own counting.
        if (_kestrelOnly || _hosts != 1 || lineLength >= _state.Limits.MaxRequestLineSize - 2
            || reader.Consumed - lineLength >= _state.Limits.MaxRequestHeadersTotalSize - 2)
        {
            _pipelineReason ??= _hosts != 1 ? "host_header" : "kestrel_limits";
            return Parsed.Kestrel;
        }
        if (_notOurs || !Takes())
        {
            // An upgrade it does not accept is Kestrel's, with the connection it may switch to another protocol.
            return _webSocket || _pipelineForGood ? Parsed.Kestrel : Parsed.Pipeline;
        }
        return Parsed.Complete;
    }

    /// <summary>The checks that need the whole head, and the server's state.</summary>
    private bool Takes()
    {
        _pipelineReason = _state.Lifetime.ApplicationStopping.IsCancellationRequested ? "stopping"
            : LaharsubActivitySource.IsListenedTo || _state.Hosting.Traced ? "traced"
            // A request from a page gets the CORS headers the pipeline would add, where the policy allows any
            // origin (the same headers whatever the origin); where it names origins, the pipeline decides.
            : _origin && (_webSocket ? _state.WebSocketOriginHeaders : _state.OriginHeaders) is null ? "origin"
            : _webSocket ? (TakesWebSocket() ? null : "websocket")
            : _kind switch
            {
                Kind.Poll => _contentLength <= 0 && (_eventStream || _lastEventId is null) && !_connectionUpgrade ? null : "poll_form",
                Kind.Publish => _state.RateLimited ? "rate_limit"
                    : _contentLength > 0 && _contentLength <= _state.StoreOptions.MaxMessageBytes
                        && MessageContentType.Validate(_contentType ??= MessageContentType.Default) is null ? null : "publish_form",
                _ => "route",
            };
        return _pipelineReason is null;
    }

    private bool TakesWebSocket() =>
        _state.TakesWebSockets && _kind == Kind.Poll && _contentLength <= 0 && _lastEventId is null
        && _connectionUpgrade && _webSocketVersion13 && _webSocketHeaders == 0 && IsWebSocketKey(_webSocketKey);

    /// <summary>Marks the request as one only Kestrel's connection handling answers, for <paramref name="reason"/> unless an earlier one was found.</summary>
    private void KestrelOnly(string reason)
    {
        _pipelineReason ??= reason;
        _kestrelOnly = true;
    }

    /// <summary>Marks the request as the pipeline's, for <paramref name="reason"/> unless an earlier reason was found.</summary>
    private void NotOurs(string reason)
    {
        _pipelineReason ??= reason;
        _notOurs = true;
    }

    /// <summary>Answers the poll, or returns null, having consumed nothing, for the pipeline to answer it.</summary>
    private async ValueTask<Served?> PollAsync(SequencePosition headEnd)
    {
        if (StartPoll(headEnd, out var permit) is not { } running)
        {
            return null;
        }
        using (permit)
        {
            try
            {
                await running.ConfigureAwait(false);
            }
            catch (LaharsubStoreUnavailableException unavailable)
            {
                _pollStatus = 503;
                FastPathConnectionHandler.StoreUnavailable(_state.Logger, unavailable.StoreName, unavailable.Message);
                var answer = StoreUnavailableAnswer.From(unavailable);
                _state.Responses.WritePollProblem(_output, Cors, 503, answer.Title, answer.Detail, TraceId(),
                    json => json.WriteString("store", answer.Store), answer.RetryAfterSeconds);
                await _output.FlushAsync().ConfigureAwait(false);
            }
            finally
            {
                _state.Hosting.Ended("GET", _state.PollRoute, _pollStatus, _pollStarted);
            }
            return _pollOutcome;
        }
    }

    /// <summary>
    /// Runs a Server-Sent Events stream until it ends, or returns null, having consumed nothing, for the pipeline
    /// to answer it. The stream's connection closes after it, as it would on the pipeline (its client reconnects).
    /// </summary>
    private async ValueTask<Served?> StreamAsync(SequencePosition headEnd)
    {
        if (StartStream(headEnd, out var permit, out var stream) is not { } running)
        {
            return null;
        }
        var started = _state.Hosting.Started("GET");
        using (permit)
        using (var deadline = stream.Deadline)
        {
            try
            {
                await running.ConfigureAwait(false);
                await stream.Target.EndAsync().ConfigureAwait(false);
            }
            catch (LaharsubStoreUnavailableException unavailable)
            {
                FastPathConnectionHandler.StoreUnavailable(_state.Logger, unavailable.StoreName, unavailable.Message);
                var answer = StoreUnavailableAnswer.From(unavailable);
                if (stream.Target.TryRefuse(answer.Title, answer.Detail, answer.Store, answer.RetryAfterSeconds))
                {
                    await _output.FlushAsync().ConfigureAwait(false);
                    return Served.Next;
                }
            }
            finally
            {
                _state.Hosting.Ended("GET", _state.PollRoute, stream.Target.Status, started);
            }
        }
        return stream.Target.Started ? Served.Close : Served.Next;
    }

    /// <summary>
    /// Accepts a WebSocket and runs its session (the pipeline's own, over the connection's pipes) until it
    /// closes, or returns null, having consumed nothing, for Kestrel to take the connection: a query the
    /// pipeline refuses with a problem, or a client at its waiting-poll cap.
    /// </summary>
    private async ValueTask<Served?> WebSocketAsync(SequencePosition headEnd)
    {
        Subscription[] initial;
        Conflation conflation;
        PresenceIdentity? member;
        IDisposable? permit;
        var subscriptions = t_subscriptions ??= [];
        try
        {
            var query = SubscriptionQuery.Parse(_query, _state.Delivery, subscriptions);
            // As the pipeline does: a query that names no topic opens a socket whose frames subscribe later.
            if ((query.Error is not null && !query.NamesNoTopic) || !TryAcquireWaitingPoll(out permit))
            {
                _pipelineReason ??= "query_invalid";
                return null;
            }
            initial = query.Error is null ? [.. subscriptions] : [];
            conflation = query.Conflation;
            member = query.Presence;
        }
        finally
        {
            subscriptions.Clear();
        }
        _input.AdvanceTo(headEnd);
        _state.Metrics.FastPath("websocket");
        var started = _state.Hosting.Started("GET");
        using (permit)
        {
            try
            {
                var subProtocol = OffersSubProtocol(_webSocketProtocols) ? WebSocketSession.SubProtocol : null;
                _state.Responses.WriteWebSocketAccept(_output, WebSocketAcceptKey(_webSocketKey!), subProtocol,
                    _origin ? _state.WebSocketOriginHeaders : []);
                var socket = WebSocket.CreateFromStream(new ConnectionStream(_input, _output), new WebSocketCreationOptions
                {
                    IsServer = true,
                    SubProtocol = subProtocol,
                    KeepAliveInterval = _state.Subscriptions.Streams.KeepAliveInterval,
                    KeepAliveTimeout = _state.WebSocketKeepAliveTimeout,
                });
                await WebSocketSession.RunAsync(socket, new OpenCaller(_connection), _state.Subscriptions, initial, conflation, member).ConfigureAwait(false);
            }
            finally
            {
                _state.Hosting.Ended("GET", _state.PollRoute, 101, started);
            }
        }
        return Served.Close;
    }

    /// <summary>Whether the client's <c>Sec-WebSocket-Protocol</c> list names Laharsub's subprotocol.</summary>
    private static bool OffersSubProtocol(string? offered)
    {
        foreach (var range in offered.AsSpan().Split(','))
        {
            if (offered.AsSpan()[range].Trim(" \t").SequenceEqual(WebSocketSession.SubProtocol))
            {
                return true;
            }
        }
        return false;
    }

    /// <summary><c>Sec-WebSocket-Accept</c>: the key and RFC 6455's GUID, hashed with SHA-1, in base64.</summary>
    private static byte[] WebSocketAcceptKey(string key)
    {
        Span<byte> text = stackalloc byte[24 + 36];
        Encoding.ASCII.GetBytes(key, text);
        "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"u8.CopyTo(text[24..]);
        Span<byte> hash = stackalloc byte[20];
        // RFC 6455 fixes SHA-1 for the handshake, which proves only that the server read the key.
#pragma warning disable CA5350
        SHA1.HashData(text, hash);
#pragma warning restore CA5350
        return Encoding.ASCII.GetBytes(Convert.ToBase64String(hash));
    }

    /// <summary>A socket's caller on the fast path, which takes sockets only in Open access mode and without a rate limit.</summary>
    private sealed class OpenCaller(ConnectionContext connection) : IWebSocketCaller
    {
        public CancellationToken Gone => connection.ConnectionClosed;

        public ValueTask<bool> AllowsAsync(Access.LaharsubOperation operation, long topicId) => ValueTask.FromResult(true);

        public bool TryAcquire(out int retryAfterSeconds)
        {
            retryAfterSeconds = 0;
            return true;
        }

        public ValueTask<DateTimeOffset?> TokenExpiryAsync() => ValueTask.FromResult<DateTimeOffset?>(null);

        public void Abort() => connection.Abort(new ConnectionAbortedException("The socket's client did not read within Streams:MaxWriteWait."));
    }

    /// <summary>As <see cref="StartPoll"/>, for an event stream: its positions from the query, or from <c>Last-Event-ID</c>.</summary>
    private Task? StartStream(SequencePosition headEnd, out IDisposable? permit, out (FastEventStream Target, StreamWriteDeadline Deadline) stream)
    {
        permit = null;
        stream = default;
        var subscriptions = t_subscriptions ??= [];
        try
        {
            var query = SubscriptionQuery.Parse(_query, _state.Delivery, subscriptions);
            if (query.Error is not null
                || (_lastEventId is { Length: > 0 } lastEventId && EventStreamTransport.ResumeFrom(lastEventId, subscriptions, _state.Delivery) is not null)
                || !TryAcquireWaitingPoll(out permit))
            {
                _pipelineReason ??= "query_invalid";
                return null;
            }
            _input.AdvanceTo(headEnd);
            _state.Metrics.FastPath("stream");
            var target = new FastEventStream(_output, _state.Responses, _connection, TraceId(), _origin ? _state.OriginHeaders! : []);
            stream = (target, EventStreamTransport.WriteDeadline(target, _state.Subscriptions));
            var wait = new SubscriptionWait(_state.Subscriptions.Streams.HeartbeatInterval, _state.Clock, _connection.ConnectionClosed, _state.Lifetime.ApplicationStopping);
            _state.Metrics.PollStarted();
            return _state.Runner.RunAsync(CollectionsMarshal.AsSpan(subscriptions), _state.Wire.JsonAnswerBytes, wait,
                new EventStreamSink(target, _state.Subscriptions, new StreamCursors(), stream.Deadline, CancellationToken.None),
                TransportPacing.Stream(_state.Subscriptions, query.Conflation), query.Presence);
        }
        finally
        {
            subscriptions.Clear();
        }
    }

    /// <summary>A permit of the client's waiting-poll cap (none needed when the cap is off); false when the client is at its cap.</summary>
    private bool TryAcquireWaitingPoll(out IDisposable? permit)
    {
        permit = null;
        if (_state.WaitingPolls.Enabled && ClientAddress.KeyOf((_connection.RemoteEndPoint as IPEndPoint)?.Address) is { } client)
        {
            permit = _state.WaitingPolls.TryAcquire(client);
            if (permit is null)
            {
                _pipelineReason = "waiting_poll_cap";
            }
            return permit is not null;
        }
        return true;
    }

    /// <summary>
    /// Parses the query into this thread's reused list and starts the runner on it, which copies the
    /// subscriptions into its pooled state before it returns: a poll allocates no list or array of its own,
    /// as on the pipeline. Null, having consumed nothing, when the pipeline must answer.
    /// </summary>
    private Task? StartPoll(SequencePosition headEnd, out IDisposable? permit)
    {
        permit = null;
        var subscriptions = t_subscriptions ??= [];
        try
        {
            var query = SubscriptionQuery.Parse(_query, _state.Delivery, subscriptions);
            if (query.Error is not null || !TryAcquireWaitingPoll(out permit))
            {
                _pipelineReason ??= "query_invalid";
                return null;
            }
            // Taken: the request is consumed now, so that a held poll does not keep its read buffer.
            _input.AdvanceTo(headEnd);
            _state.Metrics.FastPath("poll");
            _pollOutcome = Served.Next;
            // As the pipeline's response starts out: an unhandled failure is a 500, a client gone keeps the 200.
            _pollStatus = 500;
            _pollStarted = _state.Hosting.Started("GET");
            var answer = new LongPollSink<FastPathConnection>(this, _state.Metrics, LaharsubActivitySource.StartPoll(subscriptions.Count));
            var wait = new SubscriptionWait(query.Timeout, _state.Clock, _connection.ConnectionClosed, _state.Lifetime.ApplicationStopping);
            _state.Metrics.PollStarted();
            return _state.Runner.RunAsync(CollectionsMarshal.AsSpan(subscriptions), _state.Wire.JsonAnswerBytes, wait, answer,
                TransportPacing.LongPoll(query), query.Presence);
        }
        finally
        {
            // Lets go of the epoch strings.
            subscriptions.Clear();
        }
    }

    /// <summary>Publishes and answers, or returns null, having changed and consumed nothing, for the pipeline to answer it.</summary>
    private async ValueTask<Served?> PublishAsync(ReadOnlySequence<byte> buffer, SequencePosition headEnd)
    {
        var bodySequence = buffer.Slice(headEnd, _contentLength);
        byte[]? rented = null;
        ReadOnlyMemory<byte> body;
        if (bodySequence.IsSingleSegment)
        {
            body = bodySequence.First;
        }
        else
        {
            rented = ArrayPool<byte>.Shared.Rent((int)_contentLength);
            bodySequence.CopyTo(rented);
            body = rented.AsMemory(0, (int)_contentLength);
        }
        PublishResult? result;
        var started = System.Diagnostics.Stopwatch.GetTimestamp();
        var activity = LaharsubActivitySource.StartPublish(_topicId);
        try
        {
            result = _idempotencyKey is null
                ? await _state.Store.PublishAsync(_topicId, body, _contentType!, null, _connection.ConnectionClosed).ConfigureAwait(false)
                : await PublishKeyedAsync(body).ConfigureAwait(false);
        }
        catch (LaharsubStoreUnavailableException)
        {
            result = null;
        }
        finally
        {
            if (rented is not null)
            {
                ArrayPool<byte>.Shared.Return(rented);
            }
        }
        using (activity)
        {
            if (result is not { Status: PublishStatus.Published } published)
            {
                // Refused without a change (no topic, another epoch, storage full, store unreachable): the
                // pipeline serves the same request again and answers with its problem details.
                _pipelineReason = "store_refused";
                return null;
            }
            if (_idempotencyKey is null)
            {
                // A keyed publish was counted by StorePublish, unless it was a replay.
                _state.Metrics.Published();
            }
            _state.Metrics.FastPath("publish");
            LaharsubActivitySource.Published(activity, published.MessageId, published.Epoch!);
            result = published;
        }
        _input.AdvanceTo(bodySequence.End);
        var stored = result.Value;
        var json = JsonSerializer.SerializeToUtf8Bytes(new PublishedMessage(_topicId, stored.MessageId, stored.Epoch!), LaharsubJsonContext.Default.PublishedMessage);
        _state.Responses.WritePublished(_output, Cors, json, stored.Epoch!);
        await _output.FlushAsync().ConfigureAwait(false);
        _state.Hosting.Ended("POST", _state.PublishRoute, 201, started, counted: false);
        return Served.Next;
    }

    /// <summary>
    /// A keyed publish: the key recorded with the message in the store's one step, as on the pipeline (the store's
    /// all-or-none publish to one target); a replay of the same request answers the recorded message.
    /// </summary>
    private async ValueTask<PublishResult> PublishKeyedAsync(ReadOnlyMemory<byte> body)
    {
        var published = await StorePublish.PublishAsync(_state.Store, _state.Metrics, [new PublishTarget(_topicId, null)], body, _contentType!,
            _idempotencyKey, _connection.ConnectionClosed).ConfigureAwait(false);
        return published.Status == PublishStatus.Published ? published.Topics[0] : new PublishResult(published.Status);
    }

    /// <summary>The CORS headers of the request's answer: the policy's for a request with <c>Origin</c> (which <see cref="Takes"/> admitted), none without.</summary>
    private ReadOnlySpan<byte> Cors => _origin ? _state.OriginHeaders : default;

    /// <summary>As the pipeline's problem details give it: the connection's id and the request's number on it.</summary>
    private string TraceId() => $"{_connection.ConnectionId}:{_requests:X8}";

    private void SetDeadline(TimeSpan after) =>
        Volatile.Write(ref _deadline, after == Timeout.InfiniteTimeSpan ? NoDeadline : Environment.TickCount64 + (long)after.TotalMilliseconds);

    private void OnHeartbeat()
    {
        Volatile.Read(ref _kestrelRun)?.Tick();
        if (Environment.TickCount64 <= Volatile.Read(ref _deadline))
        {
            return;
        }
        _deadline = NoDeadline;
        if (_requestStarted)
        {
            _partialRequestTimedOut = true;
            _input.CancelPendingRead();
            return;
        }
        // As Kestrel ends a keep-alive connection that sends nothing: closed without an answer.
        _connection.Abort(new ConnectionAbortedException("No request arrived within Kestrel's keep-alive timeout."));
    }

    private void OnCloseRequested()
    {
        _closeRequested = true;
        if (_idle)
        {
            _input.CancelPendingRead();
        }
    }

    void IHttpRequestLineHandler.OnStartLine(HttpVersionAndMethod versionAndMethod, TargetOffsetPathLength targetPath, Span<byte> startLine)
    {
        if (versionAndMethod.Version != HttpVersion.Http11 || versionAndMethod.Method == HttpMethod.Connect)
        {
            KestrelOnly("not_http1");
            return;
        }
        if (targetPath.IsEncoded)
        {
            NotOurs("route");
            return;
        }
        var path = startLine.Slice(targetPath.Offset, targetPath.Length);
        var rest = startLine[(targetPath.Offset + targetPath.Length)..];
        var end = rest.IndexOf((byte)' ');
        if (end >= 0)
        {
            rest = rest[..end];
        }
        if (versionAndMethod.Method == HttpMethod.Get && path.SequenceEqual(_state.PollPath) && (rest.IsEmpty || rest[0] == (byte)'?')
            && Ascii.IsValid(rest))
        {
            _kind = Kind.Poll;
            _query = rest.IsEmpty ? null : Encoding.ASCII.GetString(rest);
            return;
        }
        if (versionAndMethod.Method == HttpMethod.Post && rest.IsEmpty && path.StartsWith(_state.TopicsPath)
            && Problems.TryParseId(Encoding.ASCII.GetString(path[_state.TopicsPath.Length..]), out _topicId))
        {
            _kind = Kind.Publish;
            return;
        }
        NotOurs("route");
    }

    void IHttpHeadersHandler.OnHeader(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value)
    {
        if (_kestrelOnly)
        {
            return;
        }
        // Kestrel refuses a header value that is not ASCII, or holds a NUL, with a 400 and closes; the body's
        // framing other than a plain Content-Length, and upgrades, are its own.
        if (++_headers > _state.Limits.MaxRequestHeaderCount || !Ascii.IsValid(value) || value.Contains((byte)0)
            || Ascii.EqualsIgnoreCase(name, "Transfer-Encoding"u8))
        {
            KestrelOnly("kestrel_framing");
            return;
        }
        if (Ascii.EqualsIgnoreCase(name, "Upgrade"u8))
        {
            // A WebSocket of the poll's URL may be the fast path's (Takes decides with the whole head); any
            // other upgrade is Kestrel's.
            if (_webSocket || _kind != Kind.Poll || !Ascii.EqualsIgnoreCase(value, "websocket"u8))
            {
                KestrelOnly("upgrade");
            }
            _webSocket = true;
            return;
        }
        if (Ascii.EqualsIgnoreCase(name, "Host"u8))
        {
            _hosts++;
        }
        else if (Ascii.EqualsIgnoreCase(name, "Content-Length"u8))
        {
            // A length no request here could have (beyond any body limit) is Kestrel's to refuse.
            if (_contentLength >= 0 || !System.Buffers.Text.Utf8Parser.TryParse(value, out long length, out var used) || used != value.Length
                || length is < 0 or > MaxContentLength)
            {
                KestrelOnly("kestrel_framing");
                return;
            }
            _contentLength = length;
        }
        else if (Ascii.EqualsIgnoreCase(name, "Content-Type"u8))
        {
            if (_contentType is not null)
            {
                NotOurs("publish_form");
            }
            _contentType = ContentType(value);
        }
        else if (Ascii.EqualsIgnoreCase(name, "Accept"u8))
        {
            // The poll's JSON answer, or an event stream, as the pipeline negotiates them; any other Accept
            // (multipart, a list, several headers) is the pipeline's to negotiate.
            _eventStream = Ascii.EqualsIgnoreCase(value, "text/event-stream"u8);
            if (_kind == Kind.Poll
                && (++_accepts > 1 || !(_eventStream || Ascii.EqualsIgnoreCase(value, "application/json"u8) || value.SequenceEqual("*/*"u8))))
            {
                NotOurs("accept");
            }
        }
        else if (Ascii.EqualsIgnoreCase(name, "Last-Event-ID"u8))
        {
            // A stream resumes from it; a plain poll with it is the pipeline's.
            if (_lastEventId is not null)
            {
                NotOurs("poll_form");
            }
            _lastEventId = Encoding.ASCII.GetString(value);
        }
        else if (Ascii.EqualsIgnoreCase(name, "Connection"u8))
        {
            if (!ConnectionTokens(value))
            {
                NotOurs("connection_header");
            }
        }
        else if (Ascii.EqualsIgnoreCase(name, "Sec-WebSocket-Key"u8))
        {
            _webSocketHeaders += _webSocketKey is null ? 0 : 1;
            _webSocketKey = Encoding.ASCII.GetString(value);
        }
        else if (Ascii.EqualsIgnoreCase(name, "Sec-WebSocket-Version"u8))
        {
            _webSocketHeaders += _webSocketVersion13 ? 1 : 0;
            _webSocketVersion13 = value.SequenceEqual("13"u8);
        }
        else if (Ascii.EqualsIgnoreCase(name, "Sec-WebSocket-Protocol"u8))
        {
            _webSocketHeaders += _webSocketProtocols is null ? 0 : 1;
            _webSocketProtocols = Encoding.ASCII.GetString(value);
        }
        else if (Ascii.EqualsIgnoreCase(name, "Origin"u8))
        {
            // A page's script sends it on every request; a WebSocket whose 101 the fast path knows is taken (Takes).
            if (_origin)
            {
                NotOurs("origin");
            }
            _origin = true;
            _pipelineForGood = true;
        }
        else if (Ascii.EqualsIgnoreCase(name, "Idempotency-Key"u8))
        {
            // A publish's key is the fast path's; a malformed or repeated one is the pipeline's to refuse (400).
            if (_kind != Kind.Publish || _idempotencyKey is not null
                || !IdempotencyKeyHeader.TryParse(Encoding.ASCII.GetString(value), out _idempotencyKey, out _))
            {
                NotOurs("idempotency_key");
                _pipelineForGood = true;
            }
        }
        else if (Ascii.EqualsIgnoreCase(name, "X-Forwarded-For"u8))
        {
            // Whose address counts against the waiting-poll cap is the pipeline's to say once a proxy is trusted.
            if (_state.ForwardedForDecides)
            {
                NotOurs("forwarded_for");
            }
        }
        else if (PipelineOnlyReason(name) is { } reason)
        {
            NotOurs(reason);
            _pipelineForGood |= IsSentEveryTime(name);
        }
    }

    /// <summary>
    /// Pipeline-only headers that a client, once it sends one, sends with every request of its kind: a token, and
    /// trace context (a traced client).
    /// </summary>
    private static bool IsSentEveryTime(ReadOnlySpan<byte> name) =>
        Ascii.EqualsIgnoreCase(name, "Authorization"u8)
        || Ascii.EqualsIgnoreCase(name, "traceparent"u8) || Ascii.EqualsIgnoreCase(name, "tracestate"u8)
        || Ascii.EqualsIgnoreCase(name, "Request-Id"u8);

    /// <summary>
    /// Headers whose handling lives in the pipeline: CORS (<c>Origin</c>, but for a WebSocket's), access, tracing, conditions, idempotency keys, 100-continue. The other
    /// forwarding headers change nothing a poll or a publish answers (no URL is in them).
    /// </summary>
    private static string? PipelineOnlyReason(ReadOnlySpan<byte> name) =>
        Ascii.EqualsIgnoreCase(name, "Authorization"u8) ? "authorization"
        : Ascii.EqualsIgnoreCase(name, "Expect"u8) ? "expect"
        : Ascii.EqualsIgnoreCase(name, "If-Match"u8) ? "if_match"
        : Ascii.EqualsIgnoreCase(name, "traceparent"u8) || Ascii.EqualsIgnoreCase(name, "tracestate"u8) || Ascii.EqualsIgnoreCase(name, "Request-Id"u8) ? "trace_context"
        : Ascii.EqualsIgnoreCase(name, "Access-Control-Request-Method"u8) ? "origin"
        : null;

    /// <summary>
    /// Whether <c>Connection</c> holds only <c>keep-alive</c> and <c>Upgrade</c> (a WebSocket's handshake sends
    /// the second); notes the second.
    /// </summary>
    private bool ConnectionTokens(ReadOnlySpan<byte> value)
    {
        foreach (var range in value.Split((byte)','))
        {
            var token = value[range].Trim(" \t"u8);
            if (Ascii.EqualsIgnoreCase(token, "upgrade"u8))
            {
                _connectionUpgrade = true;
            }
            else if (!Ascii.EqualsIgnoreCase(token, "keep-alive"u8))
            {
                return false;
            }
        }
        return true;
    }

    /// <summary>A handshake key as RFC 6455 has it, and as ASP.NET Core's WebSockets check it: 16 bytes in base64.</summary>
    private static bool IsWebSocketKey(string? key)
    {
        Span<byte> bytes = stackalloc byte[16];
        return key is { Length: 24 } && Convert.TryFromBase64String(key, bytes, out var written) && written == 16;
    }

    /// <summary>The content type as a string, the last one's string again when it is the same.</summary>
    private string ContentType(ReadOnlySpan<byte> value)
    {
        var last = _state.LastContentType;
        if (last is not null && last.Length == value.Length && Ascii.Equals(value, last))
        {
            return last;
        }
        var text = Encoding.ASCII.GetString(value);
        _state.LastContentType = text;
        return text;
    }

    // HTTP/2 and HTTP/3 only (HPACK and QPACK): never called for HTTP/1.1.
    void IHttpHeadersHandler.OnStaticIndexedHeader(int index) => _kestrelOnly = true;

    void IHttpHeadersHandler.OnStaticIndexedHeader(int index, ReadOnlySpan<byte> value) => _kestrelOnly = true;

    void IHttpHeadersHandler.OnHeadersComplete(bool endStream)
    {
    }

    ValueTask IPollResponder.WriteMessagesAsync(PollResult result)
    {
        _pollStatus = 200;
        var notices = PollResponseWriter.EncodeNotices(result.Notices);
        _state.Responses.WritePollOk(_output, Cors, PollResponseWriter.JsonLength(result, notices));
        PollResponseWriter.WriteJson(_output, result, notices);
        return FlushAsync();
    }

    ValueTask IPollResponder.WriteRefusedAsync(PollResult refused, System.Diagnostics.Activity? activity)
    {
        _pollStatus = refused.UnknownTopicId is null ? 409 : 404;
        _state.Responses.WriteRefused(_output, Cors, refused, _state.Delivery.Presence.MaxMembersPerTopic, activity?.Id ?? TraceId());
        return FlushAsync();
    }

    ValueTask IPollResponder.WriteNoContentAsync(bool closeConnection)
    {
        _pollStatus = 204;
        _state.Responses.WritePollNoContent(_output, Cors, close: closeConnection);
        _pollOutcome = closeConnection ? Served.Close : Served.Next;
        return FlushAsync();
    }

    void IPollResponder.ClientGone()
    {
        _pollStatus = 200;
        _pollOutcome = Served.Close;
    }

    /// <summary>Flushes the answer; a flush that completes at once, as a small answer's does, costs no task.</summary>
    private ValueTask FlushAsync()
    {
        var flush = _output.FlushAsync();
        if (flush.IsCompletedSuccessfully)
        {
            flush.GetAwaiter().GetResult();
            return default;
        }
        return new ValueTask(flush.AsTask());
    }
}

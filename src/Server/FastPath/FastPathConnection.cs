using System.Buffers;
using System.IO.Pipelines;
using System.Net;
using System.Security.Claims;
using Laharsub.Server.Access;
using Laharsub.Server.Delivery;
using Laharsub.Server.Limits;
using Microsoft.AspNetCore.Connections;
using Microsoft.AspNetCore.Connections.Features;

namespace Laharsub.Server.FastPath;

/// <summary>
/// One connection on the fast path: reads requests with Kestrel's own HTTP/1.1 parser, answers those it
/// takes, and gives the connection to Kestrel at the first one it does not, with that request still unread.
/// </summary>
internal sealed partial class FastPathConnection
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

    /// <summary>Jwt mode: the request's bearer token (from <c>Authorization</c>, or a stream's <c>access_token</c>), and the last one seen on the connection.</summary>
    private string? _token;
    private string? _lastToken;

    /// <summary>Jwt mode: what the caller may do, and its token's caller and identity (null for an anonymous caller); null in Open mode.</summary>
    private LaharsubPermissions? _permissions;
    private ClaimsPrincipal? _caller;
    private LaharsubIdentity? _identity;

    /// <summary>The request's one <c>X-Forwarded-For</c> where a trusted proxy's may name the client, until <see cref="Takes"/> reads it.</summary>
    private string? _forwardedFor;

    /// <summary>The client that <see cref="_forwardedFor"/> named, by the pipeline's rule (the peer itself if it is not a trusted proxy).</summary>
    private IPAddress? _forwardedClient;

    /// <summary>The publish drew a permit of its client's rate limit: if it is handed over, the pipeline does not draw another.</summary>
    private bool _permitDrawn;

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
        if (_permitDrawn && requestLength != WholeConnection)
        {
            run.Features.Set(ClientRateLimit.PermitDrawn.Instance);
        }
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

    /// <summary>The CORS headers of the request's answer: the policy's for a request with <c>Origin</c> (which <see cref="Takes"/> admitted), none without.</summary>
    private ReadOnlySpan<byte> Cors => _origin ? _state.OriginHeaders : default;

    /// <summary>As the pipeline's problem details give it: the connection's id and the request's number on it.</summary>
    private string TraceId() => $"{_connection.ConnectionId}:{_requests:X8}";
}

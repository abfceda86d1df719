using System.Buffers;
using System.Text;
using Laharsub.Server.Storage;
using Laharsub.Server.Transport;
using Laharsub.Server.Wire;
using Microsoft.AspNetCore.Server.Kestrel.Core.Internal.Http;
using HttpMethod = Microsoft.AspNetCore.Server.Kestrel.Core.Internal.Http.HttpMethod;
using HttpVersion = Microsoft.AspNetCore.Server.Kestrel.Core.Internal.Http.HttpVersion;

namespace Laharsub.Server.FastPath;

/// <summary>The parser's callbacks (Kestrel's <c>HttpParser</c> calls them for the request line and each header), and whether the fast path takes the request.</summary>
internal sealed partial class FastPathConnection : IHttpRequestLineHandler, IHttpHeadersHandler
{
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
        _token = null;
        _permissions = null;
        _caller = null;
        _identity = null;
        _forwardedFor = null;
        _forwardedClient = null;
        _permitDrawn = false;
        _topicIdText = null;
        ResetTracing();
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
            // Hosting's diagnostic events carry an HttpContext, which only the pipeline has (a connection opened while
            // they had a subscriber is Kestrel's whole, see FastPathConnectionHandler; this is one opened before).
            : _state.Hosting.DiagnosticsListened ? "diagnostic_listener"
            // A request from a page gets the CORS headers the pipeline would add, where the policy allows any
            // origin (the same headers whatever the origin); where it names origins, the pipeline decides.
            : _origin && (_webSocket ? _state.WebSocketOriginHeaders : _state.OriginHeaders) is null ? OriginDecidedByPipeline()
            : _state.Tokens is { } tokens && IdentifyCaller(tokens) is { } unknown ? unknown
            : _webSocket ? (TakesWebSocket() ? null : "websocket")
            : _kind switch
            {
                Kind.Poll => _contentLength <= 0 && (_eventStream || _lastEventId is null) && !_connectionUpgrade ? null : "poll_form",
                Kind.Publish => _contentLength > 0 && _contentLength <= _state.StoreOptions.MaxMessageBytes
                    && MessageContentType.Validate(_contentType ??= MessageContentType.Default) is null
                    // A merge patch's answer names the version it made (a state topic's ETag): the pipeline's to write.
                    ? (MergePatch.IsMergePatch(_contentType) ? "merge_patch" : null)
                    : "publish_form",
                _ => "route",
            };
        if (_pipelineReason is null && _forwardedFor is { } forwardedFor)
        {
            _forwardedClient = _state.Forwarded!.ClientOf(Peer, forwardedFor);
        }
        // Not kept: a held poll keeps nothing of its request it does not need.
        _forwardedFor = null;
        return _pipelineReason is null;
    }

    /// <summary>
    /// Where the CORS policy names origins, every request of a page (which sends <c>Origin</c> every time) is the
    /// pipeline's: the connection is Kestrel's from this request on. A request that is the pipeline's for a reason of
    /// its own (a topic's creation, a token not validated yet) gives it that request only.
    /// </summary>
    private string OriginDecidedByPipeline()
    {
        _pipelineForGood = true;
        return "origin";
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
            && Problems.TryParseId(_topicIdText = Encoding.ASCII.GetString(path[_state.TopicsPath.Length..]), out _topicId))
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
            KeepForTrace(ref _hostHeader, ref _lastHostHeader, value);
        }
        else if (Ascii.EqualsIgnoreCase(name, "User-Agent"u8))
        {
            KeepForTrace(ref _userAgent, ref _lastUserAgent, value);
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
                _pipelineForGood = true;
            }
            _origin = true;
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
        else if (Ascii.EqualsIgnoreCase(name, "Authorization"u8) && _state.Tokens is not null)
        {
            // Jwt mode: a bearer token is the fast path's when the pipeline has validated it (IdentifyCaller); other
            // credentials, or a second header, are the pipeline's.
            if (_token is not null || !TryReadBearerToken(value))
            {
                NotOurs("authorization");
                _pipelineForGood = true;
            }
        }
        else if (Ascii.EqualsIgnoreCase(name, "X-Forwarded-For"u8))
        {
            // From a trusted proxy it names the client the caps and the rate limit count (Takes). A second header,
            // whose values the pipeline joins with the first's, is the pipeline's.
            if (_state.Forwarded is not null)
            {
                if (_forwardedFor is not null)
                {
                    NotOurs("forwarded_for");
                }
                _forwardedFor = Encoding.ASCII.GetString(value);
            }
        }
        else if (TraceHeaders.Find(_state.Hosting.TraceFields, name) is >= 0 and var field)
        {
            KeepTraceHeader(field, value);
        }
        else if (PipelineOnlyReason(name) is { } reason)
        {
            NotOurs(reason);
            _pipelineForGood |= IsSentEveryTime(name);
        }
    }

    /// <summary>Pipeline-only headers that a client, once it sends one, sends with every request of its kind: a token.</summary>
    private static bool IsSentEveryTime(ReadOnlySpan<byte> name) => Ascii.EqualsIgnoreCase(name, "Authorization"u8);

    /// <summary>
    /// Headers whose handling lives in the pipeline: CORS preflights, access, conditions, 100-continue. The other
    /// forwarding headers change nothing a poll or a publish answers (no URL is in them); trace context is the
    /// fast path's (<see cref="KeepTraceHeader"/>).
    /// </summary>
    private static string? PipelineOnlyReason(ReadOnlySpan<byte> name) =>
        Ascii.EqualsIgnoreCase(name, "Authorization"u8) ? "authorization"
        : Ascii.EqualsIgnoreCase(name, "Expect"u8) ? "expect"
        : Ascii.EqualsIgnoreCase(name, "If-Match"u8) ? "if_match"
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
}

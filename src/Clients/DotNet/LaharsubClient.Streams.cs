using System.Globalization;
using System.Net;
using System.Net.Http.Headers;
using System.Net.WebSockets;
using System.Security.Cryptography;
using System.Text;
using Laharsub.Client.Streams;

namespace Laharsub.Client;

public sealed partial class LaharsubClient
{
    /// <summary>The WebSocket subprotocol of docs/protocol.md.</summary>
    internal const string WebSocketSubProtocol = "laharsub.v1";

    private static readonly MediaTypeWithQualityHeaderValue AcceptEventStream = new("text/event-stream");

    /// <summary>
    /// Opens a Server-Sent Events stream of the subscriptions in <paramref name="query"/>, with the
    /// poll's rules for failures (<see cref="AttemptAsync"/>, <see cref="ErrorAnswerAsync"/>); an answer
    /// that is not an event stream is a refusal.
    /// </summary>
    internal Task<PollOutcome> OpenEventStreamAsync(string query, int failures, CancellationToken changed, CancellationToken stopped, CancellationToken cancellationToken)
    {
        var address = CurrentAddress;
        var uri = StreamUri(address, query);
        return AttemptAsync(address, failures, async () =>
        {
            using var expiry = new CancellationTokenSource(_options.RequestTimeout, TimeProvider);
            using var open = CancellationTokenSource.CreateLinkedTokenSource(changed, stopped, cancellationToken, _disposing.Token, expiry.Token);
            var exchange = await SendAuthorizedAsync(() =>
            {
                var request = new HttpRequestMessage(HttpMethod.Get, uri);
                // Only the stream: a server that cannot stream answers 406 rather than a poll.
                request.Headers.Accept.Add(AcceptEventStream);
                return request;
            }, open.Token).ConfigureAwait(false);
            var owned = true;
            try
            {
                var response = exchange.Response;
                if (response.StatusCode == HttpStatusCode.OK
                    && string.Equals(response.Content.Headers.ContentType?.MediaType, "text/event-stream", StringComparison.OrdinalIgnoreCase))
                {
                    var stream = await response.Content.ReadAsStreamAsync(open.Token).ConfigureAwait(false);
                    owned = false;
                    return PollOutcome.Connected(new EventStreamSession(exchange, stream, address, TimeProvider,
                        startTimeout: _options.RequestTimeout, idleTimeout: PollTimeout + _options.RequestTimeout, stopped));
                }
                if ((int)response.StatusCode < 400)
                {
                    return PollOutcome.Refused(NotAStream(response, "an event stream (Accept: text/event-stream)"));
                }
                return await ErrorAnswerAsync(response, address, failures, refusable: true, open.Token).ConfigureAwait(false);
            }
            finally
            {
                if (owned)
                {
                    exchange.Dispose();
                }
            }
        }, changed, stopped, cancellationToken);
    }

    /// <summary>
    /// Opens a WebSocket (subprotocol <c>laharsub.v1</c>) on the subscriptions in <paramref name="query"/>.
    /// The upgrade is an ordinary request of this client's <see cref="HttpClient"/> (HTTP/1.1), so it
    /// carries the access token, is refreshed after a <c>401</c>, and its refusals read as problem details
    /// with the poll's rules (<see cref="ErrorAnswerAsync"/>); any answer but <c>101</c> with this protocol
    /// is a refusal.
    /// </summary>
    internal Task<PollOutcome> OpenWebSocketAsync(string query, int failures, LaharsubSubscription owner,
        CancellationToken changed, CancellationToken stopped, CancellationToken cancellationToken)
    {
        var address = CurrentAddress;
        var uri = StreamUri(address, query);
        return AttemptAsync(address, failures, async () =>
        {
            using var expiry = new CancellationTokenSource(_options.RequestTimeout, TimeProvider);
            using var open = CancellationTokenSource.CreateLinkedTokenSource(changed, stopped, cancellationToken, _disposing.Token, expiry.Token);
            var exchange = await SendAuthorizedAsync(() =>
            {
                // RFC 6455, 4.1: an HTTP/1.1 GET with the upgrade headers and a fresh random key.
                var request = new HttpRequestMessage(HttpMethod.Get, uri)
                {
                    Version = HttpVersion.Version11,
                    VersionPolicy = HttpVersionPolicy.RequestVersionExact,
                };
                request.Headers.TryAddWithoutValidation("Connection", "Upgrade");
                request.Headers.TryAddWithoutValidation("Upgrade", "websocket");
                request.Headers.TryAddWithoutValidation("Sec-WebSocket-Version", "13");
                request.Headers.TryAddWithoutValidation("Sec-WebSocket-Key", Convert.ToBase64String(RandomNumberGenerator.GetBytes(16)));
                request.Headers.TryAddWithoutValidation("Sec-WebSocket-Protocol", WebSocketSubProtocol);
                return request;
            }, open.Token).ConfigureAwait(false);
            var owned = true;
            try
            {
                var response = exchange.Response;
                if (response.StatusCode == HttpStatusCode.SwitchingProtocols)
                {
                    if (HandshakeError(exchange) is { } error)
                    {
                        return PollOutcome.Refused(new LaharsubException(response.StatusCode, "Not a Laharsub WebSocket", error));
                    }
                    var stream = await response.Content.ReadAsStreamAsync(open.Token).ConfigureAwait(false);
                    var socket = WebSocket.CreateFromStream(stream, new WebSocketCreationOptions
                    {
                        IsServer = false,
                        SubProtocol = WebSocketSubProtocol,
                        // Pings of our own, answered or the socket is given up: a server that vanished
                        // without closing the connection would otherwise leave the socket waiting forever.
                        KeepAliveInterval = PollTimeout,
                        KeepAliveTimeout = _options.RequestTimeout,
                    });
                    owned = false;
                    return PollOutcome.Connected(new WebSocketSession(socket, exchange, address, this, owner, stopped));
                }
                if ((int)response.StatusCode < 400)
                {
                    return PollOutcome.Refused(NotAStream(response, "a WebSocket upgrade"));
                }
                return await ErrorAnswerAsync(response, address, failures, refusable: true, open.Token).ConfigureAwait(false);
            }
            finally
            {
                if (owned)
                {
                    exchange.Dispose();
                }
            }
        }, changed, stopped, cancellationToken);
    }

    /// <summary>
    /// The stream's URL. <c>timeout=0</c> is ignored by streams, and makes a server (or a proxy) that
    /// takes the request for a long poll answer it at once instead of holding it: a quick refusal.
    /// </summary>
    private Uri StreamUri(int address, string query) =>
        new(_addresses[address], string.Create(CultureInfo.InvariantCulture, $"subscriptions?{query}&timeout=0"));

    private static LaharsubException NotAStream(HttpResponseMessage response, string what) =>
        new(response.StatusCode, "Not a stream",
            $"The server answered {what} with {(int)response.StatusCode} {response.StatusCode} ({response.Content.Headers.ContentType?.MediaType ?? "no content type"}) instead of the stream: "
            + "it, or a proxy before it, does not serve this transport. Use LaharsubTransport.Auto, or another transport.");

    /// <summary>Why a <c>101</c> answer is not the WebSocket asked for (RFC 6455, 4.1), or <see langword="null"/>.</summary>
    private static string? HandshakeError(Exchange exchange)
    {
        var response = exchange.Response;
        if (!response.Headers.TryGetValues("Sec-WebSocket-Accept", out var accepts)
            || !exchange.Request.Headers.TryGetValues("Sec-WebSocket-Key", out var keys))
        {
            return "The 101 answer has no Sec-WebSocket-Accept.";
        }
        // RFC 6455 mandates SHA-1 here: it proves the server read the key, it protects nothing.
#pragma warning disable CA5350
        var expected = Convert.ToBase64String(SHA1.HashData(Encoding.ASCII.GetBytes(keys.First() + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11")));
#pragma warning restore CA5350
        if (accepts.FirstOrDefault() != expected)
        {
            return "The 101 answer's Sec-WebSocket-Accept does not match the key sent.";
        }
        if (!response.Headers.TryGetValues("Sec-WebSocket-Protocol", out var protocols) || protocols.FirstOrDefault() != WebSocketSubProtocol)
        {
            return $"The server did not select the subprotocol {WebSocketSubProtocol}: it is not a Laharsub subscription URL.";
        }
        return null;
    }
}

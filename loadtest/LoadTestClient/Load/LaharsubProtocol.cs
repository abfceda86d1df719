using System.Buffers;
using System.Buffers.Text;
using System.Globalization;
using System.Text;
using System.Text.Json;
using Laharsub.LoadTestClient.Measurement;

namespace Laharsub.LoadTestClient.Load;

/// <summary>
/// Laharsub's wire protocol (docs/protocol.md): REST publish, one multiplexed long poll with cursors in
/// the query, and the same subscription as a Server-Sent Events stream or a WebSocket (subprotocol
/// <c>laharsub.v1</c>, on which the client also publishes).
/// </summary>
internal sealed class LaharsubProtocol(LoadPlan plan) : TargetProtocol
{
    public const string WebSocketSubProtocol = "laharsub.v1";

    public override Uri PollAddressAt(Uri apiAddress) => new(apiAddress, "subscriptions");

    public override bool ConsecutiveMessageIds => true;

    public override string? PublishAccept => null;

    public override string PublishPath(long topicId) => $"topics/{topicId}";

    public override bool IsPublishAccepted(int status) => status == 201;

    public override long ReadPublishedId(ReadOnlySpan<byte> answer)
    {
        var reader = new Utf8JsonReader(answer);
        while (reader.Read())
        {
            if (reader.TokenType == JsonTokenType.PropertyName && reader.ValueTextEquals("messageId"u8) && reader.Read())
            {
                return reader.GetInt64();
            }
        }
        throw new JsonException("The publish answer has no messageId.");
    }

    public override IPollWire CreatePollWire(IReadOnlyList<DeliveryVerifier> topics, int client = 0, string? token = null) =>
        new Wire(topics, plan.PollTimeoutSeconds, plan.Format, QuerySuffix(client, streamToken: null), Headers(token, plan.Origin));

    // A browser's EventSource and WebSocket cannot set Authorization: their token travels in the URL (docs/protocol.md).
    public override IEventStreamWire CreateEventStreamWire(IReadOnlyList<DeliveryVerifier> topics, int client = 0, string? token = null) =>
        new EventStreamWire(topics, QuerySuffix(client, token), Headers(token: null, plan.Origin));

    public override IWebSocketWire CreateWebSocketWire(IReadOnlyList<DeliveryVerifier> topics, int client = 0, string? token = null) =>
        new SocketWire(topics, QuerySuffix(client, token), plan.Origin, plan.KeyedPublishes);

    /// <summary>
    /// What every subscription of <paramref name="client"/> adds after its topics: <c>&amp;conflate=MS</c> when the run
    /// asks for conflation, <c>&amp;client=lt{client}</c> when it measures presence in Open mode (each client a member;
    /// in Jwt mode the token's subject is the member, and <c>client</c> is refused), and a stream's <c>access_token</c>.
    /// </summary>
    private byte[] QuerySuffix(int client, string? streamToken) => Encoding.ASCII.GetBytes(
        (plan.ConflateMilliseconds == 0 ? "" : "&conflate=" + plan.ConflateMilliseconds.ToString(CultureInfo.InvariantCulture))
        + (plan.Presence && plan.Jwt is null ? "&client=lt" + client.ToString(CultureInfo.InvariantCulture) : "")
        + (streamToken is null ? "" : "&access_token=" + streamToken));

    /// <summary>The header lines a client's raw requests add: its bearer token and the page's <c>Origin</c>, each when the run has one.</summary>
    internal static byte[] Headers(string? token, string? origin) => Encoding.ASCII.GetBytes(
        (token is null ? "" : $"Authorization: Bearer {token}\r\n") + (origin is null ? "" : $"Origin: {origin}\r\n"));

    /// <summary>
    /// <c>topics=14:3~9f3c0a1b2c3d4e5f,15:9</c>: every subscribed topic with its cursor and, once the
    /// server has named it, its epoch. A stream (re)opened with it resumes exactly where the client is.
    /// </summary>
    internal static bool TryWriteTopics(Span<byte> destination, ref int written, IReadOnlyList<DeliveryVerifier> topics)
    {
        if (!Append(destination, ref written, "topics="u8))
        {
            return false;
        }
        for (var i = 0; i < topics.Count; i++)
        {
            if ((i > 0 && !Append(destination, ref written, ","u8))
                || !Append(destination, ref written, topics[i].TopicId)
                || !Append(destination, ref written, ":"u8)
                || !Append(destination, ref written, topics[i].Next)
                || (!topics[i].Epoch.IsEmpty && (!Append(destination, ref written, "~"u8) || !Append(destination, ref written, topics[i].Epoch))))
            {
                return false;
            }
        }
        return true;
    }

    private static bool Append(Span<byte> destination, ref int written, ReadOnlySpan<byte> text)
    {
        if (!text.TryCopyTo(destination[written..]))
        {
            return false;
        }
        written += text.Length;
        return true;
    }

    private static bool Append(Span<byte> destination, ref int written, long number)
    {
        if (!Utf8Formatter.TryFormat(number, destination[written..], out var count))
        {
            return false;
        }
        written += count;
        return true;
    }

    private static FormatException Unreadable(string what) => new($"Unreadable stream: {what}.");

    /// <summary>
    /// The subscription as Server-Sent Events (<c>Accept: text/event-stream</c>): an <c>open</c> event,
    /// then each message as an event whose data is the message object of the JSON format, each notice
    /// an <c>event: notice</c>. The events' ids (the stream's cursors) are not needed: the client keeps
    /// the same cursors itself and reopens the stream with them in the query.
    /// </summary>
    private sealed class EventStreamWire(IReadOnlyList<DeliveryVerifier> topics, byte[] querySuffix, byte[] headers) : IEventStreamWire
    {
        private byte[] _scratch = new byte[64];

        public bool OpenAtHead => false;

        public bool TryWriteQuery(Span<byte> destination, out int written)
        {
            written = 0;
            return TryWriteTopics(destination, ref written, topics) && Append(destination, ref written, querySuffix);
        }

        public bool TryWriteHeaders(Span<byte> destination, out int written)
        {
            written = 0;
            return Append(destination, ref written, headers);
        }

        public StreamSignal Read(in ServerSentEvent sse, IPollResponseSink sink)
        {
            if (!sse.HasData)
            {
                return StreamSignal.None;
            }
            if (sse.Type.IsEmpty || sse.Type.SequenceEqual("message"u8))
            {
                PollResponseReader.ReadMessageObject(sse.Data, sink, ref _scratch);
                return StreamSignal.None;
            }
            if (sse.Type.SequenceEqual("notice"u8))
            {
                PollResponseReader.ReadNoticeObject(sse.Data, sink);
                return StreamSignal.None;
            }
            return sse.Type.SequenceEqual("subscribed"u8) ? StreamSignal.Opened
                : sse.Type.SequenceEqual("reconnect"u8) ? StreamSignal.Reconnect
                : StreamSignal.None;
        }
    }

    /// <summary>
    /// The subscription as a WebSocket (subprotocol <c>laharsub.v1</c>): <c>subscribed</c>, then a
    /// <c>message</c> or <c>notice</c> frame each; <c>publish</c> frames are answered <c>published</c>
    /// or <c>problem</c>, in the order they were sent.
    /// </summary>
    private sealed class SocketWire(IReadOnlyList<DeliveryVerifier> topics, byte[] querySuffix, string? origin, bool keyedPublishes) : IWebSocketWire
    {
        /// <summary>A UUID's length in its <c>D</c> form.</summary>
        private const int KeyLength = 36;

        private byte[] _scratch = new byte[64];

        public string SubProtocol => WebSocketSubProtocol;

        public bool OpenAtConnect => false;

        public void SetRequestHeaders(System.Net.WebSockets.ClientWebSocketOptions options)
        {
            if (origin is not null)
            {
                options.SetRequestHeader("Origin", origin);
            }
        }

        public Uri Address(Uri pollAddress)
        {
            var query = new byte[64 + topics.Count * 64];
            var written = 0;
            while (!TryWriteTopics(query, ref written, topics) || !Append(query, ref written, querySuffix))
            {
                query = new byte[query.Length * 2];
                written = 0;
            }
            return new UriBuilder(pollAddress) { Scheme = "ws", Query = Encoding.ASCII.GetString(query, 0, written) }.Uri;
        }

        public StreamSignal Read(ReadOnlySpan<byte> frame, bool binary, IStreamSink sink)
        {
            if (binary)
            {
                throw Unreadable("a binary frame; laharsub.v1 frames are JSON text");
            }
            var reader = new Utf8JsonReader(frame, new JsonReaderOptions { MaxDepth = 16 });
            if (!reader.Read() || reader.TokenType != JsonTokenType.StartObject)
            {
                throw Unreadable("a frame is not a JSON object");
            }
            var type = FrameType.Other;
            ReadOnlySpan<byte> id = default;
            long messageId = 0;
            var status = 0;
            while (reader.Read() && reader.TokenType == JsonTokenType.PropertyName)
            {
                if (reader.ValueTextEquals("type"u8))
                {
                    reader.Read();
                    type = reader.ValueTextEquals("message"u8) ? FrameType.Message
                        : reader.ValueTextEquals("published"u8) ? FrameType.Published
                        : reader.ValueTextEquals("subscribed"u8) ? FrameType.Subscribed
                        : reader.ValueTextEquals("problem"u8) ? FrameType.Problem
                        : FrameType.Other;
                }
                else if (reader.ValueTextEquals("message"u8))
                {
                    if (!reader.Read() || reader.TokenType != JsonTokenType.StartObject)
                    {
                        throw Unreadable("a frame's message is not a JSON object");
                    }
                    PollResponseReader.ReadMessage(ref reader, sink, ref _scratch);
                }
                else if (reader.ValueTextEquals("notice"u8))
                {
                    if (!reader.Read() || reader.TokenType != JsonTokenType.StartObject)
                    {
                        throw Unreadable("a frame's notice is not a JSON object");
                    }
                    PollResponseReader.ReadNotice(ref reader, sink);
                }
                else if (reader.ValueTextEquals("id"u8))
                {
                    reader.Read();
                    id = reader.TokenType == JsonTokenType.String && !reader.ValueIsEscaped ? reader.ValueSpan : throw Unreadable("a frame's id is not a plain string");
                }
                else if (reader.ValueTextEquals("messageId"u8))
                {
                    reader.Read();
                    messageId = reader.GetInt64();
                }
                else if (reader.ValueTextEquals("problem"u8))
                {
                    reader.Read();
                    status = ReadStatus(ref reader);
                }
                else
                {
                    reader.Read();
                    reader.Skip();
                }
            }
            switch (type)
            {
                case FrameType.Subscribed:
                    return StreamSignal.Opened;
                case FrameType.Published:
                    sink.OnPublished(id, messageId > 0 ? messageId : throw Unreadable("a published frame without its messageId"));
                    break;
                case FrameType.Problem:
                    sink.OnRefused(id, status);
                    break;
            }
            return StreamSignal.None;
        }

        public bool TryWritePublish(Span<byte> destination, long sequence, long topicId, ReadOnlySpan<byte> body, out int written)
        {
            // The body as base64 with its content type, so that the message stored is the one a REST
            // publish of the same bytes (application/octet-stream) stores.
            written = 0;
            var encoded = Base64.GetMaxEncodedToUtf8Length(body.Length);
            if (!Append(destination, ref written, "{\"type\":\"publish\",\"id\":\""u8) || !Append(destination, ref written, sequence)
                || !Append(destination, ref written, "\",\"topicId\":"u8) || !Append(destination, ref written, topicId)
                || (keyedPublishes && !AppendKey(destination, ref written))
                || !Append(destination, ref written, ",\"contentType\":\"application/octet-stream\",\"encoding\":\"base64\",\"body\":\""u8)
                || destination.Length - written < encoded + 2)
            {
                return false;
            }
            if (Base64.EncodeToUtf8(body, destination[written..], out _, out var count) != OperationStatus.Done)
            {
                return false;
            }
            written += count;
            return Append(destination, ref written, "\"}"u8);
        }

        /// <summary><c>,"idempotencyKey":"UUID"</c>: a fresh key, as the clients give every publish by default.</summary>
        private static bool AppendKey(Span<byte> destination, ref int written)
        {
            if (!Append(destination, ref written, ",\"idempotencyKey\":\""u8) || destination.Length - written < KeyLength + 1
                || !Guid.NewGuid().TryFormat(destination[written..], out var count, "D"))
            {
                return false;
            }
            written += count;
            return Append(destination, ref written, "\""u8);
        }

        /// <summary>The <c>status</c> of a problem object (0 when it has none), leaving the reader on the object's end.</summary>
        private static int ReadStatus(ref Utf8JsonReader reader)
        {
            var status = 0;
            if (reader.TokenType != JsonTokenType.StartObject)
            {
                reader.Skip();
                return status;
            }
            while (reader.Read() && reader.TokenType == JsonTokenType.PropertyName)
            {
                var isStatus = reader.ValueTextEquals("status"u8);
                reader.Read();
                if (isStatus && reader.TokenType == JsonTokenType.Number)
                {
                    status = reader.GetInt32();
                }
                else
                {
                    reader.Skip();
                }
            }
            return status;
        }

        private enum FrameType
        {
            Other,
            Message,
            Subscribed,
            Published,
            Problem,
        }
    }

    /// <summary>
    /// <c>timeout=30&amp;topics=14:3~9f3c0a1b2c3d4e5f,15:9</c>: every subscribed topic with its cursor and,
    /// once an answer has named it, its epoch, in the compact form (as the .NET client sends them).
    /// </summary>
    private sealed class Wire(IReadOnlyList<DeliveryVerifier> topics, int pollTimeoutSeconds, WireFormatKind format, byte[] querySuffix, byte[] headers) : IPollWire
    {
        private byte[] _scratch = new byte[64];

        public string Accept => format == WireFormatKind.Json ? "application/json" : "multipart/mixed";

        public bool IsEmpty(int status) => status == 204;

        public bool TryWriteQuery(Span<byte> destination, out int written)
        {
            written = 0;
            return Append(destination, ref written, "timeout="u8) && Append(destination, ref written, pollTimeoutSeconds)
                && Append(destination, ref written, "&"u8) && TryWriteTopics(destination, ref written, topics)
                && Append(destination, ref written, querySuffix);
        }

        public bool TryWriteHeaders(Span<byte> destination, out int written)
        {
            written = 0;
            return Append(destination, ref written, headers);
        }

        public void Read(in RawPollResponse response, IPollResponseSink sink)
        {
            if (format == WireFormatKind.Json)
            {
                PollResponseReader.ReadJson(response.Body, sink, ref _scratch);
            }
            else
            {
                PollResponseReader.ReadMultipart(response.Body, PollResponseReader.BoundaryOf(response.ContentType), sink);
            }
        }
    }
}

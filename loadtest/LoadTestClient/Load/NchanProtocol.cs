using System.Buffers.Text;
using System.Text;
using System.Text.Json;
using Laharsub.LoadTestClient.Measurement;

namespace Laharsub.LoadTestClient.Load;

/// <summary>
/// nchan's protocol as loadtest/peers/nchan.conf exposes it: <c>POST /pub?id=CHANNEL</c> publishes the
/// body (201 when subscribers were waiting, 202 when none; with <c>Accept: application/json</c> the
/// answer names the channel's last message id), and <c>GET /sub?id=CHANNEL</c> is the long poll,
/// whose cursor is the last message's <c>Last-Modified</c> and <c>Etag</c>, sent back as
/// <c>If-Modified-Since</c> and <c>If-None-Match</c>; each answer holds one message, and a poll that
/// waited its whole timeout is a 408. The same location serves an EventSource stream (each message an
/// event whose <c>id</c> is the message id <c>TIME:TAG</c>, resumed with <c>Last-Event-ID</c>) and a
/// WebSocket (subprotocol <c>ws+meta.nchan</c>: each frame the message id, a blank line and the body;
/// resumed with <c>last_event_id</c>). Publishing stays REST on every transport.
/// </summary>
internal sealed class NchanProtocol(LoadPlan plan) : TargetProtocol
{
    private readonly byte[] _channelPrefix = Encoding.ASCII.GetBytes(plan.ChannelPrefix);

    public override Uri PollAddressAt(Uri apiAddress) => new(apiAddress, "sub");

    public override bool ConsecutiveMessageIds => false;

    public override string? PublishAccept => "application/json";

    public override string PublishPath(long topicId) => $"pub?id={plan.ChannelPrefix}{topicId}";

    public override bool IsPublishAccepted(int status) => status is 201 or 202;

    public override long ReadPublishedId(ReadOnlySpan<byte> answer) => NchanMessageId.ReadPublishAnswer(answer);

    public override IPollWire CreatePollWire(IReadOnlyList<DeliveryVerifier> topics, int client = 0, string? token = null)
    {
        if (topics.Count != 1)
        {
            throw new ArgumentException("An nchan poll reads one channel: --topics-per-client must be 1 with --target nchan.", nameof(topics));
        }
        return new Wire(_channelPrefix, topics[0].TopicId);
    }

    public override IEventStreamWire CreateEventStreamWire(IReadOnlyList<DeliveryVerifier> topics, int client = 0, string? token = null) =>
        new EventStreamWire(_channelPrefix, OneChannel(topics));

    public override IWebSocketWire CreateWebSocketWire(IReadOnlyList<DeliveryVerifier> topics, int client = 0, string? token = null) =>
        new SocketWire(plan.ChannelPrefix, OneChannel(topics));

    private static long OneChannel(IReadOnlyList<DeliveryVerifier> topics) => topics.Count == 1 ? topics[0].TopicId
        : throw new ArgumentException("An nchan subscriber reads one channel here: --topics-per-client must be 1 with --target nchan.", nameof(topics));

    private static FormatException Unreadable(string what) => new($"Unreadable nchan stream: {what}.");

    /// <summary>The id of the last message read (<c>TIME:TAG</c>, as nchan wrote it): where a reconnect resumes.</summary>
    private sealed class LastId
    {
        private byte[]? _text;
        private int _length;

        public ReadOnlySpan<byte> Text => _text.AsSpan(0, _length);

        /// <summary>Parses <paramref name="id"/> into the packed id and keeps its text.</summary>
        public long Take(ReadOnlySpan<byte> id)
        {
            if (!NchanMessageId.TryParseText(id, out var packed))
            {
                throw Unreadable($"the message id '{Encoding.ASCII.GetString(id)}' is not TIME:TAG");
            }
            _text ??= new byte[48];
            id.CopyTo(_text);
            _length = id.Length;
            return packed;
        }
    }

    /// <summary>
    /// GET /sub?id=CHANNEL with <c>Accept: text/event-stream</c>. nchan writes <c>: hi</c> and then each
    /// message as an event: <c>id: TIME:TAG</c> and the body as <c>data:</c> lines (split at each LF).
    /// The first request reads the channel from its oldest message (the channel is the run's own, so
    /// that is message 1); a reconnect sends the last id as <c>Last-Event-ID</c>, as a browser would.
    /// </summary>
    internal sealed class EventStreamWire(byte[] channelPrefix, long topicId) : IEventStreamWire
    {
        private readonly LastId _last = new();

        public bool OpenAtHead => true;

        public bool TryWriteQuery(Span<byte> destination, out int written)
        {
            written = 0;
            if (!"id="u8.TryCopyTo(destination) || !channelPrefix.AsSpan().TryCopyTo(destination[3..])
                || !Utf8Formatter.TryFormat(topicId, destination[(3 + channelPrefix.Length)..], out var digits))
            {
                return false;
            }
            written = 3 + channelPrefix.Length + digits;
            return true;
        }

        public bool TryWriteHeaders(Span<byte> destination, out int written)
        {
            written = 0;
            var last = _last.Text;
            if (last.IsEmpty)
            {
                return true;
            }
            if (destination.Length < "Last-Event-ID: "u8.Length + last.Length + 2)
            {
                return false;
            }
            "Last-Event-ID: "u8.CopyTo(destination);
            last.CopyTo(destination["Last-Event-ID: "u8.Length..]);
            written = "Last-Event-ID: "u8.Length + last.Length;
            "\r\n"u8.CopyTo(destination[written..]);
            written += 2;
            return true;
        }

        public StreamSignal Read(in ServerSentEvent sse, IPollResponseSink sink)
        {
            if (!sse.HasData)
            {
                return StreamSignal.None;
            }
            if (sse.Id.IsEmpty)
            {
                throw Unreadable("an event without an id");
            }
            sink.OnMessage(topicId, _last.Take(sse.Id), sse.Data);
            return StreamSignal.None;
        }
    }

    /// <summary>
    /// ws://.../sub?id=CHANNEL with subprotocol <c>ws+meta.nchan</c>: each message is one frame (text
    /// when the body is UTF-8, else binary) holding <c>id: TIME:TAG</c>, the content type, a blank line
    /// and the body. A reconnect resumes after the last id (<c>last_event_id</c> in the query).
    /// </summary>
    internal sealed class SocketWire(string channelPrefix, long topicId) : IWebSocketWire
    {
        public const string MetaSubProtocol = "ws+meta.nchan";

        private readonly LastId _last = new();

        public string SubProtocol => MetaSubProtocol;

        public bool OpenAtConnect => true;

        public Uri Address(Uri pollAddress)
        {
            var query = $"id={channelPrefix}{topicId}";
            if (!_last.Text.IsEmpty)
            {
                query += "&last_event_id=" + Uri.EscapeDataString(Encoding.ASCII.GetString(_last.Text));
            }
            return new UriBuilder(pollAddress) { Scheme = "ws", Query = query }.Uri;
        }

        public StreamSignal Read(ReadOnlySpan<byte> frame, bool binary, IStreamSink sink)
        {
            ReadOnlySpan<byte> id = default;
            var rest = frame;
            while (true)
            {
                var end = rest.IndexOf((byte)'\n');
                if (end < 0)
                {
                    throw Unreadable("a frame without the blank line that ends its meta lines");
                }
                var line = rest[..end];
                rest = rest[(end + 1)..];
                if (line.IsEmpty)
                {
                    break;
                }
                if (line.StartsWith("id: "u8))
                {
                    id = line[4..];
                }
            }
            if (id.IsEmpty)
            {
                throw Unreadable("a frame without an id");
            }
            sink.OnMessage(topicId, _last.Take(id), rest);
            return StreamSignal.None;
        }

        public bool TryWritePublish(Span<byte> destination, long sequence, long topicId, ReadOnlySpan<byte> body, out int written) =>
            throw new NotSupportedException("Runs against nchan publish with POST /pub on every transport.");
    }

    /// <summary>One channel's long poll and its cursor (the header values of the last message, kept as received).</summary>
    internal sealed class Wire : IPollWire
    {
        private readonly byte[] _channelPrefix;
        private readonly long _topicId;
        private readonly byte[] _lastModified = new byte[64];
        private readonly byte[] _etag = new byte[64];
        private int _lastModifiedLength;
        private int _etagLength;

        public Wire(byte[] channelPrefix, long topicId)
        {
            _channelPrefix = channelPrefix;
            _topicId = topicId;
            _lastModifiedLength = Copy(NchanMessageId.OldestLastModified, _lastModified);
            _etagLength = Copy("0"u8, _etag);
        }

        public string Accept => "*/*";

        /// <summary>The If-Modified-Since the next poll sends.</summary>
        public ReadOnlySpan<byte> LastModified => _lastModified.AsSpan(0, _lastModifiedLength);

        /// <summary>The If-None-Match the next poll sends.</summary>
        public ReadOnlySpan<byte> Etag => _etag.AsSpan(0, _etagLength);

        public bool IsEmpty(int status) => status is 408 or 304;

        public bool TryWriteQuery(Span<byte> destination, out int written)
        {
            written = 0;
            if (!"id="u8.TryCopyTo(destination) || !_channelPrefix.AsSpan().TryCopyTo(destination[3..])
                || !Utf8Formatter.TryFormat(_topicId, destination[(3 + _channelPrefix.Length)..], out var digits))
            {
                return false;
            }
            written = 3 + _channelPrefix.Length + digits;
            return true;
        }

        public bool TryWriteHeaders(Span<byte> destination, out int written)
        {
            // The first poll sends the epoch and tag 0, which nchan answers with the oldest message
            // it holds: the channel is fresh, so that is message 1 of the run.
            var length = "If-Modified-Since: "u8.Length + _lastModifiedLength + "\r\nIf-None-Match: "u8.Length + _etagLength + 2;
            written = 0;
            if (destination.Length < length)
            {
                return false;
            }
            written = Put(destination, 0, "If-Modified-Since: "u8);
            written = Put(destination, written, LastModified);
            written = Put(destination, written, "\r\nIf-None-Match: "u8);
            written = Put(destination, written, Etag);
            written = Put(destination, written, "\r\n"u8);
            return true;
        }

        public void Read(in RawPollResponse response, IPollResponseSink sink)
        {
            if (!response.TryGetHeader("Last-Modified"u8, out var lastModified) || !response.TryGetHeader("Etag"u8, out var etag))
            {
                throw new FormatException("Unreadable nchan answer: a 200 without Last-Modified and Etag, so the poll has no cursor to go on from.");
            }
            if (!NchanMessageId.TryParse(lastModified, etag, out var id) || lastModified.Length > _lastModified.Length || etag.Length > _etag.Length)
            {
                throw new FormatException($"Unreadable nchan answer: Last-Modified '{Encoding.ASCII.GetString(lastModified)}', Etag '{Encoding.ASCII.GetString(etag)}' are not a message id.");
            }
            _lastModifiedLength = Copy(lastModified, _lastModified);
            _etagLength = Copy(etag, _etag);
            sink.OnMessage(_topicId, id, response.Body);
        }

        private static int Copy(ReadOnlySpan<byte> from, byte[] to)
        {
            from.CopyTo(to);
            return from.Length;
        }

        private static int Put(Span<byte> destination, int at, ReadOnlySpan<byte> text)
        {
            text.CopyTo(destination[at..]);
            return at + text.Length;
        }
    }
}

/// <summary>
/// nchan's message id, <c>TIME:TAG</c>: the publish second and the message's index among those
/// published to the channel in that second. It travels as Last-Modified (the time as an HTTP date)
/// and Etag (the tag). Packed into one long (time above 24 bits of tag) it orders like the messages.
/// </summary>
internal static class NchanMessageId
{
    private const int TagBits = 24;

    /// <summary>The cursor before any message: nchan answers it with the oldest message it holds.</summary>
    public static ReadOnlySpan<byte> OldestLastModified => "Thu, 01 Jan 1970 00:00:00 GMT"u8;

    public static long Pack(long unixSeconds, long tag) => (unixSeconds << TagBits) | tag;

    public static bool TryParse(ReadOnlySpan<byte> lastModified, ReadOnlySpan<byte> etag, out long id)
    {
        id = 0;
        if (!Utf8Parser.TryParse(lastModified, out DateTimeOffset time, out var consumed, 'R') || consumed != lastModified.Length
            || !Utf8Parser.TryParse(etag, out long tag, out consumed) || consumed != etag.Length || tag is < 0 or >= 1L << TagBits)
        {
            return false;
        }
        id = Pack(time.ToUnixTimeSeconds(), tag);
        return true;
    }

    /// <summary>A message id as text, <c>TIME:TAG</c> (an event's id, a publish answer's <c>last_message_id</c>).</summary>
    public static bool TryParseText(ReadOnlySpan<byte> text, out long id)
    {
        id = 0;
        var colon = text.IndexOf((byte)':');
        if (colon > 0 && Utf8Parser.TryParse(text[..colon], out long seconds, out var consumed) && consumed == colon
            && Utf8Parser.TryParse(text[(colon + 1)..], out long tag, out consumed) && consumed == text.Length - colon - 1
            && tag is >= 0 and < 1L << TagBits && seconds is >= 0 and < 1L << (63 - TagBits))
        {
            id = Pack(seconds, tag);
            return true;
        }
        return false;
    }

    /// <summary>The <c>last_message_id</c> ("TIME:TAG") of a publish answer in JSON.</summary>
    public static long ReadPublishAnswer(ReadOnlySpan<byte> json)
    {
        var reader = new Utf8JsonReader(json);
        while (reader.Read())
        {
            if (reader.TokenType == JsonTokenType.PropertyName && reader.ValueTextEquals("last_message_id"u8) && reader.Read()
                && reader.TokenType == JsonTokenType.String)
            {
                if (TryParseText(reader.ValueSpan, out var id))
                {
                    return id;
                }
                break;
            }
        }
        throw new JsonException("The nchan publish answer has no readable last_message_id (\"TIME:TAG\"); is the publisher location answering JSON?");
    }
}

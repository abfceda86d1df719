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
/// waited its whole timeout is a 408.
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

    public override IPollWire CreatePollWire(IReadOnlyList<DeliveryVerifier> topics)
    {
        if (topics.Count != 1)
        {
            throw new ArgumentException("An nchan poll reads one channel: --topics-per-client must be 1 with --target nchan.", nameof(topics));
        }
        return new Wire(_channelPrefix, topics[0].TopicId);
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

    /// <summary>The <c>last_message_id</c> ("TIME:TAG") of a publish answer in JSON.</summary>
    public static long ReadPublishAnswer(ReadOnlySpan<byte> json)
    {
        var reader = new Utf8JsonReader(json);
        while (reader.Read())
        {
            if (reader.TokenType == JsonTokenType.PropertyName && reader.ValueTextEquals("last_message_id"u8) && reader.Read()
                && reader.TokenType == JsonTokenType.String)
            {
                var text = reader.ValueSpan;
                var colon = text.IndexOf((byte)':');
                if (colon > 0 && Utf8Parser.TryParse(text[..colon], out long seconds, out var consumed) && consumed == colon
                    && Utf8Parser.TryParse(text[(colon + 1)..], out long tag, out consumed) && consumed == text.Length - colon - 1
                    && tag is >= 0 and < 1L << TagBits)
                {
                    return Pack(seconds, tag);
                }
                break;
            }
        }
        throw new JsonException("The nchan publish answer has no readable last_message_id (\"TIME:TAG\"); is the publisher location answering JSON?");
    }
}

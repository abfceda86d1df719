namespace Laharsub.LoadTestClient.Load;

/// <summary>One Server-Sent Event as read off a stream: valid until the stream's buffer is read into again.</summary>
internal readonly ref struct ServerSentEvent(ReadOnlySpan<byte> type, ReadOnlySpan<byte> id, ReadOnlySpan<byte> data, bool hasData)
{
    /// <summary>The <c>event:</c> field; empty for the default type (<c>message</c>).</summary>
    public ReadOnlySpan<byte> Type { get; } = type;

    /// <summary>The <c>id:</c> field of this event; empty when it has none.</summary>
    public ReadOnlySpan<byte> Id { get; } = id;

    /// <summary>The <c>data:</c> lines, joined by LF.</summary>
    public ReadOnlySpan<byte> Data { get; } = data;

    /// <summary>Whether the event had a <c>data:</c> line; a block of comments alone (a heartbeat) has none and is no event.</summary>
    public bool HasData { get; } = hasData;
}

/// <summary>
/// Reads Server-Sent Events (the WHATWG event stream format) out of a buffer without allocating: each
/// call reads the next whole event, its fields pointing into the buffer (or, for an event of several
/// <c>data:</c> lines, into a scratch buffer where they are joined).
/// </summary>
/// <remarks>
/// Lines end at LF alone. Both servers measured end their lines with LF, and nchan writes a message
/// body's bytes as they are, splitting the <c>data:</c> lines at LF only: a CR inside a body (this
/// tool's bodies start with binary timestamps) is the body's, where the format's own rule (CR, LF and
/// CRLF all end a line) would cut the body there.
/// </remarks>
internal static class EventStreamParser
{
    /// <summary>
    /// Reads the next event of <paramref name="text"/>: returns how many bytes it took (0 when the
    /// event is not complete yet: read more and call again with the same start).
    /// </summary>
    public static int TryRead(ReadOnlySpan<byte> text, ref byte[] scratch, out ServerSentEvent sse)
    {
        ReadOnlySpan<byte> type = default, id = default, data = default;
        var dataLines = 0;
        var dataLength = 0;
        var at = 0;
        while (true)
        {
            var end = text[at..].IndexOf((byte)'\n');
            if (end < 0)
            {
                sse = default;
                return 0;
            }
            var line = text.Slice(at, end);
            at += end + 1;
            if (line.IsEmpty)
            {
                sse = new ServerSentEvent(type, id, dataLines > 1 ? scratch.AsSpan(0, dataLength) : data, dataLines > 0);
                return at;
            }
            if (line[0] == (byte)':')
            {
                continue;
            }
            var colon = line.IndexOf((byte)':');
            var name = colon < 0 ? line : line[..colon];
            var value = colon < 0 ? default : line[(colon + 1)..];
            if (!value.IsEmpty && value[0] == (byte)' ')
            {
                value = value[1..];
            }
            if (name.SequenceEqual("data"u8))
            {
                if (++dataLines == 1)
                {
                    data = value;
                    continue;
                }
                if (dataLines == 2)
                {
                    dataLength = Append(ref scratch, 0, data);
                }
                dataLength = Append(ref scratch, dataLength, "\n"u8);
                dataLength = Append(ref scratch, dataLength, value);
            }
            else if (name.SequenceEqual("event"u8))
            {
                type = value;
            }
            else if (name.SequenceEqual("id"u8))
            {
                id = value;
            }
            // retry: and unknown fields are ignored, as the format says.
        }
    }

    private static int Append(ref byte[] scratch, int length, ReadOnlySpan<byte> text)
    {
        if (scratch.Length < length + text.Length)
        {
            var larger = new byte[Math.Max(length + text.Length, scratch.Length * 2)];
            scratch.AsSpan(0, length).CopyTo(larger);
            scratch = larger;
        }
        text.CopyTo(scratch.AsSpan(length));
        return length + text.Length;
    }
}

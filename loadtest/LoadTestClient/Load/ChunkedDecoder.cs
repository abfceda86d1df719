namespace Laharsub.LoadTestClient.Load;

/// <summary>
/// Decodes an HTTP/1.1 chunked body as it arrives, in place: the data of the chunks is moved to the
/// front of what was received, so a stream read into one buffer needs no second one. Chunk
/// extensions and trailers are skipped; the state between reads lives in this struct.
/// </summary>
internal struct ChunkedDecoder
{
    private const int MaxSizeDigits = 8;

    private State _state;
    private long _remaining;
    private int _digits;

    private enum State
    {
        Size,
        Extension,
        SizeLineFeed,
        Data,
        DataCarriageReturn,
        DataLineFeed,
        TrailerLineStart,
        TrailerLine,
        Done,
    }

    /// <summary>Whether the last chunk (size 0) and the trailer have been read: the body is over.</summary>
    public readonly bool Ended => _state == State.Done;

    /// <summary>
    /// Decodes <c>buffer[from..to)</c>, the raw bytes received, writing the chunks' data at
    /// <paramref name="write"/> (at most <paramref name="from"/>, so the data only moves forward in the
    /// buffer). Returns where the decoded data ends. Every raw byte is consumed: a chunk-size line cut
    /// by the end of a read is carried in the state.
    /// </summary>
    /// <exception cref="FormatException">The framing is broken.</exception>
    public int Decode(Span<byte> buffer, int write, int from, int to)
    {
        var at = from;
        while (at < to)
        {
            var b = buffer[at];
            switch (_state)
            {
                case State.Size:
                    if (HexValue(b) is var digit and >= 0)
                    {
                        if (++_digits > MaxSizeDigits)
                        {
                            throw Broken("a chunk size longer than 8 hex digits");
                        }
                        _remaining = _remaining * 16 + digit;
                    }
                    else if (_digits == 0)
                    {
                        throw Broken("a chunk size line without a size");
                    }
                    else
                    {
                        _state = b switch
                        {
                            (byte)'\r' => State.SizeLineFeed,
                            (byte)'\n' => AfterSizeLine(),
                            (byte)';' or (byte)' ' or (byte)'\t' => State.Extension,
                            _ => throw Broken("a chunk size that is not hex"),
                        };
                    }
                    at++;
                    break;
                case State.Extension:
                    var lineEnd = buffer[at..to].IndexOf((byte)'\n');
                    if (lineEnd < 0)
                    {
                        at = to;
                        break;
                    }
                    at += lineEnd + 1;
                    _state = AfterSizeLine();
                    break;
                case State.SizeLineFeed:
                    _state = b == (byte)'\n' ? AfterSizeLine() : throw Broken("a chunk size line not ended by CRLF");
                    at++;
                    break;
                case State.Data:
                    var count = (int)Math.Min(_remaining, to - at);
                    buffer.Slice(at, count).CopyTo(buffer[write..]);
                    write += count;
                    at += count;
                    _remaining -= count;
                    if (_remaining == 0)
                    {
                        _state = State.DataCarriageReturn;
                    }
                    break;
                case State.DataCarriageReturn:
                    _state = b switch
                    {
                        (byte)'\r' => State.DataLineFeed,
                        (byte)'\n' => State.Size,
                        _ => throw Broken("a chunk's data not followed by CRLF"),
                    };
                    at++;
                    break;
                case State.DataLineFeed:
                    _state = b == (byte)'\n' ? State.Size : throw Broken("a chunk's data not followed by CRLF");
                    at++;
                    break;
                case State.TrailerLineStart:
                    _state = b switch
                    {
                        (byte)'\r' => State.TrailerLineStart,
                        (byte)'\n' => State.Done,
                        _ => State.TrailerLine,
                    };
                    at++;
                    break;
                case State.TrailerLine:
                    if (b == (byte)'\n')
                    {
                        _state = State.TrailerLineStart;
                    }
                    at++;
                    break;
                default:
                    throw Broken("bytes after the last chunk");
            }
        }
        return write;
    }

    private State AfterSizeLine()
    {
        var state = _remaining == 0 ? State.TrailerLineStart : State.Data;
        _digits = 0;
        return state;
    }

    private static int HexValue(byte b) => b switch
    {
        >= (byte)'0' and <= (byte)'9' => b - '0',
        >= (byte)'a' and <= (byte)'f' => b - 'a' + 10,
        >= (byte)'A' and <= (byte)'F' => b - 'A' + 10,
        _ => -1,
    };

    private static FormatException Broken(string what) => new($"Unreadable stream: {what}.");
}

using System.Runtime.InteropServices;

namespace Laharsub.Server.Storage;

/// <summary>
/// The one place that prices a message: the bytes of process memory it keeps alive while a store retains
/// it (in memory, against <c>MaxRetainedBytes</c>) or a Redis instance caches it (against
/// <c>Redis:LocalCacheBytes</c>). Counted: the <see cref="Message"/> object and its slot, the array that
/// holds the body, the content type and epoch strings, the publisher's trace context when it was traced, and the two wire encodings, each estimated at
/// publish as the body unescaped plus its headers; an encoding that turns out larger (JSON escaping, or
/// base64 for a binary body) is charged the difference when it is made, and kept only if that fits
/// (<see cref="Message.CountAgainst"/>). Sizes are those of the 64-bit runtime's objects.
/// </summary>
public static class RetainedCost
{
    /// <summary>Object header and method table of every object.</summary>
    private const int ObjectHeader = 16;

    /// <summary>The <see cref="Message"/> object: header and fields (ids, epoch, time, content type, body, encodings, budget, charge).</summary>
    private const int MessageObject = ObjectHeader + 88;

    /// <summary>The object holding a message's two encodings (the wire layer's, made on first delivery).</summary>
    private const int EncodingsObject = ObjectHeader + 16;

    /// <summary>A reference in the topic's ring buffer, which doubles as it grows: up to two slots per message.</summary>
    private const int Slot = 16;

    /// <summary>
    /// What a traced message keeps more: the boxed <see cref="System.Diagnostics.ActivityContext"/> (48 bytes)
    /// and the hex strings of its trace and span ids (88 and 56 bytes) once read.
    /// </summary>
    internal const int TraceContextBytes = 200;

    /// <summary>
    /// A JSON element's text besides its content type and body: the property names, quotes and commas,
    /// the timestamp, the epoch, and topic and message ids of up to 10 digits together (longer ones are
    /// charged when encoded, as escaping is).
    /// </summary>
    internal const int JsonFixedBytes = 160;

    /// <summary>A multipart part's text besides its content type and body: delimiter, header names, the same values, CRLFs.</summary>
    internal const int MultipartFixedBytes = 210;

    /// <summary>What <paramref name="message"/> costs while it is retained or cached.</summary>
    public static long Of(Message message) =>
        Of(BackingBytes(message.Body), message.Body.Length, message.ContentType.Length, message.Epoch.Length, message.IsTraced);

    /// <summary>
    /// What a message costs while retained (before it exists: the in-memory store reserves it first): <paramref name="backingBytes"/> is the length of the array its
    /// body is a slice of (the body itself in memory; the whole stored entry read from Redis).
    /// </summary>
    internal static long Of(int backingBytes, int bodyBytes, int contentTypeChars, int epochChars, bool traced = false) =>
        MessageObject + EncodingsObject + Slot + (traced ? TraceContextBytes : 0)
        + ArrayBytes(backingBytes) + StringBytes(contentTypeChars) + StringBytes(epochChars)
        + JsonEstimate(bodyBytes, contentTypeChars) + MultipartEstimate(bodyBytes, contentTypeChars);

    /// <summary>What a state topic's document of <paramref name="bytes"/> bytes costs while kept: its array and the reference to it.</summary>
    internal static long OfDocument(int bytes) => ArrayBytes(bytes) + Slot;

    /// <summary>What a message's JSON element is counted at before it is made: its body unescaped.</summary>
    internal static long JsonEstimate(int bodyBytes, int contentTypeChars) => ArrayBytes(JsonFixedBytes + contentTypeChars + bodyBytes);

    /// <summary>What a message's multipart part is counted at before it is made.</summary>
    internal static long MultipartEstimate(int bodyBytes, int contentTypeChars) => ArrayBytes(MultipartFixedBytes + contentTypeChars + bodyBytes);

    /// <summary>What an encoding of <paramref name="length"/> bytes costs beyond what <paramref name="estimate"/> counted already (0 when within it).</summary>
    internal static long Excess(int length, long estimate) => Math.Max(0, ArrayBytes(length) - estimate);

    /// <summary>A byte array: header, length, the bytes, rounded up to 8.</summary>
    internal static long ArrayBytes(int length) => Align(ObjectHeader + 8 + (long)length);

    /// <summary>A string: header, length, UTF-16 chars and a terminator, rounded up to 8.</summary>
    private static long StringBytes(int chars) => Align(ObjectHeader + 4 + 2 * ((long)chars + 1));

    private static long Align(long bytes) => (bytes + 7) & ~7L;

    private static int BackingBytes(ReadOnlyMemory<byte> body) =>
        MemoryMarshal.TryGetArray(body, out var segment) && segment.Array is { } array ? array.Length : body.Length;
}

/// <summary>A count of bytes against a limit, which a retained message's later charges (its encodings) go to.</summary>
public interface IRetentionBudget
{
    /// <summary>Counts <paramref name="bytes"/> if they fit under the limit; false, counting nothing, if not.</summary>
    bool TryCharge(long bytes);

    /// <summary>Stops counting <paramref name="bytes"/> charged before.</summary>
    void Release(long bytes);
}

/// <summary>A thread-safe <see cref="IRetentionBudget"/> with a limit of its own (such as the Redis store's instance cache).</summary>
/// <param name="limit">The most bytes it counts at once.</param>
public sealed class RetentionBudget(long limit) : IRetentionBudget
{
    private long _used;

    /// <summary>Bytes counted now.</summary>
    public long Used => Volatile.Read(ref _used);

    /// <inheritdoc/>
    public bool TryCharge(long bytes)
    {
        if (Interlocked.Add(ref _used, bytes) <= limit)
        {
            return true;
        }
        Interlocked.Add(ref _used, -bytes);
        return false;
    }

    /// <inheritdoc/>
    public void Release(long bytes) => Interlocked.Add(ref _used, -bytes);
}

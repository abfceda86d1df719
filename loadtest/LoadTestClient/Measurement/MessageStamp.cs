using System.Buffers.Binary;

namespace Laharsub.LoadTestClient.Measurement;

/// <summary>
/// The 10 bytes at the start of every test message, as in the original tool: when the message was
/// meant to be sent (by the publisher's fixed schedule) and when it was actually created, both on the
/// machine-wide monotonic clock in microseconds. Bytes 0-5: the intended time (48 bits, enough for
/// 8.9 years of uptime); bytes 6-9: how much later it was actually created (32 bits, 71 minutes).
/// Any further bytes are padding that brings the body to the configured message size.
/// </summary>
internal static class MessageStamp
{
    public const int Size = 10;
    private const long MaxIntended = (1L << 48) - 1;

    public static void Write(Span<byte> body, long intendedMicroseconds, long createdMicroseconds)
    {
        if (body.Length < Size)
        {
            throw new ArgumentException($"A message must be at least {Size} bytes to hold its timestamps.", nameof(body));
        }
        var intended = intendedMicroseconds & MaxIntended;
        var lateBy = (uint)Math.Clamp(createdMicroseconds - intendedMicroseconds, 0, uint.MaxValue);
        BinaryPrimitives.WriteUInt32LittleEndian(body, (uint)intended);
        BinaryPrimitives.WriteUInt16LittleEndian(body[4..], (ushort)(intended >> 32));
        BinaryPrimitives.WriteUInt32LittleEndian(body[6..], lateBy);
    }

    /// <summary>Reads the stamp; false if the body is too short to hold one (not a message of this tool).</summary>
    public static bool TryRead(ReadOnlySpan<byte> body, out long intendedMicroseconds, out long createdMicroseconds)
    {
        if (body.Length < Size)
        {
            intendedMicroseconds = createdMicroseconds = 0;
            return false;
        }
        intendedMicroseconds = BinaryPrimitives.ReadUInt32LittleEndian(body) | ((long)BinaryPrimitives.ReadUInt16LittleEndian(body[4..]) << 32);
        createdMicroseconds = intendedMicroseconds + BinaryPrimitives.ReadUInt32LittleEndian(body[6..]);
        return true;
    }
}

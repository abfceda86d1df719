namespace Laharsub.Server.Storage;

/// <summary>
/// The byte arrays kept for as long as a message is retained (its body, its encoded forms), allocated on the pinned
/// object heap: a collection of the young generations never copies them, so retained messages lengthen its pauses
/// only by their small objects. Short-lived buffers belong on the ordinary heap.
/// </summary>
internal static class RetainedArray
{
    public static byte[] Allocate(int length) => GC.AllocateUninitializedArray<byte>(length, pinned: true);

    public static byte[] Copy(ReadOnlySpan<byte> bytes)
    {
        var copy = Allocate(bytes.Length);
        bytes.CopyTo(copy);
        return copy;
    }
}

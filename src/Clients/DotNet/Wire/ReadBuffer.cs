using System.Buffers;

namespace Laharsub.Client.Wire;

/// <summary>
/// A growable window over a response stream for incremental parsers: they look at <see cref="Data"/>,
/// <see cref="Consume"/> what they parsed, and <see cref="FillAsync"/> when an item is incomplete.
/// Only the unparsed tail is ever kept, so memory is bounded by the largest single item, not the response.
/// </summary>
internal sealed class ReadBuffer(Stream stream) : IDisposable
{
    private const int InitialSize = 16 * 1024;

    private byte[] _array = ArrayPool<byte>.Shared.Rent(InitialSize);
    private int _start;
    private int _end;

    /// <summary>The stream has ended: <see cref="Data"/> is all there is.</summary>
    public bool IsCompleted { get; private set; }

    /// <summary>Bytes read but not yet consumed.</summary>
    public ReadOnlySpan<byte> Data => _array.AsSpan(_start, _end - _start);

    public void Consume(int count)
    {
        ArgumentOutOfRangeException.ThrowIfGreaterThan(count, _end - _start);
        _start += count;
    }

    /// <summary>Reads more bytes after <see cref="Data"/>; sets <see cref="IsCompleted"/> at the end of the stream.</summary>
    public async ValueTask FillAsync(CancellationToken cancellationToken)
    {
        if (IsCompleted)
        {
            throw new InvalidOperationException("The stream has already ended.");
        }
        var length = _end - _start;
        if (_start > 0)
        {
            Buffer.BlockCopy(_array, _start, _array, 0, length);
            _start = 0;
            _end = length;
        }
        if (_end == _array.Length)
        {
            var larger = ArrayPool<byte>.Shared.Rent(_array.Length * 2);
            Buffer.BlockCopy(_array, 0, larger, 0, _end);
            ArrayPool<byte>.Shared.Return(_array);
            _array = larger;
        }
        var read = await stream.ReadAsync(_array.AsMemory(_end), cancellationToken).ConfigureAwait(false);
        if (read == 0)
        {
            IsCompleted = true;
        }
        _end += read;
    }

    public void Dispose()
    {
        ArrayPool<byte>.Shared.Return(_array);
        _array = [];
        _start = _end = 0;
    }
}

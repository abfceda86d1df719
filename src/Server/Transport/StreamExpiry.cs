using Laharsub.Server.Access;

namespace Laharsub.Server.Transport;

/// <summary>
/// A stream whose access ends (<see cref="StreamLifetime"/>: a token that expires, or Host and Backend modes' decision
/// lifetime) ends then, telling its client to come back: <see cref="Expired"/> tells the stream's sink that it
/// ended so, <see cref="Ended"/> ends its wait (the client gone, or the access ended).
/// </summary>
internal sealed class StreamExpiry : IDisposable
{
    private readonly CancellationTokenSource _expired;
    private readonly CancellationTokenSource _ended;

    public StreamExpiry(StreamLifetime? lifetime, TimeProvider clock, CancellationToken clientGone)
    {
        Redecide = lifetime?.Redecide == true;
        var left = lifetime is { } ends ? ends.EndsAt - clock.GetUtcNow() : Timeout.InfiniteTimeSpan;
        _expired = new CancellationTokenSource(left > TimeSpan.Zero || left == Timeout.InfiniteTimeSpan ? left : TimeSpan.Zero, clock);
        _ended = CancellationTokenSource.CreateLinkedTokenSource(clientGone, _expired.Token);
    }

    public CancellationToken Expired => _expired.Token;

    /// <summary>Whether the stream ends to be decided again (Host and Backend modes) rather than for a token's expiry.</summary>
    public bool Redecide { get; }

    public CancellationToken Ended => _ended.Token;

    public void Dispose()
    {
        _ended.Dispose();
        _expired.Dispose();
    }
}

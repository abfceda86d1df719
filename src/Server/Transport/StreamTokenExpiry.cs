namespace Laharsub.Server.Transport;

/// <summary>
/// A stream opened with a token (Jwt mode) ends when the token expires, telling its client to come back with a
/// fresh one: <see cref="Expired"/> tells the stream's sink why it ended, <see cref="Ended"/> ends its wait (the
/// client gone, or the token expired).
/// </summary>
internal sealed class StreamTokenExpiry : IDisposable
{
    private readonly CancellationTokenSource _expired;
    private readonly CancellationTokenSource _ended;

    public StreamTokenExpiry(DateTimeOffset? expiresAt, TimeProvider clock, CancellationToken clientGone)
    {
        var left = expiresAt is { } at ? at - clock.GetUtcNow() : Timeout.InfiniteTimeSpan;
        _expired = new CancellationTokenSource(left > TimeSpan.Zero || left == Timeout.InfiniteTimeSpan ? left : TimeSpan.Zero, clock);
        _ended = CancellationTokenSource.CreateLinkedTokenSource(clientGone, _expired.Token);
    }

    public CancellationToken Expired => _expired.Token;

    public CancellationToken Ended => _ended.Token;

    public void Dispose()
    {
        _ended.Dispose();
        _expired.Dispose();
    }
}

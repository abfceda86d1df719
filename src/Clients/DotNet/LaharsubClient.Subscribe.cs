namespace Laharsub.Client;

public sealed partial class LaharsubClient
{
    /// <summary>
    /// Creates a subscription with no topics yet; add them with <see cref="LaharsubSubscription.Add"/>
    /// (from a cursor) or <see cref="LaharsubSubscription.AddAsync"/> (from the next message), then read
    /// it with <see cref="LaharsubSubscription.ReadAllAsync"/>.
    /// </summary>
    public LaharsubSubscription Subscribe() => Subscribe([]);

    /// <summary>
    /// Creates a subscription that starts each topic at the given cursor, e.g. cursors saved from
    /// <see cref="LaharsubSubscription.Cursors"/> to resume where a previous subscription stopped.
    /// </summary>
    /// <param name="cursors">Topic id → the smallest message id wanted (1 for everything retained).</param>
    /// <exception cref="ArgumentException">A topic id or cursor is not positive.</exception>
    public LaharsubSubscription Subscribe(IEnumerable<KeyValuePair<long, long>> cursors)
    {
        ArgumentNullException.ThrowIfNull(cursors);
        ObjectDisposedException.ThrowIf(_disposing.IsCancellationRequested, this);
        var validated = new List<KeyValuePair<long, long>>();
        foreach (var cursor in cursors)
        {
            ThrowIfNotId(cursor.Key, nameof(cursors));
            if (cursor.Value <= 0)
            {
                throw new ArgumentOutOfRangeException(nameof(cursors), cursor.Value, $"Topic {cursor.Key} has cursor {cursor.Value}: a cursor is a message id (1 for everything retained).");
            }
            validated.Add(cursor);
        }
        return new LaharsubSubscription(this, validated);
    }
}

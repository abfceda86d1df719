namespace Laharsub.Client;

public sealed partial class LaharsubClient
{
    /// <summary>
    /// Creates a subscription with no topics yet; add them with <see cref="LaharsubSubscription.Add(long, long, string?)"/>
    /// (from a cursor) or <see cref="LaharsubSubscription.AddAsync"/> (from the next message), then read
    /// it with <see cref="LaharsubSubscription.ReadAllAsync"/>.
    /// </summary>
    public LaharsubSubscription Subscribe() => new(this, []);

    /// <summary>
    /// Creates a subscription that starts each topic at the given cursor, without epochs: a topic that
    /// was re-created since is noticed only when the cursor lies beyond its end. Prefer
    /// <see cref="Subscribe(IReadOnlyDictionary{long, TopicCursor})"/> with cursors saved from
    /// <see cref="LaharsubSubscription.Cursors"/>; the subscription learns each topic's epoch from the
    /// first answer either way.
    /// </summary>
    /// <param name="cursors">Topic id → the smallest message id wanted (1 for everything retained).</param>
    /// <exception cref="ArgumentException">A topic id or cursor is not positive.</exception>
    public LaharsubSubscription Subscribe(IEnumerable<KeyValuePair<long, long>> cursors)
    {
        ArgumentNullException.ThrowIfNull(cursors);
        return Subscribe(cursors.Select(cursor => KeyValuePair.Create(cursor.Key, new TopicCursor(cursor.Value))), nameof(cursors), states: false);
    }

    /// <summary>
    /// Creates a subscription that starts each topic at the given cursor and epoch, e.g. cursors saved
    /// from <see cref="LaharsubSubscription.Cursors"/> to resume where a previous subscription stopped.
    /// A topic whose epoch is no longer the server's (it was re-created, or the server lost its data)
    /// is reported with a <see cref="ResetNotice"/> whose <see cref="ResetNotice.EpochChanged"/> is set.
    /// </summary>
    /// <param name="cursors">Topic id → where to start: the smallest message id wanted (1 for everything retained) and the epoch, if known; <see cref="TopicCursor.ForState"/> for a state topic's document first.</param>
    /// <exception cref="ArgumentException">A topic id is not positive, a cursor is neither positive nor the state cursor, or an epoch is not one the server could have sent.</exception>
    public LaharsubSubscription Subscribe(IReadOnlyDictionary<long, TopicCursor> cursors)
    {
        ArgumentNullException.ThrowIfNull(cursors);
        return Subscribe(cursors, nameof(cursors));
    }

    private LaharsubSubscription Subscribe(IEnumerable<KeyValuePair<long, TopicCursor>> cursors, string parameterName, bool states = true)
    {
        ObjectDisposedException.ThrowIf(_disposing.IsCancellationRequested, this);
        var validated = new List<KeyValuePair<long, TopicCursor>>();
        foreach (var cursor in cursors)
        {
            ThrowIfNotId(cursor.Key, parameterName);
            if (cursor.Value.From < 0 || (cursor.Value.IsState && (!states || cursor.Value.Epoch is not null)))
            {
                throw new ArgumentOutOfRangeException(parameterName, cursor.Value.From, $"Topic {cursor.Key} has cursor {cursor.Value}: a cursor is a message id (1 for everything retained)"
                    + (states ? ", or TopicCursor.ForState (without an epoch) for a state topic's document first." : "."));
            }
            Epochs.ThrowIfInvalid(cursor.Value.Epoch, parameterName);
            validated.Add(cursor);
        }
        return new LaharsubSubscription(this, validated);
    }
}

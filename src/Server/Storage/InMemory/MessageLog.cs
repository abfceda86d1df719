namespace Laharsub.Server.Storage.InMemory;

/// <summary>
/// A topic's retained messages: a ring buffer of consecutive ids, so the message with a given id is
/// found by subtraction. Not thread-safe: its <see cref="Topic"/> guards it.
/// </summary>
internal sealed class MessageLog
{
    private Message[] _items = new Message[4];
    private int _head;

    public int Count { get; private set; }

    /// <summary>Body bytes of the retained messages.</summary>
    public long Bytes { get; private set; }

    /// <summary>What the retained messages cost against <c>MaxRetainedBytes</c>: bodies plus <see cref="InMemoryStore.CostOf"/>'s overhead.</summary>
    public long Cost { get; private set; }

    /// <summary>Id of the oldest retained message (meaningful only when <see cref="Count"/> &gt; 0).</summary>
    public long FirstId => _items[_head].MessageId;

    public Message this[int index] => _items[(_head + index) % _items.Length];

    public Message Oldest => _items[_head];

    public void Append(Message message)
    {
        if (Count == _items.Length)
        {
            Grow();
        }
        _items[(_head + Count) % _items.Length] = message;
        Count++;
        Bytes += message.Body.Length;
        Cost += InMemoryStore.CostOf(message.Body.Length, message.IsTraced);
    }

    /// <summary>Drops the oldest message and returns its cost.</summary>
    public long RemoveOldest()
    {
        var oldest = _items[_head];
        _items[_head] = null!;
        _head = (_head + 1) % _items.Length;
        Count--;
        Bytes -= oldest.Body.Length;
        var cost = InMemoryStore.CostOf(oldest.Body.Length, oldest.IsTraced);
        Cost -= cost;
        if (Count == 0)
        {
            _head = 0;
        }
        return cost;
    }

    /// <summary>Drops everything and returns the cost released.</summary>
    public long Clear()
    {
        var released = Cost;
        _items = new Message[4];
        _head = 0;
        Count = 0;
        Bytes = 0;
        Cost = 0;
        return released;
    }

    private void Grow()
    {
        var larger = new Message[_items.Length * 2];
        for (var i = 0; i < Count; i++)
        {
            larger[i] = this[i];
        }
        _items = larger;
        _head = 0;
    }
}

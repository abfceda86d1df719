namespace Laharsub.Server.Delivery;

/// <summary>How many more messages and body bytes a poll response (or one topic's share of it) may carry.</summary>
internal struct PollBudget(int maxMessages, long maxBytes)
{
    private int _messages = maxMessages;
    private long _bytes = maxBytes;
    private bool _tookAny;

    /// <summary>A budget that never runs out: for a topic that may take whatever the response has room for.</summary>
    public static PollBudget Unlimited => new(int.MaxValue, long.MaxValue);

    /// <summary>The messages and bytes still allowed (bytes may be negative after an oversized first message).</summary>
    public (int Messages, long Bytes) Remaining => (_messages, _bytes);

    public bool IsExhausted => _messages == 0 || (_tookAny && _bytes <= 0);

    /// <summary>Takes room for one message; the first message always fits, however large.</summary>
    public bool TryTake(int bytes)
    {
        if (_messages == 0 || (_tookAny && bytes > _bytes))
        {
            return false;
        }
        _messages--;
        _bytes -= bytes;
        _tookAny = true;
        return true;
    }
}

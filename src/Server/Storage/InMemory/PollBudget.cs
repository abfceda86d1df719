namespace Laharsub.Server.Storage.InMemory;

/// <summary>How many more messages and body bytes a poll response may carry.</summary>
internal struct PollBudget(int maxMessages, long maxBytes)
{
    private int _messages = maxMessages;
    private long _bytes = maxBytes;
    private bool _tookAny;

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

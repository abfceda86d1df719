using Laharsub.Server.Storage;

namespace Laharsub.Server.Specification;

/// <summary>
/// The <see cref="ITopicSignals"/> the specification hands to each store it creates: it counts, for each
/// topic, how often the store called <see cref="Signal"/>, from any thread, and lets a fact wait for a
/// count. <see cref="SignalAll"/> is counted apart and never stands in for a topic's signal: a store may
/// call it (after reconnecting, say), but the contract asks for <see cref="Signal"/> of the topic that changed.
/// </summary>
internal sealed class RecordingTopicSignals : ITopicSignals
{
    private readonly Lock _lock = new();
    private readonly Dictionary<long, int> _counts = [];
    private readonly List<(long TopicId, int Count, TaskCompletionSource Reached)> _waiters = [];
    private int _signalAllCount;

    /// <summary>How often <see cref="SignalAll"/> was called.</summary>
    public int SignalAllCount => Volatile.Read(ref _signalAllCount);

    public void Signal(long topicId)
    {
        List<TaskCompletionSource>? reached = null;
        lock (_lock)
        {
            var count = _counts[topicId] = _counts.GetValueOrDefault(topicId) + 1;
            for (var i = _waiters.Count - 1; i >= 0; i--)
            {
                if (_waiters[i].TopicId == topicId && count >= _waiters[i].Count)
                {
                    (reached ??= []).Add(_waiters[i].Reached);
                    _waiters.RemoveAt(i);
                }
            }
        }
        // Outside the lock; the waiters' continuations run asynchronously, never on the store's thread.
        reached?.ForEach(waiter => waiter.TrySetResult());
    }

    public void SignalAll() => Interlocked.Increment(ref _signalAllCount);

    /// <summary>How often <paramref name="topicId"/> was signalled so far.</summary>
    public int CountOf(long topicId)
    {
        lock (_lock)
        {
            return _counts.GetValueOrDefault(topicId);
        }
    }

    /// <summary>
    /// Whether <paramref name="topicId"/> has been signalled at least <paramref name="count"/> times, waiting
    /// up to <paramref name="timeout"/> for it (a store that signals through its engine, as Redis does over
    /// a channel, signals a little after the change returned).
    /// </summary>
    public async Task<bool> WaitForAsync(long topicId, int count, TimeSpan timeout)
    {
        var reached = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var waiter = (topicId, count, reached);
        lock (_lock)
        {
            if (_counts.GetValueOrDefault(topicId) >= count)
            {
                return true;
            }
            _waiters.Add(waiter);
        }
        try
        {
            await reached.Task.WaitAsync(timeout).ConfigureAwait(false);
            return true;
        }
        catch (TimeoutException)
        {
            lock (_lock)
            {
                _waiters.Remove(waiter);
            }
            return reached.Task.IsCompleted;
        }
    }
}

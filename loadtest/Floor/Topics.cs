using System.Collections.Concurrent;

namespace Laharsub.Floor;

/// <summary>Every topic of the process, numbered 1, 2, 3, ... in creation order.</summary>
internal sealed class Topics
{
    private readonly ConcurrentDictionary<long, Topic> _topics = new();
    private long _lastId;

    public Topic Create()
    {
        var topic = new Topic(Interlocked.Increment(ref _lastId));
        _topics[topic.Id] = topic;
        return topic;
    }

    public bool TryGet(long id, out Topic topic) => _topics.TryGetValue(id, out topic!);

    /// <summary>Waiting readers of a removed topic are not woken: they wait out their timeout, and their next poll gets 404.</summary>
    public bool Remove(long id) => _topics.TryRemove(id, out _);
}

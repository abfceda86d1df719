namespace Laharsub.Server.Storage;

/// <summary>
/// Where a store says that a topic changed, so that this process's waiting subscriptions read it again.
/// One per process, shared by every store; the delivery core implements it. A store calls it after the
/// change is visible to <see cref="ILaharsubStore.ReadAsync"/>: for its own publishes and deletes, and
/// for those it learns of from other instances.
/// </summary>
public interface ITopicSignals
{
    /// <summary>Wakes every subscription of this process that waits on <paramref name="topicId"/>.</summary>
    void Signal(long topicId);

    /// <summary>
    /// As <see cref="Signal"/>, called on the thread that made the change, holding no lock, right after it: a
    /// few of the woken subscriptions may read and deliver on this thread, saving them a thread hop each. A store
    /// that learns of changes on a thread it must not hold up (a client library's) calls <see cref="Signal"/>.
    /// </summary>
    void SignalFromPublisher(long topicId) => Signal(topicId);

    /// <summary>Wakes every waiting subscription of this process (a store that lost track of changes, for example after reconnecting).</summary>
    void SignalAll();
}

namespace Laharsub.Server.Storage;

/// <summary>
/// One waiting poll, registered in <see cref="TopicSignals"/> under each of its topics. The first
/// signal wakes it; it then leaves its other topics in O(1) each through their registrations.
/// </summary>
internal sealed class PollWaiter(int topicCount)
{
    // Continuations run on the thread pool, so a publisher signalling thousands of waiters only queues
    // work and never writes a poll's response inline.
    private readonly TaskCompletionSource _woken = new(TaskCreationOptions.RunContinuationsAsynchronously);

    public Registration?[] Registrations { get; } = new Registration?[topicCount];

    public Task Woken => _woken.Task;

    public void Wake() => _woken.TrySetResult();

    /// <summary>A node of a topic's waiter list.</summary>
    internal sealed class Registration(PollWaiter waiter, long topicId)
    {
        public PollWaiter Waiter { get; } = waiter;
        public long TopicId { get; } = topicId;
        public Registration? Previous;
        public Registration? Next;

        /// <summary>Whether the node is still in its topic's list (written under the stripe's lock).</summary>
        public bool IsLinked;
    }
}

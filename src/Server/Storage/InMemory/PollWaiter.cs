namespace Laharsub.Server.Storage.InMemory;

/// <summary>
/// One waiting poll, registered on each of its topics. The first topic to signal wakes it; the
/// others are told to forget it in O(1) each through their <see cref="Registration"/>.
/// </summary>
internal sealed class PollWaiter
{
    // Continuations run on the thread pool, so a publisher signalling thousands of waiters under a
    // topic's lock only queues work and never runs a poll's response writing inline.
    private readonly TaskCompletionSource _woken = new(TaskCreationOptions.RunContinuationsAsynchronously);

    public PollWaiter(int topicCount) => Registrations = new Registration[topicCount];

    public Registration?[] Registrations { get; }

    public Task Woken => _woken.Task;

    public void Wake() => _woken.TrySetResult();

    /// <summary>A node of a topic's intrusive waiter list.</summary>
    internal sealed class Registration(PollWaiter waiter)
    {
        public PollWaiter Waiter { get; } = waiter;
        public Registration? Previous { get; set; }
        public Registration? Next { get; set; }

        /// <summary>Whether the node is still in its topic's list (guarded by the topic's lock).</summary>
        public bool IsLinked { get; set; }
    }
}

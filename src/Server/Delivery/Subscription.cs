namespace Laharsub.Server.Delivery;

/// <summary>One topic of a poll, the smallest message id the client still wants, and the epoch it last saw.</summary>
/// <param name="TopicId">The topic.</param>
/// <param name="From">The client's cursor; <see langword="null"/> starts with the next message published.</param>
/// <param name="Epoch">The incarnation the cursor belongs to; <see langword="null"/> when the client does not know it.</param>
/// <param name="State">The cursor <c>state</c>: a state topic's document first (a <c>state</c> notice), then every change after it.</param>
internal readonly record struct Subscription(long TopicId, long? From, string? Epoch = null, bool State = false);

namespace Laharsub.Client;

/// <summary>A state topic's document as <see cref="LaharsubClient.GetStateAsync(long, CancellationToken)"/> read it.</summary>
/// <typeparam name="T">The document's type.</typeparam>
/// <param name="TopicId">The state topic.</param>
/// <param name="Value">The document.</param>
/// <param name="Version">Its version: the id of the last message applied (0 before the first).</param>
/// <param name="Epoch">The topic's epoch (its incarnation); with <paramref name="Version"/>, the condition of a compare-and-set.</param>
public sealed record StateSnapshot<T>(long TopicId, T Value, long Version, string Epoch)
{
    /// <summary>The conditions of a compare-and-set on this version: a write applied only if nothing was written since.</summary>
    public PublishOptions IfUnchanged() => new() { ExpectedEpoch = Epoch, ExpectedVersion = Version };
}

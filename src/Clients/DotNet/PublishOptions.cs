namespace Laharsub.Client;

/// <summary>Conditions for one publish.</summary>
public sealed class PublishOptions
{
    /// <summary>
    /// Publish only if the topic is still the incarnation with this epoch (sent as
    /// <c>If-Match: "epoch"</c>). When the topic id has come to name another topic (it was deleted and
    /// created again, or the server lost its data), nothing is published and the call throws
    /// <see cref="EpochMismatchException"/> naming the current epoch. <see langword="null"/> (the
    /// default) publishes to whatever topic has the id.
    /// </summary>
    public string? ExpectedEpoch { get; init; }
}

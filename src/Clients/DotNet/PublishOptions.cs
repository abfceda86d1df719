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

    /// <summary>
    /// For a state topic's writes (<see cref="LaharsubClient.PatchStateAsync(long, System.Text.Json.Nodes.JsonObject, PublishOptions?, CancellationToken)"/>,
    /// <see cref="LaharsubClient.ReplaceStateAsync(long, System.Text.Json.Nodes.JsonObject, PublishOptions?, CancellationToken)"/>): a
    /// compare-and-set, applied only if the document is still at this version in the incarnation
    /// <see cref="ExpectedEpoch"/> (which it requires), sent as <c>If-Match: "epoch:version"</c>. When the
    /// document moved on, nothing is written and the call throws <see cref="StateConflictException"/> with
    /// the current version. <see langword="null"/> (the default) writes whatever the version.
    /// </summary>
    public long? ExpectedVersion { get; init; }

    /// <summary>
    /// The <c>Idempotency-Key</c> to send (1 to 255 characters of printable ASCII, without quotes or
    /// backslashes; a UUID is a good one). A publish the server already stored under this key, with the same
    /// topics, content type and body, within its <c>IdempotencyKeyLifetime</c> (5 minutes by default), answers
    /// the first answer and publishes nothing. <see langword="null"/> (the default) sends a new random key
    /// when <see cref="LaharsubClientOptions.IdempotentPublishes"/> is on. Give one to make a publish safe
    /// to repeat across calls, e.g. after the process restarted.
    /// </summary>
    public string? IdempotencyKey { get; init; }

    /// <summary>
    /// For <see cref="LaharsubClient.PublishManyAsync(IEnumerable{long}, ReadOnlyMemory{byte}, string, PublishOptions?, CancellationToken)"/>:
    /// the epoch each topic must have (sent as <c>topics=14~epoch</c>); a topic not in the dictionary may be
    /// any incarnation. When one is another incarnation, nothing is published anywhere.
    /// </summary>
    public IReadOnlyDictionary<long, string>? ExpectedEpochs { get; init; }
}

namespace Laharsub.Server.Storage;

/// <summary>
/// A publish's <c>Idempotency-Key</c> as a store records it: the key the client chose, and the fingerprint
/// of the request it came with (its targets, content type and body), so that the same key sent with another
/// request is told apart from a retry. The store keeps both with the publish's answer for
/// <see cref="LaharsubStoreOptions.IdempotencyKeyLifetime"/>.
/// </summary>
/// <param name="Key">The client's key: 1 to 255 characters of printable ASCII.</param>
/// <param name="Fingerprint">What identifies the request the key came with; compared as an ordinal string.</param>
public sealed record IdempotencyKey(string Key, string Fingerprint);

using Laharsub.Server.Access;
using Microsoft.AspNetCore.Http;

namespace Laharsub.Server.Transport;

/// <summary>
/// What a WebSocket session asks of the request that opened it: whether its caller may subscribe or publish
/// to a topic, whether a publish frame fits the caller's rate limit, when its access ends, and when the
/// connection is gone. On the pipeline that is the request's <see cref="HttpContext"/>; on the fast path,
/// which takes a socket only in Open access mode without a rate limit, the connection.
/// </summary>
internal interface IWebSocketCaller
{
    CancellationToken Gone { get; }

    ValueTask<bool> AllowsAsync(LaharsubOperation operation, long topicId);

    /// <summary>Takes a permit of the caller's rate limit for one publish frame; false, with the seconds to wait, when it has none.</summary>
    bool TryAcquire(out int retryAfterSeconds);

    /// <summary>When the socket's access ends (its token expires, or it is to be decided again); null: never.</summary>
    ValueTask<StreamLifetime?> LifetimeAsync();

    /// <summary>Drops the connection at once (a client that does not read its frames), ending any write still pending on it.</summary>
    void Abort();
}

using System.Net;
using Laharsub.Server.Limits;

namespace Laharsub.Server.FastPath;

/// <summary>
/// The client as the per-client caps and the rate limit count it, by the rules the pipeline's middleware and
/// rate limiter policy use: its address (behind a trusted proxy, the one <c>X-Forwarded-For</c> names) and, for
/// the rate limit, its token's subject.
/// </summary>
internal sealed partial class FastPathConnection
{
    /// <summary>The connection's peer: the client, or a proxy.</summary>
    private IPAddress? Peer => (_connection.RemoteEndPoint as IPEndPoint)?.Address;

    /// <summary>The request's client address, as the pipeline's <c>HttpContext.Connection.RemoteIpAddress</c> has it.</summary>
    private IPAddress? ClientIp => _forwardedClient ?? Peer;

    /// <summary>The client's bucket of the rate limit (<see cref="ClientRateLimit.PartitionKey(System.Security.Claims.ClaimsPrincipal, IPAddress)"/>); null while the limit is off.</summary>
    private string? RateLimitKey() => _state.RateLimit.Enabled ? ClientRateLimit.PartitionKey(_caller, ClientIp) : null;

    /// <summary>
    /// Draws the publish's permit from its client's bucket, as the pipeline's rate limiter draws one before its
    /// endpoint runs. False, having drawn nothing, when the bucket is empty: the pipeline then draws for itself and
    /// writes the 429, so that the refusal has one writer.
    /// </summary>
    private bool TryDrawPublishPermit()
    {
        if (!_state.RateLimit.TryAcquire(RateLimitKey(), out _))
        {
            _pipelineReason = "rate_limit";
            return false;
        }
        _permitDrawn = _state.RateLimit.Enabled;
        return true;
    }
}

using Microsoft.Extensions.Diagnostics.HealthChecks;
using Microsoft.Extensions.Options;

namespace Laharsub.Server.Access;

/// <summary>Reports which access mode is on, so that <c>/health</c> shows an operator whether the server is locked down.</summary>
internal sealed class AccessHealthCheck(IOptions<LaharsubAuthOptions> options) : IHealthCheck
{
    public Task<HealthCheckResult> CheckHealthAsync(HealthCheckContext context, CancellationToken cancellationToken = default)
    {
        var auth = options.Value;
        var data = new Dictionary<string, object> { ["mode"] = auth.Mode.ToString(), ["anonymous"] = auth.Anonymous ?? "" };
        return Task.FromResult(HealthCheckResult.Healthy(auth.Mode == LaharsubAuthMode.Jwt
            ? $"Access control: Jwt. Requests need a bearer token; without one they may do: {(string.IsNullOrWhiteSpace(auth.Anonymous) ? "nothing" : auth.Anonymous)}."
            : "Access control: Open. Anyone who can reach this server may create, publish, read, list and delete; set Laharsub:Auth:Mode=Jwt to require tokens.",
            data));
    }
}

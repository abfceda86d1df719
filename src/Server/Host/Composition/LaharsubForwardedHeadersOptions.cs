using System.Net;
using Laharsub.Server.FastPath;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.HttpOverrides;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;
using IPNetwork = System.Net.IPNetwork;

namespace Laharsub.Server.Host.Composition;

/// <summary>
/// The reverse proxies whose <c>X-Forwarded-For</c> the standalone server believes
/// (<c>Laharsub:ForwardedHeaders:KnownProxies</c>), so that rate limits and logs see the real client
/// behind them. From anyone else the header is ignored; with none listed (the default) it is ignored from everyone.
/// </summary>
internal sealed class LaharsubForwardedHeadersOptions
{
    public const string SectionName = "Laharsub:ForwardedHeaders";

    /// <summary>Proxy addresses (<c>10.0.0.5</c>) or networks (<c>10.0.0.0/24</c>).</summary>
    public string[] KnownProxies { get; set; } = [];

    internal sealed class Validator : IValidateOptions<LaharsubForwardedHeadersOptions>
    {
        public ValidateOptionsResult Validate(string? name, LaharsubForwardedHeadersOptions options)
        {
            var failures = (options.KnownProxies ?? [])
                .Where(entry => !IPAddress.TryParse(entry, out _) && !IPNetwork.TryParse(entry, out _))
                .Select(entry => $"Laharsub:ForwardedHeaders:KnownProxies contains '{entry}', which is neither an IP address (10.0.0.5) nor a network (10.0.0.0/24).")
                .ToList();
            return failures.Count == 0 ? ValidateOptionsResult.Success : ValidateOptionsResult.Fail(failures);
        }
    }

    /// <summary>The forwarded-headers middleware trusting exactly the listed proxies; nothing when none is listed.</summary>
    internal static void Apply(WebApplication app)
    {
        var proxies = app.Services.GetRequiredService<IOptions<LaharsubForwardedHeadersOptions>>().Value.KnownProxies ?? [];
        if (proxies.Length == 0)
        {
            return;
        }
        var forwarded = new ForwardedHeadersOptions
        {
            ForwardedHeaders = ForwardedHeaders.XForwardedFor | ForwardedHeaders.XForwardedProto,
            // Walk back through a chain of listed proxies; the first address not listed is the client.
            ForwardLimit = null,
        };
        // The defaults trust loopback; only what the operator lists is trusted.
        forwarded.KnownProxies.Clear();
        forwarded.KnownIPNetworks.Clear();
        foreach (var entry in proxies)
        {
            if (IPAddress.TryParse(entry, out var address))
            {
                forwarded.KnownProxies.Add(address);
            }
            else
            {
                forwarded.KnownIPNetworks.Add(IPNetwork.Parse(entry));
            }
        }
        app.UseForwardedHeaders(forwarded);
        // The fast path finds a request's client by the same options and the middleware's own rule.
        app.Services.GetRequiredService<FastPathConnectionHandler>().TrustForwardedHeaders(forwarded);
    }
}

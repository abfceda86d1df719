using System.Net;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.HttpOverrides;
using Microsoft.Extensions.Logging;

namespace Laharsub.Server.Limits;

/// <summary>
/// The client behind trusted reverse proxies, for a request the pipeline does not see (the fast path's): found by
/// ASP.NET Core's own forwarded-headers rule (<see cref="ForwardedHeadersMiddleware.ApplyForwarders"/>) with the very
/// options the pipeline's forwarded-headers middleware was given, so that both count a request against the same
/// client (known proxies and networks, the forward limit, where an unknown proxy or an unparsable entry stops the walk).
/// </summary>
internal sealed class ForwardedClient(ForwardedHeadersOptions options, ILoggerFactory loggers)
{
    private readonly ForwardedHeadersMiddleware _rule = new(static _ => Task.CompletedTask, loggers, Microsoft.Extensions.Options.Options.Create(options));

    /// <summary>
    /// The rule reads and writes a request: one per thread, reused (the rule runs synchronously), so that a forwarded
    /// request costs no context of its own.
    /// </summary>
    [ThreadStatic]
    private static DefaultHttpContext? t_request;

    /// <summary>
    /// The client that a connection from <paramref name="peer"/> forwards for, given its one <c>X-Forwarded-For</c>
    /// header: the peer itself when it is not a trusted proxy, as the pipeline finds it.
    /// </summary>
    public IPAddress? ClientOf(IPAddress? peer, string forwardedFor)
    {
        var request = t_request ??= new DefaultHttpContext();
        var connection = request.Connection;
        connection.RemoteIpAddress = peer;
        request.Request.Headers[options.ForwardedForHeaderName] = forwardedFor;
        try
        {
            _rule.ApplyForwarders(request);
            return connection.RemoteIpAddress;
        }
        finally
        {
            request.Request.Headers.Clear();
            connection.RemoteIpAddress = null;
            connection.RemotePort = 0;
        }
    }
}

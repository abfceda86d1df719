using Laharsub.Server.FastPath;
using Laharsub.Server.Limits;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.Extensions.Options;

namespace Laharsub.Server.Hosting;

/// <summary>
/// Kestrel's connection middleware on every endpoint: the per-client connection cap (which the standalone
/// server applies), then the fast path (when <c>Laharsub:FastPath:Enabled</c>). Composed in one place
/// because <see cref="KestrelServerOptions.ConfigureEndpointDefaults"/> keeps only the last action it is
/// given; nothing is set when neither is on, so that an application's own endpoint defaults stand.
/// </summary>
internal sealed class ConnectionMiddlewareSetup(
    ClientConnectionLimit clientLimit, FastPathConnectionHandler fastPath, IOptions<LaharsubFastPathOptions> fastPathOptions)
    : IPostConfigureOptions<KestrelServerOptions>
{
    public void PostConfigure(string? name, KestrelServerOptions options)
    {
        var limitClients = clientLimit.Limit > 0;
        var fast = fastPathOptions.Value.Enabled;
        if (!limitClients && !fast)
        {
            return;
        }
        options.ConfigureEndpointDefaults(listen =>
        {
            // Outermost first: a connection over its client's cap is marked before the fast path sees it.
            if (limitClients)
            {
                listen.Use(next => connection => clientLimit.OnConnectionAsync(connection, next));
            }
            if (fast)
            {
                listen.Use(next => connection => fastPath.OnConnectionAsync(connection, next));
            }
        });
    }
}

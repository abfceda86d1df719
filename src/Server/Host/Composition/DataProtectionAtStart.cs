using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;

namespace Laharsub.Server.Host.Composition;

/// <summary>
/// The standalone server protects nothing with ASP.NET Core's data protection: bearer tokens are checked
/// against their issuer's keys, and there are no cookies or antiforgery tokens. AddAuthentication registers
/// data protection all the same, and its hosted service loads the key ring at start, which creates a key:
/// a file in <c>$HOME/.aspnet</c> (a directory a hardened service may not write) and a warning that the
/// key is stored unencrypted. Without that service, a key is made only when something protects data.
/// </summary>
internal static class DataProtectionAtStart
{
    /// <summary>The hosted service that loads the key ring at start (internal to Microsoft.AspNetCore.DataProtection).</summary>
    internal const string KeyRingLoaderTypeName = "Microsoft.AspNetCore.DataProtection.Internal.DataProtectionHostedService";

    /// <summary>Removes the loading of the key ring at start; data protection itself stays registered.</summary>
    public static IServiceCollection LoadNoKeyRingAtStart(this IServiceCollection services)
    {
        var loaders = services.Where(service => service.ServiceType == typeof(IHostedService)
            && service.ImplementationType?.FullName == KeyRingLoaderTypeName).ToList();
        foreach (var loader in loaders)
        {
            services.Remove(loader);
        }
        return services;
    }
}

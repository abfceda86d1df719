using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.Extensions.Configuration;

namespace Laharsub.Server.Host.Composition;

/// <summary>
/// Where the standalone server listens when its operator chose nowhere: <see cref="Url"/>, the address
/// of the README's quick start.
/// </summary>
/// <remarks>
/// An address in appsettings.json would beat <c>ASPNETCORE_URLS</c> and <c>ASPNETCORE_HTTP_PORTS</c>
/// (configuration files are read after the environment), so the official container image's
/// <c>ASPNETCORE_HTTP_PORTS=8080</c> would leave the server on loopback only. Applied here instead, only
/// when no source of addresses is configured: <c>--urls</c> and <c>ASPNETCORE_URLS</c> (key <c>urls</c>),
/// <c>ASPNETCORE_HTTP_PORTS</c> and <c>ASPNETCORE_HTTPS_PORTS</c> (<c>http_ports</c>, <c>https_ports</c>),
/// and <c>Kestrel:Endpoints</c> (which Kestrel prefers, warning that it overrides <c>urls</c>).
/// </remarks>
internal static class DefaultAddress
{
    public const string Url = "http://localhost:5000";

    private static readonly string[] AddressSettings = [WebHostDefaults.ServerUrlsKey, WebHostDefaults.HttpPortsKey, WebHostDefaults.HttpsPortsKey];

    public static void ApplyUnlessConfigured(WebApplicationBuilder builder)
    {
        var configuration = builder.Configuration;
        if (AddressSettings.Any(key => !string.IsNullOrWhiteSpace(configuration[key])) || configuration.GetSection("Kestrel:Endpoints").GetChildren().Any())
        {
            return;
        }
        builder.WebHost.UseUrls(Url);
    }
}

using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;

namespace Laharsub.Server.Limits;

/// <summary>
/// Keeps the standalone server's connections within its open-file limit, and each client's within
/// <see cref="ClientLimitOptions.MaxConnectionsPerClient"/>.
/// </summary>
/// <remarks>
/// Kestrel accepts connections for as long as <c>accept</c> gives it descriptors. Once a client has
/// taken them all, <c>accept</c> fails with EMFILE at once, Kestrel's accept loop retries at once (a
/// busy loop on one thread-pool thread), and the runtime's own needs for descriptors (a pipe for a new
/// thread, a file under /proc) fail too: the process aborted with "Out of memory." or stopped accepting
/// for good (docs/architecture.md, "Open files and connections"). With <c>MaxConcurrentConnections</c>
/// below the limit Kestrel closes a connection over it right after accepting it, so descriptors never
/// run out.
/// </remarks>
internal sealed partial class ConnectionLimitSetup(
    IConfiguration configuration, ClientConnectionLimit clientLimit, IOptions<ClientLimitOptions> clientOptions,
    ILogger<ConnectionLimitSetup> logger) : IConfigureOptions<KestrelServerOptions>
{
    public const string Setting = "Kestrel:Limits:MaxConcurrentConnections";

    /// <summary>
    /// Descriptors kept for the server itself beyond those open at start: assemblies loaded later (two
    /// descriptors each), a pipe while a thread starts, a file being served, connections that Kestrel
    /// accepts only to close them at the limit (under a flood on a busy machine, hundreds wait to be
    /// closed: 256 was not enough in a CI run, and the runtime aborted), a diagnostics client. A twentieth of
    /// the limit, at least 384: 1,000 at the usual 20,000, four times what a 19,900-connection flood
    /// needed there, while one process still holds about 18,800 polls.
    /// </summary>
    public static int ReservedFiles => Math.Max(384, (int)Math.Min(int.MaxValue / 2, (OpenFileLimit.Current() ?? 0) / 20));

    /// <summary>Below this the server can hardly serve anyone, so the operator is warned to raise the limit.</summary>
    private const int TooFewConnections = 64;

    public void Configure(KestrelServerOptions options)
    {
        var (connections, derivation) = LimitConnections(options);
        var perClient = clientOptions.Value.MaxConnectionsPerClient
            ?? (connections is { } all ? (int)Math.Max(1, Math.Min(int.MaxValue, all / ClientLimitOptions.ConnectionShareDivisor)) : ClientLimitOptions.DefaultMaxConnectionsPerClient);
        if (perClient > 0)
        {
            // Hosting's ConnectionMiddlewareSetup puts the cap on every endpoint.
            clientLimit.Apply(perClient);
        }
        var perClientText = perClient == 0 ? "no limit" : perClient.ToString();
        if (derivation is { } from)
        {
            Derived(logger, connections!.Value, from.OpenFileLimit, from.OpenAtStart, ReservedFiles, perClientText);
        }
        else
        {
            PerClient(logger, perClientText, connections?.ToString() ?? "unlimited");
        }
    }

    private readonly record struct Derivation(long OpenFileLimit, int OpenAtStart);

    /// <summary>
    /// Sets <c>MaxConcurrentConnections</c> from the open-file limit unless the operator chose it; returns
    /// the limit in force, and what it was derived from if it was.
    /// </summary>
    private (long? Connections, Derivation? From) LimitConnections(KestrelServerOptions options)
    {
        var openFileLimit = OpenFileLimit.Current();
        var openNow = OpenFileLimit.OpenNow();
        long? room = openFileLimit is { } limit && openNow is { } open ? limit - open - ReservedFiles : null;
        if (configuration[Setting] is not null || options.Limits.MaxConcurrentConnections is not null)
        {
            var chosen = options.Limits.MaxConcurrentConnections;
            if (room is { } allowed && (chosen is null || chosen > allowed))
            {
                ExplicitAboveOpenFileLimit(logger, chosen?.ToString() ?? "unlimited", openFileLimit!.Value, allowed);
            }
            return (chosen, null);
        }
        if (room is not { } derived)
        {
            return (null, null);
        }
        if (derived < TooFewConnections)
        {
            OpenFileLimitTooLow(logger, openFileLimit!.Value, openNow!.Value, derived);
            derived = Math.Max(derived, 1);
        }
        options.Limits.MaxConcurrentConnections = derived;
        return (derived, new Derivation(openFileLimit!.Value, openNow!.Value));
    }
}

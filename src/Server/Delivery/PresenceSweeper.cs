using Laharsub.Server.Storage;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;

namespace Laharsub.Server.Delivery;

/// <summary>
/// Runs on every instance: removes members whose leases expired and announces their leaves. The store
/// hands each expired member to one sweep only, so with several instances each leave is announced once.
/// </summary>
internal sealed partial class PresenceSweeper(ILaharsubStore store, PresenceEvents events, PresenceLeases leases,
    IOptions<LaharsubPresenceOptions> options, TimeProvider clock, ILogger<PresenceSweeper> logger) : BackgroundService
{
    private const int Batch = 1000;

    protected override async Task ExecuteAsync(CancellationToken stoppingToken)
    {
        if (store is not IPresenceStore presence)
        {
            return;
        }
        using var timer = new PeriodicTimer(options.Value.SweepInterval, clock);
        try
        {
            while (await timer.WaitForNextTickAsync(stoppingToken).ConfigureAwait(false))
            {
                await SweepAsync(presence, stoppingToken).ConfigureAwait(false);
                await leases.RenewHeldAsync().ConfigureAwait(false);
            }
        }
        catch (OperationCanceledException) when (stoppingToken.IsCancellationRequested)
        {
            // Stopping.
        }
    }

    /// <summary>One sweep: every member expired by now, in batches.</summary>
    internal async Task SweepAsync(IPresenceStore presence, CancellationToken cancellationToken)
    {
        try
        {
            IReadOnlyList<PresenceDeparture> departures;
            do
            {
                departures = await presence.SweepAsync(clock.GetUtcNow(), Batch, cancellationToken).ConfigureAwait(false);
                foreach (var departure in departures)
                {
                    await events.LeftAsync(departure).ConfigureAwait(false);
                }
            }
            while (departures.Count == Batch);
            leases.ForgetStale();
        }
        catch (Exception exception) when (exception is not OperationCanceledException)
        {
            // The next tick sweeps again: expired members stay expired until one succeeds.
            Log.SweepFailed(logger, exception);
        }
    }
}

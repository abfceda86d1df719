using Laharsub.Server.Hosting;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;

namespace Laharsub.Server.Storage.InMemory;

/// <summary>
/// Drops expired messages from topics nobody touches, so their memory is returned even when no
/// publish or poll passes by (active topics also drop them as they are used).
/// </summary>
internal sealed partial class RetentionSweeper(ILaharsubBackend backend, IOptions<LaharsubOptions> options,
    TimeProvider timeProvider, ILogger<RetentionSweeper> logger) : BackgroundService
{
    protected override async Task ExecuteAsync(CancellationToken stoppingToken)
    {
        if (backend is not InMemoryBackend inMemory)
        {
            return;
        }
        using var timer = new PeriodicTimer(options.Value.RetentionSweepInterval, timeProvider);
        try
        {
            while (await timer.WaitForNextTickAsync(stoppingToken).ConfigureAwait(false))
            {
                try
                {
                    inMemory.Sweep();
                }
                catch (Exception exception)
                {
                    Log.SweepFailed(logger, exception);
                }
            }
        }
        catch (OperationCanceledException) when (stoppingToken.IsCancellationRequested)
        {
        }
    }

    private static partial class Log
    {
        [LoggerMessage(EventId = 100, Level = LogLevel.Error, Message = "The retention sweep failed; it will run again at the next interval.")]
        public static partial void SweepFailed(ILogger logger, Exception exception);
    }
}

using Laharsub.LoadTestClient;

using var stop = new CancellationTokenSource();
Console.CancelKeyPress += (_, e) =>
{
    // The first Ctrl-C stops the run and still reports; a second one ends the process at once.
    if (!stop.IsCancellationRequested)
    {
        e.Cancel = true;
        stop.Cancel();
    }
};
return await LoadTestCommand.RunAsync(args, Console.Out, Console.Error, stop.Token);

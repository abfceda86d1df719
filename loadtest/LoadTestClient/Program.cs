using Laharsub.LoadTestClient;
using Laharsub.LoadTestClient.Hosting;

// Socket completions run on the epoll thread instead of hopping to the thread pool: the generator's
// per-response work is short and never blocks, so this saves a handoff and CPU per request. Read once,
// before the first socket; the server process this tool starts does not inherit it.
Environment.SetEnvironmentVariable(ServerProcess.InlineCompletionsVariable, "1");

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

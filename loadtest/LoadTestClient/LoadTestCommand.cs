using System.CommandLine;
using Laharsub.LoadTestClient.Hosting;
using Laharsub.LoadTestClient.Load;
using Laharsub.LoadTestClient.Reporting;

namespace Laharsub.LoadTestClient;

/// <summary>The tool's entry: parses the command line and runs every run it names, or a worker's share of one.</summary>
internal static class LoadTestCommand
{
    /// <summary>Exit codes: 0 done (every run valid), 1 a run failed or was invalid, 2 bad options, 130 interrupted.</summary>
    public static async Task<int> RunAsync(string[] args, TextWriter output, TextWriter error, CancellationToken stop)
    {
        var commandLine = new LoadTestCommandLine();
        var parsed = commandLine.Root.Parse(args);
        if (parsed.Errors.Count > 0)
        {
            foreach (var message in LoadTestCommandLine.Describe(parsed.Errors))
            {
                error.WriteLine("error: " + message);
            }
            error.WriteLine("Run with --help for the list of options.");
            return 2;
        }
        if (parsed.Action is not null)
        {
            // --help, or a directive such as [suggest] (tab completion through dotnet-suggest).
            return await parsed.InvokeAsync(new InvocationConfiguration { Output = output, Error = error }, stop).ConfigureAwait(false);
        }
        LoadTestOptions options;
        try
        {
            options = LoadTestOptions.From(parsed, commandLine);
        }
        catch (UsageException exception)
        {
            error.WriteLine("error: " + exception.Message);
            return 2;
        }
        if (options.WorkerPlanFile is { } planFile)
        {
            return await WorkerProcesses.RunWorkerAsync(planFile, stop).ConfigureAwait(false);
        }

        var command = "dotnet run -c Release --project loadtest/LoadTestClient -- " + string.Join(' ', args);
        output.WriteLine(FileLimits.Describe(options.PublishConnections * options.Instances, options.PublishConnections, options.Processes, startsServer: options.Url is null));
        if (options.Url is null && !options.NoBuild && ServerProcess.FindRepositoryRoot() is { } repository)
        {
            try
            {
                foreach (var project in options.Targets.Select(ServerProject.Of).OfType<ServerProject>())
                {
                    await ServerProcess.BuildAsync(project, repository, output, stop).ConfigureAwait(false);
                }
            }
            catch (InvalidOperationException exception)
            {
                error.WriteLine("error: " + exception.Message);
                return 1;
            }
        }
        if (options.Feed is { } feed)
        {
            return await new Feed.StateFeed(options, feed, output).RunAsync(stop).ConfigureAwait(false);
        }
        if (options.ClientCpus is { } clientCores)
        {
            // After the build, which may use every core; the --processes workers inherit the mask.
            CpuAffinity.PinThisProcess([.. clientCores]);
            output.WriteLine($"this tool runs on core(s) {string.Join(',', clientCores)}");
        }
        var executor = new RunExecutor(options, output, command);
        var reports = new List<RunReport>();
        var failed = false;
        if (options.FindMax)
        {
            try
            {
                failed = !await new FindMaxSearch(options, executor, output, error).RunAsync(reports, stop).ConfigureAwait(false);
            }
            catch (UsageException exception)
            {
                error.WriteLine("error: " + exception.Message);
                return 2;
            }
        }
        foreach (var run in options.FindMax ? [] : options.Runs)
        {
            if (stop.IsCancellationRequested)
            {
                break;
            }
            try
            {
                var report = await executor.RunAsync(run, stop).ConfigureAwait(false);
                reports.Add(report);
                ConsoleReport.WriteRun(output, report);
                failed |= !report.Valid;
            }
            catch (UsageException exception)
            {
                error.WriteLine("error: " + exception.Message);
                return 2;
            }
            catch (Exception exception) when (exception is not OperationCanceledException || !stop.IsCancellationRequested)
            {
                error.WriteLine($"error: run {run.Name} failed: {exception.Message}");
                failed = true;
            }
            catch (OperationCanceledException)
            {
                break;
            }
        }
        if (reports.Count > 0)
        {
            ConsoleReport.WriteSummary(output, reports);
            if (options.Compare && !options.FindMax)
            {
                ConsoleReport.WriteComparison(output, reports, options.Targets.Select(RunSpec.TargetName).ToList());
            }
            if (options.FindMax)
            {
                FindMaxSearch.WriteVerdicts(output, reports, options.Targets.Select(RunSpec.TargetName).ToList(), options.ServerCpus?.Count);
            }
            if (options.OutputDirectory is { } directory)
            {
                ReportFiles.Write(directory, reports);
                output.WriteLine($"results written to {Path.GetFullPath(directory)} (report.html, summary.csv, one .json and .csv per run)");
            }
        }
        if (stop.IsCancellationRequested)
        {
            output.WriteLine("interrupted: the numbers above cover what was measured until Ctrl-C.");
            return 130;
        }
        return failed ? 1 : 0;
    }
}

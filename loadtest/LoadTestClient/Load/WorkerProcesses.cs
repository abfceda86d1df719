using System.Diagnostics;
using System.Globalization;
using System.Text.Json;
using System.Text.Json.Serialization;
using Laharsub.LoadTestClient.Measurement;

namespace Laharsub.LoadTestClient.Load;

/// <summary>JSON settings shared by the worker protocol and the report files.</summary>
internal static class LoadJson
{
    public static readonly JsonSerializerOptions Compact = new(JsonSerializerDefaults.Web) { Converters = { new JsonStringEnumConverter() } };
    public static readonly JsonSerializerOptions Indented = new(Compact) { WriteIndented = true };
}

/// <summary>
/// Child processes of this tool, each playing a contiguous range of the run's clients. They talk to
/// the parent in lines: a child writes READY once its clients are connected, PROGRESS {json} every
/// second and RESULT {json} at the end; the parent writes START {µs} (the common schedule origin on
/// the machine-wide clock) and STOP (Ctrl-C) to their standard input.
/// </summary>
internal sealed class WorkerProcesses : IAsyncDisposable
{
    private readonly List<Worker> _workers = [];
    private readonly string _planDirectory;

    private WorkerProcesses(string planDirectory) => _planDirectory = planDirectory;

    public static WorkerProcesses Start(LoadPlan plan, int processes, TextWriter log)
    {
        var directory = Directory.CreateTempSubdirectory("laharsub-loadtest-");
        var group = new WorkerProcesses(directory.FullName);
        var total = plan.TotalClients;
        for (var i = 0; i < processes; i++)
        {
            var part = plan with { FirstClient = (int)((long)total * i / processes), EndClient = (int)((long)total * (i + 1) / processes) };
            var file = Path.Combine(directory.FullName, $"worker-{i}.json");
            File.WriteAllText(file, JsonSerializer.Serialize(part, LoadJson.Compact));
            group._workers.Add(Worker.Start(i, file, log));
        }
        return group;
    }

    /// <summary>Waits until every worker has its clients connected.</summary>
    public Task WaitReadyAsync(TimeSpan timeout, CancellationToken cancellationToken) =>
        Task.WhenAll(_workers.Select(w => w.Ready.Task)).WaitAsync(timeout, cancellationToken);

    public async Task StartAsync(long startMicroseconds)
    {
        foreach (var worker in _workers)
        {
            await worker.SendAsync("START " + startMicroseconds.ToString(CultureInfo.InvariantCulture)).ConfigureAwait(false);
        }
    }

    public async Task StopAsync()
    {
        foreach (var worker in _workers)
        {
            await worker.SendAsync("STOP").ConfigureAwait(false);
        }
    }

    public ProgressSnapshot Progress()
    {
        var snapshots = _workers.Select(w => w.LastProgress).OfType<ProgressSnapshot>().ToList();
        return new ProgressSnapshot(snapshots.Sum(s => s.Clients), snapshots.Sum(s => s.Connections), snapshots.Sum(s => s.PollsWaiting),
            snapshots.Sum(s => s.Deliveries), snapshots.Sum(s => s.Publishes), snapshots.Count == 0 ? 0 : snapshots.Max(s => s.P99Ms),
            snapshots.Any(s => s.Measuring));
    }

    /// <summary>Every worker's result, merged.</summary>
    public async Task<ProcessResult> ResultAsync(TimeSpan timeout)
    {
        var results = await Task.WhenAll(_workers.Select(w => w.Result.Task)).WaitAsync(timeout).ConfigureAwait(false);
        return ProcessResult.Merge(results);
    }

    public async ValueTask DisposeAsync()
    {
        foreach (var worker in _workers)
        {
            await worker.DisposeAsync().ConfigureAwait(false);
        }
        Directory.Delete(_planDirectory, recursive: true);
    }

    /// <summary>The child side: runs a plan from a file and speaks the line protocol on stdin/stdout.</summary>
    public static async Task<int> RunWorkerAsync(string planFile, CancellationToken stop)
    {
        var plan = JsonSerializer.Deserialize<LoadPlan>(File.ReadAllText(planFile), LoadJson.Compact)
            ?? throw new InvalidDataException($"{planFile} holds no plan.");
        using var engine = new LoadEngine(plan);
        using var stopped = CancellationTokenSource.CreateLinkedTokenSource(stop);
        var start = new TaskCompletionSource<long>(TaskCreationOptions.RunContinuationsAsynchronously);
        var output = Console.Out;
        _ = Task.Run(async () =>
        {
            while (await Console.In.ReadLineAsync().ConfigureAwait(false) is { } line)
            {
                if (line.StartsWith("START ", StringComparison.Ordinal))
                {
                    start.TrySetResult(long.Parse(line[6..], CultureInfo.InvariantCulture));
                }
                else if (line == "STOP")
                {
                    await stopped.CancelAsync().ConfigureAwait(false);
                }
            }
            // The parent is gone: stop rather than load a server nobody measures.
            await stopped.CancelAsync().ConfigureAwait(false);
        }, CancellationToken.None);

        using var progress = new PeriodicTimer(TimeSpan.FromSeconds(1));
        var reporting = Task.Run(async () =>
        {
            while (await progress.WaitForNextTickAsync().ConfigureAwait(false))
            {
                lock (output)
                {
                    output.WriteLine("PROGRESS " + JsonSerializer.Serialize(EngineSession.Progress(engine), LoadJson.Compact));
                    output.Flush();
                }
            }
        }, CancellationToken.None);

        var result = await EngineSession.RunAsync(engine, async token =>
        {
            lock (output)
            {
                output.WriteLine("READY");
                output.Flush();
            }
            return await start.Task.WaitAsync(token).ConfigureAwait(false);
        }, stopped.Token).ConfigureAwait(false);
        progress.Dispose();
        await reporting.ConfigureAwait(false);
        lock (output)
        {
            output.WriteLine("RESULT " + JsonSerializer.Serialize(result, LoadJson.Compact));
            output.Flush();
        }
        return 0;
    }

    private sealed class Worker : IAsyncDisposable
    {
        private readonly Process _process;

        private Worker(Process process) => _process = process;

        public TaskCompletionSource Ready { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);
        public TaskCompletionSource<ProcessResult> Result { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);
        public ProgressSnapshot? LastProgress { get; private set; }

        public static Worker Start(int index, string planFile, TextWriter log)
        {
            var start = new ProcessStartInfo(Environment.ProcessPath ?? "dotnet")
            {
                UseShellExecute = false,
                RedirectStandardInput = true,
                RedirectStandardOutput = true,
                RedirectStandardError = true,
            };
            // Under 'dotnet run' or 'dotnet X.dll' the process is the dotnet host: name the assembly.
            if (Path.GetFileNameWithoutExtension(start.FileName) == "dotnet")
            {
                start.ArgumentList.Add(typeof(WorkerProcesses).Assembly.Location);
            }
            start.ArgumentList.Add("--worker");
            start.ArgumentList.Add(planFile);
            var process = Process.Start(start) ?? throw new InvalidOperationException("Could not start a worker process.");
            var worker = new Worker(process);
            process.OutputDataReceived += (_, e) => worker.OnLine(index, e.Data, log);
            process.ErrorDataReceived += (_, e) => { if (e.Data is not null) log.WriteLine($"[worker {index}] {e.Data}"); };
            process.BeginOutputReadLine();
            process.BeginErrorReadLine();
            return worker;
        }

        public async Task SendAsync(string line)
        {
            if (!_process.HasExited)
            {
                await _process.StandardInput.WriteLineAsync(line).ConfigureAwait(false);
                await _process.StandardInput.FlushAsync().ConfigureAwait(false);
            }
        }

        public async ValueTask DisposeAsync()
        {
            try
            {
                _process.StandardInput.Close();
                await _process.WaitForExitAsync().WaitAsync(TimeSpan.FromSeconds(20)).ConfigureAwait(false);
            }
            catch (Exception exception) when (exception is TimeoutException or IOException or InvalidOperationException)
            {
                _process.Kill(entireProcessTree: true);
            }
            _process.Dispose();
        }

        private void OnLine(int index, string? line, TextWriter log)
        {
            if (line is null)
            {
                // End of its output (it exited): whatever it has not said by now, it never will.
                Ready.TrySetException(new InvalidOperationException($"Worker {index} ended before it was ready; see the [worker {index}] lines above."));
                Result.TrySetException(new InvalidOperationException($"Worker {index} ended without a result; see the [worker {index}] lines above."));
                return;
            }
            try
            {
                if (line == "READY")
                {
                    Ready.TrySetResult();
                }
                else if (line.StartsWith("PROGRESS ", StringComparison.Ordinal))
                {
                    LastProgress = JsonSerializer.Deserialize<ProgressSnapshot>(line.AsSpan(9), LoadJson.Compact);
                }
                else if (line.StartsWith("RESULT ", StringComparison.Ordinal))
                {
                    Result.TrySetResult(JsonSerializer.Deserialize<ProcessResult>(line.AsSpan(7), LoadJson.Compact)!);
                }
                else
                {
                    log.WriteLine($"[worker {index}] {line}");
                }
            }
            catch (JsonException exception)
            {
                log.WriteLine($"[worker {index}] unreadable line ({exception.Message}): {line}");
            }
        }
    }
}

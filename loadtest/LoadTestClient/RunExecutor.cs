using System.Globalization;
using System.Net.Http.Json;
using System.Text;
using System.Text.Json;
using Laharsub.LoadTestClient.Hosting;
using Laharsub.LoadTestClient.Load;
using Laharsub.LoadTestClient.Measurement;
using Laharsub.LoadTestClient.Reporting;

namespace Laharsub.LoadTestClient;

/// <summary>
/// Runs one configuration at one topic count end to end: server (started or given), topics, the
/// clients in this process or in workers, a progress line a second, and the report.
/// </summary>
internal sealed class RunExecutor(LoadTestOptions options, TextWriter output, string command)
{
    public async Task<RunReport> RunAsync(RunSpec spec, CancellationToken stop)
    {
        var clients = spec.Topics * spec.ClientsPerTopic;
        var (soft, hard) = FileLimits.Read();
        CheckFileLimits(options, clients, spec.Target, soft, hard);
        var loadAverage = ReadLoadAverage();
        var startedAt = DateTimeOffset.UtcNow;
        var publishers = spec.Topics * spec.PublishersOfEachTopic;
        output.WriteLine();
        output.WriteLine($"== {spec.Name}: {spec.Topics} topics x {spec.ClientsPerTopic} clients = {clients} clients, "
            + (publishers == clients ? "each" : $"{publishers} of them") + " publishing every "
            + $"{spec.Interval.TotalSeconds.ToString(CultureInfo.InvariantCulture)} s ({publishers / spec.Interval.TotalSeconds:0.#}/s), "
            + $"{FormatName(spec)}, {options.Processes} process(es){(ProductionText(options.Jwt is not null, options.Origin, options.KeyedPublishes) is { } production ? ", " + production : "")}; load average {loadAverage}");

        var servers = new List<ITargetServer>();
        RedisProcess? redis = null;
        try
        {
            var instances = new List<Uri>();
            var sampled = new List<SampledProcess>();
            var commandLines = new List<string>();
            if (options.Url is null)
            {
                var repository = ServerProcess.FindRepositoryRoot()
                    ?? throw new UsageException("Cannot find Laharsub.sln above the current directory to start the server from; run from the repository or give --url.");
                if (spec.Target == TargetKind.Nchan)
                {
                    // nchan_subscriber_timeout ends streams too (a 408 event, a close frame): a run of streams holds
                    // them open for its whole length, as Laharsub does (0: no timeout).
                    var subscriberTimeout = Transports.IsStream(spec.Transport) ? 0 : options.PollTimeoutSeconds;
                    // Pinned, nginx gets one worker per core it may use, as nchan's per-core measurements do.
                    servers.Add(await NchanProcess.StartAsync(repository, subscriberTimeout, output, stop,
                        workerProcesses: options.ServerCpus?.Count, launcher: ServerLauncher).ConfigureAwait(false));
                }
                else if (spec.Target == TargetKind.Floor)
                {
                    // --server-setting configures Laharsub; the floor has none. --server-env (runtime settings) applies to both.
                    servers.Add(await ServerProcess.StartAsync(ServerProject.Floor, repository, [], options.ServerEnvironment, output, stop, ServerLauncher).ConfigureAwait(false));
                }
                else if (options.Servers is not { } count)
                {
                    servers.Add(await ServerProcess.StartAsync(ServerProject.Laharsub, repository, ServerSettings(spec), options.ServerEnvironment, output, stop, ServerLauncher).ConfigureAwait(false));
                }
                else
                {
                    string redisConfiguration;
                    if (options.Redis is { } given)
                    {
                        redisConfiguration = given;
                    }
                    else
                    {
                        redis = await RedisProcess.StartAsync(output, stop).ConfigureAwait(false);
                        redisConfiguration = redis.Configuration;
                        output.WriteLine($"redis: {redis.CommandLine} (pid {redis.Pid})");
                        commandLines.Add(redis.CommandLine);
                    }
                    // A prefix of its own per run: a shared --redis may hold an earlier run's topics.
                    var settings = ServerSettings(spec)
                        .Append($"--Laharsub:Redis:Configuration={redisConfiguration}")
                        .Append($"--Laharsub:Redis:KeyPrefix=lt{Guid.NewGuid().ToString("N")[..8]}:")
                        .ToList();
                    for (var i = 0; i < count; i++)
                    {
                        servers.Add(await ServerProcess.StartAsync(ServerProject.Laharsub, repository, settings, options.ServerEnvironment, output, stop, ServerLauncher).ConfigureAwait(false));
                    }
                }
                for (var i = 0; i < servers.Count; i++)
                {
                    var server = servers[i];
                    instances.Add(server.BaseAddress);
                    sampled.Add(new SampledProcess(servers.Count == 1 ? "server" : $"server{i + 1}", new ProcessSampler(server.Pid, server.HasWorkerProcesses)));
                    commandLines.Add(server.CommandLine);
                    output.WriteLine($"{sampled[^1].Name}: {server.CommandLine} (pid {server.Pid})");
                }
                if (redis is not null)
                {
                    sampled.Add(new SampledProcess("redis", new ProcessSampler(redis.Pid)));
                }
            }
            else
            {
                instances.AddRange(options.Urls);
                for (var i = 0; i < options.ServerPids.Count; i++)
                {
                    sampled.Add(new SampledProcess(options.Urls.Count == 1 ? "server" : $"server{i + 1}",
                        new ProcessSampler(options.ServerPids[i], includeChildren: spec.Target == TargetKind.Nchan)));
                }
            }
            foreach (var process in sampled)
            {
                process.Sampler.SampleIdle(MonotonicClock.NowMicroseconds);
            }
            // nchan's channels need no creating: each run reads and writes channels of its own, fresh names.
            var apis = instances.Select(root => spec.Target.SpeaksLaharsub() ? new Uri(root, "ps/") : root).ToArray();
            using var setup = SetupClient(options);
            var topicIds = spec.Target.SpeaksLaharsub()
                ? await CreateTopicsAsync(setup, apis, spec.Topics, options.Presence, stop).ConfigureAwait(false)
                : Enumerable.Range(1, spec.Topics).Select(i => (long)i).ToArray();
            var plan = new LoadPlan
            {
                ApiAddress = apis[0],
                InstanceAddresses = apis.Length > 1 ? apis : [],
                Target = spec.Target,
                Transport = spec.Transport,
                LongPollPercent = options.LongPollPercent,
                Presence = options.Presence,
                Jwt = options.Jwt,
                Origin = options.Origin,
                KeyedPublishes = options.KeyedPublishes,
                ChannelPrefix = $"lt{Guid.NewGuid():N}"[..10] + "-",
                TopicIds = topicIds,
                ClientsPerTopic = spec.ClientsPerTopic,
                PublishersPerTopic = spec.PublishersPerTopic,
                TopicsPerClient = options.TopicsPerClient,
                PublishInterval = spec.Interval,
                MessageSize = options.MessageSize,
                ConflateMilliseconds = options.ConflateMilliseconds,
                Format = options.Format,
                Warmup = options.Warmup,
                Duration = options.Duration,
                PollTimeoutSeconds = options.PollTimeoutSeconds,
                SourceAddresses = options.SourceAddresses,
                PublishConnections = options.PublishConnections,
                MaxScheduleLag = options.MaxScheduleLag,
            };
            var (result, window) = await RunClientsAsync(plan, spec, sampled, stop).ConfigureAwait(false);
            if (options.Url is not null)
            {
                await DeleteTopicsAsync(setup, plan).ConfigureAwait(false);
            }
            return BuildReport(spec, plan, result, sampled, window, startedAt, loadAverage, commandLines.Count == 0 ? null : string.Join(" ; ", commandLines));
        }
        finally
        {
            foreach (var server in servers)
            {
                await server.DisposeAsync().ConfigureAwait(false);
            }
            if (redis is not null)
            {
                await redis.DisposeAsync().ConfigureAwait(false);
            }
        }
    }

    /// <summary>What of production's configuration a run has, as the reports say it; null for none.</summary>
    internal static string? ProductionText(bool jwt, string? origin, bool keyedPublishes)
    {
        string[] parts = [.. new[] { jwt ? "Jwt mode (a token per client)" : null, origin is null ? null : "Origin " + origin,
            keyedPublishes ? "Idempotency-Key on every publish" : null }.OfType<string>()];
        return parts.Length == 0 ? null : string.Join(", ", parts);
    }

    /// <summary>A process sampled during the run, named as the reports name it (server, server2, redis).</summary>
    private sealed record SampledProcess(string Name, ProcessSampler Sampler);

    /// <summary>
    /// How the run's deliveries are read, for the header and the report: Laharsub's poll format, nchan's
    /// one message per answer, or the stream (and where its publishes go).
    /// </summary>
    private string FormatName(RunSpec spec) => FormatName(spec.Target, spec.Transport, options.Format);

    internal static string FormatName(TargetKind target, TransportKind transport, WireFormatKind format) => (target, transport) switch
    {
        (TargetKind.Nchan, TransportKind.LongPoll) => "nchan long poll",
        (TargetKind.Nchan, TransportKind.Sse) => "nchan eventsource, publishing with POST /pub",
        (TargetKind.Nchan, TransportKind.WebSocket) => "nchan websocket (ws+meta.nchan), publishing with POST /pub",
        (_, TransportKind.Sse) => "sse: JSON events, publishing with POST",
        (_, TransportKind.WebSocket) => "websocket: laharsub.v1 frames, publishing on the socket",
        _ => format.ToString().ToLowerInvariant(),
    };

    private async Task<(ProcessResult Result, (long Start, long End) Window)> RunClientsAsync(LoadPlan plan, RunSpec spec, IReadOnlyList<SampledProcess> sampled, CancellationToken stop)
    {
        var warmupMicroseconds = (long)(plan.Warmup.TotalMilliseconds * 1000);
        var durationMicroseconds = (long)(plan.Duration.TotalMilliseconds * 1000);
        long start = 0;
        using var progressStop = new CancellationTokenSource();
        Task? progress = null;
        void StartProgress(Func<ProgressSnapshot> snapshot, long origin) =>
            progress = ReportProgressAsync(spec, snapshot, sampled, origin, warmupMicroseconds, durationMicroseconds, progressStop.Token);

        ProcessResult result;
        if (options.Processes == 1)
        {
            using var clientGc = options.ClientGcLogPath is { } gcLog ? new ClientGcLog(CreateDirectoryOf(gcLog)) : null;
            using var engine = new LoadEngine(plan)
            {
                SlowLog = options.SlowLogPath is null ? null : new SlowLog((long?)options.SlowThreshold?.TotalMicroseconds),
            };
            output.WriteLine($"connecting {engine.ClientCount} clients...");
            result = await EngineSession.RunAsync(engine, _ =>
            {
                start = MonotonicClock.NowMicroseconds + 200_000;
                StartProgress(() => EngineSession.Progress(engine), start);
                return Task.FromResult(start);
            }, stop).ConfigureAwait(false);
            if (engine.SlowLog is { } slow && clientGc is not null)
            {
                WriteSlowLog(slow, engine.Latency, options.SlowLogPath!, clientGc);
            }
        }
        else
        {
            await using var workers = WorkerProcesses.Start(plan, options.Processes, output);
            output.WriteLine($"connecting {plan.TotalClients} clients in {options.Processes} processes...");
            using var stopRegistration = stop.Register(() => _ = workers.StopAsync());
            try
            {
                await workers.WaitReadyAsync(TimeSpan.FromMinutes(5), stop).ConfigureAwait(false);
                // Far enough ahead that every worker has read the line before its first publish is due.
                start = MonotonicClock.NowMicroseconds + 500_000;
                await workers.StartAsync(start).ConfigureAwait(false);
                StartProgress(workers.Progress, start);
            }
            catch (OperationCanceledException) when (stop.IsCancellationRequested)
            {
            }
            result = await workers.ResultAsync(plan.Warmup + plan.Duration + TimeSpan.FromMinutes(2)).ConfigureAwait(false);
        }
        await progressStop.CancelAsync().ConfigureAwait(false);
        if (progress is not null)
        {
            await progress.ConfigureAwait(false);
        }
        var windowStart = start + warmupMicroseconds;
        return (result, (windowStart, windowStart + (long)(result.WindowSeconds * 1e6)));
    }

    private void WriteSlowLog(SlowLog slow, LatencyHistogram window, string path, ClientGcLog clientGc)
    {
        var threshold = slow.ThresholdMicroseconds(window);
        int written;
        using (var writer = new StreamWriter(CreateDirectoryOf(path)))
        {
            written = slow.Write(writer, threshold);
        }
        output.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"slow log: {written} deliveries at or above {threshold / 1000.0:0.###} ms ({(slow.ByPercentile ? "the window's 99th percentile" : "--slow-ms")}) in {path}; ")
            + $"this tool's {clientGc.Pauses} GC pauses in {clientGc.Path}");
        if (slow.Dropped > 0)
        {
            output.WriteLine($"slow log: {slow.Dropped} more slow deliveries were not kept (at most a million are): raise --slow-ms.");
        }
    }

    private static string CreateDirectoryOf(string path)
    {
        if (Path.GetDirectoryName(Path.GetFullPath(path)) is { } directory)
        {
            Directory.CreateDirectory(directory);
        }
        return path;
    }

    private async Task ReportProgressAsync(RunSpec spec, Func<ProgressSnapshot> snapshot, IReadOnlyList<SampledProcess> sampled, long start,
        long warmup, long duration, CancellationToken cancellationToken)
    {
        using var timer = new PeriodicTimer(TimeSpan.FromSeconds(1));
        long lastDeliveries = 0, lastPublishes = 0;
        var lastSamples = new ProcessSample?[sampled.Count];
        try
        {
            while (await timer.WaitForNextTickAsync(cancellationToken).ConfigureAwait(false))
            {
                var now = MonotonicClock.NowMicroseconds;
                var p = snapshot();
                var elapsed = now - start;
                var phase = elapsed < 0 ? "starting"
                    : elapsed < warmup ? $"warm-up {elapsed / 1_000_000}/{warmup / 1_000_000} s"
                    : elapsed < warmup + duration ? $"measuring {(elapsed - warmup) / 1_000_000}/{duration / 1_000_000} s"
                    : "draining";
                var serverText = new System.Text.StringBuilder();
                for (var i = 0; i < sampled.Count; i++)
                {
                    if (sampled[i].Sampler.Sample(now) is not { } s)
                    {
                        continue;
                    }
                    var cpu = lastSamples[i] is { } l ? (s.CpuSeconds - l.CpuSeconds) / ((s.AtMicroseconds - l.AtMicroseconds) / 1e6) * 100 : 0;
                    serverText.Append(CultureInfo.InvariantCulture, $"  {sampled[i].Name} CPU {cpu,3:0}% {(s.Processes > 1 ? "PSS" : "RSS")} {s.RssBytes / 1048576.0:0} MiB");
                    lastSamples[i] = s;
                }
                output.WriteLine($"[{spec.Name}] {phase,-18} connections {p.Connections,6}  {(Transports.IsStream(spec.Transport) ? "streams open " : "polls waiting")} {p.PollsWaiting,6}  "
                    + $"deliveries/s {p.Deliveries - lastDeliveries,7}  publishes/s {p.Publishes - lastPublishes,6}  "
                    + $"p99 {(p.Measuring ? "" : "(warm-up) ")}{p.P99Ms:0.00} ms{serverText}");
                lastDeliveries = p.Deliveries;
                lastPublishes = p.Publishes;
            }
        }
        catch (OperationCanceledException)
        {
        }
    }

    private RunReport BuildReport(RunSpec spec, LoadPlan plan, ProcessResult result, IReadOnlyList<SampledProcess> sampled, (long Start, long End) window,
        DateTimeOffset startedAt, string loadAverage, string? serverCommand)
    {
        var seconds = Math.Max(result.WindowSeconds, 1e-9);
        var scheduleLag = LatencySummary.From(result.ScheduleLag);
        var expected = result.PublishesAccepted * plan.SubscribersPerTopic;
        string? invalid = null;
        var refused = DeliveryCounters.RefusalStatuses.Select(status => status.ToString(CultureInfo.InvariantCulture))
            .Where(result.HttpErrors.ContainsKey).Select(status => $"{status}: {result.HttpErrors[status]}").ToList();
        if (refused.Count > 0)
        {
            // First: a refused run may still have measured something, which would pass for the load asked for.
            invalid = $"the server refused requests ({string.Join(", ", refused)}): "
                + (plan.Jwt is null ? "it wants tokens (--jwt-key)" : "the tokens do not fit its Laharsub:Auth settings") + ", so these numbers do not describe the load asked for";
        }
        else if (result.Latency.Count == 0)
        {
            invalid = "nothing was measured";
        }
        else if (scheduleLag.P99Ms > plan.MaxScheduleLag.TotalMilliseconds)
        {
            invalid = $"the generator fell behind its own schedule: 99th percentile publish start lag {scheduleLag.P99Ms:0.###} ms "
                + $"> {plan.MaxScheduleLag.TotalMilliseconds:0.###} ms, so these numbers describe the client, not the server";
        }
        // Each instance holds its share of the subscribers' connections; redis-server holds none of them.
        var usages = sampled.Select(p => ServerUsageOf(p, window, result.DeliveriesMeasured, p.Name == "redis" ? 0 : plan.TotalClients / plan.InstanceCount))
            .OfType<ServerUsage>().ToList();
        return new RunReport
        {
            Name = spec.Name,
            Target = RunSpec.TargetName(spec.Target),
            Configuration = spec.Configuration,
            Topics = spec.Topics,
            ClientsPerTopic = spec.ClientsPerTopic,
            PublishersPerTopic = plan.PublishersOfEachTopic,
            TopicsPerClient = plan.TopicsPerClient,
            Clients = plan.TotalClients,
            IntervalSeconds = spec.Interval.TotalSeconds,
            MessageSize = plan.MessageSize,
            Format = FormatName(spec),
            Transport = Transports.Name(spec.Transport),
            LongPollPercent = plan.LongPollPercent,
            Presence = plan.Presence,
            Jwt = plan.Jwt is not null,
            Origin = plan.Origin,
            KeyedPublishes = plan.KeyedPublishes,
            PublishVia = Transports.PublishesOnSocket(spec.Target, spec.Transport) ? "websocket" : "http",
            WarmupSeconds = plan.Warmup.TotalSeconds,
            DurationSeconds = plan.Duration.TotalSeconds,
            Processes = options.Processes,
            StartedAt = startedAt,
            Command = command,
            ServerCommand = serverCommand,
            TargetPublishesPerSecond = plan.TargetPublishesPerSecond,
            AchievedPublishesPerSecond = result.PublishesAccepted / seconds,
            DeliveriesExpected = expected,
            DeliveriesReceived = result.DeliveriesMeasured,
            Latency = LatencySummary.From(result.Latency),
            LatencyFromSchedule = LatencySummary.From(result.LatencyFromSchedule),
            ScheduleLag = scheduleLag,
            PublishRoundTrip = LatencySummary.From(result.PublishRoundTrip),
            Instances = plan.InstanceCount,
            Backend = options.Servers is null ? (options.Url is null ? "in-memory" : "as given") : "redis",
            Server = usages.Count <= 1 ? usages.FirstOrDefault() : ServerUsage.Total(usages),
            ServerProcesses = usages,
            ClientCpuPercentOfOneCore = result.CpuSeconds / seconds * 100,
            ClientCpuMicrosecondsPerDelivery = result.DeliveriesMeasured == 0 ? 0 : result.CpuSeconds * 1e6 / result.DeliveriesMeasured,
            BytesSentPerSecond = result.BytesSent / (plan.Warmup.TotalSeconds + seconds),
            BytesReceivedPerSecond = result.BytesReceived / (plan.Warmup.TotalSeconds + seconds),
            Valid = invalid is null,
            InvalidReason = invalid,
            Totals = result,
            LoadAverage = loadAverage,
        };
    }

    /// <param name="connections">The run's subscribers, each one connection: what memory per connection divides by.</param>
    private static ServerUsage? ServerUsageOf(SampledProcess process, (long Start, long End) window, long deliveries, int connections)
    {
        var sampler = process.Sampler;
        var samples = sampler.Within(window.Start - 600_000, window.End + 600_000);
        if (samples.Count < 2)
        {
            return null;
        }
        var cpuSeconds = samples[^1].CpuSeconds - samples[0].CpuSeconds;
        var seconds = (samples[^1].AtMicroseconds - samples[0].AtMicroseconds) / 1e6;
        // Deliveries of the window, scaled to the sampled span (whole seconds around the window).
        var perSecond = deliveries / Math.Max((window.End - window.Start) / 1e6, 1e-9);
        var rssMean = samples.Average(s => s.RssBytes);
        return new ServerUsage(sampler.Pid, samples.Max(s => s.Processes),
            rssMean / 1048576.0,
            samples.Max(s => s.RssBytes) / 1048576.0,
            cpuSeconds / seconds * 100,
            perSecond == 0 ? 0 : cpuSeconds / seconds / perSecond * 1e6,
            sampler.Samples.Select(s => new[] { (s.AtMicroseconds - window.Start) / 1e6, s.RssBytes / 1048576.0 }).ToList())
        {
            Name = process.Name,
            IdleRssMiB = sampler.Idle?.RssBytes / 1048576.0,
            MemoryPerConnectionKiB = sampler.Idle is { } idle && connections > 0 ? (rssMean - idle.RssBytes) / 1024.0 / connections : null,
        };
    }

    /// <summary>
    /// Refuses a run that cannot fit the per-process open-file limit: every poll is a connection, on a
    /// generator process and on the server instance it talks to.
    /// </summary>
    internal static void CheckFileLimits(LoadTestOptions options, int clients, TargetKind target, long soft, long hard)
    {
        var instances = options.Instances;
        var perProcess = (clients + options.Processes - 1) / options.Processes;
        // A generator process keeps a pool of publish connections to each instance.
        var publishConnections = options.PublishConnections * instances;
        var fit = FileLimits.ClientsPerProcess(soft, publishConnections);
        if (perProcess > fit)
        {
            throw new UsageException($"{clients} clients in {options.Processes} generator process(es) means {perProcess} connections per process, but the "
                + $"open-file limit ({soft}) fits {fit} clients per process (one connection each, plus {options.PublishConnections} for publishing to each of "
                + $"{instances} instance(s) and {FileLimits.Reserve} for the runtime). Use --processes {(clients + fit - 1) / Math.Max(fit, 1)} or more. {FileLimits.HowToRaise(soft, hard)}");
        }
        if (options.Url is null && target.SpeaksLaharsub())
        {
            // Each server started here inherits this limit and holds the polls of its share of the
            // clients and the publish connections of every generator process.
            var perServer = (clients + instances - 1) / instances;
            var serverFit = FileLimits.ServerClientsPerProcess(soft, options.PublishConnections, options.Processes);
            if (perServer > serverFit)
            {
                var needed = (clients + serverFit - 1) / Math.Max(serverFit, 1);
                var how = target == TargetKind.Floor ? "The floor is one process: run fewer clients against it"
                    : options.Servers is null ? $"Spread them over several server processes on Redis with --servers {needed} (or more)"
                    : $"Use --servers {needed} or more";
                throw new UsageException($"{clients} clients on {instances} server process(es) means about {perServer} polls per server process, "
                    + $"but the open-file limit ({soft}) fits about {serverFit} per server process here ({options.PublishConnections} publish connections from "
                    + $"each of {options.Processes} generator process(es), {FileLimits.ToolConnections} for this tool's own requests and about {FileLimits.Reserve} files open at its start). {how}. {FileLimits.HowToRaise(soft, hard)}");
            }
        }
    }

    /// <summary>taskset for a pinned server (--server-cpus); null: it runs anywhere.</summary>
    private IReadOnlyList<string>? ServerLauncher => options.ServerCpus is { } cores ? CpuAffinity.Launcher([.. cores]) : null;

    private List<string> ServerSettings(RunSpec spec) => ServerSettings(options, spec, FileLimits.Read().Soft);

    internal static List<string> ServerSettings(LoadTestOptions options, RunSpec spec, long openFileLimit)
    {
        var settings = new List<string>
        {
            "--Laharsub:MessageTimeToLive=00:00:15",
            $"--Laharsub:MaxTopics={Math.Max(100_000, spec.Topics * 2)}",
            $"--Laharsub:MaxSubscriptionsPerPoll={Math.Max(1000, options.TopicsPerClient)}",
            $"--Laharsub:MaxPollTimeout=00:{Math.Max(2, options.PollTimeoutSeconds / 60 + 1):00}:00",
        };
        // More polls than the server's own reserve leaves room for (seed3-3900 on one process): size its
        // connection limit to the run (FileLimits.ServerClientsPerProcess); the server logs that it is above its default.
        var polls = (spec.Topics * (long)spec.ClientsPerTopic + options.Instances - 1) / options.Instances;
        if (polls > FileLimits.ServerDefaultClientsPerProcess(openFileLimit, options.PublishConnections, options.Processes))
        {
            settings.Add($"--Kestrel:Limits:MaxConcurrentConnections={FileLimits.ServerConnectionLimit(polls, options.PublishConnections, options.Processes)}");
        }
        // Production's configuration set to match the clients (one flag switches the whole run); --server-setting, after, may still override it.
        if (options.Jwt is { } jwt)
        {
            settings.Add("--Laharsub:Auth:Mode=Jwt");
            settings.Add($"--Laharsub:Auth:Jwt:SigningKey={jwt.Key}");
            settings.Add($"--Laharsub:Auth:Jwt:Issuer={jwt.Issuer}");
            settings.Add($"--Laharsub:Auth:Jwt:Audience={jwt.Audience}");
        }
        if (options.Origin is { } origin)
        {
            settings.Add($"--Laharsub:Cors:AllowedOrigins:0={origin}");
        }
        settings.AddRange(options.ServerSettings.Select(s => "--Laharsub:" + s));
        return settings;
    }

    /// <summary>
    /// The client of this tool's own requests before and after the run, with what every request of the run
    /// carries: in Jwt mode a token that may create and delete topics, and the Origin.
    /// </summary>
    internal static HttpClient SetupClient(LoadTestOptions options)
    {
        var client = new HttpClient { Timeout = TimeSpan.FromSeconds(30) };
        if (options.Jwt is { } jwt)
        {
            client.DefaultRequestHeaders.Authorization = new System.Net.Http.Headers.AuthenticationHeaderValue("Bearer", jwt.SetupToken(options.Warmup + options.Duration));
        }
        if (options.Origin is { } origin)
        {
            client.DefaultRequestHeaders.TryAddWithoutValidation("Origin", origin);
        }
        return client;
    }

    /// <summary>Creates the run's topics round robin over the instances: a topic is not tied to the instance it was created on.</summary>
    private static async Task<long[]> CreateTopicsAsync(HttpClient client, Uri[] apis, int count, bool presence, CancellationToken cancellationToken)
    {
        var ids = new long[count];
        await Parallel.ForAsync(0, count, new ParallelOptions { MaxDegreeOfParallelism = 16, CancellationToken = cancellationToken }, async (i, token) =>
        {
            using var body = presence ? new StringContent("""{"presence":true}""", Encoding.UTF8, "application/json") : null;
            using var response = await client.PostAsync(new Uri(apis[i % apis.Length], "topics"), body, token).ConfigureAwait(false);
            if (!response.IsSuccessStatusCode)
            {
                var refused = (int)response.StatusCode is 401 or 403
                    ? " (in Jwt mode, --jwt-key, --jwt-issuer and --jwt-audience must be the server's Laharsub:Auth:Jwt:SigningKey, Issuer and Audience)" : "";
                throw new InvalidOperationException($"Creating topic {i + 1} of {count} failed{refused}: {(int)response.StatusCode} {await response.Content.ReadAsStringAsync(token).ConfigureAwait(false)}");
            }
            var created = await response.Content.ReadFromJsonAsync<JsonElement>(token).ConfigureAwait(false);
            ids[i] = created.GetProperty("topicId").GetInt64();
        }).ConfigureAwait(false);
        Array.Sort(ids);
        return ids;
    }

    private static async Task DeleteTopicsAsync(HttpClient client, LoadPlan plan)
    {
        // Laharsub: DELETE /ps/topics/{id}; nchan: DELETE /pub?id=CHANNEL on the publisher location.
        var protocol = TargetProtocol.For(plan);
        await Parallel.ForEachAsync(plan.TopicIds, new ParallelOptions { MaxDegreeOfParallelism = 16 }, async (id, token) =>
        {
            using var response = await client.DeleteAsync(new Uri(plan.ApiAddress, protocol.PublishPath(id)), token).ConfigureAwait(false);
        }).ConfigureAwait(false);
    }

    private static string ReadLoadAverage()
    {
        try
        {
            return string.Join(' ', File.ReadAllText("/proc/loadavg").Split(' ').Take(3));
        }
        catch (IOException)
        {
            return "unknown";
        }
    }
}

using System.CommandLine;
using Laharsub.LoadTestClient.Feed;
using Laharsub.LoadTestClient.Load;

namespace Laharsub.LoadTestClient;

/// <summary>A bad command line: the message says what is wrong and what to write instead.</summary>
internal sealed class UsageException(string message) : Exception(message);

/// <summary>One configuration of the original's measurements and the topic counts it is swept over by default.</summary>
internal sealed record Preset(string Name, int ClientsPerTopic, TimeSpan Interval, int[] DefaultTopics, string Description, int? PublishersPerTopic = null)
{
    /// <summary>Caplin Liberator's test feed on state topics (issue 36): runs of its own (<see cref="StateFeed"/>), not the chat workload.</summary>
    public const string Liberator = "liberator";

    public static readonly Preset[] All =
    [
        new("seed1", 2, TimeSpan.FromSeconds(1), [50, 100, 200, 400], "2 clients per topic, each publishing every 1 s"),
        new("seed2", 2, TimeSpan.FromSeconds(5), [200, 1000], "2 clients per topic, each publishing every 5 s"),
        new("seed3", 5, TimeSpan.FromSeconds(15), [400, 1000, 2000, 3900], "5 clients per topic, each publishing every 15 s"),
        // A chat room or a live dashboard: one publisher, thousands of readers of the same topic, so
        // that every message fans out to 2,000 waiting polls at once.
        new("broadcast", 2000, TimeSpan.FromSeconds(1), [5], "2,000 clients per topic, one of which publishes every 1 s", PublishersPerTopic: 1),
        new(Liberator, 1, TimeSpan.FromSeconds(1), [50], "50 subjects updated every 1 s with six fields, one subscriber holding all of them"),
    ];
}

/// <summary>One run of a sweep: a configuration at one topic count, against one target.</summary>
internal sealed record RunSpec(string Configuration, int Topics, int ClientsPerTopic, TimeSpan Interval)
{
    /// <summary>How many of each topic's clients publish; null: all of them.</summary>
    public int? PublishersPerTopic { get; init; }

    public TargetKind Target { get; init; } = TargetKind.Laharsub;

    /// <summary>How the clients receive; a run of streams is named for it.</summary>
    public TransportKind Transport { get; init; } = TransportKind.LongPoll;

    /// <summary>Whether the name carries the target (any run but a plain Laharsub one).</summary>
    public bool NamesTarget { get; init; }

    /// <summary>Where the run went beyond one server: "redis2" for --servers 2, "3urls" for three --url; null for one server.</summary>
    public string? Deployment { get; init; }

    /// <summary>What of production's configuration the run has: "jwt", "origin", "keyed" or several joined by dashes; null for none.</summary>
    public string? Production { get; init; }

    public string Name => $"{Configuration}-{Topics}t" + (Transport == TransportKind.LongPoll ? "" : "-" + Transports.Name(Transport))
        + (NamesTarget ? "-" + TargetName(Target) : "") + (Deployment is null ? "" : "-" + Deployment) + (Production is null ? "" : "-" + Production);

    public int PublishersOfEachTopic => PublishersPerTopic ?? ClientsPerTopic;

    public static string TargetName(TargetKind target) => target.ToString().ToLowerInvariant();
}

/// <summary>The command line of the load generator, parsed (<see cref="LoadTestCommandLine"/>) and checked as a whole.</summary>
internal sealed record LoadTestOptions
{
    public IReadOnlyList<RunSpec> Runs { get; init; } = [];

    /// <summary>The targets each run is measured against, in order (one, or several with --compare).</summary>
    public IReadOnlyList<TargetKind> Targets { get; init; } = [TargetKind.Laharsub];

    public bool Compare => Targets.Count > 1;

    public bool FindMax { get; init; }
    public int FindMaxSteps { get; init; } = 10;
    public double FindMaxFactor { get; init; } = 1.5;
    public int TopicsPerClient { get; init; } = 1;
    public int MessageSize { get; init; } = 10;

    /// <summary>The conflation interval asked for (<c>conflate=</c>), 0 for none.</summary>
    public int ConflateMilliseconds { get; init; }
    public WireFormatKind Format { get; init; } = WireFormatKind.Json;
    public TransportKind Transport { get; init; } = TransportKind.LongPoll;

    /// <summary>With a stream transport, the percentage of clients that long poll instead; 0 for none.</summary>
    public int LongPollPercent { get; init; }

    /// <summary>Whether topics are created with presence and every client subscribes as a member.</summary>
    public bool Presence { get; init; }

    /// <summary>With --jwt-key: Jwt mode, a token per client; null: Open mode, no tokens.</summary>
    public JwtSigning? Jwt { get; init; }

    /// <summary>With --origin: the Origin every request carries (and a started server allows); null: none.</summary>
    public string? Origin { get; init; }

    /// <summary>With --keyed-publishes: an Idempotency-Key on every publish.</summary>
    public bool KeyedPublishes { get; init; }
    public TimeSpan Warmup { get; init; } = TimeSpan.FromSeconds(10);
    public TimeSpan Duration { get; init; } = TimeSpan.FromSeconds(30);
    public int PollTimeoutSeconds { get; init; } = 30;
    public int Processes { get; init; } = 1;
    public int SourceAddresses { get; init; } = 16;
    public int PublishConnections { get; init; } = 32;
    public TimeSpan MaxScheduleLag { get; init; } = TimeSpan.FromMilliseconds(5);
    /// <summary>The running instances given with --url (none: this tool starts its servers).</summary>
    public IReadOnlyList<Uri> Urls { get; init; } = [];

    /// <summary>The first --url; null when this tool starts its servers.</summary>
    public Uri? Url => Urls.Count > 0 ? Urls[0] : null;

    public IReadOnlyList<int> ServerPids { get; init; } = [];

    /// <summary>With --servers N: how many server processes this tool starts on one Redis; null: one in-memory server.</summary>
    public int? Servers { get; init; }

    /// <summary>With --redis: the Redis the started servers share (HOST:PORT); null: a private redis-server per run.</summary>
    public string? Redis { get; init; }

    /// <summary>How many server instances the clients are spread over.</summary>
    public int Instances => Servers ?? Math.Max(1, Urls.Count);
    public IReadOnlyList<string> ServerSettings { get; init; } = [];
    public IReadOnlyDictionary<string, string> ServerEnvironment { get; init; } = new Dictionary<string, string>();

    /// <summary>The cores the server this tool starts runs on; null: any.</summary>
    public IReadOnlyList<int>? ServerCpus { get; init; }

    /// <summary>The cores this tool runs on; null: any.</summary>
    public IReadOnlyList<int>? ClientCpus { get; init; }
    public string? OutputDirectory { get; init; }

    /// <summary>With --slow-log: the CSV of the window's slow deliveries; null: none is written.</summary>
    public string? SlowLogPath { get; init; }

    /// <summary>With --slow-ms: the fixed threshold of a slow delivery; null: the window's 99th percentile.</summary>
    public TimeSpan? SlowThreshold { get; init; }

    /// <summary>Where the generator's own GC pauses go beside the slow log: PATH with .client-gc.csv for its .csv.</summary>
    public string? ClientGcLogPath => SlowLogPath is { } path
        ? (path.EndsWith(".csv", StringComparison.OrdinalIgnoreCase) ? path[..^4] : path) + ".client-gc.csv"
        : null;
    public bool NoBuild { get; init; }

    /// <summary>With <c>--preset liberator</c>: the state feed's shape; its runs replace <see cref="Runs"/>.</summary>
    public StateFeedOptions? Feed { get; init; }

    /// <summary>Set only in a child process: the file holding its plan.</summary>
    public string? WorkerPlanFile { get; init; }

    /// <summary>Parses and checks a command line; a bad one throws <see cref="UsageException"/> with every error found.</summary>
    public static LoadTestOptions Parse(IReadOnlyList<string> args)
    {
        var commandLine = new LoadTestCommandLine();
        var parsed = commandLine.Root.Parse(args);
        if (parsed.Errors.Count > 0)
        {
            throw new UsageException(string.Join(Environment.NewLine, LoadTestCommandLine.Describe(parsed.Errors)));
        }
        return From(parsed, commandLine);
    }

    /// <summary>The options of a command line without parse errors, checked against each other.</summary>
    public static LoadTestOptions From(ParseResult parsed, LoadTestCommandLine line)
    {
        bool Given(Option option) => LoadTestCommandLine.Given(parsed, option);
        var urls = parsed.GetValue(line.Url) ?? [];
        var findMax = parsed.GetValue(line.FindMax);
        if (Given(line.Target) && Given(line.Compare))
        {
            throw new UsageException("Give either --target T (one server) or --compare T,T (several, alternating), not both.");
        }
        // An absent array option reads as an empty array, not null: ask whether it was given.
        IReadOnlyList<TargetKind> targets = Given(line.Compare) ? parsed.GetValue(line.Compare)!
            : [Given(line.Target) ? parsed.GetValue(line.Target) : TargetKind.Laharsub];
        var transport = Given(line.Transport) ? parsed.GetValue(line.Transport) : TransportKind.LongPoll;
        var options = new LoadTestOptions
        {
            Targets = targets,
            FindMax = findMax,
            FindMaxSteps = parsed.GetValue(line.FindMaxSteps),
            FindMaxFactor = parsed.GetValue(line.FindMaxFactor),
            TopicsPerClient = parsed.GetValue(line.TopicsPerClient),
            MessageSize = parsed.GetValue(line.MessageSize),
            ConflateMilliseconds = parsed.GetValue(line.Conflate),
            Format = Given(line.Format) ? parsed.GetValue(line.Format) : WireFormatKind.Json,
            Transport = transport,
            LongPollPercent = parsed.GetValue(line.LongPollPercent),
            Presence = parsed.GetValue(line.Presence),
            Jwt = parsed.GetValue(line.JwtKey) is { } key
                ? new JwtSigning(key, parsed.GetValue(line.JwtIssuer) ?? JwtSigning.DefaultIssuer, parsed.GetValue(line.JwtAudience) ?? JwtSigning.DefaultAudience)
                : null,
            Origin = parsed.GetValue(line.Origin),
            KeyedPublishes = parsed.GetValue(line.KeyedPublishes),
            Warmup = TimeSpan.FromSeconds(parsed.GetValue(line.Warmup)),
            Duration = TimeSpan.FromSeconds(parsed.GetValue(line.Duration)),
            PollTimeoutSeconds = parsed.GetValue(line.PollTimeout),
            Processes = parsed.GetValue(line.Processes),
            SourceAddresses = parsed.GetValue(line.SourceAddresses),
            PublishConnections = parsed.GetValue(line.PublishConnections),
            MaxScheduleLag = TimeSpan.FromMilliseconds(parsed.GetValue(line.MaxScheduleLag)),
            Urls = urls,
            ServerPids = parsed.GetValue(line.ServerPid) ?? [],
            Servers = Given(line.Servers) ? parsed.GetValue(line.Servers) : null,
            Redis = parsed.GetValue(line.Redis),
            ServerSettings = parsed.GetValue(line.ServerSetting) ?? [],
            NoBuild = parsed.GetValue(line.NoBuild),
            ServerEnvironment = parsed.GetValue(line.ServerEnv) ?? [],
            ServerCpus = Given(line.ServerCpus) ? parsed.GetValue(line.ServerCpus) : null,
            ClientCpus = Given(line.ClientCpus) ? parsed.GetValue(line.ClientCpus) : null,
            OutputDirectory = parsed.GetValue(line.Out),
            SlowLogPath = parsed.GetValue(line.SlowLog),
            SlowThreshold = Given(line.SlowMs) ? TimeSpan.FromMilliseconds(parsed.GetValue(line.SlowMs)) : null,
            WorkerPlanFile = parsed.GetValue(line.Worker),
            Feed = ParseFeed(parsed, line),
        };
        options = options with { Runs = options.Feed is null ? ParseRuns(parsed, line, targets, transport) : [] };
        CheckTransport(options, Given(line.Format), Given(line.PollTimeout));
        CheckTargets(options, Given(line.Format));
        CheckProduction(options, parsed, line);
        if (!findMax && (Given(line.FindMaxSteps) || Given(line.FindMaxFactor)))
        {
            throw new UsageException("--find-max-steps and --find-max-factor shape a --find-max search; add --find-max.");
        }
        if (options.ServerPids.Count > 0 && options.Url is null)
        {
            throw new UsageException("--server-pid samples a server given with --url; without --url this tool starts (and samples) its own server.");
        }
        if (options.ServerPids.Count > options.Urls.Count)
        {
            throw new UsageException($"{options.ServerPids.Count} --server-pid for {options.Urls.Count} --url: give at most one pid per instance.");
        }
        if (urls.Distinct().Count() != urls.Length)
        {
            throw new UsageException("The same --url is given twice; give each instance once (a client is placed on instance i mod N).");
        }
        CheckServers(options);
        CheckSlowLog(options, Given(line.SlowMs));
        var deployment = options.Servers is { } servers ? $"redis{servers}" : urls.Length > 1 ? $"{urls.Length}urls" : null;
        // Named for it, so that a run in production's configuration is never taken for one without it.
        string[] production = [.. new[] { options.Jwt is null ? null : "jwt", options.Origin is null ? null : "origin", options.KeyedPublishes ? "keyed" : null }.OfType<string>()];
        options = options with
        {
            Runs = options.Runs.Select(r => r with { Deployment = deployment, Production = production.Length == 0 ? null : string.Join('-', production) }).ToList(),
        };
        if ((options.ServerSettings.Count > 0 || options.ServerEnvironment.Count > 0) && options.Url is not null)
        {
            throw new UsageException("--server-setting and --server-env configure the server this tool starts; with --url, configure your server yourself.");
        }
        if (options.ServerCpus is not null && options.Url is not null)
        {
            throw new UsageException("--server-cpus pins the server this tool starts; with --url, start your server under taskset -c yourself.");
        }
        if (options.ServerCpus is { } serverCores && options.ClientCpus is { } clientCores && serverCores.Intersect(clientCores).Any())
        {
            throw new UsageException("--server-cpus and --client-cpus share a core, so the generator would compete with the server it measures; give them different cores, e.g. --server-cpus 0 --client-cpus 1.");
        }
        foreach (var run in options.Runs)
        {
            if (run.Topics < options.TopicsPerClient)
            {
                throw new UsageException($"--topics-per-client {options.TopicsPerClient} needs at least that many topics (run {run.Name} has {run.Topics}).");
            }
            // As long: topics x clients per topic can overflow an int long before any check below sees it.
            var clients = (long)run.Topics * run.ClientsPerTopic;
            if (clients > MaxClients)
            {
                throw new UsageException($"Run {run.Name} would simulate {clients} clients ({run.Topics} topics x {run.ClientsPerTopic}); one run holds at most {MaxClients}.");
            }
            if (clients < options.Processes)
            {
                throw new UsageException($"--processes {options.Processes} is more than the {clients} clients of run {run.Name}.");
            }
        }
        return options;
    }

    /// <summary>Far above what one machine's file limits allow; it only keeps the arithmetic honest.</summary>
    private const long MaxClients = 10_000_000;

    /// <summary>A slow log is one run's deliveries in one process, joined with one server's GC pauses by time.</summary>
    private static void CheckSlowLog(LoadTestOptions options, bool thresholdGiven)
    {
        if (options.SlowLogPath is null)
        {
            if (thresholdGiven)
            {
                throw new UsageException("--slow-ms sets the threshold of --slow-log; add --slow-log PATH.");
            }
            return;
        }
        var refused = options.Feed is not null ? "--preset liberator"
            : options.FindMax ? "--find-max"
            : options.Processes > 1 ? $"--processes {options.Processes}"
            : options.Runs.Count > 1 ? $"{options.Runs.Count} runs (--sweep, --compare or a preset's topic counts)"
            : null;
        if (refused is not null)
        {
            throw new UsageException($"--slow-log records the deliveries of one run in one process, to join them with one server's GC pauses; "
                + $"it cannot be combined with {refused}: give --topics N, one target and one process.");
        }
    }

    /// <summary>What --servers and --redis can be combined with.</summary>
    private static void CheckServers(LoadTestOptions options)
    {
        if (options.Redis is not null && options.Servers is null)
        {
            throw new UsageException("--redis names the Redis that the servers started with --servers share; add --servers N (with --url, configure your servers yourself).");
        }
        if (options.Servers is null)
        {
            return;
        }
        if (options.Url is not null)
        {
            throw new UsageException("Give either --servers N (this tool starts N servers on one Redis) or --url URL (servers you started, repeat it for several), not both.");
        }
        if (options.Targets.Any(target => target != TargetKind.Laharsub))
        {
            throw new UsageException("--servers starts Laharsub servers on Redis; it cannot be combined with --target nchan, --target floor or --compare.");
        }
    }

    /// <summary>
    /// Production's configuration is Laharsub's: nchan checks no JWT of its own (nchan_authorize_request asks an
    /// application upstream, another measurement), keeps no idempotency keys, and an Origin on one side of a
    /// comparison only would compare different things; the floor has none of them either.
    /// </summary>
    private static void CheckProduction(LoadTestOptions options, ParseResult parsed, LoadTestCommandLine line)
    {
        bool Given(Option option) => LoadTestCommandLine.Given(parsed, option);
        if (options.Jwt is null && (Given(line.JwtIssuer) || Given(line.JwtAudience)))
        {
            throw new UsageException((Given(line.JwtIssuer) ? "--jwt-issuer" : "--jwt-audience") + " shapes the tokens of a run in Jwt mode; add --jwt-key with the server's signing key.");
        }
        var given = new Option[] { line.JwtKey, line.Origin, line.KeyedPublishes }.Where(Given).Select(option => option.Name).ToList();
        if (given.Count > 0 && options.Targets.Any(target => target != TargetKind.Laharsub))
        {
            var other = options.Targets.First(target => target != TargetKind.Laharsub);
            throw new UsageException($"{string.Join(", ", given)}: production's configuration is Laharsub's; {RunSpec.TargetName(other)} "
                + (other == TargetKind.Nchan
                    ? "checks no JWT of its own (nchan_authorize_request asks an application upstream, another measurement), keeps no idempotency keys, and an Origin on one side only would compare different things"
                    : "has no access control, CORS or idempotency keys")
                + ", so run it with --target laharsub.");
        }
    }

    /// <summary>What only the long poll has: streams are held open and carry each message as a JSON event or frame.</summary>
    private static void CheckTransport(LoadTestOptions options, bool formatGiven, bool pollTimeoutGiven)
    {
        if (options.Transport == TransportKind.LongPoll)
        {
            if (options.LongPollPercent > 0)
            {
                throw new UsageException("--long-poll-percent mixes long polls into a run of streams; add --transport sse or --transport websocket.");
            }
            return;
        }
        var transport = Transports.Name(options.Transport);
        if (formatGiven)
        {
            throw new UsageException($"--format chooses the long poll's answer format; --transport {transport} delivers each message as a "
                + (options.Transport == TransportKind.Sse ? "JSON event" : "JSON frame") + " (nchan: as it was published), so it takes no --format.");
        }
        if (pollTimeoutGiven && options.LongPollPercent == 0)
        {
            throw new UsageException($"--poll-timeout is the long poll's timeout; --transport {transport} holds one stream open per client "
                + "for the whole run, so it takes no --poll-timeout.");
        }
    }

    /// <summary>What only some targets support, refused with the reason when a run would need it from another.</summary>
    private static void CheckTargets(LoadTestOptions options, bool formatGiven)
    {
        if (options.Compare && options.Url is not null)
        {
            throw new UsageException("--compare starts each server itself; to measure servers you started, run --target T --url URL once for each.");
        }
        if (options.Presence && !options.Targets.All(target => target.SpeaksLaharsub()))
        {
            throw new UsageException("--presence measures Laharsub's presence; " + string.Join(", ", options.Targets.Where(t => !t.SpeaksLaharsub()).Select(RunSpec.TargetName))
                + " has none, so run --presence with --target laharsub.");
        }
        if (options.Targets.Contains(TargetKind.Floor))
        {
            if (options.Format == WireFormatKind.Multipart)
            {
                throw new UsageException("--format multipart: the floor answers polls in JSON only, so runs against it take no --format multipart.");
            }
            if (!options.Compare && options.ServerSettings.Count > 0)
            {
                throw new UsageException("--server-setting configures Laharsub; the floor has no settings (--server-env still sets its runtime's).");
            }
        }
        if (!options.Targets.Contains(TargetKind.Nchan))
        {
            return;
        }
        if (options.TopicsPerClient != 1)
        {
            throw new UsageException($"--topics-per-client {options.TopicsPerClient}: an nchan long poll reads one channel, so runs against nchan need --topics-per-client 1.");
        }
        if (!options.Compare && formatGiven)
        {
            throw new UsageException("--format chooses Laharsub's answer format; nchan's long poll answers each message as it was published, so --target nchan takes no --format.");
        }
        if (!options.Compare && (options.ServerSettings.Count > 0 || options.ServerEnvironment.Count > 0))
        {
            throw new UsageException($"--server-setting and --server-env configure Laharsub; nchan is configured by {Hosting.NchanProcess.ConfigRelativePath}.");
        }
    }

    private static List<RunSpec> ParseRuns(ParseResult parsed, LoadTestCommandLine line, IReadOnlyList<TargetKind> targets, TransportKind transport)
    {
        var runs = ParseShapes(parsed, line);
        foreach (var run in runs)
        {
            if (run.PublishersPerTopic > run.ClientsPerTopic)
            {
                throw new UsageException($"--publishers-per-topic {run.PublishersPerTopic} is more than the {run.ClientsPerTopic} clients per topic of run {run.Name}.");
            }
        }
        // Each run against every target in turn, so that targets compared share the same minutes of the machine.
        var namesTarget = targets.Count > 1 || targets[0] != TargetKind.Laharsub;
        return runs.SelectMany(run => targets.Select(target => run with { Target = target, Transport = transport, NamesTarget = namesTarget })).ToList();
    }

    /// <summary>The <c>liberator</c> preset's shape, when it is the preset asked for; it takes --topics (subjects), --interval, --conflate and --feed-runs.</summary>
    private static StateFeedOptions? ParseFeed(ParseResult parsed, LoadTestCommandLine line)
    {
        bool Given(Option option) => LoadTestCommandLine.Given(parsed, option);
        if (!Given(line.Preset) || parsed.GetValue(line.Preset) is not { } presets || !presets.Any(p => p.Name == Preset.Liberator))
        {
            if (Given(line.FeedRuns))
            {
                throw new UsageException("--feed-runs chooses the runs of --preset liberator; add it.");
            }
            return null;
        }
        Option[] refused = [line.Sweep, line.Compare, line.Target, line.FindMax, line.Servers, line.Processes, line.ClientsPerTopic, line.PublishersPerTopic,
            line.TopicsPerClient, line.Presence, line.JwtKey, line.KeyedPublishes];
        var other = presets.Length > 1 ? "other presets" : refused.FirstOrDefault(Given)?.Name;
        if (other is not null)
        {
            throw new UsageException("--preset liberator runs on its own, with one subscriber through the .NET client: it takes --topics (subjects), --interval, "
                + $"--conflate, --feed-runs, --transport, --format, --warmup, --duration, --url and the server options, not {other}.");
        }
        var conflate = Given(line.Conflate) ? parsed.GetValue(line.Conflate) : 500;
        var runs = Given(line.FeedRuns) ? parsed.GetValue(line.FeedRuns)! : [FeedMode.State, FeedMode.Conflated, FeedMode.Whole];
        if (conflate == 0 && runs.Contains(FeedMode.Conflated))
        {
            if (Given(line.FeedRuns))
            {
                throw new UsageException("--feed-runs conflated needs a conflation interval: --conflate MS above 0 (default 500).");
            }
            runs = [.. runs.Where(run => run != FeedMode.Conflated)];
        }
        return new StateFeedOptions(Given(line.Topics) ? parsed.GetValue(line.Topics) : 50,
            Given(line.Interval) ? TimeSpan.FromSeconds(parsed.GetValue(line.Interval)) : TimeSpan.FromSeconds(1), conflate, runs);
    }

    private static List<RunSpec> ParseShapes(ParseResult parsed, LoadTestCommandLine line)
    {
        bool Given(Option option) => LoadTestCommandLine.Given(parsed, option);
        int? publishers = Given(line.PublishersPerTopic) ? parsed.GetValue(line.PublishersPerTopic) : null;
        if (Given(line.Topics) && Given(line.Sweep))
        {
            throw new UsageException("Give either --topics N (one run) or --sweep N,N,... (several), not both.");
        }
        var topics = Given(line.Topics) ? [parsed.GetValue(line.Topics)] : Given(line.Sweep) ? parsed.GetValue(line.Sweep) : null;
        // Options given explicitly override the preset's shape, and the name says so.
        int? clientsPerTopic = Given(line.ClientsPerTopic) ? parsed.GetValue(line.ClientsPerTopic) : null;
        TimeSpan? interval = Given(line.Interval) ? TimeSpan.FromSeconds(parsed.GetValue(line.Interval)) : null;
        if (!Given(line.Preset) || parsed.GetValue(line.Preset) is not { } presets)
        {
            return (topics ?? [100]).Select(n => new RunSpec("custom", n, clientsPerTopic ?? 2, interval ?? TimeSpan.FromSeconds(1)) { PublishersPerTopic = publishers }).ToList();
        }
        var modified = clientsPerTopic is not null || interval is not null || publishers is not null;
        return presets.SelectMany(preset => (topics ?? preset.DefaultTopics).Select(n =>
            new RunSpec(modified ? preset.Name + "-modified" : preset.Name, n, clientsPerTopic ?? preset.ClientsPerTopic, interval ?? preset.Interval)
            {
                PublishersPerTopic = publishers ?? preset.PublishersPerTopic,
            })).ToList();
    }
}

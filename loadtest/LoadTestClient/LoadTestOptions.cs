using System.Globalization;
using Laharsub.LoadTestClient.Load;

namespace Laharsub.LoadTestClient;

/// <summary>A bad command line: the message says what is wrong and what to write instead.</summary>
internal sealed class UsageException(string message) : Exception(message);

/// <summary>One configuration of the original's measurements and the topic counts it is swept over by default.</summary>
internal sealed record Preset(string Name, int ClientsPerTopic, TimeSpan Interval, int[] DefaultTopics, string Description, int? PublishersPerTopic = null)
{
    public static readonly Preset[] All =
    [
        new("seed1", 2, TimeSpan.FromSeconds(1), [50, 100, 200, 400], "2 clients per topic, each publishing every 1 s"),
        new("seed2", 2, TimeSpan.FromSeconds(5), [200, 1000], "2 clients per topic, each publishing every 5 s"),
        new("seed3", 5, TimeSpan.FromSeconds(15), [400, 1000, 2000, 3900], "5 clients per topic, each publishing every 15 s"),
        // A chat room or a live dashboard: one publisher, thousands of readers of the same topic, so
        // that every message fans out to 2,000 waiting polls at once.
        new("broadcast", 2000, TimeSpan.FromSeconds(1), [5], "2,000 clients per topic, one of which publishes every 1 s", PublishersPerTopic: 1),
    ];
}

/// <summary>One run of a sweep: a configuration at one topic count, against one target.</summary>
internal sealed record RunSpec(string Configuration, int Topics, int ClientsPerTopic, TimeSpan Interval)
{
    /// <summary>How many of each topic's clients publish; null: all of them.</summary>
    public int? PublishersPerTopic { get; init; }

    public TargetKind Target { get; init; } = TargetKind.Laharsub;

    /// <summary>Whether the name carries the target (any run but a plain Laharsub one).</summary>
    public bool NamesTarget { get; init; }

    /// <summary>Where the run went beyond one server: "redis2" for --servers 2, "3urls" for three --url; null for one server.</summary>
    public string? Deployment { get; init; }

    public string Name => $"{Configuration}-{Topics}t" + (NamesTarget ? "-" + TargetName(Target) : "") + (Deployment is null ? "" : "-" + Deployment);

    public int PublishersOfEachTopic => PublishersPerTopic ?? ClientsPerTopic;

    public static string TargetName(TargetKind target) => target.ToString().ToLowerInvariant();
}

/// <summary>The command line of the load generator.</summary>
internal sealed record LoadTestOptions
{
    public const string Usage = """
        Laharsub load test client: simulates the original's chat workload (N topics, each with clients that
        publish to it on a fixed schedule and long-poll it) and measures delivery latency.

        Usage: dotnet run -c Release --project loadtest/LoadTestClient -- [options]

          --preset NAME[,NAME]     seed1 (2 clients/topic, every 1 s), seed2 (2, every 5 s), seed3 (5, every 15 s),
                                   broadcast (2,000 clients/topic, 1 of them publishing every 1 s).
                                   Without --topics/--sweep a preset runs its default topic counts:
                                   seed1 50,100,200,400; seed2 200,1000; seed3 400,1000,2000,3900; broadcast 5.
          --topics N               Number of topics (one run).
          --sweep N,N,...          Topic counts to run one after another (one run each).
          --clients-per-topic N    Clients publishing to and subscribing to each topic (default 2).
          --publishers-per-topic N How many of each topic's clients publish (default: all); the others only read.
          --interval SECONDS       Each client's publish interval (default 1).
          --topics-per-client N    Topics each client's single poll subscribes to: its own and the next N-1 (default 1).
          --message-size BYTES     Message body size, at least 10 (default 10, as the original).
          --format json|multipart  Poll response format (default json).
          --warmup SECONDS         Warm-up before measuring (default 10).
          --duration SECONDS       Measured window (default 30).
          --poll-timeout SECONDS   The polls' timeout parameter (default 30).
          --processes N            Spread the clients over N processes of this tool and merge their results (default 1).
          --source-addresses N     Loopback source addresses 127.0.0.2.. to spread connections over (default 16).
          --publish-connections N  Connections per process beyond one per client, for publishing (default 32).
          --max-schedule-lag MS    A run is INVALID when the 99th percentile of publish start lag exceeds this (default 5).
          --target laharsub|nchan  The server to measure (default laharsub). nchan is nginx with loadtest/peers/nchan.conf
                                   (apt-get install -y nginx-light libnginx-mod-nchan), polled one channel per client.
          --compare T,T            Run every run against each target in turn (e.g. laharsub,nchan), alternating, each
                                   on a server this tool starts, and print their ratios.
          --find-max               Raise the publish rate step by step (the interval divided by --find-max-factor each
                                   step) until p99 from schedule passes 50 ms or deliveries fall behind; report the
                                   highest sustained deliveries/s of each target. Each step is a run (--warmup, --duration).
          --find-max-steps N       At most N steps per target (default 10).
          --find-max-factor F      Rate multiplier from one step to the next (default 1.5).
          --url URL                Use a running server (its root, e.g. http://127.0.0.1:5000/; Laharsub's API is at /ps/,
                                   nchan's at /pub and /sub). Without it, this repository's Release server (or nginx
                                   with loadtest/peers/nchan.conf) is started for each run on a free port. Repeat it for
                                   several instances of one deployment: client i polls and publishes on URL i mod N.
          --servers N              Start N Laharsub server processes on one Redis for each run (each on its own free port),
                                   spread the clients over them (client i on instance i mod N, topics created round robin,
                                   so deliveries cross instances) and sample each one and redis-server. Without --redis,
                                   a private redis-server (free loopback port, own temporary directory, no persistence)
                                   is started for each run. Without --servers, one in-memory server is started.
          --redis HOST:PORT        With --servers: use this Redis instead of a private one (each run uses a key prefix of its own).
          --no-build               Start the server's existing Release build as it is (by default it is built
                                   first, incrementally, so that a run never measures a stale build).
          --server-pid PID         With --url: sample this process's memory and CPU during the run (with --target nchan:
                                   nginx's master, and its workers with it). Repeatable, one per instance.
          --server-setting K=V     Extra server setting for the server this tool starts, e.g. MaxTopics=200000 (repeatable).
          --server-env NAME=VALUE  Environment variable for the server this tool starts, e.g.
                                   DOTNET_ThreadPool_UnfairSemaphoreSpinLimit=0 (repeatable).
          --out DIR                Write JSON and CSV per run, summary.csv and report.html to DIR.
          --help                   This text.

        Examples (the whole documented sweep; Laharsub next to nchan at seed1-200):
          dotnet run -c Release --project loadtest/LoadTestClient -- --preset seed1,seed2,seed3 --out loadtest-results
          dotnet run -c Release --project loadtest/LoadTestClient -- --preset seed1 --topics 200 --compare laharsub,nchan
        """;

    public IReadOnlyList<RunSpec> Runs { get; init; } = [];

    /// <summary>The targets each run is measured against, in order (one, or several with --compare).</summary>
    public IReadOnlyList<TargetKind> Targets { get; init; } = [TargetKind.Laharsub];

    public bool Compare => Targets.Count > 1;

    public bool FindMax { get; init; }
    public int FindMaxSteps { get; init; } = 10;
    public double FindMaxFactor { get; init; } = 1.5;
    public int TopicsPerClient { get; init; } = 1;
    public int MessageSize { get; init; } = 10;
    public WireFormatKind Format { get; init; } = WireFormatKind.Json;
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
    public string? OutputDirectory { get; init; }
    public bool Help { get; init; }
    public bool NoBuild { get; init; }

    /// <summary>Set only in a child process: the file holding its plan.</summary>
    public string? WorkerPlanFile { get; init; }

    public static LoadTestOptions Parse(IReadOnlyList<string> args)
    {
        var values = new Dictionary<string, string>(StringComparer.Ordinal);
        var settings = new List<string>();
        var urls = new List<Uri>();
        var serverPids = new List<int>();
        var environment = new Dictionary<string, string>(StringComparer.Ordinal);
        var help = false;
        var noBuild = false;
        var findMax = false;
        for (var i = 0; i < args.Count; i++)
        {
            var arg = args[i];
            if (arg is "--help" or "-h" or "-?")
            {
                help = true;
                continue;
            }
            if (arg == "--no-build")
            {
                noBuild = true;
                continue;
            }
            if (arg == "--find-max")
            {
                findMax = true;
                continue;
            }
            if (!arg.StartsWith("--", StringComparison.Ordinal) || !Known.Contains(arg))
            {
                throw new UsageException($"Unknown option '{arg}'. Run with --help for the list of options.");
            }
            if (i + 1 >= args.Count || args[i + 1].StartsWith("--", StringComparison.Ordinal))
            {
                throw new UsageException($"Option {arg} needs a value, e.g. {arg} {Example(arg)}.");
            }
            var value = args[++i];
            if (arg == "--url")
            {
                urls.Add(ParseUrl(value));
            }
            else if (arg == "--server-pid")
            {
                serverPids.Add(int.TryParse(value, NumberStyles.None, CultureInfo.InvariantCulture, out var pid) && pid > 0
                    ? pid
                    : throw new UsageException($"--server-pid '{value}' is not a process id: use the server's pid, e.g. --server-pid $(pgrep -n -f Laharsub.Server.Host)."));
            }
            else if (arg == "--server-setting")
            {
                if (!value.Contains('=', StringComparison.Ordinal))
                {
                    throw new UsageException($"--server-setting '{value}' is not KEY=VALUE, e.g. --server-setting MaxTopics=200000.");
                }
                settings.Add(value);
            }
            else if (arg == "--server-env")
            {
                var equals = value.IndexOf('=', StringComparison.Ordinal);
                if (equals <= 0)
                {
                    throw new UsageException($"--server-env '{value}' is not NAME=VALUE, e.g. --server-env DOTNET_gcServer=0.");
                }
                environment[value[..equals]] = value[(equals + 1)..];
            }
            else if (!values.TryAdd(arg, value))
            {
                throw new UsageException($"Option {arg} is given twice; give it once.");
            }
        }
        if (help)
        {
            return new LoadTestOptions { Help = true };
        }

        var targets = ParseTargets(values);
        var options = new LoadTestOptions
        {
            Targets = targets,
            FindMax = findMax,
            FindMaxSteps = Int(values, "--find-max-steps", 10, 1, 50),
            FindMaxFactor = Double(values, "--find-max-factor", 1.5, 1.05),
            TopicsPerClient = Int(values, "--topics-per-client", 1, 1, 1000),
            MessageSize = Int(values, "--message-size", 10, 10, 1024 * 1024),
            Format = values.GetValueOrDefault("--format", "json") switch
            {
                "json" => WireFormatKind.Json,
                "multipart" => WireFormatKind.Multipart,
                var other => throw new UsageException($"--format '{other}' is not a format: use json or multipart."),
            },
            Warmup = Seconds(values, "--warmup", 10, 0),
            Duration = Seconds(values, "--duration", 30, 0.1),
            PollTimeoutSeconds = Int(values, "--poll-timeout", 30, 1, 120),
            Processes = Int(values, "--processes", 1, 1, 64),
            SourceAddresses = Int(values, "--source-addresses", 16, 1, 250),
            PublishConnections = Int(values, "--publish-connections", 32, 1, 10_000),
            MaxScheduleLag = TimeSpan.FromMilliseconds(Double(values, "--max-schedule-lag", 5, 0.01)),
            Urls = urls,
            ServerPids = serverPids,
            Servers = values.ContainsKey("--servers") ? Int(values, "--servers", 1, 1, MaxServers) : null,
            Redis = values.TryGetValue("--redis", out var redis) ? ParseRedis(redis) : null,
            ServerSettings = settings,
            NoBuild = noBuild,
            ServerEnvironment = environment,
            OutputDirectory = values.GetValueOrDefault("--out"),
            WorkerPlanFile = values.GetValueOrDefault("--worker"),
            Runs = ParseRuns(values, targets),
        };
        CheckTargets(options, values);
        if (!findMax && (values.ContainsKey("--find-max-steps") || values.ContainsKey("--find-max-factor")))
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
        if (urls.Distinct().Count() != urls.Count)
        {
            throw new UsageException("The same --url is given twice; give each instance once (a client is placed on instance i mod N).");
        }
        CheckServers(options);
        var deployment = options.Servers is { } servers ? $"redis{servers}" : urls.Count > 1 ? $"{urls.Count}urls" : null;
        options = options with { Runs = options.Runs.Select(r => r with { Deployment = deployment }).ToList() };
        if ((options.ServerSettings.Count > 0 || options.ServerEnvironment.Count > 0) && options.Url is not null)
        {
            throw new UsageException("--server-setting and --server-env configure the server this tool starts; with --url, configure your server yourself.");
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

    private const int MaxTopics = 1_000_000;

    /// <summary>Far above what one machine's file limits allow; it only keeps the arithmetic honest.</summary>
    private const long MaxClients = 10_000_000;

    private static readonly HashSet<string> Known =
    [
        "--preset", "--topics", "--sweep", "--clients-per-topic", "--interval", "--topics-per-client", "--message-size",
        "--format", "--warmup", "--duration", "--poll-timeout", "--processes", "--source-addresses", "--publish-connections",
        "--max-schedule-lag", "--url", "--server-pid", "--server-setting", "--server-env", "--out", "--worker",
        "--target", "--compare", "--find-max-steps", "--find-max-factor", "--publishers-per-topic", "--servers", "--redis",
    ];

    /// <summary>Two cores hold a few server processes; more only share the same cores.</summary>
    private const int MaxServers = 16;

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
        if (options.Targets.Contains(TargetKind.Nchan))
        {
            throw new UsageException("--servers starts Laharsub servers on Redis; it cannot be combined with --target nchan or --compare.");
        }
    }

    private static string ParseRedis(string text)
    {
        var colon = text.LastIndexOf(':');
        if (colon <= 0 || !int.TryParse(text.AsSpan(colon + 1), NumberStyles.None, CultureInfo.InvariantCulture, out var port) || port is < 1 or > 65535)
        {
            throw new UsageException($"--redis '{text}' is not HOST:PORT, e.g. --redis 127.0.0.1:6379.");
        }
        return text;
    }

    private static List<TargetKind> ParseTargets(Dictionary<string, string> values)
    {
        static TargetKind Target(string option, string name) => name switch
        {
            "laharsub" => TargetKind.Laharsub,
            "nchan" => TargetKind.Nchan,
            _ => throw new UsageException($"{option} '{name}' is not a target: use laharsub or nchan."),
        };
        if (values.ContainsKey("--target") && values.ContainsKey("--compare"))
        {
            throw new UsageException("Give either --target T (one server) or --compare T,T (several, alternating), not both.");
        }
        if (values.TryGetValue("--compare", out var compare))
        {
            var targets = compare.Split(',').Select(name => Target("--compare", name)).ToList();
            if (targets.Count < 2 || targets.Distinct().Count() != targets.Count)
            {
                throw new UsageException($"--compare '{compare}' needs two different targets, e.g. --compare laharsub,nchan.");
            }
            return targets;
        }
        return [values.TryGetValue("--target", out var target) ? Target("--target", target) : TargetKind.Laharsub];
    }

    /// <summary>What only some targets support, refused with the reason when a run would need it from another.</summary>
    private static void CheckTargets(LoadTestOptions options, Dictionary<string, string> values)
    {
        if (options.Compare && options.Url is not null)
        {
            throw new UsageException("--compare starts each server itself; to measure servers you started, run --target T --url URL once for each.");
        }
        if (!options.Targets.Contains(TargetKind.Nchan))
        {
            return;
        }
        if (options.TopicsPerClient != 1)
        {
            throw new UsageException($"--topics-per-client {options.TopicsPerClient}: an nchan long poll reads one channel, so runs against nchan need --topics-per-client 1.");
        }
        if (!options.Compare && values.ContainsKey("--format"))
        {
            throw new UsageException("--format chooses Laharsub's answer format; nchan's long poll answers each message as it was published, so --target nchan takes no --format.");
        }
        if (!options.Compare && (options.ServerSettings.Count > 0 || options.ServerEnvironment.Count > 0))
        {
            throw new UsageException($"--server-setting and --server-env configure Laharsub; nchan is configured by {Hosting.NchanProcess.ConfigRelativePath}.");
        }
    }

    private static List<RunSpec> ParseRuns(Dictionary<string, string> values, List<TargetKind> targets)
    {
        var runs = ParseShapes(values);
        foreach (var run in runs)
        {
            if (run.PublishersPerTopic > run.ClientsPerTopic)
            {
                throw new UsageException($"--publishers-per-topic {run.PublishersPerTopic} is more than the {run.ClientsPerTopic} clients per topic of run {run.Name}.");
            }
        }
        // Each run against every target in turn, so that targets compared share the same minutes of the machine.
        var namesTarget = targets.Count > 1 || targets[0] != TargetKind.Laharsub;
        return runs.SelectMany(run => targets.Select(target => run with { Target = target, NamesTarget = namesTarget })).ToList();
    }

    private static List<RunSpec> ParseShapes(Dictionary<string, string> values)
    {
        int? publishers = values.ContainsKey("--publishers-per-topic") ? Int(values, "--publishers-per-topic", 1, 1, 10_000) : null;
        if (values.ContainsKey("--topics") && values.ContainsKey("--sweep"))
        {
            throw new UsageException("Give either --topics N (one run) or --sweep N,N,... (several), not both.");
        }
        int[]? topics = null;
        if (values.TryGetValue("--topics", out _))
        {
            topics = [Int(values, "--topics", 0, 1, MaxTopics)];
        }
        else if (values.TryGetValue("--sweep", out var sweep))
        {
            topics = sweep.Split(',').Select(t => int.TryParse(t, NumberStyles.None, CultureInfo.InvariantCulture, out var n) && n is > 0 and <= MaxTopics
                ? n
                : throw new UsageException($"--sweep '{sweep}': '{t}' is not a topic count; write integers from 1 to {MaxTopics} separated by commas, e.g. --sweep 400,1000,2000.")).ToArray();
        }

        var presets = values.TryGetValue("--preset", out var presetNames)
            ? presetNames.Split(',').Select(name => Preset.All.FirstOrDefault(p => p.Name == name)
                ?? throw new UsageException($"--preset '{name}' is not a preset: use {string.Join(", ", Preset.All.Select(p => p.Name))} (or several, comma-separated).")).ToArray()
            : null;
        if (presets is null)
        {
            var clientsPerTopic = Int(values, "--clients-per-topic", 2, 1, 10_000);
            var interval = Seconds(values, "--interval", 1, 0.001);
            return (topics ?? [100]).Select(n => new RunSpec("custom", n, clientsPerTopic, interval) { PublishersPerTopic = publishers }).ToList();
        }
        var runs = new List<RunSpec>();
        foreach (var preset in presets)
        {
            // Options given explicitly override the preset's shape, and the name says so.
            var clientsPerTopic = Int(values, "--clients-per-topic", preset.ClientsPerTopic, 1, 10_000);
            var interval = Seconds(values, "--interval", preset.Interval.TotalSeconds, 0.001);
            var modified = values.ContainsKey("--clients-per-topic") || values.ContainsKey("--interval") || values.ContainsKey("--publishers-per-topic");
            runs.AddRange((topics ?? preset.DefaultTopics).Select(n => new RunSpec(modified ? preset.Name + "-modified" : preset.Name, n, clientsPerTopic, interval)
            {
                PublishersPerTopic = publishers ?? preset.PublishersPerTopic,
            }));
        }
        return runs;
    }

    private static Uri ParseUrl(string text)
    {
        if (!Uri.TryCreate(text, UriKind.Absolute, out var uri) || uri.Scheme != Uri.UriSchemeHttp)
        {
            throw new UsageException($"--url '{text}' is not an http:// URL of a server root, e.g. --url http://127.0.0.1:5000/.");
        }
        return new Uri(uri.GetLeftPart(UriPartial.Authority) + "/");
    }

    private static int Int(Dictionary<string, string> values, string name, int fallback, int min, int max)
    {
        if (!values.TryGetValue(name, out var text))
        {
            return fallback;
        }
        if (!int.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out var value) || value < min || value > max)
        {
            throw new UsageException($"{name} '{text}' is out of range: use a whole number from {min} to {max}.");
        }
        return value;
    }

    private static double Double(Dictionary<string, string> values, string name, double fallback, double min)
    {
        if (!values.TryGetValue(name, out var text))
        {
            return fallback;
        }
        if (!double.TryParse(text, NumberStyles.AllowDecimalPoint, CultureInfo.InvariantCulture, out var value) || value < min || value > 86_400)
        {
            throw new UsageException($"{name} '{text}' is out of range: use a number from {min.ToString(CultureInfo.InvariantCulture)} to 86400, e.g. {name} 2.5.");
        }
        return value;
    }

    private static TimeSpan Seconds(Dictionary<string, string> values, string name, double fallback, double min) =>
        TimeSpan.FromSeconds(Double(values, name, fallback, min));

    private static string Example(string option) => option switch
    {
        "--preset" => "seed3",
        "--topics" => "200",
        "--sweep" => "400,1000,2000",
        "--format" => "multipart",
        "--url" => "http://127.0.0.1:5000/",
        "--redis" => "127.0.0.1:6379",
        "--servers" => "2",
        "--out" => "loadtest-results",
        "--server-setting" => "MaxTopics=200000",
        "--server-env" => "DOTNET_gcServer=0",
        "--target" => "nchan",
        "--compare" => "laharsub,nchan",
        "--find-max-factor" => "1.5",
        _ => "10",
    };
}

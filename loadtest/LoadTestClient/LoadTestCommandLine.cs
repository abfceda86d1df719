using System.CommandLine;
using System.CommandLine.Help;
using System.CommandLine.Invocation;
using System.CommandLine.Parsing;
using System.Globalization;
using Laharsub.LoadTestClient.Load;

namespace Laharsub.LoadTestClient;

/// <summary>
/// The load generator's command line on System.CommandLine: help text, per-option validation and tab
/// completion (its <c>[suggest]</c> directive, which <c>dotnet-suggest</c> calls). Rules that join several
/// options (not both, at most one per instance, ...) are <see cref="LoadTestOptions.From"/>'s.
/// </summary>
internal sealed class LoadTestCommandLine
{
    public const string Examples = """
        Examples (the whole documented sweep; Laharsub next to nchan at seed1-200, with long polls and with streams;
        Laharsub, the .NET floor and nchan, each on core 0 and this tool on core 1):
          dotnet run -c Release --project loadtest/LoadTestClient -- --preset seed1,seed2,seed3 --out loadtest-results
          dotnet run -c Release --project loadtest/LoadTestClient -- --preset seed1 --topics 200 --compare laharsub,nchan
          dotnet run -c Release --project loadtest/LoadTestClient -- --preset seed1 --topics 200 --compare laharsub,nchan --transport sse
          dotnet run -c Release --project loadtest/LoadTestClient -- --preset seed1 --topics 200 --compare laharsub,floor,nchan --server-cpus 0 --client-cpus 1
        Laharsub as production runs it (Jwt mode with a token per client, a page's Origin, an Idempotency-Key on every publish):
          dotnet run -c Release --project loadtest/LoadTestClient -- --preset seed1 --topics 200 --jwt-key "$(openssl rand -base64 32)" --origin https://app.example.com --keyed-publishes
        Caplin Liberator's test feed on state topics (patches, patches with field-level conflation, whole documents), over WebSocket:
          dotnet run -c Release --project loadtest/LoadTestClient -- --preset liberator --topics 50 --conflate 500 --transport websocket
        """;

    /// <summary>Far above what any run here needs; it only keeps the arithmetic honest.</summary>
    public const int MaxTopics = 1_000_000;

    /// <summary>Two cores hold a few server processes; more only share the same cores.</summary>
    public const int MaxServers = 16;

    private static readonly string[] Targets = ["laharsub", "floor", "nchan"];

    public const string TransportDescription =
        "How each client receives its topics (default longpoll). longpoll: one long poll after another. sse: one Server-Sent "
        + "Events stream (Accept: text/event-stream on the same URL; nchan: its eventsource on /sub). websocket: one WebSocket "
        + "(Laharsub and the floor: subprotocol laharsub.v1, and each client publishes on its socket, the 'published' answer being the accepted "
        + "publish and its round trip; nchan: /sub with subprotocol ws+meta.nchan). Against nchan, publishes stay REST (POST /pub) on "
        + "every transport. A stream that breaks is reopened from the client's cursors (nchan: its last event id). Streams take no "
        + "--format and no --poll-timeout.";

    public LoadTestCommandLine()
    {
        Root = new RootCommand("""
            Laharsub load test client: simulates the original's chat workload (N topics, each with clients that
            publish to it on a fixed schedule and long-poll it) and measures delivery latency.
            Run it with: dotnet run -c Release --project loadtest/LoadTestClient -- [options]
            """);
        Option[] all =
        [
            Preset, FeedRuns, Topics, Sweep, ClientsPerTopic, PublishersPerTopic, Interval, TopicsPerClient, MessageSize, Conflate, Format, Transport, LongPollPercent, Presence,
            Warmup, Duration, PollTimeout, Processes, SourceAddresses, PublishConnections, MaxScheduleLag, Target, Compare,
            JwtKey, JwtIssuer, JwtAudience, Origin, KeyedPublishes,
            FindMax, FindMaxSteps, FindMaxFactor, Url, Servers, Redis, NoBuild, ServerPid, ServerSetting, ServerEnv, ServerCpus, ClientCpus, Out, SlowLog, SlowMs, Worker,
        ];
        foreach (var option in all)
        {
            Root.Options.Add(option);
        }
        // Enum options complete their member names (Json, Nchan) by default, which the parsers refuse.
        Format.CompletionSources.Clear();
        Format.CompletionSources.Add("json", "multipart");
        Target.CompletionSources.Clear();
        Target.CompletionSources.Add(Targets);
        Transport.CompletionSources.Clear();
        Transport.CompletionSources.Add(Transports.Names);
        var help = Root.Options.OfType<HelpOption>().Single();
        help.Action = new HelpWithExamples((HelpAction)help.Action!);
    }

    public RootCommand Root { get; }

    public Option<Preset[]> Preset { get; } = new("--preset")
    {
        Arity = ArgumentArity.ExactlyOne,
        HelpName = "NAME[,NAME]",
        Description = "seed1 (2 clients/topic, every 1 s), seed2 (2, every 5 s), seed3 (5, every 15 s), broadcast (2,000 clients/topic, "
            + "1 of them publishing every 1 s). Without --topics/--sweep a preset runs its default topic counts: seed1 50,100,200,400; "
            + "seed2 200,1000; seed3 400,1000,2000,3900; broadcast 5. liberator: Caplin Liberator's test feed on state topics (--topics subjects, default 50, "
            + "each updated every --interval with six fields; one subscriber through the .NET client), runs of its own (--feed-runs).",
        CustomParser = ParsePresets,
        CompletionSources = { LoadTestClient.Preset.All.Select(p => p.Name).ToArray() },
    };

    public Option<Feed.FeedMode[]> FeedRuns { get; } = new("--feed-runs")
    {
        Arity = ArgumentArity.ExactlyOne,
        HelpName = "state|conflated|whole[,...]",
        Description = "With --preset liberator, the runs (default all three): state (a state topic per subject, a merge patch per update), conflated "
            + "(the same, the subscriber asking for --conflate MS, default 500), whole (an ordinary topic per subject, the whole document per update).",
        CustomParser = result =>
        {
            var runs = new List<Feed.FeedMode>();
            foreach (var name in result.Tokens[0].Value.Split(','))
            {
                Feed.FeedMode? run = name switch { "state" => Feed.FeedMode.State, "conflated" => Feed.FeedMode.Conflated, "whole" => Feed.FeedMode.Whole, _ => null };
                if (run is null)
                {
                    return Refuse<Feed.FeedMode[]>(result, $"--feed-runs '{name}' is not a run: use state, conflated or whole (or several, comma-separated).");
                }
                runs.Add(run.Value);
            }
            return [.. runs.Distinct()];
        },
    };

    public Option<int> Topics { get; } = Whole("--topics", "N", 1, MaxTopics, "Number of topics (one run; default 100 without a preset).");

    public Option<int[]> Sweep { get; } = new("--sweep")
    {
        Arity = ArgumentArity.ExactlyOne,
        HelpName = "N,N,...",
        Description = "Topic counts to run one after another (one run each).",
        CustomParser = ParseSweep,
    };

    public Option<int> ClientsPerTopic { get; } = Whole("--clients-per-topic", "N", 1, 10_000, "Clients publishing to and subscribing to each topic (default 2, or the preset's).");

    public Option<int> PublishersPerTopic { get; } = Whole("--publishers-per-topic", "N", 1, 10_000, "How many of each topic's clients publish (default: all, or the preset's); the others only read.");

    public Option<double> Interval { get; } = Number("--interval", "SECONDS", 0.001, "Each client's publish interval (default 1, or the preset's).");

    public Option<int> TopicsPerClient { get; } = Whole("--topics-per-client", "N", 1, 1000, "Topics each client's single poll subscribes to: its own and the next N-1.", fallback: 1);

    public Option<int> MessageSize { get; } = Whole("--message-size", "BYTES", 10, 1024 * 1024, "Message body size, at least 10 (the original's size).", fallback: 10);

    public Option<int> Conflate { get; } = Whole("--conflate", "MS", 0, 60_000,
        "Ask Laharsub for conflation: conflate=MS on every poll and stream (0, the default, is off). Conflated ranges are counted with the gap notices.", fallback: 0);

    public Option<WireFormatKind> Format { get; } = new("--format")
    {
        HelpName = "json|multipart",
        // No DefaultValueFactory: help would print the enum's name (Json) where users type json.
        Description = "Poll response format (default json).",
        CustomParser = result => result.Tokens[0].Value switch
        {
            "json" => WireFormatKind.Json,
            "multipart" => WireFormatKind.Multipart,
            var other => Refuse<WireFormatKind>(result, $"--format '{other}' is not a format: use json or multipart."),
        },
    };

    public Option<TransportKind> Transport { get; } = new("--transport")
    {
        HelpName = "longpoll|sse|websocket",
        Description = TransportDescription,
        CustomParser = result => result.Tokens[0].Value switch
        {
            "longpoll" => TransportKind.LongPoll,
            "sse" => TransportKind.Sse,
            "websocket" => TransportKind.WebSocket,
            var other => Refuse<TransportKind>(result, $"--transport '{other}' is not a transport: use longpoll, sse or websocket."),
        },
    };

    public Option<int> LongPollPercent { get; } = Whole("--long-poll-percent", "PERCENT", 0, 100,
        "With --transport sse or websocket: this percentage of the clients long poll instead (every fifth at 20), so that one run mixes both.", fallback: 0);

    public Option<bool> Presence { get; } = new("--presence")
    {
        Description = "Laharsub: create the topics with presence and subscribe each client as a member (client=lt{N}; with --jwt-key, its token's subject loadtest-N), to measure what presence costs.",
    };

    public Option<string> JwtKey { get; } = new("--jwt-key")
    {
        HelpName = "KEY",
        Description = "Laharsub in Jwt mode: each client sends a token of its own (subject loadtest-N, granting subscribe on its topics and publish on "
            + "its home topic), signed HS256 with KEY (at least 32 bytes): Authorization: Bearer on polls and publishes, access_token in the URL of "
            + "SSE streams and WebSockets (what a browser must do). A server this tool starts is set to Jwt mode with this key, --jwt-issuer and "
            + "--jwt-audience; with --url, give your server's (Laharsub:Auth:Jwt:SigningKey, Issuer, Audience). Topics are created with a token "
            + "granting create and delete.",
        CustomParser = result => System.Text.Encoding.UTF8.GetByteCount(result.Tokens[0].Value) >= JwtSigning.MinKeyBytes ? result.Tokens[0].Value
            : Refuse<string>(result, $"--jwt-key is {System.Text.Encoding.UTF8.GetByteCount(result.Tokens[0].Value)} bytes; the server's HS256 key is at least {JwtSigning.MinKeyBytes}, e.g. --jwt-key \"$(openssl rand -base64 32)\"."),
    };

    public Option<string> JwtIssuer { get; } = NonEmpty("--jwt-issuer", "ISSUER", $"With --jwt-key: the tokens' iss (default {JwtSigning.DefaultIssuer}).");

    public Option<string> JwtAudience { get; } = NonEmpty("--jwt-audience", "AUDIENCE", $"With --jwt-key: the tokens' aud (default {JwtSigning.DefaultAudience}).");

    public Option<string> Origin { get; } = new("--origin")
    {
        HelpName = "ORIGIN",
        Description = "Laharsub: send Origin: ORIGIN on every request (polls, streams, publishes, WebSocket upgrades), as a page on that origin "
            + "would. A server this tool starts allows it (Laharsub:Cors:AllowedOrigins:0).",
        CustomParser = ParseOrigin,
    };

    public Option<bool> KeyedPublishes { get; } = new("--keyed-publishes")
    {
        Description = "Laharsub: every publish carries a fresh Idempotency-Key (\"UUID\"; on a WebSocket the publish frame's idempotencyKey), "
            + "as the .NET and jQuery clients send by default.",
    };

    public Option<double> Warmup { get; } = Number("--warmup", "SECONDS", 0, "Warm-up before measuring.", fallback: 10);

    public Option<double> Duration { get; } = Number("--duration", "SECONDS", 0.1, "Measured window.", fallback: 30);

    public Option<int> PollTimeout { get; } = Whole("--poll-timeout", "SECONDS", 1, 120, "The polls' timeout parameter.", fallback: 30);

    public Option<int> Processes { get; } = Whole("--processes", "N", 1, 64, "Spread the clients over N processes of this tool and merge their results.", fallback: 1);

    public Option<int> SourceAddresses { get; } = Whole("--source-addresses", "N", 1, 250, "Loopback source addresses 127.0.0.2.. to spread connections over.", fallback: 16);

    public Option<int> PublishConnections { get; } = Whole("--publish-connections", "N", 1, 10_000, "Connections per process beyond one per client, for publishing.", fallback: 32);

    public Option<double> MaxScheduleLag { get; } = Number("--max-schedule-lag", "MS", 0.01, "A run is INVALID when the 99th percentile of publish start lag exceeds this.", fallback: 5);

    public Option<TargetKind> Target { get; } = new("--target")
    {
        HelpName = "laharsub|floor|nchan",
        Description = "The server to measure (default laharsub). floor is loadtest/Floor: the part of Laharsub's wire this tool uses, "
            + "on ASP.NET Core's default request path and nothing else (what Laharsub's own code costs shows against it; JSON polls "
            + "only, no settings). nchan is nginx with loadtest/peers/nchan.conf (apt-get install -y nginx-light libnginx-mod-nchan), "
            + "polled one channel per client.",
        CustomParser = result => ParseTarget(result, "--target", result.Tokens[0].Value),
    };

    public Option<TargetKind[]> Compare { get; } = new("--compare")
    {
        Arity = ArgumentArity.ExactlyOne,
        HelpName = "T,T",
        Description = "Run every run against each target in turn (e.g. laharsub,nchan or laharsub,floor,nchan), alternating, each "
            + "on a server this tool starts, and print their ratios to the last one.",
        CustomParser = ParseCompare,
        CompletionSources = { "laharsub,nchan", "laharsub,floor", "floor,nchan", "laharsub,floor,nchan", "nchan,laharsub" },
    };

    public Option<bool> FindMax { get; } = new("--find-max")
    {
        Description = "Raise the publish rate step by step (the interval divided by --find-max-factor each step) until p99 from "
            + "schedule passes 50 ms or deliveries fall behind; report the highest sustained deliveries/s of each target. "
            + "Each step is a run (--warmup, --duration).",
    };

    public Option<int> FindMaxSteps { get; } = Whole("--find-max-steps", "N", 1, 50, "At most N steps per target.", fallback: 10);

    public Option<double> FindMaxFactor { get; } = Number("--find-max-factor", "F", 1.05, "Rate multiplier from one step to the next.", fallback: 1.5);

    public Option<Uri[]> Url { get; } = new("--url")
    {
        Arity = ArgumentArity.OneOrMore,
        HelpName = "URL",
        Description = "Use a running server (its root, e.g. http://127.0.0.1:5000/; Laharsub's and the floor's API is at /ps/, nchan's at /pub "
            + "and /sub). Without it, this repository's Release server (or floor, or nginx with loadtest/peers/nchan.conf) is started for each "
            + "run on a free port. Repeat it for several instances of one deployment: client i polls and publishes on URL i mod N.",
        CustomParser = result => [.. result.Tokens.Select(token => ParseUrl(result, token.Value))],
    };

    public Option<int> Servers { get; } = Whole("--servers", "N", 1, MaxServers,
        "Start N Laharsub server processes on one Redis for each run (each on its own free port), spread the clients over them "
        + "(client i on instance i mod N, topics created round robin, so deliveries cross instances) and sample each one and "
        + "redis-server. Without --redis, a private redis-server (free loopback port, own temporary directory, no persistence) "
        + "is started for each run. Without --servers, one in-memory server is started.");

    public Option<string> Redis { get; } = new("--redis")
    {
        HelpName = "HOST:PORT[,OPTIONS]",
        Description = "With --servers: use this Redis instead of a private one (each run uses a key prefix of its own); StackExchange.Redis options may follow, e.g. 127.0.0.1:7101,asyncTimeout=30000.",
        CustomParser = result => ParseRedis(result, result.Tokens[0].Value),
    };

    public Option<bool> NoBuild { get; } = new("--no-build")
    {
        Description = "Start the server's (and the floor's) existing Release build as it is (by default it is built first, "
            + "incrementally, so that a run never measures a stale build).",
    };

    public Option<int[]> ServerPid { get; } = new("--server-pid")
    {
        Arity = ArgumentArity.OneOrMore,
        HelpName = "PID",
        Description = "With --url: sample this process's memory and CPU during the run (with --target nchan: nginx's master, and "
            + "its workers with it). Repeatable, one per instance.",
        CustomParser = result => [.. result.Tokens.Select(token =>
            int.TryParse(token.Value, NumberStyles.None, CultureInfo.InvariantCulture, out var pid) && pid > 0 ? pid
                : Refuse<int>(result, $"--server-pid '{token.Value}' is not a process id: use the server's pid, e.g. --server-pid $(pgrep -n -f Laharsub.Server.Host)."))],
    };

    public Option<string[]> ServerSetting { get; } = new("--server-setting")
    {
        Arity = ArgumentArity.OneOrMore,
        HelpName = "K=V",
        Description = "Extra server setting for the server this tool starts, e.g. MaxTopics=200000 (repeatable).",
        CustomParser = result => [.. result.Tokens.Select(token => token.Value.Contains('=', StringComparison.Ordinal) ? token.Value
            : Refuse<string>(result, $"--server-setting '{token.Value}' is not KEY=VALUE, e.g. --server-setting MaxTopics=200000."))],
    };

    public Option<Dictionary<string, string>> ServerEnv { get; } = new("--server-env")
    {
        Arity = ArgumentArity.OneOrMore,
        HelpName = "NAME=VALUE",
        Description = "Environment variable for the server this tool starts (Laharsub or the floor), e.g. "
            + "DOTNET_ThreadPool_UnfairSemaphoreSpinLimit=0 (repeatable).",
        CustomParser = ParseEnvironment,
    };

    public Option<int[]> ServerCpus { get; } = new("--server-cpus")
    {
        HelpName = "LIST",
        Description = "Run the server this tool starts on these cores only (taskset -c LIST, e.g. 0): Laharsub, the floor, or nginx with one "
            + "worker per listed core. With --client-cpus on the other cores, a find-max search measures the server per core, "
            + "with a generator that does not share its core.",
        CustomParser = result => ParseCores(result, "--server-cpus"),
    };

    public Option<int[]> ClientCpus { get; } = new("--client-cpus")
    {
        HelpName = "LIST",
        Description = "Run this tool (and its --processes workers) on these cores only, e.g. 1.",
        CustomParser = result => ParseCores(result, "--client-cpus"),
    };

    public Option<string> Out { get; } = new("--out")
    {
        HelpName = "DIR",
        Description = "Write JSON and CSV per run, summary.csv and report.html to DIR.",
    };

    public Option<string> SlowLog { get; } = new("--slow-log")
    {
        HelpName = "PATH",
        Description = "Write the measured window's slow deliveries to PATH as CSV (wall-clock UTC µs of the message's creation and "
            + "receipt, latency, topic, transport, client), and this tool's own GC pauses, as they happen, to PATH with .client-gc.csv "
            + "for .csv: loadtest/scripts/tail_attribution.py sets both against the server's (loadtest/scripts/tail.sh runs it all). "
            + "One run, one process.",
        CustomParser = result => result.Tokens[0].Value is { Length: > 0 } path && !Directory.Exists(path) ? path
            : Refuse<string>(result, $"--slow-log '{result.Tokens[0].Value}' is not a file name: give the CSV to write, e.g. --slow-log out/slow.csv."),
    };

    public Option<double> SlowMs { get; } = Number("--slow-ms", "MS", 0.001,
        "With --slow-log: a delivery is slow from MS milliseconds on (default: the window's 99th percentile).");

    /// <summary>Only for the child processes this tool starts itself (--processes): the file holding a worker's plan.</summary>
    public Option<string> Worker { get; } = new("--worker") { Hidden = true };

    private static Option<string> NonEmpty(string name, string helpName, string description) => new(name)
    {
        HelpName = helpName,
        Description = description,
        CustomParser = result => result.Tokens[0].Value is { Length: > 0 } value && !string.IsNullOrWhiteSpace(value) ? value
            : Refuse<string>(result, $"{name} is empty: give the value your server checks, e.g. {name} {Example(name)}."),
    };

    /// <summary>An origin as a browser sends it: scheme, host and port (if not the default), nothing else.</summary>
    private static string ParseOrigin(ArgumentResult result)
    {
        var text = result.Tokens[0].Value;
        return Uri.TryCreate(text, UriKind.Absolute, out var uri) && (uri.Scheme == Uri.UriSchemeHttp || uri.Scheme == Uri.UriSchemeHttps)
            && uri.AbsolutePath == "/" && uri.Query.Length == 0 && uri.Fragment.Length == 0 && uri.UserInfo.Length == 0
            ? uri.GetLeftPart(UriPartial.Authority)
            : Refuse<string>(result, $"--origin '{text}' is not an origin: write a page's scheme, host and port only, e.g. --origin https://app.example.com.");
    }

    private static int[] ParseCores(ArgumentResult result, string option) =>
        Hosting.CpuAffinity.Parse(result.Tokens[0].Value, out var problem)
            ?? Refuse<int[]>(result, $"{option} {problem}, e.g. --server-cpus 0 --client-cpus 1.");

    /// <summary>Whether the option was on the command line (not only its default).</summary>
    public static bool Given(ParseResult parsed, Option option) => parsed.GetResult(option) is { Implicit: false };

    /// <summary>
    /// The parse errors as the tool prints them. An option given without its value gets an example value,
    /// which System.CommandLine's own "required argument missing" cannot know.
    /// </summary>
    public static IEnumerable<string> Describe(IReadOnlyList<ParseError> errors) => errors.Select(error =>
        error.SymbolResult is OptionResult { Tokens.Count: 0, Implicit: false } missing && missing.Option.Arity.MinimumNumberOfValues > 0
            ? $"Option {missing.Option.Name} needs a value, e.g. {missing.Option.Name} {Example(missing.Option.Name)}."
            : error.Message);

    private static Option<int> Whole(string name, string helpName, int min, int max, string description, int? fallback = null)
    {
        var option = new Option<int>(name)
        {
            HelpName = helpName,
            Description = description,
            CustomParser = result =>
                int.TryParse(result.Tokens[0].Value, NumberStyles.None, CultureInfo.InvariantCulture, out var value) && value >= min && value <= max
                    ? value
                    : Refuse<int>(result, $"{name} '{result.Tokens[0].Value}' is out of range: use a whole number from {min} to {max}."),
        };
        if (fallback is { } value)
        {
            option.DefaultValueFactory = _ => value;
        }
        return option;
    }

    private static Option<double> Number(string name, string helpName, double min, string description, double? fallback = null)
    {
        var option = new Option<double>(name)
        {
            HelpName = helpName,
            Description = description,
            CustomParser = result =>
                double.TryParse(result.Tokens[0].Value, NumberStyles.AllowDecimalPoint, CultureInfo.InvariantCulture, out var value) && value >= min && value <= 86_400
                    ? value
                    : Refuse<double>(result, $"{name} '{result.Tokens[0].Value}' is out of range: use a number from {min.ToString(CultureInfo.InvariantCulture)} to 86400, e.g. {name} 2.5."),
        };
        if (fallback is { } value)
        {
            option.DefaultValueFactory = _ => value;
        }
        return option;
    }

    private static T Refuse<T>(ArgumentResult result, string message)
    {
        result.AddError(message);
        return default!;
    }

    private static Preset[] ParsePresets(ArgumentResult result)
    {
        var names = result.Tokens[0].Value.Split(',');
        var presets = new List<Preset>();
        foreach (var name in names)
        {
            if (LoadTestClient.Preset.All.FirstOrDefault(p => p.Name == name) is not { } preset)
            {
                return Refuse<Preset[]>(result, $"--preset '{name}' is not a preset: use {string.Join(", ", LoadTestClient.Preset.All.Select(p => p.Name))} (or several, comma-separated).");
            }
            presets.Add(preset);
        }
        return [.. presets];
    }

    private static int[] ParseSweep(ArgumentResult result)
    {
        var sweep = result.Tokens[0].Value;
        var topics = new List<int>();
        foreach (var text in sweep.Split(','))
        {
            if (!int.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out var n) || n is <= 0 or > MaxTopics)
            {
                return Refuse<int[]>(result, $"--sweep '{sweep}': '{text}' is not a topic count; write integers from 1 to {MaxTopics} separated by commas, e.g. --sweep 400,1000,2000.");
            }
            topics.Add(n);
        }
        return [.. topics];
    }

    private static TargetKind ParseTarget(ArgumentResult result, string option, string name) => name switch
    {
        "laharsub" => TargetKind.Laharsub,
        "floor" => TargetKind.Floor,
        "nchan" => TargetKind.Nchan,
        _ => Refuse<TargetKind>(result, $"{option} '{name}' is not a target: use laharsub, floor or nchan."),
    };

    private static TargetKind[] ParseCompare(ArgumentResult result)
    {
        var compare = result.Tokens[0].Value;
        var names = compare.Split(',');
        if (names.FirstOrDefault(name => !Targets.Contains(name)) is { } unknown)
        {
            return Refuse<TargetKind[]>(result, $"--compare '{unknown}' is not a target: use laharsub, floor or nchan.");
        }
        var targets = names.Select(name => ParseTarget(result, "--compare", name)).ToArray();
        return targets.Length >= 2 && targets.Distinct().Count() == targets.Length ? targets
            : Refuse<TargetKind[]>(result, $"--compare '{compare}' needs two different targets, e.g. --compare laharsub,nchan.");
    }

    private static Uri ParseUrl(ArgumentResult result, string text) =>
        Uri.TryCreate(text, UriKind.Absolute, out var uri) && uri.Scheme == Uri.UriSchemeHttp
            ? new Uri(uri.GetLeftPart(UriPartial.Authority) + "/")
            : Refuse<Uri>(result, $"--url '{text}' is not an http:// URL of a server root, e.g. --url http://127.0.0.1:5000/.");

    private static string ParseRedis(ArgumentResult result, string text)
    {
        // HOST:PORT first; StackExchange.Redis options may follow it (127.0.0.1:7101,asyncTimeout=30000).
        var endpoint = text.Split(',')[0];
        var colon = endpoint.LastIndexOf(':');
        return colon > 0 && int.TryParse(endpoint.AsSpan(colon + 1), NumberStyles.None, CultureInfo.InvariantCulture, out var port) && port is >= 1 and <= 65535
            ? text
            : Refuse<string>(result, $"--redis '{text}' is not HOST:PORT (optionally followed by StackExchange.Redis options), e.g. --redis 127.0.0.1:6379 or --redis 127.0.0.1:7101,asyncTimeout=30000.");
    }

    private static Dictionary<string, string> ParseEnvironment(ArgumentResult result)
    {
        var environment = new Dictionary<string, string>(StringComparer.Ordinal);
        foreach (var token in result.Tokens)
        {
            var equals = token.Value.IndexOf('=', StringComparison.Ordinal);
            if (equals <= 0)
            {
                return Refuse<Dictionary<string, string>>(result, $"--server-env '{token.Value}' is not NAME=VALUE, e.g. --server-env DOTNET_gcServer=0.");
            }
            environment[token.Value[..equals]] = token.Value[(equals + 1)..];
        }
        return environment;
    }

    private static string Example(string option) => option switch
    {
        "--preset" => "seed3",
        "--topics" => "200",
        "--sweep" => "400,1000,2000",
        "--format" => "multipart",
        "--transport" => "sse",
        "--url" => "http://127.0.0.1:5000/",
        "--redis" => "127.0.0.1:6379",
        "--servers" => "2",
        "--out" => "loadtest-results",
        "--server-setting" => "MaxTopics=200000",
        "--server-env" => "DOTNET_gcServer=0",
        "--target" => "nchan",
        "--compare" => "laharsub,nchan",
        "--find-max-factor" => "1.5",
        "--jwt-key" => "\"$(openssl rand -base64 32)\"",
        "--jwt-issuer" => "https://login.example.com",
        "--jwt-audience" => "laharsub",
        "--origin" => "https://app.example.com",
        "--slow-log" => "out/slow.csv",
        _ => "10",
    };

    /// <summary>System.CommandLine's help, then the examples, which it has no place for.</summary>
    private sealed class HelpWithExamples(HelpAction help) : SynchronousCommandLineAction
    {
        public override int Invoke(ParseResult parseResult)
        {
            var exit = help.Invoke(parseResult);
            parseResult.InvocationConfiguration.Output.WriteLine(Examples);
            return exit;
        }
    }
}

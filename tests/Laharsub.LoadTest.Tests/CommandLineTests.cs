using Laharsub.LoadTestClient;
using Laharsub.LoadTestClient.Load;

namespace Laharsub.LoadTest.Tests;

/// <summary>Bad options are refused with a message that says what to write instead, and a non-zero exit.</summary>
public sealed class CommandLineTests
{
    [Theory]
    [InlineData("--topics abc", "--topics 'abc' is out of range")]
    [InlineData("--message-size 5", "--message-size '5' is out of range: use a whole number from 10")]
    [InlineData("--format xml", "use json or multipart")]
    [InlineData("--preset seed9", "use seed1, seed2, seed3")]
    [InlineData("--sweep 10,x", "'x' is not a topic count")]
    [InlineData("--topics 10 --sweep 10,20", "not both")]
    [InlineData("--bogus 1", "Unrecognized command or argument '--bogus'")]
    [InlineData("--topics", "needs a value")]
    [InlineData("--server-pid 12", "--server-pid samples a server given with --url")]
    [InlineData("--url ftp://x/", "is not an http:// URL")]
    [InlineData("--server-env FOO", "is not NAME=VALUE")]
    [InlineData("--sweep 10,2000000", "'2000000' is not a topic count; write integers from 1 to 1000000")]
    [InlineData("--topics 1000000 --clients-per-topic 10000", "would simulate 10000000000 clients")]
    [InlineData("--topics 5 --topics-per-client 6", "--topics-per-client 6 needs at least that many topics")]
    [InlineData("--topics 1 --clients-per-topic 2 --processes 3", "--processes 3 is more than the 2 clients")]
    [InlineData("--url http://127.0.0.1:1/ --server-setting A=B", "with --url, configure your server yourself")]
    [InlineData("--target apache", "--target 'apache' is not a target: use laharsub, floor or nchan")]
    [InlineData("--compare laharsub", "--compare 'laharsub' needs two different targets")]
    [InlineData("--compare nchan,nchan", "needs two different targets, e.g. --compare laharsub,nchan")]
    [InlineData("--compare laharsub,faye", "--compare 'faye' is not a target")]
    [InlineData("--target nchan --compare laharsub,nchan", "Give either --target T (one server) or --compare T,T")]
    [InlineData("--compare laharsub,nchan --url http://127.0.0.1:1/", "--compare starts each server itself")]
    [InlineData("--target nchan --topics 4 --topics-per-client 2", "runs against nchan need --topics-per-client 1")]
    [InlineData("--compare laharsub,nchan --topics 4 --topics-per-client 2", "runs against nchan need --topics-per-client 1")]
    [InlineData("--target nchan --format multipart", "--target nchan takes no --format")]
    [InlineData("--target nchan --server-env DOTNET_gcServer=0", "nchan is configured by loadtest/peers/nchan.conf")]
    [InlineData("--find-max-steps 3", "add --find-max")]
    [InlineData("--find-max --find-max-factor 1", "--find-max-factor '1' is out of range: use a number from 1.05")]
    [InlineData("--find-max --find-max-steps 0", "--find-max-steps '0' is out of range")]
    [InlineData("--clients-per-topic 2 --publishers-per-topic 3", "--publishers-per-topic 3 is more than the 2 clients per topic")]
    [InlineData("--servers 0", "--servers '0' is out of range: use a whole number from 1 to 16")]
    [InlineData("--preset liberator --compare laharsub,nchan", "--preset liberator runs on its own")]
    [InlineData("--preset liberator,seed1", "not other presets")]
    [InlineData("--preset liberator --feed-runs state,fast", "--feed-runs 'fast' is not a run: use state, conflated or whole")]
    [InlineData("--preset liberator --feed-runs conflated --conflate 0", "--feed-runs conflated needs a conflation interval")]
    [InlineData("--feed-runs whole", "--feed-runs chooses the runs of --preset liberator")]
    [InlineData("--servers 17", "--servers '17' is out of range")]
    [InlineData("--servers", "Option --servers needs a value, e.g. --servers 2")]
    [InlineData("--redis 127.0.0.1:6379", "--redis names the Redis that the servers started with --servers share; add --servers N")]
    [InlineData("--servers 2 --redis localhost", "--redis 'localhost' is not HOST:PORT (optionally followed by StackExchange.Redis options)")]
    [InlineData("--servers 2 --redis localhost:99999", "--redis 'localhost:99999' is not HOST:PORT")]
    [InlineData("--servers 2 --url http://127.0.0.1:1/", "Give either --servers N (this tool starts N servers on one Redis) or --url URL")]
    [InlineData("--servers 2 --target nchan", "--servers starts Laharsub servers on Redis; it cannot be combined with --target nchan, --target floor or --compare")]
    [InlineData("--servers 2 --compare laharsub,nchan", "it cannot be combined with --target nchan, --target floor or --compare")]
    [InlineData("--servers 2 --target floor", "it cannot be combined with --target nchan, --target floor or --compare")]
    [InlineData("--target floor --format multipart", "the floor answers polls in JSON only, so runs against it take no --format multipart")]
    [InlineData("--compare laharsub,floor --format multipart", "the floor answers polls in JSON only")]
    [InlineData("--target floor --server-setting MaxTopics=10", "--server-setting configures Laharsub; the floor has no settings")]
    [InlineData("--compare floor,floor", "needs two different targets")]
    [InlineData("--server-cpus x", "--server-cpus 'x' is not a list of cores such as 0, 1-3 or 0,2")]
    [InlineData("--client-cpus 1-0", "--client-cpus '1-0' in '1-0' runs backwards")]
    [InlineData("--server-cpus 999", "--server-cpus '999' names core 999, but this machine has cores 0-")]
    [InlineData("--server-cpus 0 --client-cpus 0", "--server-cpus and --client-cpus share a core")]
    [InlineData("--url http://127.0.0.1:1/ --server-cpus 0", "with --url, start your server under taskset -c yourself")]
    [InlineData("--url http://127.0.0.1:1/ --url http://127.0.0.1:1", "The same --url is given twice")]
    [InlineData("--url http://127.0.0.1:1/ --server-pid 10 --server-pid 11", "2 --server-pid for 1 --url: give at most one pid per instance")]
    [InlineData("--url http://127.0.0.1:1/ --server-pid abc", "--server-pid 'abc' is not a process id")]
    [InlineData("--url http://127.0.0.1:1/ --url ftp://x/", "--url 'ftp://x/' is not an http:// URL")]
    [InlineData("--transport pigeon", "--transport 'pigeon' is not a transport: use longpoll, sse or websocket.")]
    [InlineData("--transport", "Option --transport needs a value, e.g. --transport sse")]
    [InlineData("--transport sse --format multipart", "--format chooses the long poll's answer format; --transport sse delivers each message as a JSON event")]
    [InlineData("--transport websocket --format json", "--transport websocket delivers each message as a JSON frame (nchan: as it was published), so it takes no --format")]
    [InlineData("--transport sse --poll-timeout 10", "--poll-timeout is the long poll's timeout; --transport sse holds one stream open per client")]
    [InlineData("--compare laharsub,nchan --transport websocket --poll-timeout 10", "--transport websocket holds one stream open per client for the whole run, so it takes no --poll-timeout")]
    [InlineData("--target nchan --transport sse --topics 4 --topics-per-client 2", "runs against nchan need --topics-per-client 1")]
    [InlineData("--long-poll-percent 20", "--long-poll-percent mixes long polls into a run of streams; add --transport sse or --transport websocket")]
    [InlineData("--transport sse --long-poll-percent 101", "--long-poll-percent '101' is out of range")]
    [InlineData("--target nchan --presence", "nchan has none, so run --presence with --target laharsub")]
    [InlineData("--slow-ms 5", "--slow-ms sets the threshold of --slow-log; add --slow-log PATH")]
    [InlineData("--slow-log slow.csv --slow-ms 0", "--slow-ms '0' is out of range")]
    [InlineData("--slow-log slow.csv --sweep 10,20", "it cannot be combined with 2 runs (--sweep, --compare or a preset's topic counts)")]
    [InlineData("--slow-log slow.csv --topics 10 --processes 2", "it cannot be combined with --processes 2")]
    [InlineData("--slow-log slow.csv --find-max", "it cannot be combined with --find-max")]
    [InlineData("--slow-log slow.csv --preset liberator", "it cannot be combined with --preset liberator")]
    [InlineData("--slow-log /", "--slow-log '/' is not a file name")]
    public async Task ABadOptionIsRefusedWithAClearMessage(string arguments, string message)
    {
        var (exit, _, error) = await RunAsync(arguments.Split(' '));

        Assert.Equal(2, exit);
        Assert.Contains(message, error);
    }

    [Fact]
    public void TheGeneratorsGcPausesAreWrittenBesideTheSlowLog()
    {
        var options = LoadTestOptions.Parse(["--topics", "10", "--slow-log", "out/slow.csv", "--slow-ms", "2.5"]);

        Assert.Equal(("out/slow.csv", "out/slow.client-gc.csv", TimeSpan.FromMilliseconds(2.5)), (options.SlowLogPath, options.ClientGcLogPath, options.SlowThreshold));
        Assert.Null(LoadTestOptions.Parse(["--topics", "10", "--slow-log", "slow"]).SlowThreshold);
        Assert.Equal("slow.client-gc.csv", LoadTestOptions.Parse(["--topics", "10", "--slow-log", "slow"]).ClientGcLogPath);
    }

    [Fact]
    public void APresetRunsTheOriginalConfigurationAtItsDefaultTopicCounts()
    {
        var options = LoadTestOptions.Parse(["--preset", "seed3"]);

        Assert.Equal([400, 1000, 2000, 3900], options.Runs.Select(r => r.Topics));
        Assert.All(options.Runs, r => Assert.Equal((5, TimeSpan.FromSeconds(15)), (r.ClientsPerTopic, r.Interval)));
        Assert.Equal(TimeSpan.FromSeconds(10), options.Warmup);
        Assert.Equal(TimeSpan.FromSeconds(30), options.Duration);
    }

    [Fact]
    public void ASweepRunsEachPresetAtEachTopicCount()
    {
        var options = LoadTestOptions.Parse(["--preset", "seed1,seed2", "--sweep", "10,20"]);

        Assert.Equal(["seed1-10t", "seed1-20t", "seed2-10t", "seed2-20t"], options.Runs.Select(r => r.Name));
    }

    [Fact]
    public void CompareRunsEachShapeAgainstEveryTargetInTurn()
    {
        var options = LoadTestOptions.Parse(["--preset", "seed1", "--sweep", "100,200", "--compare", "laharsub,nchan"]);

        Assert.True(options.Compare);
        Assert.Equal(["seed1-100t-laharsub", "seed1-100t-nchan", "seed1-200t-laharsub", "seed1-200t-nchan"], options.Runs.Select(r => r.Name));
        Assert.Equal([TargetKind.Laharsub, TargetKind.Nchan, TargetKind.Laharsub, TargetKind.Nchan], options.Runs.Select(r => r.Target));
    }

    [Fact]
    public void ARunAgainstNchanAloneIsNamedForItAndLaharsubStaysTheDefault()
    {
        Assert.Equal(["custom-4t-nchan"], LoadTestOptions.Parse(["--target", "nchan", "--topics", "4"]).Runs.Select(r => r.Name));
        Assert.Equal([("custom-4t", TargetKind.Laharsub)], LoadTestOptions.Parse(["--topics", "4"]).Runs.Select(r => (r.Name, r.Target)));
    }

    [Fact]
    public void CompareTakesLaharsubTheFloorAndNchanInTurnAndTheFloorAloneIsNamedForIt()
    {
        var three = LoadTestOptions.Parse(["--topics", "4", "--compare", "laharsub,floor,nchan"]);
        var floor = LoadTestOptions.Parse(["--target", "floor", "--topics", "4", "--topics-per-client", "2", "--transport", "websocket", "--server-env", "DOTNET_gcServer=0"]);

        Assert.Equal(["custom-4t-laharsub", "custom-4t-floor", "custom-4t-nchan"], three.Runs.Select(r => r.Name));
        Assert.Equal([TargetKind.Laharsub, TargetKind.Floor, TargetKind.Nchan], three.Runs.Select(r => r.Target));
        Assert.Equal(("custom-4t-websocket-floor", TargetKind.Floor), (Assert.Single(floor.Runs).Name, floor.Runs[0].Target));
        Assert.Equal(["laharsub", "floor"], LoadTestOptions.Parse(["--topics", "4", "--compare", "laharsub,floor"]).Targets.Select(RunSpec.TargetName));
        Assert.Equal(["floor", "nchan"], LoadTestOptions.Parse(["--topics", "4", "--compare", "floor,nchan"]).Targets.Select(RunSpec.TargetName));
    }

    [Fact]
    public void TheTransportIsLongPollsUnlessGivenAndARunOfStreamsIsNamedForIt()
    {
        var polls = LoadTestOptions.Parse(["--topics", "4"]);
        var streams = LoadTestOptions.Parse(["--topics", "4", "--transport", "sse"]);
        var sockets = LoadTestOptions.Parse(["--preset", "seed1", "--topics", "200", "--compare", "laharsub,nchan", "--transport", "websocket"]);

        Assert.Equal((TransportKind.LongPoll, "custom-4t"), (polls.Transport, Assert.Single(polls.Runs).Name));
        Assert.Equal((TransportKind.Sse, "custom-4t-sse"), (streams.Transport, Assert.Single(streams.Runs).Name));
        Assert.Equal(["seed1-200t-websocket-laharsub", "seed1-200t-websocket-nchan"], sockets.Runs.Select(r => r.Name));
        Assert.All(sockets.Runs, r => Assert.Equal(TransportKind.WebSocket, r.Transport));
    }

    [Fact]
    public void TheLiberatorPresetRunsFiftySubjectsAsPatchesConflatedPatchesAndWholeDocuments()
    {
        var defaults = LoadTestOptions.Parse(["--preset", "liberator"]);
        var chosen = LoadTestOptions.Parse(["--preset", "liberator", "--topics", "200", "--conflate", "250", "--feed-runs", "conflated,whole", "--transport", "websocket"]);
        var unconflated = LoadTestOptions.Parse(["--preset", "liberator", "--conflate", "0"]);

        Assert.Empty(defaults.Runs);
        Assert.Equal((50, TimeSpan.FromSeconds(1), 500, "State,Conflated,Whole"), (defaults.Feed!.Subjects, defaults.Feed.Interval, defaults.Feed.ConflateMilliseconds, string.Join(',', defaults.Feed.Modes)));
        Assert.Equal((200, 250, "Conflated,Whole", TransportKind.WebSocket), (chosen.Feed!.Subjects, chosen.Feed.ConflateMilliseconds, string.Join(',', chosen.Feed.Modes), chosen.Transport));
        Assert.Equal("State,Whole", string.Join(',', unconflated.Feed!.Modes));
        Assert.Null(LoadTestOptions.Parse(["--preset", "seed1"]).Feed);
    }

    [Fact]
    public void TheBroadcastPresetHasAFewTopicsEachWithOnePublisherAndThousandsOfReaders()
    {
        var run = Assert.Single(LoadTestOptions.Parse(["--preset", "broadcast"]).Runs);

        Assert.Equal(("broadcast", 5, 2000, 1, TimeSpan.FromSeconds(1)), (run.Configuration, run.Topics, run.ClientsPerTopic, run.PublishersOfEachTopic, run.Interval));
    }

    [Fact]
    public void PublishersPerTopicLeavesTheOtherClientsReadingOnly()
    {
        var run = Assert.Single(LoadTestOptions.Parse(["--topics", "3", "--clients-per-topic", "10", "--publishers-per-topic", "2"]).Runs);
        var plan = LoadRuns.Plan(new Uri("http://127.0.0.1:9/"), [1, 2, 3]) with { ClientsPerTopic = run.ClientsPerTopic, PublishersPerTopic = run.PublishersPerTopic };
        using var engine = new LoadEngine(plan);

        Assert.Equal(6, engine.Clients.Count(c => c.Publishes));
        Assert.Equal(30, engine.Clients.Count);
        Assert.Equal(6 / plan.PublishInterval.TotalSeconds, plan.TargetPublishesPerSecond);
        // The publishers are spread evenly over the interval, as when every client publishes.
        var phases = engine.Clients.Where(c => c.Publishes).Select(c => c.PhaseMicroseconds).Order().ToList();
        Assert.Equal(phases.Count, phases.Distinct().Count());
        Assert.True(phases[^1] < plan.PublishInterval.TotalMicroseconds);
    }

    [Fact]
    public void ServersNamesTheRunsAndSpreadsClientsOverTheInstances()
    {
        var options = LoadTestOptions.Parse(["--preset", "seed3", "--topics", "5000", "--servers", "2", "--redis", "127.0.0.1:6379", "--processes", "2"]);

        Assert.Equal((2, 2, "127.0.0.1:6379"), (options.Servers, options.Instances, options.Redis));
        Assert.Equal(["seed3-5000t-redis2"], options.Runs.Select(r => r.Name));
        Assert.Null(LoadTestOptions.Parse(["--topics", "4"]).Servers);
        Assert.Equal(1, LoadTestOptions.Parse(["--topics", "4"]).Instances);
    }

    [Fact]
    public void SeveralUrlsAreSeveralInstancesEachWithItsOwnPid()
    {
        var options = LoadTestOptions.Parse(["--topics", "4", "--url", "http://127.0.0.1:5001/", "--url", "http://127.0.0.1:5002/x", "--server-pid", "10", "--server-pid", "11"]);

        Assert.Equal([new Uri("http://127.0.0.1:5001/"), new Uri("http://127.0.0.1:5002/")], options.Urls);
        Assert.Equal([10, 11], options.ServerPids);
        Assert.Equal(2, options.Instances);
        Assert.Equal(["custom-4t-2urls"], options.Runs.Select(r => r.Name));
    }

    [Fact]
    public void ClientIPollsAndPublishesOnInstanceIModN()
    {
        Uri[] instances = [new("http://127.0.0.1:5001/ps/"), new("http://127.0.0.1:5002/ps/"), new("http://127.0.0.1:5003/ps/")];
        var plan = LoadRuns.Plan(new Uri("http://127.0.0.1:5001/"), [7, 8]) with { ClientsPerTopic = 3, InstanceAddresses = instances };
        using var engine = new LoadEngine(plan);

        Assert.Equal(6, engine.Clients.Count);
        for (var i = 0; i < engine.Clients.Count; i++)
        {
            Assert.Equal(new Uri(instances[i % 3], $"topics/{engine.Clients[i].HomeTopicId}"), engine.Clients[i].PublishUri);
        }
        // The three clients of each topic sit on three different instances: deliveries cross them.
        Assert.All(engine.Clients.GroupBy(c => c.HomeTopicId), topic => Assert.Equal(3, topic.Select(c => c.PublishUri.Port).Distinct().Count()));
    }

    [Theory]
    // seed3 at 5,000 topics: 25,000 polls do not fit one server process (in memory, or one instance on Redis).
    [InlineData("--preset seed3 --topics 5000 --processes 2", "about 25000 polls per server process, but the open-file limit (20000) fits about 19672 per server process here",
        "Spread them over several server processes on Redis with --servers 2 (or more)")]
    [InlineData("--preset seed3 --topics 5000 --processes 2 --servers 1", "about 25000 polls per server process", "Use --servers 2 or more")]
    // Nor 25,000 clients one generator process.
    [InlineData("--preset seed3 --topics 5000 --servers 2", "25000 clients in 1 generator process(es) means 25000 connections per process",
        "plus 32 for publishing to each of 2 instance(s)")]
    [InlineData("--preset seed3 --topics 5000 --servers 2", "Use --processes 2 or more", "The hard limit (20000) can be raised only by root")]
    [InlineData("--preset seed3 --topics 20000 --processes 8 --servers 4", "about 25000 polls per server process", "Use --servers 6 or more")]
    // 20,000 polls and their publishers do not fit one server process, even with the connection limit sized to the run.
    [InlineData("--preset seed3 --topics 4000 --processes 2", "about 20000 polls per server process", "fits about 19672 per server process here")]
    public void ARunThatCannotFitTheOpenFileLimitIsRefusedWithWhatToChange(string arguments, string message, string advice)
    {
        var options = LoadTestOptions.Parse(arguments.Split(' '));
        var run = Assert.Single(options.Runs);

        var refusal = Assert.Throws<UsageException>(() =>
            RunExecutor.CheckFileLimits(options, run.Topics * run.ClientsPerTopic, run.Target, soft: 20_000, hard: 20_000));

        Assert.Contains(message, refusal.Message);
        Assert.Contains(advice, refusal.Message);
    }

    [Theory]
    [InlineData("--preset seed3 --topics 5000 --processes 2 --servers 2")]
    [InlineData("--preset seed3 --topics 20000 --processes 8 --servers 6")]
    [InlineData("--preset seed3 --topics 3500 --processes 1")]
    // The issue's shape: 19,500 polls on one server process, whose connection limit the tool sizes to the run.
    [InlineData("--preset seed3 --topics 3900")]
    public void ARunThatFitsTheOpenFileLimitIsAccepted(string arguments)
    {
        var options = LoadTestOptions.Parse(arguments.Split(' '));
        var run = Assert.Single(options.Runs);

        RunExecutor.CheckFileLimits(options, run.Topics * run.ClientsPerTopic, run.Target, soft: 20_000, hard: 20_000);
    }

    [Theory]
    // 19,500 polls, 32 publish connections and the tool's 64: beyond the server's own reserve, so the limit is the run's.
    [InlineData("--preset seed3 --topics 3900", "--Kestrel:Limits:MaxConcurrentConnections=19596")]
    [InlineData("--preset seed3 --topics 3900 --processes 2", "--Kestrel:Limits:MaxConcurrentConnections=19628")]
    // Within the server's own reserve: its limit is left to it.
    [InlineData("--preset seed3 --topics 3700", null)]
    [InlineData("--preset seed1 --topics 200", null)]
    public void AServerStartedForARunLargerThanItsDefaultsHasItsConnectionLimitSizedToTheRun(string arguments, string? expected)
    {
        var options = LoadTestOptions.Parse(arguments.Split(' '));

        var settings = RunExecutor.ServerSettings(options, Assert.Single(options.Runs), openFileLimit: 20_000);

        Assert.Equal(expected, settings.SingleOrDefault(s => s.StartsWith("--Kestrel:Limits:MaxConcurrentConnections=", StringComparison.Ordinal)));
    }

    [Fact]
    public void FindMaxTakesItsStepsAndFactor()
    {
        var options = LoadTestOptions.Parse(["--preset", "seed1", "--topics", "200", "--compare", "laharsub,nchan", "--find-max", "--find-max-steps", "6", "--find-max-factor", "2"]);

        Assert.True(options.FindMax);
        Assert.Equal((6, 2.0), (options.FindMaxSteps, options.FindMaxFactor));
        Assert.False(LoadTestOptions.Parse(["--topics", "4"]).FindMax);
    }

    [Fact]
    public async Task HelpListsTheOptionsWithTheirDefaultsAndTheExamples()
    {
        var (exit, help, error) = await RunAsync(["--help"]);

        Assert.Equal(0, exit);
        Assert.Contains("--processes <N>", help);
        Assert.Contains("--compare <T,T>", help);
        Assert.Contains("--find-max", help);
        Assert.Contains("--servers <N>", help);
        Assert.Contains("--redis <HOST:PORT[,OPTIONS]>", help);
        Assert.Contains("--transport <longpoll|sse|websocket>", help);
        Assert.Contains("Against nchan, publishes stay REST (POST /pub) on every transport", System.Text.RegularExpressions.Regex.Replace(help, @"\s+", " "));
        Assert.Contains("--compare laharsub,nchan --transport sse", help);
        Assert.Contains("--target <laharsub|floor|nchan>", help);
        Assert.Contains("--compare laharsub,floor,nchan --server-cpus 0 --client-cpus 1", help);
        Assert.Matches(@"--duration <SECONDS>\s+Measured window\. \[default: 30\]", help);
        Assert.Contains("--preset seed1,seed2,seed3 --out loadtest-results", help);
        // The workers' own option is for the processes this tool starts, not for users.
        Assert.DoesNotContain("--worker", help);
        Assert.Equal("", error);
    }

    [Theory]
    [InlineData("--duration soon", "--duration 'soon' is out of range: use a number from 0.1 to 86400, e.g. --duration 2.5.")]
    [InlineData("--processes 2 --processes 3", "--processes")]
    public async Task ABadValueIsRefusedNamingItsOptionBeforeAnythingRuns(string arguments, string message)
    {
        var (exit, output, error) = await RunAsync(arguments.Split(' '));

        Assert.Equal(2, exit);
        var lines = error.Split(Environment.NewLine, StringSplitOptions.RemoveEmptyEntries);
        Assert.StartsWith("error: ", lines[0]);
        Assert.Contains(message, lines[0]);
        Assert.Equal("Run with --help for the list of options.", lines[^1]);
        // Refused while parsing: no build, no file-limit line, no run.
        Assert.Equal("", output);
    }

    [Theory]
    [InlineData("--format ", "json,multipart")]
    [InlineData("--target n", "nchan")]
    [InlineData("--target ", "floor,laharsub,nchan")]
    [InlineData("--transport ", "longpoll,sse,websocket")]
    [InlineData("--preset seed", "seed1,seed2,seed3")]
    [InlineData("--find-m", "--find-max,--find-max-factor,--find-max-steps")]
    public async Task TheSuggestDirectiveCompletesForDotnetSuggest(string typed, string expected)
    {
        // What dotnet-suggest runs on Tab: the directive with the cursor position, then the line typed so far.
        var (exit, output, _) = await RunAsync([$"[suggest:{typed.Length}]", typed]);

        Assert.Equal(0, exit);
        Assert.Equal(expected.Split(','), output.Split('\n', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries));
    }

    private static async Task<(int Exit, string Output, string Error)> RunAsync(string[] arguments)
    {
        using var output = new StringWriter();
        using var error = new StringWriter();
        var exit = await LoadTestCommand.RunAsync(arguments, output, error, CancellationToken.None).WaitAsync(TimeSpan.FromSeconds(10));
        return (exit, output.ToString(), error.ToString());
    }
}

using Laharsub.LoadTestClient.Measurement;

namespace Laharsub.LoadTestClient.Reporting;

/// <summary>The server's resource use during the measured window.</summary>
/// <remarks>Memory is the RSS of a one-process server, and the summed PSS of a server of several processes (nginx's master and workers).</remarks>
internal sealed record ServerUsage(int Pid, int Processes, double RssMeanMiB, double RssMaxMiB, double CpuPercentOfOneCore,
    double CpuMicrosecondsPerDelivery, List<double[]> RssSamplesMiB)
{
    /// <summary>What the process is in the run: server, server1, server2, ..., redis, or total.</summary>
    public string Name { get; init; } = "server";

    /// <summary>Memory before the run's clients connected (RSS, or nginx's summed PSS); null when not read.</summary>
    public double? IdleRssMiB { get; init; }

    /// <summary>Memory growth over <see cref="IdleRssMiB"/> (mean over the window) per subscriber connection it held; null when not known.</summary>
    public double? MemoryPerConnectionKiB { get; init; }

    /// <summary>Several processes as one: CPU and memory summed (the memory samples of the first process only).</summary>
    public static ServerUsage Total(IReadOnlyList<ServerUsage> parts) =>
        new(parts[0].Pid, parts.Sum(p => p.Processes), parts.Sum(p => p.RssMeanMiB), parts.Sum(p => p.RssMaxMiB),
            parts.Sum(p => p.CpuPercentOfOneCore), parts.Sum(p => p.CpuMicrosecondsPerDelivery), [])
        {
            Name = "total",
            IdleRssMiB = parts.All(p => p.IdleRssMiB is not null) ? parts.Sum(p => p.IdleRssMiB) : null,
        };
}

/// <summary>Everything reported about one run (one configuration at one topic count).</summary>
internal sealed record RunReport
{
    public required string Name { get; init; }

    /// <summary>The server measured: laharsub or nchan.</summary>
    public string Target { get; init; } = "laharsub";
    public required string Configuration { get; init; }
    public required int Topics { get; init; }
    public required int ClientsPerTopic { get; init; }
    public int PublishersPerTopic { get; init; }
    public required int TopicsPerClient { get; init; }
    public required int Clients { get; init; }
    public required double IntervalSeconds { get; init; }
    public required int MessageSize { get; init; }
    public required string Format { get; init; }

    /// <summary>How the clients received: longpoll, sse or websocket.</summary>
    public string Transport { get; init; } = "longpoll";

    /// <summary>With a stream transport, the percentage of clients that long polled instead.</summary>
    public int LongPollPercent { get; init; }

    /// <summary>Whether the topics had presence and every client subscribed as a member.</summary>
    public bool Presence { get; init; }

    /// <summary>Whether the run was in Jwt mode, every client sending a token of its own (--jwt-key).</summary>
    public bool Jwt { get; init; }

    /// <summary>The Origin every request carried (--origin); null: none.</summary>
    public string? Origin { get; init; }

    /// <summary>Whether every publish carried an Idempotency-Key (--keyed-publishes).</summary>
    public bool KeyedPublishes { get; init; }

    /// <summary>Where publishes went: http (REST requests) or websocket (each client's own socket).</summary>
    public string PublishVia { get; init; } = "http";
    public required double WarmupSeconds { get; init; }
    public required double DurationSeconds { get; init; }
    public required int Processes { get; init; }
    public required DateTimeOffset StartedAt { get; init; }
    public required string Command { get; init; }
    public string? ServerCommand { get; init; }

    public required double TargetPublishesPerSecond { get; init; }
    public required double AchievedPublishesPerSecond { get; init; }
    public required long DeliveriesExpected { get; init; }
    public required long DeliveriesReceived { get; init; }

    /// <summary>Deliveries expected (accepted publishes in the window times subscribers) that never arrived.</summary>
    public long DeliveriesMissing => DeliveriesExpected - DeliveriesReceived;

    /// <summary>From the time each message was created (the original's metric).</summary>
    public required LatencySummary Latency { get; init; }

    /// <summary>From the time each message was meant to be sent (coordinated omission corrected).</summary>
    public required LatencySummary LatencyFromSchedule { get; init; }

    public required LatencySummary ScheduleLag { get; init; }
    public required LatencySummary PublishRoundTrip { get; init; }

    /// <summary>The server's use; with several processes (instances and Redis), their sum.</summary>
    public ServerUsage? Server { get; init; }

    /// <summary>Each sampled process on its own: the server instances, then redis-server when this tool started it.</summary>
    public IReadOnlyList<ServerUsage> ServerProcesses { get; init; } = [];

    /// <summary>How many server instances the clients were spread over.</summary>
    public int Instances { get; init; } = 1;

    /// <summary>in-memory (one server this tool started), redis (--servers N), or "as given" (--url).</summary>
    public string Backend { get; init; } = "in-memory";

    /// <summary>The generator's own CPU in the window, in percent of one core (all its processes).</summary>
    public required double ClientCpuPercentOfOneCore { get; init; }

    public required double ClientCpuMicrosecondsPerDelivery { get; init; }
    public required double BytesSentPerSecond { get; init; }
    public required double BytesReceivedPerSecond { get; init; }
    public required bool Valid { get; init; }
    public string? InvalidReason { get; init; }
    public required ProcessResult Totals { get; init; }

    /// <summary>The load average when the run started, to judge how quiet the machine was.</summary>
    public string? LoadAverage { get; init; }

    /// <summary>With --find-max: the step of the search this run was (0 at the shape's own rate), else null.</summary>
    public FindMaxStep? Search { get; init; }

    /// <summary>Deliveries received per second of the measured window.</summary>
    public double DeliveriesPerSecond => Totals.WindowSeconds > 0 ? DeliveriesReceived / Totals.WindowSeconds : 0;
}

/// <summary>One step of a --find-max search: its shape, its number, and whether the target held the rate.</summary>
internal sealed record FindMaxStep(string Shape, int Step, bool Holds, string Verdict);

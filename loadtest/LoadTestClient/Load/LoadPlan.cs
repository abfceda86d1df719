namespace Laharsub.LoadTestClient.Load;

/// <summary>
/// What one process of a run does: which simulated clients it plays, against which topics, on
/// which schedule. Clients are numbered across all processes of the run; client <c>g</c> publishes
/// to topic <c>g / ClientsPerTopic</c> and subscribes to that topic and the
/// <c>TopicsPerClient - 1</c> topics after it (wrapping around), so every topic has
/// <c>ClientsPerTopic * TopicsPerClient</c> subscribers.
/// </summary>
internal sealed record LoadPlan
{
    /// <summary>The Laharsub API root, e.g. <c>http://127.0.0.1:5000/ps/</c>.</summary>
    public required Uri ApiAddress { get; init; }

    /// <summary>Ids of all topics of the run, in order.</summary>
    public required long[] TopicIds { get; init; }

    public required int ClientsPerTopic { get; init; }
    public required int TopicsPerClient { get; init; }
    public required TimeSpan PublishInterval { get; init; }
    public required int MessageSize { get; init; }
    public required WireFormatKind Format { get; init; }
    public required TimeSpan Warmup { get; init; }
    public required TimeSpan Duration { get; init; }

    /// <summary>The poll's <c>timeout</c> in seconds: how long a poll waits when nothing arrives.</summary>
    public int PollTimeoutSeconds { get; init; } = 30;

    /// <summary>First client (inclusive) this process plays.</summary>
    public int FirstClient { get; init; }

    /// <summary>Last client (exclusive) this process plays; defaults to all of them.</summary>
    public int EndClient { get; init; } = -1;

    /// <summary>How many loopback source addresses (127.0.0.2 upwards) connections are spread over.</summary>
    public int SourceAddresses { get; init; } = 16;

    /// <summary>Connections beyond one per client, used by publishes (and the queue of them when the server is slow).</summary>
    public int PublishConnections { get; init; } = 32;

    /// <summary>
    /// Publish start lag (from the intended send time) above which, at the 99th percentile, the run is
    /// marked invalid: the generator could not keep its own schedule.
    /// </summary>
    public TimeSpan MaxScheduleLag { get; init; } = TimeSpan.FromMilliseconds(5);

    public int TotalClients => TopicIds.Length * ClientsPerTopic;

    public int Last => EndClient < 0 ? TotalClients : EndClient;

    public int SubscribersPerTopic => ClientsPerTopic * TopicsPerClient;

    public double TargetPublishesPerSecond => TotalClients / PublishInterval.TotalSeconds;
}

namespace Laharsub.LoadTestClient.Load;

/// <summary>
/// What one process of a run does: which simulated clients it plays, against which topics, on
/// which schedule. Clients are numbered across all processes of the run; client <c>g</c> publishes
/// to topic <c>g / ClientsPerTopic</c> and subscribes to that topic and the
/// <c>TopicsPerClient - 1</c> topics after it (wrapping around), so every topic has
/// <c>ClientsPerTopic * TopicsPerClient</c> subscribers. Only the first <c>PublishersPerTopic</c>
/// clients of each topic publish (all of them unless set): the broadcast shape has one publisher
/// and thousands of readers per topic.
/// </summary>
internal sealed record LoadPlan
{
    /// <summary>
    /// The server under test: its API root for Laharsub (<c>http://127.0.0.1:5000/ps/</c>), its root for
    /// nchan (<c>http://127.0.0.1:8090/</c>, publishing at <c>pub</c> and polling at <c>sub</c>).
    /// </summary>
    public required Uri ApiAddress { get; init; }

    /// <summary>
    /// Several instances of one deployment (their API roots; empty: <see cref="ApiAddress"/> alone):
    /// client <c>g</c> polls and publishes on instance <c>g mod N</c>, so that the clients of one topic
    /// sit on different instances and deliveries cross them.
    /// </summary>
    public Uri[] InstanceAddresses { get; init; } = [];

    /// <summary>The API root client <paramref name="client"/> talks to.</summary>
    public Uri ApiAddressFor(int client) => InstanceAddresses.Length == 0 ? ApiAddress : InstanceAddresses[client % InstanceAddresses.Length];

    /// <summary>How many instances the clients are spread over.</summary>
    public int InstanceCount => Math.Max(1, InstanceAddresses.Length);

    /// <summary>Which server's protocol the clients speak.</summary>
    public TargetKind Target { get; init; } = TargetKind.Laharsub;

    /// <summary>How the clients receive: long polls, a Server-Sent Events stream or a WebSocket each.</summary>
    public TransportKind Transport { get; init; } = TransportKind.LongPoll;

    /// <summary>
    /// With a stream <see cref="Transport"/>: the percentage of clients that long poll instead, spread evenly
    /// (every fifth client at 20), so that one run mixes both; 0 (the default) for none.
    /// </summary>
    public int LongPollPercent { get; init; }

    /// <summary>How client <paramref name="client"/> receives: every client of the run the same way, except the <see cref="LongPollPercent"/>.</summary>
    public TransportKind TransportOf(int client) =>
        LongPollPercent > 0 && (long)(client + 1) * LongPollPercent / 100 > (long)client * LongPollPercent / 100 ? TransportKind.LongPoll : Transport;

    /// <summary>Laharsub only: topics are created with presence and each client subscribes as a member (<c>client=lt{g}</c>).</summary>
    public bool Presence { get; init; }

    /// <summary>
    /// Laharsub in Jwt mode: each client mints a token of its own with this key and sends it on every request
    /// (<c>Authorization: Bearer</c> on polls and publishes; <c>access_token</c> in the URL of a stream, as a
    /// browser's EventSource or WebSocket must). Null: no tokens (Open mode).
    /// </summary>
    public JwtSigning? Jwt { get; init; }

    /// <summary>Laharsub only: the <c>Origin</c> every request carries (polls, streams, publishes, upgrades), as a page's would; null: none.</summary>
    public string? Origin { get; init; }

    /// <summary>Laharsub only: every publish carries a fresh <c>Idempotency-Key</c> (a publish frame its <c>idempotencyKey</c>), as the clients send by default.</summary>
    public bool KeyedPublishes { get; init; }

    /// <summary>nchan only: channel names are this prefix and the topic id, fresh for each run.</summary>
    public string ChannelPrefix { get; init; } = "";

    /// <summary>Ids of all topics of the run, in order.</summary>
    public required long[] TopicIds { get; init; }

    public required int ClientsPerTopic { get; init; }

    /// <summary>How many of each topic's clients publish; null: all of them.</summary>
    public int? PublishersPerTopic { get; init; }
    public required int TopicsPerClient { get; init; }
    public required TimeSpan PublishInterval { get; init; }
    public required int MessageSize { get; init; }
    public required WireFormatKind Format { get; init; }
    public required TimeSpan Warmup { get; init; }
    public required TimeSpan Duration { get; init; }

    /// <summary>Laharsub's <c>conflate</c> in milliseconds on every poll and stream; 0 asks for none.</summary>
    public int ConflateMilliseconds { get; init; }

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

    public int PublishersOfEachTopic => PublishersPerTopic ?? ClientsPerTopic;

    public int TotalPublishers => TopicIds.Length * PublishersOfEachTopic;

    public int Last => EndClient < 0 ? TotalClients : EndClient;

    public int SubscribersPerTopic => ClientsPerTopic * TopicsPerClient;

    public double TargetPublishesPerSecond => TotalPublishers / PublishInterval.TotalSeconds;

    /// <summary>How long the run's tokens must last: warm-up, window and the longest drain.</summary>
    public TimeSpan TokenLifetime => Warmup + Duration + TimeSpan.FromMinutes(2);
}

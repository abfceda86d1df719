using System.Buffers;
using System.Diagnostics;
using System.Text.Json;
using Laharsub.LoadTestClient.Measurement;

namespace Laharsub.LoadTestClient.Load;

/// <summary>
/// Runs the simulated clients of one process: connects their subscriptions (polls, streams or
/// sockets), publishes on schedule through warm-up and the measured window, drains what is still in
/// flight, and measures all of it.
/// </summary>
internal sealed class LoadEngine : IDisposable
{
    private static readonly TimeSpan DrainQuietTime = TimeSpan.FromMilliseconds(500);
    private static readonly TimeSpan MaxDrainSilence = TimeSpan.FromSeconds(5);
    private static readonly TimeSpan MaxDrainTime = TimeSpan.FromSeconds(60);

    private readonly SimulatedClient[] _clients;
    private readonly long[] _lastAcceptedId;
    private readonly Dictionary<long, int> _topicIndex;
    private readonly byte[] _padding;
    private long _measureStart = long.MaxValue;
    private long _measureEnd = long.MaxValue;
    private long _lastDeliveryAt;
    private long _publishesStarted;
    private long _publishesAttempted;
    private long _publishesAccepted;
    private long _publishesFailed;
    private long _deliveriesMeasured;
    private long _deliveriesTotal;
    private long _polls;
    private long _emptyPolls;
    private int _publishesInFlight;

    public LoadEngine(LoadPlan plan)
    {
        Plan = plan;
        var clientCount = plan.Last - plan.FirstClient;
        // Subscriptions have their own connections (RawPoller, RawEventStream, SocketSubscriber); the
        // handler's pool is for REST publishes only.
        Protocol = TargetProtocol.For(plan);
        Http = new LoadHttp(plan.PublishConnections, plan.SourceAddresses);
        Http.Client.BaseAddress = plan.ApiAddress;
        _topicIndex = plan.TopicIds.Select((id, i) => (id, i)).ToDictionary(p => p.id, p => p.i);
        _lastAcceptedId = new long[plan.TopicIds.Length];
        _padding = new byte[Math.Max(0, plan.MessageSize - MessageStamp.Size)];
        _padding.AsSpan().Fill((byte)'.');
        var interval = (long)(plan.PublishInterval.TotalMilliseconds * 1000);
        _clients = new SimulatedClient[clientCount];
        for (var g = plan.FirstClient; g < plan.Last; g++)
        {
            var home = g / plan.ClientsPerTopic;
            var subscribed = Enumerable.Range(0, plan.TopicsPerClient)
                .Select(k => plan.TopicIds[(home + k) % plan.TopicIds.Length]).ToArray();
            // Interleave the publishers of one topic across the interval rather than bunching them.
            var slot = (long)(g % plan.ClientsPerTopic) * plan.TopicIds.Length + home;
            var publishes = g % plan.ClientsPerTopic < plan.PublishersOfEachTopic;
            _clients[g - plan.FirstClient] = new SimulatedClient(this, g, plan.ApiAddressFor(g), plan.TopicIds[home], subscribed,
                publishes ? slot * interval / plan.TotalPublishers : 0, publishes);
        }
    }

    public LoadPlan Plan { get; }
    public TargetProtocol Protocol { get; }
    public LoadHttp Http { get; }
    public DeliveryCounters Counters { get; } = new();

    /// <summary>Latency from the moment a measured message was created to its receipt (the original's metric).</summary>
    public LatencyHistogram Latency { get; } = new();

    /// <summary>Latency from the moment a measured message was meant to be sent by the schedule.</summary>
    public LatencyHistogram LatencyFromSchedule { get; } = new();

    /// <summary>Latency of deliveries before the measured window, for the progress line.</summary>
    public LatencyHistogram WarmupLatency { get; } = new();

    /// <summary>Time from the intended send time to the publish starting: the generator's own lag.</summary>
    public LatencyHistogram ScheduleLag { get; } = new();

    /// <summary>Publish round trips (201 received; on a Laharsub WebSocket, the publish frame's <c>published</c> answer).</summary>
    public LatencyHistogram PublishRoundTrip { get; } = new();

    /// <summary>With --slow-log: where the window's deliveries are offered; null: none are kept.</summary>
    public SlowLog? SlowLog { get; init; }

    public int ClientCount => _clients.Length;
    public int PollsWaiting => Volatile.Read(ref Http.PollsWaiting);
    public long PublishesAccepted => Volatile.Read(ref _publishesAccepted);
    public long PublishesAttempted => Volatile.Read(ref _publishesAttempted);
    public long PublishesStarted => Volatile.Read(ref _publishesStarted);
    public long PublishesFailed => Volatile.Read(ref _publishesFailed);
    public long DeliveriesMeasured => Volatile.Read(ref _deliveriesMeasured);
    public long DeliveriesTotal => Volatile.Read(ref _deliveriesTotal);
    public long Polls => Volatile.Read(ref _polls);
    public long EmptyPolls => Volatile.Read(ref _emptyPolls);

    /// <summary>Streams (or sockets) that opened and subscribed, reconnections included; 0 with long polls.</summary>
    public long StreamsOpened => Volatile.Read(ref Http.StreamsOpened);
    public long MeasureStart => Volatile.Read(ref _measureStart);
    public long MeasureEnd => Volatile.Read(ref _measureEnd);

    /// <summary>Whether the window has begun (deliveries now count).</summary>
    public bool Measuring => MonotonicClock.NowMicroseconds >= MeasureStart;

    public IReadOnlyList<SimulatedClient> Clients => _clients;

    /// <summary>Starts every client's subscription and waits until each has its poll waiting or its stream open.</summary>
    public async Task<List<Task>> ConnectAsync(TimeSpan timeout, CancellationToken cancellationToken)
    {
        var loops = new List<Task>(_clients.Length);
        foreach (var client in _clients)
        {
            loops.Add(Task.Run(() => client.SubscribeAsync(cancellationToken), CancellationToken.None));
        }
        var deadline = Stopwatch.StartNew();
        while (PollsWaiting < _clients.Length || Http.OpenConnections < _clients.Length)
        {
            if (Counters.Refusals() is { Count: > 0 } refusals)
            {
                // A refused client retries forever: waiting the whole timeout would only hide why.
                throw new InvalidOperationException($"The server refused the clients' subscriptions ({string.Join(", ", refusals.Select(r => $"{r.Key}: {r.Value}"))}): "
                    + (Plan.Jwt is null ? "it is in Jwt mode; give --jwt-key with its Laharsub:Auth:Jwt:SigningKey (and --jwt-issuer, --jwt-audience)."
                        : "--jwt-key, --jwt-issuer and --jwt-audience must be its Laharsub:Auth:Jwt:SigningKey, Issuer and Audience."));
            }
            if (deadline.Elapsed > timeout)
            {
                throw new TimeoutException($"Only {Http.OpenConnections} of {_clients.Length} clients connected within {timeout.TotalSeconds:0} s; is the server up and the open-file limit high enough?");
            }
            cancellationToken.ThrowIfCancellationRequested();
            await Task.Delay(50, cancellationToken).ConfigureAwait(false);
        }
        return loops;
    }

    /// <summary>
    /// Publishes from <paramref name="startMicroseconds"/> through warm-up and the measured window,
    /// then drains. Returns when done or when <paramref name="stop"/> fires (Ctrl-C); the poll loops
    /// are stopped by the caller.
    /// </summary>
    public async Task RunScheduleAsync(long startMicroseconds, CancellationToken stop)
    {
        var measureStart = startMicroseconds + (long)(Plan.Warmup.TotalMilliseconds * 1000);
        Volatile.Write(ref _measureStart, measureStart);
        Volatile.Write(ref _measureEnd, measureStart + (long)(Plan.Duration.TotalMilliseconds * 1000));
        var scheduler = new PublishScheduler(_clients.Where(c => c.Publishes), Plan.PublishInterval, StartPublish);
        try
        {
            await scheduler.RunAsync(startMicroseconds, MeasureEnd, stop).ConfigureAwait(false);
        }
        finally
        {
            if (stop.IsCancellationRequested)
            {
                // An interrupted run's window ends now: what was published after it is not expected.
                Volatile.Write(ref _measureEnd, Math.Min(MeasureEnd, MonotonicClock.NowMicroseconds));
            }
        }
        await DrainAsync(stop.IsCancellationRequested ? TimeSpan.FromSeconds(1) : MaxDrainTime).ConfigureAwait(false);
    }

    /// <summary>
    /// Waits for answers to the last publishes and for their deliveries: until every subscriber has
    /// every message whose publish was accepted, or nothing has arrived for a while (then what is
    /// missing is reported missing), or the limit.
    /// </summary>
    private async Task DrainAsync(TimeSpan limit)
    {
        var deadline = Stopwatch.StartNew();
        Volatile.Write(ref _lastDeliveryAt, Math.Max(Volatile.Read(ref _lastDeliveryAt), MonotonicClock.NowMicroseconds));
        while (deadline.Elapsed < limit)
        {
            var silent = MonotonicClock.NowMicroseconds - Volatile.Read(ref _lastDeliveryAt);
            if (Volatile.Read(ref _publishesInFlight) == 0
                && (silent > MaxDrainSilence.TotalMicroseconds || (silent > DrainQuietTime.TotalMicroseconds && AllCaughtUp())))
            {
                return;
            }
            await Task.Delay(20).ConfigureAwait(false);
        }
    }

    private bool AllCaughtUp()
    {
        foreach (var client in _clients)
        {
            foreach (var topic in client.Topics)
            {
                if (topic.Next <= Volatile.Read(ref _lastAcceptedId[_topicIndex[topic.TopicId]]))
                {
                    return false;
                }
            }
        }
        return true;
    }

    internal void RecordDelivery(SimulatedClient client, long topicId, long intended, long created, long receivedAt)
    {
        Interlocked.Increment(ref _deliveriesTotal);
        Volatile.Write(ref _lastDeliveryAt, receivedAt);
        if (intended >= MeasureStart && intended < MeasureEnd)
        {
            Interlocked.Increment(ref _deliveriesMeasured);
            Latency.Record(receivedAt - created);
            LatencyFromSchedule.Record(receivedAt - intended);
            SlowLog?.Offer(new SlowDelivery(created, receivedAt, topicId, client.Transport, client.Index), Latency);
        }
        else if (intended < MeasureStart)
        {
            WarmupLatency.Record(receivedAt - created);
        }
    }

    internal void CountPoll() => Interlocked.Increment(ref _polls);

    internal void CountEmptyPoll()
    {
        Interlocked.Increment(ref _polls);
        Interlocked.Increment(ref _emptyPolls);
    }

    private void StartPublish(SimulatedClient client, long intended)
    {
        Interlocked.Increment(ref _publishesInFlight);
        ThreadPool.UnsafeQueueUserWorkItem(static state => _ = state.Engine.PublishAsync(state.Client, state.Intended),
            (Engine: this, Client: client, Intended: intended), preferLocal: false);
    }

    private async Task PublishAsync(SimulatedClient client, long intended)
    {
        var measured = intended >= MeasureStart && intended < MeasureEnd;
        var started = MonotonicClock.NowMicroseconds;
        Interlocked.Increment(ref _publishesStarted);
        if (measured)
        {
            Interlocked.Increment(ref _publishesAttempted);
            ScheduleLag.Record(started - intended);
        }
        var length = MessageStamp.Size + _padding.Length;
        if (client.PublishSocket is { } socket)
        {
            // On the client's own socket: the answer arrives on its receive loop, which completes the publish.
            var stamped = ArrayPool<byte>.Shared.Rent(length);
            try
            {
                MessageStamp.Write(stamped, intended, started);
                _padding.CopyTo(stamped.AsSpan(MessageStamp.Size));
                if (!await socket.PublishAsync(client.HomeTopicId, stamped.AsMemory(0, length), new PendingPublish(0, started, measured)).ConfigureAwait(false))
                {
                    PublishLost();
                    PublishCompleted();
                }
            }
            finally
            {
                ArrayPool<byte>.Shared.Return(stamped);
            }
            return;
        }
        try
        {
            var body = new byte[length];
            MessageStamp.Write(body, intended, started);
            _padding.CopyTo(body.AsSpan(MessageStamp.Size));
            using var request = new HttpRequestMessage(HttpMethod.Post, client.PublishUri) { Content = new ByteArrayContent(body) };
            request.Content.Headers.TryAddWithoutValidation("Content-Type", "application/octet-stream");
            if (Protocol.PublishAccept is { } accept)
            {
                request.Headers.TryAddWithoutValidation("Accept", accept);
            }
            if (client.Authorization is { } authorization)
            {
                request.Headers.TryAddWithoutValidation("Authorization", authorization);
            }
            if (Plan.Origin is { } origin)
            {
                request.Headers.TryAddWithoutValidation("Origin", origin);
            }
            if (Plan.KeyedPublishes)
            {
                // A structured-field string, as the clients send it (docs/protocol.md, "Idempotency keys").
                request.Headers.TryAddWithoutValidation("Idempotency-Key", "\"" + Guid.NewGuid().ToString("D") + "\"");
            }
            using var response = await Http.Client.SendAsync(request, HttpCompletionOption.ResponseHeadersRead).ConfigureAwait(false);
            var answer = ArrayPool<byte>.Shared.Rent(512);
            try
            {
                var stream = await response.Content.ReadAsStreamAsync().ConfigureAwait(false);
                var read = 0;
                int count;
                while (read < answer.Length && (count = await stream.ReadAsync(answer.AsMemory(read)).ConfigureAwait(false)) > 0)
                {
                    read += count;
                }
                if (!Protocol.IsPublishAccepted((int)response.StatusCode))
                {
                    PublishRefused((int)response.StatusCode);
                    return;
                }
                PublishAnswered(client.HomeTopicId, started, measured, Protocol.ReadPublishedId(answer.AsSpan(0, read)));
            }
            finally
            {
                ArrayPool<byte>.Shared.Return(answer);
            }
        }
        catch (Exception exception) when (exception is HttpRequestException or IOException or OperationCanceledException or JsonException)
        {
            PublishLost();
        }
        finally
        {
            PublishCompleted();
        }
    }

    /// <summary>A publish was stored as <paramref name="messageId"/>: its round trip, and the id subscribers must reach.</summary>
    internal void PublishAnswered(long topicId, long started, bool measured, long messageId)
    {
        PublishRoundTrip.Record(MonotonicClock.NowMicroseconds - started);
        NoteAccepted(topicId, messageId);
        if (measured)
        {
            Interlocked.Increment(ref _publishesAccepted);
        }
    }

    /// <summary>A publish was refused with <paramref name="status"/>.</summary>
    internal void PublishRefused(int status)
    {
        Interlocked.Increment(ref _publishesFailed);
        Counters.AddStatus(status);
    }

    /// <summary>A publish got no answer: its connection broke (or its socket was not open).</summary>
    internal void PublishLost()
    {
        Interlocked.Increment(ref _publishesFailed);
        Counters.AddTransportError();
    }

    /// <summary>A publish is over, whatever its outcome (answered, refused or lost): the drain waits for none in flight.</summary>
    internal void PublishCompleted() => Interlocked.Decrement(ref _publishesInFlight);

    private void NoteAccepted(long topicId, long messageId) => Atomic.Max(ref _lastAcceptedId[_topicIndex[topicId]], messageId);

    public void Dispose()
    {
        foreach (var client in _clients)
        {
            client.Dispose();
        }
        Http.Dispose();
    }
}

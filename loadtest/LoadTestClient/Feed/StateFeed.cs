using System.Globalization;
using System.Net.Sockets;
using System.Text;
using System.Text.Json;
using System.Text.Json.Nodes;
using Laharsub.Client;
using Laharsub.LoadTestClient.Hosting;
using Laharsub.LoadTestClient.Load;
using Laharsub.LoadTestClient.Measurement;

namespace Laharsub.LoadTestClient.Feed;

/// <summary>How the <c>liberator</c> preset carries a subject's updates.</summary>
internal enum FeedMode
{
    /// <summary>A state topic per subject; each update a merge patch of the six fields; every patch delivered.</summary>
    State,
    /// <summary>As <see cref="State"/>, the subscriber asking for field-level conflation (<c>conflate=MS</c>).</summary>
    Conflated,
    /// <summary>An ordinary topic per subject; each update the whole document as JSON.</summary>
    Whole,
}

/// <summary>The <c>liberator</c> preset's shape: how many subjects, how often each changes, which ways to carry it.</summary>
internal sealed record StateFeedOptions(int Subjects, TimeSpan Interval, int ConflateMilliseconds, IReadOnlyList<FeedMode> Modes);

/// <summary>What one run of the feed measured over its window, at the one subscriber.</summary>
internal sealed record FeedReport(string Name, int Subjects, long Published, long Deliveries, long ConflatedSkipped, long BytesReceived, long BytesSent,
    double LatencyP50Ms, double LatencyP99Ms, double LatencyMaxMs, int ExactDocuments, int CheckedDocuments, TimeSpan Window)
{
    public bool Valid => Published > 0 && Deliveries > 0 && ExactDocuments == CheckedDocuments;
}

/// <summary>
/// Caplin Liberator's published test feed on Laharsub (issue 36): <see cref="StateFeedOptions.Subjects"/>
/// subjects, each updated once per interval with six fields (bid, ask, high, low, change, time) beside
/// four that do not change, and ONE subscriber holding every subject through the .NET client on the run's
/// transport. Each run measures at that subscriber the deliveries, the bytes on the wire (counted on its
/// sockets, HTTP headers and framing included) and the latency from the update's publish to its
/// delivery (the <c>time</c> field, on the machine-wide monotonic clock); a state run then checks that
/// every subject's document as the subscriber holds it is the server's.
/// </summary>
internal sealed class StateFeed(LoadTestOptions options, StateFeedOptions feed, TextWriter output)
{
    private static readonly string[] Changing = ["bid", "ask", "high", "low", "change"];

    public async Task<int> RunAsync(CancellationToken stop)
    {
        var reports = new List<FeedReport>();
        foreach (var mode in feed.Modes)
        {
            if (stop.IsCancellationRequested)
            {
                break;
            }
            ServerProcess? server = null;
            try
            {
                Uri api;
                if (options.Url is { } url)
                {
                    // --url names the server's root, as for the other runs.
                    api = new Uri(url, "ps/");
                }
                else
                {
                    var repository = ServerProcess.FindRepositoryRoot()
                        ?? throw new InvalidOperationException("Run from the repository (or give --url): this tool starts the server from its Release build.");
                    server = await ServerProcess.StartAsync(ServerProject.Laharsub, repository, options.ServerSettings, options.ServerEnvironment, output, stop).ConfigureAwait(false);
                    api = server.ApiAddress;
                }
                var report = await RunOneAsync(api, mode, stop).ConfigureAwait(false);
                reports.Add(report);
                Write(output, report);
            }
            catch (OperationCanceledException) when (stop.IsCancellationRequested)
            {
                break;
            }
            catch (Exception exception) when (exception is LaharsubException or HttpRequestException or InvalidOperationException or TimeoutException)
            {
                // The run is missing from the reports, which makes the exit code 1.
                output.WriteLine($"error: run {NameOf(mode)} failed: {exception.Message}");
            }
            finally
            {
                if (server is not null)
                {
                    await server.DisposeAsync().ConfigureAwait(false);
                }
            }
        }
        WriteSummary(output, reports);
        return stop.IsCancellationRequested ? 130 : reports.Count == feed.Modes.Count && reports.All(r => r.Valid) ? 0 : 1;
    }

    private string NameOf(FeedMode mode) => mode switch
    {
        FeedMode.State => "liberator-state",
        FeedMode.Conflated => $"liberator-state-conflate{feed.ConflateMilliseconds}",
        _ => "liberator-whole",
    } + $"-{feed.Subjects}s" + (options.Transport == TransportKind.LongPoll ? "" : "-" + Transports.Name(options.Transport));

    private async Task<FeedReport> RunOneAsync(Uri api, FeedMode mode, CancellationToken stop)
    {
        var wire = new WireCounter();
        var clientOptions = new LaharsubClientOptions
        {
            Transport = options.Transport switch
            {
                TransportKind.Sse => LaharsubTransport.ServerSentEvents,
                TransportKind.WebSocket => LaharsubTransport.WebSocket,
                _ => LaharsubTransport.LongPolling,
            },
            PollFormat = options.Format == WireFormatKind.Multipart ? PollFormat.Multipart : PollFormat.Json,
        };
        using var publisherHttp = new HttpClient { Timeout = Timeout.InfiniteTimeSpan };
        await using var publisher = new LaharsubClient(publisherHttp, [api], clientOptions);
        // The subscriber's own connections, counted where they meet the socket.
        using var subscriberHttp = new HttpClient(new SocketsHttpHandler { ConnectCallback = wire.ConnectAsync }) { Timeout = Timeout.InfiniteTimeSpan };
        await using var subscriber = new LaharsubClient(subscriberHttp, [api], clientOptions);

        var subjects = new long[feed.Subjects];
        var documents = new JsonObject[feed.Subjects];
        for (var i = 0; i < subjects.Length; i++)
        {
            documents[i] = InitialDocument(i);
            if (mode == FeedMode.Whole)
            {
                subjects[i] = await publisher.CreateTopicAsync(stop).ConfigureAwait(false);
                await Publish(publisher, mode, subjects[i], documents[i], stop).ConfigureAwait(false);
            }
            else
            {
                subjects[i] = (await publisher.CreateStateTopicAsync($"fx-{i}", stop).ConfigureAwait(false)).TopicId;
                await publisher.ReplaceStateAsync(subjects[i], documents[i], cancellationToken: stop).ConfigureAwait(false);
            }
        }

        var subscription = subscriber.Subscribe();
        var views = new List<LaharsubState<JsonObject>>();
        foreach (var topic in subjects)
        {
            if (mode == FeedMode.Whole)
            {
                subscription.Add(topic, 1);
            }
            else
            {
                views.Add(subscription.AddState<JsonObject>(topic, LoadJsonContext.Default.JsonObject));
            }
        }
        if (mode == FeedMode.Conflated)
        {
            subscription.ConflationInterval = TimeSpan.FromMilliseconds(feed.ConflateMilliseconds);
        }
        var measuring = 0;
        var windowStart = long.MaxValue;
        var latencies = new List<long>();
        long deliveries = 0, skipped = 0;
        using var reading = CancellationTokenSource.CreateLinkedTokenSource(stop);
        var reader = Task.Run(async () =>
        {
            await foreach (var item in subscription.ReadAllAsync(reading.Token).ConfigureAwait(false))
            {
                var now = MonotonicClock.NowMicroseconds;
                if (Volatile.Read(ref measuring) == 0)
                {
                    continue;
                }
                switch (item)
                {
                    // The window's deliveries are those of updates published in it, however late they arrive.
                    case LaharsubMessage message when SentAt(message.Body.Span) is { } sent && sent >= Volatile.Read(ref windowStart):
                        deliveries++;
                        latencies.Add(now - sent);
                        break;
                    case ConflatedNotice conflated:
                        skipped += conflated.Count;
                        break;
                }
            }
        }, CancellationToken.None);

        // The publisher: every subject once per interval, spread evenly over it, on an absolute schedule.
        var step = feed.Interval / feed.Subjects;
        var start = DateTime.UtcNow;
        var warmupEnd = start + options.Warmup;
        var windowEnd = warmupEnd + options.Duration;
        var random = new Random(36);
        var inFlight = new List<Task>();
        long published = 0, receivedAtStart = 0, sentAtStart = 0, receivedAtEnd = 0, sentAtEnd = 0;
        for (var k = 0L; ; k++)
        {
            var due = start + step * k;
            if (due >= windowEnd)
            {
                break;
            }
            if (measuring == 0 && due >= warmupEnd)
            {
                (receivedAtStart, sentAtStart) = (wire.Received, wire.Sent);
                Volatile.Write(ref windowStart, MonotonicClock.NowMicroseconds);
                Volatile.Write(ref measuring, 1);
            }
            var wait = due - DateTime.UtcNow;
            if (wait > TimeSpan.Zero)
            {
                await Task.Delay(wait, stop).ConfigureAwait(false);
            }
            var subject = (int)(k % feed.Subjects);
            var patch = Update(documents[subject], random);
            inFlight.Add(Publish(publisher, mode, subjects[subject], mode == FeedMode.Whole ? documents[subject] : patch, stop));
            if (measuring == 1)
            {
                published++;
            }
            inFlight.RemoveAll(task => task.IsCompletedSuccessfully);
        }
        await Task.WhenAll(inFlight).ConfigureAwait(false);
        // Let what was published in the window arrive (a conflated delivery waits up to its interval).
        await Task.Delay(TimeSpan.FromMilliseconds(500 + feed.ConflateMilliseconds), stop).ConfigureAwait(false);
        Volatile.Write(ref measuring, 0);
        (receivedAtEnd, sentAtEnd) = (wire.Received, wire.Sent);

        var exact = 0;
        foreach (var view in views)
        {
            var server = await publisher.GetStateAsync(view.TopicId, stop).ConfigureAwait(false);
            if (view.Version == server.Version && JsonNode.DeepEquals(view.GetDocument(), server.Value))
            {
                exact++;
            }
        }
        await reading.CancelAsync().ConfigureAwait(false);
        await subscription.DisposeAsync().ConfigureAwait(false);
        try
        {
            await reader.ConfigureAwait(false);
        }
        catch (OperationCanceledException)
        {
            // The window is over.
        }
        latencies.Sort();
        return new FeedReport(NameOf(mode), feed.Subjects, published, deliveries, skipped, receivedAtEnd - receivedAtStart, sentAtEnd - sentAtStart,
            Percentile(latencies, 0.50), Percentile(latencies, 0.99), latencies.Count == 0 ? 0 : latencies[^1] / 1000.0, exact, views.Count, options.Duration);
    }

    private static double Percentile(List<long> sorted, double quantile) =>
        sorted.Count == 0 ? 0 : sorted[Math.Min(sorted.Count - 1, (int)(quantile * sorted.Count))] / 1000.0;

    private static Task<PublishedMessage> Publish(LaharsubClient publisher, FeedMode mode, long topic, JsonObject body, CancellationToken stop) => mode == FeedMode.Whole
        ? publisher.PublishAsync(topic, JsonSerializer.SerializeToUtf8Bytes(body, LoadJsonContext.Default.JsonObject), "application/json", stop)
        : publisher.PatchStateAsync(topic, body, cancellationToken: stop);

    /// <summary>A subject's record: four fields that never change, six that do.</summary>
    private static JsonObject InitialDocument(int subject) => new()
    {
        ["symbol"] = $"FX{subject:D4}",
        ["name"] = $"Instrument {subject}",
        ["currency"] = "USD",
        ["venue"] = "LHR",
        ["bid"] = 1.0842,
        ["ask"] = 1.0844,
        ["high"] = 1.0844,
        ["low"] = 1.0842,
        ["change"] = 0.0,
        ["time"] = MonotonicClock.NowMicroseconds,
    };

    /// <summary>Moves the subject's price and returns the merge patch of its six changing fields (the document is updated too).</summary>
    private static JsonObject Update(JsonObject document, Random random)
    {
        var bid = Math.Round((double)document["bid"]! + (random.NextDouble() - 0.5) * 0.001, 5);
        var values = new[] { bid, Math.Round(bid + 0.0002, 5), Math.Max((double)document["high"]!, bid), Math.Min((double)document["low"]!, bid), Math.Round(bid - 1.0842, 5) };
        var patch = new JsonObject();
        for (var i = 0; i < Changing.Length; i++)
        {
            document[Changing[i]] = values[i];
            patch[Changing[i]] = values[i];
        }
        var time = MonotonicClock.NowMicroseconds;
        document["time"] = time;
        patch["time"] = time;
        return patch;
    }

    /// <summary>The <c>time</c> field of a patch or document (microseconds on the monotonic clock); null without one.</summary>
    private static long? SentAt(ReadOnlySpan<byte> body)
    {
        var reader = new Utf8JsonReader(body);
        while (reader.Read())
        {
            if (reader.TokenType == JsonTokenType.PropertyName && reader.CurrentDepth == 1 && reader.ValueTextEquals("time"u8) && reader.Read()
                && reader.TryGetInt64(out var time))
            {
                return time;
            }
        }
        return null;
    }

    private static void Write(TextWriter output, FeedReport report)
    {
        var line = new StringBuilder().Append(CultureInfo.InvariantCulture,
            $"{report.Name}: {report.Published} updates published ({report.Published / report.Window.TotalSeconds:F1}/s), {report.Deliveries} delivered");
        if (report.ConflatedSkipped > 0)
        {
            line.Append(CultureInfo.InvariantCulture, $" ({report.ConflatedSkipped} conflated into them)");
        }
        line.Append(CultureInfo.InvariantCulture,
            $"; on the subscriber's wire {report.BytesReceived:N0} bytes in ({report.BytesReceived / Math.Max(1, report.Published):F0} per update), {report.BytesSent:N0} out");
        line.Append(CultureInfo.InvariantCulture, $"; latency p50 {report.LatencyP50Ms:F2} ms, p99 {report.LatencyP99Ms:F2} ms, max {report.LatencyMaxMs:F2} ms");
        if (report.CheckedDocuments > 0)
        {
            line.Append(CultureInfo.InvariantCulture, $"; documents exact {report.ExactDocuments}/{report.CheckedDocuments}");
        }
        output.WriteLine(line.Append(report.Valid ? "" : " (INVALID)"));
    }

    private static void WriteSummary(TextWriter output, List<FeedReport> reports)
    {
        if (reports.Count == 0)
        {
            return;
        }
        output.WriteLine();
        output.WriteLine("| run | updates/s | deliveries | bytes in per update | latency p50 / p99 (ms) | documents exact |");
        output.WriteLine("| --- | ---: | ---: | ---: | ---: | ---: |");
        foreach (var report in reports)
        {
            var exact = report.CheckedDocuments == 0 ? "-" : $"{report.ExactDocuments}/{report.CheckedDocuments}";
            output.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"| {report.Name} | {report.Published / report.Window.TotalSeconds:F1} | {report.Deliveries} | {report.BytesReceived / Math.Max(1, report.Published):F0} | {report.LatencyP50Ms:F2} / {report.LatencyP99Ms:F2} | {exact} |"));
        }
    }
}

/// <summary>Counts the bytes a client's connections read and write, on their sockets.</summary>
internal sealed class WireCounter
{
    private long _received;
    private long _sent;

    public long Received => Interlocked.Read(ref _received);

    public long Sent => Interlocked.Read(ref _sent);

    public async ValueTask<Stream> ConnectAsync(SocketsHttpConnectionContext context, CancellationToken cancellationToken)
    {
        var socket = new Socket(SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        try
        {
            await socket.ConnectAsync(context.DnsEndPoint, cancellationToken).ConfigureAwait(false);
            return new CountingStream(new NetworkStream(socket, ownsSocket: true), this);
        }
        catch
        {
            socket.Dispose();
            throw;
        }
    }

    private sealed class CountingStream(Stream inner, WireCounter counter) : Stream
    {
        public override bool CanRead => true;
        public override bool CanSeek => false;
        public override bool CanWrite => true;
        public override long Length => throw new NotSupportedException();
        public override long Position { get => throw new NotSupportedException(); set => throw new NotSupportedException(); }

        public override void Flush() => inner.Flush();

        public override Task FlushAsync(CancellationToken cancellationToken) => inner.FlushAsync(cancellationToken);

        public override int Read(byte[] buffer, int offset, int count) => Received(inner.Read(buffer, offset, count));

        public override async ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default) =>
            Received(await inner.ReadAsync(buffer, cancellationToken).ConfigureAwait(false));

        public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) =>
            ReadAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();

        public override void Write(byte[] buffer, int offset, int count)
        {
            Interlocked.Add(ref counter._sent, count);
            inner.Write(buffer, offset, count);
        }

        public override ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default)
        {
            Interlocked.Add(ref counter._sent, buffer.Length);
            return inner.WriteAsync(buffer, cancellationToken);
        }

        public override Task WriteAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) =>
            WriteAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();

        public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

        public override void SetLength(long value) => throw new NotSupportedException();

        protected override void Dispose(bool disposing)
        {
            if (disposing)
            {
                inner.Dispose();
            }
            base.Dispose(disposing);
        }

        private int Received(int count)
        {
            Interlocked.Add(ref counter._received, count);
            return count;
        }
    }
}

/// <summary>Source-generated JSON for the feed's documents (the tool runs with trimming analyzers on).</summary>
[System.Text.Json.Serialization.JsonSerializable(typeof(JsonObject))]
internal sealed partial class LoadJsonContext : System.Text.Json.Serialization.JsonSerializerContext;

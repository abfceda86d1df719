using System.Buffers;
using System.Net;
using System.Text;
using Laharsub.LoadTestClient.Measurement;

namespace Laharsub.LoadTestClient.Load;

/// <summary>
/// One simulated chat participant: a long-poll loop over its topics that resumes from its cursors and
/// checks every delivered id, and (driven by the <see cref="PublishScheduler"/>) a publisher to its
/// home topic.
/// </summary>
internal sealed class SimulatedClient : IPollResponseSink
{
    private readonly LoadEngine _engine;
    private readonly DeliveryVerifier[] _topics;
    private readonly Dictionary<long, DeliveryVerifier>? _byTopicId;
    private readonly StringBuilder _url = new(64);
    private byte[] _scratch = new byte[64];
    private long _receivedAt;

    public SimulatedClient(LoadEngine engine, int index, long homeTopicId, IReadOnlyList<long> subscribedTopicIds, long phaseMicroseconds)
    {
        _engine = engine;
        Index = index;
        HomeTopicId = homeTopicId;
        PublishPath = $"topics/{homeTopicId}";
        PhaseMicroseconds = phaseMicroseconds;
        _topics = subscribedTopicIds.Select(id => new DeliveryVerifier(id)).ToArray();
        _byTopicId = _topics.Length > 4 ? _topics.ToDictionary(t => t.TopicId) : null;
    }

    public int Index { get; }
    public long HomeTopicId { get; }
    public string PublishPath { get; }

    /// <summary>Offset of this client's publishes within each interval, spreading all publishers evenly.</summary>
    public long PhaseMicroseconds { get; }

    public IReadOnlyList<DeliveryVerifier> Topics => _topics;

    public async Task PollLoopAsync(CancellationToken cancellationToken)
    {
        var plan = _engine.Plan;
        var accept = plan.Format == WireFormatKind.Json ? "application/json" : "multipart/mixed";
        while (!cancellationToken.IsCancellationRequested)
        {
            try
            {
                using var request = new HttpRequestMessage(HttpMethod.Get, BuildPollUrl(plan.PollTimeoutSeconds));
                request.Headers.TryAddWithoutValidation("Accept", accept);
                Interlocked.Increment(ref _engine.PollsInFlight);
                HttpResponseMessage response;
                try
                {
                    response = await _engine.Http.Client.SendAsync(request, HttpCompletionOption.ResponseHeadersRead, cancellationToken).ConfigureAwait(false);
                }
                finally
                {
                    Interlocked.Decrement(ref _engine.PollsInFlight);
                }
                using (response)
                {
                    await HandlePollResponseAsync(response, cancellationToken).ConfigureAwait(false);
                }
            }
            catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
            {
                return;
            }
            catch (Exception exception) when (exception is HttpRequestException or IOException or FormatException or OperationCanceledException)
            {
                if (exception is FormatException)
                {
                    _engine.Counters.AddStatus(0);
                }
                else
                {
                    _engine.Counters.AddTransportError();
                }
                // A refusing or broken server must not turn the generator into a busy loop.
                try
                {
                    await Task.Delay(100, cancellationToken).ConfigureAwait(false);
                }
                catch (OperationCanceledException)
                {
                    return;
                }
            }
        }
    }

    private async Task HandlePollResponseAsync(HttpResponseMessage response, CancellationToken cancellationToken)
    {
        var status = (int)response.StatusCode;
        if (status == (int)HttpStatusCode.NoContent)
        {
            _engine.CountEmptyPoll();
            return;
        }
        var length = (int)(response.Content.Headers.ContentLength ?? -1);
        var buffer = ArrayPool<byte>.Shared.Rent(length > 0 ? length : 16 * 1024);
        try
        {
            var read = await ReadAllAsync(response, buffer, cancellationToken).ConfigureAwait(false);
            // Every message of the response arrived now: one timestamp for all of them, as a browser
            // client would see them.
            _receivedAt = MonotonicClock.NowMicroseconds;
            if (status != (int)HttpStatusCode.OK)
            {
                _engine.Counters.AddStatus(status);
                await Task.Delay(100, cancellationToken).ConfigureAwait(false);
                return;
            }
            var body = buffer.AsSpan(0, read);
            if (_engine.Plan.Format == WireFormatKind.Json)
            {
                PollResponseReader.ReadJson(body, this, ref _scratch);
            }
            else
            {
                PollResponseReader.ReadMultipart(body, PollResponseReader.BoundaryOf(response.Content.Headers.ContentType?.ToString() ?? ""), this);
            }
            _engine.CountPoll();
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(buffer);
        }
    }

    private static async Task<int> ReadAllAsync(HttpResponseMessage response, byte[] buffer, CancellationToken cancellationToken)
    {
        var stream = await response.Content.ReadAsStreamAsync(cancellationToken).ConfigureAwait(false);
        var total = 0;
        while (true)
        {
            if (total == buffer.Length)
            {
                // Only a response without Content-Length can outgrow its buffer; the server always sends one.
                throw new FormatException("Unreadable poll response: larger than its buffer.");
            }
            var read = await stream.ReadAsync(buffer.AsMemory(total), cancellationToken).ConfigureAwait(false);
            if (read == 0)
            {
                return total;
            }
            total += read;
        }
    }

    private string BuildPollUrl(int timeoutSeconds)
    {
        _url.Clear().Append("subscriptions?timeout=").Append(timeoutSeconds).Append("&topics=");
        for (var i = 0; i < _topics.Length; i++)
        {
            if (i > 0)
            {
                _url.Append(',');
            }
            _url.Append(_topics[i].TopicId).Append(':').Append(_topics[i].Next);
        }
        return _url.ToString();
    }

    void IPollResponseSink.OnMessage(long topicId, long messageId, ReadOnlySpan<byte> body)
    {
        if (Find(topicId) is not { } verifier)
        {
            _engine.Counters.AddStatus(0);
            return;
        }
        var kind = verifier.Observe(messageId, _engine.Counters);
        if (kind != DeliveryKind.Duplicate && MessageStamp.TryRead(body, out var intended, out var created))
        {
            _engine.RecordDelivery(intended, created, _receivedAt);
        }
    }

    void IPollResponseSink.OnGap(long topicId, long fromMessageId, long toMessageId) =>
        Find(topicId)?.ObserveGap(fromMessageId, toMessageId, _engine.Counters);

    void IPollResponseSink.OnReset(long topicId, long firstMessageId) =>
        Find(topicId)?.ObserveReset(firstMessageId, _engine.Counters);

    void IPollResponseSink.OnTopicDeleted(long topicId) => _engine.Counters.AddDeletedNotice();

    private DeliveryVerifier? Find(long topicId)
    {
        if (_byTopicId is not null)
        {
            return _byTopicId.GetValueOrDefault(topicId);
        }
        foreach (var topic in _topics)
        {
            if (topic.TopicId == topicId)
            {
                return topic;
            }
        }
        return null;
    }
}

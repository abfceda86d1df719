using System.Text;
using Laharsub.Client;
using Laharsub.Testing;

namespace Laharsub.Client.Tests;

/// <summary>Bounds for every await, and clients tuned for tests (short retries, so restarts are noticed quickly).</summary>
internal static class TestSupport
{
    public static readonly TimeSpan Timeout = TimeSpan.FromSeconds(20);

    /// <remarks>
    /// Long polling unless <paramref name="transport"/> says otherwise: most tests are about the long
    /// poll (what it sends, how many are in flight, scripted answers); the stream tests choose theirs.
    /// </remarks>
    public static LaharsubClientOptions Options(PollFormat format = PollFormat.Multipart, int pollSeconds = 10, LaharsubTransport transport = LaharsubTransport.LongPolling) => new()
    {
        PollFormat = format,
        PollTimeout = TimeSpan.FromSeconds(pollSeconds),
        RequestTimeout = TimeSpan.FromSeconds(10),
        RetryDelay = TimeSpan.FromMilliseconds(50),
        MaxRetryDelay = TimeSpan.FromMilliseconds(300),
        Transport = transport,
    };

    public static LaharsubClient CreateLaharsubClient(this LaharsubTestServer server, PollFormat format = PollFormat.Multipart) =>
        new(server.ApiAddress, Options(format));

    public static LaharsubClient CreateLaharsubClient(this LaharsubTestServer server, LaharsubTransport transport) =>
        new(server.ApiAddress, Options(transport: transport));

    public static string Text(this SubscriptionEvent item) =>
        item is LaharsubMessage message ? message.GetString() : throw new InvalidOperationException($"Expected a message, got {item}.");

    public static byte[] Utf8(string text) => Encoding.UTF8.GetBytes(text);

    /// <summary>The cursors' message ids alone, for tests about positions whatever the epochs.</summary>
    public static Dictionary<long, long> Froms(this IReadOnlyDictionary<long, TopicCursor> cursors) =>
        cursors.ToDictionary(cursor => cursor.Key, cursor => cursor.Value.From);
}

/// <summary>
/// Reads a subscription with every wait bounded. Disposing it disposes the subscription first, so that
/// the enumeration ends by itself before the enumerator is released.
/// </summary>
internal sealed class EventReader : IAsyncDisposable
{
    private readonly LaharsubSubscription _subscription;
    private readonly IAsyncEnumerator<SubscriptionEvent> _events;
    private Task<bool>? _pending;

    public EventReader(LaharsubSubscription subscription, CancellationToken cancellationToken = default)
    {
        _subscription = subscription;
        _events = subscription.ReadAllAsync(cancellationToken).GetAsyncEnumerator(cancellationToken);
    }

    public LaharsubSubscription Subscription => _subscription;

    /// <summary>The next event; fails if none comes within <paramref name="timeout"/> (default <see cref="TestSupport.Timeout"/>).</summary>
    public async Task<SubscriptionEvent> NextAsync(TimeSpan? timeout = null)
    {
        _pending ??= _events.MoveNextAsync().AsTask();
        var hasNext = await _pending.WaitAsync(timeout ?? TestSupport.Timeout);
        _pending = null;
        Assert.True(hasNext, "The subscription ended where an event was expected.");
        return _events.Current;
    }

    public async Task<List<SubscriptionEvent>> TakeAsync(int count, TimeSpan? timeout = null)
    {
        var events = new List<SubscriptionEvent>(count);
        while (events.Count < count)
        {
            events.Add(await NextAsync(timeout));
        }
        return events;
    }

    /// <summary>
    /// Fails if, within <paramref name="window"/>, the subscription yields an event or ends: it should
    /// be waiting quietly. (An absence can only be watched for a while; the window bounds the wait.)
    /// </summary>
    public async Task AssertQuietForAsync(TimeSpan window)
    {
        _pending ??= _events.MoveNextAsync().AsTask();
        if (await Task.WhenAny(_pending, Task.Delay(window)) == _pending)
        {
            Assert.Fail(await _pending ? $"Expected no event, got {_events.Current}." : "Expected the subscription to go on; it ended.");
        }
    }

    /// <summary>The task of the outstanding (or next) step, to observe how it ends.</summary>
    public Task<bool> PendingStep => _pending ??= _events.MoveNextAsync().AsTask();

    public async ValueTask DisposeAsync()
    {
        await _subscription.DisposeAsync();
        if (_pending is not null)
        {
            try
            {
                await _pending.WaitAsync(TestSupport.Timeout);
            }
            catch (Exception) when (_pending.IsFaulted || _pending.IsCanceled)
            {
                // The test already observed (or does not care) how the enumeration ended.
            }
        }
        await _events.DisposeAsync();
    }
}

namespace Laharsub.Client.Tests;

/// <summary>Observes the requests a client sends (it forwards every one to the real network handler).</summary>
internal sealed class CountingHandler() : DelegatingHandler(new SocketsHttpHandler())
{
    private int _requests;
    private int _pollsInFlight;
    private int _maxPollsInFlight;
    private int _emptyPolls;

    public int Requests => Volatile.Read(ref _requests);
    public int MaxPollsInFlight => Volatile.Read(ref _maxPollsInFlight);
    public int EmptyPolls => Volatile.Read(ref _emptyPolls);

    public HttpClient CreateClient(Uri baseAddress, TimeSpan? timeout = null) =>
        new(this) { BaseAddress = baseAddress, Timeout = timeout ?? Timeout.InfiniteTimeSpan };

    protected override async Task<HttpResponseMessage> SendAsync(HttpRequestMessage request, CancellationToken cancellationToken)
    {
        Interlocked.Increment(ref _requests);
        var isPoll = request.RequestUri!.AbsolutePath.EndsWith("/subscriptions", StringComparison.Ordinal);
        if (!isPoll)
        {
            return await base.SendAsync(request, cancellationToken);
        }
        var inFlight = Interlocked.Increment(ref _pollsInFlight);
        int max;
        while (inFlight > (max = Volatile.Read(ref _maxPollsInFlight)) && Interlocked.CompareExchange(ref _maxPollsInFlight, inFlight, max) != max)
        {
        }
        try
        {
            var response = await base.SendAsync(request, cancellationToken);
            if (response.StatusCode == System.Net.HttpStatusCode.NoContent)
            {
                Interlocked.Increment(ref _emptyPolls);
            }
            return response;
        }
        finally
        {
            Interlocked.Decrement(ref _pollsInFlight);
        }
    }
}

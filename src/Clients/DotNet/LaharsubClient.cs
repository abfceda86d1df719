using System.Runtime.CompilerServices;
using System.Text.Json;

namespace Laharsub.Client;

/// <summary>
/// A client of one Laharsub server: topics, publishing, and subscriptions that multiplex many topics
/// on one connection (a WebSocket, a Server-Sent Events stream or a long poll: <see cref="LaharsubClientOptions.Transport"/>).
/// Thread-safe; create one per server and share it, as it holds the connection pool.
/// </summary>
/// <remarks>
/// Requests that fail with a network error or a 5xx are retried with capped exponential backoff and
/// jitter (<see cref="LaharsubClientOptions.RetryDelay"/>); a <c>Retry-After</c> from the server
/// (429, 503, 507) is honoured. Requests that are not idempotent (creating a topic, publishing, deleting) are
/// retried only when the server certainly did not act on them: the connection could not be opened, or
/// the server answered with an error (the protocol guarantees that no error changes any state).
/// Other 4xx answers throw a <see cref="LaharsubException"/> with the server's explanation.
/// A client given several addresses (instances of one service on one shared store) moves to the next
/// one when the one in use cannot be reached or answers 502, 503 or 504, and tries it at once.
/// A resilience handler in the <see cref="HttpClient"/>'s pipeline (Polly's, as
/// <c>AddStandardResilienceHandler()</c> adds) that gives up on a subscription's request does not end
/// the subscription: it is retried like a network error. A poll cut by such a handler's timeout also
/// lowers <see cref="PollTimeout"/> to a quarter of the time it had waited, so that later polls end
/// before the handler's timeout does; docs/dotnet-client.md shows how to configure the handler instead.
/// </remarks>
public sealed partial class LaharsubClient : IAsyncDisposable, IDisposable
{
    /// <summary>The margin a caller's <see cref="HttpClient.Timeout"/> must leave above the poll hold time.</summary>
    private static readonly TimeSpan PollTimeoutMargin = TimeSpan.FromSeconds(10);

    internal static readonly JsonSerializerOptions WebJsonOptions = new(JsonSerializerDefaults.Web);

    private readonly HttpClient _http;
    /// <summary>The API roots, tried in order; <see cref="CurrentAddress"/> indexes the one in use.</summary>
    private readonly Uri[] _addresses;
    private readonly bool _ownsHttp;
    private readonly LaharsubClientOptions _options;
    private readonly CancellationTokenSource _disposing = new();

    /// <summary>
    /// Creates a client with its own connection pool. Its HTTP timeouts are per request (above the poll
    /// hold time for polls), so long polls are never cut short.
    /// </summary>
    /// <param name="apiAddress">The Laharsub API root, e.g. <c>http://localhost:5000/ps/</c>.</param>
    /// <param name="options">Polling, timeout and retry settings; <see langword="null"/> for the defaults.</param>
    /// <exception cref="ArgumentException">The address is not an absolute http(s) URI, or an option is out of range.</exception>
    public LaharsubClient(Uri apiAddress, LaharsubClientOptions? options = null)
        : this([ValidateAddress(apiAddress ?? throw new ArgumentNullException(nameof(apiAddress)), nameof(apiAddress))], options)
    {
    }

    /// <summary>
    /// Creates a client of several instances of one Laharsub service (sharing one store, such as Redis),
    /// with its own connection pool. Requests go to the first address until it cannot be reached
    /// (connection refused or reset, no answer in time, or <c>502</c>/<c>503</c>/<c>504</c>); the client
    /// then moves on to the next address, in order and wrapping around, and stays there. Subscriptions
    /// carry on from their cursors on the new instance.
    /// </summary>
    /// <param name="apiAddresses">The API roots of the instances, e.g. <c>http://a:5000/ps/</c> and <c>http://b:5000/ps/</c>; at least one.</param>
    /// <param name="options">Polling, timeout and retry settings; <see langword="null"/> for the defaults.</param>
    /// <exception cref="ArgumentException">The list is empty or repeats an address, an address is not an absolute http(s) URI, or an option is out of range.</exception>
    public LaharsubClient(IEnumerable<Uri> apiAddresses, LaharsubClientOptions? options = null)
    {
        _addresses = ValidateAddresses(apiAddresses, nameof(apiAddresses));
        _options = (options ?? new LaharsubClientOptions()).Validated();
        PollTimeout = _options.PollTimeout;
        var handler = new SocketsHttpHandler
        {
            // Re-resolves DNS now and then, so that a long-lived client follows a moved server.
            PooledConnectionLifetime = TimeSpan.FromMinutes(5),
            ConnectTimeout = _options.RequestTimeout,
        };
        _http = new HttpClient(handler, disposeHandler: true) { Timeout = Timeout.InfiniteTimeSpan };
        _ownsHttp = true;
    }

    /// <summary>
    /// Creates a client over an existing <see cref="HttpClient"/>, e.g. one from <c>IHttpClientFactory</c>.
    /// The client does not dispose it.
    /// </summary>
    /// <remarks>
    /// <see cref="HttpClient.Timeout"/> (100 s unless changed) bounds every request, long polls
    /// included, and the client cannot lift it. The poll hold time is therefore lowered to at most
    /// <c>Timeout - 10 s</c> (see <see cref="PollTimeout"/>). Best set it to
    /// <see cref="Timeout.InfiniteTimeSpan"/>: the client applies its own per-request timeouts.
    /// </remarks>
    /// <param name="httpClient">The client to send requests with; its <see cref="HttpClient.BaseAddress"/> must be the Laharsub API root, e.g. <c>http://localhost:5000/ps/</c>.</param>
    /// <param name="options">Polling, timeout and retry settings; <see langword="null"/> for the defaults.</param>
    /// <exception cref="ArgumentException">The base address is missing or not http(s), its timeout leaves no room for a poll, or an option is out of range.</exception>
    // The constructor that AddHttpClient<LaharsubClient>() builds the typed client with: the other one
    // that takes an HttpClient also fits, and the container would refuse to choose.
    [Microsoft.Extensions.DependencyInjection.ActivatorUtilitiesConstructor]
    public LaharsubClient(HttpClient httpClient, LaharsubClientOptions? options = null)
        : this(httpClient, [BaseAddressOf(httpClient)], options)
    {
    }

    /// <summary>
    /// Creates a client of several instances of one Laharsub service over an existing
    /// <see cref="HttpClient"/>, which it does not dispose; the client moves from one address to the
    /// next as <see cref="LaharsubClient(IEnumerable{Uri}, LaharsubClientOptions?)"/> describes. The
    /// <see cref="HttpClient.BaseAddress"/> is not used.
    /// </summary>
    /// <remarks><inheritdoc cref="LaharsubClient(HttpClient, LaharsubClientOptions?)" path="/remarks"/></remarks>
    /// <param name="httpClient">The client to send requests with.</param>
    /// <param name="apiAddresses">The API roots of the instances; at least one.</param>
    /// <param name="options">Polling, timeout and retry settings; <see langword="null"/> for the defaults.</param>
    /// <exception cref="ArgumentException">An address is missing, repeated or not http(s), the timeout leaves no room for a poll, or an option is out of range.</exception>
    public LaharsubClient(HttpClient httpClient, IEnumerable<Uri> apiAddresses, LaharsubClientOptions? options = null)
    {
        ArgumentNullException.ThrowIfNull(httpClient);
        _addresses = ValidateAddresses(apiAddresses, nameof(apiAddresses));
        _options = (options ?? new LaharsubClientOptions()).Validated();
        PollTimeout = _options.PollTimeout;
        if (httpClient.Timeout != Timeout.InfiniteTimeSpan)
        {
            var room = TimeSpan.FromSeconds(Math.Floor((httpClient.Timeout - PollTimeoutMargin).TotalSeconds));
            if (room < TimeSpan.FromSeconds(1))
            {
                throw new ArgumentException(
                    $"The HttpClient's Timeout of {httpClient.Timeout} leaves no room for a long poll (it must exceed the poll hold time by {PollTimeoutMargin}). Set it to Timeout.InfiniteTimeSpan: the Laharsub client applies its own per-request timeouts.",
                    nameof(httpClient));
            }
            if (room < PollTimeout)
            {
                PollTimeout = room;
            }
        }
        _http = httpClient;
    }

    /// <summary>
    /// The Laharsub API root requests go to now, ending with a slash: one of <see cref="ApiAddresses"/>,
    /// the first until it cannot be reached.
    /// </summary>
    public Uri ApiAddress => _addresses[CurrentAddress];

    /// <summary>Every API root this client may send requests to, in the order it tries them.</summary>
    public IReadOnlyList<Uri> ApiAddresses => _addresses;

    /// <summary>
    /// How long the server holds each poll: <see cref="LaharsubClientOptions.PollTimeout"/>, lowered
    /// when a caller's <see cref="HttpClient.Timeout"/> would otherwise cut polls short, and lowered
    /// again each time a resilience handler's timeout cuts a poll (see <see cref="LaharsubClient"/>'s remarks).
    /// </summary>
    public TimeSpan PollTimeout
    {
        get => TimeSpan.FromTicks(Volatile.Read(ref _pollTimeoutTicks));
        private set => Volatile.Write(ref _pollTimeoutTicks, value.Ticks);
    }

    private long _pollTimeoutTicks;

    internal LaharsubClientOptions Options => _options;

    /// <summary>The clock every wait and time limit of the client runs on (<see cref="LaharsubClientOptions.TimeProvider"/>).</summary>
    internal TimeProvider TimeProvider => _options.TimeProvider;

    /// <summary>Fires when the client is disposed; subscriptions stop on it. (The source is never disposed, so the token stays usable.)</summary>
    internal CancellationToken Disposing => _disposing.Token;

    /// <summary>Stops every subscription of this client, aborting their outstanding polls, and releases the connection pool if the client owns it.</summary>
    public ValueTask DisposeAsync()
    {
        Dispose();
        return ValueTask.CompletedTask;
    }

    /// <inheritdoc cref="DisposeAsync"/>
    public void Dispose()
    {
        if (_disposing.IsCancellationRequested)
        {
            return;
        }
        _disposing.Cancel();
        if (_ownsHttp)
        {
            _http.Dispose();
        }
    }

    private static Uri BaseAddressOf(HttpClient httpClient)
    {
        ArgumentNullException.ThrowIfNull(httpClient);
        if (httpClient.BaseAddress is null)
        {
            throw new ArgumentException("The HttpClient has no BaseAddress: set it to the Laharsub API root, e.g. http://localhost:5000/ps/.", nameof(httpClient));
        }
        return ValidateAddress(httpClient.BaseAddress, nameof(httpClient));
    }

    private static Uri[] ValidateAddresses(IEnumerable<Uri> addresses, string parameterName)
    {
        ArgumentNullException.ThrowIfNull(addresses, parameterName);
        var validated = new List<Uri>();
        foreach (var address in addresses)
        {
            if (address is null)
            {
                throw new ArgumentException("The list of API addresses holds a null: list each instance's API root, e.g. http://localhost:5000/ps/.", parameterName);
            }
            var root = ValidateAddress(address, parameterName);
            if (validated.Contains(root))
            {
                throw new ArgumentException($"The API address '{root}' is listed twice: list each instance once.", parameterName);
            }
            validated.Add(root);
        }
        if (validated.Count == 0)
        {
            throw new ArgumentException("The list of API addresses is empty: give at least one API root, e.g. http://localhost:5000/ps/.", parameterName);
        }
        return [.. validated];
    }

    private static Uri ValidateAddress(Uri address, string parameterName)
    {
        if (!address.IsAbsoluteUri || (address.Scheme != Uri.UriSchemeHttp && address.Scheme != Uri.UriSchemeHttps))
        {
            throw new ArgumentException($"'{address}' is not an absolute http or https address: use the Laharsub API root, e.g. http://localhost:5000/ps/.", parameterName);
        }
        if (!string.IsNullOrEmpty(address.Query) || !string.IsNullOrEmpty(address.Fragment))
        {
            throw new ArgumentException($"'{address}' has a query or fragment: use the Laharsub API root alone, e.g. http://localhost:5000/ps/.", parameterName);
        }
        // Without the trailing slash, relative paths would replace the last segment ("/ps" + "topics" = "/topics").
        return address.AbsolutePath.EndsWith('/') ? address : new Uri(address.AbsoluteUri + "/");
    }

    internal static void ThrowIfNotId(long id, [CallerArgumentExpression(nameof(id))] string? parameterName = null)
    {
        if (id <= 0)
        {
            throw new ArgumentOutOfRangeException(parameterName, id, $"{id} is not a topic id: topic ids are positive integers.");
        }
    }
}

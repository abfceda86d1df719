using System.Diagnostics.Metrics;
using System.Net.Http.Headers;
using System.Security.Cryptography;
using System.Text;
using System.Text.Json;
using Microsoft.Extensions.Caching.Memory;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;

namespace Laharsub.Server.Access;

/// <summary>
/// Backend mode's decision: posts <c>{"operation":"subscribe","topicId":14,"label":"orders-eu"}</c> to the
/// application's endpoint with the caller's <c>Authorization</c> and <c>Cookie</c>, and reads
/// <c>{"allow":true,"cacheSeconds":30}</c>. Anything else (another status, another body, no answer within the
/// timeout) is a refusal, never kept: it fails closed. Answers are kept per credentials, operation and topic.
/// </summary>
internal sealed partial class BackendAuthorization : IDisposable
{
    /// <summary>At most this many answers are kept, the least recently used dropped first.</summary>
    public const int MaxAnswers = 100_000;

    private readonly LaharsubBackendOptions _options;
    private readonly HttpClient _http;
    private readonly MemoryCache _answers = new(new MemoryCacheOptions { SizeLimit = MaxAnswers, CompactionPercentage = 0.1 });
    private readonly ILogger _logger;
    private readonly Counter<long> _asked;

    public BackendAuthorization(IOptions<LaharsubAuthOptions> auth, IMeterFactory meters, ILoggerFactory logs)
    {
        _options = auth.Value.Backend;
        // Connections are renewed now and then, so that a backend behind DNS that moves is found again.
        _http = new HttpClient(new SocketsHttpHandler { PooledConnectionLifetime = TimeSpan.FromMinutes(2), UseCookies = false })
        {
            Timeout = System.Threading.Timeout.InfiniteTimeSpan,
        };
        _logger = logs.CreateLogger<BackendAuthorization>();
        _asked = meters.Create("Laharsub").CreateCounter<long>("laharsub.auth.backend.requests", "{request}",
            "Requests to the authorization backend (Laharsub:Auth:Mode=Backend), by laharsub.outcome: allow, deny, or failed (no valid answer within Laharsub:Auth:Backend:Timeout: refused).");
    }

    /// <summary>Whether the backend allows <paramref name="operation"/> on <paramref name="topic"/> to the caller with <paramref name="credentials"/>.</summary>
    public async ValueTask<bool> AllowsAsync(BackendCredentials credentials, LaharsubOperation operation, LaharsubTopic topic, CancellationToken cancellationToken)
    {
        var key = new AnswerKey(credentials.Key, operation, topic.TopicId, topic.Label);
        if (_answers.TryGetValue(key, out bool kept))
        {
            return kept;
        }
        var (allowed, keepFor) = await AskAsync(credentials, operation, topic, cancellationToken).ConfigureAwait(false);
        if (keepFor > TimeSpan.Zero)
        {
            using var entry = _answers.CreateEntry(key);
            entry.Value = allowed;
            entry.Size = 1;
            entry.AbsoluteExpirationRelativeToNow = keepFor < _options.MaxCacheTime ? keepFor : _options.MaxCacheTime;
        }
        return allowed;
    }

    private async Task<(bool Allowed, TimeSpan KeepFor)> AskAsync(BackendCredentials credentials, LaharsubOperation operation, LaharsubTopic topic,
        CancellationToken cancellationToken)
    {
        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        timeout.CancelAfter(_options.Timeout);
        using var request = new HttpRequestMessage(HttpMethod.Post, _options.Url) { Content = Question(operation, topic) };
        if (credentials.Authorization is { } authorization)
        {
            request.Headers.TryAddWithoutValidation("Authorization", authorization);
        }
        if (credentials.Cookie is { } cookie)
        {
            request.Headers.TryAddWithoutValidation("Cookie", cookie);
        }
        try
        {
            using var response = await _http.SendAsync(request, timeout.Token).ConfigureAwait(false);
            var body = await response.Content.ReadAsByteArrayAsync(timeout.Token).ConfigureAwait(false);
            if (response.IsSuccessStatusCode && TryReadAnswer(body, out var allowed, out var keepFor))
            {
                _asked.Add(1, new KeyValuePair<string, object?>("laharsub.outcome", allowed ? "allow" : "deny"));
                return (allowed, keepFor);
            }
            Failed(_logger, _options.Url, $"it answered {(int)response.StatusCode} without {{\"allow\":true|false}}");
        }
        catch (Exception failure) when (failure is HttpRequestException or OperationCanceledException && !cancellationToken.IsCancellationRequested)
        {
            Failed(_logger, _options.Url, failure is OperationCanceledException
                ? $"it did not answer within Laharsub:Auth:Backend:Timeout ({_options.Timeout.TotalMilliseconds:0} ms)"
                : failure.Message);
        }
        _asked.Add(1, new KeyValuePair<string, object?>("laharsub.outcome", "failed"));
        return (false, TimeSpan.Zero);
    }

    private static ByteArrayContent Question(LaharsubOperation operation, LaharsubTopic topic)
    {
        using var buffer = new MemoryStream();
        using (var json = new Utf8JsonWriter(buffer))
        {
            json.WriteStartObject();
            json.WriteString("operation"u8, operation.Name());
            if (topic.TopicId is { } id)
            {
                json.WriteNumber("topicId"u8, id);
            }
            if (topic.Label is { } label)
            {
                json.WriteString("label"u8, label);
            }
            json.WriteEndObject();
        }
        var content = new ByteArrayContent(buffer.ToArray());
        content.Headers.ContentType = new MediaTypeHeaderValue("application/json");
        return content;
    }

    /// <summary>Reads <c>{"allow":true|false,"cacheSeconds":N}</c> (<c>cacheSeconds</c> optional: not kept without it).</summary>
    private static bool TryReadAnswer(byte[] body, out bool allowed, out TimeSpan keepFor)
    {
        allowed = false;
        keepFor = TimeSpan.Zero;
        try
        {
            using var answer = JsonDocument.Parse(body);
            var root = answer.RootElement;
            if (root.ValueKind != JsonValueKind.Object || !root.TryGetProperty("allow", out var allow) || allow.ValueKind is not (JsonValueKind.True or JsonValueKind.False))
            {
                return false;
            }
            allowed = allow.GetBoolean();
            if (root.TryGetProperty("cacheSeconds", out var seconds) && seconds.TryGetDouble(out var value) && value > 0)
            {
                keepFor = TimeSpan.FromSeconds(Math.Min(value, TimeSpan.MaxValue.TotalSeconds / 2));
            }
            return true;
        }
        catch (JsonException)
        {
            return false;
        }
    }

    public void Dispose()
    {
        _http.Dispose();
        _answers.Dispose();
    }

    private readonly record struct AnswerKey(string Credentials, LaharsubOperation Operation, long? TopicId, string? Label);
}

/// <summary>What Backend mode forwards of a caller: its <c>Authorization</c> and <c>Cookie</c> headers (either may be absent).</summary>
internal sealed class BackendCredentials(string? authorization, string? cookie)
{
    public string? Authorization { get; } = authorization;

    public string? Cookie { get; } = cookie;

    /// <summary>Whether the caller sent any credentials (a refusal is then a 403, else a 401).</summary>
    public bool Present => Authorization is not null || Cookie is not null;

    /// <summary>
    /// The credentials as one key of the kept answers: their SHA-256, so that a kept answer costs the same
    /// whatever the size of the caller's cookies, and the cache holds no credentials a memory dump could reveal.
    /// </summary>
    public string Key { get; } = Convert.ToHexString(SHA256.HashData(Encoding.UTF8.GetBytes(authorization + "\n" + cookie)));
}

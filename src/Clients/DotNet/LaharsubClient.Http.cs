using System.Net;
using System.Net.Http.Headers;
using System.Text;
using System.Text.Json;

namespace Laharsub.Client;

public sealed partial class LaharsubClient
{
    private const int MaxProblemBytes = 64 * 1024;

    /// <summary>
    /// Sends a one-shot request with retries and reads its successful answer with
    /// <paramref name="readAnswer"/> inside the same attempt (so a connection lost while reading is retried too).
    /// An attempt that finds the instance unreachable or unavailable moves the client to its next address.
    /// </summary>
    /// <param name="createRequest">Builds a fresh request per attempt (a request can be sent only once) against the given API root.</param>
    /// <param name="idempotent">Whether repeating the request after an ambiguous failure is harmless.</param>
    /// <param name="readAnswer">Reads a successful answer.</param>
    /// <param name="cancellationToken">The caller's cancellation.</param>
    private async Task<T> SendAsync<T>(Func<Uri, HttpRequestMessage> createRequest, bool idempotent,
        Func<HttpResponseMessage, CancellationToken, Task<T>> readAnswer, CancellationToken cancellationToken)
    {
        for (var attempt = 1; ; attempt++)
        {
            ObjectDisposedException.ThrowIf(_disposing.IsCancellationRequested, this);
            var lastAttempt = attempt >= _options.MaxRequestAttempts;
            var address = CurrentAddress;
            // A linked source takes no clock of its own, so the time limit is a source of its own, linked in.
            using var expiry = new CancellationTokenSource(_options.RequestTimeout, TimeProvider);
            using var timeout = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken, _disposing.Token, expiry.Token);
            TimeSpan delay;
            try
            {
                var root = _addresses[address];
                using var exchange = await SendAuthorizedAsync(() => createRequest(root), timeout.Token).ConfigureAwait(false);
                var response = exchange.Response;
                if (response.IsSuccessStatusCode)
                {
                    return await readAnswer(response, timeout.Token).ConfigureAwait(false);
                }
                TimeSpan? retryDelay;
                if (IsUnavailable(response.StatusCode))
                {
                    FailOver(address);
                    // Another instance is tried at once, whatever this one's Retry-After says.
                    retryDelay = TriesAnotherAddressAtOnce(attempt) ? TimeSpan.Zero : RetryDelayFor(response, attempt, _options.MaxRetryAfter);
                }
                else
                {
                    retryDelay = RetryDelayFor(response, attempt, _options.MaxRetryAfter);
                }
                if (lastAttempt || retryDelay is not { } wait)
                {
                    throw await ReadProblemAsync(response, timeout.Token).ConfigureAwait(false);
                }
                delay = wait;
            }
            catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
            {
                throw;
            }
            catch (OperationCanceledException) when (_disposing.IsCancellationRequested)
            {
                throw new ObjectDisposedException(nameof(LaharsubClient), "The Laharsub client was disposed while the request ran.");
            }
            catch (OperationCanceledException exception) when (timeout.IsCancellationRequested)
            {
                FailOver(address);
                if (!idempotent || lastAttempt)
                {
                    throw new TimeoutException(
                        $"Laharsub did not answer within {_options.RequestTimeout} (LaharsubClientOptions.RequestTimeout)."
                        + (idempotent ? "" : " The request may or may not have taken effect."), exception);
                }
                delay = FailoverBackoff(attempt);
            }
            catch (Exception exception) when (IsUnreachable(exception))
            {
                // The next request goes elsewhere even when this one cannot be retried (a publish whose
                // connection broke may have been stored: the caller decides).
                FailOver(address);
                if (lastAttempt || !IsTransient(exception, idempotent))
                {
                    throw;
                }
                delay = FailoverBackoff(attempt);
            }
            catch (Exception exception) when (!lastAttempt && IsTransient(exception, idempotent))
            {
                delay = Backoff(attempt);
            }
            using (var wait = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken, _disposing.Token))
            {
                // Disposal ends the wait too; the loop's check then reports it.
                await Task.Delay(delay, TimeProvider, wait.Token).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
            }
            cancellationToken.ThrowIfCancellationRequested();
        }
    }

    /// <summary>
    /// Sends a request carrying the <see cref="LaharsubClientOptions.AccessTokenProvider"/>'s token. On a
    /// <c>401</c> the provider is asked once more and a fresh request is sent with its token; a second
    /// <c>401</c> is the answer. Never retries a <c>403</c>: a new token would not grant more.
    /// </summary>
    internal async Task<Exchange> SendAuthorizedAsync(Func<HttpRequestMessage> createRequest, CancellationToken cancellationToken)
    {
        var provider = _options.AccessTokenProvider;
        var request = createRequest();
        try
        {
            if (provider is not null)
            {
                Authorize(request, await provider(cancellationToken).ConfigureAwait(false));
            }
            var response = await _http.SendAsync(request, HttpCompletionOption.ResponseHeadersRead, cancellationToken).ConfigureAwait(false);
            if (response.StatusCode != HttpStatusCode.Unauthorized || provider is null)
            {
                return new Exchange(request, response);
            }
            response.Dispose();
        }
        catch
        {
            request.Dispose();
            throw;
        }
        request.Dispose();
        var again = createRequest();
        try
        {
            Authorize(again, await provider(cancellationToken).ConfigureAwait(false));
            return new Exchange(again, await _http.SendAsync(again, HttpCompletionOption.ResponseHeadersRead, cancellationToken).ConfigureAwait(false));
        }
        catch
        {
            again.Dispose();
            throw;
        }
    }

    private static void Authorize(HttpRequestMessage request, string? token)
    {
        if (!string.IsNullOrEmpty(token))
        {
            request.Headers.Authorization = new AuthenticationHeaderValue("Bearer", token);
        }
    }

    /// <summary>A request and its answer, disposed together.</summary>
    internal readonly record struct Exchange(HttpRequestMessage Request, HttpResponseMessage Response) : IDisposable
    {
        public void Dispose()
        {
            Response.Dispose();
            Request.Dispose();
        }
    }

    /// <summary>Whether an exception is worth a retry: a network failure that the request certainly survived unprocessed, or any when it is idempotent.</summary>
    private static bool IsTransient(Exception exception, bool idempotent) => exception switch
    {
        HttpRequestException http => idempotent || http.HttpRequestError is HttpRequestError.ConnectionError
            or HttpRequestError.NameResolutionError or HttpRequestError.SecureConnectionError,
        // HttpClient.Timeout of a caller's client, or a stream cut while reading the answer.
        OperationCanceledException or IOException or JsonException => idempotent,
        _ => false,
    };

    /// <summary>
    /// How long to wait before retrying an error answer; <see langword="null"/> when it must not be
    /// retried, or when the server asks for a wait longer than <paramref name="maxRetryAfter"/>.
    /// </summary>
    internal TimeSpan? RetryDelayFor(HttpResponseMessage response, int attempt, TimeSpan maxRetryAfter)
    {
        var status = (int)response.StatusCode;
        // A 409 to a keyed publish: the same key is still being stored; its retry gets that publish's answer.
        if (status is not (429 or >= 500) && !(status == 409 && response.RequestMessage?.Headers.Contains("Idempotency-Key") == true))
        {
            return null;
        }
        // 429 and 503 are meant to carry Retry-After; other 5xx may too (Laharsub's 507 does).
        if (response.Headers.RetryAfter is { } retryAfter)
        {
            var wait = retryAfter.Delta ?? (retryAfter.Date - TimeProvider.GetUtcNow()) ?? TimeSpan.Zero;
            if (wait > maxRetryAfter)
            {
                return null;
            }
            // At least what the server asked for, plus a little jitter so that its clients come back spread out.
            return (wait < TimeSpan.Zero ? TimeSpan.Zero : wait) + _options.RetryDelay * Random.Shared.NextDouble();
        }
        return Backoff(attempt);
    }

    /// <summary>Capped exponential backoff with full jitter: uniformly random below <c>min(max, base * 2^(failures-1))</c>.</summary>
    internal TimeSpan Backoff(int failures)
    {
        // The factor is capped before multiplying: RetryDelay * 2^30 overflows TimeSpan for long delays.
        var factor = Math.Min(Math.Pow(2, Math.Min(failures - 1, 30)), _options.MaxRetryDelay / _options.RetryDelay);
        return _options.RetryDelay * factor * Random.Shared.NextDouble();
    }

    /// <summary>Turns an error answer into an exception carrying the server's problem details.</summary>
    internal static async Task<LaharsubException> ReadProblemAsync(HttpResponseMessage response, CancellationToken cancellationToken)
    {
        byte[] body;
        try
        {
            var stream = await response.Content.ReadAsStreamAsync(cancellationToken).ConfigureAwait(false);
            await using (stream.ConfigureAwait(false))
            {
                body = await ReadAtMostAsync(stream, MaxProblemBytes, cancellationToken).ConfigureAwait(false);
            }
        }
        catch (Exception exception) when (exception is IOException or HttpRequestException)
        {
            body = [];
        }
        return ParseProblem(response.StatusCode, response.Content.Headers.ContentType, body);
    }

    /// <summary>
    /// Turns a problem details object that came in a WebSocket frame (its status inside it) into the
    /// exception the same problem in an HTTP answer would be.
    /// </summary>
    internal static LaharsubException ParseProblemObject(ReadOnlySpan<byte> json)
    {
        var body = json.ToArray();
        var status = HttpStatusCode.InternalServerError;
        try
        {
            using var problem = JsonDocument.Parse(body);
            if (problem.RootElement.ValueKind == JsonValueKind.Object
                && problem.RootElement.TryGetProperty("status", out var number) && number.TryGetInt32(out var code) && code is >= 100 and <= 999)
            {
                status = (HttpStatusCode)code;
            }
        }
        catch (JsonException)
        {
            // Reported below as the text it is.
        }
        return ParseProblem(status, new MediaTypeHeaderValue("application/problem+json"), body);
    }

    internal static LaharsubException ParseProblem(HttpStatusCode status, MediaTypeHeaderValue? contentType, byte[] body)
    {
        var mediaType = contentType?.MediaType ?? "";
        if (mediaType.EndsWith("json", StringComparison.OrdinalIgnoreCase) && body.Length > 0)
        {
            try
            {
                using var problem = JsonDocument.Parse(body);
                if (problem.RootElement.ValueKind == JsonValueKind.Object)
                {
                    var root = problem.RootElement;
                    if (status == HttpStatusCode.Forbidden)
                    {
                        return new LaharsubAccessDeniedException(StringProperty(root, "title"), StringProperty(root, "detail"), StringProperty(root, "operation"),
                            root.TryGetProperty("topicId", out var forbidden) && forbidden.TryGetInt64(out var forbiddenId) ? forbiddenId : null);
                    }
                    return new LaharsubException(status, StringProperty(root, "title"), StringProperty(root, "detail"),
                        Errors(root), root.TryGetProperty("topicId", out var topic) && topic.TryGetInt64(out var topicId) ? topicId : null)
                    {
                        ProblemEpoch = StringProperty(root, "epoch") is { } epoch && Epochs.IsValid(epoch) ? epoch : null,
                        ProblemVersion = root.TryGetProperty("version", out var version) && version.TryGetInt64(out var current) ? current : null,
                    };
                }
            }
            catch (JsonException)
            {
                // Not problem details after all: report the text as it is.
            }
        }
        var text = Encoding.UTF8.GetString(body).Trim();
        if (status == HttpStatusCode.RequestUriTooLong && text.Length == 0)
        {
            // Kestrel refuses an over-long request line before Laharsub sees it, so there is no problem detail.
            return new LaharsubException(status, "URI too long",
                "The poll names more topics than fit in the server's request line. Split the topics over several subscriptions, " +
                "or ask the operator to raise Kestrel:Limits:MaxRequestLineSize.");
        }
        var detail = text.Length == 0 ? null : text.Length > 1000 ? text[..1000] + "..." : text;
        return status == HttpStatusCode.Forbidden
            ? new LaharsubAccessDeniedException(null, detail, operation: null, topicId: null)
            : new LaharsubException(status, null, detail);
    }

    private static string? StringProperty(JsonElement element, string name) =>
        element.TryGetProperty(name, out var value) && value.ValueKind == JsonValueKind.String ? value.GetString() : null;

    private static Dictionary<string, string[]>? Errors(JsonElement root)
    {
        if (!root.TryGetProperty("errors", out var errors) || errors.ValueKind != JsonValueKind.Object)
        {
            return null;
        }
        var result = new Dictionary<string, string[]>();
        foreach (var error in errors.EnumerateObject())
        {
            result[error.Name] = error.Value.ValueKind == JsonValueKind.Array
                ? error.Value.EnumerateArray().Select(message => message.ToString()).ToArray()
                : [error.Value.ToString()];
        }
        return result;
    }

    private static async Task<byte[]> ReadAtMostAsync(Stream stream, int limit, CancellationToken cancellationToken)
    {
        var buffer = new byte[limit];
        var length = await stream.ReadAtLeastAsync(buffer, limit, throwOnEndOfStream: false, cancellationToken).ConfigureAwait(false);
        return length == limit ? buffer : buffer[..length];
    }
}

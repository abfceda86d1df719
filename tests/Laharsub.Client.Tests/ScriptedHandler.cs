using System.Net;
using System.Net.Http.Headers;
using System.Text;
using System.Threading.Channels;

namespace Laharsub.Client.Tests;

/// <summary>
/// An HTTP handler with no network behind it: each request waits until the test answers or fails it,
/// so a test decides exactly what every server says, in what order (the .NET counterpart of the
/// browser tests' scripted network).
/// </summary>
internal sealed class ScriptedHandler : HttpMessageHandler
{
    private readonly Channel<ScriptedRequest> _requests = Channel.CreateUnbounded<ScriptedRequest>();

    public HttpClient CreateClient() => new(this) { Timeout = Timeout.InfiniteTimeSpan };

    /// <summary>The next request the client sends that it has not abandoned meanwhile; fails after <see cref="TestSupport.Timeout"/>.</summary>
    public async Task<ScriptedRequest> NextAsync()
    {
        using var timeout = new CancellationTokenSource(TestSupport.Timeout);
        while (true)
        {
            ScriptedRequest request;
            try
            {
                request = await _requests.Reader.ReadAsync(timeout.Token);
            }
            catch (OperationCanceledException)
            {
                throw new TimeoutException($"The client sent no request within {TestSupport.Timeout}.");
            }
            if (!request.Abandoned)
            {
                return request;
            }
        }
    }

    /// <summary>The next poll (skipping nothing: a non-poll request there fails the test).</summary>
    public async Task<ScriptedRequest> NextPollAsync()
    {
        var request = await NextAsync();
        Assert.True(request.IsPoll, $"Expected a poll, got {request.Method} {request.Uri}.");
        return request;
    }

    protected override Task<HttpResponseMessage> SendAsync(HttpRequestMessage request, CancellationToken cancellationToken)
    {
        var scripted = new ScriptedRequest(request, cancellationToken);
        _requests.Writer.TryWrite(scripted);
        return scripted.Answer.WaitAsync(cancellationToken);
    }
}

internal sealed class ScriptedRequest(HttpRequestMessage request, CancellationToken abandoned)
{
    private readonly TaskCompletionSource<HttpResponseMessage> _answer = new(TaskCreationOptions.RunContinuationsAsynchronously);

    public Task<HttpResponseMessage> Answer => _answer.Task;

    public HttpMethod Method => request.Method;

    public Uri Uri => request.RequestUri!;

    public HttpRequestHeaders Headers => request.Headers;

    public bool Abandoned => abandoned.IsCancellationRequested;

    public bool IsPoll => Uri.AbsolutePath.EndsWith("/subscriptions", StringComparison.Ordinal);

    /// <summary>The API root the request went to, e.g. <c>http://a.test/ps/</c>.</summary>
    public string Root => Uri.GetLeftPart(UriPartial.Authority) + Uri.AbsolutePath[..(Uri.AbsolutePath.LastIndexOf("/ps/", StringComparison.Ordinal) + 4)];

    /// <summary>A poll's <c>topics</c> value, unescaped: <c>14:43~abc,15:1</c>.</summary>
    public string Topics => Uri.UnescapeDataString(Uri.Query.TrimStart('?').Split('&').Single(p => p.StartsWith("topics=", StringComparison.Ordinal))["topics=".Length..]);

    public Task<string> BodyAsync() => request.Content!.ReadAsStringAsync();

    /// <summary>The request body's content type as sent, e.g. <c>application/merge-patch+json</c>.</summary>
    public string? ContentType => request.Content?.Headers.ContentType?.ToString();

    public void RespondJson(HttpStatusCode status, string json, string mediaType = "application/json", Action<HttpResponseMessage>? headers = null)
    {
        var response = new HttpResponseMessage(status) { Content = new StringContent(json, Encoding.UTF8, mediaType) };
        headers?.Invoke(response);
        _answer.TrySetResult(response);
    }

    public void RespondMultipart(string boundary, string body)
    {
        var content = new ByteArrayContent(Encoding.UTF8.GetBytes(body));
        content.Headers.ContentType = MediaTypeHeaderValue.Parse($"multipart/mixed; boundary=\"{boundary}\"");
        _answer.TrySetResult(new HttpResponseMessage(HttpStatusCode.OK) { Content = content });
    }

    public void Respond(HttpStatusCode status) => _answer.TrySetResult(new HttpResponseMessage(status) { Content = new ByteArrayContent([]) });

    public void Fail(Exception exception) => _answer.TrySetException(exception);

    /// <summary>Fails as a refused connection does.</summary>
    public void Refuse() => Fail(new HttpRequestException(HttpRequestError.ConnectionError, "Connection refused (scripted)"));
}

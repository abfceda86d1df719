using Laharsub.Server;
using System.Net;
using BenchmarkDotNet.Attributes;
using Laharsub.Server.Access;
using Laharsub.Server.Host.Composition;
using Laharsub.Server.Hosting;
using Laharsub.Server.Storage;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Http.Features;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;

namespace Laharsub.Benchmarks;

/// <summary>
/// What each access mode costs a poll and a publish: one <c>GET /ps/subscriptions?topics=N:1&amp;timeout=0</c>
/// answered with one retained message, and one 10-byte <c>POST /ps/topics/N</c> (the topic keeps its
/// newest 1,000 messages, so publishing does not fill the store), each through the standalone server's
/// whole request pipeline (every middleware, the endpoint filters, the answer written), in process: a
/// server that hands requests straight to the application stands in for Kestrel, so that sockets and the
/// HTTP parser, the same for every mode, do not drown the difference.
/// </summary>
[MemoryDiagnoser]
public class AccessModePollBenchmarks
{
    private const string Key = "benchmark-signing-key-0123456789abcdef";
    private static readonly byte[] Message = BackendFactory.TenBytes.ToArray();

    private WebApplication _app = null!;
    private InProcessServer _server = null!;
    private string _query = null!;
    private string _topicPath = null!;
    private string? _authorization;

    /// <summary>
    /// <c>Open</c>; <c>OpenAuthMiddleware</c>: Open with the authentication middleware that ASP.NET Core
    /// adds by itself when authentication services exist (what every Open server ran before f38a70a);
    /// <c>JwtToken</c>: a cached token granting <c>subscribe</c> and <c>publish</c> on <c>*</c>; <c>JwtLabel</c>:
    /// a cached token granting them on <c>bench-*</c>, so each request looks up its topic's label;
    /// <c>JwtAnonymous</c>: no token, <c>Laharsub:Auth:Anonymous=subscribe,publish</c>.
    /// </summary>
    [Params("Open", "OpenAuthMiddleware", "JwtToken", "JwtLabel", "JwtAnonymous")]
    public string Mode { get; set; } = "Open";

    [GlobalSetup]
    public void Setup()
    {
        var jwt = Mode.StartsWith("Jwt", StringComparison.Ordinal);
        var settings = new Dictionary<string, string?>();
        if (jwt)
        {
            settings["Laharsub:Auth:Mode"] = "Jwt";
            settings["Laharsub:Auth:Jwt:SigningKey"] = Key;
            settings["Laharsub:Auth:Jwt:Issuer"] = "bench";
            settings["Laharsub:Auth:Jwt:Audience"] = "laharsub";
            settings["Laharsub:Auth:Anonymous"] = Mode == "JwtAnonymous" ? "subscribe,publish" : "";
        }
        _app = StandaloneHost.Build([], builder =>
        {
            builder.Configuration.AddInMemoryCollection(settings);
            builder.Logging.ClearProviders();
            builder.Services.AddSingleton<IServer, InProcessServer>();
        });
        if (Mode == "OpenAuthMiddleware")
        {
            // Takes back the mark that keeps WebApplication from adding the middleware in Open mode.
            ((IApplicationBuilder)_app).Properties.Remove("__AuthenticationMiddlewareSet");
        }
        _app.StartAsync().GetAwaiter().GetResult();
        _server = (InProcessServer)_app.Services.GetRequiredService<IServer>();

        var store = _app.Services.GetRequiredService<ILaharsubStore>();
        var topic = store.CreateTopicAsync("bench-1").AsTask().GetAwaiter().GetResult()!.TopicId;
        store.PublishAsync(topic, BackendFactory.TenBytes, "application/octet-stream").AsTask().GetAwaiter().GetResult();
        _query = $"?topics={topic}:1&timeout=0";
        _topicPath = $"/ps/topics/{topic}";
        if (Mode is "JwtToken" or "JwtLabel")
        {
            var auth = _app.Services.GetRequiredService<IOptions<LaharsubAuthOptions>>().Value;
            IReadOnlyList<string> topics = [Mode == "JwtToken" ? "*" : "bench-*"];
            var token = TokenIssuer.Issue(auth, "bench-user",
                new Dictionary<LaharsubOperation, IReadOnlyList<string>> { [LaharsubOperation.Subscribe] = topics, [LaharsubOperation.Publish] = topics },
                TimeSpan.FromHours(1), DateTimeOffset.UtcNow, TokenIssuer.CommandLine);
            _authorization = "Bearer " + token;
        }
        // The first requests validate the token (later ones find it in the cache) and prove the setup.
        if (Poll().GetAwaiter().GetResult() is var polled and not StatusCodes.Status200OK)
        {
            throw new InvalidOperationException($"The benchmark's poll was answered {polled} in mode {Mode}.");
        }
        if (Publish().GetAwaiter().GetResult() is var published and not StatusCodes.Status201Created)
        {
            throw new InvalidOperationException($"The benchmark's publish was answered {published} in mode {Mode}.");
        }
    }

    [GlobalCleanup]
    public void Cleanup()
    {
        _app.StopAsync().GetAwaiter().GetResult();
        _app.DisposeAsync().AsTask().GetAwaiter().GetResult();
    }

    /// <summary>One poll, from the request's features to the answer written; returns its status.</summary>
    [Benchmark]
    public Task<int> Poll() =>
        Send(new HttpRequestFeature { Method = HttpMethods.Get, Scheme = "http", Protocol = "HTTP/1.1", Path = "/ps/subscriptions", QueryString = _query });

    /// <summary>One 10-byte publish, from the request's features to the answer written; returns its status.</summary>
    [Benchmark]
    public Task<int> Publish()
    {
        var request = new HttpRequestFeature
        {
            Method = HttpMethods.Post, Scheme = "http", Protocol = "HTTP/1.1", Path = _topicPath,
            Body = new MemoryStream(Message, writable: false),
        };
        request.Headers.ContentType = "text/plain";
        request.Headers.ContentLength = Message.Length;
        return Send(request);
    }

    private Task<int> Send(HttpRequestFeature request)
    {
        request.Headers.Host = "127.0.0.1";
        if (_authorization is not null)
        {
            request.Headers.Authorization = _authorization;
        }
        var features = new FeatureCollection();
        features.Set<IHttpRequestFeature>(request);
        features.Set<IHttpResponseFeature>(new HttpResponseFeature());
        features.Set<IHttpResponseBodyFeature>(new StreamResponseBodyFeature(Stream.Null));
        features.Set<IHttpConnectionFeature>(new HttpConnectionFeature { RemoteIpAddress = IPAddress.Loopback, LocalIpAddress = IPAddress.Loopback, ConnectionId = "bench" });
        features.Set<IHttpRequestLifetimeFeature>(new HttpRequestLifetimeFeature());
        return _server.ProcessAsync(features);
    }

    /// <summary>Hands each request to the application as Kestrel would, without a socket.</summary>
    private sealed class InProcessServer : IServer
    {
        private Func<IFeatureCollection, Task<int>>? _process;

        public IFeatureCollection Features { get; } = new FeatureCollection();

        public Task<int> ProcessAsync(IFeatureCollection features) =>
            (_process ?? throw new InvalidOperationException("The application has not started."))(features);

        public Task StartAsync<TContext>(IHttpApplication<TContext> application, CancellationToken cancellationToken) where TContext : notnull
        {
            _process = async features =>
            {
                var context = application.CreateContext(features);
                Exception? failure = null;
                try
                {
                    await application.ProcessRequestAsync(context);
                }
                catch (Exception exception)
                {
                    failure = exception;
                    throw;
                }
                finally
                {
                    application.DisposeContext(context, failure);
                }
                return features.GetRequiredFeature<IHttpResponseFeature>().StatusCode;
            };
            return Task.CompletedTask;
        }

        public Task StopAsync(CancellationToken cancellationToken) => Task.CompletedTask;

        public void Dispose()
        {
        }
    }
}

using System.Collections.Concurrent;
using System.Net;
using System.Text;
using System.Text.Json;
using Laharsub.Server.Hosting;
using Laharsub.Server.Tests.Streams;
using Laharsub.Server.Tests.Support;
using Laharsub.Testing;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Http.Features;
using Microsoft.AspNetCore.RateLimiting;
using Microsoft.AspNetCore.Routing;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;

namespace Laharsub.Server.Tests;

public sealed class RateLimitTests
{
    [Fact]
    public async Task AClientOverItsLimitGets429WithRetryAfterAndAProblemAndNothingChanges()
    {
        // A period of an hour: no token comes back while the test runs, however slow the machine.
        var logs = new WarningRecorder();
        await using var server = await LaharsubTestServer.StartAsync(o =>
        {
            o.RateLimit.RequestsPerPeriod = 3;
            o.RateLimit.Period = TimeSpan.FromHours(1);
        }, services: s => s.AddSingleton<ILoggerProvider>(logs));
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();
        await client.PublishTextAsync(topic, "one");
        await client.PublishTextAsync(topic, "two");

        using var refused = await client.PostAsync($"topics/{topic}", new StringContent("three")).WaitAsync(WireClient.Bound);

        Assert.Equal(HttpStatusCode.TooManyRequests, refused.StatusCode);
        Assert.Equal("application/problem+json", refused.Content.Headers.ContentType?.MediaType);
        Assert.InRange(refused.Headers.RetryAfter?.Delta?.TotalSeconds ?? 0, 1, 3600);
        var problem = await refused.Content.ReadAsStringAsync();
        Assert.Contains("Laharsub:RateLimit:RequestsPerPeriod", problem);
        Assert.Equal(2, (await client.GetTopicAsync(topic)).GetProperty("lastMessageId").GetInt64());

        // Creating and deleting topics count too; reading and polling do not.
        using (var create = await client.PostAsync("topics", null).WaitAsync(WireClient.Bound))
        {
            Assert.Equal(HttpStatusCode.TooManyRequests, create.StatusCode);
        }
        using (var delete = await client.DeleteAsync($"topics/{topic}").WaitAsync(WireClient.Bound))
        {
            Assert.Equal(HttpStatusCode.TooManyRequests, delete.StatusCode);
        }
        var poll = await client.PollAsync($"topics={topic}:1&timeout=0");
        Assert.Equal(["one", "two"], poll.Messages.Select(m => m.Text));
        // The standalone host has the rate limiter in its pipeline: no warning that it is missing.
        Assert.DoesNotContain(logs.Warnings, warning => warning.Contains("UseRateLimiter"));
    }

    [Fact]
    public async Task PublishFramesOnAWebSocketDrawOnTheClientsOneBucketAndARefusedOneIsA429ProblemFrame()
    {
        // Two permits an hour: none comes back while the test runs. The topic is made in the store, not by
        // a POST, so that both permits are left for the socket.
        await using var server = await LaharsubTestServer.StartAsync(o =>
        {
            o.RateLimit.RequestsPerPeriod = 2;
            o.RateLimit.Period = TimeSpan.FromHours(1);
        });
        using var client = server.CreateClient();
        var topic = (await server.Store.CreateTopicAsync().AsTask().WaitAsync(WireClient.Bound))!.TopicId;
        await using var socket = await LaharsubSocket.ConnectAsync(server.ApiAddress, "");
        await socket.ReceiveAsync("subscribed");

        var answers = new List<JsonElement>();
        for (var i = 1; i <= 3; i++)
        {
            await socket.SendAsync($$"""{"type":"publish","id":"p{{i}}","topicId":{{topic}},"body":"m{{i}}"}""");
            answers.Add(await socket.ReceiveAsync());
        }

        Assert.Equal(["published", "published", "problem"], answers.Select(a => a.GetProperty("type").GetString()));
        Assert.Equal("p3", answers[2].GetProperty("id").GetString());
        var refused = answers[2].GetProperty("problem");
        Assert.Equal(429, refused.GetProperty("status").GetInt32());
        Assert.InRange(refused.GetProperty("retryAfter").GetInt64(), 1, 3600);
        Assert.Equal(2, (await client.GetTopicAsync(topic)).GetProperty("lastMessageId").GetInt64());

        // The socket spent the client's bucket: a POST is refused too, with the same problem.
        var (status, rest) = await client.SendForProblemAsync(new HttpRequestMessage(HttpMethod.Post, $"topics/{topic}") { Content = new StringContent("m4") });
        Assert.Equal(HttpStatusCode.TooManyRequests, status);
        Assert.Equal(
            (Field(rest, "type"), Field(rest, "title"), Field(rest, "detail")),
            (Field(refused, "type"), Field(refused, "title"), Field(refused, "detail")));
        Assert.Contains("Laharsub:RateLimit:RequestsPerPeriod", Field(refused, "detail"));

        // The socket stays open and answers frames that change nothing.
        await socket.SendAsync($$"""{"type":"subscribe","id":"s1","topics":"{{topic}}:1"}""");
        Assert.Equal("s1", (await socket.ReceiveAsync("subscribed")).GetProperty("id").GetString());
        Assert.Equal(["m1", "m2"], [(await socket.ReceiveAsync("message")).GetProperty("message").Text(), (await socket.ReceiveAsync("message")).GetProperty("message").Text()]);
    }

    private static string? Field(JsonElement problem, string property) =>
        problem.TryGetProperty(property, out var value) ? value.GetString() : null;

    [Fact]
    public async Task ABurstAboveTheRateIsAllowedUpToItsSize()
    {
        await using var server = await LaharsubTestServer.StartAsync(o =>
        {
            o.RateLimit.RequestsPerPeriod = 1;
            o.RateLimit.Period = TimeSpan.FromHours(1);
            o.RateLimit.Burst = 5;
        });
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();
        var statuses = new List<HttpStatusCode>();
        for (var i = 0; i < 6; i++)
        {
            using var response = await client.PostAsync($"topics/{topic}", new StringContent($"m{i}", Encoding.UTF8)).WaitAsync(WireClient.Bound);
            statuses.Add(response.StatusCode);
        }

        Assert.Equal([.. Enumerable.Repeat(HttpStatusCode.Created, 4), HttpStatusCode.TooManyRequests, HttpStatusCode.TooManyRequests], statuses);
    }

    [Fact]
    public async Task AHostThatForgetsUseRateLimiterIsWarnedOnceInTheLog()
    {
        // An application embedding Laharsub the README's way, minus app.UseRateLimiter().
        var builder = WebApplication.CreateSlimBuilder();
        builder.WebHost.UseUrls("http://127.0.0.1:0");
        var logs = new WarningRecorder();
        builder.Logging.ClearProviders().AddProvider(logs);
        builder.Services.AddLaharsub(o =>
        {
            o.RateLimit.RequestsPerPeriod = 1;
            o.RateLimit.Period = TimeSpan.FromHours(1);
        });
        await using var app = builder.Build();
        app.UseCors();
        app.MapLaharsub("/ps");
        await app.StartAsync().WaitAsync(WireClient.Bound);
        var address = app.Services.GetRequiredService<IServer>().Features.GetRequiredFeature<IServerAddressesFeature>().Addresses.First();
        using var client = new HttpClient { BaseAddress = new Uri(address + "/ps/"), Timeout = WireClient.Bound };

        var topic = await client.CreateTopicAsync();
        await client.PublishTextAsync(topic, "not limited: the middleware is missing");
        await client.PublishTextAsync(topic, "and still not limited");

        // One warning about the rate limit (besides Open mode's, which every Open server logs at start).
        var warning = Assert.Single(logs.Warnings, warning => !warning.StartsWith("Laharsub:Auth:Mode is Open", StringComparison.Ordinal));
        Assert.Contains("app.UseRateLimiter()", warning);
        await app.StopAsync().WaitAsync(WireClient.Bound);
    }

    private sealed class WarningRecorder : ILoggerProvider, ILogger
    {
        public ConcurrentQueue<string> Warnings { get; } = new();

        public ILogger CreateLogger(string categoryName) => this;

        public IDisposable? BeginScope<TState>(TState state) where TState : notnull => null;

        public bool IsEnabled(LogLevel logLevel) => logLevel >= LogLevel.Warning;

        public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter)
        {
            if (IsEnabled(logLevel))
            {
                Warnings.Enqueue(formatter(state, exception));
            }
        }

        public void Dispose()
        {
        }
    }

    [Fact]
    public async Task WithoutALimitConfiguredPublishingIsNotLimited()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();

        for (var i = 0; i < 200; i++)
        {
            await client.PublishTextAsync(topic, $"m{i}");
        }

        Assert.Equal(200, (await client.GetTopicAsync(topic)).GetProperty("lastMessageId").GetInt64());
        // Not even a no-op limiter: without rate limit metadata the middleware passes requests straight on.
        var endpoints = server.Services.GetRequiredService<EndpointDataSource>().Endpoints;
        Assert.NotEmpty(endpoints);
        Assert.All(endpoints, endpoint => Assert.Null(endpoint.Metadata.GetMetadata<EnableRateLimitingAttribute>()));
    }
}

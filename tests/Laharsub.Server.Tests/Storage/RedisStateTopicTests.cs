using System.Net;
using System.Net.Http.Headers;
using System.Text.Json;
using Laharsub.Server.Hosting;
using Laharsub.Server.Redis;
using Laharsub.Server.Storage;
using Laharsub.Server.Tests.Support;
using Laharsub.Testing;
using Microsoft.Extensions.DependencyInjection;
using static Laharsub.Server.Tests.State.StateTopicTests;

namespace Laharsub.Server.Tests.Storage;

/// <summary>
/// State topics over HTTP on two instances that share one Redis, as behind a load balancer without sticky sessions:
/// a document written through one instance is read, compared-and-set and subscribed to through the other, and
/// patches sent through both at once are each applied once (the commit's compare-and-set, docs/scale-out.md).
/// </summary>
public sealed class RedisStateTopicTests
{
    private const string Patch = MergePatch.MediaType;

    [Fact]
    public async Task AStateTopicWrittenThroughOneInstanceIsReadAndFollowedThroughAnother()
    {
        await using var instances = await Instances.StartAsync();
        var (a, b) = (instances.A, instances.B);
        var (topic, epoch, _) = await CreateStateTopicAsync(a);

        using var patched = await SendAsync(b, HttpMethod.Post, $"topics/{topic}", """{"bid":1,"venue":{}}""", Patch);
        using var replace = Request(HttpMethod.Put, $"topics/{topic}/state", """{"bid":2,"n":12345678901234567890,"list":[],"obj":{}}""", "application/json");
        replace.Headers.IfMatch.Add(new EntityTagHeaderValue($"\"{epoch}:1\""));
        using var replaced = await a.SendAsync(replace).WaitAsync(WireClient.Bound);
        using var stale = Request(HttpMethod.Put, $"topics/{topic}/state", """{"late":true}""", "application/json");
        stale.Headers.IfMatch.Add(new EntityTagHeaderValue($"\"{epoch}:1\""));
        using var refused = await b.SendAsync(stale).WaitAsync(WireClient.Bound);
        var (_, tag, document) = await GetStateAsync(b, topic);
        var snapshot = await a.PollAsync($"topics={topic}:state&timeout=0");
        var waiting = b.PollAsync($"topics={topic}:3~{epoch}&timeout=30");
        await Eventually.HoldsAsync(async () => (await b.GetTopicAsync(topic)).GetProperty("waitingPolls").GetInt32() == 1, WireClient.Bound, "the poll waits");
        using var third = await SendAsync(a, HttpMethod.Post, $"topics/{topic}", """{"obj":{"k":1}}""", Patch);
        var followed = await waiting.WaitAsync(WireClient.Bound);

        Assert.Equal($"\"{epoch}:1\"", patched.Headers.ETag?.ToString());
        Assert.Equal((HttpStatusCode.OK, $"\"{epoch}:2\""), (replaced.StatusCode, replaced.Headers.ETag?.ToString()));
        Assert.Equal(HttpStatusCode.PreconditionFailed, refused.StatusCode);
        // Byte for byte: the store never let Lua's cjson parse it.
        Assert.Equal(($"\"{epoch}:2\"", """{"bid":2,"n":12345678901234567890,"list":[],"obj":{}}"""), (tag, document));
        var state = Assert.Single(snapshot.Notices);
        Assert.Equal(("state", 2L, document), (state.Type, state.Get("version"), state.Json.GetProperty("document").GetRawText()));
        var message = Assert.Single(followed.Messages);
        Assert.Equal((3L, Patch, """{"obj":{"k":1}}"""), (message.MessageId, message.ContentType, message.Text));
    }

    [Fact]
    public async Task PatchesSentThroughTwoInstancesAtOnceAreEachAppliedOnceInTheirOrder()
    {
        await using var instances = await Instances.StartAsync();
        var (topic, _, _) = await CreateStateTopicAsync(instances.A);
        const int PerInstance = 15;

        var sending = Enumerable.Range(0, PerInstance).SelectMany(i => new[]
        {
            Task.Run(async () => (await SendAsync(instances.A, HttpMethod.Post, $"topics/{topic}", $$"""{"a{{i}}":{{i}},"last":"a{{i}}"}""", Patch)).Dispose()),
            Task.Run(async () => (await SendAsync(instances.B, HttpMethod.Post, $"topics/{topic}", $$"""{"b{{i}}":{{i}},"last":"b{{i}}"}""", Patch)).Dispose()),
        }).ToArray();
        await Task.WhenAll(sending).WaitAsync(WireClient.Bound);
        var (_, _, document) = await GetStateAsync(instances.B, topic);
        var messages = (await instances.A.PollAsync($"topics={topic}:1&timeout=0")).Messages;

        Assert.Equal(Enumerable.Range(1, 2 * PerInstance).Select(i => (long)i), messages.Select(m => m.MessageId));
        Assert.Equal(2 * PerInstance, messages.Select(m => m.Text).Distinct().Count());
        // The document is what the patches make applied in their ids' order: "last" names the one with the highest id.
        var expected = MergePatch.EmptyDocument.ToArray();
        foreach (var message in messages)
        {
            expected = MergePatch.Apply(expected, message.Body);
        }
        Assert.Equal(System.Text.Encoding.UTF8.GetString(expected), document);
        Assert.Equal(JsonDocument.Parse(messages[^1].Text).RootElement.GetProperty("last").GetString(),
            JsonDocument.Parse(document).RootElement.GetProperty("last").GetString());
    }

    /// <summary>Two in-process servers on the run's shared redis-server, under a key prefix of their own.</summary>
    private sealed class Instances(LaharsubTestServer a, LaharsubTestServer b) : IAsyncDisposable
    {
        public HttpClient A { get; } = a.CreateClient();

        public HttpClient B { get; } = b.CreateClient();

        public static async Task<Instances> StartAsync()
        {
            var redis = await SharedRedis.GetAsync();
            var prefix = SharedRedis.UniquePrefix();
            void OnRedis(IServiceCollection services) => services.AddLaharsub().AddRedis(o => { o.Configuration = redis.Configuration; o.KeyPrefix = prefix; });
            return new Instances(await LaharsubTestServer.StartAsync(services: OnRedis), await LaharsubTestServer.StartAsync(services: OnRedis));
        }

        public async ValueTask DisposeAsync()
        {
            A.Dispose();
            B.Dispose();
            await a.DisposeAsync();
            await b.DisposeAsync();
        }
    }
}

using System.Net;
using Laharsub.Server.Tests.Support;
using Laharsub.Testing;

namespace Laharsub.Server.Tests.ScaleOut;

/// <summary>
/// Three standalone server processes on one Redis, as operators run them behind a load balancer with no
/// sticky sessions: any instance answers any request.
/// </summary>
public sealed class MultiInstanceTests(MultiInstanceTests.Cluster cluster) : IClassFixture<MultiInstanceTests.Cluster>
{
    private readonly List<HttpClient> _clients = cluster.Clients;

    /// <summary>The three processes, started once for the class: each test uses topics of its own.</summary>
    public sealed class Cluster : IAsyncLifetime
    {
        private readonly List<HostProcess> _hosts = [];

        public List<HttpClient> Clients { get; } = [];

        public async Task InitializeAsync()
        {
            var redis = await SharedRedis.GetAsync();
            var prefix = SharedRedis.UniquePrefix();
            var starting = Enumerable.Range(0, 3).Select(_ => HostProcess.StartAsync(
                $"Laharsub:Redis:Configuration={redis.Configuration}", $"Laharsub:Redis:KeyPrefix={prefix}",
                "Laharsub:Demo:Enabled=false", "Logging:LogLevel:Default=Warning"));
            _hosts.AddRange(await Task.WhenAll(starting).WaitAsync(TimeSpan.FromSeconds(90)));
            Clients.AddRange(_hosts.Select(h => new HttpClient { BaseAddress = h.ApiAddress, Timeout = TimeSpan.FromSeconds(30) }));
        }

        public async Task DisposeAsync()
        {
            Clients.ForEach(c => c.Dispose());
            await Task.WhenAll(_hosts.Select(h => h.DisposeAsync().AsTask()));
        }
    }

    [Fact]
    public async Task APublishOnOneInstanceIsDeliveredToPollsWaitingOnTheOthers()
    {
        var topic = await _clients[0].CreateTopicAsync();
        var polls = new[] { _clients[1], _clients[2] }.Select(c => c.PollAsync($"topics={topic}:1&timeout=30")).ToArray();
        await Eventually.HoldsAsync(async () => (await _clients[1].GetTopicAsync(topic)).GetProperty("waitingPolls").GetInt32() == 1
            && (await _clients[2].GetTopicAsync(topic)).GetProperty("waitingPolls").GetInt32() == 1, WireClient.Bound, "both polls wait");

        await _clients[0].PublishTextAsync(topic, "across instances");

        foreach (var poll in polls)
        {
            var answer = await poll.WaitAsync(WireClient.Bound);
            Assert.Equal("across instances", Assert.Single(answer.Messages).Text);
        }
    }

    [Fact]
    public async Task ADeleteOnOneInstanceWakesPollsOnTheOthers()
    {
        var topic = await _clients[2].CreateTopicAsync();
        var poll = _clients[1].PollAsync($"topics={topic}:1&timeout=30");
        await Eventually.HoldsAsync(async () => (await _clients[1].GetTopicAsync(topic)).GetProperty("waitingPolls").GetInt32() == 1,
            WireClient.Bound, "the poll waits");

        using var deleted = await _clients[0].DeleteAsync($"topics/{topic}").WaitAsync(WireClient.Bound);

        Assert.Equal(HttpStatusCode.NoContent, deleted.StatusCode);
        var notice = Assert.Single((await poll.WaitAsync(WireClient.Bound)).Notices);
        Assert.Equal(("topicDeleted", topic), (notice.Type, notice.TopicId));
    }

    [Fact]
    public async Task ACursorFromOneInstanceResumesExactlyOnAnother()
    {
        var topic = await _clients[0].CreateTopicAsync();
        for (var i = 1; i <= 5; i++)
        {
            await _clients[i % 3].PublishTextAsync(topic, $"m{i}");
        }

        var first = await _clients[0].PollAsync($"topics={topic}:1");
        var epoch = first.Notices.Count == 0 ? (await _clients[0].GetTopicAsync(topic)).GetProperty("epoch").GetString() : null;
        var second = await _clients[1].PollAsync($"topics={topic}:4~{epoch}");
        var third = await _clients[2].PollAsync($"topics={topic}:6~{epoch}&timeout=0");

        Assert.Equal(["m1", "m2", "m3", "m4", "m5"], first.Messages.Select(m => m.Text));
        Assert.Equal(["m4", "m5"], second.Messages.Select(m => m.Text));
        Assert.Empty(second.Notices);
        Assert.Equal(HttpStatusCode.NoContent, third.Status);
    }

    [Fact]
    public async Task TopicIdsAreUniqueAcrossInstances()
    {
        var created = await Task.WhenAll(Enumerable.Range(0, 30).Select(i => _clients[i % 3].CreateTopicAsync()));

        Assert.Equal(30, created.Distinct().Count());
    }
}

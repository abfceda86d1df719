using System.Net.Sockets;
using System.Net;
using System.Text.Json;
using Laharsub.Server.Limits;
using Laharsub.Server.Tests.Support;
using Laharsub.Testing;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;

namespace Laharsub.Server.Tests;

/// <summary>The per-client caps of Laharsub:Limits: connections and waiting polls per client address.</summary>
public sealed class ClientLimitTests
{
    [Fact]
    public async Task AClientOverItsConnectionCapGets429WithRetryAfterAndAProblemWhileOthersAreServed()
    {
        await using var server = await LaharsubTestServer.StartAsync(settings: new Dictionary<string, string?>
        {
            ["Laharsub:Limits:MaxConnectionsPerClient"] = "3",
        });
        var limit = server.Services.GetRequiredService<ClientConnectionLimit>();
        using var attacker = Loopback.From(Loopback.Attacker, server.ApiAddress);
        using var neighbour = Loopback.From(Loopback.Neighbour, server.ApiAddress);

        using (await Loopback.OpenIdleAsync(Loopback.Attacker, server.BaseAddress.Port, 3))
        {
            await Eventually.HoldsAsync(() => Task.FromResult(limit.ConnectionsOf(Loopback.Attacker) == 3), WireClient.Bound,
                "the server counts the client's three idle connections");

            using var refused = await attacker.PostAsync("topics", null).WaitAsync(WireClient.Bound);

            Assert.Equal(HttpStatusCode.TooManyRequests, refused.StatusCode);
            Assert.Equal(TimeSpan.FromSeconds(5), refused.Headers.RetryAfter?.Delta);
            Assert.True(refused.Headers.ConnectionClose, "the refused connection is closed, giving its slot back");
            Assert.Equal("application/problem+json", refused.Content.Headers.ContentType?.MediaType);
            using var problem = JsonDocument.Parse(await refused.Content.ReadAsStringAsync());
            Assert.Equal("Laharsub:Limits:MaxConnectionsPerClient", problem.RootElement.GetProperty("setting").GetString());
            Assert.Equal(3, problem.RootElement.GetProperty("limit").GetInt32());
            Assert.Contains("Laharsub:Limits:MaxConnectionsPerClient", problem.RootElement.GetProperty("detail").GetString());

            // Nothing was created by the refused request, and another address is not affected.
            Assert.Equal(1, await neighbour.CreateTopicAsync());
        }

        await Eventually.HoldsAsync(() => Task.FromResult(limit.ConnectionsOf(Loopback.Attacker) == 0), WireClient.Bound,
            "the server notices that the client let go");
        Assert.Equal(2, await attacker.CreateTopicAsync());
    }

    [Fact]
    public async Task AnIdleConnectionOverTheCapIsClosedUnansweredAfterAShortGrace()
    {
        await using var server = await LaharsubTestServer.StartAsync(settings: new Dictionary<string, string?>
        {
            ["Laharsub:Limits:MaxConnectionsPerClient"] = "1",
        });
        var limit = server.Services.GetRequiredService<ClientConnectionLimit>();
        using var held = await Loopback.OpenIdleAsync(Loopback.Attacker, server.BaseAddress.Port, 1);
        await Eventually.HoldsAsync(() => Task.FromResult(limit.ConnectionsOf(Loopback.Attacker) == 1), WireClient.Bound,
            "the server counts the client's idle connection");

        using var idle = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        idle.Bind(new IPEndPoint(Loopback.Attacker, 0));
        await idle.ConnectAsync(new IPEndPoint(IPAddress.Loopback, server.BaseAddress.Port)).WaitAsync(WireClient.Bound);
        var buffer = new byte[1];
        int read;
        try
        {
            read = await idle.ReceiveAsync(buffer, SocketFlags.None).WaitAsync(WireClient.Bound);
        }
        catch (SocketException)
        {
            read = 0;
        }

        Assert.Equal(0, read);
        Assert.Equal(1, limit.ConnectionsOf(Loopback.Attacker));
    }

    [Fact]
    public async Task AClientOverItsWaitingPollCapGets429WithRetryAfterAndAProblemWhileOthersPoll()
    {
        await using var server = await LaharsubTestServer.StartAsync(settings: new Dictionary<string, string?>
        {
            ["Laharsub:Limits:MaxWaitingPollsPerClient"] = "2",
        });
        using var attacker = Loopback.From(Loopback.Attacker, server.ApiAddress);
        using var neighbour = Loopback.From(Loopback.Neighbour, server.ApiAddress);
        var topic = await attacker.CreateTopicAsync();
        var waiting = new[] { attacker.PollAsync($"topics={topic}&timeout=60"), attacker.PollAsync($"topics={topic}&timeout=60") };
        await Eventually.HoldsAsync(async () => (await attacker.GetTopicAsync(topic)).GetProperty("waitingPolls").GetInt32() == 2, WireClient.Bound,
            "both polls wait");

        var refused = await attacker.PollAsync($"topics={topic}&timeout=60");

        Assert.Equal(HttpStatusCode.TooManyRequests, refused.Status);
        Assert.Equal(TimeSpan.FromSeconds(5), refused.Response.Headers.RetryAfter?.Delta);
        Assert.Equal("application/problem+json", refused.Response.Content.Headers.ContentType?.MediaType);
        using (var problem = JsonDocument.Parse(await refused.Response.Content.ReadAsStringAsync()))
        {
            Assert.Equal("Laharsub:Limits:MaxWaitingPollsPerClient", problem.RootElement.GetProperty("setting").GetString());
            Assert.Equal(2, problem.RootElement.GetProperty("limit").GetInt32());
            Assert.Contains("one poll", problem.RootElement.GetProperty("detail").GetString(), StringComparison.OrdinalIgnoreCase);
        }
        Assert.Equal(HttpStatusCode.NoContent, (await neighbour.PollAsync($"topics={topic}&timeout=0")).Status);

        await attacker.PublishTextAsync(topic, "wakes both");
        foreach (var poll in await Task.WhenAll(waiting).WaitAsync(WireClient.Bound))
        {
            Assert.Equal("wakes both", Assert.Single(poll.Messages).Text);
        }
        // Their slots are given back as they end.
        Assert.Equal(HttpStatusCode.NoContent, (await attacker.PollAsync($"topics={topic}:2&timeout=0")).Status);
    }

    [Theory]
    [InlineData(null, 50)]
    [InlineData("7", 7)]
    [InlineData("0", 0)]
    public async Task TheConnectionCapIsHalfOfAllConnectionsUnlessSet(string? perClient, int expected)
    {
        await using var server = await LaharsubTestServer.StartAsync(settings: new Dictionary<string, string?>
        {
            ["Kestrel:Limits:MaxConcurrentConnections"] = "100",
            ["Laharsub:Limits:MaxConnectionsPerClient"] = perClient,
        });

        Assert.Equal(expected, server.Services.GetRequiredService<ClientConnectionLimit>().Limit);
    }

    [Theory]
    [InlineData("Laharsub:Limits:MaxConnectionsPerClient")]
    [InlineData("Laharsub:Limits:MaxWaitingPollsPerClient")]
    public async Task ANegativeCapStopsTheServerAtStartNamingIt(string setting)
    {
        var failure = await Assert.ThrowsAsync<OptionsValidationException>(() => LaharsubTestServer.StartAsync(
            settings: new Dictionary<string, string?> { [setting] = "-1" }));

        Assert.Contains(setting, failure.Message);
    }

    [Theory]
    [InlineData("192.0.2.7", "192.0.2.7")]
    [InlineData("::ffff:192.0.2.7", "192.0.2.7")]
    [InlineData("2001:db8:1:2:aaaa:bbbb:cccc:dddd", "2001:db8:1:2::")]
    [InlineData("2001:db8:1:2::1", "2001:db8:1:2::")]
    public void ClientsAreCountedByIPv4AddressOrIPv6Network(string address, string key)
    {
        Assert.Equal(IPAddress.Parse(key), ClientAddress.KeyOf(IPAddress.Parse(address)));
    }
}

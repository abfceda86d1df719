using System.Net.Sockets;
using System.Net;
using System.Text.RegularExpressions;
using Laharsub.Server.Limits;
using Laharsub.Server.Tests.Support;
using Laharsub.Testing;

namespace Laharsub.Server.Tests;

/// <summary>
/// The standalone server as operators run it (the built host, its own process) under a low open-file
/// limit, attacked by one client that opens more connections than the process has file descriptors.
/// Before the connection limit was derived from the open-file limit, the process aborted with
/// "Out of memory." within seconds of this (docs/architecture.md, "Open files and connections").
/// </summary>
public sealed partial class ConnectionExhaustionTests
{
    /// <summary>A common default soft limit on Linux.</summary>
    private const int OpenFileLimit = 1024;

    /// <summary>More connections than the server has file descriptors.</summary>
    private const int Flood = 1200;

    [Fact]
    public async Task OneClientHoldingMoreConnectionsThanTheServerHasFilesNeitherKillsItNorStopsItAccepting()
    {
        // No per-client cap: the one client may take every connection there is, as in the original attack.
        await using var server = await HostProcess.StartAsync(OpenFileLimit, "Laharsub:Limits:MaxConnectionsPerClient=0");
        using var neighbour = Loopback.From(Loopback.Neighbour, server.BaseAddress, TimeSpan.FromSeconds(2));

        using (var held = await FloodAsync(server, Flood))
        {
            // Requests while the server is full are the load under which it used to abort: they are
            // refused now (the one client holds every connection), and must not hurt the process.
            for (var i = 0; i < 10; i++)
            {
                await HealthAsync(neighbour);
                await Task.Delay(200);
            }
            Assert.False(server.HasExited, $"The server died while one client held {held.Count} connections:{Environment.NewLine}{server.Output}");
        }

        await Eventually.HoldsAsync(async () => await HealthAsync(neighbour) == HttpStatusCode.OK, TimeSpan.FromSeconds(30),
            "the server accepts and answers /health again after the client let go");
        Assert.False(server.HasExited);
    }

    [Fact]
    public async Task WithTheDefaultCapsOneClientHoldingMoreConnectionsThanFilesLocksNobodyElseOut()
    {
        await using var server = await HostProcess.StartAsync(OpenFileLimit);
        using var neighbour = Loopback.From(Loopback.Neighbour, server.BaseAddress, TimeSpan.FromSeconds(2));
        using var attacker = Loopback.From(Loopback.Attacker, server.BaseAddress, TimeSpan.FromSeconds(2));

        using (await FloodAsync(server, Flood))
        {
            // The attacker's connections over its cap are closed after a grace of two seconds.
            await Eventually.HoldsAsync(async () => await HealthAsync(neighbour) == HttpStatusCode.OK, TimeSpan.FromSeconds(20),
                "another client is served while one client holds more connections than the server has files");
            await Eventually.HoldsAsync(async () => await HealthAsync(attacker) == HttpStatusCode.TooManyRequests, TimeSpan.FromSeconds(20),
                "the client over its cap is answered 429");
        }

        await Eventually.HoldsAsync(async () => await HealthAsync(attacker) == HttpStatusCode.OK, TimeSpan.FromSeconds(20),
            "the client is served again once it let go of its connections");
        Assert.False(server.HasExited);
    }

    [Fact]
    public async Task TheConnectionLimitIsDerivedFromTheOpenFileLimitAndLoggedAtStart()
    {
        await using var server = await HostProcess.StartAsync(OpenFileLimit);

        var line = await server.WaitForOutputAsync(DerivedLine(), TimeSpan.FromSeconds(10));

        var connections = int.Parse(line.Groups["connections"].Value);
        var openAtStart = int.Parse(line.Groups["open"].Value);
        Assert.Equal(OpenFileLimit.ToString(), line.Groups["limit"].Value);
        Assert.InRange(openAtStart, 10, OpenFileLimit / 2);
        // A twentieth of the limit is kept for the server itself, at least 384 descriptors.
        Assert.Equal(Math.Max(384, OpenFileLimit / 20), int.Parse(line.Groups["reserved"].Value));
        Assert.Equal(OpenFileLimit - openAtStart - Math.Max(384, OpenFileLimit / 20), connections);
        // One client address may take half of them: thousands of users behind a carrier's NAT or a proxy.
        Assert.Equal(connections / 2, int.Parse(line.Groups["perClient"].Value));
    }

    [Fact]
    public async Task AnOperatorsMaxConcurrentConnectionsWins()
    {
        await using var server = await HostProcess.StartAsync(OpenFileLimit,
            "Kestrel:Limits:MaxConcurrentConnections=20", "Laharsub:Limits:MaxConnectionsPerClient=0");
        using var neighbour = Loopback.From(Loopback.Neighbour, server.BaseAddress, TimeSpan.FromSeconds(2));
        await server.WaitForOutputAsync(PerClientLine(), TimeSpan.FromSeconds(10));
        Assert.DoesNotMatch(DerivedLine(), server.Output);

        using (var held = await FloodAsync(server, 20))
        {
            HttpStatusCode? last = null;
            try
            {
                // A probe counted before some of the 20 takes a place and gets one of them refused: the
                // attacker then opens it again, until it holds all 20 and the probe is the one refused.
                await Eventually.HoldsAsync(async () =>
                {
                    await held.TopUpAsync(Loopback.Attacker, server.BaseAddress.Port);
                    return (last = await HealthAsync(neighbour)) is null;
                }, TimeSpan.FromSeconds(20), "a 21st connection is closed unanswered");
            }
            catch (TimeoutException e)
            {
                throw new Xunit.Sdk.XunitException($"{e.Message} (last answer {last}); the server wrote:{Environment.NewLine}{server.Output}");
            }
        }
        await Eventually.HoldsAsync(async () => await HealthAsync(neighbour) == HttpStatusCode.OK, TimeSpan.FromSeconds(20),
            "connections are accepted again below the limit");

        // The refusals are said once (at most once a minute), not in a line per connection as Kestrel says them.
        var refusals = await server.WaitForOutputAsync(RefusalLine(), TimeSpan.FromSeconds(10));
        Assert.InRange(int.Parse(refusals.Groups["refused"].Value), 1, int.MaxValue);
        Assert.Single(RefusalLine().Matches(server.Output));
        Assert.DoesNotContain("rejected because the maximum number of concurrent connections", server.Output, StringComparison.Ordinal);
    }

    [Fact]
    public async Task AnOperatorsMaxConcurrentConnectionsAboveWhatTheOpenFileLimitAllowsIsWarnedAbout()
    {
        await using var server = await HostProcess.StartAsync(OpenFileLimit, "Kestrel:Limits:MaxConcurrentConnections=5000");

        var warning = await server.WaitForOutputAsync(
            new Regex(@"MaxConcurrentConnections is 5000, more than the \d+ connections the open-file limit \(ulimit -n\) of 1024 leaves room for"),
            TimeSpan.FromSeconds(10));

        Assert.True(warning.Success);
    }

    /// <summary>Opens idle connections from the attacking client; a failure says what the server was doing.</summary>
    private static async Task<Loopback.IdleConnections> FloodAsync(HostProcess server, int count)
    {
        try
        {
            return await Loopback.OpenIdleAsync(Loopback.Attacker, server.BaseAddress.Port, count);
        }
        catch (Exception e) when (e is SocketException or OperationCanceledException)
        {
            throw new Xunit.Sdk.XunitException($"Opening {count} connections failed ({e.Message}); the server {(server.HasExited ? "has exited" : "runs")}:{Environment.NewLine}{server.Output}");
        }
    }

    /// <summary>The status of GET /health, or null when the connection was closed or refused unanswered.</summary>
    private static async Task<HttpStatusCode?> HealthAsync(HttpClient client)
    {
        try
        {
            // A new connection for every check: a pooled one accepted before the flood filled the server
            // would answer every later check, and "a 21st connection is refused" would never be seen.
            using var request = new HttpRequestMessage(HttpMethod.Get, "health") { Headers = { ConnectionClose = true } };
            using var response = await client.SendAsync(request);
            return response.StatusCode;
        }
        catch (Exception e) when (e is HttpRequestException or TaskCanceledException)
        {
            return null;
        }
    }

    [GeneratedRegex(@"Kestrel:Limits:MaxConcurrentConnections is (?<connections>\d+): the open-file limit \(ulimit -n\) of (?<limit>\d+) minus (?<open>\d+) files open at start and (?<reserved>\d+) kept for the server itself; one client address may hold (?<perClient>\d+) of them")]
    private static partial Regex DerivedLine();

    [GeneratedRegex(@"Kestrel:Limits:MaxConcurrentConnections \(20\) refused (?<refused>\d+) connections since this was last logged")]
    private static partial Regex RefusalLine();

    [GeneratedRegex(@"Laharsub:Limits:MaxConnectionsPerClient is no limit \(of 20 connections in all\)")]
    private static partial Regex PerClientLine();
}

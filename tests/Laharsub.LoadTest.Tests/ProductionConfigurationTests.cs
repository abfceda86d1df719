using System.Net.WebSockets;
using System.Text;
using System.Text.Json;
using Laharsub.LoadTestClient;
using Laharsub.LoadTestClient.Load;
using Laharsub.LoadTestClient.Measurement;
using Laharsub.Testing;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.IdentityModel.JsonWebTokens;

namespace Laharsub.LoadTest.Tests;

/// <summary>
/// The load generator driving Laharsub as production runs it: Jwt mode with a token per client, a page's
/// Origin on every request, an Idempotency-Key on every publish (--jwt-key, --origin, --keyed-publishes).
/// </summary>
public sealed class ProductionConfigurationTests : IDisposable
{
    private const string Origin = "https://app.example.com";
    private const string WrongKey = "not-the-servers-key-0123456789abcdef";

    private readonly string _out = Directory.CreateTempSubdirectory("laharsub-loadtest-tests-").FullName;

    public void Dispose() => Directory.Delete(_out, recursive: true);

    private static readonly string[] Production =
        ["--jwt-key", TestTokens.Key, "--jwt-issuer", TestTokens.Issuer, "--jwt-audience", TestTokens.Audience, "--origin", Origin, "--keyed-publishes"];

    [Theory]
    [InlineData("--jwt-key short", "--jwt-key is 5 bytes; the server's HS256 key is at least 32, e.g. --jwt-key \"$(openssl rand -base64 32)\"")]
    [InlineData("--jwt-key", "Option --jwt-key needs a value, e.g. --jwt-key")]
    [InlineData("--jwt-issuer https://login.example.com", "--jwt-issuer shapes the tokens of a run in Jwt mode; add --jwt-key with the server's signing key")]
    [InlineData("--jwt-audience laharsub", "--jwt-audience shapes the tokens of a run in Jwt mode; add --jwt-key")]
    [InlineData("--origin https://app.example.com/chat", "--origin 'https://app.example.com/chat' is not an origin: write a page's scheme, host and port only")]
    [InlineData("--origin ftp://app.example.com", "--origin 'ftp://app.example.com' is not an origin")]
    [InlineData("--origin app.example.com", "--origin 'app.example.com' is not an origin")]
    [InlineData("--target nchan --keyed-publishes", "--keyed-publishes: production's configuration is Laharsub's; nchan checks no JWT of its own")]
    [InlineData("--compare laharsub,nchan --origin https://app.example.com --keyed-publishes", "--origin, --keyed-publishes: production's configuration is Laharsub's; nchan")]
    [InlineData("--target nchan --jwt-key 0123456789abcdef0123456789abcdef", "--jwt-key: production's configuration is Laharsub's; nchan checks no JWT of its own (nchan_authorize_request asks an application upstream")]
    [InlineData("--target floor --jwt-key 0123456789abcdef0123456789abcdef", "--jwt-key: production's configuration is Laharsub's; floor has no access control, CORS or idempotency keys, so run it with --target laharsub")]
    public async Task AProductionOptionIsRefusedWhereItCannotApply(string arguments, string message)
    {
        using var output = new StringWriter();
        using var error = new StringWriter();

        var exit = await LoadTestCommand.RunAsync(arguments.Split(' '), output, error, CancellationToken.None).WaitAsync(TimeSpan.FromSeconds(10));

        Assert.Equal(2, exit);
        Assert.Contains(message, error.ToString());
    }

    [Fact]
    public void TheOptionsSwitchTheStartedServerToMatchAndNameTheRun()
    {
        var options = LoadTestOptions.Parse(["--topics", "4", "--jwt-key", TestTokens.Key, "--origin", "HTTPS://App.Example.com:443/", "--keyed-publishes",
            "--server-setting", "Cors:AllowedOrigins:1=https://other.example.com"]);

        Assert.Equal(new JwtSigning(TestTokens.Key, "laharsub-loadtest", "laharsub"), options.Jwt);
        // As a browser sends it: lower case, no default port, no slash.
        Assert.Equal(("https://app.example.com", true), (options.Origin, options.KeyedPublishes));
        Assert.Equal(["custom-4t-jwt-origin-keyed"], options.Runs.Select(r => r.Name));
        var settings = RunExecutor.ServerSettings(options, options.Runs[0], openFileLimit: 20_000);
        string[] production =
        [
            "--Laharsub:Auth:Mode=Jwt", $"--Laharsub:Auth:Jwt:SigningKey={TestTokens.Key}", "--Laharsub:Auth:Jwt:Issuer=laharsub-loadtest",
            "--Laharsub:Auth:Jwt:Audience=laharsub", "--Laharsub:Cors:AllowedOrigins:0=https://app.example.com",
            // The user's own settings come after, so they may still override.
            "--Laharsub:Cors:AllowedOrigins:1=https://other.example.com",
        ];
        Assert.Equal(production, settings.Skip(settings.Count - production.Length));
        Assert.Equal(["custom-4t-origin"], LoadTestOptions.Parse(["--topics", "4", "--origin", Origin]).Runs.Select(r => r.Name));
        var open = LoadTestOptions.Parse(["--topics", "4"]);
        Assert.Equal((null, null, false), (open.Jwt, open.Origin, open.KeyedPublishes));
        Assert.DoesNotContain(RunExecutor.ServerSettings(open, open.Runs[0], openFileLimit: 20_000), s => s.Contains("Auth", StringComparison.Ordinal) || s.Contains("Cors", StringComparison.Ordinal));
    }

    [Fact]
    public void EachClientHasATokenOfItsOwnGrantingWhatItDoes()
    {
        var jwt = new JwtSigning(TestTokens.Key, TestTokens.Issuer, TestTokens.Audience);

        var publisher = new JsonWebToken(jwt.ClientToken(3, publishesTo: 7, subscribesTo: [7, 8], TimeSpan.FromSeconds(40)));
        var reader = new JsonWebToken(jwt.ClientToken(4, publishesTo: null, subscribesTo: [8], TimeSpan.FromSeconds(40)));

        Assert.Equal(("loadtest-3", TestTokens.Issuer, TestTokens.Audience), (publisher.Subject, publisher.Issuer, Assert.Single(publisher.Audiences)));
        Assert.Equal("HS256", publisher.Alg);
        Assert.Equal("""{"subscribe":["7","8"],"publish":["7"]}""", Claim(publisher));
        Assert.Equal(("loadtest-4", """{"subscribe":["8"]}"""), (reader.Subject, Claim(reader)));
        Assert.InRange(publisher.ValidTo - publisher.ValidFrom, TimeSpan.FromMinutes(60), TimeSpan.FromMinutes(62));
    }

    [Fact]
    public void APlanInProductionsConfigurationReachesTheWorkerProcessesWhole()
    {
        var plan = LoadRuns.Plan(new Uri("http://127.0.0.1:9/"), [7, 8]) with
        {
            Jwt = new JwtSigning(TestTokens.Key, TestTokens.Issuer, TestTokens.Audience),
            Origin = Origin,
            KeyedPublishes = true,
        };

        // What WorkerProcesses writes to a worker's plan file and the worker reads back (--processes).
        var read = JsonSerializer.Deserialize<LoadPlan>(JsonSerializer.Serialize(plan, LoadJson.Compact), LoadJson.Compact)!;

        Assert.Equal((plan.Jwt, Origin, true), (read.Jwt, read.Origin, read.KeyedPublishes));
    }

    [Fact]
    public void APollCarriesTheTokenAndOriginAndAStreamItsTokenInTheUrlAsABrowserDoes()
    {
        var plan = LoadRuns.Plan(new Uri("http://127.0.0.1:9/"), [7]) with
        {
            Jwt = new JwtSigning(TestTokens.Key, TestTokens.Issuer, TestTokens.Audience),
            Origin = Origin,
            Presence = true,
        };
        var protocol = new LaharsubProtocol(plan);
        var buffer = new byte[512];

        var poll = protocol.CreatePollWire([new DeliveryVerifier(7)], 3, "tok");
        Assert.True(poll.TryWriteHeaders(buffer, out var written));
        Assert.Equal($"Authorization: Bearer tok\r\nOrigin: {Origin}\r\n", Encoding.ASCII.GetString(buffer, 0, written));
        Assert.True(poll.TryWriteQuery(buffer, out written));
        // In Jwt mode the member is the token's subject: the server refuses client=.
        Assert.Equal("timeout=30&topics=7:1", Encoding.ASCII.GetString(buffer, 0, written));

        var stream = protocol.CreateEventStreamWire([new DeliveryVerifier(7)], 3, "tok");
        Assert.True(stream.TryWriteHeaders(buffer, out written));
        Assert.Equal($"Origin: {Origin}\r\n", Encoding.ASCII.GetString(buffer, 0, written));
        Assert.True(stream.TryWriteQuery(buffer, out written));
        Assert.Equal("topics=7:1&access_token=tok", Encoding.ASCII.GetString(buffer, 0, written));

        var socket = protocol.CreateWebSocketWire([new DeliveryVerifier(7)], 3, "tok");
        Assert.Equal("ws://127.0.0.1:9/ps/subscriptions?topics=7:1&access_token=tok", socket.Address(new Uri("http://127.0.0.1:9/ps/subscriptions")).ToString());
        using var client = new ClientWebSocket();
        socket.SetRequestHeaders(client.Options);

        var open = new LaharsubProtocol(plan with { Jwt = null, Origin = null });
        Assert.True(open.CreatePollWire([new DeliveryVerifier(7)], 3).TryWriteHeaders(buffer, out written));
        Assert.Equal(0, written);
        Assert.True(open.CreatePollWire([new DeliveryVerifier(7)], 3).TryWriteQuery(buffer, out written));
        Assert.Equal("timeout=30&topics=7:1&client=lt3", Encoding.ASCII.GetString(buffer, 0, written));
    }

    [Fact]
    public void AKeyedPublishFrameCarriesAFreshIdempotencyKey()
    {
        var plan = LoadRuns.Plan(new Uri("http://127.0.0.1:9/"), [7]) with { KeyedPublishes = true };
        var wire = new LaharsubProtocol(plan).CreateWebSocketWire([new DeliveryVerifier(7)]);
        var frame = new byte[256];

        string Key(long sequence)
        {
            Assert.True(wire.TryWritePublish(frame, sequence, 7, "0123456789"u8, out var written));
            var json = JsonDocument.Parse(frame.AsMemory(0, written)).RootElement;
            Assert.Equal(("publish", sequence.ToString(System.Globalization.CultureInfo.InvariantCulture), 7L), (json.GetProperty("type").GetString(), json.GetProperty("id").GetString(), json.GetProperty("topicId").GetInt64()));
            return json.GetProperty("idempotencyKey").GetString()!;
        }

        var first = Key(1);
        Assert.True(Guid.TryParseExact(first, "D", out _), first);
        Assert.NotEqual(first, Key(2));
        // Too small a frame buffer is a retry with a larger one, never a frame cut short.
        Assert.False(wire.TryWritePublish(new byte[80], 3, 7, "0123456789"u8, out _));
    }

    [Theory]
    [InlineData("longpoll")]
    [InlineData("sse")]
    [InlineData("websocket")]
    public async Task AShortRunInJwtModeWithOriginAndKeyedPublishesDeliversEveryMessageWithNothingRefused(string transport)
    {
        var requests = new RequestLog();
        await using var server = await LaharsubTestServer.StartAsync(services: s => s.AddSingleton<IStartupFilter>(requests),
            settings: TestTokens.JwtSettings(null, ("Laharsub:Cors:AllowedOrigins:0", Origin))).WaitAsync(LoadRuns.Timeout);
        using var output = new StringWriter();

        var exit = await LoadTestCommand.RunAsync(
            ["--url", server.BaseAddress.ToString(), "--transport", transport, "--topics", "4", "--clients-per-topic", "2", "--interval", "0.2",
             "--warmup", "1", "--duration", "2", "--max-schedule-lag", "1000", "--out", _out, .. Production],
            output, output, CancellationToken.None).WaitAsync(LoadRuns.Timeout);

        Assert.True(exit == 0, $"exit code {exit}:\n{output}");
        var name = "custom-4t" + (transport == "longpoll" ? "" : "-" + transport) + "-jwt-origin-keyed";
        var run = JsonDocument.Parse(File.ReadAllText(Path.Combine(_out, name + ".json"))).RootElement;
        Assert.Equal((true, Origin, true), (run.GetProperty("jwt").GetBoolean(), run.GetProperty("origin").GetString(), run.GetProperty("keyedPublishes").GetBoolean()));
        // 8 clients publishing 5 times a second for 2 s, each message to 2 subscribers; no 401 or 403 (no HTTP error at all).
        LoadRuns.AssertEveryMessageDeliveredOnce(run, 8 * 5 * 2 * 2);
        Assert.Contains($"production configuration: Jwt mode (a token per client), Origin {Origin}, Idempotency-Key on every publish", output.ToString());
        Assert.Contains(",true,https://app.example.com,true", File.ReadAllText(Path.Combine(_out, "summary.csv")));

        // What the server saw: every request of the run carried the Origin, and each its token where a browser puts it.
        var totals = run.GetProperty("totals");
        Assert.Equal(0, requests.WithoutOrigin);
        switch (transport)
        {
            case "longpoll":
                Assert.True(requests.Polls >= totals.GetProperty("polls").GetInt64(), $"{requests.Polls} polls with a bearer token for {totals.GetProperty("polls")} answered");
                break;
            case "sse":
                Assert.Equal(totals.GetProperty("streamsOpened").GetInt64(), requests.Streams);
                break;
            default:
                Assert.Equal(totals.GetProperty("streamsOpened").GetInt64(), requests.Upgrades);
                break;
        }
        // REST publishes each with a bearer token and a quoted key (on a WebSocket they are frames: the frame test covers their key).
        Assert.Equal(transport == "websocket" ? 0 : run.GetProperty("publishRoundTrip").GetProperty("count").GetInt64(), requests.KeyedPublishes);
        Assert.Equal(0, requests.Other);
    }

    [Fact]
    public async Task InJwtModePresenceMembersAreTheTokensSubjects()
    {
        await using var server = await LaharsubTestServer.StartAsync(settings: TestTokens.JwtSettings()).WaitAsync(LoadRuns.Timeout);
        using var output = new StringWriter();

        // client= would be refused (400 naming client): the member is the token's subject.
        var exit = await LoadTestCommand.RunAsync(
            ["--url", server.BaseAddress.ToString(), "--presence", "--transport", "sse", "--topics", "2", "--clients-per-topic", "2", "--interval", "0.2",
             "--warmup", "1", "--duration", "2", "--max-schedule-lag", "1000", "--out", _out,
             "--jwt-key", TestTokens.Key, "--jwt-issuer", TestTokens.Issuer, "--jwt-audience", TestTokens.Audience],
            output, output, CancellationToken.None).WaitAsync(LoadRuns.Timeout);

        Assert.True(exit == 0, $"exit code {exit}:\n{output}");
        var run = JsonDocument.Parse(File.ReadAllText(Path.Combine(_out, "custom-2t-sse-jwt.json"))).RootElement;
        // 4 clients publishing 5 times a second for 2 s, each message to 2 subscribers, every client a member.
        LoadRuns.AssertEveryMessageDeliveredOnce(run, 4 * 5 * 2 * 2);
        Assert.True(run.GetProperty("presence").GetBoolean());
        Assert.Equal(4L, run.GetProperty("totals").GetProperty("streamsOpened").GetInt64());
    }

    [Fact]
    public async Task OneFlagSwitchesAServerTheToolStartsToJwtModeAllowingTheOrigin()
    {
        using var output = new StringWriter();

        // No --url: the tool starts the server's Release build (--no-build: building the solution makes it).
        var exit = await LoadTestCommand.RunAsync(
            ["--no-build", "--transport", "sse", "--topics", "3", "--clients-per-topic", "2", "--interval", "0.2", "--warmup", "1", "--duration", "2",
             "--max-schedule-lag", "1000", "--out", _out, "--jwt-key", TestTokens.Key, "--origin", Origin, "--keyed-publishes"],
            output, output, CancellationToken.None).WaitAsync(LoadRuns.Timeout);

        Assert.True(exit == 0, $"exit code {exit}:\n{output}");
        var run = JsonDocument.Parse(File.ReadAllText(Path.Combine(_out, "custom-3t-sse-jwt-origin-keyed.json"))).RootElement;
        var serverCommand = run.GetProperty("serverCommand").GetString();
        Assert.Contains($"--Laharsub:Auth:Mode=Jwt --Laharsub:Auth:Jwt:SigningKey={TestTokens.Key} --Laharsub:Auth:Jwt:Issuer=laharsub-loadtest "
            + $"--Laharsub:Auth:Jwt:Audience=laharsub --Laharsub:Cors:AllowedOrigins:0={Origin}", serverCommand);
        // 6 clients publishing 5 times a second for 2 s, each message to 2 subscribers; nothing refused.
        LoadRuns.AssertEveryMessageDeliveredOnce(run, 6 * 5 * 2 * 2);
    }

    [Fact]
    public async Task AWrongKeyFailsTheRunNamingTheRefusalInsteadOfPassing()
    {
        await using var server = await LaharsubTestServer.StartAsync(settings: TestTokens.JwtSettings()).WaitAsync(LoadRuns.Timeout);
        using var output = new StringWriter();

        var exit = await LoadTestCommand.RunAsync(
            ["--url", server.BaseAddress.ToString(), "--topics", "2", "--interval", "0.2", "--warmup", "0.5", "--duration", "1", "--max-schedule-lag", "1000",
             "--jwt-key", WrongKey, "--jwt-issuer", TestTokens.Issuer, "--jwt-audience", TestTokens.Audience],
            output, output, CancellationToken.None).WaitAsync(LoadRuns.Timeout);

        Assert.Equal(1, exit);
        // The topics are created in parallel: whichever is refused first is named.
        Assert.Matches(@"Creating topic \d of 2 failed \(in Jwt mode, --jwt-key, --jwt-issuer and --jwt-audience must be the server's Laharsub:Auth:Jwt:SigningKey, Issuer and Audience\): 401", output.ToString());
    }

    [Fact]
    public async Task ClientsWhoseTokensTheServerRefusesEndTheRunAtOnceNamingTheStatus()
    {
        await using var server = await LaharsubTestServer.StartAsync(settings: TestTokens.JwtSettings()).WaitAsync(LoadRuns.Timeout);
        var topics = new long[2];
        using (var http = server.CreateClient())
        {
            for (var i = 0; i < topics.Length; i++)
            {
                using var created = await http.SendAsync(TestTokens.Request(HttpMethod.Post, new Uri(server.ApiAddress, "topics").ToString(), TestTokens.Grant("""{"create":true}"""))).WaitAsync(LoadRuns.Timeout);
                topics[i] = JsonDocument.Parse(await created.EnsureSuccessStatusCode().Content.ReadAsStringAsync()).RootElement.GetProperty("topicId").GetInt64();
            }
        }
        var plan = LoadRuns.Plan(server.BaseAddress, topics) with { Jwt = new JwtSigning(WrongKey, TestTokens.Issuer, TestTokens.Audience) };

        // Refused clients retry for ever; the run ends at the first refusals rather than after the 180 s connect timeout.
        var refusal = await Assert.ThrowsAsync<InvalidOperationException>(() => LoadRuns.RunAsync(plan));

        Assert.Matches(@"The server refused the clients' subscriptions \(401: \d+\): --jwt-key, --jwt-issuer and --jwt-audience must be", refusal.Message);
    }

    [Fact]
    public async Task ARunWhosePublishesAreRefusedIsInvalidNamingTheRefusals()
    {
        // Anonymous callers may create topics and subscribe but not publish: the run measures nothing it asked for.
        await using var server = await LaharsubTestServer.StartAsync(settings: TestTokens.JwtSettings(anonymous: "create,subscribe,delete")).WaitAsync(LoadRuns.Timeout);
        using var output = new StringWriter();

        var exit = await LoadTestCommand.RunAsync(
            ["--url", server.BaseAddress.ToString(), "--topics", "2", "--interval", "0.2", "--warmup", "0.5", "--duration", "1", "--max-schedule-lag", "1000", "--out", _out],
            output, output, CancellationToken.None).WaitAsync(LoadRuns.Timeout);

        Assert.Equal(1, exit);
        Assert.Matches(@"INVALID: the server refused requests \(401: \d+\): it wants tokens \(--jwt-key\)", output.ToString());
        Assert.False(JsonDocument.Parse(File.ReadAllText(Path.Combine(_out, "custom-2t.json"))).RootElement.GetProperty("valid").GetBoolean());
    }

    private static string Claim(JsonWebToken token) =>
        JsonSerializer.Serialize(JsonDocument.Parse(Encoding.UTF8.GetString(Base64UrlDecode(token.EncodedPayload))).RootElement.GetProperty("laharsub"));

    private static byte[] Base64UrlDecode(string text) => System.Buffers.Text.Base64Url.DecodeFromChars(text);

    /// <summary>
    /// Counts what the server's pipeline saw of the run's requests (with an Origin the fast path leaves every one
    /// of them to it): the long polls with a bearer token, streams and upgrades with <c>access_token</c>, the keyed
    /// publishes, and any request of the API without the Origin or otherwise unexpected.
    /// </summary>
    private sealed class RequestLog : IStartupFilter
    {
        private int _polls;
        private int _streams;
        private int _upgrades;
        private int _keyedPublishes;
        private int _withoutOrigin;
        private int _other;

        public int Polls => Volatile.Read(ref _polls);
        public int Streams => Volatile.Read(ref _streams);
        public int Upgrades => Volatile.Read(ref _upgrades);
        public int KeyedPublishes => Volatile.Read(ref _keyedPublishes);
        public int WithoutOrigin => Volatile.Read(ref _withoutOrigin);
        public int Other => Volatile.Read(ref _other);

        public Action<IApplicationBuilder> Configure(Action<IApplicationBuilder> next) => app =>
        {
            app.Use((context, then) =>
            {
                Record(context.Request);
                return then(context);
            });
            next(app);
        };

        private void Record(HttpRequest request)
        {
            if (!request.Path.StartsWithSegments("/ps", StringComparison.Ordinal))
            {
                return;
            }
            if (request.Headers.Origin != Origin)
            {
                Interlocked.Increment(ref _withoutOrigin);
                return;
            }
            var bearer = request.Headers.Authorization.ToString().StartsWith("Bearer ey", StringComparison.Ordinal);
            var queryToken = request.Query["access_token"].ToString().StartsWith("ey", StringComparison.Ordinal);
            var isPublish = HttpMethods.IsPost(request.Method) && request.Path.Value!.StartsWith("/ps/topics/", StringComparison.Ordinal);
            if (request.Path == "/ps/subscriptions" && request.Headers.Upgrade == "websocket" && queryToken && !bearer)
            {
                Interlocked.Increment(ref _upgrades);
            }
            else if (request.Path == "/ps/subscriptions" && request.Headers.Accept == "text/event-stream" && queryToken && !bearer)
            {
                Interlocked.Increment(ref _streams);
            }
            else if (request.Path == "/ps/subscriptions" && bearer && !queryToken)
            {
                Interlocked.Increment(ref _polls);
            }
            else if (isPublish && bearer && request.Headers["Idempotency-Key"].ToString() is { Length: 38 } key && key[0] == '"' && key[^1] == '"'
                && Guid.TryParseExact(key[1..^1], "D", out _))
            {
                Interlocked.Increment(ref _keyedPublishes);
            }
            else if (!(request.Path == "/ps/topics" && bearer) && !(HttpMethods.IsDelete(request.Method) && bearer))
            {
                // Anything else but the setup's topic creations and deletions, which carry its own token.
                Interlocked.Increment(ref _other);
            }
        }
    }
}

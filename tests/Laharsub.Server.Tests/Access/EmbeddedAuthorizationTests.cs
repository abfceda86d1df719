using System.Net;
using System.Net.Http.Headers;
using System.Net.WebSockets;
using Laharsub.Server.Storage;
using Laharsub.Server.Tests.Support;
using Microsoft.AspNetCore.Authorization;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.DependencyInjection;

namespace Laharsub.Server.Tests.Access;

/// <summary>
/// An application that embeds Laharsub behind its own authentication (cookies, as the README's embedding
/// section would have it): what it adds to the group <c>MapLaharsub</c> returns, or its fallback policy, holds
/// for every request with the fast path on as with it off, because the fast path steps aside and says so.
/// </summary>
[Collection(nameof(ProcessWideListeners))]
public sealed class EmbeddedAuthorizationTests
{
    private static readonly TimeSpan Bound = WireClient.Bound;

    public enum Guard
    {
        RequireAuthorization,
        FallbackPolicy,
        EndpointFilter,
    }

    public static TheoryData<Guard, bool> Guards()
    {
        var data = new TheoryData<Guard, bool>();
        foreach (var guard in Enum.GetValues<Guard>())
        {
            data.Add(guard, true);
            data.Add(guard, false);
        }
        return data;
    }

    [Theory]
    [MemberData(nameof(Guards))]
    public async Task AnAnonymousCallerIsRefusedOnEveryTransportAndChangesNothing(Guard guard, bool fastPath)
    {
        var logs = new LogRecorder();
        await using var app = await StartAppAsync(guard, fastPath, logs);
        using var requests = new FastPathRequestCounter(app.Services);
        using var member = NewClient(app);
        using (var login = await member.PostAsync("/login/ann", null).WaitAsync(Bound))
        {
            Assert.Equal(HttpStatusCode.NoContent, login.StatusCode);
        }
        var topic = await CreateTopicAsync(member);
        using (var published = await member.PostAsync($"/ps/topics/{topic}", new StringContent("one")).WaitAsync(Bound))
        {
            Assert.Equal(HttpStatusCode.Created, published.StatusCode);
        }
        using var anonymous = NewClient(app);
        var refused = guard == Guard.EndpointFilter ? HttpStatusCode.Forbidden : HttpStatusCode.Unauthorized;

        using (var poll = await anonymous.GetAsync($"/ps/subscriptions?topics={topic}:1").WaitAsync(Bound))
        {
            Assert.Equal(refused, poll.StatusCode);
            Assert.DoesNotContain("\"one\"", await poll.Content.ReadAsStringAsync());
        }
        using (var poll = await anonymous.GetAsync($"/ps/subscriptions?subs%5B0%5D%5Btopicid%5D={topic}&subs%5B0%5D%5Bfrom%5D=1").WaitAsync(Bound))
        {
            Assert.Equal(refused, poll.StatusCode);
        }
        using (var request = new HttpRequestMessage(HttpMethod.Get, $"/ps/subscriptions?topics={topic}:1"))
        {
            request.Headers.Accept.Add(new MediaTypeWithQualityHeaderValue("text/event-stream"));
            using var stream = await anonymous.SendAsync(request, HttpCompletionOption.ResponseHeadersRead).WaitAsync(Bound);
            Assert.Equal(refused, stream.StatusCode);
        }
        using (var published = await anonymous.PostAsync($"/ps/topics/{topic}", new StringContent("two")).WaitAsync(Bound))
        {
            Assert.Equal(refused, published.StatusCode);
        }
        using (var published = await anonymous.PostAsync($"/ps/topics/publish?topics={topic}", new StringContent("three")).WaitAsync(Bound))
        {
            Assert.Equal(refused, published.StatusCode);
        }
        using (var socket = new ClientWebSocket())
        {
            socket.Options.AddSubProtocol("laharsub.v1");
            socket.Options.CollectHttpResponseDetails = true;
            var address = new UriBuilder(new Uri(BaseAddress(app), $"/ps/subscriptions?topics={topic}:1")) { Scheme = "ws" }.Uri;
            await Assert.ThrowsAsync<WebSocketException>(() => socket.ConnectAsync(address, CancellationToken.None).WaitAsync(Bound));
            Assert.Equal(refused, socket.HttpStatusCode);
        }

        var stored = await app.Services.GetRequiredService<ILaharsubStore>().GetTopicAsync(topic).AsTask().WaitAsync(Bound);
        Assert.Equal(1, stored?.LastMessageId);
        if (fastPath)
        {
            Assert.Contains(logs.Entries, entry => entry.Message.Contains("the fast path steps aside for /ps", StringComparison.Ordinal));
            // Every connection went to Kestrel unread, counted with why.
            Assert.True(requests.Count("handed_over", "host_conventions") >= 2);
            Assert.Equal(0, requests.Count("poll") + requests.Count("stream") + requests.Count("publish"));
        }
    }

    [Fact]
    public async Task WithNothingAddedByTheHostTheFastPathStillServesAndOpenModeIsWarnedOf()
    {
        var logs = new LogRecorder();
        await using var app = await StartAppAsync(guard: null, fastPath: true, logs);
        using var requests = new FastPathRequestCounter(app.Services);
        using var client = NewClient(app);
        var topic = await CreateTopicAsync(client);

        using var poll = await client.GetAsync($"/ps/subscriptions?topics={topic}:1&timeout=0").WaitAsync(Bound);

        Assert.Equal(HttpStatusCode.NoContent, poll.StatusCode);
        Assert.Equal(1, requests.Count("poll"));
        Assert.DoesNotContain(logs.Entries, entry => entry.Message.Contains("steps aside", StringComparison.Ordinal));
        // Open, as the standalone server is by default, and just as loud about it.
        Assert.Single(logs.Entries, entry => entry.Message.StartsWith("Laharsub:Auth:Mode is Open", StringComparison.Ordinal));
    }

    /// <summary>A cookie-authenticated app: <c>/login/{user}</c> signs in; Laharsub under <c>/ps</c>, guarded by <paramref name="guard"/>.</summary>
    private static Task<WebApplication> StartAppAsync(Guard? guard, bool fastPath, LogRecorder logs) =>
        CookieApp.StartAsync(fastPath, logs,
            authorization: options =>
            {
                if (guard == Guard.FallbackPolicy)
                {
                    options.FallbackPolicy = new AuthorizationPolicyBuilder().RequireAuthenticatedUser().Build();
                }
            },
            laharsub: group =>
            {
                switch (guard)
                {
                    case Guard.RequireAuthorization:
                        group.RequireAuthorization();
                        break;
                    case Guard.EndpointFilter:
                        group.AddEndpointFilter((context, next) =>
                            context.HttpContext.User.Identity?.IsAuthenticated == true ? next(context) : ValueTask.FromResult<object?>(Results.Forbid()));
                        break;
                }
            });

    private static Uri BaseAddress(WebApplication app) => CookieApp.BaseAddress(app);

    private static HttpClient NewClient(WebApplication app) => CookieApp.NewClient(app);

    private static async Task<long> CreateTopicAsync(HttpClient client)
    {
        using var created = await client.PostAsync("/ps/topics", null).WaitAsync(Bound);
        Assert.True(created.StatusCode == HttpStatusCode.Created, await created.Content.ReadAsStringAsync());
        return long.Parse(created.Headers.Location!.OriginalString.Split('/')[^1]);
    }
}

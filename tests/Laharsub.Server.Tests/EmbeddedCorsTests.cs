using System.Net;
using Laharsub.Server.Hosting;
using Laharsub.Server.Tests.Support;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.AspNetCore.Http.Features;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;

namespace Laharsub.Server.Tests;

/// <summary>
/// An application that embeds Laharsub and does not call <c>UseCors()</c> (or calls it after
/// <c>MapLaharsub</c>) still serves every request, cross-origin pages and preflights included, with the fast
/// path on and off: ASP.NET Core would otherwise answer 500 for each request the pipeline serves.
/// </summary>
public sealed class EmbeddedCorsTests
{
    public static TheoryData<bool, bool> Hosts() => new() { { false, true }, { false, false }, { true, true }, { true, false } };

    [Theory]
    [MemberData(nameof(Hosts))]
    public async Task AnAppWithoutUseCorsBeforeMapLaharsubServesPagesOfAnyOrigin(bool useCorsAfterwards, bool fastPath)
    {
        var builder = WebApplication.CreateSlimBuilder();
        builder.WebHost.UseUrls("http://127.0.0.1:0");
        builder.Logging.ClearProviders();
        builder.Services.AddLaharsub(options => options.FastPath.Enabled = fastPath);
        await using var app = builder.Build();
        app.MapLaharsub("/ps");
        if (useCorsAfterwards)
        {
            app.UseCors();
        }
        await app.StartAsync().WaitAsync(WireClient.Bound);
        var address = app.Services.GetRequiredService<IServer>().Features.GetRequiredFeature<IServerAddressesFeature>().Addresses.First();
        using var client = new HttpClient { BaseAddress = new Uri(address + "/ps/"), Timeout = WireClient.Bound };

        var topic = await client.CreateTopicAsync();
        using var request = new HttpRequestMessage(HttpMethod.Post, $"topics/{topic}") { Content = new StringContent("hi") };
        request.Headers.Add("Origin", "http://app.example");
        using var published = await client.SendAsync(request).WaitAsync(WireClient.Bound);
        using var preflight = new HttpRequestMessage(HttpMethod.Options, $"topics/{topic}");
        preflight.Headers.Add("Origin", "http://app.example");
        preflight.Headers.Add("Access-Control-Request-Method", "POST");
        preflight.Headers.Add("Access-Control-Request-Headers", "content-type");
        using var allowed = await client.SendAsync(preflight).WaitAsync(WireClient.Bound);
        using var info = await client.GetAsync($"topics/{topic}").WaitAsync(WireClient.Bound);

        Assert.Equal(HttpStatusCode.Created, published.StatusCode);
        Assert.Equal("*", Assert.Single(published.Headers.GetValues("Access-Control-Allow-Origin")));
        Assert.Equal(HttpStatusCode.NoContent, allowed.StatusCode);
        Assert.Contains("POST", string.Join(",", allowed.Headers.GetValues("Access-Control-Allow-Methods")), StringComparison.Ordinal);
        Assert.Equal(HttpStatusCode.OK, info.StatusCode);
        await app.StopAsync().WaitAsync(WireClient.Bound);
    }
}

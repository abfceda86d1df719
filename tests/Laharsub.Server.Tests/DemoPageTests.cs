using System.Net;
using Laharsub.Server.Host.Composition;
using Laharsub.Server.Hosting;
using Laharsub.Testing;

namespace Laharsub.Server.Tests;

/// <summary>The standalone server serves the demo chat and the jQuery client unless configured not to.</summary>
public sealed class DemoPageTests
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(10);

    [Fact]
    public async Task TheServerRootLeadsToTheDemoChatPage()
    {
        await using var server = await LaharsubTestServer.StartAsync().WaitAsync(Timeout);
        using var http = new HttpClient(new HttpClientHandler { AllowAutoRedirect = false }) { BaseAddress = server.BaseAddress, Timeout = Timeout };

        using var root = await http.GetAsync("/").WaitAsync(Timeout);
        Assert.Equal(HttpStatusCode.Redirect, root.StatusCode);
        Assert.Equal("/demo/", root.Headers.Location?.OriginalString);

        using var page = await http.GetAsync("/demo/").WaitAsync(Timeout);
        Assert.Equal(HttpStatusCode.OK, page.StatusCode);
        Assert.Equal("text/html", page.Content.Headers.ContentType?.MediaType);
        var html = await page.Content.ReadAsStringAsync().WaitAsync(Timeout);
        Assert.Contains("<title>Laharsub Chat</title>", html, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("/?token=abc.def-ghi", "/demo/?token=abc.def-ghi")]
    [InlineData("/?jquery=3&token=a%2Bb", "/demo/?jquery=3&token=a%2Bb")]
    public async Task TheRootKeepsItsQueryOnTheWayToTheDemo(string path, string expectedLocation)
    {
        await using var server = await LaharsubTestServer.StartAsync().WaitAsync(Timeout);
        using var http = new HttpClient(new HttpClientHandler { AllowAutoRedirect = false }) { BaseAddress = server.BaseAddress, Timeout = Timeout };

        using var root = await http.GetAsync(path).WaitAsync(Timeout);

        Assert.Equal(HttpStatusCode.Redirect, root.StatusCode);
        Assert.Equal(expectedLocation, root.Headers.Location?.OriginalString);
    }

    [Theory]
    [InlineData("/demo/jquery.laharsub.js", "$.laharsub = function")]
    [InlineData("/demo/vendor/jquery-3.7.1.min.js", "jQuery v3.7.1")]
    [InlineData("/demo/vendor/jquery-4.0.0.min.js", "jQuery v4.0.0")]
    [InlineData("/demo/chat.js", "createClient(apiBase")]
    [InlineData("/demo/laharsub.js", "export class LaharsubClient")]
    public async Task TheDemoServesTheClientAndBothJQueryVersions(string path, string expectedText)
    {
        await using var server = await LaharsubTestServer.StartAsync().WaitAsync(Timeout);
        using var http = new HttpClient { BaseAddress = server.BaseAddress, Timeout = Timeout };

        using var response = await http.GetAsync(path).WaitAsync(Timeout);

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal("text/javascript", response.Content.Headers.ContentType?.MediaType);
        Assert.Contains(expectedText, await response.Content.ReadAsStringAsync().WaitAsync(Timeout), StringComparison.Ordinal);
    }

    [Fact]
    public async Task TheDemoCanBeSwitchedOffInConfiguration()
    {
        await using var server = await LaharsubTestServer.StartAsync(
            settings: new Dictionary<string, string?> { [StandaloneHost.DemoEnabledSetting] = "false" }).WaitAsync(Timeout);
        using var http = new HttpClient { BaseAddress = server.BaseAddress, Timeout = Timeout };

        using var page = await http.GetAsync("/demo/").WaitAsync(Timeout);
        using var root = await http.GetAsync("/").WaitAsync(Timeout);
        using var health = await http.GetAsync("/health").WaitAsync(Timeout);

        Assert.Equal(HttpStatusCode.NotFound, page.StatusCode);
        Assert.Equal(HttpStatusCode.NotFound, root.StatusCode);
        Assert.Equal(HttpStatusCode.OK, health.StatusCode);
    }
}

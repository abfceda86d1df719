using Laharsub.LoadTestClient.Hosting;
using Laharsub.Testing;

namespace Laharsub.Server.Tests.Standalone;

/// <summary>
/// <c>Laharsub:Cors:AllowedOrigins</c> in the forms an operator writes it, on the built server: one value
/// (environment variable or command line, several origins separated by commas or spaces) applies as the list
/// does; a setting that would bind to no origin, which means any, stops the server naming it. Before, the
/// one-value form was ignored and every origin allowed.
/// </summary>
public sealed class CorsSettingTests
{
    private static readonly TimeSpan Bound = TimeSpan.FromSeconds(30);

    [Fact]
    public async Task OneOriginInAnEnvironmentVariableIsTheOnlyOneAllowed()
    {
        var port = ChildProcess.FreeLoopbackPort();
        await using var server = await HostProcess.StartCommandAsync(
            ["dotnet", HostProcess.BuiltHostDll, "--Laharsub:Demo:Enabled=false", "--urls", $"http://127.0.0.1:{port}"],
            new Uri($"http://127.0.0.1:{port}/"),
            new Dictionary<string, string?> { ["Laharsub__Cors__AllowedOrigins"] = "https://app.example.com" });

        Assert.Equal("https://app.example.com", await AllowedOriginAsync(server, "https://app.example.com"));
        Assert.Null(await AllowedOriginAsync(server, "https://evil.example.net"));
    }

    [Fact]
    public async Task OriginsInOneCommandLineValueAreTheOnlyOnesAllowed()
    {
        await using var server = await HostProcess.StartAsync("Laharsub:Demo:Enabled=false",
            "Laharsub:Cors:AllowedOrigins=https://app.example.com, https://admin.example.com:8443");

        Assert.Equal("https://app.example.com", await AllowedOriginAsync(server, "https://app.example.com"));
        Assert.Equal("https://admin.example.com:8443", await AllowedOriginAsync(server, "https://admin.example.com:8443"));
        Assert.Null(await AllowedOriginAsync(server, "https://evil.example.net"));
    }

    [Theory]
    [InlineData("", "is set but names no origin")]
    [InlineData(" , ", "is set but names no origin")]
    [InlineData("https://app.example.com/", "contains 'https://app.example.com/'")]
    [InlineData("app.example.com", "contains 'app.example.com'")]
    public async Task AnEnvironmentVariableThatNamesNoUsableOriginStopsTheServer(string value, string named)
    {
        var run = await HostProcess.RunCommandAsync(["--urls", "http://127.0.0.1:0", "--Laharsub:Demo:Enabled=false"],
            new Dictionary<string, string?> { ["Laharsub__Cors__AllowedOrigins"] = value });

        Assert.Equal(1, run.ExitCode);
        Assert.Contains("The server did not start: ", run.Error, StringComparison.Ordinal);
        Assert.Contains($"Laharsub:Cors:AllowedOrigins {named}", run.Error, StringComparison.Ordinal);
    }

    [Fact]
    public async Task BothFormsAtOnceStopTheServer()
    {
        var run = await HostProcess.RunCommandAsync(["--urls", "http://127.0.0.1:0", "--Laharsub:Demo:Enabled=false",
                "--Laharsub:Cors:AllowedOrigins:0=https://admin.example.com"],
            new Dictionary<string, string?> { ["Laharsub__Cors__AllowedOrigins"] = "https://app.example.com" });

        Assert.Equal(1, run.ExitCode);
        Assert.Contains("Laharsub:Cors:AllowedOrigins is set both as one value ('https://app.example.com') and as a list", run.Error, StringComparison.Ordinal);
    }

    /// <summary>The origin a preflight of a publish is allowed, or null when the policy refuses it.</summary>
    private static async Task<string?> AllowedOriginAsync(HostProcess server, string origin)
    {
        using var client = new HttpClient { BaseAddress = server.ApiAddress, Timeout = Bound };
        using var preflight = new HttpRequestMessage(HttpMethod.Options, "topics/1");
        preflight.Headers.Add("Origin", origin);
        preflight.Headers.Add("Access-Control-Request-Method", "POST");
        using var response = await client.SendAsync(preflight);
        return response.Headers.TryGetValues("Access-Control-Allow-Origin", out var values) ? values.Single() : null;
    }
}

using System.Net.Http.Headers;
using Laharsub.Server.Tests.Support;
using Laharsub.Testing;

namespace Laharsub.Server.Tests.Access;

/// <summary>One Jwt-mode server shared by a test class, with an administrator client that may do anything.</summary>
public sealed class JwtServerFixture : IAsyncLifetime
{
    public const string Everything = """{"create":true,"publish":true,"subscribe":true,"list":true,"delete":true}""";

    public LaharsubTestServer Server { get; private set; } = null!;

    /// <summary>A client whose every request carries a token granting everything.</summary>
    public HttpClient Admin { get; private set; } = null!;

    /// <summary>A client that sends no token unless a request carries one.</summary>
    public HttpClient Anonymous { get; private set; } = null!;

    public async Task InitializeAsync()
    {
        Server = await LaharsubTestServer.StartAsync(settings: TestTokens.JwtSettings()).WaitAsync(WireClient.Bound);
        Admin = Server.CreateClient();
        Admin.DefaultRequestHeaders.Authorization = new AuthenticationHeaderValue("Bearer", TestTokens.Grant(Everything, subject: "admin"));
        Anonymous = Server.CreateClient();
    }

    public async Task DisposeAsync()
    {
        Admin.Dispose();
        Anonymous.Dispose();
        await Server.DisposeAsync();
    }
}

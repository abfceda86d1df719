using System.Text.RegularExpressions;
using Laharsub.Testing;

namespace Laharsub.Server.Tests.Standalone;

/// <summary>
/// The standalone server, as <c>dotnet run --project src/Server/Host</c> starts it (its admin page on, whose data
/// endpoints take Laharsub's access rules too), says once at start that it is open.
/// </summary>
public sealed class OpenModeWarningTests
{
    [Fact]
    public async Task TheStandaloneServerWarnsOnceThatItIsOpen()
    {
        await using var server = await HostProcess.StartAsync();

        await server.WaitForOutputAsync(new Regex("Now listening on", RegexOptions.None, TimeSpan.FromSeconds(1)), TimeSpan.FromSeconds(30));

        Assert.Equal(1, Regex.Count(server.Output, "Laharsub:Auth:Mode is Open", RegexOptions.None, TimeSpan.FromSeconds(1)));
    }
}

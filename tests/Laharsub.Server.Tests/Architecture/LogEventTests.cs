using System.Reflection;
using Laharsub.LoadTestClient.Hosting;
using Laharsub.Server.Host.Composition;
using Microsoft.Extensions.Logging;

namespace Laharsub.Server.Tests.Architecture;

/// <summary>
/// Every log message of the server's assemblies has an event id and an event name of its own, so that an
/// operator's filter or alert on either catches one kind of event; each logging class keeps its messages in
/// its own <c>.Log.cs</c> partial.
/// </summary>
public sealed class LogEventTests
{
    private static readonly string[] SourceFolders = ["src/Server", "src/Server.Redis"];

    private static readonly List<(string Method, LoggerMessageAttribute Attribute)> Messages = [.. new[]
        {
            typeof(Laharsub.Server.LaharsubTokens).Assembly, typeof(StandaloneHost).Assembly, typeof(Laharsub.Server.Redis.LaharsubRedisOptions).Assembly,
        }
        .SelectMany(assembly => assembly.GetTypes())
        .SelectMany(type => type.GetMethods(BindingFlags.Static | BindingFlags.Instance | BindingFlags.Public | BindingFlags.NonPublic | BindingFlags.DeclaredOnly))
        .Select(method => (Method: $"{method.DeclaringType!.FullName}.{method.Name}", Attribute: method.GetCustomAttribute<LoggerMessageAttribute>()!))
        .Where(message => message.Attribute is not null)];

    [Fact]
    public void EveryLogMessageHasAnEventIdOfItsOwn()
    {
        Assert.True(Messages.Count > 20, $"only {Messages.Count} log messages found: the scan is broken");
        AssertUnique(message => message.Attribute.EventId.ToString(System.Globalization.CultureInfo.InvariantCulture), "event ids");
    }

    [Fact]
    public void EveryLogMessageStatesAnEventNameOfItsOwn()
    {
        var unnamed = Messages.Where(message => string.IsNullOrEmpty(message.Attribute.EventName)).Select(message => message.Method).ToList();
        Assert.True(unnamed.Count == 0, "log messages without an EventName (the generator would take the method's name, which a rename changes): " + string.Join(", ", unnamed));
        AssertUnique(message => message.Attribute.EventName!, "event names");
    }

    [Fact]
    public void LogMessagesAreDeclaredInLogPartials()
    {
        var root = ChildProcess.FindRepositoryRoot(AppContext.BaseDirectory)
            ?? throw new InvalidOperationException("no repository above the test's build output");
        var elsewhere = SourceFolders
            .SelectMany(folder => Directory.EnumerateFiles(Path.Combine(root, folder), "*.cs", SearchOption.AllDirectories))
            .Where(file => !file.Contains($"{Path.DirectorySeparatorChar}obj{Path.DirectorySeparatorChar}", StringComparison.Ordinal)
                && !file.EndsWith(".Log.cs", StringComparison.Ordinal)
                && File.ReadAllText(file).Contains("[LoggerMessage(", StringComparison.Ordinal))
            .Select(file => Path.GetRelativePath(root, file)).ToList();
        Assert.True(elsewhere.Count == 0, "[LoggerMessage] methods outside a Type.Log.cs partial: " + string.Join(", ", elsewhere));
    }

    private static void AssertUnique(Func<(string Method, LoggerMessageAttribute Attribute), string> key, string what)
    {
        var shared = Messages.GroupBy(key).Where(group => group.Count() > 1)
            .Select(group => $"{group.Key}: {string.Join(", ", group.Select(message => message.Method))}").ToList();
        Assert.True(shared.Count == 0, $"{what} used by more than one log message: " + string.Join("; ", shared));
    }
}

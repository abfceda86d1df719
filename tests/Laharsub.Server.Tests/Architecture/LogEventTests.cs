using System.Reflection;
using Laharsub.Server.Host.Composition;
using Microsoft.Extensions.Logging;

namespace Laharsub.Server.Tests.Architecture;

/// <summary>
/// Every log message of the server's assemblies has an event id of its own, so that an operator's filter or alert
/// on an id catches one kind of event (the ids 1, 20 and 60 each named two different events before).
/// </summary>
public sealed class LogEventTests
{
    [Fact]
    public void EveryLogMessageHasAnEventIdOfItsOwn()
    {
        Assembly[] assemblies = [typeof(Laharsub.Server.LaharsubTokens).Assembly, typeof(StandaloneHost).Assembly,
            typeof(Laharsub.Server.Redis.LaharsubRedisOptions).Assembly];
        var messages = assemblies
            .SelectMany(assembly => assembly.GetTypes())
            .SelectMany(type => type.GetMethods(BindingFlags.Static | BindingFlags.Instance | BindingFlags.Public | BindingFlags.NonPublic | BindingFlags.DeclaredOnly))
            .Select(method => (Method: $"{method.DeclaringType!.FullName}.{method.Name}", Attribute: method.GetCustomAttribute<LoggerMessageAttribute>()))
            .Where(message => message.Attribute is not null)
            .ToList();

        Assert.True(messages.Count > 20, $"only {messages.Count} log messages found: the scan is broken");
        var shared = messages.GroupBy(message => message.Attribute!.EventId).Where(group => group.Count() > 1)
            .Select(group => $"{group.Key}: {string.Join(", ", group.Select(message => message.Method))}").ToList();
        Assert.True(shared.Count == 0, "event ids used by more than one log message: " + string.Join("; ", shared));
    }
}

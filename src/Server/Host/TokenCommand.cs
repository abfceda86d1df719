using System.CommandLine;
using Laharsub.Server.Access;
using Laharsub.Server.Host.Composition;
using Laharsub.Server.Hosting;
using Microsoft.AspNetCore.Builder;

namespace Laharsub.Server.Host;

/// <summary>
/// <c>token</c>: prints a development token signed with the configured key, e.g.
/// <c>dotnet run --project src/Server/Host -- token --publish '*' --subscribe '*' --ttl 1h</c>. It reads the
/// same configuration as the server (appsettings.json, environment, <c>--Laharsub:...=</c> arguments).
/// </summary>
internal static class TokenCommand
{
    public static int Run(string[] args)
    {
        var grantOptions = LaharsubOperations.All.ToDictionary(operation => operation, operation => new Option<string[]>("--" + operation.Name())
        {
            Description = operation == LaharsubOperation.Admin
                ? "Grant 'admin' (the admin page's data) with *; it is no topic permission."
                : $"Topics the token grants '{operation.Name()}' on: *, an id (14), a range (10-20) or a label pattern (orders-*); repeat or separate with commas.",
            AllowMultipleArgumentsPerToken = true,
        });
        var all = new Option<bool>("--all") { Description = "Grant every operation on every topic (an administrator's token)." };
        var subject = new Option<string>("--subject") { Description = "Who the token is for (sub); rate limits are counted per subject.", DefaultValueFactory = _ => "developer" };
        var ttl = new Option<string>("--ttl") { Description = "How long the token is valid: 90s, 30m, 1h, 7d (default 1h).", DefaultValueFactory = _ => "1h" };
        var command = new RootCommand("Prints a bearer token for a Laharsub server in Jwt mode, signed with Laharsub:Auth:Jwt:SigningKey. "
            + "Configuration arguments (--Laharsub:Auth:Jwt:SigningKey=...) may stand anywhere.");
        foreach (var option in grantOptions.Values)
        {
            command.Options.Add(option);
        }
        command.Options.Add(all);
        command.Options.Add(subject);
        command.Options.Add(ttl);
        var (commandArguments, configurationArguments) = SplitConfigurationArguments(args, command);
        command.SetAction(parsed =>
        {
            // Read exactly as the server would read them.
            var builder = WebApplication.CreateBuilder(new WebApplicationOptions
            {
                Args = configurationArguments,
                ApplicationName = typeof(StandaloneHost).Assembly.GetName().Name,
            });
            var auth = builder.Configuration.GetSection(LaharsubAuthOptions.SectionName).Get<LaharsubAuthOptions>() ?? new LaharsubAuthOptions();
            if (!TokenIssuer.TryParseTimeToLive(parsed.GetValue(ttl)!, out var timeToLive))
            {
                Console.Error.WriteLine($"--ttl {parsed.GetValue(ttl)} is not a lifetime: use 90s, 30m, 1h or 7d.");
                return 2;
            }
            var grants = grantOptions.ToDictionary(
                pair => pair.Key,
                pair => (IReadOnlyList<string>)(parsed.GetValue(all) ? ["*"]
                    : [.. (parsed.GetValue(pair.Value) ?? []).SelectMany(value => value.Split(',', StringSplitOptions.TrimEntries | StringSplitOptions.RemoveEmptyEntries))]));
            if (grants.Values.All(patterns => patterns.Count == 0))
            {
                Console.Error.WriteLine("The token would grant nothing: add --subscribe, --publish, --create, --list or --delete with topic patterns, --admin '*', or --all.");
                return 2;
            }
            try
            {
                Console.Out.WriteLine(TokenIssuer.Issue(auth, parsed.GetValue(subject)!, grants, timeToLive, TimeProvider.System.GetUtcNow(), TokenIssuer.CommandLine));
            }
            catch (ArgumentException exception)
            {
                Console.Error.WriteLine(exception.Message);
                return 2;
            }
            if (auth.Mode != LaharsubAuthMode.Jwt)
            {
                Console.Error.WriteLine("Note: Laharsub:Auth:Mode is not Jwt in this configuration, so the server ignores tokens; start it with Laharsub:Auth:Mode=Jwt.");
            }
            return 0;
        });
        return command.Parse(commandArguments).Invoke();
    }

    /// <summary>
    /// Takes out the arguments meant for configuration: <c>--Laharsub:Auth:Jwt:SigningKey=...</c>,
    /// <c>--environment Development</c>, <c>Key=value</c>, that is any <c>--name</c> that is not one of the
    /// command's options (with the next argument as its value unless it has one after <c>=</c>). Left in,
    /// one that follows a grant would be read as one more topic pattern, since a grant takes several.
    /// </summary>
    internal static (string[] Command, string[] Configuration) SplitConfigurationArguments(IReadOnlyList<string> args, Command command)
    {
        var names = command.Options.SelectMany(option => option.Aliases.Append(option.Name)).ToHashSet(StringComparer.Ordinal);
        var commandArguments = new List<string>();
        var configurationArguments = new List<string>();
        for (var i = 0; i < args.Count; i++)
        {
            var argument = args[i];
            var name = argument.Split('=', ':')[0];
            if (argument.StartsWith("--", StringComparison.Ordinal) && argument.Length > 2 && !names.Contains(name))
            {
                configurationArguments.Add(argument);
                if (!argument.Contains('=', StringComparison.Ordinal) && i + 1 < args.Count && !args[i + 1].StartsWith('-'))
                {
                    configurationArguments.Add(args[++i]);
                }
            }
            else if (!argument.StartsWith('-') && argument.Contains('=', StringComparison.Ordinal)
                && (commandArguments.Count == 0 || !names.Contains(commandArguments[^1])))
            {
                configurationArguments.Add(argument);
            }
            else
            {
                commandArguments.Add(argument);
            }
        }
        return ([.. commandArguments], [.. configurationArguments]);
    }
}

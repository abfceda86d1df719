using Microsoft.Extensions.Configuration;

namespace Laharsub.Server;

/// <summary>Which web origins may call Laharsub from a browser.</summary>
public sealed class LaharsubCorsOptions
{
    /// <summary>The setting's configuration key, as messages name it.</summary>
    internal const string Setting = "Laharsub:Cors:AllowedOrigins";

    /// <summary>
    /// Allowed origins, e.g. <c>https://app.example.com</c> (scheme, host and port only). Empty (the default) or
    /// <c>*</c> allows any origin, which is safe for the protocol because it never uses cookies or other
    /// credentials. In configuration either a list (<c>Laharsub:Cors:AllowedOrigins:0</c>, <c>:1</c>, …) or one
    /// value of origins separated by commas or spaces; a setting that is present but names no origin stops the
    /// server at start rather than allow every origin.
    /// </summary>
    /// <remarks>Empty rather than <c>["*"]</c> by default because configuration binding appends to an
    /// array: a default entry would silently stay next to the origins an operator lists.</remarks>
    public string[] AllowedOrigins { get; set; } = [];

    /// <summary>Whether the policy lets every origin in: no origin listed, or <c>*</c> among them.</summary>
    internal bool AllowsAnyOrigin => AllowedOrigins is not { Length: > 0 } || AllowedOrigins.Contains("*");

    /// <summary>
    /// Binds the one-value form (<c>Laharsub__Cors__AllowedOrigins=https://a.example,https://b.example</c>),
    /// which the configuration binder leaves out of an array: it binds an array from the section's children only.
    /// </summary>
    internal static void BindOneValue(IConfiguration configuration, LaharsubCorsOptions options)
    {
        var section = configuration.GetSection(Setting);
        if (section.Value is { } value && !section.GetChildren().Any())
        {
            options.AllowedOrigins = Split(value);
        }
    }

    /// <summary>Why the configured and the bound origins cannot stand (the setting is named), if they cannot.</summary>
    internal static IEnumerable<string> Problems(IConfiguration? configuration, LaharsubCorsOptions options)
    {
        var section = configuration?.GetSection(Setting);
        var value = section?.Value;
        var listed = section?.GetChildren().Any() == true;
        if (value is not null && listed)
        {
            yield return $"{Setting} is set both as one value ('{value}') and as a list ({Setting}:0, …): set it in one form only.";
        }
        else if ((value is not null || listed) && options.AllowedOrigins is not { Length: > 0 })
        {
            // Empty means any origin: a setting that was meant to restrict them must not end up allowing all.
            yield return $"{Setting} is set but names no origin: list origins such as https://app.example.com (separated by commas or spaces), or \"*\" for any origin, or remove the setting to allow any origin.";
        }
        foreach (var origin in options.AllowedOrigins ?? [])
        {
            if (origin != "*" && !IsOrigin(origin))
            {
                yield return $"{Setting} contains '{origin}', which is neither \"*\" nor an origin (scheme://host[:port], no path, not even '/') such as https://app.example.com.";
            }
        }
    }

    private static string[] Split(string value) =>
        value.Split([',', ' ', '\t', '\r', '\n'], StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries);

    /// <summary>An origin as a browser sends it: a scheme, a host and maybe a port, and nothing else.</summary>
    private static bool IsOrigin(string text)
    {
        var separator = text.IndexOf("://", StringComparison.Ordinal);
        return separator > 0 && text.AsSpan(separator + 3).IndexOfAny("/?#@\\") < 0
            && Uri.TryCreate(text, UriKind.Absolute, out var uri) && uri.Host.Length > 0;
    }
}

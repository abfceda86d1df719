namespace Laharsub.Server.Hosting;

/// <summary>Which web origins may call Laharsub from a browser.</summary>
public sealed class LaharsubCorsOptions
{
    /// <summary>
    /// Allowed origins, e.g. <c>https://app.example.com</c>. Empty (the default) or <c>*</c> allows any
    /// origin, which is safe for the protocol because it never uses cookies or other credentials.
    /// </summary>
    /// <remarks>Empty rather than <c>["*"]</c> by default because configuration binding appends to an
    /// array: a default entry would silently stay next to the origins an operator lists.</remarks>
    public string[] AllowedOrigins { get; set; } = [];
}

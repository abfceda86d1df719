namespace Laharsub.Server.Transport;

/// <summary>What Laharsub's CORS policy lets a page read of a cross-origin answer (docs/access-control.md).</summary>
internal static class CrossOrigin
{
    /// <summary>The response headers a page's script may read besides the safelisted ones.</summary>
    public static readonly string[] ExposedHeaders = ["Location", "Retry-After", "WWW-Authenticate"];
}

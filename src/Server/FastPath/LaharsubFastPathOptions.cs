namespace Laharsub.Server;

/// <summary>
/// The connection-level fast path (<c>Laharsub:FastPath</c>): long polls and publishes parsed and
/// answered on Kestrel's connection, below ASP.NET Core's request pipeline (docs/architecture.md, "The
/// fast path"). Any request it does not take is served by the normal pipeline on the same connection.
/// </summary>
public sealed class LaharsubFastPathOptions
{
    /// <summary>
    /// Whether Kestrel's HTTP/1.1 connections go through the fast path first. Off by default until it
    /// serves everything the normal path does; off, every request takes the normal pipeline.
    /// </summary>
    public bool Enabled { get; set; }
}

namespace Laharsub.Server.Transport;

/// <summary>A topic's entity tags, as <c>ETag</c> gives them and <c>If-Match</c> sends them back.</summary>
internal static class TopicTags
{
    /// <summary>A topic's incarnation: its epoch in quotes.</summary>
    public static string Epoch(string epoch) => $"\"{epoch}\"";

    /// <summary>A state topic's document (or another topic's last message): its epoch and version.</summary>
    public static string State(string epoch, long version) => $"\"{epoch}:{version}\"";
}

namespace Laharsub.Server.Wire;

/// <summary>The two formats a poll can be answered in.</summary>
public enum PollFormat
{
    Json,
    Multipart,
}

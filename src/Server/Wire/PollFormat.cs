namespace Laharsub.Server.Wire;

/// <summary>The two formats a poll can be answered in.</summary>
internal enum PollFormat
{
    Json,
    Multipart,
}

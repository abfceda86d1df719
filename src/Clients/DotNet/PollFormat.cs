namespace Laharsub.Client;

/// <summary>The response format a subscription asks the server for.</summary>
public enum PollFormat
{
    /// <summary>
    /// <c>multipart/mixed</c>: each message's bytes travel as they are, with no escaping and no base64.
    /// The client's default, because it is the cheaper one to parse and the smaller one on the wire.
    /// </summary>
    Multipart,

    /// <summary>
    /// <c>application/json</c>: textual bodies as JSON strings, binary bodies in base64. The server's
    /// default; useful behind proxies that mangle multipart responses.
    /// </summary>
    Json,
}

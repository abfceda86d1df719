namespace Laharsub.Server.Delivery;

/// <summary>How a topic's part of a poll response ended.</summary>
internal enum CollectOutcome : byte
{
    /// <summary>It took everything it had for the cursor (or had nothing, or is deleted).</summary>
    Complete,

    /// <summary>Its share of the response was full while it had more: it may take leftover room.</summary>
    ShareFull,

    /// <summary>The response was full while it had more.</summary>
    ResponseFull,
}

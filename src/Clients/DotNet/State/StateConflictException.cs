using System.Net;

namespace Laharsub.Client;

/// <summary>
/// A compare-and-set state write (<see cref="PublishOptions.ExpectedVersion"/>) found the document moved
/// on (the server answered <c>412 Precondition Failed</c>): another write came first, or the topic is
/// another incarnation. Nothing was written, and the client does not retry. Read the document again
/// (<see cref="LaharsubClient.GetStateAsync(long, CancellationToken)"/>), decide, and write with
/// <see cref="CurrentVersion"/> and <see cref="CurrentEpoch"/>.
/// </summary>
public sealed class StateConflictException : LaharsubException
{
    /// <summary>Creates the exception for a refused compare-and-set.</summary>
    /// <param name="topicId">The state topic written to.</param>
    /// <param name="expectedEpoch">The epoch the write required.</param>
    /// <param name="expectedVersion">The version the write required.</param>
    /// <param name="currentEpoch">The topic's current epoch, if the server named it.</param>
    /// <param name="currentVersion">The document's current version, if the server named it.</param>
    /// <param name="title">The problem's title, if the server sent one.</param>
    /// <param name="detail">The problem's detail, if the server sent one.</param>
    public StateConflictException(long topicId, string expectedEpoch, long expectedVersion, string? currentEpoch, long? currentVersion,
        string? title = null, string? detail = null)
        : base(FormatMessage(topicId, expectedEpoch, expectedVersion, currentEpoch, currentVersion), HttpStatusCode.PreconditionFailed, title, detail, topicId)
    {
        ExpectedEpoch = expectedEpoch;
        ExpectedVersion = expectedVersion;
        CurrentEpoch = currentEpoch;
        CurrentVersion = currentVersion;
    }

    /// <summary>The epoch the write required.</summary>
    public string ExpectedEpoch { get; }

    /// <summary>The version the write required.</summary>
    public long ExpectedVersion { get; }

    /// <summary>The topic's epoch now, as the server reported it; <see langword="null"/> if it did not say.</summary>
    public string? CurrentEpoch { get; }

    /// <summary>The document's version now, as the server reported it; <see langword="null"/> if it did not say.</summary>
    public long? CurrentVersion { get; }

    private static string FormatMessage(long topicId, string expectedEpoch, long expectedVersion, string? currentEpoch, long? currentVersion) =>
        $"The document of topic {topicId} is no longer at version {expectedVersion} (epoch {expectedEpoch})"
        + (currentVersion is null ? "" : $": it is at version {currentVersion}" + (currentEpoch is null || currentEpoch == expectedEpoch ? "" : $" of epoch {currentEpoch}"))
        + ". Nothing was written. Read the document again, and write with PublishOptions.ExpectedVersion and ExpectedEpoch set to the current ones.";
}

using System.Net;

namespace Laharsub.Client;

/// <summary>
/// A conditional publish (<see cref="PublishOptions.ExpectedEpoch"/>) found the topic to be another
/// incarnation (the server answered <c>412 Precondition Failed</c>): the topic was deleted and created
/// again, or the server lost its data and the id was reused. Nothing was published, and the client
/// does not retry. Decide whether the message belongs in the new topic; if so, publish again with
/// <see cref="CurrentEpoch"/>.
/// </summary>
public sealed class EpochMismatchException : LaharsubException
{
    /// <summary>Creates the exception for a refused conditional publish.</summary>
    /// <param name="topicId">The topic published to.</param>
    /// <param name="expectedEpoch">The epoch the publish required.</param>
    /// <param name="currentEpoch">The topic's current epoch, if the server named it.</param>
    /// <param name="title">The problem's title, if the server sent one.</param>
    /// <param name="detail">The problem's detail, if the server sent one.</param>
    public EpochMismatchException(long topicId, string expectedEpoch, string? currentEpoch, string? title = null, string? detail = null)
        : base(FormatMessage(topicId, expectedEpoch, currentEpoch), HttpStatusCode.PreconditionFailed, title, detail, topicId)
    {
        ExpectedEpoch = expectedEpoch;
        CurrentEpoch = currentEpoch;
    }

    /// <summary>The epoch the publish required (<see cref="PublishOptions.ExpectedEpoch"/>).</summary>
    public string ExpectedEpoch { get; }

    /// <summary>The topic's epoch now, as the server reported it; <see langword="null"/> if it did not say.</summary>
    public string? CurrentEpoch { get; }

    private static string FormatMessage(long topicId, string expectedEpoch, string? currentEpoch) =>
        $"Topic {topicId} is no longer the topic with epoch {expectedEpoch}"
        + (currentEpoch is null ? "" : $": its epoch is now {currentEpoch}")
        + ". It was deleted and created again, or the server lost its data. Nothing was published. "
        + "If the message belongs in the new topic, publish it again with PublishOptions.ExpectedEpoch set to the new epoch.";
}

using System.Diagnostics;
using Laharsub.Server.Delivery;
using Laharsub.Server.Diagnostics;
using Laharsub.Server.Storage;

namespace Laharsub.Server.Transport;

/// <summary>
/// Where a long poll's answer goes: the pipeline's response or the fast path's connection. Each method writes
/// one answer; which answer a poll gets, and what is recorded of it, is <see cref="LongPollSink{TResponder}"/>'s.
/// </summary>
internal interface IPollResponder
{
    /// <summary>The 200 with the messages and notices of <paramref name="result"/>.</summary>
    ValueTask WriteMessagesAsync(PollResult result);

    /// <summary>The problem of a poll refused before it delivered anything (<see cref="PollResult.RefusedTopicId"/>): 404 for a topic that does not exist, 409 for one full of members.</summary>
    ValueTask WriteRefusedAsync(PollResult refused, Activity? activity);

    /// <summary>The 204 of a poll whose wait ended with nothing to deliver; <paramref name="closeConnection"/> at shutdown.</summary>
    ValueTask WriteNoContentAsync(bool closeConnection);

    /// <summary>The client went away: nothing is written.</summary>
    void ClientGone();
}

/// <summary>
/// The long poll's outcome → answer rules, written once for both front-ends: its first delivery (or the refusal of
/// a topic it names: unknown, or full of members) answers it; its wait's end answers 204 (with <c>Connection: close</c> at shutdown, so that the
/// client's next poll may reach an instance that is not stopping) or nothing when the client is gone; each
/// outcome is counted and ends the poll's activity.
/// </summary>
/// <remarks>A struct, carried in the runner's state machine (see <see cref="ISubscriptionSink"/>).</remarks>
internal readonly struct LongPollSink<TResponder>(TResponder responder, LaharsubMetrics metrics, Activity? activity) : ISubscriptionSink
    where TResponder : IPollResponder
{
    public bool WantsPositions => false;

    public ValueTask<bool> PositionedAsync(Subscription[] positions) => ValueTask.FromResult(true);

    public async ValueTask<bool> DeliverAsync(PollResult result)
    {
        using (activity)
        {
            if (result.RefusedOutcome is { } refused)
            {
                Ended(refused);
                await responder.WriteRefusedAsync(result, activity).ConfigureAwait(false);
            }
            else
            {
                Ended("answered", result.Messages);
                await responder.WriteMessagesAsync(result).ConfigureAwait(false);
                metrics.AnswerWritten(result.Messages);
            }
        }
        return false;
    }

    public async ValueTask<bool> WaitEndedAsync(WaitEnd reason)
    {
        using (activity)
        {
            if (reason == WaitEnd.ClientGone)
            {
                Ended("aborted");
                responder.ClientGone();
                return false;
            }
            var stopping = reason == WaitEnd.Stopping;
            Ended(stopping ? "shutdown" : "timeout");
            await responder.WriteNoContentAsync(closeConnection: stopping).ConfigureAwait(false);
        }
        return false;
    }

    public void Failed()
    {
        Ended("error");
        activity?.Dispose();
    }

    private void Ended(string outcome, List<Message>? messages = null)
    {
        metrics.PollEnded(outcome, messages?.Count ?? 0);
        LaharsubActivitySource.PollEnded(activity, outcome, messages);
    }
}

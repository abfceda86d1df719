namespace Laharsub.Server.Subscriptions;

/// <summary>
/// What the endpoint does with a poll's result, run by <see cref="PollAssembler"/> at the end of the poll's
/// own state machine. A struct, so that it travels in that state machine: an endpoint that awaited the
/// assembler instead would keep a second state machine for the poll's whole wait, which the GC copies
/// (docs/performance.md, "What a collection finds young, and fewer collections").
/// </summary>
internal interface IPollAnswer
{
    /// <summary>Answers with <paramref name="result"/>, once the poll has stopped waiting.</summary>
    Task AnswerAsync(PollResult result);

    /// <summary>The poll failed; the exception propagates after this.</summary>
    void Failed();
}

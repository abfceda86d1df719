using System.Buffers;
using Laharsub.Server.Delivery;
using Laharsub.Server.Limits;
using Laharsub.Server.Storage;
using Laharsub.Server.Transport;
using Laharsub.Server.Wire;

namespace Laharsub.Server.FastPath;

/// <summary>The JSON long poll: its start and the answers <see cref="LongPollSink{TResponder}"/> chooses, written as the pipeline writes them.</summary>
internal sealed partial class FastPathConnection : IPollResponder
{
    /// <summary>Answers the poll, or returns null, having consumed nothing, for the pipeline to answer it.</summary>
    private async ValueTask<Served?> PollAsync(SequencePosition headEnd)
    {
        if (!await AllowsSubscriptionAsync().ConfigureAwait(false))
        {
            return null;
        }
        if (StartPoll(headEnd, out var permit) is not { } running)
        {
            return null;
        }
        using (permit)
        {
            try
            {
                await running.ConfigureAwait(false);
            }
            catch (LaharsubStoreUnavailableException unavailable)
            {
                _pollStatus = 503;
                FastPathConnectionHandler.StoreUnavailable(_state.Logger, unavailable.StoreName, unavailable.Message);
                var answer = StoreUnavailableAnswer.From(unavailable);
                _state.Responses.WritePollProblem(_output, Cors, 503, answer.Title, answer.Detail, TraceId(),
                    json => json.WriteString("store", answer.Store), answer.RetryAfterSeconds);
                await _output.FlushAsync().ConfigureAwait(false);
            }
            finally
            {
                _state.Hosting.Ended("GET", _state.PollRoute, _pollStatus, _pollStarted, EndRequestActivity());
            }
            return _pollOutcome;
        }
    }

    /// <summary>A permit of the client's waiting-poll cap (none needed when the cap is off); false when the client is at its cap.</summary>
    private bool TryAcquireWaitingPoll(out IDisposable? permit)
    {
        permit = null;
        if (_state.WaitingPolls.Enabled && ClientAddress.KeyOf(ClientIp) is { } client)
        {
            permit = _state.WaitingPolls.TryAcquire(client);
            if (permit is null)
            {
                _pipelineReason = "waiting_poll_cap";
            }
            return permit is not null;
        }
        return true;
    }

    /// <summary>
    /// Parses the query into this thread's reused list and starts the runner on it, which copies the
    /// subscriptions into its pooled state before it returns: a poll allocates no list or array of its own,
    /// as on the pipeline. Null, having consumed nothing, when the pipeline must answer.
    /// </summary>
    private Task? StartPoll(SequencePosition headEnd, out IDisposable? permit)
    {
        permit = null;
        var subscriptions = t_subscriptions ??= [];
        try
        {
            var query = ParseQuery(subscriptions);
            if (query.Error is not null || AsksForState(subscriptions) || !TryAcquireWaitingPoll(out permit))
            {
                _pipelineReason ??= "query_invalid";
                return null;
            }
            // Taken: the request is consumed now, so that a held poll does not keep its read buffer.
            _input.AdvanceTo(headEnd);
            _state.Metrics.FastPath("poll");
            _pollOutcome = Served.Next;
            // As the pipeline's response starts out: an unhandled failure is a 500, a client gone keeps the 200.
            _pollStatus = 500;
            _pollStarted = _state.Hosting.Started("GET");
            StartRequestActivity("GET", _state.PollRoute);
            return LongPollTransport.Start(_state.Subscriptions, query, PollFormat.Json, this, PresenceOf(query), _connection.ConnectionClosed);
        }
        finally
        {
            // Lets go of the epoch strings.
            subscriptions.Clear();
        }
    }

    ValueTask IPollResponder.WriteMessagesAsync(PollResult result)
    {
        _pollStatus = 200;
        var notices = PollResponseWriter.EncodeNotices(result.Notices);
        _state.Responses.WritePollOk(_output, Cors, PollResponseWriter.JsonLength(result, notices));
        PollResponseWriter.WriteJson(_output, result, notices);
        return FlushAsync();
    }

    ValueTask IPollResponder.WriteRefusedAsync(PollResult refused, System.Diagnostics.Activity? activity)
    {
        _pollStatus = refused.UnknownTopicId is null ? 409 : 404;
        _state.Responses.WriteRefused(_output, Cors, refused, _state.Delivery.Presence.MaxMembersPerTopic, activity?.Id ?? TraceId());
        return FlushAsync();
    }

    ValueTask IPollResponder.WriteNoContentAsync(bool closeConnection)
    {
        _pollStatus = 204;
        _state.Responses.WritePollNoContent(_output, Cors, close: closeConnection);
        _pollOutcome = closeConnection ? Served.Close : Served.Next;
        return FlushAsync();
    }

    void IPollResponder.ClientGone()
    {
        _pollStatus = 200;
        _pollOutcome = Served.Close;
    }

    /// <summary>Flushes the answer; a flush that completes at once, as a small answer's does, costs no task.</summary>
    private ValueTask FlushAsync()
    {
        var flush = _output.FlushAsync();
        if (flush.IsCompletedSuccessfully)
        {
            flush.GetAwaiter().GetResult();
            return default;
        }
        return new ValueTask(flush.AsTask());
    }
}

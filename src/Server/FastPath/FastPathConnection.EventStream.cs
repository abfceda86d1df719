using System.Buffers;
using System.Runtime.InteropServices;
using Laharsub.Server.Access;
using Laharsub.Server.Delivery;
using Laharsub.Server.Storage;
using Laharsub.Server.Transport;

namespace Laharsub.Server.FastPath;

/// <summary>A Server-Sent Events stream on the connection, through <see cref="FastEventStream"/>.</summary>
internal sealed partial class FastPathConnection
{
    /// <summary>
    /// Runs a Server-Sent Events stream until it ends, or returns null, having consumed nothing, for the pipeline
    /// to answer it. The stream's connection closes after it, as it would on the pipeline (its client reconnects).
    /// </summary>
    private async ValueTask<Served?> StreamAsync(SequencePosition headEnd)
    {
        if (!await AllowsSubscriptionAsync().ConfigureAwait(false))
        {
            return null;
        }
        // A stream opened with a token ends when the token expires, telling its client.
        using var expiry = _identity is { ExpiresAt: { } expiresAt } ? new StreamExpiry(new StreamLifetime(expiresAt, Redecide: false), _state.Clock, _connection.ConnectionClosed) : null;
        if (StartStream(headEnd, expiry, out var permit, out var stream) is not { } running)
        {
            return null;
        }
        var started = _state.Hosting.Started("GET");
        using (permit)
        using (var deadline = stream.Deadline)
        {
            try
            {
                await running.ConfigureAwait(false);
                await stream.Target.EndAsync().ConfigureAwait(false);
            }
            catch (LaharsubStoreUnavailableException unavailable)
            {
                FastPathConnectionHandler.StoreUnavailable(_state.Logger, unavailable.StoreName, unavailable.Message);
                var answer = StoreUnavailableAnswer.From(unavailable);
                if (stream.Target.TryRefuse(answer.Title, answer.Detail, answer.Store, answer.RetryAfterSeconds))
                {
                    await _output.FlushAsync().ConfigureAwait(false);
                    return Served.Next;
                }
            }
            finally
            {
                _state.Hosting.Ended("GET", _state.PollRoute, stream.Target.Status, started);
            }
        }
        return stream.Target.Started ? Served.Close : Served.Next;
    }

    /// <summary>As <see cref="StartPoll"/>, for an event stream: its positions from the query, or from <c>Last-Event-ID</c>.</summary>
    private Task? StartStream(SequencePosition headEnd, StreamExpiry? expiry, out IDisposable? permit, out (FastEventStream Target, StreamWriteDeadline Deadline) stream)
    {
        permit = null;
        stream = default;
        var subscriptions = t_subscriptions ??= [];
        try
        {
            var query = ParseQuery(subscriptions);
            if (query.Error is not null
                || AsksForState(subscriptions)
                || (_lastEventId is { Length: > 0 } lastEventId && EventStreamTransport.ResumeFrom(lastEventId, subscriptions, _state.Delivery) is not null)
                || !TryAcquireWaitingPoll(out permit))
            {
                _pipelineReason ??= "query_invalid";
                return null;
            }
            _input.AdvanceTo(headEnd);
            _state.Metrics.FastPath("stream");
            var target = new FastEventStream(_output, _state.Responses, _connection, TraceId(), _origin ? _state.OriginHeaders! : []);
            stream = (target, EventStreamTransport.WriteDeadline(target, _state.Subscriptions));
            return EventStreamTransport.Start(_state.Subscriptions, target, CollectionsMarshal.AsSpan(subscriptions), query.Conflation, PresenceOf(query),
                stream.Deadline, expiry?.Ended ?? _connection.ConnectionClosed, expiry);
        }
        finally
        {
            subscriptions.Clear();
        }
    }
}

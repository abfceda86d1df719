using System.Runtime.InteropServices;
using Laharsub.Server.Delivery;
using Laharsub.Server.Diagnostics;
using Laharsub.Server.Wire;

namespace Laharsub.Server.Transport;

/// <summary>
/// The subscription as a long poll, for both front-ends: its start, written once; <see cref="LongPollSink{TResponder}"/>
/// chooses its answer and the front-end's <see cref="IPollResponder"/> writes it.
/// </summary>
internal static class LongPollTransport
{
    /// <summary>
    /// Starts the poll of <paramref name="query"/>'s subscriptions, which the runner copies before it returns (the
    /// caller may reuse the query's list then): every reason to stop waiting wakes it (its timeout,
    /// <paramref name="clientGone"/>, the server stopping), and which one fired decides the answer.
    /// </summary>
    public static Task Start<TResponder>(SubscriptionServices services, in SubscriptionQuery query, PollFormat format, TResponder responder,
        PresenceIdentity? member, CancellationToken clientGone)
        where TResponder : IPollResponder
    {
        var wait = new SubscriptionWait(query.Timeout, services.TimeProvider, clientGone, services.Lifetime.ApplicationStopping);
        var activity = LaharsubActivitySource.StartPoll(query.Subscriptions.Count);
        services.Metrics.PollStarted();
        return services.Runner.RunAsync(CollectionsMarshal.AsSpan(query.Subscriptions),
            format == PollFormat.Json ? services.Wire.JsonAnswerBytes : services.Wire.MultipartAnswerBytes, wait,
            new LongPollSink<TResponder>(responder, services.Metrics, activity), TransportPacing.LongPoll(query), member);
    }
}

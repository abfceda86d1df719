using System.Buffers;
using System.Text.Json;
using Laharsub.Server.Delivery;
using Laharsub.Server.Diagnostics;
using Laharsub.Server.Wire;

namespace Laharsub.Server.Transport;

/// <summary>Writes a subscription's deliveries as events, each with the cursors to resume from after it.</summary>
internal readonly struct EventStreamSink(IEventStreamTarget target, SubscriptionServices services, StreamCursors cursors, StreamWriteDeadline deadline,
    bool redecide, CancellationToken accessEnded) : ISubscriptionSink
{
    private static ReadOnlySpan<byte> IdField => "id: "u8;
    private static ReadOnlySpan<byte> DataField => "\ndata: "u8;
    private static ReadOnlySpan<byte> EventEnd => "\n\n"u8;
    private static ReadOnlySpan<byte> NoticeEvent => "event: notice\n"u8;
    private static ReadOnlySpan<byte> OpenEvent => "event: subscribed\n"u8;
    private static ReadOnlySpan<byte> Heartbeat => ": heartbeat\n\n"u8;

    public bool WantsPositions => true;

    public async ValueTask<bool> PositionedAsync(Subscription[] positions)
    {
        cursors.Reset(positions);
        var output = target.Events;
        Write(output, $"retry: {(long)services.Streams.ReconnectDelay.TotalMilliseconds}\n\n");
        output.Write(OpenEvent);
        WriteId(output);
        output.Write(DataField);
        using (var json = new Utf8JsonWriter(output))
        {
            json.WriteStartObject();
            StreamPositions.Write(json, positions);
            json.WriteEndObject();
        }
        output.Write(EventEnd);
        return await FlushAsync().ConfigureAwait(false);
    }

    public async ValueTask<bool> DeliverAsync(PollResult result)
    {
        if (result.RefusedTopicId is not null)
        {
            services.Metrics.PollEnded(result.RefusedOutcome!, 0);
            await target.RefuseAsync(result, services.Options.Presence.MaxMembersPerTopic).ConfigureAwait(false);
            return false;
        }
        // Only on the pipeline in practice: the fast path leaves streams to it while Laharsub is traced.
        using var activity = LaharsubActivitySource.StartDelivery("sse", result.Messages);
        var output = target.Events;
        foreach (var notice in result.Notices)
        {
            cursors.Apply(notice);
            output.Write(NoticeEvent);
            WriteId(output);
            output.Write(DataField);
            output.Write(WireFormat.EncodeNotice(notice));
            output.Write(EventEnd);
        }
        // A delivery may be MaxBytesPerPoll: sent in parts of MaxBufferedBytes, so that a client that does
        // not read holds at most one part (and the transport's buffer) on the server.
        var unsent = 0L;
        foreach (var message in result.Messages)
        {
            if (unsent >= services.Streams.MaxBufferedBytes)
            {
                if (!await FlushAsync().ConfigureAwait(false))
                {
                    return false;
                }
                // A target may write its next events elsewhere after a send (the fast path lets a grown buffer go).
                output = target.Events;
                unsent = 0;
            }
            cursors.Apply(message);
            WriteId(output);
            output.Write(DataField);
            var element = WireFormat.JsonElement(message);
            output.Write(element);
            output.Write(EventEnd);
            unsent += element.Length;
        }
        if (!await FlushAsync().ConfigureAwait(false))
        {
            return false;
        }
        services.Metrics.StreamWrote(result.Messages);
        return true;
    }

    public async ValueTask<bool> WaitEndedAsync(WaitEnd reason)
    {
        switch (reason)
        {
            case WaitEnd.TimedOut:
                target.Events.Write(Heartbeat);
                return await FlushAsync().ConfigureAwait(false);
            case WaitEnd.Stopping:
                services.Metrics.PollEnded("shutdown", 0);
                Write(target.Events,
                    "event: reconnect\ndata: {\"reason\":\"stopping\",\"detail\":\"The server is stopping; reconnect (another instance will answer) and resume from your cursors.\"}\n\n");
                await FlushAsync().ConfigureAwait(false);
                return false;
            case WaitEnd.ClientGone when accessEnded.IsCancellationRequested && !target.ClientGone.IsCancellationRequested:
                services.Metrics.PollEnded(redecide ? "redecide" : "token_expired", 0);
                Write(target.Events, redecide
                    ? "event: reconnect\ndata: {\"reason\":\"redecide\",\"detail\":\"This stream's access is decided again every Laharsub:Auth:StreamDecisionLifetime; reconnect and resume from your cursors.\"}\n\n"
                    : "event: reconnect\ndata: {\"reason\":\"tokenExpired\",\"detail\":\"The stream's token expired; reconnect with a fresh token and resume from your cursors.\"}\n\n");
                await FlushAsync().ConfigureAwait(false);
                return false;
            default:
                services.Metrics.PollEnded("closed", 0);
                return false;
        }
    }

    public void Failed() => services.Metrics.PollEnded("error", 0);

    private void WriteId(IBufferWriter<byte> output)
    {
        output.Write(IdField);
        cursors.WriteTo(output);
    }

    /// <summary>
    /// Flushes, for at most <c>MaxWriteWait</c>: a client that does not read is ended rather than
    /// waited for (it resumes from its last id). False when the stream is over.
    /// </summary>
    private async ValueTask<bool> FlushAsync()
    {
        var sending = target.SendAsync();
        try
        {
            var sent = sending.IsCompleted ? sending.Result : await deadline.WatchAsync(sending).ConfigureAwait(false);
            return sent && !deadline.Passed;
        }
        catch (Exception) when (deadline.Passed)
        {
            // Ended as too slow (counted then): the aborted connection failed the flush.
            return false;
        }
    }

    private static void Write(IBufferWriter<byte> output, string ascii)
    {
        var span = output.GetSpan(ascii.Length);
        var written = System.Text.Encoding.ASCII.GetBytes(ascii, span);
        output.Advance(written);
    }
}

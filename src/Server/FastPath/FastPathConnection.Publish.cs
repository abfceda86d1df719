using System.Buffers;
using System.Text.Json;
using Laharsub.Server.Diagnostics;
using Laharsub.Server.Storage;
using Laharsub.Server.Transport;

namespace Laharsub.Server.FastPath;

/// <summary>A publish to one topic, answered <c>201</c>, or handed to the pipeline unchanged.</summary>
internal sealed partial class FastPathConnection
{
    /// <summary>Publishes and answers, or returns null, having changed and consumed nothing, for the pipeline to answer it.</summary>
    private async ValueTask<Served?> PublishAsync(ReadOnlySequence<byte> buffer, SequencePosition headEnd)
    {
        var bodySequence = buffer.Slice(headEnd, _contentLength);
        byte[]? rented = null;
        ReadOnlyMemory<byte> body;
        if (bodySequence.IsSingleSegment)
        {
            body = bodySequence.First;
        }
        else
        {
            rented = ArrayPool<byte>.Shared.Rent((int)_contentLength);
            bodySequence.CopyTo(rented);
            body = rented.AsMemory(0, (int)_contentLength);
        }
        PublishResult? result;
        var started = System.Diagnostics.Stopwatch.GetTimestamp();
        var activity = LaharsubActivitySource.StartPublish(_topicId);
        try
        {
            result = _idempotencyKey is null
                ? await _state.Store.PublishAsync(_topicId, body, _contentType!, null, _connection.ConnectionClosed).ConfigureAwait(false)
                : await PublishKeyedAsync(body).ConfigureAwait(false);
        }
        catch (LaharsubStoreUnavailableException)
        {
            result = null;
        }
        finally
        {
            if (rented is not null)
            {
                ArrayPool<byte>.Shared.Return(rented);
            }
        }
        using (activity)
        {
            if (result is not { Status: PublishStatus.Published } published)
            {
                // Refused without a change (no topic, another epoch, storage full, store unreachable): the
                // pipeline serves the same request again and answers with its problem details.
                _pipelineReason = "store_refused";
                return null;
            }
            if (_idempotencyKey is null)
            {
                // A keyed publish was counted by StorePublish, unless it was a replay.
                _state.Metrics.Published();
            }
            _state.Metrics.FastPath("publish");
            LaharsubActivitySource.Published(activity, published.MessageId, published.Epoch!);
            result = published;
        }
        _input.AdvanceTo(bodySequence.End);
        var stored = result.Value;
        var json = JsonSerializer.SerializeToUtf8Bytes(new PublishedMessage(_topicId, stored.MessageId, stored.Epoch!), LaharsubJsonContext.Default.PublishedMessage);
        _state.Responses.WritePublished(_output, Cors, json, stored.Epoch!);
        await _output.FlushAsync().ConfigureAwait(false);
        _state.Hosting.Ended("POST", _state.PublishRoute, 201, started, counted: false);
        return Served.Next;
    }

    /// <summary>
    /// A keyed publish: the key recorded with the message in the store's one step, as on the pipeline (the store's
    /// all-or-none publish to one target); a replay of the same request answers the recorded message.
    /// </summary>
    private async ValueTask<PublishResult> PublishKeyedAsync(ReadOnlyMemory<byte> body)
    {
        var published = await StorePublish.PublishAsync(_state.Store, _state.Metrics, [new PublishTarget(_topicId, null)], body, _contentType!,
            _idempotencyKey, _connection.ConnectionClosed).ConfigureAwait(false);
        return published.Status == PublishStatus.Published ? published.Topics[0] : new PublishResult(published.Status);
    }
}

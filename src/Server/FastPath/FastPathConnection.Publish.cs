using System.Buffers;
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
        if (!await AllowsPublishAsync().ConfigureAwait(false) || !TryDrawPublishPermit())
        {
            return null;
        }
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
        StartRequestActivity("POST", _state.TopicsPathText, _topicIdText);
        var activity = LaharsubActivitySource.StartPublish(_topicId);
        try
        {
            result = await StorePublish.PublishOneAsync(_state.Store, _state.Metrics, new PublishTarget(_topicId), body, _contentType!, _idempotencyKey, activity,
                _connection.ConnectionClosed).ConfigureAwait(false);
        }
        catch (LaharsubStoreUnavailableException)
        {
            result = null;
        }
        catch (Exception)
        {
            // The client gone, or a failure the connection closes on: both spans end, as the pipeline's would.
            activity?.Dispose();
            EndRequestActivity()?.Stop();
            throw;
        }
        finally
        {
            if (rented is not null)
            {
                ArrayPool<byte>.Shared.Return(rented);
            }
        }
        if (result is not { Status: PublishStatus.Published } published)
        {
            // Refused without a change (no topic, another epoch, storage full, store unreachable): the
            // pipeline serves the same request again, with activities of its own, and answers with its problem
            // details; this attempt's activities are not recorded.
            HostingTelemetry.Abandon(EndRequestActivity());
            _pipelineReason = "store_refused";
            return null;
        }
        activity?.Dispose();
        _state.Metrics.FastPath("publish");
        _input.AdvanceTo(bodySequence.End);
        _state.Responses.WritePublished(_output, Cors, PublishAnswer.One(_topicId, published), _contentType!);
        await _output.FlushAsync().ConfigureAwait(false);
        _state.Hosting.Ended("POST", _state.PublishRoute, 201, started, EndRequestActivity(), counted: false);
        return Served.Next;
    }
}

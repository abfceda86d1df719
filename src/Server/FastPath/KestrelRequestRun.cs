using System.Buffers;
using System.IO.Pipelines;
using System.Net;
using Microsoft.AspNetCore.Connections;
using Microsoft.AspNetCore.Connections.Features;
using Microsoft.AspNetCore.Http.Features;

namespace Laharsub.Server.FastPath;

/// <summary>
/// The connection as Kestrel's HTTP/1.1 handling sees it for one request the fast path does not take:
/// its input holds that request and then ends, so that Kestrel answers it and returns the connection,
/// and the fast path reads the next request. Nothing else changes: the same socket, features, id and
/// closing token.
/// </summary>
/// <remarks>
/// Kestrel registers a heartbeat callback each time it starts on a connection, and never removes it; a run
/// gets a heartbeat feature of its own (<see cref="Tick"/>, called from the fast path's heartbeat), so that
/// a connection handed to Kestrel for many requests does not accumulate callbacks. For the same reason
/// only the first run sees the connection's metrics tags.
/// </remarks>
internal sealed class KestrelRequestRun : ConnectionContext, IConnectionHeartbeatFeature
{
    private readonly ConnectionContext _connection;
    private readonly OneRequestReader _input;
    private readonly List<(Action<object> Callback, object State)> _heartbeats = [];

    /// <param name="connection">The connection.</param>
    /// <param name="pending">The fast path's last read of the input, not advanced: Kestrel's first read returns it.</param>
    /// <param name="requestLength">The request's length in bytes, head and body; <see cref="long.MaxValue"/> gives Kestrel the rest of the connection.</param>
    /// <param name="first">Whether this is the connection's first run in Kestrel.</param>
    public KestrelRequestRun(ConnectionContext connection, ReadResult pending, long requestLength, bool first)
    {
        _connection = connection;
        _input = new OneRequestReader(connection.Transport.Input, pending, requestLength);
        Transport = new DuplexPipe(_input, new KeptOpenWriter(connection.Transport.Output));
        var features = new FeatureCollection(connection.Features);
        features.Set<IConnectionHeartbeatFeature>(this);
        if (!first)
        {
            features.Set<IConnectionMetricsTagsFeature>(new DiscardedTags());
        }
        Features = features;
    }

    /// <summary>Whether Kestrel, having answered the request, went on to read the next: it keeps the connection alive.</summary>
    public bool KeepsAlive => _input.AskedForMore;

    public override string ConnectionId { get => _connection.ConnectionId; set => _connection.ConnectionId = value; }

    public override IFeatureCollection Features { get; }

    public override IDictionary<object, object?> Items { get => _connection.Items; set => _connection.Items = value; }

    public override IDuplexPipe Transport { get; set; }

    public override CancellationToken ConnectionClosed { get => _connection.ConnectionClosed; set => _connection.ConnectionClosed = value; }

    public override EndPoint? LocalEndPoint { get => _connection.LocalEndPoint; set => _connection.LocalEndPoint = value; }

    public override EndPoint? RemoteEndPoint { get => _connection.RemoteEndPoint; set => _connection.RemoteEndPoint = value; }

    public override void Abort(ConnectionAbortedException abortReason) => _connection.Abort(abortReason);

    public void OnHeartbeat(Action<object> action, object state)
    {
        lock (_heartbeats)
        {
            _heartbeats.Add((action, state));
        }
    }

    /// <summary>Kestrel's timeouts for this run, ticked by the connection's heartbeat.</summary>
    public void Tick()
    {
        lock (_heartbeats)
        {
            foreach (var (callback, state) in _heartbeats)
            {
                callback(state);
            }
        }
    }

    private sealed class DuplexPipe(PipeReader input, PipeWriter output) : IDuplexPipe
    {
        public PipeReader Input { get; } = input;

        public PipeWriter Output { get; } = output;
    }

    private sealed class DiscardedTags : IConnectionMetricsTagsFeature
    {
        public ICollection<KeyValuePair<string, object?>> Tags { get; } = [];
    }

    /// <summary>
    /// The connection's input up to the end of one request, then read as ended. Its first read is the fast
    /// path's own pending one: the pipe would not return data the fast path examined again until more came.
    /// </summary>
    private sealed class OneRequestReader(PipeReader inner, ReadResult pending, long length) : PipeReader
    {
        private long _remaining = length;
        private ReadOnlySequence<byte> _last;
        private bool _fromInner;
        private ReadResult? _pending = new ReadResult(pending.Buffer, isCanceled: false, pending.IsCompleted);

        public bool AskedForMore { get; private set; }

        public override async ValueTask<ReadResult> ReadAsync(CancellationToken cancellationToken = default)
        {
            if (_remaining == 0)
            {
                return Ended();
            }
            if (TakePending() is { } pending)
            {
                return pending;
            }
            return Limit(await inner.ReadAsync(cancellationToken).ConfigureAwait(false));
        }

        public override bool TryRead(out ReadResult result)
        {
            if (_remaining == 0)
            {
                result = Ended();
                return true;
            }
            if (TakePending() is { } pending)
            {
                result = pending;
                return true;
            }
            if (!inner.TryRead(out var read))
            {
                result = default;
                return false;
            }
            result = Limit(read);
            return true;
        }

        private ReadResult? TakePending()
        {
            if (_pending is not { } pending)
            {
                return null;
            }
            _pending = null;
            return Limit(pending);
        }

        private ReadResult Ended()
        {
            AskedForMore = true;
            _fromInner = false;
            return new ReadResult(ReadOnlySequence<byte>.Empty, isCanceled: false, isCompleted: true);
        }

        private ReadResult Limit(ReadResult read)
        {
            _fromInner = true;
            var buffer = read.Buffer;
            var whole = buffer.Length <= _remaining;
            _last = whole ? buffer : buffer.Slice(0, _remaining);
            return new ReadResult(_last, read.IsCanceled, read.IsCompleted && whole);
        }

        public override void AdvanceTo(SequencePosition consumed) => AdvanceTo(consumed, consumed);

        public override void AdvanceTo(SequencePosition consumed, SequencePosition examined)
        {
            if (!_fromInner)
            {
                return;
            }
            _fromInner = false;
            _remaining -= _last.Slice(_last.Start, consumed).Length;
            inner.AdvanceTo(consumed, examined);
        }

        public override void CancelPendingRead() => inner.CancelPendingRead();

        public override void Complete(Exception? exception = null)
        {
            // The connection goes on: the fast path reads the next request from it.
        }
    }

    /// <summary>The connection's output, which Kestrel completing at the end of its run leaves open.</summary>
    private sealed class KeptOpenWriter(PipeWriter inner) : PipeWriter
    {
        public override bool CanGetUnflushedBytes => inner.CanGetUnflushedBytes;

        public override long UnflushedBytes => inner.UnflushedBytes;

        public override void Advance(int bytes) => inner.Advance(bytes);

        public override Memory<byte> GetMemory(int sizeHint = 0) => inner.GetMemory(sizeHint);

        public override Span<byte> GetSpan(int sizeHint = 0) => inner.GetSpan(sizeHint);

        public override ValueTask<FlushResult> FlushAsync(CancellationToken cancellationToken = default) => inner.FlushAsync(cancellationToken);

        public override void CancelPendingFlush() => inner.CancelPendingFlush();

        public override void Complete(Exception? exception = null)
        {
            // The connection goes on.
        }
    }
}

using System.Buffers;
using System.Text;
using System.Text.Json;
using Laharsub.Client.Wire;

namespace Laharsub.Client.Streams;

/// <summary>
/// A Server-Sent Events stream (docs/protocol.md, "Server-Sent Events"), parsed as it arrives: <c>open</c>
/// starts it, message events (the default type) and <c>notice</c> events are the subscription's events,
/// <c>reconnect</c> ends it, heartbeat comments only show that it is alive. The events' ids are not
/// needed: the subscription reopens the stream with its own cursors, which cover exactly what it delivered.
/// </summary>
internal sealed class EventStreamSession : IStreamSession
{
    /// <summary>The longest event this client accepts (a message is at most the server's <c>MaxMessageBytes</c>, in JSON).</summary>
    private const int MaxEventBytes = 64 * 1024 * 1024;

    private readonly LaharsubClient.Exchange _exchange;
    private readonly Stream _stream;
    private readonly ReadBuffer _buffer;
    private readonly JsonMessageReader _messages = new();
    private readonly ArrayBufferWriter<byte> _data = new(1024);
    private readonly TimeProvider _clock;
    private readonly TimeSpan _idleTimeout;
    private readonly CancellationToken _stopped;
    /// <summary>Fires when the stream has not sent <c>open</c> in time; disposed once it has.</summary>
    private CancellationTokenSource? _startDeadline;
    private string _eventType = "";
    private bool _hasData;

    public EventStreamSession(LaharsubClient.Exchange exchange, Stream stream, int address, TimeProvider clock,
        TimeSpan startTimeout, TimeSpan idleTimeout, CancellationToken stopped)
    {
        _exchange = exchange;
        _stream = stream;
        _buffer = new ReadBuffer(stream);
        Address = address;
        _clock = clock;
        _idleTimeout = idleTimeout;
        _stopped = stopped;
        _startDeadline = new CancellationTokenSource(startTimeout, clock);
    }

    public LaharsubTransport Transport => LaharsubTransport.ServerSentEvents;

    public int Address { get; }

    public async ValueTask<StreamStep> NextAsync(CancellationToken changed, CancellationToken cancellationToken)
    {
        while (true)
        {
            cancellationToken.ThrowIfCancellationRequested();
            if (_stopped.IsCancellationRequested)
            {
                return StreamStep.Stopped;
            }
            if (changed.IsCancellationRequested)
            {
                // The rest of the stream is for the old topic set: it is opened again with the new one.
                return StreamStep.Changed;
            }
            StreamStep? step;
            try
            {
                step = ReadBuffered();
            }
            catch (Exception exception) when (exception is InvalidDataException || Notices.IsMalformedJson(exception))
            {
                return StreamStep.Failed(exception as InvalidDataException ?? new InvalidDataException($"An event of the stream is malformed: {exception.Message}", exception));
            }
            if (step is { } ready)
            {
                return ready;
            }
            if (_buffer.IsCompleted)
            {
                return StreamStep.Failed(new IOException("The event stream ended without a reconnect event: the connection was closed."));
            }
            var started = _startDeadline is null;
            using var idle = started ? new CancellationTokenSource(_idleTimeout, _clock) : null;
            var deadline = idle?.Token ?? _startDeadline!.Token;
            using var read = CancellationTokenSource.CreateLinkedTokenSource(changed, _stopped, cancellationToken, deadline);
            try
            {
                await _buffer.FillAsync(read.Token).ConfigureAwait(false);
            }
            catch (Exception) when (cancellationToken.IsCancellationRequested)
            {
                throw new OperationCanceledException(cancellationToken);
            }
            catch (Exception) when (_stopped.IsCancellationRequested)
            {
                return StreamStep.Stopped;
            }
            catch (Exception) when (changed.IsCancellationRequested)
            {
                return StreamStep.Changed;
            }
            catch (Exception exception) when (deadline.IsCancellationRequested)
            {
                return started
                    ? StreamStep.Failed(new TimeoutException($"The event stream sent nothing, not even a heartbeat, for {_idleTimeout} (PollTimeout + RequestTimeout): the connection is taken for dead.", exception))
                    : StreamStep.NotStarted(new TimeoutException("The event stream did not start (no 'subscribed' event) within RequestTimeout: a proxy may be buffering it.", exception));
            }
            catch (Exception exception) when (exception is IOException or HttpRequestException or OperationCanceledException)
            {
                return StreamStep.Failed(exception);
            }
        }
    }

    /// <summary>The next step from the bytes buffered, or <see langword="null"/> when more are needed.</summary>
    private StreamStep? ReadBuffered()
    {
        while (ReadEvent() is { } type)
        {
            var data = _data.WrittenSpan;
            switch (type)
            {
                case "subscribed":
                    _startDeadline?.Dispose();
                    _startDeadline = null;
                    return StreamStep.Subscribed();
                case "" or "message":
                    var reader = new Utf8JsonReader(data);
                    if (!reader.Read() || reader.TokenType != JsonTokenType.StartObject)
                    {
                        throw new InvalidDataException("A message event's data is not a JSON object.");
                    }
                    return StreamStep.Delivered(_messages.Read(ref reader));
                case "notice":
                    if (Notices.Parse(data) is { } notice)
                    {
                        return StreamStep.Delivered(notice);
                    }
                    // A notice type from a newer server: it names no messages of ours.
                    break;
                case "reconnect":
                    return StreamStep.Ended(new IOException($"The server ended the event stream and asked to reconnect: {Encoding.UTF8.GetString(data)}"));
            }
            // Other event types, from newer servers, are passed over.
        }
        return null;
    }

    /// <summary>
    /// Parses lines (ended by LF, CRLF or CR) until an event is complete (a blank line after data); returns
    /// its type, its data in <see cref="_data"/>, or <see langword="null"/> when the buffer holds no
    /// complete event. Comments (<c>: heartbeat</c>), <c>id</c> and <c>retry</c> are read and passed over.
    /// </summary>
    private string? ReadEvent()
    {
        while (true)
        {
            var buffered = _buffer.Data;
            var end = buffered.IndexOfAny((byte)'\n', (byte)'\r');
            if (end < 0)
            {
                if (buffered.Length > MaxEventBytes)
                {
                    throw new InvalidDataException($"A line of the event stream is longer than {MaxEventBytes} bytes.");
                }
                return null;
            }
            var consumed = end + 1;
            if (buffered[end] == '\r')
            {
                if (end + 1 == buffered.Length && !_buffer.IsCompleted)
                {
                    // A CR at the end of what arrived: the LF of a CRLF may follow.
                    return null;
                }
                if (end + 1 < buffered.Length && buffered[end + 1] == '\n')
                {
                    consumed++;
                }
            }
            var line = buffered[..end];
            string? dispatched = null;
            if (line.IsEmpty)
            {
                if (_hasData)
                {
                    dispatched = _eventType;
                }
                else
                {
                    _eventType = "";
                }
            }
            else if (line[0] != ':')
            {
                var colon = line.IndexOf((byte)':');
                var field = colon < 0 ? line : line[..colon];
                var value = colon < 0 ? ReadOnlySpan<byte>.Empty : line[(colon + 1)..];
                if (!value.IsEmpty && value[0] == ' ')
                {
                    value = value[1..];
                }
                if (field.SequenceEqual("data"u8))
                {
                    if (!_hasData)
                    {
                        _data.ResetWrittenCount();
                    }
                    else
                    {
                        _data.Write("\n"u8);
                    }
                    if (_data.WrittenCount + value.Length > MaxEventBytes)
                    {
                        throw new InvalidDataException($"An event of the stream is longer than {MaxEventBytes} bytes.");
                    }
                    _data.Write(value);
                    _hasData = true;
                }
                else if (field.SequenceEqual("event"u8))
                {
                    _eventType = Encoding.UTF8.GetString(value);
                }
            }
            _buffer.Consume(consumed);
            if (dispatched is not null)
            {
                // The data stays in _data until the next event starts.
                _eventType = "";
                _hasData = false;
                return dispatched;
            }
        }
    }

    public ValueTask DisposeAsync()
    {
        _startDeadline?.Dispose();
        _buffer.Dispose();
        _stream.Dispose();
        _exchange.Dispose();
        return ValueTask.CompletedTask;
    }
}

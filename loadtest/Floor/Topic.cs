using System.Buffers;
using System.Text;
using System.Text.Json;

namespace Laharsub.Floor;

/// <summary>A message or notice as a reader gets it: its JSON object, and the reader's cursor after it.</summary>
internal readonly record struct Entry(long Next, byte[] Json, bool IsNotice = false);

/// <summary>
/// One topic: its last <see cref="Capacity"/> messages, none older than <see cref="TimeToLive"/>, in a
/// ring, each kept as the JSON object every transport sends (encoded once, at publish), and a signal
/// that the next publish completes.
/// </summary>
internal sealed class Topic(long id)
{
    /// <summary>Every topic's epoch: the floor never restarts a topic id within a process, so one constant does.</summary>
    public const string Epoch = "floor";

    public const int Capacity = 1000;

    public static readonly TimeSpan TimeToLive = TimeSpan.FromSeconds(15);

    private readonly Lock _lock = new();
    private readonly byte[][] _ring = new byte[Capacity][];
    private readonly DateTimeOffset[] _publishedAt = new DateTimeOffset[Capacity];
    private long _first = 1;
    private long _last;
    private TaskCompletionSource _published = new(TaskCreationOptions.RunContinuationsAsynchronously);

    public long Id => id;

    /// <summary>The id the next message will get: where a subscription without a cursor starts.</summary>
    public long Next
    {
        get
        {
            lock (_lock)
            {
                return _last + 1;
            }
        }
    }

    public long Publish(ReadOnlySpan<byte> body, string contentType)
    {
        TaskCompletionSource published;
        long messageId;
        var now = DateTimeOffset.UtcNow;
        lock (_lock)
        {
            messageId = ++_last;
            _ring[messageId % Capacity] = EncodeMessage(messageId, now, body, contentType);
            _publishedAt[messageId % Capacity] = now;
            while (_first <= _last - Capacity || _publishedAt[_first % Capacity] < now - TimeToLive)
            {
                _first++;
            }
            published = _published;
            _published = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        }
        published.SetResult();
        return messageId;
    }

    /// <summary>
    /// Adds what a reader at <paramref name="from"/> gets now to <paramref name="into"/> (a gap or reset
    /// notice first when its cursor is outside what is retained), moves the cursor past it, and returns
    /// the task that the next publish completes: taken under the same lock, so no publish falls between.
    /// </summary>
    public Task Read(ref long from, List<Entry> into)
    {
        lock (_lock)
        {
            if (from > _last + 1)
            {
                into.Add(new(_first, Notice($"\"reset\",\"reason\":\"beyondEnd\",\"requestedFrom\":{from},\"firstMessageId\":{_first},\"lastMessageId\":{_last}"), IsNotice: true));
                from = _first;
            }
            else if (from < _first)
            {
                into.Add(new(_first, Notice($"\"gap\",\"fromMessageId\":{from},\"toMessageId\":{_first - 1}"), IsNotice: true));
                from = _first;
            }
            for (; from <= _last; from++)
            {
                into.Add(new(from + 1, _ring[from % Capacity]));
            }
            return _published.Task;
        }
    }

    private byte[] Notice(string rest) => Encoding.UTF8.GetBytes($"{{\"type\":{rest},\"topicId\":{id},\"epoch\":\"{Epoch}\"}}");

    // The message object of docs/protocol.md, as Laharsub's WireFormat writes it: written again here,
    // since the floor must cost only what the framework and this file cost, with none of Laharsub's code.
    private byte[] EncodeMessage(long messageId, DateTimeOffset publishedAt, ReadOnlySpan<byte> body, string contentType)
    {
        var buffer = new ArrayBufferWriter<byte>(body.Length * 4 / 3 + 256);
        using (var json = new Utf8JsonWriter(buffer))
        {
            json.WriteStartObject();
            json.WriteNumber("topicId"u8, id);
            json.WriteString("epoch"u8, Epoch);
            json.WriteNumber("messageId"u8, messageId);
            json.WriteString("publishedAt"u8, publishedAt);
            json.WriteString("contentType"u8, contentType);
            if (IsTextual(contentType) && System.Text.Unicode.Utf8.IsValid(body))
            {
                json.WriteString("encoding"u8, "text"u8);
                json.WriteString("body"u8, body);
            }
            else
            {
                json.WriteString("encoding"u8, "base64"u8);
                json.WriteBase64String("body"u8, body);
            }
            json.WriteEndObject();
        }
        return buffer.WrittenSpan.ToArray();
    }

    private static bool IsTextual(string contentType) =>
        contentType.StartsWith("text/", StringComparison.OrdinalIgnoreCase) || contentType.Contains("json", StringComparison.OrdinalIgnoreCase);
}

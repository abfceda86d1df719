using System.Buffers;
using System.Buffers.Text;
using Laharsub.Server.Storage;
using Laharsub.Server.Wire;

namespace Laharsub.Server.Delivery;

/// <summary>
/// A stream's cursors as its client holds them: each topic's next message id and epoch, moved by every
/// message and notice with the client cursor rule of docs/protocol.md, so that a transport can tell the
/// client, after any event, exactly where to resume (an SSE event's id) or restart its own run with them
/// (a WebSocket whose topics change).
/// </summary>
internal sealed class StreamCursors
{
    private readonly List<Entry> _entries = [];
    private readonly Dictionary<long, int> _index = [];

    /// <summary>The topics still followed (deleted ones leave), in subscription order.</summary>
    public int Count => _entries.Count;

    /// <summary>Starts from the positions the runner resolved (<see cref="ISubscriptionSink.PositionedAsync"/>).</summary>
    public void Reset(ReadOnlySpan<Subscription> positions)
    {
        _entries.Clear();
        _index.Clear();
        foreach (var position in positions)
        {
            Set(position);
        }
    }

    /// <summary>Adds a topic or moves it to <paramref name="position"/>.</summary>
    public void Set(Subscription position)
    {
        var entry = new Entry(position.TopicId, position.From ?? 0, position.Epoch, position.State);
        if (_index.TryGetValue(position.TopicId, out var at))
        {
            _entries[at] = entry;
            return;
        }
        _index[position.TopicId] = _entries.Count;
        _entries.Add(entry);
    }

    /// <summary>Removes a topic; false when it was not followed.</summary>
    public bool Remove(long topicId)
    {
        if (!_index.Remove(topicId, out var at))
        {
            return false;
        }
        _entries.RemoveAt(at);
        for (var i = at; i < _entries.Count; i++)
        {
            _index[_entries[i].TopicId] = i;
        }
        return true;
    }

    public bool Contains(long topicId) => _index.ContainsKey(topicId);

    /// <summary>Moves past a delivered message.</summary>
    public void Apply(Message message)
    {
        if (_index.TryGetValue(message.TopicId, out var at))
        {
            var entry = _entries[at];
            _entries[at] = entry with { Cursor = Math.Max(entry.Cursor, message.MessageId + 1), Epoch = message.Epoch };
        }
    }

    /// <summary>Applies a notice: past a gap or a conflated range, to a reset's first message and epoch, out after a deletion.</summary>
    public void Apply(in PollNotice notice)
    {
        if (!_index.TryGetValue(notice.TopicId, out var at))
        {
            return;
        }
        var entry = _entries[at];
        switch (notice.Kind)
        {
            case PollNoticeKind.Gap or PollNoticeKind.Conflated:
                _entries[at] = entry with { Cursor = Math.Max(entry.Cursor, notice.ToMessageId + 1), Epoch = notice.Epoch };
                break;
            case PollNoticeKind.Reset or PollNoticeKind.EpochReset:
                _entries[at] = entry with { Cursor = notice.FirstMessageId, Epoch = notice.Epoch };
                break;
            case PollNoticeKind.State:
                _entries[at] = entry with { Cursor = notice.ToMessageId + 1, Epoch = notice.Epoch, State = false };
                break;
            case PollNoticeKind.TopicDeleted:
                Remove(notice.TopicId);
                break;
        }
    }

    /// <summary>The positions to run from, in subscription order.</summary>
    public Subscription[] ToSubscriptions()
    {
        var subscriptions = new Subscription[_entries.Count];
        for (var i = 0; i < subscriptions.Length; i++)
        {
            var entry = _entries[i];
            subscriptions[i] = new Subscription(entry.TopicId, entry.Cursor > 0 ? entry.Cursor : null, entry.Epoch, entry.State);
        }
        return subscriptions;
    }

    /// <summary>Writes the cursors in the compact syntax of <c>topics</c>: <c>14:44~9f3c0a1b2c3d4e5f,15:8~a1b2c3d4e5f60718</c>.</summary>
    public void WriteTo(IBufferWriter<byte> output)
    {
        for (var i = 0; i < _entries.Count; i++)
        {
            var entry = _entries[i];
            // Up to 20 digits each for the id and cursor, separators, and the epoch (ASCII, at most 32).
            var span = output.GetSpan(48 + (entry.Epoch?.Length ?? 0));
            var written = 0;
            if (i > 0)
            {
                span[written++] = (byte)',';
            }
            Utf8Formatter.TryFormat(entry.TopicId, span[written..], out var length);
            written += length;
            if (entry.State)
            {
                // Its document not delivered yet: a resume asks for it again.
                ":state"u8.CopyTo(span[written..]);
                written += 6;
            }
            else if (entry.Cursor > 0)
            {
                span[written++] = (byte)':';
                Utf8Formatter.TryFormat(entry.Cursor, span[written..], out length);
                written += length;
            }
            if (entry.Epoch is { } epoch)
            {
                span[written++] = (byte)'~';
                // Epochs are ASCII (EpochText.IsValid, or the store's hex).
                for (var c = 0; c < epoch.Length; c++)
                {
                    span[written++] = (byte)epoch[c];
                }
            }
            output.Advance(written);
        }
    }

    private readonly record struct Entry(long TopicId, long Cursor, string? Epoch, bool State = false);
}

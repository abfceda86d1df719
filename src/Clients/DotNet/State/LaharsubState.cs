using System.Diagnostics.CodeAnalysis;
using System.Net.Http.Headers;
using System.Runtime.CompilerServices;
using System.Text.Json;
using System.Text.Json.Nodes;
using System.Threading.Channels;

namespace Laharsub.Client;

/// <summary>What changed a <see cref="LaharsubState{T}"/>.</summary>
public enum StateChangeKind
{
    /// <summary>The whole document came from the server (a <see cref="StateNotice"/>): first, or again after the subscription fell behind or the topic was reset.</summary>
    Snapshot,
    /// <summary>A merge patch was applied.</summary>
    Patch,
    /// <summary>The document was replaced as a whole.</summary>
    Replace,
    /// <summary>The topic was deleted; the value stays the last one and nothing more comes.</summary>
    Deleted,
}

/// <summary>One change of a <see cref="LaharsubState{T}"/>: the value after it, its version, and which top-level fields it changed.</summary>
/// <typeparam name="T">The document's type.</typeparam>
public sealed class StateChangedEventArgs<T> : EventArgs
{
    internal StateChangedEventArgs(StateChangeKind kind, T? value, long version, string? epoch, IReadOnlyList<string> changedFields)
    {
        Kind = kind;
        Value = value;
        Version = version;
        Epoch = epoch;
        ChangedFields = changedFields;
    }

    /// <summary>What brought the change.</summary>
    public StateChangeKind Kind { get; }

    /// <summary>The document after the change, deserialized.</summary>
    public T? Value { get; }

    /// <summary>The document's version after the change (the id of the last message applied).</summary>
    public long Version { get; }

    /// <summary>The topic's epoch (its incarnation).</summary>
    public string? Epoch { get; }

    /// <summary>The names of the document's top-level fields whose value the change added, changed or removed (as in the JSON), in document order.</summary>
    public IReadOnlyList<string> ChangedFields { get; }

    /// <inheritdoc/>
    public override string ToString() => $"{Kind} to version {Version}: {string.Join(", ", ChangedFields)}";
}

/// <summary>What a <see cref="LaharsubSubscription"/> tells the state views of its topics.</summary>
internal interface IStateView
{
    long TopicId { get; }

    /// <summary>An event of the view's topic that the subscription is about to deliver; <see langword="false"/> when the view lost track and needs the document again.</summary>
    bool Track(SubscriptionEvent item);

    /// <summary>The subscription's enumeration ended: with <paramref name="error"/> when it failed.</summary>
    void Closed(Exception? error);
}

/// <summary>
/// A state topic's document, always current: the subscription it belongs to asks for the document first
/// (the <c>state</c> cursor), then applies every merge patch and replacement in order, and takes the whole
/// document again by itself whenever the server sends it (after falling behind retention, a reset, a
/// conflated run that needed it). <see cref="Value"/> and <see cref="Version"/> are the latest; each change
/// raises <see cref="Changed"/> and is delivered to every <see cref="ReadChangesAsync"/> enumeration.
/// </summary>
/// <remarks>
/// From <see cref="LaharsubSubscription.AddState{T}(long, System.Text.Json.Serialization.Metadata.JsonTypeInfo{T})"/>,
/// the view changes while the subscription's <see cref="LaharsubSubscription.ReadAllAsync"/> is enumerated,
/// just before it yields each event of the topic, and <see cref="Changed"/> runs on that thread. From
/// <see cref="LaharsubClient.SubscribeState{T}(long, System.Text.Json.Serialization.Metadata.JsonTypeInfo{T}, CancellationToken)"/>
/// the view owns a subscription and reads it in the background until disposed.
/// </remarks>
/// <typeparam name="T">The document's type, deserialized after every change.</typeparam>
public sealed class LaharsubState<T> : IStateView, IAsyncDisposable
{
    private readonly Func<JsonObject, T?> _deserialize;
    private readonly object _gate = new();
    private readonly List<Channel<StateChangedEventArgs<T>>> _readers = [];
    private readonly TaskCompletionSource _first = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private JsonObject? _document;
    private T? _value;
    private long _version;
    private string? _epoch;
    /// <summary>The id the next message must have: the version + 1, or past a conflated run.</summary>
    private long _next;
    private bool _ended;
    private Exception? _error;
    private Task? _pump;
    private readonly bool _ownsSubscription;

    internal LaharsubState(LaharsubSubscription subscription, long topicId, Func<JsonObject, T?> deserialize, bool ownsSubscription)
    {
        Subscription = subscription;
        TopicId = topicId;
        _deserialize = deserialize;
        _ownsSubscription = ownsSubscription;
    }

    /// <summary>The state topic.</summary>
    public long TopicId { get; }

    /// <summary>The subscription that feeds the view (a subscription of the view's own from <see cref="LaharsubClient.SubscribeState{T}(long, System.Text.Json.Serialization.Metadata.JsonTypeInfo{T}, CancellationToken)"/>).</summary>
    public LaharsubSubscription Subscription { get; }

    /// <summary>Whether the document has come (<see cref="Value"/> and <see cref="Version"/> mean something).</summary>
    public bool HasValue
    {
        get
        {
            lock (_gate)
            {
                return _document is not null;
            }
        }
    }

    /// <summary>The document, deserialized; <see langword="default"/> until it came.</summary>
    public T? Value
    {
        get
        {
            lock (_gate)
            {
                return _value;
            }
        }
    }

    /// <summary>The document's version: the id of the last message applied (0 before the first, and until the document came).</summary>
    public long Version
    {
        get
        {
            lock (_gate)
            {
                return _version;
            }
        }
    }

    /// <summary>The topic's epoch (its incarnation), once known: with <see cref="Version"/>, the condition of a compare-and-set (<see cref="PublishOptions.ExpectedVersion"/>).</summary>
    public string? Epoch
    {
        get
        {
            lock (_gate)
            {
                return _epoch;
            }
        }
    }

    /// <summary>A copy of the document as JSON; <see langword="null"/> until it came.</summary>
    public JsonObject? GetDocument()
    {
        lock (_gate)
        {
            return (JsonObject?)_document?.DeepClone();
        }
    }

    /// <summary>
    /// Raised after each change, with the value and the fields it changed; the sender is the view. Runs on
    /// the thread that reads the subscription: keep it short.
    /// </summary>
    public event EventHandler<StateChangedEventArgs<T>>? Changed;

    /// <summary>Waits until the document has come; returns its value.</summary>
    /// <param name="cancellationToken">Stops waiting.</param>
    /// <exception cref="LaharsubException">The subscription ended on a refusal before the document came (e.g. <c>400</c>: the topic holds no state).</exception>
    public async Task<T?> WaitForValueAsync(CancellationToken cancellationToken = default)
    {
        await _first.Task.WaitAsync(cancellationToken).ConfigureAwait(false);
        return Value;
    }

    /// <summary>
    /// The changes from now on, each once, in order: first the current document as a <see cref="StateChangeKind.Snapshot"/>
    /// (when it has come), then every change. Ends when the view is disposed, or throws what ended its subscription.
    /// Each enumeration has its own queue, so a slow reader misses nothing and holds up no other.
    /// </summary>
    /// <param name="cancellationToken">Stops the enumeration.</param>
    public async IAsyncEnumerable<StateChangedEventArgs<T>> ReadChangesAsync([EnumeratorCancellation] CancellationToken cancellationToken = default)
    {
        var channel = Channel.CreateUnbounded<StateChangedEventArgs<T>>(new UnboundedChannelOptions { SingleReader = true });
        lock (_gate)
        {
            if (_document is not null)
            {
                channel.Writer.TryWrite(new StateChangedEventArgs<T>(StateChangeKind.Snapshot, _value, _version, _epoch, [.. _document.Select(field => field.Key)]));
            }
            if (_ended)
            {
                channel.Writer.TryComplete(_error);
            }
            else
            {
                _readers.Add(channel);
            }
        }
        try
        {
            await foreach (var change in channel.Reader.ReadAllAsync(cancellationToken).ConfigureAwait(false))
            {
                yield return change;
            }
        }
        finally
        {
            lock (_gate)
            {
                _readers.Remove(channel);
            }
        }
    }

    /// <summary>Starts reading the view's own subscription in the background.</summary>
    internal void Start(CancellationToken cancellationToken) => _pump = PumpAsync(cancellationToken);

    private async Task PumpAsync(CancellationToken cancellationToken)
    {
        try
        {
            // The subscription applies each event to this view before yielding it (and calls Closed when it ends).
            await foreach (var _ in Subscription.ReadAllAsync(cancellationToken).ConfigureAwait(false))
            {
            }
        }
        catch (Exception)
        {
            // Closed has recorded the error for the readers.
        }
    }

    bool IStateView.Track(SubscriptionEvent item)
    {
        StateChangedEventArgs<T>? change;
        lock (_gate)
        {
            if (_ended)
            {
                return true;
            }
            switch (item)
            {
                case StateNotice state:
                    var document = JsonObject.Create(state.Document)!;
                    change = Changing(StateChangeKind.Snapshot, ChangedFields(_document, document), document, state.Version, state.Epoch);
                    break;
                case ConflatedNotice conflated when _document is not null && conflated.FromMessageId == _next:
                    _next = conflated.ToMessageId + 1;
                    return true;
                case LaharsubMessage message when _document is not null && message.MessageId == _next:
                    if (!TryApply(message, out change))
                    {
                        return false;
                    }
                    break;
                case ResetNotice or LaharsubMessage or ConflatedNotice:
                    // The subscription asks for the document again (a reset brings it anyway): until it
                    // comes, what arrives cannot be applied to what this view holds.
                    _next = -1;
                    return item is ResetNotice;
                case TopicDeletedNotice:
                    _ended = true;
                    change = new StateChangedEventArgs<T>(StateChangeKind.Deleted, _value, _version, _epoch, []);
                    break;
                default:
                    // A gap never comes on a state topic; if it did, the document is the way back.
                    return item is not GapNotice;
            }
            foreach (var reader in _readers)
            {
                reader.Writer.TryWrite(change);
                if (_ended)
                {
                    reader.Writer.TryComplete();
                }
            }
        }
        _first.TrySetResult();
        Changed?.Invoke(this, change);
        return true;
    }

    /// <summary>Applies a patch or a replacement; <see langword="false"/> for a body that is neither (the document is then asked for again).</summary>
    private bool TryApply(LaharsubMessage message, [NotNullWhen(true)] out StateChangedEventArgs<T>? change)
    {
        change = null;
        var mediaType = MediaTypeHeaderValue.TryParse(message.ContentType, out var parsed) ? parsed.MediaType : null;
        var replace = string.Equals(mediaType, "application/json", StringComparison.OrdinalIgnoreCase);
        if (!replace && !string.Equals(mediaType, JsonMergePatch.MediaType, StringComparison.OrdinalIgnoreCase))
        {
            return false;
        }
        JsonObject body;
        try
        {
            if (JsonNode.Parse(message.Body.Span) is not JsonObject json)
            {
                return false;
            }
            body = json;
        }
        catch (JsonException)
        {
            return false;
        }
        if (replace)
        {
            change = Changing(StateChangeKind.Replace, ChangedFields(_document, body), body, message.MessageId, message.Epoch);
            return true;
        }
        // Only the patch's fields can change: compare them before and after.
        var before = body.Select(field => (field.Key, Old: _document!.TryGetPropertyValue(field.Key, out var old) ? old?.DeepClone() : null,
            Had: _document.ContainsKey(field.Key))).ToList();
        JsonMergePatch.Apply(_document, body);
        var changed = before.Where(field => field.Had != _document!.ContainsKey(field.Key)
            || !JsonNode.DeepEquals(field.Old, _document[field.Key])).Select(field => field.Key).ToList();
        change = Changing(StateChangeKind.Patch, changed, _document!, message.MessageId, message.Epoch);
        return true;
    }

    /// <summary>Takes the new document and version; the change to report.</summary>
    private StateChangedEventArgs<T> Changing(StateChangeKind kind, IReadOnlyList<string> changedFields, JsonObject document, long version, string? epoch)
    {
        _document = document;
        _version = version;
        _next = version + 1;
        _epoch = epoch ?? _epoch;
        _value = _deserialize(document);
        return new StateChangedEventArgs<T>(kind, _value, _version, _epoch, changedFields);
    }

    /// <summary>The top-level fields that differ between two documents: the new one's in its order, then those only the old one had.</summary>
    private static List<string> ChangedFields(JsonObject? before, JsonObject after)
    {
        var changed = after.Where(field => before is null || !before.TryGetPropertyValue(field.Key, out var old) || !JsonNode.DeepEquals(old, field.Value))
            .Select(field => field.Key).ToList();
        if (before is not null)
        {
            changed.AddRange(before.Where(field => !after.ContainsKey(field.Key)).Select(field => field.Key));
        }
        return changed;
    }

    void IStateView.Closed(Exception? error)
    {
        lock (_gate)
        {
            if (!_ownsSubscription && error is null)
            {
                // The caller's enumeration may start again: the view goes on with it.
                return;
            }
            _ended = true;
            _error = error;
            foreach (var reader in _readers)
            {
                reader.Writer.TryComplete(error);
            }
            _readers.Clear();
        }
        if (error is not null)
        {
            _first.TrySetException(error);
        }
        else
        {
            _first.TrySetCanceled();
        }
    }

    /// <summary>Stops the view: a view with its own subscription disposes it; one added to a subscription stops following it (the topic stays subscribed).</summary>
    public async ValueTask DisposeAsync()
    {
        Subscription.Detach(this);
        if (_ownsSubscription)
        {
            await Subscription.DisposeAsync().ConfigureAwait(false);
            if (_pump is not null)
            {
                await _pump.ConfigureAwait(false);
            }
        }
        lock (_gate)
        {
            _ended = true;
            foreach (var reader in _readers)
            {
                reader.Writer.TryComplete();
            }
        }
        _first.TrySetCanceled();
    }
}

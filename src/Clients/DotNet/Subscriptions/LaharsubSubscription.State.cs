using System.Diagnostics.CodeAnalysis;
using System.Text.Json;
using System.Text.Json.Nodes;
using System.Text.Json.Serialization.Metadata;

namespace Laharsub.Client;

public sealed partial class LaharsubSubscription
{
    /// <summary>The state views following topics of this subscription, by topic. Guarded by <see cref="_gate"/>.</summary>
    private readonly Dictionary<long, IStateView> _states = [];

    /// <summary>
    /// Subscribes to a state topic from its document: the server sends a <see cref="StateNotice"/> with the
    /// whole document and its version, then every change after it (merge patches and replacements), on
    /// whatever transport the subscription uses. A topic already subscribed takes the document again.
    /// </summary>
    /// <param name="topicId">The state topic's id (positive). A topic without state makes the server refuse the subscription (<c>400</c>).</param>
    public void AddState(long topicId)
    {
        LaharsubClient.ThrowIfNotId(topicId);
        ObjectDisposedException.ThrowIf(_stopped.IsCancellationRequested, this);
        Change(topicId, cursors =>
        {
            cursors[topicId] = TopicCursor.ForState;
            return true;
        });
    }

    /// <summary>
    /// Subscribes to a state topic (<see cref="AddState(long)"/>) and returns a view that holds its document,
    /// always current, as a <typeparamref name="T"/> with source-generated metadata (trimming and AOT safe).
    /// The view changes while <see cref="ReadAllAsync"/> is enumerated (which still delivers every event).
    /// </summary>
    /// <typeparam name="T">The document's type.</typeparam>
    /// <param name="topicId">The state topic's id (positive).</param>
    /// <param name="typeInfo">The metadata of <typeparamref name="T"/>, e.g. <c>MyJsonContext.Default.Quote</c>.</param>
    /// <exception cref="InvalidOperationException">A view of this topic is already following this subscription.</exception>
    public LaharsubState<T> AddState<T>(long topicId, JsonTypeInfo<T> typeInfo)
    {
        ArgumentNullException.ThrowIfNull(typeInfo);
        return AddView(topicId, document => document.Deserialize(typeInfo), ownsSubscription: false);
    }

    /// <summary>As <see cref="AddState{T}(long, JsonTypeInfo{T})"/>, with reflection-based System.Text.Json.</summary>
    /// <typeparam name="T">The document's type.</typeparam>
    /// <param name="topicId">The state topic's id (positive).</param>
    /// <param name="options">Serializer options; <see langword="null"/> uses <see cref="JsonSerializerDefaults.Web"/> (camelCase).</param>
    /// <exception cref="InvalidOperationException">A view of this topic is already following this subscription.</exception>
    [RequiresUnreferencedCode("Reflection-based JSON; use the JsonTypeInfo<T> overload when trimming.")]
    [RequiresDynamicCode("Reflection-based JSON; use the JsonTypeInfo<T> overload for native AOT.")]
    public LaharsubState<T> AddState<T>(long topicId, JsonSerializerOptions? options = null)
    {
        var serializer = options ?? LaharsubClient.WebJsonOptions;
        return AddView(topicId, document => document.Deserialize<T>(serializer), ownsSubscription: false);
    }

    internal LaharsubState<T> AddView<T>(long topicId, Func<JsonObject, T?> deserialize, bool ownsSubscription)
    {
        LaharsubClient.ThrowIfNotId(topicId);
        var view = new LaharsubState<T>(this, topicId, deserialize, ownsSubscription);
        lock (_gate)
        {
            if (!_states.TryAdd(topicId, view))
            {
                throw new InvalidOperationException($"A state view of topic {topicId} already follows this subscription: use that one.");
            }
        }
        AddState(topicId);
        return view;
    }

    /// <summary>Stops telling a view about its topic.</summary>
    internal void Detach(IStateView view)
    {
        lock (_gate)
        {
            if (_states.TryGetValue(view.TopicId, out var known) && ReferenceEquals(known, view))
            {
                _states.Remove(view.TopicId);
            }
        }
    }

    private List<IStateView> StateViews()
    {
        lock (_gate)
        {
            return [.. _states.Values];
        }
    }

    /// <summary>
    /// Applies an event about to be delivered to its topic's state view, if any; when the view has lost
    /// track (a message it cannot apply to what it holds), its topic asks for the document again.
    /// </summary>
    private void Track(SubscriptionEvent item)
    {
        IStateView? view;
        lock (_gate)
        {
            if (!_states.TryGetValue(item.TopicId, out view))
            {
                return;
            }
        }
        if (!view.Track(item))
        {
            Change(item.TopicId, cursors =>
            {
                if (!cursors.ContainsKey(item.TopicId))
                {
                    return false;
                }
                cursors[item.TopicId] = TopicCursor.ForState;
                return true;
            });
        }
    }
}

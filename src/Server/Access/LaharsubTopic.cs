namespace Laharsub.Server;

/// <summary>
/// The resource of a <see cref="LaharsubRequirement"/>: the topic an operation is on, by id and label. Creating a
/// topic names only the label it asks for; listing asks once for the listing (neither) and then for each topic;
/// the admin page's data names neither.
/// </summary>
public sealed class LaharsubTopic
{
    /// <summary>A topic, or the listing or topic to be created when <paramref name="topicId"/> is null.</summary>
    public LaharsubTopic(long? topicId, string? label)
    {
        TopicId = topicId;
        Label = label;
    }

    /// <summary>The topic's id; null for a topic not created yet, the listing and the admin data.</summary>
    public long? TopicId { get; }

    /// <summary>The topic's label (or the one a creation asks for); null when it has none, or does not exist.</summary>
    public string? Label { get; }

    /// <inheritdoc/>
    public override string ToString() => TopicId is { } id ? (Label is null ? $"topic {id}" : $"topic {id} ('{Label}')") : Label is null ? "topics" : $"a topic labelled '{Label}'";
}

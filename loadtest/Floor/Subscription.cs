using System.Buffers;
using System.Buffers.Text;
using System.Text;

namespace Laharsub.Floor;

/// <summary>One topic of a poll or stream and its cursor: the next message id the client wants.</summary>
internal sealed class Subscription(Topic topic, long from)
{
    public Topic Topic { get; } = topic;

    public long From = from;

    /// <summary>
    /// The compact query <c>topics=14:43~epoch,15</c> (the epoch is read past: the floor has one); a
    /// topic without a cursor starts at the next message. Null, with the 400 or 404 to answer, when it is bad.
    /// </summary>
    public static Subscription[]? Parse(string query, Topics topics, out IResult? problem)
    {
        var parts = query.Split(',', StringSplitOptions.RemoveEmptyEntries);
        var subscriptions = new Subscription[parts.Length];
        problem = null;
        for (var i = 0; i < parts.Length; i++)
        {
            var part = parts[i].AsSpan();
            part = part.IndexOf('~') is >= 0 and var tilde ? part[..tilde] : part;
            var colon = part.IndexOf(':');
            long from = 0;
            if (!long.TryParse(colon >= 0 ? part[..colon] : part, out var id) || id <= 0 || (colon >= 0 && (!long.TryParse(part[(colon + 1)..], out from) || from <= 0)))
            {
                problem = TypedResults.Problem($"'{parts[i]}' is not topicId[:from][~epoch].", statusCode: StatusCodes.Status400BadRequest);
                return null;
            }
            if (!topics.TryGet(id, out var topic))
            {
                problem = TypedResults.Problem($"Topic {id} does not exist.", statusCode: StatusCodes.Status404NotFound);
                return null;
            }
            subscriptions[i] = new Subscription(topic, colon >= 0 ? from : topic.Next);
        }
        if (subscriptions.Length == 0)
        {
            problem = TypedResults.Problem("Name at least one topic: topics=14:43,15.", statusCode: StatusCodes.Status400BadRequest);
        }
        return problem is null ? subscriptions : null;
    }

    /// <summary>The cursors in the query's syntax (an SSE event's id): <c>14:44~floor,15:8~floor</c>.</summary>
    public static void WriteCursors(IBufferWriter<byte> writer, Subscription[] subscriptions)
    {
        for (var i = 0; i < subscriptions.Length; i++)
        {
            var span = writer.GetSpan(64);
            var written = 0;
            if (i > 0)
            {
                span[written++] = (byte)',';
            }
            Utf8Formatter.TryFormat(subscriptions[i].Topic.Id, span[written..], out var count);
            written += count;
            span[written++] = (byte)':';
            Utf8Formatter.TryFormat(subscriptions[i].From, span[written..], out count);
            written += count;
            written += Encoding.ASCII.GetBytes("~" + Topic.Epoch, span[written..]);
            writer.Advance(written);
        }
    }

    /// <summary><c>{"topics":[{"topicId":14,"epoch":"floor","from":43}]}</c>: the open event's data and the subscribed frame's list.</summary>
    public static byte[] Describe(Subscription[] subscriptions, string prefix = "{") =>
        Encoding.UTF8.GetBytes(prefix + "\"topics\":[" + string.Join(',', subscriptions.Select(s => $"{{\"topicId\":{s.Topic.Id},\"epoch\":\"{Topic.Epoch}\",\"from\":{s.From}}}")) + "]}");
}

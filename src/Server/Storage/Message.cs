using System.Diagnostics;
using System.Runtime.CompilerServices;

namespace Laharsub.Server.Storage;

/// <summary>A published message as a store keeps it: ids, epoch, time, content type, the body's bytes, and the publish's trace context when it was traced.</summary>
/// <param name="topicId">The topic.</param>
/// <param name="epoch">The topic's incarnation the message belongs to.</param>
/// <param name="messageId">Its id within the topic.</param>
/// <param name="publishedAt">When the store accepted it.</param>
/// <param name="contentType">The publisher's content type.</param>
/// <param name="body">The body, byte for byte; the message keeps this memory, so pass a copy the store owns.</param>
/// <param name="traceContext">The trace context of the publish (<see cref="PublisherTraceContext"/> when the store accepted it), or default when it was not traced.</param>
public sealed class Message(long topicId, string epoch, long messageId, DateTimeOffset publishedAt, string contentType, ReadOnlyMemory<byte> body,
    ActivityContext traceContext = default)
{
    // Boxed, so that an untraced message (the usual case) pays one null reference, not the context's 32 bytes.
    private readonly StrongBox<ActivityContext>? _traceContext = traceContext == default ? null : new(traceContext);

    /// <summary>The topic.</summary>
    public long TopicId { get; } = topicId;

    /// <summary>The topic's incarnation the message belongs to.</summary>
    public string Epoch { get; } = epoch;

    /// <summary>Its id within the topic.</summary>
    public long MessageId { get; } = messageId;

    /// <summary>When the store accepted it.</summary>
    public DateTimeOffset PublishedAt { get; } = publishedAt;

    /// <summary>The publisher's content type.</summary>
    public string ContentType { get; } = contentType;

    /// <summary>The body, byte for byte as published.</summary>
    public ReadOnlyMemory<byte> Body { get; } = body;

    /// <summary>
    /// The trace context of the publish that stored the message, or default when that publish was not
    /// traced: a poll or stream that delivers the message links its span to it.
    /// </summary>
    public ActivityContext TraceContext => _traceContext?.Value ?? default;

    /// <summary>Whether the message carries a publisher's trace context.</summary>
    internal bool IsTraced => _traceContext is not null;

    /// <summary>
    /// The trace context a store keeps with a message it is asked to publish now: that of
    /// <see cref="Activity.Current"/> (the server's <c>publish</c> activity, or an in-process publisher's
    /// own) when it is recorded, else default. Default, at no cost, while nothing is traced.
    /// </summary>
    public static ActivityContext PublisherTraceContext => Activity.Current is { Recorded: true } current ? current.Context : default;

    /// <summary>
    /// Whether a store may keep <paramref name="contentType"/>: it is sent as a header of the message's
    /// part in multipart poll answers, so it must not be empty nor hold a control character other than
    /// tab (a line break would end the header and let the publisher write the part's other headers). A
    /// store answers <see cref="PublishStatus.InvalidContentType"/> for any other.
    /// </summary>
    /// <param name="contentType">A content type such as <c>text/plain; charset=utf-8</c>.</param>
    public static bool IsValidContentType(string contentType)
    {
        ArgumentNullException.ThrowIfNull(contentType);
        foreach (var c in contentType)
        {
            if ((c < ' ' && c != '\t') || c == '\x7f')
            {
                return false;
            }
        }
        return contentType.Length > 0;
    }

    /// <summary>
    /// This server instance's JSON encoding of the message, made once on first delivery and then sent to every
    /// subscriber (the wire layer fills it); a store that hands out the same <see cref="Message"/> object for the
    /// same message gets encode-once for free. Fields of the message itself, not an object beside it: a retained
    /// message is copied by the collections that promote it, one object fewer each.
    /// </summary>
    internal byte[]? JsonEncoding;

    /// <summary>The multipart part, as <see cref="JsonEncoding"/>; the wire layer may store a marker of its own.</summary>
    internal byte[]? MultipartEncoding;

    private IRetentionBudget? _budget;

    /// <summary>Whether a store retains the message (and counts it against its budget), rather than it being built for one answer.</summary>
    internal bool IsRetained => _budget is not null;

    /// <summary>
    /// Makes <paramref name="budget"/> count what the message costs later: its wire encodings beyond
    /// <see cref="RetainedCost.Of(Message)"/>'s estimate, charged as they are made. A store calls it once,
    /// after charging the message's <see cref="RetainedCost.Of(Message)"/> to it and before anyone else
    /// sees the message, and calls <see cref="Retire"/> when it stops counting the message. A message
    /// nothing counts (read from a store and not kept) lives only as long as the polls that read it.
    /// </summary>
    /// <param name="budget">What counts the store's retained (or cached) messages.</param>
    public void CountAgainst(IRetentionBudget budget)
    {
        ArgumentNullException.ThrowIfNull(budget);
        _budget = budget;
    }

    /// <summary>Bytes charged to the budget for encodings; -1 once retired.</summary>
    private long _encodingCharge;

    /// <summary>
    /// Charges <paramref name="bytes"/> more for an encoding about to be kept on the message. False when the
    /// budget is full: then the encoding is used once and not kept. True, charging nothing, when nothing
    /// counts the message (any longer): it lives only as long as the polls holding it.
    /// </summary>
    internal bool TryChargeEncoding(long bytes)
    {
        var budget = _budget;
        var charged = Volatile.Read(ref _encodingCharge);
        if (bytes == 0 || budget is null || charged < 0)
        {
            return true;
        }
        if (!budget.TryCharge(bytes))
        {
            return false;
        }
        while (true)
        {
            var seen = Interlocked.CompareExchange(ref _encodingCharge, charged + bytes, charged);
            if (seen == charged)
            {
                return true;
            }
            if (seen < 0)
            {
                // Retired meanwhile, releasing what it had: this charge too must go.
                budget.Release(bytes);
                return true;
            }
            charged = seen;
        }
    }

    /// <summary>
    /// Releases what the message's encodings were charged (<see cref="CountAgainst"/>), when its store
    /// stops counting it (dropped, expired, deleted, evicted); its <see cref="RetainedCost.Of(Message)"/>
    /// the store releases itself. Once: later calls release nothing.
    /// </summary>
    public void Retire()
    {
        var charged = Interlocked.Exchange(ref _encodingCharge, -1);
        if (charged > 0)
        {
            _budget?.Release(charged);
        }
    }
}

using Laharsub.Server.Delivery;
using Laharsub.Server.Storage;
using Laharsub.Server.Wire;
using Microsoft.AspNetCore.WebUtilities;

namespace Laharsub.Server.Transport;

/// <summary>
/// A poll's query string, parsed and validated: its subscriptions and timeout, or the one parameter
/// that is wrong and why. Accepts the original indexed form (<c>subs[0][topicid]=14&amp;subs[0][from]=3</c>,
/// as jQuery's <c>$.param</c> writes it) and the compact form (<c>topics=14:3,15</c>).
/// </summary>
internal readonly struct SubscriptionQuery
{
    /// <summary>The cursor that asks for a state topic's document first, then every change after it.</summary>
    private const string StateCursor = "state";

    private const string Usage = "Use subs[N][topicid], subs[N][from] and subs[N][epoch], or topics=ID[:FROM][~EPOCH],..., plus optional timeout, conflate, latest, client and member.";

    /// <summary>The parameter naming a conflation interval in milliseconds.</summary>
    public const string ConflateParameter = "conflate";

    /// <summary>The parameter asking a catching-up subscription for each topic's latest retained message only.</summary>
    public const string LatestParameter = "latest";
    private const int MaxEpochLength = EpochText.MaxLength;

    private SubscriptionQuery(List<Subscription> subscriptions, TimeSpan timeout, Conflation conflation, PresenceIdentity? presence, string? memberData)
    {
        Subscriptions = subscriptions;
        Timeout = timeout;
        Conflation = conflation;
        Presence = presence;
        MemberData = memberData;
    }

    /// <summary>The parameter naming the subscriber for presence in Open mode.</summary>
    public const string ClientParameter = "client";

    /// <summary>The parameter carrying the subscriber's presence data, a JSON object.</summary>
    public const string MemberParameter = "member";

    /// <summary>Who the subscriber is for presence in Open mode, from <c>client</c> and <c>member</c>; null for an anonymous observer (and in Jwt mode, where the token's subject is the identity).</summary>
    public PresenceIdentity? Presence { get; }

    /// <summary>The <c>member</c> data, validated; in Jwt mode it goes with the token's subject.</summary>
    public string? MemberData { get; }

    /// <summary>
    /// Who the subscription is for presence: the query's <c>client</c> in Open mode, the token's subject in Jwt
    /// mode (<paramref name="caller"/>, which access control authenticated); null for an anonymous observer.
    /// </summary>
    public PresenceIdentity? PresenceOf(bool identityFromToken, Access.LaharsubIdentity? caller) =>
        !identityFromToken ? Presence
        : caller is { Subject: { Length: > 0 } subject } ? new PresenceIdentity(subject, MemberData)
        : null;

    private SubscriptionQuery(string errorParameter, string error, Conflation conflation = default, PresenceIdentity? presence = null, string? memberData = null)
    {
        Subscriptions = [];
        Conflation = conflation;
        Presence = presence;
        MemberData = memberData;
        ErrorParameter = errorParameter;
        Error = error;
    }

    /// <summary>The query parameter that carries a token where a browser cannot set <c>Authorization</c> (streams).</summary>
    public const string AccessTokenParameter = "access_token";

    /// <summary>The parameter an error names when the query names no topic at all (a WebSocket may start empty).</summary>
    public const string NoSubscriptionParameter = "subs";

    public List<Subscription> Subscriptions { get; }

    /// <summary>Whether the query names no topic at all (an error for a poll and an SSE stream, not for a WebSocket).</summary>
    public bool NamesNoTopic => Error is not null && ErrorParameter == NoSubscriptionParameter && Error.StartsWith("No subscription", StringComparison.Ordinal);
    public TimeSpan Timeout { get; }

    /// <summary>What the subscriber asked to skip (<c>conflate</c>, <c>latest</c>); off unless asked.</summary>
    public Conflation Conflation { get; }
    public string? ErrorParameter { get; }
    public string? Error { get; }

    /// <summary>Parses a request's raw query string (<c>HttpRequest.QueryString.Value</c>, with or without its leading '?').</summary>
    public static SubscriptionQuery Parse(string? queryString, LaharsubDeliveryOptions options) => Parse(queryString, options, []);

    /// <summary>
    /// As the other overload, with the subscriptions in <paramref name="into"/> (cleared first): a caller that
    /// hands them on at once can reuse one list for every poll.
    /// </summary>
    /// <remarks>
    /// Reads the raw string rather than <c>HttpRequest.Query</c>: the parsed collection would stay on the
    /// request, and a poll keeps its request for its whole wait, so every waiting poll would keep
    /// a dictionary and its strings for the GC to copy. Names compare as
    /// <c>HttpRequest.Query</c> compares them: ignoring case, '+' and percent-escapes decoded.
    /// </remarks>
    /// <param name="queryString">The raw query string.</param>
    /// <param name="options">The delivery settings.</param>
    /// <param name="into">The list the subscriptions are parsed into.</param>
    /// <param name="identityFromToken">
    /// Jwt mode: the identity is the token's subject, so <c>client</c> is refused and <c>member</c> needs no <c>client</c>.
    /// </param>
    public static SubscriptionQuery Parse(string? queryString, LaharsubDeliveryOptions options, List<Subscription> into, bool identityFromToken = false)
    {
        into.Clear();
        // Slot N holds subs[N]'s values; N is bounded by MaxSubscriptionsPerPoll, so a list beats a dictionary.
        List<IndexedSubscription>? indexed = null;
        ReadOnlyMemory<char>? compact = null;
        var timeoutGiven = false;
        var timeout = options.DefaultPollTimeout;
        int? conflate = null;
        bool? latest = null;
        string? client = null, member = null;

        foreach (var pair in new QueryStringEnumerable(queryString))
        {
            // Names and values stay slices of the query string (decoded only when escaped); a string is
            // made for a value that is kept and for an error's message, not for every pair of every poll.
            var name = pair.DecodeName();
            var key = name.Span;
            var value = pair.DecodeValue();
            if (key.Equals("timeout", StringComparison.OrdinalIgnoreCase))
            {
                if (timeoutGiven)
                {
                    return GivenTwice(name.ToString());
                }
                timeoutGiven = true;
                var maxSeconds = (int)options.MaxPollTimeout.TotalSeconds;
                if (!PlainInteger.TryParse(value.Span, out int seconds) || seconds > maxSeconds)
                {
                    return Fail("timeout", $"'{value}' is not a timeout: use whole seconds from 0 to {maxSeconds} (Laharsub:MaxPollTimeout).");
                }
                timeout = TimeSpan.FromSeconds(seconds);
            }
            else if (key.Equals(ConflateParameter, StringComparison.OrdinalIgnoreCase))
            {
                if (conflate is not null)
                {
                    return GivenTwice(name.ToString());
                }
                if (!PlainInteger.TryParse(value.Span, out int milliseconds) || milliseconds > Conflation.MaxIntervalMilliseconds)
                {
                    return Fail(ConflateParameter, $"'{value}' is not a conflation interval: use whole milliseconds from 0 (none) to {Conflation.MaxIntervalMilliseconds}.");
                }
                conflate = milliseconds;
            }
            else if (key.Equals(LatestParameter, StringComparison.OrdinalIgnoreCase))
            {
                if (latest is not null)
                {
                    return GivenTwice(name.ToString());
                }
                if (!bool.TryParse(value.Span, out var wanted))
                {
                    return Fail(LatestParameter, $"'{value}' is not true or false: latest=true starts each topic that is behind at its latest retained message.");
                }
                latest = wanted;
            }
            else if (key.Equals(ClientParameter, StringComparison.OrdinalIgnoreCase) || key.Equals(MemberParameter, StringComparison.OrdinalIgnoreCase))
            {
                var isClient = key.Equals(ClientParameter, StringComparison.OrdinalIgnoreCase);
                if ((isClient ? client : member) is not null)
                {
                    return GivenTwice(name.ToString());
                }
                if (!UnicodeText.HasUtf8Escapes(pair.EncodedValue.Span))
                {
                    var parameter = isClient ? ClientParameter : MemberParameter;
                    return Fail(parameter, $"{parameter} has percent-escapes that are not UTF-8 text. {UnicodeText.QueryRule}");
                }
                if (isClient)
                {
                    client = value.ToString();
                }
                else
                {
                    member = value.ToString();
                }
            }
            else if (key.Equals("topics", StringComparison.OrdinalIgnoreCase))
            {
                if (compact is not null)
                {
                    return GivenTwice(name.ToString());
                }
                compact = value;
            }
            else if (key.SequenceEqual("_") || key.Equals(AccessTokenParameter, StringComparison.Ordinal))
            {
                // jQuery's cache buster; a stream's token (Jwt mode), which access control reads.
            }
            else if (TryParseIndexedKey(key, out var index, out var field))
            {
                if (index >= options.MaxSubscriptionsPerPoll)
                {
                    return TooMany("subs", index + 1, options);
                }
                indexed ??= new(index + 1);
                while (indexed.Count <= index)
                {
                    indexed.Add(default);
                }
                var entry = indexed[index];
                if (entry.Get(field) is not null)
                {
                    return Fail(name.ToString(), $"'{name}' is given more than once (index {index} repeats); give each subscription one index.");
                }
                indexed[index] = entry.With(field, value.ToString());
            }
            else
            {
                return Fail(name.ToString(), $"Unknown parameter '{name}'. {Usage}");
            }
        }

        if (indexed is not null && compact is not null)
        {
            return Fail("topics", "Both subs[N][...] and topics are given; use one form per poll.");
        }
        into.EnsureCapacity(indexed?.Count ?? (compact is not { } items ? 0 : Math.Min(items.Span.Count(','), options.MaxSubscriptionsPerPoll) + 1));
        var error = indexed is not null ? ParseIndexed(indexed, options, into)
            : compact is not null ? ParseCompact(compact.Value, options, into)
            : (NoSubscriptionParameter, $"No subscription: name at least one topic, e.g. ?topics=14 or ?subs[0][topicid]=14. {Usage}");
        PresenceIdentity? presence = null;
        if (client is not null || member is not null)
        {
            if (identityFromToken && client is not null)
            {
                return Fail(ClientParameter, "With tokens (Jwt mode) the identity for presence is the token's subject: leave client out.");
            }
            if (PresenceParameters.Validate(client, member, options.Presence.MaxMemberDataBytes, identityFromToken) is { } invalid)
            {
                return Fail(invalid.Parameter, invalid.Message);
            }
            presence = client is null ? null : new PresenceIdentity(client, member);
        }
        if (error is { } failure)
        {
            // Kept for a WebSocket that starts with no topic (NamesNoTopic): its conflation still stands.
            return new SubscriptionQuery(failure.Parameter, failure.Message, new Conflation(conflate ?? 0, latest ?? false), presence, member);
        }
        return new SubscriptionQuery(into, timeout, new Conflation(conflate ?? 0, latest ?? false), presence, member);
    }

    /// <summary>
    /// Parses cursors in the compact syntax of <c>topics</c> (<c>14:3~epoch,15</c>), as a stream's
    /// <c>Last-Event-ID</c> or a WebSocket <c>subscribe</c> frame carries them; the error names <paramref name="parameter"/>.
    /// </summary>
    public static (string Parameter, string Message)? ParseCursors(string text, string parameter, LaharsubDeliveryOptions options, List<Subscription> into)
    {
        into.Clear();
        if (text.Length == 0)
        {
            return null;
        }
        return ParseCompact(text.AsMemory(), options, into) is { } error ? (parameter, error.Message.Replace("topics=", parameter + "=", StringComparison.Ordinal)) : null;
    }

    private static (string Parameter, string Message)? ParseIndexed(List<IndexedSubscription> indexed, LaharsubDeliveryOptions options, List<Subscription> subscriptions)
    {
        var duplicates = new DuplicateFinder(subscriptions);
        for (var index = 0; index < indexed.Count; index++)
        {
            var entry = indexed[index];
            if (entry is { TopicId: null, From: null, Epoch: null })
            {
                return ($"subs[{index}]", $"subs[{index}] is missing: indexes must start at 0 and be consecutive.");
            }
            if (entry.TopicId is null)
            {
                return ($"subs[{index}][topicid]", $"subs[{index}][topicid] is required: every subscription names its topic.");
            }
            if (!PlainInteger.TryParseId(entry.TopicId, out var topicId))
            {
                return ($"subs[{index}][topicid]", PlainInteger.NotAnId(entry.TopicId, "topic id"));
            }
            long? from = null;
            var state = entry.From == StateCursor;
            if (entry.From is not null && !state)
            {
                if (!PlainInteger.TryParseId(entry.From, out var cursor))
                {
                    return ($"subs[{index}][from]", PlainInteger.NotAnId(entry.From, "message id") + " Use 1 for everything retained, 'state' for a state topic's document, or leave it out for new messages only.");
                }
                from = cursor;
            }
            if (entry.Epoch is not null && !EpochText.IsValid(entry.Epoch))
            {
                return ($"subs[{index}][epoch]", NotAnEpoch(entry.Epoch));
            }
            if (entry.Epoch is null && IsBareCursorRefused(from, options))
            {
                return ($"subs[{index}][from]", BareCursorRefused(topicId, from!.Value, $"subs[{index}][epoch]=<epoch>"));
            }
            if (duplicates.IndexOf(topicId) is var first and >= 0)
            {
                return ($"subs[{index}][topicid]", $"Topic {topicId} appears twice (also in subs[{first}]); subscribe to each topic once per poll.");
            }
            subscriptions.Add(new Subscription(topicId, from, entry.Epoch, state));
        }
        return null;
    }

    private static (string Parameter, string Message)? ParseCompact(ReadOnlyMemory<char> compact, LaharsubDeliveryOptions options, List<Subscription> subscriptions)
    {
        // Span slices rather than Split and substrings: a poll should not allocate per subscription. The
        // value itself is a slice of the query string unless it had escapes.
        var duplicates = new DuplicateFinder(subscriptions);
        var text = compact.Span;
        foreach (var range in text.Split(','))
        {
            if (subscriptions.Count == options.MaxSubscriptionsPerPoll)
            {
                return TooManyMessage("topics", text.Count(',') + 1, options);
            }
            var item = text[range];
            string? epoch = null;
            var tilde = item.IndexOf('~');
            if (tilde >= 0)
            {
                var epochText = item[(tilde + 1)..];
                if (!EpochText.IsValid(epochText))
                {
                    return ("topics", $"In topics='{text}': " + NotAnEpoch(epochText.ToString()) + " Write topics=ID[:FROM][~EPOCH].");
                }
                epoch = epochText.ToString();
                item = item[..tilde];
            }
            var colon = item.IndexOf(':');
            var topicText = colon < 0 ? item : item[..colon];
            if (!PlainInteger.TryParseId(topicText, out var topicId))
            {
                return ("topics", $"In topics='{text}': " + PlainInteger.NotAnId(topicText.ToString(), "topic id") + " Write topics=ID or ID:FROM, separated by commas.");
            }
            long? from = null;
            var state = colon >= 0 && item[(colon + 1)..].SequenceEqual(StateCursor);
            if (colon >= 0 && !state)
            {
                var fromText = item[(colon + 1)..];
                if (!PlainInteger.TryParseId(fromText, out var cursor))
                {
                    return ("topics", $"In topics='{text}': " + PlainInteger.NotAnId(fromText.ToString(), "message id") + " Use 1 for everything retained, 'state' for a state topic's document, or write the topic alone for new messages only.");
                }
                from = cursor;
            }
            if (epoch is null && IsBareCursorRefused(from, options))
            {
                return ("topics", $"In topics='{text}': " + BareCursorRefused(topicId, from!.Value, $"{topicId}:{from}~<epoch>"));
            }
            if (duplicates.IndexOf(topicId) >= 0)
            {
                return ("topics", $"Topic {topicId} appears twice in topics='{text}'; subscribe to each topic once per poll.");
            }
            subscriptions.Add(new Subscription(topicId, from, epoch, state));
        }
        return null;
    }

    /// <summary>
    /// Finds a topic already among the parsed subscriptions: by scanning them while they are few (no
    /// allocation for the common poll of a handful of topics), through a dictionary once they are many.
    /// </summary>
    private struct DuplicateFinder(List<Subscription> subscriptions)
    {
        private const int ScanLimit = 16;
        private Dictionary<long, int>? _indexes;

        /// <summary>The index of the subscription to <paramref name="topicId"/>, or -1; call before adding it.</summary>
        public int IndexOf(long topicId)
        {
            if (subscriptions.Count < ScanLimit)
            {
                for (var i = 0; i < subscriptions.Count; i++)
                {
                    if (subscriptions[i].TopicId == topicId)
                    {
                        return i;
                    }
                }
                return -1;
            }
            if (_indexes is null)
            {
                _indexes = new Dictionary<long, int>(subscriptions.Capacity);
                for (var i = 0; i < subscriptions.Count; i++)
                {
                    _indexes[subscriptions[i].TopicId] = i;
                }
            }
            if (_indexes.TryGetValue(topicId, out var index))
            {
                return index;
            }
            _indexes[topicId] = subscriptions.Count;
            return -1;
        }
    }

    /// <summary>Recognises <c>subs[N][topicid]</c>, <c>subs[N][from]</c> and <c>subs[N][epoch]</c>, case-insensitively, with N in plain decimal.</summary>
    private static bool TryParseIndexedKey(ReadOnlySpan<char> key, out int index, out IndexedField field)
    {
        index = 0;
        field = IndexedField.TopicId;
        var span = key;
        if (!span.StartsWith("subs[", StringComparison.OrdinalIgnoreCase))
        {
            return false;
        }
        span = span[5..];
        var close = span.IndexOf(']');
        if (close <= 0 || close > 6 || (span[0] == '0' && close > 1)
            || !PlainInteger.TryParse(span[..close], out index))
        {
            return false;
        }
        span = span[(close + 1)..];
        if (span.Equals("[topicid]", StringComparison.OrdinalIgnoreCase))
        {
            return true;
        }
        if (span.Equals("[from]", StringComparison.OrdinalIgnoreCase))
        {
            field = IndexedField.From;
            return true;
        }
        field = IndexedField.Epoch;
        return span.Equals("[epoch]", StringComparison.OrdinalIgnoreCase);
    }

    /// <summary>
    /// Whether a cursor without an epoch is refused (Laharsub:RequireEpochForCursors): above 1 it may name
    /// a message of an earlier incarnation of the topic, and reading on from it would skip messages unseen.
    /// Cursor 1 (everything retained) and no cursor (new messages only) skip nothing in any incarnation.
    /// </summary>
    private static bool IsBareCursorRefused(long? from, LaharsubDeliveryOptions options) =>
        options.RequireEpochForCursors && from > 1;

    private static string BareCursorRefused(long topicId, long from, string withEpoch) =>
        $"The cursor {from} for topic {topicId} has no epoch, and this server requires one above 1 (Laharsub:RequireEpochForCursors): "
        + $"add the topic's epoch, e.g. {withEpoch}, from the topic's info (GET /topics/{topicId}) or your last answer; or use 1 for everything retained.";

    private static string NotAnEpoch(string text) =>
        $"'{text}' is not an epoch: send back the epoch the server gave (1 to {MaxEpochLength} letters, digits, '-' or '_'), or leave it out.";

    private enum IndexedField { TopicId, From, Epoch }

    /// <summary>The raw values of one <c>subs[N]</c>.</summary>
    private readonly record struct IndexedSubscription(string? TopicId, string? From, string? Epoch)
    {
        public string? Get(IndexedField field) => field switch
        {
            IndexedField.TopicId => TopicId,
            IndexedField.From => From,
            _ => Epoch,
        };

        public IndexedSubscription With(IndexedField field, string value) => field switch
        {
            IndexedField.TopicId => this with { TopicId = value },
            IndexedField.From => this with { From = value },
            _ => this with { Epoch = value },
        };
    }

    private static SubscriptionQuery TooMany(string parameter, int count, LaharsubDeliveryOptions options)
    {
        var (p, m) = TooManyMessage(parameter, count, options);
        return Fail(p, m);
    }

    private static (string, string) TooManyMessage(string parameter, int count, LaharsubDeliveryOptions options) =>
        (parameter, $"At least {count} subscriptions exceed the limit of {options.MaxSubscriptionsPerPoll} per poll (Laharsub:MaxSubscriptionsPerPoll); spread them over several polls.");

    private static SubscriptionQuery Fail(string parameter, string message) => new(parameter, message);

    private static SubscriptionQuery GivenTwice(string key) => Fail(key, $"'{key}' is given more than once; give it once.");
}

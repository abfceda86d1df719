using System.Text;
using Laharsub.Server.Access;
using Laharsub.Server.Delivery;
using Laharsub.Server.Transport;

namespace Laharsub.Server.FastPath;

/// <summary>
/// Jwt mode on the connection: who calls (anonymous, or a token the pipeline validated before), and whether
/// <see cref="TopicAccess"/> allows the request; a token not validated yet and every refusal are the pipeline's.
/// </summary>
internal sealed partial class FastPathConnection
{
    /// <summary>
    /// Who calls, as the pipeline's access control would find it; the reason the pipeline must find out instead (a
    /// token it has not validated yet, credentials of another kind), or null.
    /// </summary>
    private string? IdentifyCaller(TokenCallers tokens)
    {
        if (_token is null && _kind == Kind.Poll && _query is { } query && query.Contains(AccessTokenAssignment, StringComparison.Ordinal))
        {
            // A browser's EventSource or WebSocket sends its token in the query (docs/protocol.md, "Tokens on streams").
            if (!TryReadQueryToken(query, out _token))
            {
                return "authorization";
            }
        }
        if (_token is null)
        {
            _permissions = tokens.Anonymous;
            return null;
        }
        _caller = tokens.Validated(_token);
        _identity = (LaharsubIdentity?)_caller?.Identity;
        _permissions = _identity?.Permissions;
        return _identity is null ? "token_unvalidated" : null;
    }

    private const string AccessTokenAssignment = SubscriptionQuery.AccessTokenParameter + "=";

    /// <summary>
    /// The query's one <c>access_token</c> (null when it has none, as for a name that only ends in it); false for
    /// what the pipeline's query parsing decides: an empty or repeated one, or one with escapes.
    /// </summary>
    private static bool TryReadQueryToken(string query, out string? token)
    {
        token = null;
        var text = query.AsSpan(query.StartsWith('?') ? 1 : 0);
        foreach (var range in text.Split('&'))
        {
            var pair = text[range];
            if (!pair.StartsWith(AccessTokenAssignment, StringComparison.Ordinal))
            {
                continue;
            }
            var value = pair[AccessTokenAssignment.Length..];
            if (token is not null || value.IsEmpty || value.ContainsAny('%', '+'))
            {
                return false;
            }
            token = value.ToString();
        }
        return true;
    }

    /// <summary><c>Bearer</c> and a token, as the JwtBearer scheme reads it; the connection's last token again when it is the same.</summary>
    private bool TryReadBearerToken(ReadOnlySpan<byte> value)
    {
        if (value.Length <= BearerPrefix.Length || !Ascii.EqualsIgnoreCase(value[..BearerPrefix.Length], BearerPrefix))
        {
            return false;
        }
        var token = value[BearerPrefix.Length..].Trim(" \t"u8);
        if (token.IsEmpty)
        {
            return false;
        }
        _token = _lastToken is { } last && Ascii.Equals(token, last) ? last : (_lastToken = Encoding.ASCII.GetString(token));
        return true;
    }

    private static ReadOnlySpan<byte> BearerPrefix => "Bearer "u8;

    /// <summary>
    /// Whether the caller may subscribe to every topic the query names, as the pipeline's access control decides (a
    /// refused poll is the pipeline's to answer with its 401 or 403). True in Open mode, and for a query the
    /// pipeline refuses anyway.
    /// </summary>
    private ValueTask<bool> AllowsSubscriptionAsync() =>
        _permissions is not { } permissions || TopicAccess.AllowsEveryTopic(new AccessCaller(permissions), LaharsubOperation.Subscribe)
            ? new(true)
            : CheckSubscriptionAsync(permissions);

    private ValueTask<bool> CheckSubscriptionAsync(LaharsubPermissions permissions)
    {
        // Parsed into this thread's reused list (the poll parses again after the decision): only the ids outlive the parse.
        var subscriptions = t_subscriptions ??= [];
        long[] topicIds;
        try
        {
            if (ParseQuery(subscriptions).Error is not null)
            {
                return new(true);
            }
            topicIds = new long[subscriptions.Count];
            for (var i = 0; i < topicIds.Length; i++)
            {
                topicIds[i] = subscriptions[i].TopicId;
            }
        }
        finally
        {
            subscriptions.Clear();
        }
        return AllowsAsync(_state.Tokens!.Access.CheckEveryAsync(new AccessCaller(permissions), LaharsubOperation.Subscribe, topicIds, _connection.ConnectionClosed));
    }

    /// <summary>Whether the caller may publish to the request's topic.</summary>
    private ValueTask<bool> AllowsPublishAsync() =>
        _permissions is not { } permissions
            ? new(true)
            : AllowsAsync(_state.Tokens!.Access.CheckAsync(new AccessCaller(permissions), LaharsubOperation.Publish, _topicId, _connection.ConnectionClosed));

    /// <summary>Whether the decision allows the request; a refusal is the pipeline's to answer.</summary>
    private async ValueTask<bool> AllowsAsync(ValueTask<AccessDenial?> decision)
    {
        if (await decision.ConfigureAwait(false) is null)
        {
            return true;
        }
        _pipelineReason = "access_refused";
        return false;
    }

    /// <summary>The subscriber's presence identity: the query's <c>client</c> in Open mode, the token's subject in Jwt mode.</summary>
    private PresenceIdentity? PresenceOf(in SubscriptionQuery query) => query.PresenceOf(_state.Tokens is not null, _identity);

    /// <summary>
    /// Whether a subscription asks for a state topic's document (the cursor <c>state</c>): the pipeline's, which answers
    /// its refusal on a topic without state as a 400 naming the field. The <c>state</c> notices themselves are the shared wire format's.
    /// </summary>
    private bool AsksForState(List<Subscription> subscriptions)
    {
        foreach (var subscription in subscriptions)
        {
            if (subscription.State)
            {
                _pipelineReason = "state_cursor";
                return true;
            }
        }
        return false;
    }

    /// <summary>Parses the query into <paramref name="subscriptions"/>, with Jwt mode's presence rules when on.</summary>
    private SubscriptionQuery ParseQuery(List<Subscription> subscriptions) =>
        SubscriptionQuery.Parse(_query, _state.Delivery, subscriptions, identityFromToken: _state.Tokens is not null);
}

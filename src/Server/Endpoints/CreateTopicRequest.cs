using System.Text.Json;
using Laharsub.Server.Access;
using Laharsub.Server.Wire;
using Microsoft.AspNetCore.Http.Features;
using Microsoft.AspNetCore.Http;

namespace Laharsub.Server.Endpoints;

/// <summary>
/// The optional body of <c>POST /ps/topics</c>: <c>{"label":"orders-eu"}</c>. No body (what every client
/// sent before labels existed) creates an unlabelled topic, and so does a JSON <c>null</c>. Bound by hand rather than by minimal APIs'
/// JSON binding so that a bad body gets a problem detail naming what is wrong.
/// </summary>
internal sealed class CreateTopicRequest : ILabelledRequest
{
    private const int MaxBodyBytes = 4096;
    private const string Example = "Send no body (or null), or {\"label\":\"orders-eu\",\"presence\":true,\"state\":true} (each optional) as application/json.";

    private static readonly CreateTopicRequest Unlabelled = new(null, null, null);

    private CreateTopicRequest(string? label, string? errorParameter, string? error, bool presence = false, bool state = false)
    {
        Label = label;
        ErrorParameter = errorParameter;
        Error = error;
        Presence = presence;
        State = state;
    }

    public string? Label { get; }

    /// <summary>Whether the topic is created with presence and its companion topic (docs/protocol.md, "Presence").</summary>
    public bool Presence { get; }

    /// <summary>Whether the topic holds state: a JSON document changed by merge patches (docs/protocol.md, "State topics").</summary>
    public bool State { get; }
    public string? ErrorParameter { get; }
    public string? Error { get; }
    public bool IsValid => Error is null;

    public static async ValueTask<CreateTopicRequest> BindAsync(HttpContext context)
    {
        var request = context.Request;
        if (context.Features.Get<IHttpRequestBodyDetectionFeature>() is { CanHaveBody: false } || request.ContentLength == 0)
        {
            return Unlabelled;
        }
        if (request.ContentLength > MaxBodyBytes)
        {
            return Fail("body", $"The body is {request.ContentLength} bytes; a topic's description is at most {MaxBodyBytes}. {Example}");
        }
        var body = new byte[MaxBodyBytes + 1];
        var length = await request.Body.ReadAtLeastAsync(body, body.Length, throwOnEndOfStream: false, context.RequestAborted).ConfigureAwait(false);
        if (length == 0)
        {
            return Unlabelled;
        }
        if (length > MaxBodyBytes)
        {
            return Fail("body", $"The body is over {MaxBodyBytes} bytes, the most a topic's description may be. {Example}");
        }
        if (!request.HasJsonContentType())
        {
            return Fail("Content-Type", $"'{request.ContentType}' is not JSON. {Example}");
        }
        return Parse(body.AsSpan(0, length));
    }

    private static CreateTopicRequest Parse(ReadOnlySpan<byte> json)
    {
        string? label = null;
        var presence = false;
        var state = false;
        try
        {
            var reader = new Utf8JsonReader(json);
            var read = reader.Read();
            // JSON null is no body: what generated clients (NSwag) send for an optional body left out.
            // (Anything after it makes the next Read throw, so only a lone null gets here.)
            if (read && reader.TokenType == JsonTokenType.Null && !reader.Read())
            {
                return Unlabelled;
            }
            if (!read || reader.TokenType != JsonTokenType.StartObject)
            {
                return Fail("body", $"The body is not a JSON object. {Example}");
            }
            while (reader.Read() && reader.TokenType == JsonTokenType.PropertyName)
            {
                if (!UnicodeText.TryGetString(ref reader, out var name))
                {
                    return Fail("body", $"A property name in the body is not Unicode text. {UnicodeText.Rule} {Example}");
                }
                reader.Read();
                if (name is "presence" or "state")
                {
                    if (reader.TokenType is not (JsonTokenType.True or JsonTokenType.False))
                    {
                        return Fail(name, $"{name} must be true or false. {Example}");
                    }
                    if (name == "presence")
                    {
                        presence = reader.GetBoolean();
                    }
                    else
                    {
                        state = reader.GetBoolean();
                    }
                    continue;
                }
                if (name != "label")
                {
                    reader.Skip();
                    return Fail(name, $"'{name}' is not a property of a topic: they are \"label\", \"presence\" and \"state\". {Example}");
                }
                if (reader.TokenType == JsonTokenType.Null)
                {
                    continue;
                }
                if (reader.TokenType != JsonTokenType.String)
                {
                    return Fail("label", $"The label must be a string. {Example}");
                }
                if (!UnicodeText.TryGetString(ref reader, out label))
                {
                    return Fail("label", $"The label is not Unicode text. {UnicodeText.Rule} {TopicLabel.Rule}");
                }
            }
            if (reader.TokenType != JsonTokenType.EndObject || reader.Read())
            {
                return Fail("body", $"The body is not one JSON object. {Example}");
            }
        }
        catch (JsonException exception)
        {
            return Fail("body", $"The body is not valid JSON ({exception.Message}). {Example}");
        }
        if (label is not null && TopicLabel.Validate(label) is { } error)
        {
            return Fail("label", error);
        }
        return label is null && !presence && !state ? Unlabelled : new CreateTopicRequest(label, null, null, presence, state);
    }

    private static CreateTopicRequest Fail(string parameter, string error) => new(null, parameter, error);
}

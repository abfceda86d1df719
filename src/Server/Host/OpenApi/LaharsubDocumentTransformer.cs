using System.Globalization;
using System.Reflection;
using System.Text.Json.Nodes;
using Laharsub.Server.Access;
using Laharsub.Server.Hosting;
using Microsoft.AspNetCore.OpenApi;
using Microsoft.AspNetCore.WebUtilities;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;
using Microsoft.OpenApi;
using Microsoft.OpenApi.MicrosoftExtensions;

namespace Laharsub.Server.Host.OpenApi;

/// <summary>
/// Describes what the endpoints' metadata cannot: the poll's query parameters (parsed by hand, so that
/// both query forms get precise errors), both poll answer formats (written straight from cached bytes),
/// the publish body and <c>If-Match</c>, the headers of the answers, and the limits this server is
/// configured with. Operations are found by their path under the Laharsub prefix, whatever it is.
/// </summary>
internal sealed class LaharsubDocumentTransformer(IOptions<LaharsubOptions> options, IOptions<LaharsubAuthOptions> access) : IOpenApiDocumentTransformer
{
    private const string ProblemSchema = "ProblemDetails";
    private const string ValidationProblemSchema = "HttpValidationProblemDetails";
    private const string NewTopicSchema = "NewTopic";
    private const string PresenceSchema = "PresenceResource";
    private const string PresenceMemberSchema = "PresenceMemberResource";
    private const string PollAnswerSchema = "PollAnswer";
    private const string PollMessageSchema = "PollMessage";
    private const string NoticeSchema = "Notice";
    private const string BearerScheme = "Bearer";

    /// <summary>What each problem status means here, after its reason phrase.</summary>
    private static readonly Dictionary<string, string> ProblemMeanings = new()
    {
        ["400"] = "a parameter or the body is not right: errors names it, detail says what to do; nothing changed",
        ["404"] = "no such topic: detail names it (and topicId, or topics for a publish to several)",
        ["406"] = "none of the Accept header's formats is served here: detail lists them",
        ["409"] = "the server's state refuses it (a limit reached, a presence topic, a repeat still being stored): detail says which and what to do",
        ["412"] = "the topic is another incarnation than If-Match (or the ~epoch) names: epoch is its current one; nothing was published",
        ["413"] = "the message is larger than Laharsub:MaxMessageBytes allows",
        ["422"] = "this Idempotency-Key came with another request: detail says what differs",
        ["429"] = "over Laharsub:RateLimit or a Laharsub:Limits cap: try again after Retry-After",
        ["503"] = "the store cannot be reached now: try again after Retry-After",
        ["507"] = "the topic (or the server) has no room for this message until older ones expire: try again after Retry-After",
    };

    public Task TransformAsync(OpenApiDocument document, OpenApiDocumentTransformerContext context, CancellationToken cancellationToken)
    {
        document.Info = new OpenApiInfo
        {
            Title = "Laharsub",
            Version = typeof(LaharsubOptions).Assembly.GetCustomAttribute<AssemblyInformationalVersionAttribute>()?.InformationalVersion.Split('+')[0] ?? "1.0.0",
            Description = "HTTP publish/subscribe: create topics and publish with REST calls; subscribe to many topics with one long poll "
                + "whose subscriptions carry client-side cursors. Errors are RFC 9457 problem details naming the parameter and what to do. "
                + "The complete protocol (cursor rules, notices, both answer formats) is docs/protocol.md in the Laharsub repository.",
        };
        document.Components ??= new OpenApiComponents();
        document.Components.Schemas ??= new Dictionary<string, IOpenApiSchema>();
        WriteNumbersAsNumbers(document.Components.Schemas);
        DescribeProblems(document.Components.Schemas);
        DescribePollAnswer(document.Components.Schemas);
        DescribeNewTopic(document.Components.Schemas);
        if (document.Components.Schemas.TryGetValue("TopicPage", out var page) && page is OpenApiSchema topicPage)
        {
            // JsonIgnore(WhenWritingNull): the last page has no "next" at all.
            topicPage.Required?.Remove("next");
        }

        foreach (var (path, item) in document.Paths)
        {
            foreach (var (method, operation) in item.Operations ?? [])
            {
                switch (path, method.Method)
                {
                    case (_, "GET" or "HEAD") when path.EndsWith("/topics", StringComparison.Ordinal):
                        DescribeListTopics(operation, method.Method);
                        break;
                    case (_, "POST") when path.EndsWith("/topics", StringComparison.Ordinal):
                        DescribeCreateTopic(operation, document);
                        break;
                    case (_, "GET" or "HEAD") when path.EndsWith("/topics/{topicId}", StringComparison.Ordinal):
                        DescribeTopicId(operation, method.Method == "HEAD" ? "headTopic" : "getTopic");
                        AddHeader(operation, "200", "ETag", "The topic's epoch in quotes.");
                        DescribeHead(operation, method.Method);
                        break;
                    case (_, "GET" or "HEAD") when path.EndsWith("/topics/{topicId}/state", StringComparison.Ordinal):
                        DescribeTopicId(operation, method.Method == "HEAD" ? "headState" : "getState");
                        AddHeader(operation, "200", "ETag", "The document's version: \"<epoch>:<version>\", the version being the id of the last message applied.");
                        DescribeHead(operation, method.Method);
                        break;
                    case (_, "PUT") when path.EndsWith("/topics/{topicId}/state", StringComparison.Ordinal):
                        DescribePutState(operation);
                        break;
                    case (_, "GET") when path.EndsWith("/topics/{topicId}/presence", StringComparison.Ordinal):
                        DescribePresence(operation, document.Components.Schemas);
                        break;
                    case (_, "DELETE") when path.EndsWith("/topics/{topicId}", StringComparison.Ordinal):
                        DescribeTopicId(operation, "deleteTopic");
                        break;
                    case (_, "POST") when path.EndsWith("/topics/{topicId}", StringComparison.Ordinal):
                        DescribePublish(operation);
                        break;
                    case (_, "POST") when path.EndsWith("/topics/publish", StringComparison.Ordinal):
                        DescribePublishMany(operation);
                        break;
                    case (_, "GET") when path.EndsWith("/subscriptions", StringComparison.Ordinal):
                        DescribePoll(operation, document);
                        break;
                }
                AddHeader(operation, "429", "Retry-After", "Seconds until this client may try again (over Laharsub:RateLimit or a Laharsub:Limits cap).");
                AddHeader(operation, "503", "Retry-After", "Seconds after which the store (Redis) is worth trying again.");
            }
        }

        DescribeAccessControl(document);
        DescribeProblemAnswers(document);
        foreach (var item in document.Paths.Values)
        {
            if (item.Operations?.TryGetValue(HttpMethod.Head, out var head) == true)
            {
                DropBodies(head);
            }
        }
        return Task.CompletedTask;
    }

    /// <summary>
    /// Problem answers whose description is only the reason phrase say what the problem means here: some
    /// generators (NSwag) make an error's description the message of the exception they throw for it.
    /// </summary>
    private static void DescribeProblemAnswers(OpenApiDocument document)
    {
        foreach (var operation in document.Paths.Values.SelectMany(item => item.Operations?.Values.AsEnumerable() ?? []))
        {
            foreach (var (status, found) in operation.Responses ?? [])
            {
                if (found is OpenApiResponse response && response.Content?.ContainsKey("application/problem+json") == true
                    && int.TryParse(status, CultureInfo.InvariantCulture, out var code) && response.Description == ReasonPhrases.GetReasonPhrase(code)
                    && ProblemMeanings.TryGetValue(status, out var meaning))
                {
                    response.Description = $"{response.Description}: {meaning}.";
                }
            }
        }
    }

    /// <summary>
    /// A HEAD answer never has a body (Kestrel drops it), so no response of a HEAD operation declares
    /// content: generators that read a declared body of a HEAD answer fail on the empty one.
    /// </summary>
    private static void DropBodies(OpenApiOperation head)
    {
        foreach (var response in head.Responses?.Values.OfType<OpenApiResponse>() ?? [])
        {
            response.Content = null;
        }
    }

    /// <summary>
    /// Jwt mode (Laharsub:Auth:Mode): every operation takes a bearer token, optional when
    /// Laharsub:Auth:Anonymous grants something without one, and may answer 401 or 403. Open mode has
    /// nothing to describe.
    /// </summary>
    private void DescribeAccessControl(OpenApiDocument document)
    {
        var settings = access.Value;
        if (settings.Mode != LaharsubAuthMode.Jwt)
        {
            return;
        }
        document.Components!.SecuritySchemes ??= new Dictionary<string, IOpenApiSecurityScheme>();
        document.Components.SecuritySchemes[BearerScheme] = new OpenApiSecurityScheme
        {
            Type = SecuritySchemeType.Http,
            Scheme = "bearer",
            BearerFormat = "JWT",
            Description = "A JWT whose laharsub claim grants operations on topics (docs/access-control.md).",
        };
        var anonymous = !string.IsNullOrWhiteSpace(settings.Anonymous);
        foreach (var operation in document.Paths.Values.SelectMany(item => item.Operations?.Values.AsEnumerable() ?? []))
        {
            operation.Security = [new OpenApiSecurityRequirement { [new OpenApiSecuritySchemeReference(BearerScheme, document)] = [] }];
            if (anonymous)
            {
                // An empty requirement: the operation may also be called without a token, as far as Laharsub:Auth:Anonymous grants.
                operation.Security.Add(new OpenApiSecurityRequirement());
            }
            operation.Responses ??= new OpenApiResponses();
            operation.Responses.TryAdd("401", Problem(document, "No valid token: send Authorization: Bearer <token> (the problem says what was wrong with it)."));
            operation.Responses.TryAdd("403", Problem(document, "The token does not grant this operation on this topic (the problem names both)."));
            AddHeader(operation, "401", "WWW-Authenticate", "Bearer, with the error.");
        }
    }

    private static OpenApiResponse Problem(OpenApiDocument document, string description) => new()
    {
        Description = description,
        Content = new Dictionary<string, OpenApiMediaType>
        {
            ["application/problem+json"] = new() { Schema = new OpenApiSchemaReference(ProblemSchema, document) },
        },
    };

    private static void DescribeListTopics(OpenApiOperation operation, string method)
    {
        operation.OperationId = method == "HEAD" ? "headTopics" : "listTopics";
        SetParameter(operation, "after", "Return topics with ids greater than this one: 0 (the default) for the first page, the last id of a page for the next.",
            Integer(minimum: 0, @default: 0));
        SetParameter(operation, "limit", "Topics per page.", Integer(minimum: 1, maximum: 1000, @default: 100));
        SetParameter(operation, "label", "Only topics whose label matches this pattern: label characters, * for any run of them (orders-*).",
            new OpenApiSchema { Type = JsonSchemaType.String, MaxLength = 100 });
        DescribeHead(operation, method);
    }

    /// <summary>HEAD is served wherever GET is: the same answer without its body.</summary>
    private static void DescribeHead(OpenApiOperation operation, string method)
    {
        if (method == "HEAD")
        {
            operation.Summary = operation.Summary + " (headers only)";
            operation.Description = "The same answer as GET without its body, e.g. to check that a topic exists.";
        }
    }

    private static void DescribeCreateTopic(OpenApiOperation operation, OpenApiDocument document)
    {
        operation.OperationId = "createTopic";
        operation.RequestBody = new OpenApiRequestBody
        {
            Required = false,
            Description = "Optional: the topic's label, whether it keeps presence and whether it holds state. Without a body (or with JSON null) the topic has none of them.",
            Content = new Dictionary<string, OpenApiMediaType>
            {
                // A named schema, so that generated models get a name of their own rather than "Body".
                ["application/json"] = new() { Schema = new OpenApiSchemaReference(NewTopicSchema, document) },
            },
        };
        AddHeader(operation, "201", "Location", "The new topic's URL.");
        AddHeader(operation, "201", "ETag", "The new topic's epoch in quotes.");
    }

    private static void DescribeNewTopic(IDictionary<string, IOpenApiSchema> schemas) => schemas[NewTopicSchema] = new OpenApiSchema
    {
        Type = JsonSchemaType.Object,
        Description = "A topic to create; every property is optional, and no other is accepted.",
        AdditionalPropertiesAllowed = false,
        Properties = new Dictionary<string, IOpenApiSchema>
        {
            ["label"] = new OpenApiSchema
            {
                Type = JsonSchemaType.String | JsonSchemaType.Null,
                MinLength = 1,
                MaxLength = 100,
                Pattern = "^[A-Za-z][A-Za-z0-9_.:/-]*$",
                Description = "Which topic lists and access rules can match (orders-*): starts with a letter, then letters, digits and - _ . : /. "
                    + "Not unique: many topics may share one. Absent or null: no label.",
            },
            ["state"] = new OpenApiSchema
            {
                Type = JsonSchemaType.Boolean,
                Description = "Absent or false: none. true: the topic holds a JSON document, {} at first, changed by merge patches (application/merge-patch+json) "
                    + "and read at /topics/{topicId}/state (docs/protocol.md, \"State topics\").",
            },
            ["presence"] = new OpenApiSchema
            {
                // No "default": openapi-typescript would make a property with one required in the request body.
                Type = JsonSchemaType.Boolean,
                Description = "Absent or false: none. true: the topic keeps presence (who is subscribed), with a companion topic of presence events (docs/protocol.md, \"Presence\"). "
                    + "A server whose store keeps no presence refuses it with 400 naming presence.",
            },
        },
    };

    /// <summary>
    /// The presence page. Its handler answers one of two records (the occupancy alone when the token grants
    /// only subscribe), which the endpoint's metadata cannot both name for one status: the full page is
    /// described, with members and next optional.
    /// </summary>
    private static void DescribePresence(OpenApiOperation operation, IDictionary<string, IOpenApiSchema> schemas)
    {
        DescribeTopicId(operation, "getPresence");
        SetParameter(operation, "after", "Return members whose ids sort after this one: leave it out for the first page, pass the previous page's next for the next.",
            new OpenApiSchema { Type = JsonSchemaType.String, MinLength = 1 });
        SetParameter(operation, "limit", "Members per page.", Integer(minimum: 1, maximum: 1000, @default: 100));
        if (operation.Responses?.TryGetValue("200", out var found) == true && found is OpenApiResponse ok)
        {
            ok.Description = "The occupancy and a page of members, ordered by member id. Without presence permission on the topic (Jwt mode, subscribe only): "
                + "topicId and occupancy alone.";
        }
        if (schemas.TryGetValue(PresenceSchema, out var schema) && schema is OpenApiSchema page)
        {
            page.Required = new HashSet<string> { "topicId", "occupancy" };
            if (page.Properties?.TryGetValue("next", out var next) == true && next is OpenApiSchema after)
            {
                after.Description = "The after of the next page; null on the last.";
            }
        }
        if (schemas.TryGetValue(PresenceMemberSchema, out var memberSchema) && memberSchema is OpenApiSchema member && member.Properties is { } properties)
        {
            // Any JSON, written as the member gave it: a plain schema rather than a nullable reference to an empty JsonElement one.
            properties["data"] = new OpenApiSchema { Description = "The member's data as its subscription gave it (a JSON object), or null." };
            schemas.Remove("JsonElement");
        }
    }

    private static void DescribeTopicId(OpenApiOperation operation, string operationId)
    {
        operation.OperationId = operationId;
        SetParameter(operation, "topicId", "The topic's id.", Integer(minimum: 1));
    }

    private void DescribePublish(OpenApiOperation operation)
    {
        DescribeTopicId(operation, "publish");
        operation.Parameters!.Add(new OpenApiParameter
        {
            Name = "If-Match",
            In = ParameterLocation.Header,
            Description = "Publish only to this incarnation of the topic: its epoch in quotes, from the topic's info or a publish answer. "
                + "Absent or * publishes to whatever topic has the id; another epoch answers 412 and publishes nothing. "
                + "\"<epoch>:<version>\" publishes only while the topic's last message id (a state topic's version) is that one: a compare-and-set; "
                + "otherwise 412 with the current epoch and version as extensions.",
            Schema = new OpenApiSchema { Type = JsonSchemaType.String },
            Example = JsonValue.Create("\"9f3c0a1b2c3d4e5f\""),
        });
        DescribePublishBodyAndKey(operation);
        AddHeader(operation, "201", "ETag", "The topic's epoch in quotes; for a merge patch, \"<epoch>:<version>\" with the version it made.");
        AddHeader(operation, "412", "ETag", "The topic's current epoch in quotes (with its version after a colon, for a compare-and-set).");
    }

    /// <summary>Replacing a state topic's document: a JSON object, with the conditions and key of a publish.</summary>
    private void DescribePutState(OpenApiOperation operation)
    {
        DescribeTopicId(operation, "putState");
        operation.Parameters!.Add(new OpenApiParameter
        {
            Name = "If-Match",
            In = ParameterLocation.Header,
            Description = "\"<epoch>\": replace only in this incarnation; \"<epoch>:<version>\": only while the document is at that version (412 with the current epoch and version otherwise).",
            Schema = new OpenApiSchema { Type = JsonSchemaType.String },
            Example = JsonValue.Create("\"9f3c0a1b2c3d4e5f:57\""),
        });
        DescribePublishBodyAndKey(operation);
        operation.RequestBody = new OpenApiRequestBody
        {
            Required = true,
            Description = $"The new document: one JSON object, at most {options.Value.MaxStateBytes} bytes compact (Laharsub:MaxStateBytes, else 413 naming body).",
            Content = new Dictionary<string, OpenApiMediaType>
            {
                ["application/json"] = new() { Schema = new OpenApiSchema { Type = JsonSchemaType.Object } },
            },
        };
        AddHeader(operation, "200", "ETag", "The new version: \"<epoch>:<version>\".");
        AddHeader(operation, "412", "ETag", "The current version: \"<epoch>:<version>\".");
    }

    private void DescribePublishMany(OpenApiOperation operation)
    {
        operation.OperationId = "publishMany";
        operation.Parameters ??= [];
        operation.Parameters.Add(new OpenApiParameter
        {
            Name = "topics",
            In = ParameterLocation.Query,
            Required = true,
            Description = $"1 to {options.Value.MaxTopicsPerPublish} distinct topic ids (Laharsub:MaxTopicsPerPublish), comma-separated, "
            + "each optionally followed by ~ and the epoch that topic must have: 14,15~9f3c0a1b2c3d4e5f,16.",
            Schema = new OpenApiSchema { Type = JsonSchemaType.String, Pattern = "^[0-9]+(~[0-9A-Za-z_-]{1,32})?(,[0-9]+(~[0-9A-Za-z_-]{1,32})?)*$" },
        });
        DescribePublishBodyAndKey(operation);
    }

    /// <summary>What both publishes share: the message body, Idempotency-Key, and the answers these bring.</summary>
    private void DescribePublishBodyAndKey(OpenApiOperation operation)
    {
        operation.Parameters ??= [];
        operation.Parameters.Add(new OpenApiParameter
        {
            Name = "Idempotency-Key",
            In = ParameterLocation.Header,
            Description = "1 to 255 printable ASCII characters (a UUID), as a structured-field string. A repeat with the same key and request "
                + $"within Laharsub:IdempotencyKeyLifetime ({options.Value.IdempotencyKeyLifetime}) answers the first answer and publishes nothing; "
                + "the same key with another request is 422; while its first publish is being stored, 409.",
            Schema = new OpenApiSchema { Type = JsonSchemaType.String, MaxLength = 257 },
            Example = JsonValue.Create("\"8e03978e-40d5-43e8-bc93-6894a57f9324\""),
        });
        operation.RequestBody = new OpenApiRequestBody
        {
            Required = true,
            Description = $"The message, 1 to {options.Value.MaxMessageBytes} bytes (Laharsub:MaxMessageBytes), kept byte for byte with its Content-Type. "
                + "Any concrete media type is accepted, not only those listed (application/octet-stream without Content-Type); "
                + "a wildcard such as */* or text/* is refused with 400 naming Content-Type, since subscribers could not tell what the message is.",
            // Listed one by one, not as */*: generators send the declared type, and */* is no message's type.
            // JSON first: generators that take one media type per operation (NSwag, Kiota) take the first or
            // prefer JSON, and a binary first made NSwag's client send a FileParameter it cannot serialize.
            Content = new Dictionary<string, OpenApiMediaType>
            {
                ["application/json"] = new() { Schema = new OpenApiSchema { Description = "Any JSON value; subscribers receive it as sent." } },
                ["application/merge-patch+json"] = new()
                {
                    Schema = new OpenApiSchema
                    {
                        Type = JsonSchemaType.Object,
                        Description = "A JSON merge patch (RFC 7396): on a state topic applied to its document (the only type it takes, else 415); on another an ordinary message.",
                    },
                },
                ["text/plain"] = new() { Schema = new OpenApiSchema { Type = JsonSchemaType.String } },
                ["application/octet-stream"] = new() { Schema = new OpenApiSchema { Type = JsonSchemaType.String, Format = "binary" } },
            },
        };
        AddHeader(operation, "409", "Retry-After", "Seconds until the publish with the same Idempotency-Key is expected to be stored.");
        AddHeader(operation, "507", "Retry-After", "Seconds until older messages (or idempotency keys) expire and make room.");
    }

    private void DescribePoll(OpenApiOperation operation, OpenApiDocument document)
    {
        var settings = options.Value;
        operation.OperationId = "poll";
        operation.Parameters ??= [];
        operation.Parameters.Add(new OpenApiParameter
        {
            Name = "topics",
            In = ParameterLocation.Query,
            Description = $"The compact form: comma-separated subscriptions ID[:FROM][~EPOCH]. FROM is the smallest message id still wanted (1 = everything retained; "
                + $"without it, new messages only); EPOCH the topic's incarnation the cursor belongs to. At most {settings.MaxSubscriptionsPerPoll} topics "
                + "(Laharsub:MaxSubscriptionsPerPoll). Give either topics or subs, not both.",
            Schema = new OpenApiSchema { Type = JsonSchemaType.String, Pattern = "^[0-9]+(:[0-9]+)?(~[0-9A-Za-z_-]{1,32})?(,[0-9]+(:[0-9]+)?(~[0-9A-Za-z_-]{1,32})?)*$" },
            Example = JsonValue.Create("14:3,15~9f3c0a1b2c3d4e5f"),
        });
        // The indexed form names each value's query parameter itself (subs[0][topicid]=14), which OpenAPI
        // describes as an object parameter in form style, exploded: each property is one query parameter,
        // named by the property. (deepObject would read as subs[0][topicid] only for one level, and is
        // undefined for an array, which generators refuse.)
        operation.Parameters.Add(new OpenApiParameter
        {
            Name = "subs",
            In = ParameterLocation.Query,
            Style = ParameterStyle.Form,
            Explode = true,
            Description = "The indexed form jQuery's $.param writes, for clients that build the query themselves: subs[0][topicid]=14&subs[0][from]=3&subs[0][epoch]=..., "
                + "then subs[1][...] and so on, indexes from 0 without holes (each key is its own query parameter, as this object's properties). "
                + "topicid is required; from and epoch mean what they do in topics. Generated clients use topics instead.",
            Schema = new OpenApiSchema
            {
                Type = JsonSchemaType.Object,
                PropertyNames = new OpenApiSchema { Type = JsonSchemaType.String, Pattern = "^subs\\[[0-9]+\\]\\[(topicid|from|epoch)\\]$" },
                AdditionalProperties = new OpenApiSchema { Type = JsonSchemaType.String, Pattern = "^[0-9A-Za-z_-]{1,32}$" },
                MaxProperties = 3 * settings.MaxSubscriptionsPerPoll,
            },
            Example = new JsonObject { ["subs[0][topicid]"] = "14", ["subs[0][from]"] = "3", ["subs[1][topicid]"] = "15" },
        });
        var maxSeconds = (long)settings.MaxPollTimeout.TotalSeconds;
        operation.Parameters.Add(new OpenApiParameter
        {
            Name = "timeout",
            In = ParameterLocation.Query,
            Description = $"Seconds to wait for something to deliver before answering 204; 0 answers at once. At most {maxSeconds} (Laharsub:MaxPollTimeout).",
            Schema = Integer(minimum: 0, maximum: maxSeconds, @default: (long)settings.DefaultPollTimeout.TotalSeconds),
        });
        operation.Parameters.Add(new OpenApiParameter
        {
            Name = "conflate",
            In = ParameterLocation.Query,
            Description = "Conflation interval in milliseconds (0, the default, is off): each delivery carries at most the latest message of each topic, "
                + "deliveries are at least this far apart (a poll's counted from its arrival), and what is skipped is announced by a conflated notice.",
            Schema = Integer(minimum: 0, maximum: 60_000, @default: 0),
        });
        operation.Parameters.Add(new OpenApiParameter
        {
            Name = "latest",
            In = ParameterLocation.Query,
            Description = "true: a topic behind its cursor at the first read starts at its latest retained message, the rest announced by a conflated notice.",
            Schema = new OpenApiSchema { Type = JsonSchemaType.Boolean, Default = JsonValue.Create(false) },
        });
        operation.Parameters.Add(new OpenApiParameter
        {
            Name = "client",
            In = ParameterLocation.Query,
            Description = "Open mode: the subscriber's identity for presence, chosen by the client and not authenticated; while the poll holds "
                + "(and for Laharsub:Presence:GracePeriod after) it is a member of the subscribed topics that keep presence. Jwt mode refuses it: "
                + "the token's subject is the identity. Without one the subscriber is an anonymous observer.",
            Schema = new OpenApiSchema { Type = JsonSchemaType.String, Pattern = "^[A-Za-z0-9_.:@-]{1,64}$" },
        });
        operation.Parameters.Add(new OpenApiParameter
        {
            Name = "member",
            In = ParameterLocation.Query,
            Description = "With an identity: the member's data, a JSON object of at most Laharsub:Presence:MaxMemberDataBytes bytes, shown in the member list and presence events.",
            Schema = new OpenApiSchema { Type = JsonSchemaType.String },
            Example = JsonValue.Create("{\"name\":\"Alice\"}"),
        });

        if (operation.Responses?.TryGetValue("200", out var answered) == true && answered is OpenApiResponse ok)
        {
            ok.Description = $"Messages and notices (notices first), at most {settings.MaxMessagesPerPoll} messages and {settings.MaxBytesPerPoll} body bytes "
                + "(Laharsub:MaxMessagesPerPoll, Laharsub:MaxBytesPerPoll; poll again for the rest).";
            ok.Content = new Dictionary<string, OpenApiMediaType>
            {
                ["application/json"] = new() { Schema = new OpenApiSchemaReference(PollAnswerSchema, document) },
                ["multipart/mixed"] = new()
                {
                    Schema = new OpenApiSchema
                    {
                        Type = JsonSchemaType.String,
                        Description = "One part per notice, then one per message; the boundary is in Content-Type. A notice part has the headers "
                            + "Content-Type: application/json, Laharsub-Notice (gap, conflated, reset or topicDeleted), Laharsub-Topic-Id and Laharsub-Epoch, and "
                            + "the notice's JSON as its body. A message part has the message's Content-Type, Laharsub-Topic-Id, Laharsub-Epoch, "
                            + "Laharsub-Message-Id and Laharsub-Published-At, and the message's bytes exactly as its body.",
                    },
                    Example = JsonValue.Create("--laharsub-5f0c9a\r\nContent-Type: text/plain\r\nLaharsub-Topic-Id: 14\r\nLaharsub-Epoch: 9f3c0a1b2c3d4e5f\r\n"
                        + "Laharsub-Message-Id: 43\r\nLaharsub-Published-At: 2026-11-22T09:30:01.500Z\r\n\r\nhello\r\n--laharsub-5f0c9a--\r\n"),
                },
                ["text/event-stream"] = new()
                {
                    Schema = new OpenApiSchema
                    {
                        Type = JsonSchemaType.String,
                        Description = "With Accept: text/event-stream, a stream of Server-Sent Events instead of one answer: a 'subscribed' event with the resolved "
                            + "cursors, then each message as a default-type event whose data is its JSON object (as in the JSON format's messages), each "
                            + "notice as 'event: notice'; every event's id is the cursors to resume from (Last-Event-ID). Heartbeat comments keep it open; "
                            + "'event: reconnect' ends it (server stopping, token expired). docs/protocol.md, \"Streams\".",
                    },
                    Example = JsonValue.Create("retry: 2000\n\nevent: subscribed\nid: 14:43~9f3c0a1b2c3d4e5f\ndata: {\"topics\":[{\"topicId\":14,\"epoch\":\"9f3c0a1b2c3d4e5f\",\"from\":43}]}\n\n"
                        + "id: 14:44~9f3c0a1b2c3d4e5f\ndata: {\"topicId\":14,\"epoch\":\"9f3c0a1b2c3d4e5f\",\"messageId\":43,\"publishedAt\":\"2026-11-22T09:30:01.500Z\",\"contentType\":\"text/plain\",\"encoding\":\"text\",\"body\":\"hello\"}\n\n"),
                },
            };
            AddHeader(operation, "200", "Cache-Control", "no-store");
        }
        if (operation.Responses?.TryGetValue("204", out var empty) == true && empty is OpenApiResponse noContent)
        {
            noContent.Description = "Nothing to deliver within the timeout, or the server is stopping (then with Connection: close): poll again.";
        }
        operation.Responses?.TryAdd("414", new OpenApiResponse
        {
            Description = "The request line is longer than Kestrel:Limits:MaxRequestLineSize allows: split the topics over several polls.",
        });
    }

    /// <summary>Laharsub writes numbers as JSON numbers; the schemas say "or string" only because web defaults would read them from strings.</summary>
    private static void WriteNumbersAsNumbers(IDictionary<string, IOpenApiSchema> schemas)
    {
        foreach (var schema in schemas.Values.OfType<OpenApiSchema>())
        {
            foreach (var property in schema.Properties?.Values.OfType<OpenApiSchema>() ?? [])
            {
                if (property.Type is { } type && type.HasFlag(JsonSchemaType.String)
                    && (type.HasFlag(JsonSchemaType.Integer) || type.HasFlag(JsonSchemaType.Number)))
                {
                    property.Type = type & ~JsonSchemaType.String;
                    property.Pattern = null;
                }
            }
        }
    }

    /// <summary>
    /// The extension members Laharsub's problems carry besides RFC 9457's, and detail as the message of the
    /// exceptions generated clients throw for them (Kiota reads x-ms-primary-error-message).
    /// </summary>
    private static void DescribeProblems(IDictionary<string, IOpenApiSchema> schemas)
    {
        foreach (var name in (string[])[ProblemSchema, ValidationProblemSchema])
        {
            if (schemas.TryGetValue(name, out var found) && found is OpenApiSchema schema
                && schema.Properties?.TryGetValue("detail", out var detail) == true && detail is OpenApiSchema message)
            {
                message.Description = "What went wrong and what to do; in a validation problem, each bad parameter's error.";
                message.Extensions ??= new Dictionary<string, IOpenApiExtension>();
                message.Extensions[OpenApiPrimaryErrorMessageExtension.Name] = new OpenApiPrimaryErrorMessageExtension { IsPrimaryErrorMessage = true };
            }
        }
        if (!schemas.TryGetValue(ProblemSchema, out var problemSchema) || problemSchema is not OpenApiSchema problem)
        {
            return;
        }
        problem.Description = "An RFC 9457 problem detail: title says what went wrong, detail what to do (naming the setting when a limit was reached).";
        problem.Properties ??= new Dictionary<string, IOpenApiSchema>();
        problem.Properties["topicId"] = new OpenApiSchema { Type = JsonSchemaType.Integer, Format = "int64", Description = "404 and 412: the topic concerned." };
        problem.Properties["epoch"] = new OpenApiSchema { Type = JsonSchemaType.String, Description = "412: the topic's current epoch." };
        problem.Properties["store"] = new OpenApiSchema { Type = JsonSchemaType.String, Description = "503: the store that could not be reached (e.g. Redis)." };
    }

    private static void DescribePollAnswer(IDictionary<string, IOpenApiSchema> schemas)
    {
        var epoch = new OpenApiSchema { Type = JsonSchemaType.String, Pattern = "^[0-9A-Za-z_-]{1,32}$", Description = "The topic's incarnation." };
        schemas[PollMessageSchema] = new OpenApiSchema
        {
            Type = JsonSchemaType.Object,
            Description = "A delivered message.",
            Required = new HashSet<string> { "topicId", "epoch", "messageId", "publishedAt", "contentType", "encoding", "body" },
            Properties = new Dictionary<string, IOpenApiSchema>
            {
                ["topicId"] = Integer(minimum: 1),
                ["epoch"] = epoch,
                ["messageId"] = Integer(minimum: 1),
                ["publishedAt"] = new OpenApiSchema { Type = JsonSchemaType.String, Format = "date-time" },
                ["contentType"] = new OpenApiSchema { Type = JsonSchemaType.String, Description = "The publisher's Content-Type." },
                ["encoding"] = new OpenApiSchema
                {
                    Type = JsonSchemaType.String,
                    Enum = [JsonValue.Create("text"), JsonValue.Create("base64")],
                    Description = "text: body is the message as text (textual content type, valid UTF-8); base64: body is the bytes in standard base64.",
                },
                ["body"] = new OpenApiSchema { Type = JsonSchemaType.String },
            },
        };
        schemas[NoticeSchema] = new OpenApiSchema
        {
            Type = JsonSchemaType.Object,
            Description = "Something a subscriber must know besides messages. gap: fromMessageId..toMessageId are no longer retained. "
                + "reset: continue from firstMessageId with epoch (reason beyondEnd: the cursor was beyond the end; epochChanged: the topic is another incarnation). "
                + "conflated: fromMessageId..toMessageId were skipped because the subscriber asked for conflation (conflate or latest). "
                + "topicDeleted: stop polling the topic.",
            Required = new HashSet<string> { "type", "topicId", "epoch" },
            Properties = new Dictionary<string, IOpenApiSchema>
            {
                ["type"] = new OpenApiSchema { Type = JsonSchemaType.String, Enum = [JsonValue.Create("gap"), JsonValue.Create("conflated"), JsonValue.Create("reset"), JsonValue.Create("topicDeleted")] },
                ["topicId"] = Integer(minimum: 1),
                ["epoch"] = epoch,
                ["fromMessageId"] = Integer(minimum: 1, description: "gap: the first id lost; conflated: the first id skipped."),
                ["toMessageId"] = Integer(minimum: 1, description: "gap: the last id lost; conflated: the last id skipped."),
                ["reason"] = new OpenApiSchema { Type = JsonSchemaType.String, Enum = [JsonValue.Create("beyondEnd"), JsonValue.Create("epochChanged")] },
                ["requestedFrom"] = Integer(minimum: 0, description: "reset: the cursor sent, 0 without one."),
                ["requestedEpoch"] = new OpenApiSchema { Type = JsonSchemaType.String, Description = "reset with epochChanged: the epoch sent." },
                ["firstMessageId"] = Integer(minimum: 1, description: "reset: the id to continue from."),
                ["lastMessageId"] = Integer(minimum: 0, description: "reset: the topic's last id."),
            },
        };
        schemas[PollAnswerSchema] = new OpenApiSchema
        {
            Type = JsonSchemaType.Object,
            Description = "A poll answer in JSON: apply the notices first, then the messages, then move each cursor past what arrived.",
            Required = new HashSet<string> { "notices", "messages" },
            Properties = new Dictionary<string, IOpenApiSchema>
            {
                ["notices"] = new OpenApiSchema { Type = JsonSchemaType.Array, Items = new OpenApiSchemaReference(NoticeSchema) },
                ["messages"] = new OpenApiSchema { Type = JsonSchemaType.Array, Items = new OpenApiSchemaReference(PollMessageSchema) },
            },
        };
    }

    private static OpenApiSchema Integer(long minimum, long? maximum = null, long? @default = null, string? description = null) => new()
    {
        Type = JsonSchemaType.Integer,
        Format = "int64",
        Minimum = minimum.ToString(CultureInfo.InvariantCulture),
        Maximum = maximum?.ToString(CultureInfo.InvariantCulture),
        Default = @default is { } value ? JsonValue.Create(value) : null,
        Description = description,
    };

    /// <summary>Replaces the schema (and description) of a parameter the endpoint binds as a string to report bad values itself.</summary>
    private static void SetParameter(OpenApiOperation operation, string name, string description, OpenApiSchema schema)
    {
        if (operation.Parameters?.FirstOrDefault(p => p.Name == name) is OpenApiParameter parameter)
        {
            parameter.Description = description;
            parameter.Schema = schema;
        }
    }

    private static void AddHeader(OpenApiOperation operation, string status, string name, string description)
    {
        if (operation.Responses?.TryGetValue(status, out var found) == true && found is OpenApiResponse response)
        {
            response.Headers ??= new Dictionary<string, IOpenApiHeader>();
            response.Headers[name] = new OpenApiHeader { Description = description, Schema = new OpenApiSchema { Type = JsonSchemaType.String } };
        }
    }
}

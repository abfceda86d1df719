// Create, publish, poll, publish to several topics and read presence through the client Kiota generated
// from the served OpenAPI document (Generated/, namespace Generated), as its user would call it. Prints the
// outcomes as one JSON object; KiotaClientTests checks them, and what the server stored.
using System.Text;
using System.Text.Json;
using Generated;
using Generated.Models;
using Microsoft.Kiota.Abstractions;
using Microsoft.Kiota.Abstractions.Authentication;
using Microsoft.Kiota.Abstractions.Serialization;
using Microsoft.Kiota.Http.HttpClientLibrary;

using var http = new HttpClient { Timeout = TimeSpan.FromSeconds(10) };
var adapter = new HttpClientRequestAdapter(new AnonymousAuthenticationProvider(), httpClient: http) { BaseUrl = args[0].TrimEnd('/') };
var client = new LaharsubClient(adapter);

var plain = await client.Ps.Topics.PostAsync(new NewTopic());
var room = await client.Ps.Topics.PostAsync(new NewTopic { Label = "kiota-room", Presence = true });

// Kiota sends the body as JSON, the media type it prefers among those declared.
var json = await client.Ps.Topics[plain!.TopicId!.Value].PostAsync(new UntypedObject(new Dictionary<string, UntypedNode>
{
    ["greeting"] = new UntypedString("hello"),
    ["count"] = new UntypedInteger(2),
}));
// Another declared media type goes through the request the builder makes, with the content replaced.
var request = client.Ps.Topics[plain.TopicId.Value].ToPostRequestInformation(new UntypedString(""));
request.Headers.Remove("Content-Type");
request.SetStreamContent(new MemoryStream(Encoding.UTF8.GetBytes("hello from Kiota")), "text/plain");
var text = await adapter.SendAsync(request, PublishedMessage.CreateFromDiscriminatorValue,
    new Dictionary<string, ParsableFactory<IParsable>> { ["XXX"] = ProblemDetails.CreateFromDiscriminatorValue });
var many = await client.Ps.Topics.Publish.PostAsync(new UntypedObject(new Dictionary<string, UntypedNode> { ["to"] = new UntypedString("both") }),
    c => c.QueryParameters.Topics = $"{plain.TopicId},{room!.TopicId}");

var polled = await client.Ps.Subscriptions.GetAsync(c =>
{
    c.QueryParameters.Topics = $"{plain.TopicId}:1,{room!.TopicId}:1";
    c.QueryParameters.Timeout = 0;
    c.QueryParameters.Client = "alice";
    c.QueryParameters.Member = """{"name":"Alice"}""";
});
var presence = await client.Ps.Topics[room!.TopicId!.Value].Presence.GetAsync(c => c.QueryParameters.Limit = 10);

// Nothing after the last message: the quiet poll's 204, an answer without a body.
var quiet = await client.Ps.Subscriptions.GetAsync(c =>
{
    c.QueryParameters.Topics = $"{plain.TopicId}:4";
    c.QueryParameters.Timeout = 0;
});

string? notFound = null;
try
{
    await client.Ps.Topics[999_999].GetAsync();
}
catch (ProblemDetails exception)
{
    notFound = exception.Message;
}
string? invalid = null;
try
{
    await client.Ps.Topics.PostAsync(new NewTopic { Label = "9lives" });
}
catch (HttpValidationProblemDetails exception)
{
    invalid = exception.Message;
}

Console.WriteLine(JsonSerializer.Serialize(new
{
    plain = plain.TopicId,
    room = room.TopicId,
    roomPresence = room.Presence,
    published = new[] { json!.MessageId, text!.MessageId },
    many = many!.Messages!.Select(m => new { m.TopicId, m.MessageId }),
    delivered = polled!.Messages!.Select(m => new { m.TopicId, m.MessageId, m.ContentType, m.Body }),
    occupancy = presence!.Occupancy,
    members = presence.Members!.Select(m => new { m.Member, Data = m.Data is null ? null : KiotaJsonSerializer.SerializeAsString(m.Data) }),
    quiet = quiet is null ? "null" : "an answer",
    notFound,
    invalid,
}));

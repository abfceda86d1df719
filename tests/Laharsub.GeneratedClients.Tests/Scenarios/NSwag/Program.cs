// Create, publish, poll, publish to several topics and read presence through the client NSwag generated
// from the served OpenAPI document (Client.cs, namespace Generated), as its user would call it. Prints the
// outcomes as one JSON object; NSwagClientTests checks them, and what the server stored.
using System.Text.Json;
using Generated;

using var http = new HttpClient { Timeout = TimeSpan.FromSeconds(10) };
var client = new LaharsubClient(http) { BaseUrl = args[0] };

// The optional body left out: NSwag sends JSON null.
var plain = await client.CreateTopicAsync(null);
var room = await client.CreateTopicAsync(new NewTopic { Label = "nswag-room", Presence = true });

// NSwag sends the body's first media type, application/json: an object, and a string as a JSON string.
var json = await client.PublishAsync(plain.TopicId, null, null, new { greeting = "hello", count = 2 });
var text = await client.PublishAsync(plain.TopicId, null, null, "hello from NSwag");
var many = await client.PublishManyAsync($"{plain.TopicId},{room.TopicId}", null, new { to = "both" });

var polled = await client.PollAsync($"{plain.TopicId}:1,{room.TopicId}:1", null, 0, null, null, "alice", """{"name":"Alice"}""");
var presence = await client.GetPresenceAsync(room.TopicId, null, 10);

// Nothing after the last message: the quiet poll's 204, which NSwag throws as an ApiException (a 2xx of another type than the 200's).
string quiet = "answered";
try
{
    await client.PollAsync($"{plain.TopicId}:4", null, 0, null, null, null, null);
}
catch (ApiException exception)
{
    quiet = $"ApiException {exception.StatusCode}";
}

// NSwag's exception message is the answer's description; the problem itself is its Result.
string notFound = null;
try
{
    await client.GetTopicAsync(999_999);
}
catch (ApiException<ProblemDetails> exception)
{
    notFound = $"{exception.Message} | {exception.Result.Detail}";
}
string invalid = null;
try
{
    await client.CreateTopicAsync(new NewTopic { Label = "9lives" });
}
catch (ApiException<HttpValidationProblemDetails> exception)
{
    invalid = $"{exception.Message} | {exception.Result.Detail}";
}

Console.WriteLine(JsonSerializer.Serialize(new
{
    plain = plain.TopicId,
    room = room.TopicId,
    roomPresence = room.Presence,
    published = new[] { json.MessageId, text.MessageId },
    many = many.Messages.Select(m => new { m.TopicId, m.MessageId }),
    delivered = polled.Messages.Select(m => new { m.TopicId, m.MessageId, m.ContentType, m.Body }),
    occupancy = presence.Occupancy,
    members = presence.Members.Select(m => new { m.Member, Data = m.Data?.ToString() }),
    quiet,
    notFound,
    invalid,
}));

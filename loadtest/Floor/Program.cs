using System.Buffers;
using System.IO.Pipelines;
using Laharsub.Floor;
using Microsoft.AspNetCore.Http.HttpResults;

// The .NET floor: what loadtest/LoadTestClient asks of Laharsub (docs/protocol.md: create a topic,
// publish, the long poll's JSON answer, SSE, the laharsub.v1 WebSocket, /health), done on ASP.NET Core's
// default request path by the plainest code that does it, and nothing else: no access control, limits,
// metrics, multipart, indexed queries or heartbeats; one constant epoch. `--urls` chooses the port.
var builder = WebApplication.CreateSlimBuilder(args);
builder.Services.ConfigureHttpJsonOptions(options => options.SerializerOptions.TypeInfoResolverChain.Insert(0, FloorJson.Default));
builder.Services.AddSingleton<Topics>();
var app = builder.Build();
app.UseWebSockets();

app.MapGet("/health", () => "Healthy");
var ps = app.MapGroup("/ps");
ps.MapPost("/topics", (Topics topics) =>
{
    var topic = topics.Create();
    return TypedResults.Created($"/ps/topics/{topic.Id}", new TopicCreated(topic.Id, Topic.Epoch));
});
ps.MapDelete("/topics/{id:long}", Results<NoContent, NotFound> (long id, Topics topics) =>
    topics.Remove(id) ? TypedResults.NoContent() : TypedResults.NotFound());
ps.MapPost("/topics/{id:long}", async Task<Results<Created<Published>, NotFound, ProblemHttpResult>> (long id, HttpRequest request, Topics topics) =>
{
    if (!topics.TryGet(id, out var topic))
    {
        return TypedResults.NotFound();
    }
    var body = await ReadBodyAsync(request.BodyReader, request.HttpContext.RequestAborted);
    if (body.Length == 0)
    {
        return TypedResults.Problem("A message needs a body.", statusCode: StatusCodes.Status400BadRequest);
    }
    var messageId = topic.Publish(body, request.ContentType ?? "application/octet-stream");
    return TypedResults.Created((string?)null, new Published(id, messageId, Topic.Epoch));
});
ps.MapGet("/subscriptions", async Task<IResult> (HttpContext context, Topics store, string? topics, int? timeout, IHostApplicationLifetime lifetime) =>
{
    var subscriptions = Subscription.Parse(topics ?? "", store, out var problem);
    if (subscriptions is null)
    {
        return problem!;
    }
    // Each wait ends when the client goes or the server stops, so that a stop does not wait out every stream.
    using var ended = CancellationTokenSource.CreateLinkedTokenSource(context.RequestAborted, lifetime.ApplicationStopping);
    if (context.WebSockets.IsWebSocketRequest)
    {
        await SocketTransport.RunAsync(context, subscriptions, store, ended);
    }
    else if (context.Request.Headers.Accept.ToString().Contains("text/event-stream", StringComparison.OrdinalIgnoreCase))
    {
        await StreamEventsAsync(context.Response, subscriptions, ended.Token);
    }
    else
    {
        await PollAsync(context.Response, subscriptions, TimeSpan.FromSeconds(Math.Clamp(timeout ?? 30, 0, 3600)), ended.Token);
    }
    return Results.Empty;
});
app.Run();

// A held GET: everything available at once, else the first publish to any of its topics, else 204 at the timeout.
static async Task PollAsync(HttpResponse response, Subscription[] subscriptions, TimeSpan timeout, CancellationToken ended)
{
    response.Headers.CacheControl = "no-store";
    var entries = new List<Entry>();
    var published = new Task[subscriptions.Length];
    var deadline = DateTime.UtcNow + timeout;
    while (true)
    {
        for (var i = 0; i < subscriptions.Length; i++)
        {
            published[i] = subscriptions[i].Topic.Read(ref subscriptions[i].From, entries);
        }
        if (entries.Count > 0)
        {
            await WriteAnswerAsync(response, entries);
            return;
        }
        var remaining = deadline - DateTime.UtcNow;
        if (remaining <= TimeSpan.Zero)
        {
            break;
        }
        try
        {
            await (published.Length == 1 ? published[0] : Task.WhenAny(published)).WaitAsync(remaining, ended);
        }
        catch (Exception exception) when (exception is TimeoutException or OperationCanceledException)
        {
            // Timed out, the client went, or the server is stopping: nothing to deliver.
            break;
        }
    }
    response.StatusCode = StatusCodes.Status204NoContent;
}

// {"notices":[...],"messages":[...]} from the JSON objects encoded at publish, with its Content-Length (the generator needs one).
static async Task WriteAnswerAsync(HttpResponse response, List<Entry> entries)
{
    response.ContentType = "application/json";
    var notices = entries.Count(e => e.IsNotice);
    // Commas between the notices and between the messages.
    var commas = Math.Max(notices - 1, 0) + Math.Max(entries.Count - notices - 1, 0);
    response.ContentLength = """{"notices":[],"messages":[]}""".Length + entries.Sum(e => e.Json.Length) + commas;
    var writer = response.BodyWriter;
    writer.Write("""{"notices":["""u8);
    WriteJoined(writer, entries, notices: true);
    writer.Write("""],"messages":["""u8);
    WriteJoined(writer, entries, notices: false);
    writer.Write("]}"u8);
    await writer.FlushAsync();
}

static void WriteJoined(PipeWriter writer, List<Entry> entries, bool notices)
{
    var first = true;
    foreach (var entry in entries.Where(e => e.IsNotice == notices))
    {
        writer.Write(first ? ""u8 : ","u8);
        writer.Write(entry.Json);
        first = false;
    }
}

// Server-Sent Events: an open event with the resolved cursors, then a message event or notice event
// each, every one with the stream's cursors after it as its id; flushed after each batch.
static async Task StreamEventsAsync(HttpResponse response, Subscription[] subscriptions, CancellationToken ended)
{
    response.ContentType = "text/event-stream";
    response.Headers.CacheControl = "no-store";
    response.Headers["X-Accel-Buffering"] = "no";
    var writer = response.BodyWriter;
    writer.Write("retry: 2000\n\nevent: subscribed\nid: "u8);
    Subscription.WriteCursors(writer, subscriptions);
    writer.Write("\ndata: "u8);
    writer.Write(Subscription.Describe(subscriptions));
    writer.Write("\n\n"u8);
    var entries = new List<Entry>();
    var published = new Task[subscriptions.Length];
    try
    {
        await writer.FlushAsync(ended);
        while (!ended.IsCancellationRequested)
        {
            var wrote = false;
            for (var i = 0; i < subscriptions.Length; i++)
            {
                entries.Clear();
                published[i] = subscriptions[i].Topic.Read(ref subscriptions[i].From, entries);
                wrote |= entries.Count > 0;
                foreach (var entry in entries)
                {
                    subscriptions[i].From = entry.Next;
                    writer.Write(entry.IsNotice ? "event: notice\nid: "u8 : "id: "u8);
                    Subscription.WriteCursors(writer, subscriptions);
                    writer.Write("\ndata: "u8);
                    writer.Write(entry.Json);
                    writer.Write("\n\n"u8);
                }
            }
            if (wrote)
            {
                await writer.FlushAsync(ended);
            }
            else
            {
                await (published.Length == 1 ? published[0] : Task.WhenAny(published)).WaitAsync(ended);
            }
        }
    }
    catch (OperationCanceledException)
    {
        // The client went or the server is stopping: the stream ends; a client resumes from its cursors.
    }
}

static async Task<byte[]> ReadBodyAsync(PipeReader reader, CancellationToken cancellationToken)
{
    while (true)
    {
        var read = await reader.ReadAsync(cancellationToken);
        if (read.IsCompleted)
        {
            var body = read.Buffer.ToArray();
            reader.AdvanceTo(read.Buffer.End);
            return body;
        }
        reader.AdvanceTo(read.Buffer.Start, read.Buffer.End);
    }
}

using System.Globalization;

const string Usage = """
    Usage: Laharsub.KestrelFloor PORT held|timer SECONDS|routed
      held          every request waits for good on one shared task: Kestrel's own cost of a held request
      timer SECONDS every request waits SECONDS on a timer, then gets 204: a request per connection that
                    comes and goes like a poll that times out, for the cost of one that lives seconds
      routed        as held, through routing and a minimal-API endpoint (MapGet), as Laharsub's poll is
    """;

if (args.Length < 2 || !int.TryParse(args[0], CultureInfo.InvariantCulture, out var port))
{
    Console.Error.WriteLine(Usage);
    return 2;
}
var builder = WebApplication.CreateSlimBuilder();
builder.Logging.ClearProviders();
builder.WebHost.ConfigureKestrel(kestrel =>
{
    kestrel.ListenLocalhost(port);
    kestrel.Limits.MaxConcurrentConnections = null;
});
var app = builder.Build();
var never = new TaskCompletionSource().Task;
switch (args)
{
    case [_, "held"]:
        app.Run(_ => never);
        break;
    case [_, "routed"]:
        app.MapGet("/{**path}", () => never);
        break;
    case [_, "timer", var text] when double.TryParse(text, CultureInfo.InvariantCulture, out var seconds):
        var wait = TimeSpan.FromSeconds(seconds);
        app.Run(async context =>
        {
            await Task.Delay(wait, context.RequestAborted);
            context.Response.StatusCode = StatusCodes.Status204NoContent;
        });
        break;
    default:
        Console.Error.WriteLine(Usage);
        return 2;
}
await app.RunAsync();
return 0;

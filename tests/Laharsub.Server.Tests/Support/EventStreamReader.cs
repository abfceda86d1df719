using System.Net;
using System.Text;
using System.Text.Json;

namespace Laharsub.Server.Tests.Support;

/// <summary>What an event stream yields: a dispatched event or a comment line.</summary>
public abstract record EventStreamItem;

/// <summary>A comment line (<c>: heartbeat</c>), its text without the colon and one leading space.</summary>
public sealed record EventStreamComment(string Text) : EventStreamItem;

/// <summary>
/// A dispatched event, as a browser's EventSource would see it: <see cref="Type"/> is <c>message</c> when the
/// event named none; <see cref="IdField"/> is the event's own <c>id:</c> field (null when it had none) and
/// <see cref="LastEventId"/> the id a browser would send back in <c>Last-Event-ID</c> after it.
/// </summary>
public sealed record ServerSentEvent(string Type, string Data, string? IdField, string LastEventId) : EventStreamItem
{
    public JsonElement Json => JsonDocument.Parse(Data).RootElement.Clone();
}

/// <summary>
/// A Server-Sent Events client written from the HTML standard's "interpreting an event stream" (lines end
/// in CRLF, LF or CR; a blank line dispatches; <c>data</c> lines join with LF; the id persists between
/// events; <c>retry</c> only when all digits), independent of the server's writer. Every read is bounded.
/// </summary>
public sealed class EventStreamReader : IAsyncDisposable
{
    private readonly HttpResponseMessage _response;
    private readonly StreamReader _reader;
    private readonly StringBuilder _data = new();
    private string _eventType = "";
    private string _lastEventIdBuffer = "";
    private string? _idField;

    private EventStreamReader(HttpResponseMessage response, Stream body)
    {
        _response = response;
        _reader = new StreamReader(body, new UTF8Encoding(encoderShouldEmitUTF8Identifier: false), detectEncodingFromByteOrderMarks: false);
    }

    public HttpResponseMessage Response => _response;

    /// <summary>The stream's first line, as received.</summary>
    public string? FirstLine { get; private set; }

    /// <summary>The last valid <c>retry:</c> field, in milliseconds.</summary>
    public long? Retry { get; private set; }

    /// <summary>The last event id as the standard keeps it (what a browser would send on reconnect).</summary>
    public string LastEventId { get; private set; } = "";

    /// <summary>Every comment seen so far, in order.</summary>
    public List<string> Comments { get; } = [];

    /// <summary>Sends a stream request and returns the response once its headers arrive, whatever its status.</summary>
    public static async Task<HttpResponseMessage> RequestAsync(HttpClient client, string query, string? lastEventId = null, string accept = "text/event-stream")
    {
        using var request = new HttpRequestMessage(HttpMethod.Get, "subscriptions" + (query.Length > 0 ? "?" + query : ""));
        request.Headers.TryAddWithoutValidation("Accept", accept);
        if (lastEventId is not null)
        {
            Assert.True(request.Headers.TryAddWithoutValidation("Last-Event-ID", lastEventId));
        }
        return await client.SendAsync(request, HttpCompletionOption.ResponseHeadersRead).WaitAsync(WireClient.Bound);
    }

    /// <summary>Opens a stream; fails unless it is answered 200 with <c>text/event-stream</c>.</summary>
    public static async Task<EventStreamReader> OpenAsync(HttpClient client, string query, string? lastEventId = null) =>
        await ReadingAsync(await RequestAsync(client, query, lastEventId));

    /// <summary>Reads <paramref name="response"/> as a stream; fails (disposing it) unless it is a 200 with <c>text/event-stream</c>.</summary>
    public static async Task<EventStreamReader> ReadingAsync(HttpResponseMessage response)
    {
        if (response.StatusCode != HttpStatusCode.OK || response.Content.Headers.ContentType?.MediaType != "text/event-stream")
        {
            var body = await response.Content.ReadAsStringAsync().WaitAsync(WireClient.Bound);
            response.Dispose();
            throw new Xunit.Sdk.XunitException($"expected a 200 event stream, got {(int)response.StatusCode} '{response.Content.Headers.ContentType}': {body}");
        }
        var stream = await response.Content.ReadAsStreamAsync().WaitAsync(WireClient.Bound);
        return new EventStreamReader(response, stream);
    }

    /// <summary>The next event or comment; null when the stream ended (an event not yet dispatched is discarded, as the standard says).</summary>
    public async Task<EventStreamItem?> NextAsync(TimeSpan? bound = null)
    {
        using var timeout = new CancellationTokenSource(bound ?? WireClient.Bound);
        while (true)
        {
            string? line;
            try
            {
                line = await _reader.ReadLineAsync(timeout.Token);
            }
            catch (OperationCanceledException) when (timeout.IsCancellationRequested)
            {
                throw new TimeoutException($"No complete line within {bound ?? WireClient.Bound}.");
            }
            if (line is null)
            {
                return null;
            }
            FirstLine ??= line;
            if (line.Length == 0)
            {
                LastEventId = _lastEventIdBuffer;
                var id = _idField;
                _idField = null;
                if (_data.Length == 0)
                {
                    _eventType = "";
                    continue;
                }
                var data = _data.ToString(0, _data.Length - 1);
                var type = _eventType.Length == 0 ? "message" : _eventType;
                _data.Clear();
                _eventType = "";
                return new ServerSentEvent(type, data, id, LastEventId);
            }
            if (line[0] == ':')
            {
                var text = line.Length > 1 && line[1] == ' ' ? line[2..] : line[1..];
                Comments.Add(text);
                return new EventStreamComment(text);
            }
            var colon = line.IndexOf(':');
            var field = colon < 0 ? line : line[..colon];
            var value = colon < 0 ? "" : line[(colon + 1)..];
            if (value.StartsWith(' '))
            {
                value = value[1..];
            }
            switch (field)
            {
                case "event":
                    _eventType = value;
                    break;
                case "data":
                    _data.Append(value).Append('\n');
                    break;
                case "id" when !value.Contains('\0'):
                    _lastEventIdBuffer = value;
                    _idField = value;
                    break;
                case "retry" when value.Length > 0 && value.All(char.IsAsciiDigit):
                    Retry = long.Parse(value, System.Globalization.CultureInfo.InvariantCulture);
                    break;
            }
        }
    }

    /// <summary>The next event, comments skipped (they stay in <see cref="Comments"/>); fails if the stream ends first.</summary>
    public async Task<ServerSentEvent> ReadEventAsync(TimeSpan? bound = null)
    {
        while (true)
        {
            switch (await NextAsync(bound))
            {
                case ServerSentEvent @event:
                    return @event;
                case null:
                    throw new Xunit.Sdk.XunitException("the stream ended before the next event");
            }
        }
    }

    /// <summary>The next event, which must be of <paramref name="type"/>.</summary>
    public async Task<ServerSentEvent> ReadEventAsync(string type, TimeSpan? bound = null)
    {
        var @event = await ReadEventAsync(bound);
        Assert.True(@event.Type == type, $"expected an event of type '{type}', got '{@event.Type}' with data {@event.Data}");
        return @event;
    }

    /// <summary>Everything until the stream ends.</summary>
    public async Task<List<EventStreamItem>> ReadToEndAsync(TimeSpan? bound = null)
    {
        var items = new List<EventStreamItem>();
        while (await NextAsync(bound) is { } item)
        {
            items.Add(item);
        }
        return items;
    }

    public ValueTask DisposeAsync()
    {
        // Closes the connection: the client going away, as a browser tab would.
        _reader.Dispose();
        _response.Dispose();
        return ValueTask.CompletedTask;
    }
}

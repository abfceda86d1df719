using System.Globalization;
using System.Net.Http.Headers;
using System.Security.Cryptography;
using System.Text;
using System.Threading.Channels;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;

namespace Laharsub.Server.Delivery;

/// <summary>
/// Sends presence changes to <c>Laharsub:Presence:Webhook:Url</c>, signed, one at a time in the order they
/// happened at this instance, each retried with exponential backoff. At most <c>MaxOutstanding</c> wait:
/// a change beyond that is dropped at once rather than held in memory without bound, and a change that
/// fails every attempt is dropped too; both are logged and counted (<c>laharsub.presence.webhook.dropped</c>).
/// </summary>
internal sealed partial class PresenceWebhook : BackgroundService
{
    public const string SignatureHeader = "Laharsub-Signature";

    private readonly LaharsubPresenceWebhookOptions _options;
    private readonly PresenceMetrics _metrics;
    private readonly TimeProvider _clock;
    private readonly ILogger _logger;
    private readonly Channel<byte[]>? _queue;
    private readonly byte[] _secret;

    public PresenceWebhook(IOptions<LaharsubPresenceOptions> options, PresenceMetrics metrics, TimeProvider clock, ILogger<PresenceWebhook> logger)
    {
        _options = options.Value.Webhook;
        _metrics = metrics;
        _clock = clock;
        _logger = logger;
        _secret = Encoding.UTF8.GetBytes(_options.Secret ?? "");
        if (_options.Url is not null)
        {
            _queue = Channel.CreateBounded<byte[]>(new BoundedChannelOptions(_options.MaxOutstanding)
            {
                // Wait, with TryWrite only: a full queue refuses the write, and the refusal is counted.
                FullMode = BoundedChannelFullMode.Wait,
                SingleReader = true,
                SingleWriter = false,
            });
        }
    }

    /// <summary>Queues a change; drops it (logged and counted) when <c>MaxOutstanding</c> are already waiting. Nothing when no URL is set.</summary>
    public void Enqueue(string type, long topicId, string member, string? data, int occupancy)
    {
        if (_queue is null)
        {
            return;
        }
        if (!_queue.Writer.TryWrite(PresenceEvents.Encode(type, member, data, occupancy, topicId, _clock.GetUtcNow())))
        {
            _metrics.WebhookDropped("full");
            Log.DroppedFull(_logger, type, topicId, _options.MaxOutstanding);
        }
    }

    /// <summary>The signature header's value for <paramref name="body"/> sent at <paramref name="unixSeconds"/>: <c>t=&lt;unix&gt;,v1=&lt;hex HMAC-SHA256 of "t.body"&gt;</c>.</summary>
    internal static string Sign(byte[] secret, long unixSeconds, ReadOnlySpan<byte> body)
    {
        var t = unixSeconds.ToString(CultureInfo.InvariantCulture);
        var signed = new byte[t.Length + 1 + body.Length];
        Encoding.ASCII.GetBytes(t, signed);
        signed[t.Length] = (byte)'.';
        body.CopyTo(signed.AsSpan(t.Length + 1));
        return $"t={t},v1={Convert.ToHexStringLower(HMACSHA256.HashData(secret, signed))}";
    }

    protected override async Task ExecuteAsync(CancellationToken stoppingToken)
    {
        if (_queue is null)
        {
            return;
        }
        using var http = new HttpClient(new SocketsHttpHandler { PooledConnectionLifetime = TimeSpan.FromMinutes(5) }) { Timeout = _options.Timeout };
        try
        {
            await foreach (var body in _queue.Reader.ReadAllAsync(stoppingToken).ConfigureAwait(false))
            {
                await SendAsync(http, body, stoppingToken).ConfigureAwait(false);
            }
        }
        catch (OperationCanceledException) when (stoppingToken.IsCancellationRequested)
        {
            // Stopping: what is still queued is not sent.
        }
    }

    private async Task SendAsync(HttpClient http, byte[] body, CancellationToken stoppingToken)
    {
        var delay = _options.FirstRetryDelay;
        for (var attempt = 1; ; attempt++)
        {
            string failure;
            try
            {
                using var request = new HttpRequestMessage(HttpMethod.Post, _options.Url) { Content = new ByteArrayContent(body) };
                request.Content.Headers.ContentType = new MediaTypeHeaderValue("application/json");
                request.Headers.TryAddWithoutValidation(SignatureHeader, Sign(_secret, _clock.GetUtcNow().ToUnixTimeSeconds(), body));
                using var response = await http.SendAsync(request, stoppingToken).ConfigureAwait(false);
                if (response.IsSuccessStatusCode)
                {
                    return;
                }
                failure = ((int)response.StatusCode).ToString(CultureInfo.InvariantCulture);
            }
            catch (Exception exception) when (exception is HttpRequestException or TaskCanceledException && !stoppingToken.IsCancellationRequested)
            {
                failure = exception.Message;
            }
            if (attempt >= _options.MaxAttempts)
            {
                _metrics.WebhookDropped("failed");
                Log.DroppedFailed(_logger, attempt, failure);
                return;
            }
            Log.Retrying(_logger, attempt, failure, delay);
            await Task.Delay(delay, _clock, stoppingToken).ConfigureAwait(false);
            delay *= 2;
        }
    }
}

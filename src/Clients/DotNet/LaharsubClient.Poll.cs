using System.Globalization;
using System.Net;
using System.Net.Http.Headers;
using System.Text.Json;
using Laharsub.Client.Wire;

namespace Laharsub.Client;

public sealed partial class LaharsubClient
{
    private static readonly MediaTypeWithQualityHeaderValue AcceptMultipart = new("multipart/mixed");
    private static readonly MediaTypeWithQualityHeaderValue AcceptJson = new("application/json");

    /// <summary>
    /// Sends one long poll and reads its whole answer into events (parsed as the bytes arrive), so that
    /// the connection returns to the pool before the caller starts on the events. Never throws for
    /// what a subscription recovers from; throws <see cref="LaharsubException"/> for the rest. A poll
    /// that finds the instance unreachable or unavailable moves the client to its next address, and
    /// the subscription polls there with the same cursors.
    /// </summary>
    /// <param name="query">The subscriptions in compact form: <c>topics=14:43~9f3c0a1b2c3d4e5f,15:1</c>.</param>
    /// <param name="failures">Consecutive failed polls so far, for the backoff.</param>
    /// <param name="changed">Fires when the topic set changes: the poll is abandoned (nothing was consumed).</param>
    /// <param name="stopped">Fires when the subscription is disposed.</param>
    /// <param name="cancellationToken">The caller's cancellation: throws <see cref="OperationCanceledException"/>.</param>
    internal Task<PollOutcome> PollAsync(string query, int failures, CancellationToken changed, CancellationToken stopped, CancellationToken cancellationToken)
    {
        var seconds = (long)PollTimeout.TotalSeconds;
        var address = CurrentAddress;
        var uri = new Uri(_addresses[address], string.Create(CultureInfo.InvariantCulture, $"subscriptions?{query}&timeout={seconds}"));
        return AttemptAsync(address, failures, async () =>
        {
            using var expiry = new CancellationTokenSource(PollTimeout + _options.RequestTimeout, TimeProvider);
            using var poll = CancellationTokenSource.CreateLinkedTokenSource(changed, stopped, cancellationToken, _disposing.Token, expiry.Token);
            var sent = TimeProvider.GetTimestamp();
            Exchange exchange;
            try
            {
                exchange = await SendAuthorizedAsync(() =>
                {
                    var request = new HttpRequestMessage(HttpMethod.Get, uri);
                    request.Headers.Accept.Add(_options.PollFormat == PollFormat.Multipart ? AcceptMultipart : AcceptJson);
                    return request;
                }, poll.Token).ConfigureAwait(false);
            }
            catch (Exception exception) when (IsCutByHandlerTimeout(exception))
            {
                HoldPollsUnder(TimeProvider.GetElapsedTime(sent));
                throw;
            }
            using var answer = exchange;
            var response = exchange.Response;
            switch (response.StatusCode)
            {
                case HttpStatusCode.OK:
                    return PollOutcome.Delivered(await ReadEventsAsync(response, poll.Token).ConfigureAwait(false));
                case HttpStatusCode.NoContent:
                    // Nothing within the hold time, or (with Connection: close) the server is shutting down
                    // and its connection goes away: either way the next poll starts at once, on a new
                    // connection in the second case, probably reaching another instance.
                    return PollOutcome.Empty;
            }
            return await ErrorAnswerAsync(response, address, failures, refusable: false, poll.Token).ConfigureAwait(false);
        }, changed, stopped, cancellationToken);
    }

    /// <summary>
    /// Runs one attempt of a subscription (a poll, or the opening of a stream) and turns what interrupts
    /// it into outcomes: the caller's cancellation is thrown; the subscription's end, a change of its
    /// topics and network failures are not. An attempt that finds the instance unreachable moves the
    /// client to its next address.
    /// </summary>
    private async Task<PollOutcome> AttemptAsync(int address, int failures, Func<Task<PollOutcome>> attempt,
        CancellationToken changed, CancellationToken stopped, CancellationToken cancellationToken)
    {
        try
        {
            return await attempt().ConfigureAwait(false);
        }
        catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
        {
            throw;
        }
        catch (OperationCanceledException) when (stopped.IsCancellationRequested || _disposing.IsCancellationRequested)
        {
            return PollOutcome.Stopped;
        }
        catch (ObjectDisposedException) when (_disposing.IsCancellationRequested)
        {
            // The client was disposed between the subscription's last check and this poll.
            return PollOutcome.Stopped;
        }
        catch (OperationCanceledException) when (changed.IsCancellationRequested)
        {
            return PollOutcome.Changed;
        }
        catch (Exception exception) when (IsRejectedByHandler(exception))
        {
            // A resilience handler gave up (its timeout, an open circuit): the instance is not known to
            // be gone, so the subscription stays on it and tries again after a backoff.
            return PollOutcome.Retry(Backoff(failures + 1), exception);
        }
        catch (Exception exception) when (exception is OperationCanceledException or HttpRequestException or IOException
            or InvalidDataException or JsonException)
        {
            // The poll timed out, the network failed, the answer was cut or mangled: nothing was
            // consumed, so polling again with the same cursors loses nothing, here or on another instance.
            if (IsUnreachable(exception))
            {
                FailOver(address);
                return PollOutcome.Retry(FailoverBackoff(failures + 1), exception);
            }
            return PollOutcome.Retry(Backoff(failures + 1), exception);
        }
    }

    /// <summary>
    /// What an error answer to a poll or a stream's request means for the subscription: try again (at
    /// once elsewhere for 502/503/504, after <c>Retry-After</c> or a backoff for 429 and 5xx), a topic the
    /// server does not know, or a refusal. A refusal of a stream (<paramref name="refusable"/>) lets
    /// <see cref="LaharsubTransport.Auto"/> try the next transport, except <c>401</c> and <c>403</c>,
    /// which every transport would get; the rest is thrown.
    /// </summary>
    private async Task<PollOutcome> ErrorAnswerAsync(HttpResponseMessage response, int address, int failures, bool refusable, CancellationToken cancellationToken)
    {
        if (IsUnavailable(response.StatusCode))
        {
            FailOver(address);
            // Another instance is tried at once, whatever this one's Retry-After says.
            var wait = TriesAnotherAddressAtOnce(failures + 1) ? TimeSpan.Zero : RetryDelayFor(response, failures + 1, maxRetryAfter: TimeSpan.MaxValue)!.Value;
            return PollOutcome.Retry(wait, await ReadProblemAsync(response, cancellationToken).ConfigureAwait(false));
        }
        if (RetryDelayFor(response, failures + 1, maxRetryAfter: TimeSpan.MaxValue) is { } delay)
        {
            return PollOutcome.Retry(delay, await ReadProblemAsync(response, cancellationToken).ConfigureAwait(false));
        }
        var problem = await ReadProblemAsync(response, cancellationToken).ConfigureAwait(false);
        if (problem.StatusCode == HttpStatusCode.NotFound && problem.TopicId is { } missing)
        {
            return PollOutcome.TopicNotFound(missing, problem.Detail);
        }
        if (refusable && problem.StatusCode is not (HttpStatusCode.Unauthorized or HttpStatusCode.Forbidden))
        {
            return PollOutcome.Refused(problem);
        }
        throw problem;
    }

    private static async Task<List<SubscriptionEvent>> ReadEventsAsync(HttpResponseMessage response, CancellationToken cancellationToken)
    {
        var stream = await response.Content.ReadAsStreamAsync(cancellationToken).ConfigureAwait(false);
        await using (stream.ConfigureAwait(false))
        {
            using var reader = CreateReader(response.Content.Headers.ContentType, stream);
            var events = new List<SubscriptionEvent>();
            while (await reader.ReadAsync(cancellationToken).ConfigureAwait(false) is { } item)
            {
                events.Add(item);
            }
            return events;
        }
    }

    /// <summary>Picks the parser by what the server sent, not by what was asked for.</summary>
    private static IPollReader CreateReader(MediaTypeHeaderValue? contentType, Stream stream)
    {
        var mediaType = contentType?.MediaType;
        if (string.Equals(mediaType, "multipart/mixed", StringComparison.OrdinalIgnoreCase))
        {
            var boundary = contentType!.Parameters.FirstOrDefault(p => string.Equals(p.Name, "boundary", StringComparison.OrdinalIgnoreCase))?.Value?.Trim('"');
            if (string.IsNullOrEmpty(boundary))
            {
                throw new InvalidDataException("The multipart poll response names no boundary.");
            }
            return new MultipartPollReader(stream, boundary);
        }
        if (string.Equals(mediaType, "application/json", StringComparison.OrdinalIgnoreCase))
        {
            return new JsonPollReader(stream);
        }
        throw new InvalidDataException($"The poll response has content type '{contentType}', neither multipart/mixed nor application/json.");
    }
}

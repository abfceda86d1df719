using Laharsub.Server.Hosting;
using Laharsub.Server.Limits;
using Laharsub.Server.Storage;
using Laharsub.Server.Wire;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Http.HttpResults;
using Microsoft.AspNetCore.Routing;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Options;
using Microsoft.Net.Http.Headers;

namespace Laharsub.Server.Subscriptions;

/// <summary>The long poll: one request waits on many topics at once.</summary>
internal static partial class SubscriptionEndpoints
{
    public static RouteGroupBuilder MapSubscriptions(this RouteGroupBuilder group)
    {
        group.MapGet("/subscriptions", Poll).LimitWaitingPollsPerClient().DescribePoll();
        return group;
    }

    private static async Task<Results<PollHttpResult, NoContent, EmptyHttpResult, ValidationProblem, ProblemHttpResult>> Poll(
        HttpContext context, PollAssembler assembler, WireFormat wire, IOptions<LaharsubOptions> options, IHostApplicationLifetime lifetime,
        LaharsubMetrics metrics, TimeProvider timeProvider)
    {
        context.Response.Headers.CacheControl = "no-store";
        var query = SubscriptionQuery.Parse(context.Request.QueryString.Value, options.Value);
        if (query.Error is not null)
        {
            return Problems.Invalid(query.ErrorParameter!, query.Error);
        }
        if (Negotiate(context.Request) is not { } format)
        {
            return Problems.Status(StatusCodes.Status406NotAcceptable, "Not acceptable",
                $"Polls answer in application/json (the default) or multipart/mixed; the request's Accept ('{Excerpt(context.Request.Headers.Accept.ToString())}') names neither, or is not a valid list of media types with q from 0 to 1.");
        }

        // One token for every reason to stop waiting; which one fired decides the answer.
        var clientGone = context.RequestAborted;
        var stopping = lifetime.ApplicationStopping;
        var wait = new PollWait(query.Timeout, timeProvider, clientGone, stopping);

        PollResult? result = null;
        using var activity = LaharsubActivitySource.StartPoll(query.Subscriptions.Count);
        metrics.PollStarted();
        try
        {
            result = await assembler.PollAsync(query.Subscriptions,
                format == PollFormat.Json ? wire.JsonAnswerBytes : wire.MultipartAnswerBytes, wait).ConfigureAwait(false);
        }
        catch
        {
            Ended("error");
            throw;
        }
        if (result.UnknownTopicId is { } unknown)
        {
            Ended("not_found");
            return Problems.TopicNotFound(unknown);
        }
        if (!result.IsEmpty)
        {
            Ended("answered");
            return new PollHttpResult(result, format, wire, metrics);
        }
        if (clientGone.IsCancellationRequested)
        {
            Ended("aborted");
            return TypedResults.Empty;
        }
        if (stopping.IsCancellationRequested)
        {
            Ended("shutdown");
            // Closing the connection makes the client's next poll open a new one, which a load
            // balancer can send to an instance that is not going away.
            context.Response.Headers.Connection = "close";
            return TypedResults.NoContent();
        }
        Ended("timeout");
        return TypedResults.NoContent();

        void Ended(string outcome)
        {
            var messages = outcome == "answered" ? result!.Messages : null;
            metrics.PollEnded(outcome, messages?.Count ?? 0);
            LaharsubActivitySource.PollEnded(activity, outcome, messages);
        }
    }

    /// <summary>Chooses the response format from <c>Accept</c>: JSON by default, multipart when preferred, null if neither is acceptable.</summary>
    internal static PollFormat? Negotiate(HttpRequest request)
    {
        var accept = request.Headers.Accept;
        if (accept.Count == 0)
        {
            return PollFormat.Json;
        }
        // What clients send almost always: one plain media type, recognised without parsing it into objects.
        if (accept.Count == 1 && accept[0] is { } only)
        {
            if (only.Equals("application/json", StringComparison.OrdinalIgnoreCase) || only == "*/*")
            {
                return PollFormat.Json;
            }
            if (only.Equals("multipart/mixed", StringComparison.OrdinalIgnoreCase))
            {
                return PollFormat.Multipart;
            }
        }
        // A header that does not parse, or a q that is not a number from 0 to 1, accepts nothing we can
        // name: 406 rather than guessing JSON.
        if (!MediaTypeHeaderValue.TryParseStrictList(accept, out var accepted))
        {
            return null;
        }
        if (accepted.Count == 0)
        {
            return PollFormat.Json;
        }
        PollFormat? best = null;
        double bestQuality = 0;
        foreach (var mediaType in accepted)
        {
            var hasQ = mediaType.Parameters.Any(p => p.Name.Equals("q", StringComparison.OrdinalIgnoreCase));
            if (hasQ && mediaType.Quality is not (>= 0 and <= 1))
            {
                return null;
            }
            var quality = mediaType.Quality ?? 1.0;
            if (quality <= bestQuality || Classify(mediaType) is not { } format)
            {
                continue;
            }
            best = format;
            bestQuality = quality;
        }
        return best;
    }

    /// <summary>The start of a header value, so that a 10 KB header does not come back in a problem detail.</summary>
    private static string Excerpt(string value) => value.Length <= 100 ? value : string.Concat(value.AsSpan(0, 100), "...");

    private static PollFormat? Classify(MediaTypeHeaderValue mediaType)
    {
        var type = mediaType.Type;
        var subType = mediaType.SubType;
        if (type.Equals("*", StringComparison.Ordinal))
        {
            return PollFormat.Json;
        }
        if (type.Equals("application", StringComparison.OrdinalIgnoreCase)
            && (subType.Equals("json", StringComparison.OrdinalIgnoreCase) || subType.Equals("*", StringComparison.Ordinal)))
        {
            return PollFormat.Json;
        }
        if (type.Equals("multipart", StringComparison.OrdinalIgnoreCase)
            && (subType.Equals("mixed", StringComparison.OrdinalIgnoreCase) || subType.Equals("*", StringComparison.Ordinal)))
        {
            return PollFormat.Multipart;
        }
        return null;
    }

    /// <summary>A poll answer written from the messages' cached encodings; its delivery latencies are recorded once it is written.</summary>
    internal sealed class PollHttpResult(PollResult result, PollFormat format, WireFormat wire, LaharsubMetrics metrics) : IResult
    {
        public async Task ExecuteAsync(HttpContext httpContext)
        {
            await PollResponseWriter.WriteAsync(httpContext.Response, result, format, wire, httpContext.RequestAborted).ConfigureAwait(false);
            metrics.AnswerWritten(result.Messages);
        }
    }
}

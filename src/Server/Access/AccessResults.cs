using Microsoft.AspNetCore.Authentication;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Mvc;
using Microsoft.AspNetCore.Http.HttpResults;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.IdentityModel.Tokens;

namespace Laharsub.Server.Access;

/// <summary>The 401 and 403 answers: problem details that name the operation, the topic and what to do.</summary>
internal static class AccessResults
{
    public static IResult BadToken(HttpContext http, Exception? failure, AccessMetrics metrics)
    {
        metrics.Refused(StatusCodes.Status401Unauthorized, operation: null);
        return new ChallengeProblem("Token refused",
            $"{Describe(failure)} Nothing was changed: send a valid token in Authorization: Bearer <token>.", operation: null, topicId: null);
    }

    public static IResult TokenRequired(HttpContext http, LaharsubPermissions anonymous, LaharsubOperation operation, long? topicId, AccessMetrics metrics)
    {
        metrics.Refused(StatusCodes.Status401Unauthorized, operation);
        var what = (operation, topicId) switch
        {
            (_, { } id) => $"{Verb(operation)} topic {id}",
            (LaharsubOperation.Create, _) => "create a topic",
            (LaharsubOperation.Admin, _) => "read the admin page's data",
            _ => "list topics",
        };
        return new ChallengeProblem("Token required",
            $"To {what} this server needs a bearer token (Authorization: Bearer <token>) whose laharsub claim grants {operation.Name()}; " +
            $"without a token it allows {anonymous}. Nothing was changed.", operation, topicId);
    }

    public static IResult Forbidden(HttpContext http, LaharsubPermissions permissions, LaharsubOperation operation, long? topicId, string? label, AccessMetrics metrics)
    {
        metrics.Refused(StatusCodes.Status403Forbidden, operation);
        var what = What(operation, topicId, label);
        var extensions = Extensions(operation, topicId);
        return TypedResults.Problem(
            title: "Forbidden",
            detail: $"This token may not {what}: its laharsub.{operation.Name()} grants {permissions.Describe(operation)}. " +
                "Nothing was changed; ask the token's issuer for one whose claim covers this" + (topicId is null ? "." : " topic (by id, id range or label pattern)."),
            statusCode: StatusCodes.Status403Forbidden,
            extensions: extensions);
    }

    /// <summary>
    /// Host mode: the application's authorization denied the operation; a 401 for a caller who has not signed in,
    /// a 403 for one who has.
    /// </summary>
    public static IResult RefusedByApplication(bool signedIn, LaharsubOperation operation, long? topicId, string? label, AccessMetrics metrics)
    {
        var status = signedIn ? StatusCodes.Status403Forbidden : StatusCodes.Status401Unauthorized;
        metrics.Refused(status, operation);
        var what = What(operation, topicId, label);
        var extensions = Extensions(operation, topicId);
        return TypedResults.Problem(
            title: signedIn ? "Forbidden" : "Sign-in required",
            detail: signedIn
                ? $"This application does not allow you to {what}. Nothing was changed."
                : $"To {what} this application needs you to sign in first. Nothing was changed.",
            statusCode: status,
            extensions: extensions);
    }

    public static IResult NoRule(HttpContext http, AccessMetrics metrics)
    {
        metrics.Refused(StatusCodes.Status403Forbidden, operation: null);
        return TypedResults.Problem(title: "Forbidden",
            detail: $"{http.Request.Method} {http.Request.Path} has no access rule in Jwt mode, so it is closed to everyone. This is a server defect: report it.",
            statusCode: StatusCodes.Status403Forbidden);
    }

    /// <summary>What was refused, as the rest of a sentence ("may not ...").</summary>
    private static string What(LaharsubOperation operation, long? topicId, string? label) => (operation, topicId) switch
    {
        (LaharsubOperation.Create, _) => label is null ? "create an unlabelled topic" : $"create a topic labelled '{label}'",
        (LaharsubOperation.List, null) => "list topics",
        (LaharsubOperation.Admin, _) => "read the admin page's data",
        (_, { } id) => $"{Verb(operation)} topic {id}",
        _ => Verb(operation),
    };

    /// <summary>The problem's <c>operation</c> and <c>topicId</c> members, for clients to act on.</summary>
    private static Dictionary<string, object?> Extensions(LaharsubOperation operation, long? topicId)
    {
        var extensions = new Dictionary<string, object?> { ["operation"] = operation.Name() };
        if (topicId is { } topic)
        {
            extensions["topicId"] = topic;
        }
        return extensions;
    }

    private static string Verb(LaharsubOperation operation) => operation switch
    {
        LaharsubOperation.Publish => "publish to",
        LaharsubOperation.Subscribe => "subscribe to",
        LaharsubOperation.List => "list",
        LaharsubOperation.Delete => "delete",
        LaharsubOperation.Admin => "administer",
        LaharsubOperation.Presence => "see who is present on",
        _ => "create",
    };

    /// <summary>Why a token was refused, in words an API user can act on.</summary>
    private static string Describe(Exception? failure) => failure switch
    {
        SecurityTokenExpiredException expired => $"The token expired at {expired.Expires:u}.",
        SecurityTokenNotYetValidException early => $"The token is not valid before {early.NotBefore:u}.",
        SecurityTokenNoExpirationException => "The token has no expiry (exp); this server accepts only tokens that expire.",
        SecurityTokenInvalidIssuerException => "The token's issuer (iss) is not the one this server accepts (Laharsub:Auth:Jwt:Issuer).",
        SecurityTokenInvalidAudienceException => "The token's audience (aud) is not the one this server accepts (Laharsub:Auth:Jwt:Audience).",
        SecurityTokenInvalidAlgorithmException => "The token is signed with an algorithm this server does not accept (Laharsub:Auth:Jwt:Algorithms).",
        SecurityTokenSignatureKeyNotFoundException or SecurityTokenInvalidSignatureException =>
            "The token's signature does not verify with this server's keys (or the token is unsigned).",
        SecurityTokenMalformedException or ArgumentException => "The Authorization header does not hold a well-formed JWT.",
        LaharsubClaimException claim => $"The token was refused: {claim.Message}.",
        _ => "The token was refused.",
    };

    /// <summary>
    /// A 401: the JwtBearer scheme's challenge sets the status and <c>WWW-Authenticate</c> (with
    /// <c>error="invalid_token"</c> and a description when a token was refused), then a problem detail follows.
    /// </summary>
    private sealed class ChallengeProblem(string title, string detail, LaharsubOperation? operation, long? topicId) : IResult
    {
        public async Task ExecuteAsync(HttpContext httpContext)
        {
            await httpContext.ChallengeAsync(LaharsubAccess.SchemeName).ConfigureAwait(false);
            var extensions = new Dictionary<string, object?>();
            if (operation is { } op)
            {
                extensions["operation"] = op.Name();
            }
            if (topicId is { } id)
            {
                extensions["topicId"] = id;
            }
            // A problem result, not the problem details service alone: that refuses (throws) when Accept names
            // only what no writer writes, as a browser's EventSource sends text/event-stream alone; the result
            // then writes the JSON anyway.
            await TypedResults.Problem(new ProblemDetails { Status = StatusCodes.Status401Unauthorized, Title = title, Detail = detail, Extensions = extensions })
                .ExecuteAsync(httpContext).ConfigureAwait(false);
        }
    }
}

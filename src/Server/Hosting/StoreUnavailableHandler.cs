using Laharsub.Server.Storage;
using Laharsub.Server.Transport;
using Microsoft.AspNetCore.Diagnostics;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Logging;

namespace Laharsub.Server.Hosting;

/// <summary>
/// Answers a request that failed because the store could not be reached with 503, Retry-After and a
/// problem detail naming the store, logged as one Warning line, instead of a 500 with a stack trace.
/// </summary>
internal sealed partial class StoreUnavailableHandler(IProblemDetailsService problems, ILogger<StoreUnavailableHandler> logger) : IExceptionHandler
{
    public async ValueTask<bool> TryHandleAsync(HttpContext httpContext, Exception exception, CancellationToken cancellationToken)
    {
        if (exception is not LaharsubStoreUnavailableException unavailable)
        {
            return false;
        }
        Log.StoreUnavailable(logger, unavailable.StoreName, httpContext.Request.Method, httpContext.Request.Path, unavailable.Message);
        var answer = StoreUnavailableAnswer.From(unavailable);
        httpContext.Response.StatusCode = StatusCodes.Status503ServiceUnavailable;
        httpContext.Response.Headers.RetryAfter = answer.RetryAfterSeconds.ToString(System.Globalization.CultureInfo.InvariantCulture);
        return await problems.TryWriteAsync(new ProblemDetailsContext
        {
            HttpContext = httpContext,
            Exception = exception,
            ProblemDetails =
            {
                Status = StatusCodes.Status503ServiceUnavailable,
                Title = answer.Title,
                Detail = answer.Detail,
                Extensions = { ["store"] = answer.Store },
            },
        }).ConfigureAwait(false);
    }
}

using Microsoft.AspNetCore.Diagnostics;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Logging;

namespace Laharsub.Server.Hosting;

/// <summary>
/// Answers a request that Kestrel or parameter binding found malformed while the application was
/// reading it (a broken chunked body, a body shorter than its <c>Content-Length</c>, a body arriving
/// below <c>Kestrel:Limits:MinRequestBodyDataRate</c>) with the status the exception carries (400,
/// 408, 413) and a problem detail, instead of a 500 with an error-level stack trace: the fault is the
/// client's, so the log gets one warning line. Runs inside <c>UseExceptionHandler()</c> for every
/// endpoint, not only Laharsub's.
/// </summary>
internal sealed partial class BadRequestExceptionHandler(IProblemDetailsService problemDetails, ILogger<BadRequestExceptionHandler> logger)
    : IExceptionHandler
{
    public async ValueTask<bool> TryHandleAsync(HttpContext httpContext, Exception exception, CancellationToken cancellationToken)
    {
        var status = exception switch
        {
            BadHttpRequestException badRequest => badRequest.StatusCode,
            // Kestrel (as of 10.0) reports a chunk size too large for its counter, e.g. 80000000, as an
            // IOException around an OverflowException rather than as a BadHttpRequestException.
            IOException { InnerException: OverflowException } => StatusCodes.Status400BadRequest,
            _ => 0,
        };
        if (status == 0)
        {
            return false;
        }
        Log.BadRequest(logger, status, httpContext.Request.Method, httpContext.Request.Path, exception.Message);
        httpContext.Response.StatusCode = status;
        var (title, advice) = Describe(status);
        // Handled even when the client's Accept rules out a problem detail: the status says enough,
        // and the fault is not the server's to log as an error.
        await problemDetails.TryWriteAsync(new ProblemDetailsContext
        {
            HttpContext = httpContext,
            Exception = exception,
            ProblemDetails =
            {
                Status = status,
                Title = title,
                Detail = exception.Message.EndsWith('.') ? $"{exception.Message} {advice}" : $"{exception.Message}. {advice}",
            },
        }).ConfigureAwait(false);
        return true;
    }

    private static (string Title, string Advice) Describe(int status) => status switch
    {
        StatusCodes.Status408RequestTimeout => ("Request body too slow",
            "The body arrived slower than the server's minimum data rate (Kestrel:Limits:MinRequestBodyDataRate); send the whole body without pausing."),
        StatusCodes.Status413PayloadTooLarge => ("Request body too large",
            "Send a smaller body (Kestrel:Limits:MaxRequestBodySize; messages are also limited by Laharsub:MaxMessageBytes)."),
        _ => ("Malformed request",
            "Send a well-formed HTTP/1.1 body: exactly Content-Length bytes, or valid chunked encoding (hex size, CRLF, data, CRLF, ending with a 0 chunk)."),
    };
}

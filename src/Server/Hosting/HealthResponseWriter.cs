using System.Text.Json;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Diagnostics.HealthChecks;

namespace Laharsub.Server.Hosting;

/// <summary>
/// Writes <c>/health</c> as JSON with each check's description, so that an operator sees why a server is
/// degraded and which access mode is on: <c>{"status":"Healthy","checks":{"laharsub-access":{"status":"Healthy","description":"Access control: Open..."}}}</c>.
/// Probes keep reading the status code (200 while healthy or degraded, 503 when unhealthy).
/// </summary>
internal static class HealthResponseWriter
{
    public static async Task WriteAsync(HttpContext context, HealthReport report)
    {
        context.Response.ContentType = "application/json; charset=utf-8";
        context.Response.Headers.CacheControl = "no-store";
        var writer = new Utf8JsonWriter(context.Response.BodyWriter);
        await using (writer.ConfigureAwait(false))
        {
            writer.WriteStartObject();
            writer.WriteString("status", report.Status.ToString());
            writer.WriteStartObject("checks");
            foreach (var (name, entry) in report.Entries)
            {
                writer.WriteStartObject(name);
                writer.WriteString("status", entry.Status.ToString());
                if (entry.Description is { } description)
                {
                    writer.WriteString("description", description);
                }
                if (entry.Data.Count > 0)
                {
                    writer.WriteStartObject("data");
                    foreach (var (key, value) in entry.Data)
                    {
                        switch (value)
                        {
                            case long number:
                                writer.WriteNumber(key, number);
                                break;
                            case int number:
                                writer.WriteNumber(key, number);
                                break;
                            default:
                                writer.WriteString(key, value?.ToString());
                                break;
                        }
                    }
                    writer.WriteEndObject();
                }
                writer.WriteEndObject();
            }
            writer.WriteEndObject();
            writer.WriteEndObject();
        }
    }
}

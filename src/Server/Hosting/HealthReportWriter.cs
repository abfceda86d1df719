using System.Globalization;
using System.Text.Json;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Diagnostics.HealthChecks;

namespace Laharsub.Server.Hosting;

/// <summary>
/// Writes <c>/health</c> as JSON: the overall status, then each check's status, description and data,
/// so that an operator sees why the server is degraded and which setting to change, not just the word
/// "Degraded" that ASP.NET Core writes by default.
/// </summary>
internal static class HealthReportWriter
{
    public static async Task WriteAsync(HttpContext context, HealthReport report)
    {
        context.Response.ContentType = Wire.WireFormat.JsonContentType;
        context.Response.Headers.CacheControl = "no-store";
        await using var json = new Utf8JsonWriter(context.Response.BodyWriter);
        json.WriteStartObject();
        json.WriteString("status", report.Status.ToString());
        json.WriteNumber("totalDurationMs", Math.Round(report.TotalDuration.TotalMilliseconds, 3));
        json.WriteStartObject("checks");
        foreach (var (name, entry) in report.Entries)
        {
            json.WriteStartObject(name);
            json.WriteString("status", entry.Status.ToString());
            if (entry.Description is { } description)
            {
                json.WriteString("description", description);
            }
            json.WriteStartObject("data");
            foreach (var (key, value) in entry.Data)
            {
                WriteValue(json, key, value);
            }
            json.WriteEndObject();
            json.WriteEndObject();
        }
        json.WriteEndObject();
        json.WriteEndObject();
        await json.FlushAsync(context.RequestAborted).ConfigureAwait(false);
    }

    private static void WriteValue(Utf8JsonWriter json, string key, object? value)
    {
        switch (value)
        {
            case null:
                json.WriteNull(key);
                break;
            case bool flag:
                json.WriteBoolean(key, flag);
                break;
            case int or long or short or byte or uint or ulong or ushort or sbyte:
                json.WriteNumber(key, Convert.ToInt64(value, CultureInfo.InvariantCulture));
                break;
            case double or float or decimal:
                json.WriteNumber(key, Convert.ToDouble(value, CultureInfo.InvariantCulture));
                break;
            default:
                json.WriteString(key, Convert.ToString(value, CultureInfo.InvariantCulture));
                break;
        }
    }
}

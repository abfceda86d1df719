using Laharsub.Server.Endpoints;
using Laharsub.Server.Transport;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.OpenApi;
using Microsoft.Extensions.DependencyInjection;
using Scalar.AspNetCore;

namespace Laharsub.Server.Host.OpenApi;

/// <summary>
/// The REST API's OpenAPI document at <c>/openapi/v1.json</c> and a browsable reference of it at
/// <c>/scalar/v1</c>. The reference works without internet access: its script is served by this
/// server, and Scalar's CDN fonts, telemetry, hosted agent and toolbar are switched off (tests/Browser checks that the page
/// makes no request elsewhere).
/// </summary>
internal static class OpenApiExtensions
{
    public const string DocumentName = "v1";

    public static IServiceCollection AddLaharsubOpenApi(this IServiceCollection services) =>
        services.AddOpenApi(DocumentName, options =>
        {
            options.AddDocumentTransformer<LaharsubDocumentTransformer>();
            // The topic's HTTP body (the store's TopicInfo plus waitingPolls) keeps the schema name clients know.
            options.CreateSchemaReferenceId = type => type.Type == typeof(TopicResource) ? "TopicInfo" : OpenApiOptions.CreateDefaultSchemaReferenceId(type);
        });

    public static WebApplication MapLaharsubOpenApi(this WebApplication app)
    {
        app.MapOpenApi();
        app.MapScalarApiReference(reference => reference
            .WithTitle("Laharsub API")
            .WithDocumentDownloadType(DocumentDownloadType.Json)
            // Everything that would reach beyond this server: CDN fonts, usage telemetry, the hosted
            // AI agent and the vendor's toolbar.
            .DisableDefaultFonts()
            .DisableTelemetry()
            .DisableAgent()
            .DisableMcp()
            .HideDeveloperTools());
        return app;
    }
}

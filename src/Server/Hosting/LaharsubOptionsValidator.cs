using System.ComponentModel.DataAnnotations;
using Microsoft.Extensions.Options;

namespace Laharsub.Server.Hosting;

/// <summary>Checks the rules between settings that data annotations cannot express.</summary>
internal sealed class LaharsubOptionsValidator : IValidateOptions<LaharsubOptions>
{
    public ValidateOptionsResult Validate(string? name, LaharsubOptions options)
    {
        var failures = new List<string>();
        if (options.DefaultPollTimeout > options.MaxPollTimeout)
        {
            failures.Add($"Laharsub:DefaultPollTimeout ({options.DefaultPollTimeout}) must not exceed Laharsub:MaxPollTimeout ({options.MaxPollTimeout}).");
        }
        if (options.MaxMessageBytes > options.MaxRetainedBytes)
        {
            failures.Add($"Laharsub:MaxMessageBytes ({options.MaxMessageBytes}) must not exceed Laharsub:MaxRetainedBytes ({options.MaxRetainedBytes}), or no message could ever be stored.");
        }
        if (options.TopicIdleTimeToLive > TimeSpan.Zero && options.TopicIdleTimeToLive <= options.MaxPollTimeout)
        {
            failures.Add($"Laharsub:TopicIdleTimeToLive ({options.TopicIdleTimeToLive}) must exceed Laharsub:MaxPollTimeout ({options.MaxPollTimeout}), or a topic could be deleted under a poll waiting on it; or set it to 0 to keep idle topics.");
        }
        foreach (var origin in options.Cors.AllowedOrigins ?? [])
        {
            if (origin != "*" && !Uri.TryCreate(origin, UriKind.Absolute, out _))
            {
                failures.Add($"Laharsub:Cors:AllowedOrigins contains '{origin}', which is neither \"*\" nor an absolute origin such as https://app.example.com.");
            }
        }
        // Data annotations on LaharsubOptions do not reach into nested sections.
        var rateLimitErrors = new List<ValidationResult>();
        if (!Validator.TryValidateObject(options.RateLimit, new ValidationContext(options.RateLimit), rateLimitErrors, validateAllProperties: true))
        {
            failures.AddRange(rateLimitErrors.Select(error =>
                $"Laharsub:RateLimit:{string.Join(",", error.MemberNames)}: {error.ErrorMessage}"));
        }
        return failures.Count == 0 ? ValidateOptionsResult.Success : ValidateOptionsResult.Fail(failures);
    }
}

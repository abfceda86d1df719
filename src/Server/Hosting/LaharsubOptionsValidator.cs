using System.ComponentModel.DataAnnotations;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.Options;

namespace Laharsub.Server.Hosting;

/// <summary>Checks the rules between settings that data annotations cannot express.</summary>
/// <param name="configuration">What the options were bound from, to tell a setting that bound to nothing.</param>
internal sealed class LaharsubOptionsValidator(IConfiguration? configuration = null) : IValidateOptions<LaharsubOptions>
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
        if (options.Presence.SweepInterval * 2 > options.Presence.GracePeriod)
        {
            failures.Add($"Laharsub:Presence:SweepInterval ({options.Presence.SweepInterval}) must be at most half of Laharsub:Presence:GracePeriod ({options.Presence.GracePeriod}): "
                + "held polls and streams renew their leases on the sweep's ticks, and a longer tick would let present members expire.");
        }
        failures.AddRange(LaharsubCorsOptions.Problems(configuration, options.Cors));
        // Data annotations live on the parts, which the annotations of this class would not reach.
        Validate(options.Store, "Laharsub:", failures);
        Validate(options.Delivery, "Laharsub:", failures);
        Validate(options.RateLimit, "Laharsub:RateLimit:", failures);
        Validate(options.Streams, "Laharsub:Streams:", failures);
        Validate(options.Presence, "Laharsub:Presence:", failures);
        Validate(options.Presence.Webhook, "Laharsub:Presence:Webhook:", failures);
        if (options.Presence.Webhook.Problem() is { } webhookProblem)
        {
            failures.Add(webhookProblem);
        }
        return failures.Count == 0 ? ValidateOptionsResult.Success : ValidateOptionsResult.Fail(failures);
    }

    private static void Validate(object part, string prefix, List<string> failures)
    {
        var errors = new List<ValidationResult>();
        if (!Validator.TryValidateObject(part, new ValidationContext(part), errors, validateAllProperties: true))
        {
            failures.AddRange(errors.Select(error => $"{prefix}{string.Join(",", error.MemberNames)}: {error.ErrorMessage}"));
        }
    }
}

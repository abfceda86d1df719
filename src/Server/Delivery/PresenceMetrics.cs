using System.Diagnostics.Metrics;

namespace Laharsub.Server.Delivery;

/// <summary>Presence's counters, beside the code that counts (the delivery core does not see Diagnostics).</summary>
internal sealed class PresenceMetrics
{
    public const string MeterName = "Laharsub.Server.Presence";

    private readonly Counter<long> _joins;
    private readonly Counter<long> _leaves;
    private readonly Counter<long> _webhookDropped;

    public PresenceMetrics(IMeterFactory meters)
    {
        var meter = meters.Create(MeterName);
        _joins = meter.CreateCounter<long>("laharsub.presence.joins", "{member}", "Members that became present through this instance's renewals.");
        _leaves = meter.CreateCounter<long>("laharsub.presence.leaves", "{member}", "Members whose leases expired, removed by this instance's sweeps.");
        _webhookDropped = meter.CreateCounter<long>("laharsub.presence.webhook.dropped", "{call}",
            "Presence webhook calls dropped: the queue was full (MaxOutstanding) or every attempt failed (MaxAttempts).");
    }

    public void Joined() => _joins.Add(1);

    public void Left() => _leaves.Add(1);

    public void WebhookDropped(string reason) => _webhookDropped.Add(1, new KeyValuePair<string, object?>("reason", reason));
}

using System.ComponentModel.DataAnnotations;

namespace Laharsub.Server.Host.Admin;

/// <summary>The admin page of the standalone server, bound from <c>Laharsub:Admin</c>.</summary>
internal sealed class AdminOptions
{
    public const string SectionName = "Laharsub:Admin";

    /// <summary>
    /// Serves <c>/admin</c> and <c>/admin/stats</c> (on unless set to false). In Jwt mode <c>/admin/stats</c>
    /// needs a token whose <c>laharsub</c> claim grants <c>admin</c>; the page asks for one.
    /// </summary>
    public bool? Enabled { get; set; }

    /// <summary>How often the counts are sampled for the rates and the chart; the chart keeps <see cref="AdminStatistics.HistoryLength"/> samples.</summary>
    [Range(typeof(TimeSpan), "00:00:00.100", "00:01:00")]
    public TimeSpan SampleInterval { get; set; } = TimeSpan.FromSeconds(5);
}

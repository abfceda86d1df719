using Laharsub.Server.Hosting;
using Laharsub.Testing;
using Microsoft.Extensions.Options;

namespace Laharsub.Server.Tests;

public sealed class OptionsTests
{
    public static TheoryData<Action<LaharsubOptions>, string> BadSettings => new()
    {
        { o => o.MessageTimeToLive = TimeSpan.Zero, "MessageTimeToLive" },
        { o => o.MaxMessagesPerTopic = 0, "MaxMessagesPerTopic" },
        { o => o.MaxRetainedBytes = -1, "MaxRetainedBytes" },
        { o => o.MaxMessageBytes = 0, "MaxMessageBytes" },
        { o => o.MaxTopics = 0, "MaxTopics" },
        { o => o.MaxSubscriptionsPerPoll = 0, "MaxSubscriptionsPerPoll" },
        { o => o.MaxPollTimeout = TimeSpan.FromHours(2), "MaxPollTimeout" },
        { o => o.DefaultPollTimeout = TimeSpan.FromMinutes(5), "DefaultPollTimeout" },
        { o => o.MaxMessagesPerPoll = 0, "MaxMessagesPerPoll" },
        { o => o.MaxBytesPerPoll = 0, "MaxBytesPerPoll" },
        { o => { o.MaxRetainedBytes = 10; o.MaxMessageBytes = 100; }, "MaxMessageBytes" },
        { o => o.Cors.AllowedOrigins = ["not an origin"], "AllowedOrigins" },
        { o => o.RateLimit.RequestsPerPeriod = -1, "Laharsub:RateLimit:RequestsPerPeriod" },
        { o => o.RateLimit.Period = TimeSpan.Zero, "Laharsub:RateLimit:Period" },
        { o => o.Streams.BatchWindow = TimeSpan.FromSeconds(2), "Laharsub:Streams:BatchWindow" },
        { o => o.Streams.BatchWindow = TimeSpan.FromMilliseconds(-1), "Laharsub:Streams:BatchWindow" },
        { o => o.Streams.MaxBufferedBytes = 1024, "Laharsub:Streams:MaxBufferedBytes" },
        { o => { o.Presence.GracePeriod = TimeSpan.FromSeconds(10); o.Presence.SweepInterval = TimeSpan.FromSeconds(6); }, "Laharsub:Presence:SweepInterval (00:00:06) must be at most half of Laharsub:Presence:GracePeriod" },
    };

    [Theory]
    [MemberData(nameof(BadSettings))]
    public async Task ABadSettingStopsTheServerAtStartNamingIt(Action<LaharsubOptions> configure, string setting)
    {
        var failure = await Assert.ThrowsAsync<OptionsValidationException>(() => LaharsubTestServer.StartAsync(configure));

        Assert.Contains(setting, failure.Message);
    }

    [Fact]
    public async Task SettingsAreBoundFromTheLaharsubConfigurationSection()
    {
        await using var server = await LaharsubTestServer.StartAsync(settings: new Dictionary<string, string?>
        {
            ["Laharsub:MessageTimeToLive"] = "00:00:15",
            ["Laharsub:MaxTopics"] = "7",
            ["Laharsub:Cors:AllowedOrigins:0"] = "https://chat.example.com",
        });
        var options = ((IOptions<LaharsubOptions>)server.Services.GetService(typeof(IOptions<LaharsubOptions>))!).Value;

        Assert.Equal(TimeSpan.FromSeconds(15), options.MessageTimeToLive);
        Assert.Equal(7, options.MaxTopics);
        Assert.Equal(["https://chat.example.com"], options.Cors.AllowedOrigins);
    }

    [Fact]
    public async Task AnUnreadableSettingStopsTheServerAtStart()
    {
        var failure = await Assert.ThrowsAnyAsync<Exception>(() => LaharsubTestServer.StartAsync(settings: new Dictionary<string, string?>
        {
            ["Laharsub:MaxTopics"] = "many",
        }));

        Assert.Contains("MaxTopics", failure.ToString());
    }
}

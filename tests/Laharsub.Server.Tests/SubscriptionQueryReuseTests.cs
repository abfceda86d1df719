using Laharsub.Server.Delivery;
using Laharsub.Server.Endpoints;
using Laharsub.Server.Hosting;
using Laharsub.Server.Transport;

namespace Laharsub.Server.Tests;

/// <summary>
/// The poll endpoint parses every poll's subscriptions into one list per thread: a poll must find only its
/// own there, whatever the poll before it left, including when it is refused.
/// </summary>
public sealed class SubscriptionQueryReuseTests
{
    private readonly LaharsubDeliveryOptions _options = new();

    [Fact]
    public void APollParsedIntoAListThatHeldAnotherPollsSubscriptionsHasOnlyItsOwn()
    {
        var list = new List<Subscription>();
        SubscriptionQuery.Parse("?topics=1:5~aaaa,2,3:9", _options, list);

        var query = SubscriptionQuery.Parse("?topics=7:2", _options, list);

        Assert.Null(query.Error);
        Assert.Same(list, query.Subscriptions);
        Assert.Equal(new[] { new Subscription(7, 2, null) }, query.Subscriptions);
    }

    [Fact]
    public void ARefusedPollLeavesNoSubscriptionOfTheOneBefore()
    {
        var list = new List<Subscription>();
        SubscriptionQuery.Parse("?subs[0][topicid]=1&subs[1][topicid]=2", _options, list);

        var query = SubscriptionQuery.Parse("?topics=4,x", _options, list);

        Assert.Equal("topics", query.ErrorParameter);
        Assert.Contains("'x'", query.Error);
        Assert.DoesNotContain(list, subscription => subscription.TopicId is 1 or 2);
    }

    [Fact]
    public void AnEscapedTopicsValueParsesAsTheSameSubscriptions()
    {
        var plain = SubscriptionQuery.Parse("?topics=1:5,2", _options);
        var escaped = SubscriptionQuery.Parse("?topics=1%3A5%2C2", _options);

        Assert.Null(escaped.Error);
        Assert.Equal(plain.Subscriptions, escaped.Subscriptions);
    }
}

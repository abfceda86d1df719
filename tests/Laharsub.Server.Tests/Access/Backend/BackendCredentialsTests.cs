using Laharsub.Server.Access;

namespace Laharsub.Server.Tests.Access.Backend;

public sealed class BackendCredentialsTests
{
    [Fact]
    public void TheKeyOfKeptAnswersHoldsNoCredentialsAndHasOneSizeForAnyCookie()
    {
        var small = new BackendCredentials("Bearer secret-token", "session=abc");
        var large = new BackendCredentials(null, "session=" + new string('x', 8_000));

        Assert.DoesNotContain("secret-token", small.Key, StringComparison.Ordinal);
        Assert.DoesNotContain("abc", small.Key, StringComparison.Ordinal);
        Assert.Equal(small.Key.Length, large.Key.Length);
    }

    [Fact]
    public void TheSameCredentialsShareAKeyAndAnyDifferenceSeparatesThem()
    {
        var key = new BackendCredentials("Bearer a", "c=1").Key;

        Assert.Equal(key, new BackendCredentials("Bearer a", "c=1").Key);
        Assert.NotEqual(key, new BackendCredentials("Bearer a", "c=2").Key);
        Assert.NotEqual(key, new BackendCredentials("Bearer a", null).Key);
        // The separator keeps a header's end from being read as the other's start.
        Assert.NotEqual(new BackendCredentials("a\nb", null).Key, new BackendCredentials("a", "b").Key);
    }
}

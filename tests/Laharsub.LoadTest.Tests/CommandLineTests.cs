using Laharsub.LoadTestClient;

namespace Laharsub.LoadTest.Tests;

/// <summary>Bad options are refused with a message that says what to write instead, and a non-zero exit.</summary>
public sealed class CommandLineTests
{
    [Theory]
    [InlineData("--topics abc", "--topics 'abc' is out of range")]
    [InlineData("--message-size 5", "--message-size '5' is out of range: use a whole number from 10")]
    [InlineData("--format xml", "use json or multipart")]
    [InlineData("--preset seed9", "use seed1, seed2, seed3")]
    [InlineData("--sweep 10,x", "'x' is not a topic count")]
    [InlineData("--topics 10 --sweep 10,20", "not both")]
    [InlineData("--bogus 1", "Unknown option '--bogus'")]
    [InlineData("--topics", "needs a value")]
    [InlineData("--server-pid 12", "--server-pid samples a server given with --url")]
    [InlineData("--url ftp://x/", "is not an http:// URL")]
    [InlineData("--server-env FOO", "is not NAME=VALUE")]
    [InlineData("--sweep 10,2000000", "'2000000' is not a topic count; write integers from 1 to 1000000")]
    [InlineData("--topics 1000000 --clients-per-topic 10000", "would simulate 10000000000 clients")]
    [InlineData("--topics 5 --topics-per-client 6", "--topics-per-client 6 needs at least that many topics")]
    [InlineData("--topics 1 --clients-per-topic 2 --processes 3", "--processes 3 is more than the 2 clients")]
    [InlineData("--url http://127.0.0.1:1/ --server-setting A=B", "with --url, configure your server yourself")]
    public async Task ABadOptionIsRefusedWithAClearMessage(string arguments, string message)
    {
        using var output = new StringWriter();
        using var error = new StringWriter();

        var exit = await LoadTestCommand.RunAsync(arguments.Split(' '), output, error, CancellationToken.None).WaitAsync(TimeSpan.FromSeconds(10));

        Assert.Equal(2, exit);
        Assert.Contains(message, error.ToString());
    }

    [Fact]
    public void APresetRunsTheOriginalConfigurationAtItsDefaultTopicCounts()
    {
        var options = LoadTestOptions.Parse(["--preset", "seed3"]);

        Assert.Equal([400, 1000, 2000, 3900], options.Runs.Select(r => r.Topics));
        Assert.All(options.Runs, r => Assert.Equal((5, TimeSpan.FromSeconds(15)), (r.ClientsPerTopic, r.Interval)));
        Assert.Equal(TimeSpan.FromSeconds(10), options.Warmup);
        Assert.Equal(TimeSpan.FromSeconds(30), options.Duration);
    }

    [Fact]
    public void ASweepRunsEachPresetAtEachTopicCount()
    {
        var options = LoadTestOptions.Parse(["--preset", "seed1,seed2", "--sweep", "10,20"]);

        Assert.Equal(["seed1-10t", "seed1-20t", "seed2-10t", "seed2-20t"], options.Runs.Select(r => r.Name));
    }

    [Fact]
    public async Task HelpListsTheOptionsAndSucceeds()
    {
        using var output = new StringWriter();

        var exit = await LoadTestCommand.RunAsync(["--help"], output, output, CancellationToken.None).WaitAsync(TimeSpan.FromSeconds(10));

        Assert.Equal(0, exit);
        Assert.Contains("--processes N", output.ToString());
    }
}

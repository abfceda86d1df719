using System.Net;
using Laharsub.Server.Wire;
using Laharsub.Testing;

namespace Laharsub.Client.Tests;

/// <summary>
/// Issue 23's fault: the real server (in memory) killed with SIGKILL and restarted at the same address
/// without its data, its topics created again by their publisher, and .NET clients given the bare
/// cursors (no epoch) saved before the crash. Every one of them is told: by the <c>beyondEnd</c> reset
/// when the new incarnation is shorter than its cursor, or, with <c>Laharsub:RequireEpochForCursors</c>,
/// by a 400 whatever the new incarnation holds (docs/protocol.md, "Bare cursors").
/// </summary>
public sealed class BareCursorFaultTests
{
    private const int Topics = 4;

    /// <summary>Each topic held messages 1..5 before the crash: every client saved the bare cursor 6.</summary>
    private const long SavedCursor = 6;

    [Theory]
    // Default mode: the re-created topics are shorter than the saved cursors, so the server sees a cursor beyond the end.
    [InlineData(false, 2)]
    // RequireEpochForCursors: the re-created topics already hold 10 messages, the cursor falls inside, and
    // only the refusal of a bare cursor keeps messages 1..5 from being skipped silently.
    [InlineData(true, 10)]
    public async Task AfterKill9AndARestartWithoutDataEveryClientGivenABareCursorIsTold(bool requireEpochs, int publishedAfterRestart)
    {
        string[] settings = ["Laharsub:Demo:Enabled=false", $"Laharsub:RequireEpochForCursors={requireEpochs}"];
        var topicIds = new List<long>();
        int port;
        await using (var first = await HostProcess.StartAsync(settings))
        {
            port = first.BaseAddress.Port;
            await using var publisher = new LaharsubClient([first.ApiAddress], TestSupport.Options(PollFormat.Json));
            for (var t = 0; t < Topics; t++)
            {
                var topicId = (await publisher.CreateTopicWithEpochAsync().WaitAsync(TestSupport.Timeout)).TopicId;
                for (var i = 1; i < SavedCursor; i++)
                {
                    await publisher.PublishAsync(topicId, $"old {i}").WaitAsync(TestSupport.Timeout);
                }
                topicIds.Add(topicId);
            }
            await first.KillAsync();
        }

        await using var second = await HostProcess.StartOnPortAsync(port, settings);
        await using (var publisher = new LaharsubClient([second.ApiAddress], TestSupport.Options(PollFormat.Json)))
        {
            foreach (var topicId in topicIds)
            {
                // The in-memory server starts its ids again at 1: the same ids, new incarnations.
                Assert.Equal(topicId, (await publisher.CreateTopicWithEpochAsync().WaitAsync(TestSupport.Timeout)).TopicId);
                for (var i = 1; i <= publishedAfterRestart; i++)
                {
                    await publisher.PublishAsync(topicId, $"new {i}").WaitAsync(TestSupport.Timeout);
                }
            }
        }

        // One client per saved cursor, as many applications would each resume their own.
        await Task.WhenAll(topicIds.Select(async topicId =>
        {
            await using var client = new LaharsubClient([second.ApiAddress], TestSupport.Options(PollFormat.Json));
            await using var reader = new EventReader(client.Subscribe([new(topicId, SavedCursor)]));
            if (requireEpochs)
            {
                var error = await Assert.ThrowsAsync<LaharsubException>(() => reader.NextAsync());
                Assert.Equal(HttpStatusCode.BadRequest, error.StatusCode);
                Assert.Contains("add the topic's epoch", Assert.Single(error.Errors["topics"]));
            }
            else
            {
                var events = await reader.TakeAsync(1 + publishedAfterRestart);
                var reset = Assert.IsType<ResetNotice>(events[0]);
                Assert.Equal((false, SavedCursor, 1L, (long)publishedAfterRestart),
                    (reset.EpochChanged, reset.RequestedFrom, reset.FirstMessageId, reset.LastMessageId));
                Assert.Equal(Enumerable.Range(1, publishedAfterRestart).Select(i => $"new {i}"), events.Skip(1).Select(e => e.Text()));
            }
        }));
    }
}

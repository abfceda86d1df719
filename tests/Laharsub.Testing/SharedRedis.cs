namespace Laharsub.Testing;

/// <summary>One private redis-server for the whole test run, started on first use and stopped when the test process exits.</summary>
public static class SharedRedis
{
    private static readonly Lazy<Task<RedisServer>> Server = new(async () =>
    {
        var server = await RedisServer.StartAsync();
        AppDomain.CurrentDomain.ProcessExit += (_, _) => server.DisposeAsync().AsTask().Wait(TimeSpan.FromSeconds(10));
        return server;
    });

    public static Task<RedisServer> GetAsync() => Server.Value;

    /// <summary>A key prefix no other test uses, so that tests share the server without seeing each other's topics.</summary>
    public static string UniquePrefix() => $"test-{Guid.NewGuid():N}:";
}

using System.Net;
using Laharsub.Server.Limits;
using Laharsub.Server.Tests.Support;
using Laharsub.Testing;
using Microsoft.AspNetCore.Connections;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;

namespace Laharsub.Server.Tests;

/// <summary>
/// The accept loop stops at the connection limit (plus a margin for refusals) until a connection is
/// disposed, so that a flood waits in the listen backlog instead of in the process's descriptors.
/// </summary>
public sealed class PacedAcceptTests
{
    private const int Limit = 4;
    private static readonly int Capacity = Limit + PacedConnectionListenerFactory.RefusalMargin(Limit);

    [Fact]
    public async Task AcceptingStopsAtTheLimitAndGoesOnWhenAConnectionIsDisposed()
    {
        await using var listener = await BindAsync();
        var open = new List<ConnectionContext>();
        for (var i = 0; i < Capacity; i++)
        {
            open.Add((await listener.AcceptAsync().AsTask().WaitAsync(WireClient.Bound))!);
        }

        var next = listener.AcceptAsync().AsTask();
        Assert.False(next.IsCompleted, "a connection was accepted past the limit and its margin");

        await open[0].DisposeAsync();
        var accepted = await next.WaitAsync(WireClient.Bound);
        Assert.NotNull(accepted);
    }

    [Fact]
    public async Task AConnectionDisposedTwiceGivesBackOnePlace()
    {
        await using var listener = await BindAsync();
        var first = (await listener.AcceptAsync().AsTask().WaitAsync(WireClient.Bound))!;
        await first.DisposeAsync();
        await first.DisposeAsync();
        for (var i = 0; i < Capacity; i++)
        {
            await listener.AcceptAsync().AsTask().WaitAsync(WireClient.Bound);
        }

        var next = listener.AcceptAsync().AsTask();
        Assert.False(next.IsCompleted, "a second disposal gave back a place it did not hold");
    }

    [Fact]
    public async Task UnbindingEndsAnAcceptThatWaitsForAPlace()
    {
        await using var listener = await BindAsync();
        for (var i = 0; i < Capacity; i++)
        {
            await listener.AcceptAsync().AsTask().WaitAsync(WireClient.Bound);
        }
        var waiting = listener.AcceptAsync().AsTask();

        await listener.UnbindAsync();

        // Kestrel's accept loop stops on null; without it, shutdown would wait for a connection to close.
        Assert.Null(await waiting.WaitAsync(WireClient.Bound));
    }

    [Fact]
    public async Task WithoutAConnectionLimitTheTransportIsNotWrapped()
    {
        var transport = new FakeTransport();
        var factory = new PacedConnectionListenerFactory(transport, Options.Create(new KestrelServerOptions()));

        await using var listener = await factory.BindAsync(new IPEndPoint(IPAddress.Loopback, 0));

        Assert.Same(transport.Listener, listener);
    }

    [Fact]
    public async Task TheStandaloneServerPacesItsSocketTransport()
    {
        await using var server = await LaharsubTestServer.StartAsync();

        Assert.IsType<PacedConnectionListenerFactory>(server.Services.GetRequiredService<IConnectionListenerFactory>());
    }

    private static async Task<IConnectionListener> BindAsync()
    {
        var kestrel = new KestrelServerOptions();
        kestrel.Limits.MaxConcurrentConnections = Limit;
        var factory = new PacedConnectionListenerFactory(new FakeTransport(), Options.Create(kestrel));
        return await factory.BindAsync(new IPEndPoint(IPAddress.Loopback, 0));
    }

    /// <summary>A transport whose listener has a new connection whenever asked.</summary>
    private sealed class FakeTransport : IConnectionListenerFactory
    {
        public FakeListener Listener { get; } = new();

        public ValueTask<IConnectionListener> BindAsync(EndPoint endpoint, CancellationToken cancellationToken = default) =>
            ValueTask.FromResult<IConnectionListener>(Listener);
    }

    private sealed class FakeListener : IConnectionListener
    {
        public EndPoint EndPoint { get; } = new IPEndPoint(IPAddress.Loopback, 0);

        public ValueTask<ConnectionContext?> AcceptAsync(CancellationToken cancellationToken = default) =>
            ValueTask.FromResult<ConnectionContext?>(new DefaultConnectionContext());

        public ValueTask UnbindAsync(CancellationToken cancellationToken = default) => ValueTask.CompletedTask;

        public ValueTask DisposeAsync() => ValueTask.CompletedTask;
    }
}

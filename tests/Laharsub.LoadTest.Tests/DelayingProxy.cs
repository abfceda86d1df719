using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using System.Threading.Channels;

namespace Laharsub.LoadTest.Tests;

/// <summary>
/// A TCP proxy on loopback that forwards requests at once and holds every chunk of the server's
/// answers for a fixed delay before passing it on: a network that adds latency between the server
/// delivering a message and a subscriber receiving it. <see cref="DropConnections"/> cuts every
/// connection open through it, as a network that fails.
/// </summary>
internal sealed class DelayingProxy : IAsyncDisposable
{
    private readonly TcpListener _listener = new(IPAddress.Loopback, 0);
    private readonly IPEndPoint _target;
    private readonly TimeSpan _delay;
    private readonly CancellationTokenSource _stop = new();
    private readonly List<Task> _connections = [];
    private readonly List<CancellationTokenSource> _open = [];
    private readonly Task _accepting;

    public DelayingProxy(Uri target, TimeSpan delay)
    {
        _target = new IPEndPoint(IPAddress.Parse(target.Host), target.Port);
        _delay = delay;
        _listener.Start();
        _accepting = AcceptAsync();
    }

    /// <summary>The proxy's root URL, e.g. <c>http://127.0.0.1:40123/</c>.</summary>
    public Uri BaseAddress => new($"http://127.0.0.1:{((IPEndPoint)_listener.LocalEndpoint).Port}/");

    public async ValueTask DisposeAsync()
    {
        await _stop.CancelAsync();
        _listener.Stop();
        await Task.WhenAll([_accepting, .. Snapshot()]).WaitAsync(TimeSpan.FromSeconds(10));
        _stop.Dispose();
    }

    /// <summary>Closes every connection open through the proxy now (both sides); new ones are relayed as before.</summary>
    public void DropConnections()
    {
        lock (_open)
        {
            foreach (var connection in _open)
            {
                connection.Cancel();
            }
        }
    }

    /// <summary>How many connections the proxy has relayed.</summary>
    public int Accepted
    {
        get
        {
            lock (_connections)
            {
                return _connections.Count;
            }
        }
    }

    private Task[] Snapshot()
    {
        lock (_connections)
        {
            return [.. _connections];
        }
    }

    private async Task AcceptAsync()
    {
        try
        {
            while (true)
            {
                var client = await _listener.AcceptTcpClientAsync(_stop.Token);
                lock (_connections)
                {
                    _connections.Add(RelayAsync(client));
                }
            }
        }
        catch (Exception exception) when (exception is OperationCanceledException or SocketException or ObjectDisposedException)
        {
        }
    }

    private async Task RelayAsync(TcpClient client)
    {
        using (client)
        using (var server = new TcpClient())
        {
            try
            {
                await server.ConnectAsync(_target, _stop.Token);
                client.NoDelay = server.NoDelay = true;
                using var linked = CancellationTokenSource.CreateLinkedTokenSource(_stop.Token);
                lock (_open)
                {
                    _open.Add(linked);
                }
                try
                {
                    var upstream = PumpAsync(client.GetStream(), server.GetStream(), linked.Token);
                    var downstream = PumpDelayedAsync(server.GetStream(), client.GetStream(), linked.Token);
                    await Task.WhenAny(upstream, downstream);
                    await linked.CancelAsync();
                    await Task.WhenAll(upstream, downstream);
                }
                finally
                {
                    lock (_open)
                    {
                        _open.Remove(linked);
                    }
                }
            }
            catch (Exception exception) when (exception is OperationCanceledException or SocketException or IOException)
            {
            }
        }
    }

    private static async Task PumpAsync(Stream from, Stream to, CancellationToken cancellationToken)
    {
        try
        {
            await from.CopyToAsync(to, cancellationToken);
        }
        catch (Exception exception) when (exception is OperationCanceledException or IOException)
        {
        }
    }

    private async Task PumpDelayedAsync(Stream from, Stream to, CancellationToken cancellationToken)
    {
        var chunks = Channel.CreateUnbounded<(long Due, byte[] Data)>(new UnboundedChannelOptions { SingleReader = true, SingleWriter = true });
        var writer = Task.Run(async () =>
        {
            try
            {
                await foreach (var (due, data) in chunks.Reader.ReadAllAsync(cancellationToken))
                {
                    // Timers may fire up to a millisecond early: wait until the clock says the delay has passed.
                    while (Stopwatch.GetTimestamp() < due)
                    {
                        await Task.Delay(Stopwatch.GetElapsedTime(Stopwatch.GetTimestamp(), due) + TimeSpan.FromMilliseconds(1), cancellationToken);
                    }
                    await to.WriteAsync(data, cancellationToken);
                }
            }
            catch (Exception exception) when (exception is OperationCanceledException or IOException)
            {
            }
        }, CancellationToken.None);
        var buffer = new byte[16 * 1024];
        try
        {
            int read;
            while ((read = await from.ReadAsync(buffer, cancellationToken)) > 0)
            {
                var due = Stopwatch.GetTimestamp() + (long)(_delay.TotalSeconds * Stopwatch.Frequency);
                chunks.Writer.TryWrite((due, buffer.AsSpan(0, read).ToArray()));
            }
        }
        catch (Exception exception) when (exception is OperationCanceledException or IOException)
        {
        }
        chunks.Writer.TryComplete();
        await writer;
    }
}

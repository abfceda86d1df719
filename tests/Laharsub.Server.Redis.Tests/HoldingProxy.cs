using System.Net;
using System.Net.Sockets;

namespace Laharsub.Server.Redis.Tests;

/// <summary>
/// A TCP proxy on loopback between a store and its redis-server that passes everything through, except that it
/// holds what a client sends from the moment it carries bytes a test is waiting for, until the test releases it:
/// so a test can put another instance's write between a store's read and its commit, without timing.
/// </summary>
internal sealed class HoldingProxy : IAsyncDisposable
{
    private readonly TcpListener _listener = new(IPAddress.Loopback, 0);
    private readonly int _targetPort;
    private readonly CancellationTokenSource _stopping = new();
    private readonly List<Task> _pumps = [];
    private readonly Lock _lock = new();
    private Hold? _armed;

    public HoldingProxy(int targetPort)
    {
        _targetPort = targetPort;
        _listener.Start();
        _pumps.Add(AcceptAsync());
    }

    /// <summary>The StackExchange.Redis configuration string that goes through the proxy.</summary>
    public string Configuration => $"127.0.0.1:{((IPEndPoint)_listener.LocalEndpoint).Port}";

    /// <summary>Holds the next client chunk that contains <paramref name="pattern"/> (one hold at a time).</summary>
    public Hold Arm(byte[] pattern)
    {
        var hold = new Hold(pattern);
        lock (_lock)
        {
            _armed = hold;
        }
        return hold;
    }

    private async Task AcceptAsync()
    {
        while (!_stopping.IsCancellationRequested)
        {
            TcpClient client;
            try
            {
                client = await _listener.AcceptTcpClientAsync(_stopping.Token);
            }
            catch (Exception exception) when (exception is OperationCanceledException or ObjectDisposedException or SocketException)
            {
                return;
            }
            var server = new TcpClient();
            try
            {
                await server.ConnectAsync(IPAddress.Loopback, _targetPort, _stopping.Token);
            }
            catch (Exception exception) when (exception is OperationCanceledException or SocketException)
            {
                client.Dispose();
                server.Dispose();
                continue;
            }
            lock (_lock)
            {
                _pumps.Add(PumpAsync(client, server, watch: true));
                _pumps.Add(PumpAsync(server, client, watch: false));
            }
        }
    }

    private async Task PumpAsync(TcpClient from, TcpClient to, bool watch)
    {
        var buffer = new byte[64 * 1024];
        // The end of the previous chunk, so that a pattern split over two chunks is found.
        var tail = Array.Empty<byte>();
        try
        {
            var input = from.GetStream();
            var output = to.GetStream();
            while (true)
            {
                var read = await input.ReadAsync(buffer, _stopping.Token);
                if (read == 0)
                {
                    break;
                }
                if (watch)
                {
                    Hold? matched = null;
                    lock (_lock)
                    {
                        if (_armed is { } armed && tail.Concat(buffer.Take(read)).ToArray().AsSpan().IndexOf(armed.Pattern) >= 0)
                        {
                            matched = armed;
                            _armed = null;
                        }
                    }
                    if (matched is not null)
                    {
                        matched.Held.TrySetResult();
                        await matched.Released.Task.WaitAsync(_stopping.Token);
                    }
                    tail = buffer.AsSpan(Math.Max(0, read - 256), Math.Min(read, 256)).ToArray();
                }
                await output.WriteAsync(buffer.AsMemory(0, read), _stopping.Token);
            }
        }
        catch (Exception exception) when (exception is OperationCanceledException or IOException or ObjectDisposedException or SocketException)
        {
        }
        finally
        {
            from.Dispose();
            to.Dispose();
        }
    }

    public async ValueTask DisposeAsync()
    {
        await _stopping.CancelAsync();
        _listener.Stop();
        Task[] pumps;
        lock (_lock)
        {
            pumps = [.. _pumps];
        }
        await Task.WhenAll(pumps).WaitAsync(TimeSpan.FromSeconds(10));
        _stopping.Dispose();
    }

    /// <summary>One hold: <see cref="Held"/> completes when a chunk with the pattern arrived, which goes on once <see cref="Release"/> is called.</summary>
    internal sealed class Hold(byte[] pattern)
    {
        public byte[] Pattern { get; } = pattern;

        public TaskCompletionSource Held { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public TaskCompletionSource Released { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public void Release() => Released.TrySetResult();
    }
}

using System.Globalization;
using System.Text.RegularExpressions;
using Laharsub.LoadTestClient.Hosting;

namespace Laharsub.Testing;

/// <summary>
/// Debian's nginx in front of running instances with the repository's deploy/nginx/laharsub.conf, as a
/// private instance (its own prefix, pid file and log, on a free loopback port). Only the upstream's
/// servers and the listen line of that file are replaced; the rest is what operators are told to use.
/// </summary>
public sealed partial class NginxReverseProxy : IAsyncDisposable
{
    public const string ConfigRelativePath = "deploy/nginx/laharsub.conf";

    private const string InstallHint = "these tests run Debian's nginx in front of the server. Run ./test.sh, which installs it, or apt-get install -y nginx-light";

    private readonly PrivateNginx _nginx;
    private readonly OutputLog _output;

    private NginxReverseProxy(PrivateNginx nginx, Uri baseAddress, OutputLog output)
    {
        _nginx = nginx;
        BaseAddress = baseAddress;
        _output = output;
    }

    public Uri BaseAddress { get; }

    public Uri ApiAddress => new(BaseAddress, "ps/");

    /// <summary>What nginx wrote (its error log), for failure messages.</summary>
    public string Output => _output.ToString();

    /// <summary>The full path of the repository's configuration.</summary>
    public static string ConfigurationPath =>
        Path.Combine(ChildProcess.FindRepositoryRoot(AppContext.BaseDirectory)
            ?? throw new InvalidOperationException("The repository root (Laharsub.sln) was not found above " + AppContext.BaseDirectory), ConfigRelativePath);

    /// <summary>The repository's configuration, as the docs quote it.</summary>
    public static string ReadConfiguration() => File.ReadAllText(ConfigurationPath);

    /// <summary>Starts nginx in front of <paramref name="upstreams"/> and waits until /health answers through it.</summary>
    /// <exception cref="InvalidOperationException">nginx is missing or did not start; the message says what to do.</exception>
    public static async Task<NginxReverseProxy> StartAsync(IEnumerable<Uri> upstreams)
    {
        var port = ChildProcess.FreeLoopbackPort();
        var output = new OutputLog();
        var nginx = PrivateNginx.Start([("nginx.conf", MainConfiguration), ("laharsub.conf", Configure(ReadConfiguration(), upstreams, port))],
            output.Append, InstallHint);
        var proxy = new NginxReverseProxy(nginx, new Uri($"http://127.0.0.1:{port}/"), output);
        var healthy = nginx.Process.WaitUntilHealthyAsync(proxy.BaseAddress, TimeSpan.FromSeconds(30), () => $" ({nginx.CommandLine}):\n" + proxy.Output, CancellationToken.None);
        return await ChildProcess.ReadyOrDisposedAsync(proxy, healthy);
    }

    /// <summary><paramref name="configuration"/> with its upstream's servers replaced by <paramref name="upstreams"/> and its listen line by <paramref name="port"/> of the loopback address.</summary>
    public static string Configure(string configuration, IEnumerable<Uri> upstreams, int port)
    {
        var servers = UpstreamServerPattern().Matches(configuration);
        if (servers.Count == 0)
        {
            throw new InvalidOperationException($"{ConfigRelativePath} has no 'server HOST:PORT;' line in its upstream: the tests put their instances there.");
        }
        var replacement = string.Join('\n', upstreams.Select(u => $"    server {u.Host}:{u.Port.ToString(CultureInfo.InvariantCulture)};"));
        var first = servers[0];
        var configured = configuration[..first.Index] + replacement + "\n"
            + UpstreamServerPattern().Replace(configuration[(first.Index + first.Length)..], "");
        var listens = ListenPattern().Count(configured);
        if (listens != 1)
        {
            throw new InvalidOperationException($"{ConfigRelativePath} must contain exactly one 'listen 80;' line (found {listens}): the tests put their port there.");
        }
        return ListenPattern().Replace(configured, $"    listen 127.0.0.1:{port.ToString(CultureInfo.InvariantCulture)};");
    }

    /// <summary>
    /// What Debian's /etc/nginx/nginx.conf is to the file in conf.d, for a private instance: foreground, its
    /// files in its prefix, no access log. One worker, so that round robin alternates strictly between the
    /// instances from one request to the next (each worker keeps its own turn).
    /// </summary>
    private const string MainConfiguration = """
        daemon off;
        worker_processes 1;
        pid nginx.pid;
        error_log stderr warn;
        events {
            worker_connections 1024;
        }
        http {
            access_log off;
            client_body_temp_path client-body;
            proxy_temp_path proxy;
            fastcgi_temp_path fastcgi;
            uwsgi_temp_path uwsgi;
            scgi_temp_path scgi;
            include laharsub.conf;
        }
        """;

    public ValueTask DisposeAsync() => _nginx.DisposeAsync();

    [GeneratedRegex(@"^[ \t]*server [^ ;]+:[0-9]+;[ \t]*\n?", RegexOptions.Multiline)]
    private static partial Regex UpstreamServerPattern();

    [GeneratedRegex(@"^[ \t]*listen 80;", RegexOptions.Multiline)]
    private static partial Regex ListenPattern();
}

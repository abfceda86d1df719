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

    /// <summary>The TLS and HTTP/2 variant of <see cref="ConfigRelativePath"/>.</summary>
    public const string TlsConfigRelativePath = "deploy/nginx/laharsub-tls.conf";

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
    public static string ConfigurationPath => RepositoryPath(ConfigRelativePath);

    /// <summary>The full path of a file of the repository.</summary>
    public static string RepositoryPath(string relativePath) =>
        Path.Combine(ChildProcess.FindRepositoryRoot(AppContext.BaseDirectory)
            ?? throw new InvalidOperationException("The repository root (Laharsub.sln) was not found above " + AppContext.BaseDirectory), relativePath);

    /// <summary>The repository's configuration, as the docs quote it.</summary>
    public static string ReadConfiguration() => File.ReadAllText(ConfigurationPath);

    /// <summary>The file nginx writes a line to for each request it has answered (<see cref="AccessLogFormat"/>).</summary>
    public string AccessLogPath => Path.Combine(_nginx.Prefix, "access.log");

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

    /// <summary>
    /// Starts nginx with the repository's <see cref="TlsConfigRelativePath"/> in front of <paramref name="upstreams"/>,
    /// serving the certificate and key in the PEM files given, and waits until it accepts connections.
    /// </summary>
    /// <exception cref="InvalidOperationException">nginx is missing or did not start; the message says what to do.</exception>
    public static async Task<NginxReverseProxy> StartTlsAsync(IEnumerable<Uri> upstreams, string certificatePath, string keyPath)
    {
        var port = ChildProcess.FreeLoopbackPort();
        var output = new OutputLog();
        var configured = Configure(File.ReadAllText(RepositoryPath(TlsConfigRelativePath)), upstreams, port, TlsListenPattern(), " ssl http2");
        configured = ReplaceOnce(configured, CertificatePattern(), $"    ssl_certificate {certificatePath};", TlsConfigRelativePath);
        configured = ReplaceOnce(configured, KeyPattern(), $"    ssl_certificate_key {keyPath};", TlsConfigRelativePath);
        var nginx = PrivateNginx.Start([("nginx.conf", MainConfiguration), ("laharsub.conf", configured)], output.Append, InstallHint);
        var proxy = new NginxReverseProxy(nginx, new Uri($"https://127.0.0.1:{port}/"), output);
        var listening = nginx.Process.WaitUntilListeningAsync(port, TimeSpan.FromSeconds(30), () => $" ({nginx.CommandLine}):\n" + proxy.Output, CancellationToken.None);
        return await ChildProcess.ReadyOrDisposedAsync(proxy, listening);
    }

    /// <summary><paramref name="configuration"/> with its upstream's servers replaced by <paramref name="upstreams"/> and its listen line by <paramref name="port"/> of the loopback address.</summary>
    public static string Configure(string configuration, IEnumerable<Uri> upstreams, int port) =>
        Configure(configuration, upstreams, port, ListenPattern(), "");

    private static string ReplaceOnce(string configuration, Regex pattern, string replacement, string file)
    {
        var found = pattern.Count(configuration);
        return found == 1 ? pattern.Replace(configuration, replacement)
            : throw new InvalidOperationException($"{file} must contain exactly one line matching '{pattern}' (found {found}): the tests replace it.");
    }

    private static string Configure(string configuration, IEnumerable<Uri> upstreams, int port, Regex listen, string listenOptions)
    {
        var servers = UpstreamServerPattern().Matches(configuration);
        if (servers.Count == 0)
        {
            throw new InvalidOperationException($"{ConfigRelativePath} has no 'server HOST:PORT;' line in its upstream: the tests put their instances there.");
        }
        // Each server keeps the options the file gives it (max_fails=0 and the like).
        var options = servers[0].Groups[1].Value;
        var replacement = string.Join('\n', upstreams.Select(u => $"    server {u.Host}:{u.Port.ToString(CultureInfo.InvariantCulture)}{options};"));
        var first = servers[0];
        var configured = configuration[..first.Index] + replacement + "\n"
            + UpstreamServerPattern().Replace(configuration[(first.Index + first.Length)..], "");
        return ReplaceOnce(configured, listen, $"    listen 127.0.0.1:{port.ToString(CultureInfo.InvariantCulture)}{listenOptions};", "The nginx configuration");
    }

    /// <summary>
    /// What Debian's /etc/nginx/nginx.conf is to the file in conf.d, for a private instance: foreground, its
    /// files in its prefix, and an access log of <see cref="AccessLogFormat"/>. One worker, so that round robin
    /// alternates strictly between the instances from one request to the next (each worker keeps its own turn).
    /// </summary>
    private const string MainConfiguration = $$"""
        daemon off;
        worker_processes 1;
        pid nginx.pid;
        error_log stderr warn;
        events {
            worker_connections 1024;
        }
        http {
            log_format laharsub '{{AccessLogFormat}}';
            access_log access.log laharsub;
            client_body_temp_path client-body;
            proxy_temp_path proxy;
            fastcgi_temp_path fastcgi;
            uwsgi_temp_path uwsgi;
            scgi_temp_path scgi;
            include laharsub.conf;
        }
        """;

    public ValueTask DisposeAsync() => _nginx.DisposeAsync();

    /// <summary>
    /// An access log line: nginx's serial number of the client connection, the protocol (<c>HTTP/2.0</c>),
    /// the status, the method and the path.
    /// </summary>
    public const string AccessLogFormat = "$connection $server_protocol $status $request_method $uri";

    [GeneratedRegex(@"^[ \t]*server [^ ;]+:[0-9]+((?: [a-z_]+=[^ ;]+)*);[ \t]*\n?", RegexOptions.Multiline)]
    private static partial Regex UpstreamServerPattern();

    [GeneratedRegex(@"^[ \t]*listen 80;", RegexOptions.Multiline)]
    private static partial Regex ListenPattern();

    [GeneratedRegex(@"^[ \t]*listen 443 ssl http2;", RegexOptions.Multiline)]
    private static partial Regex TlsListenPattern();

    [GeneratedRegex(@"^[ \t]*ssl_certificate [^;]+;", RegexOptions.Multiline)]
    private static partial Regex CertificatePattern();

    [GeneratedRegex(@"^[ \t]*ssl_certificate_key [^;]+;", RegexOptions.Multiline)]
    private static partial Regex KeyPattern();
}

namespace Laharsub.LoadTestClient.Hosting;

/// <summary>A server this tool started for one run, stopped when disposed.</summary>
internal interface ITargetServer : IAsyncDisposable
{
    /// <summary>The server's root, e.g. <c>http://127.0.0.1:40123/</c>.</summary>
    Uri BaseAddress { get; }

    /// <summary>The process to sample (nginx: its master).</summary>
    int Pid { get; }

    /// <summary>Whether the work is done by child processes of <see cref="Pid"/> (nginx's workers), which are sampled too.</summary>
    bool HasWorkerProcesses { get; }

    /// <summary>The server's command line, for the report.</summary>
    string CommandLine { get; }
}

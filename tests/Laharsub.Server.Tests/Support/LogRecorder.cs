using System.Collections.Concurrent;
using Microsoft.Extensions.Logging;

namespace Laharsub.Server.Tests.Support;

public sealed record LoggedEntry(LogLevel Level, string Category, string Message, Exception? Exception);

/// <summary>Records what the server logs at Warning and above, so that a test can check what an operator would see.</summary>
public sealed class LogRecorder : ILoggerProvider
{
    public ConcurrentQueue<LoggedEntry> Entries { get; } = new();

    public ILogger CreateLogger(string categoryName) => new Logger(this, categoryName);

    public void Dispose()
    {
    }

    private sealed class Logger(LogRecorder recorder, string category) : ILogger
    {
        public IDisposable? BeginScope<TState>(TState state) where TState : notnull => null;

        public bool IsEnabled(LogLevel logLevel) => logLevel >= LogLevel.Warning;

        public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter)
        {
            if (IsEnabled(logLevel))
            {
                recorder.Entries.Enqueue(new LoggedEntry(logLevel, category, formatter(state, exception), exception));
            }
        }
    }
}

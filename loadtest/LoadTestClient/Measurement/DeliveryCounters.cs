namespace Laharsub.LoadTestClient.Measurement;

/// <summary>
/// Counts of one process's run, updated from every poll and publish with interlocked adds (a few
/// thousand a second: cheaper than per-thread copies and a merge).
/// </summary>
internal sealed class DeliveryCounters
{
    private readonly long[] _statusCounts = new long[600];
    private long _lost;
    private long _duplicates;
    private long _outOfOrder;
    private long _gapNotices;
    private long _gapMessages;
    private long _resets;
    private long _epochResets;
    private long _deletedNotices;
    private long _transportErrors;

    public long Lost => Volatile.Read(ref _lost);
    public long Duplicates => Volatile.Read(ref _duplicates);
    public long OutOfOrder => Volatile.Read(ref _outOfOrder);
    public long GapNotices => Volatile.Read(ref _gapNotices);
    public long GapMessages => Volatile.Read(ref _gapMessages);
    /// <summary>Reset notices for a cursor beyond the topic's end (reason <c>beyondEnd</c>, or none given).</summary>
    public long Resets => Volatile.Read(ref _resets);

    /// <summary>Reset notices whose reason is <c>epochChanged</c>: the topic id now names another incarnation.</summary>
    public long EpochResets => Volatile.Read(ref _epochResets);
    public long DeletedNotices => Volatile.Read(ref _deletedNotices);

    /// <summary>Requests that failed without an HTTP status: refused or reset connections, timeouts.</summary>
    public long TransportErrors => Volatile.Read(ref _transportErrors);

    public void AddLost(long count) => Interlocked.Add(ref _lost, count);
    public void AddDuplicate() => Interlocked.Increment(ref _duplicates);
    public void AddOutOfOrder() => Interlocked.Increment(ref _outOfOrder);
    public void AddReset() => Interlocked.Increment(ref _resets);
    public void AddEpochReset() => Interlocked.Increment(ref _epochResets);
    public void AddDeletedNotice() => Interlocked.Increment(ref _deletedNotices);
    public void AddTransportError() => Interlocked.Increment(ref _transportErrors);

    public void AddGapNotice(long messages)
    {
        Interlocked.Increment(ref _gapNotices);
        Interlocked.Add(ref _gapMessages, messages);
    }

    /// <summary>Counts an unexpected HTTP status (anything but the 200/204/201 of a healthy run).</summary>
    public void AddStatus(int status) => Interlocked.Increment(ref _statusCounts[Math.Clamp(status, 0, _statusCounts.Length - 1)]);

    /// <summary>The 401 and 403 answers so far (status to count): the server refused a token, or the token this request.</summary>
    public Dictionary<int, long> Refusals()
    {
        var refusals = new Dictionary<int, long>();
        foreach (var status in RefusalStatuses)
        {
            if (Volatile.Read(ref _statusCounts[status]) is > 0 and var n)
            {
                refusals[status] = n;
            }
        }
        return refusals;
    }

    /// <summary>Unauthorized and forbidden: a run in Jwt mode whose tokens do not fit the server.</summary>
    public static readonly int[] RefusalStatuses = [401, 403];

    public Dictionary<string, long> StatusCounts()
    {
        var counts = new Dictionary<string, long>();
        for (var status = 0; status < _statusCounts.Length; status++)
        {
            var n = Volatile.Read(ref _statusCounts[status]);
            if (n != 0)
            {
                counts[status.ToString(System.Globalization.CultureInfo.InvariantCulture)] = n;
            }
        }
        return counts;
    }
}

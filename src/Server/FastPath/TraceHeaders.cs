using System.Diagnostics;
using System.Text;

namespace Laharsub.Server.FastPath;

/// <summary>
/// A request's trace context headers, those hosting's propagator reads (<see cref="HostingTelemetry.TraceFields"/>),
/// kept while its head is parsed and given to the propagator as the pipeline's header dictionary would give them.
/// One per connection, cleared for each request.
/// </summary>
internal sealed class TraceHeaders(string[] fields)
{
    /// <summary>A request that carries none.</summary>
    public static readonly TraceHeaders None = new([]);

    private readonly string?[] _values = new string?[fields.Length];

    /// <summary>Whether the request carries any.</summary>
    public bool Any { get; private set; }

    /// <summary>What the propagator calls to read a header of the request.</summary>
    public static readonly DistributedContextPropagator.PropagatorGetterCallback Getter = static (object? carrier, string name, out string? value, out IEnumerable<string>? values) =>
    {
        values = null;
        value = ((TraceHeaders)carrier!).Get(name);
    };

    /// <summary>Which of the propagator's headers <paramref name="name"/> is, or -1.</summary>
    public static int Find(string[] fields, ReadOnlySpan<byte> name)
    {
        for (var i = 0; i < fields.Length; i++)
        {
            if (Ascii.EqualsIgnoreCase(name, fields[i]))
            {
                return i;
            }
        }
        return -1;
    }

    /// <summary>Keeps the value of header <paramref name="field"/>; false if the request sent it already (the pipeline joins the two, the fast path does not).</summary>
    public bool TryAdd(int field, ReadOnlySpan<byte> value)
    {
        if (_values[field] is not null)
        {
            return false;
        }
        _values[field] = Encoding.ASCII.GetString(value);
        Any = true;
        return true;
    }

    public void Clear()
    {
        if (Any)
        {
            Array.Clear(_values);
            Any = false;
        }
    }

    private string? Get(string name)
    {
        for (var i = 0; i < fields.Length; i++)
        {
            if (string.Equals(name, fields[i], StringComparison.OrdinalIgnoreCase))
            {
                return _values[i];
            }
        }
        return null;
    }
}

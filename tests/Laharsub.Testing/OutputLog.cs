using System.Text;

namespace Laharsub.Testing;

/// <summary>
/// What a child process wrote, line by line: appended from the threads that read its pipes, read whole
/// by the test for its failure messages.
/// </summary>
public sealed class OutputLog
{
    private readonly StringBuilder _text = new();

    public void Append(string line)
    {
        lock (_text)
        {
            _text.AppendLine(line);
        }
    }

    public override string ToString()
    {
        lock (_text)
        {
            return _text.ToString();
        }
    }
}

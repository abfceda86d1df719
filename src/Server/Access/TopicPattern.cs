using System.Globalization;
using Laharsub.Server.Wire;

namespace Laharsub.Server.Access;

/// <summary>
/// One entry of a permission list: <c>*</c> (every topic), a topic id (<c>14</c>), an inclusive id range
/// (<c>10-20</c>), or a label pattern (<c>orders-*</c>, <c>*-eu</c>; <c>*</c> stands for any run of characters)
/// that matches the label a topic was created with.
/// </summary>
internal readonly struct TopicPattern
{
    private readonly long _first;
    private readonly long _last;

    private TopicPattern(long first, long last, string? label, string text)
    {
        _first = first;
        _last = last;
        Label = label;
        Text = text;
    }

    /// <summary>Matches every topic, labelled or not.</summary>
    public bool IsAll => Label is null && _first == 1 && _last == long.MaxValue;

    /// <summary>The label pattern, or <see langword="null"/> for an id pattern.</summary>
    public string? Label { get; }

    /// <summary>The pattern as written.</summary>
    public string Text { get; }

    public static readonly TopicPattern All = new(1, long.MaxValue, null, "*");

    public bool MatchesId(long topicId) => Label is null && topicId >= _first && topicId <= _last;

    public bool MatchesLabel(string? label) => IsAll || (Label is not null && label is not null && TopicLabel.Matches(Label, label));

    /// <summary>Parses a pattern; on failure <paramref name="error"/> says what a pattern looks like.</summary>
    public static bool TryParse(string text, out TopicPattern pattern, out string? error)
    {
        pattern = default;
        error = null;
        if (text == "*")
        {
            pattern = All;
            return true;
        }
        if (text.Length > 0 && char.IsAsciiDigit(text[0]))
        {
            var dash = text.IndexOf('-');
            var firstText = dash < 0 ? text : text[..dash];
            var lastText = dash < 0 ? text : text[(dash + 1)..];
            if (TryParseId(firstText, out var first) && TryParseId(lastText, out var last) && first <= last)
            {
                pattern = new TopicPattern(first, last, null, text);
                return true;
            }
            error = $"'{text}' is neither a topic id (14) nor an id range (10-20, the first no greater than the last). Labels start with a letter.";
            return false;
        }
        if (text.Length == 0 || !(char.IsAsciiLetter(text[0]) || text[0] == '*') || TopicLabel.ValidatePattern(text) is not null)
        {
            error = $"'{text}' is not a topic pattern: use *, a topic id (14), an id range (10-20) or a label pattern (orders-*), whose characters are letters, digits, - _ . : / and *.";
            return false;
        }
        pattern = new TopicPattern(0, -1, text, text);
        return true;
    }

    private static bool TryParseId(string text, out long id) =>
        long.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out id) && id > 0;

    public override string ToString() => Text;
}

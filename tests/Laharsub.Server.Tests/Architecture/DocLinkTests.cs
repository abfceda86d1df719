using System.Text;
using System.Text.RegularExpressions;
using Laharsub.LoadTestClient.Hosting;

namespace Laharsub.Server.Tests.Architecture;

/// <summary>
/// Every relative link of the repository's markdown (README, docs, the packages' READMEs) names a file
/// that exists and, when it names a heading of a markdown file, a heading that file has: pages move and
/// sections are renamed, and a newcomer's click should never land nowhere.
/// </summary>
public sealed partial class DocLinkTests
{
    private static readonly HashSet<string> Skipped = ["node_modules", "bin", "obj", ".git", "loadtest-results", "BenchmarkDotNet.Artifacts"];

    [Fact]
    public void EveryRelativeLinkOfTheDocsResolves()
    {
        var root = ChildProcess.FindRepositoryRoot(AppContext.BaseDirectory)
            ?? throw new InvalidOperationException("no repository above the test's build output");
        var pages = MarkdownFiles(root).ToList();
        var headings = new Dictionary<string, HashSet<string>>(StringComparer.Ordinal);
        var broken = new List<string>();
        var links = 0;

        foreach (var page in pages)
        {
            foreach (var (line, target) in Links(page))
            {
                links++;
                var hash = target.IndexOf('#', StringComparison.Ordinal);
                var path = hash < 0 ? target : target[..hash];
                var anchor = hash < 0 ? "" : Uri.UnescapeDataString(target[(hash + 1)..]);
                var file = path.Length == 0 ? page : Path.GetFullPath(Path.Combine(Path.GetDirectoryName(page)!, Uri.UnescapeDataString(path)));
                var where = $"{Path.GetRelativePath(root, page)}:{line}: {target}";
                if (!File.Exists(file) && !Directory.Exists(file))
                {
                    broken.Add(where + " (no such file)");
                }
                else if (anchor.Length > 0 && file.EndsWith(".md", StringComparison.Ordinal)
                    && !(headings.TryGetValue(file, out var known) ? known : headings[file] = Anchors(file)).Contains(anchor))
                {
                    broken.Add(where + " (no such heading)");
                }
            }
        }

        Assert.True(pages.Count > 10 && links > 100, $"only {links} links in {pages.Count} pages: the scan is broken");
        Assert.True(broken.Count == 0, "links that lead nowhere:\n" + string.Join('\n', broken));
    }

    [Theory]
    [InlineData("Where it stands: 2026-12-06, later (Jwt mode)", "where-it-stands-2026-12-06-later-jwt-mode")]
    [InlineData("Your app's own users (Host mode)", "your-apps-own-users-host-mode")]
    [InlineData("`Laharsub.Client` & retries", "laharsubclient--retries")]
    public void AHeadingsAnchorIsGitHubs(string heading, string anchor) => Assert.Equal(anchor, Slug(heading));

    private static IEnumerable<string> MarkdownFiles(string root) =>
        Directory.EnumerateFiles(root, "*.md", SearchOption.AllDirectories)
            .Where(file => !Path.GetRelativePath(root, file).Split(Path.DirectorySeparatorChar).Any(Skipped.Contains))
            .Order(StringComparer.Ordinal);

    /// <summary>The relative link targets of a page with their line numbers, outside code blocks and code spans.</summary>
    private static IEnumerable<(int Line, string Target)> Links(string page)
    {
        var fenced = false;
        var number = 0;
        foreach (var line in File.ReadLines(page))
        {
            number++;
            if (line.TrimStart().StartsWith("```", StringComparison.Ordinal))
            {
                fenced = !fenced;
                continue;
            }
            if (fenced)
            {
                continue;
            }
            foreach (Match link in LinkTarget().Matches(CodeSpan().Replace(line, "")))
            {
                var target = link.Groups[1].Value;
                if (!UriScheme().IsMatch(target))
                {
                    yield return (number, target);
                }
            }
        }
    }

    /// <summary>The anchors GitHub gives a page's headings (a repeated one gets -1, -2, ...), and its explicit <c>&lt;a id&gt;</c>s.</summary>
    private static HashSet<string> Anchors(string page)
    {
        var anchors = new HashSet<string>(StringComparer.Ordinal);
        var seen = new Dictionary<string, int>(StringComparer.Ordinal);
        var fenced = false;
        foreach (var line in File.ReadLines(page))
        {
            if (line.TrimStart().StartsWith("```", StringComparison.Ordinal))
            {
                fenced = !fenced;
                continue;
            }
            if (fenced)
            {
                continue;
            }
            if (Heading().Match(line) is { Success: true } heading)
            {
                var slug = Slug(InlineLink().Replace(heading.Groups[1].Value, "$1"));
                var count = seen.GetValueOrDefault(slug);
                seen[slug] = count + 1;
                anchors.Add(count == 0 ? slug : $"{slug}-{count}");
            }
            foreach (Match id in ExplicitAnchor().Matches(line))
            {
                anchors.Add(id.Groups[1].Value);
            }
        }
        return anchors;
    }

    /// <summary>GitHub's rule: lower case, only letters, digits, spaces, hyphens and underscores kept, spaces as hyphens.</summary>
    private static string Slug(string heading)
    {
        var slug = new StringBuilder();
        foreach (var c in heading.Trim().ToLowerInvariant())
        {
            if (char.IsLetterOrDigit(c) || c is '-' or '_')
            {
                slug.Append(c);
            }
            else if (c == ' ')
            {
                slug.Append('-');
            }
        }
        return slug.ToString();
    }

    [GeneratedRegex(@"\]\(([^)\s]+)")]
    private static partial Regex LinkTarget();

    [GeneratedRegex("`[^`]*`")]
    private static partial Regex CodeSpan();

    [GeneratedRegex("^[a-zA-Z][a-zA-Z0-9+.-]*:")]
    private static partial Regex UriScheme();

    [GeneratedRegex(@"^#{1,6}\s+(.*?)\s*#*$")]
    private static partial Regex Heading();

    [GeneratedRegex(@"\[([^\]]*)\]\([^)]*\)")]
    private static partial Regex InlineLink();

    [GeneratedRegex("<a\\s+(?:id|name)=\"([^\"]+)\"")]
    private static partial Regex ExplicitAnchor();
}

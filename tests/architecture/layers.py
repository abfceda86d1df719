#!/usr/bin/env python3
"""Folder-to-folder dependencies of the server library, and the arrows that point the wrong way.

Reads src/Server/**/*.cs (without Host/, bin/, obj/) and src/Server.Redis/**/*.cs. A file's folder is
its layer (Storage/InMemory, Wire, ...; files directly in src/Server are "(root)", src/Server.Redis is
"Redis"). An arrow A -> B is a file of A that has `using Laharsub.Server.B...;` or names a type
declared at the top level of a file of B. Prints a markdown table (cells: how many files of the row's
folder reference the column's folder), then the violations of ALLOWED below.

Usage: layers.py [--root REPO] [--markdown-only]
Exit: 0 no violation, 1 violations, 2 usage error. Standard library only: it runs wherever python3 does.
"""

import argparse
import re
import sys
from collections import defaultdict
from pathlib import Path

# The rules: which folders each folder may reference. "*" = any folder. A folder not named here is a
# violation by itself (its arrows cannot be judged), and so is an arrow into it from a folder without "*".
ALLOWED = {
    "Hosting": {"*"},  # composes everything; nothing else may import Hosting
    "Endpoints": {"Transport", "Access", "Limits", "Diagnostics", "Delivery", "Wire", "Storage"},
    # HTTP at Kestrel's connection level: polls, streams, sockets and the publish below the pipeline, on
    # the transports both front-ends share, never on the endpoints; nothing but Hosting refers to it.
    "FastPath": {"Transport", "Access", "Limits", "Diagnostics", "Delivery", "Wire", "Storage"},
    # The transports' rules written once (answers, start sequences, sessions) for both HTTP front-ends.
    "Transport": {"Access", "Limits", "Diagnostics", "Delivery", "Wire", "Storage"},
    "Access": {"Limits", "Diagnostics", "Wire", "Storage"},  # Wire: the protocol's syntax of ids and labels
    "Limits": {"Diagnostics", "Storage"},
    "Diagnostics": {"Wire", "Storage"},
    "Delivery": {"Wire", "Storage"},
    "Wire": {"Storage"},
    "Storage": set(),
    "Storage/InMemory": {"Storage"},
    "Redis": {"Storage"},
    "(root)": set(),
}

NAMESPACE = "Laharsub.Server"
ROOT = "(root)"
REDIS = "Redis"


def source_files(root):
    """(layer, display path, path) of every scanned file, in a stable order."""
    server = root / "src" / "Server"
    redis = root / "src" / "Server.Redis"
    skipped = {"bin", "obj"}
    for base, is_redis in ((server, False), (redis, True)):
        if not base.is_dir():
            continue
        for path in sorted(base.rglob("*.cs")):
            relative = path.relative_to(base)
            parts = relative.parts[:-1]
            if skipped & set(parts) or (not is_redis and parts[:1] == ("Host",)):
                continue
            if is_redis:
                yield REDIS, "Server.Redis/" + relative.as_posix(), path
            else:
                yield "/".join(parts) or ROOT, relative.as_posix(), path


# --- Comments and literals out -------------------------------------------------------------------------
# Blanked to spaces (newlines kept), so that a type named in a comment or a string is no arrow and a
# declaration still starts at column 0. Interpolation holes of $"..." and $@"..." stay as code (they
# are code); raw strings ("""...""", $$"""...""") are blanked whole, holes included.

STRING_START = re.compile(r'[$@]*"+')


def blank(text):
    return re.sub(r"[^\n]", " ", text)


def strip_comments_and_literals(text):
    out = []

    def code(i, in_hole):
        """Copies code from i; in a hole, stops at the `}` that closes it and returns its index."""
        depth = 0
        while i < len(text):
            c = text[i]
            if text.startswith("//", i) or (c == "#" and not in_hole and text[text.rfind("\n", 0, i) + 1:i].strip() == ""):
                end = text.find("\n", i)  # a comment, or a preprocessor line (#if, #pragma, #region ...)
                end = len(text) if end < 0 else end
                out.append(blank(text[i:end]))
                i = end
            elif text.startswith("/*", i):
                end = text.find("*/", i + 2)
                end = len(text) if end < 0 else end + 2
                out.append(blank(text[i:end]))
                i = end
            elif c in '$@"' and (start := STRING_START.match(text, i)):
                i = string(i, start.group())
            elif c == "'":
                end = i + 2 if text.startswith("\\", i + 1) else i + 1  # past an escape's backslash
                end = text.find("'", end + 1)
                end = len(text) if end < 0 else end + 1
                out.append(blank(text[i:end]))
                i = end
            else:
                if in_hole and c == "{":
                    depth += 1
                elif in_hole and c == "}":
                    if depth == 0:
                        return i
                    depth -= 1
                out.append(c)
                i += 1
        return i

    def string(i, start):
        prefix = start.rstrip('"')
        quotes = len(start) - len(prefix)
        verbatim, interpolated = "@" in prefix, "$" in prefix
        if not verbatim and quotes >= 3:  # raw string: ends at the same number of quotes
            end = text.find('"' * quotes, i + len(start))
            end = len(text) if end < 0 else end + quotes
            out.append(blank(text[i:end]))
            return end
        if quotes == 2 and not verbatim:  # "" or $"": empty
            out.append(blank(start))
            return i + len(start)
        out.append(blank(prefix + '"'))
        i += len(prefix) + 1
        while i < len(text):
            c = text[i]
            if not verbatim and c == "\\":
                out.append(blank(text[i:i + 2]))
                i += 2
            elif c == '"' and verbatim and text.startswith('""', i):
                out.append("  ")
                i += 2
            elif c == '"':
                out.append(" ")
                return i + 1
            elif interpolated and text.startswith("{{", i):
                out.append("  ")
                i += 2
            elif interpolated and c == "{":
                out.append(" ")
                i = code(i + 1, in_hole=True)
                out.append(" ")
                i += 1
            else:
                out.append(blank(c))
                i += 1
        return i

    code(0, in_hole=False)
    return "".join(out)


# --- Declarations, usings, references ------------------------------------------------------------------
# Namespaces are file-scoped (IDE0161, a build error in this repository), so a top-level type starts at
# column 0, after its attributes and modifiers; nested types are indented and not layers' names.
MODIFIERS = r"(?:(?:public|internal|private|protected|file|static|sealed|abstract|partial|readonly|ref|unsafe|new)\s+)*"
DECLARATION = re.compile(
    r"^(?:\[[^\n]*\]\s*)*" + MODIFIERS
    + r"(?:(?:class|struct|interface|enum|record(?:\s+(?:class|struct))?)\s+(\w+)"
    + r"|delegate\s+[\w<>\[\],.?\s]+?\s(\w+)\s*[<(])",
    re.MULTILINE)
# A using directive, not a using statement (`using var x = ...;`): a (dotted) name, maybe generic, then `;`.
USING = re.compile(r"^[ \t]*(?:global\s+)?using\s+(?:static\s+)?(?:\w+\s*=\s*)?(?:global::)?([\w.]+)\s*(?:<[^;\n]*>)?\s*;",
                   re.MULTILINE)
NAMESPACE_LINE = re.compile(r"^[ \t]*namespace\s+[\w.]+\s*;", re.MULTILINE)
TOKEN = re.compile(r"[A-Za-z_]\w*|\S")
# Words after which a type name may follow. After any other word (a type: `string Message`, `Topic
# topic`) a name is being declared, not referenced: a tuple element, a property, a parameter.
BEFORE_TYPES = set("""
    new is as return case in out ref params this typeof sizeof default static readonly const volatile
    public private protected internal sealed abstract virtual override extern unsafe fixed partial
    required scoped file async await using throw yield else not and or when class struct record
    interface enum delegate event operator implicit explicit stackalloc checked unchecked with do
    from join let select group by into orderby on equals where global
""".split())


def qualifiers(folders):
    """Dotted prefixes that name a folder: Laharsub.Server.Storage.InMemory, Storage.InMemory, InMemory."""
    names = {NAMESPACE: ROOT}
    last_segments = defaultdict(set)
    for folder in folders:
        if folder == ROOT:
            continue
        dotted = folder.replace("/", ".")
        names[NAMESPACE + "." + dotted] = folder
        names[dotted] = folder
        last_segments[dotted.rsplit(".", 1)[-1]].add(folder)
    for segment, owners in last_segments.items():
        if len(owners) == 1:
            names.setdefault(segment, owners.pop())
    return names


def namespace_folder(namespace, qualifier, declared):
    """The folder of a Laharsub.Server namespace (None for others): its longest prefix that names one,
    so that a `using static`'s or an alias's type drops off. One that names no folder keeps its own
    name (Laharsub.Server.Host -> "Host"), to be judged as a folder the rules do not know."""
    parts = namespace.split(".")
    if parts[:2] != NAMESPACE.split("."):
        return None
    for n in range(len(parts), 2, -1):
        if ".".join(parts[:n]) in qualifier:
            return qualifier[".".join(parts[:n])]
    return ROOT if len(parts) == 2 or parts[2] in declared[ROOT] else parts[2]


def is_word(token):
    return token[:1].isalpha() or token[:1] == "_"


def references(code, layer, declared, type_folder, qualifier):
    """(folder, type name) of each type of another folder that the code names."""
    tokens = TOKEN.findall(code)
    found = set()
    for k, name in enumerate(tokens):
        if not is_word(name):
            continue
        # The dotted chain before the name: `Wire.WireFormat` names Wire's type; `exception.Message` is
        # a member, whatever types are called Message.
        chain = []
        j = k - 1
        while j >= 1 and tokens[j] == "." and is_word(tokens[j - 1]):
            chain.insert(0, tokens[j - 1])
            j -= 2
        before = tokens[k - 1] if k >= 1 else ""
        after = "".join(tokens[k + 1:k + 3])
        # `Message = "..."` (an attribute's or initializer's property), `Message: x` (a named argument),
        # `string Message` (a declaration): names that share a type's name but are no reference to it.
        # (`Message =>` stays: a type pattern in a switch arm.)
        if (after[:1] in ("=", ":") and after not in ("==", "=>", "::")) or (
                is_word(before) and before not in BEFORE_TYPES):
            continue
        if chain:
            folder = qualifier.get(".".join(chain))
            if folder is None or name not in declared[folder]:
                continue
        elif k >= 1 and tokens[k - 1] == ".":  # x?.Name, (expr).Name, "..".Name
            continue
        else:
            folder = type_folder.get(name)
        if folder is not None and folder != layer:
            found.add((folder, name))
    return found


def analyse(root):
    files = []  # (layer, display path, code)
    declared = defaultdict(set)  # folder -> top-level type names
    for layer, shown, path in source_files(root):
        code = strip_comments_and_literals(path.read_text(encoding="utf-8-sig"))
        files.append((layer, shown, code))
        for match in DECLARATION.finditer(code):
            declared[layer].add(match.group(1) or match.group(2))

    owners = defaultdict(set)
    for folder, names in declared.items():
        for name in names:
            owners[name].add(folder)
    ambiguous = {name: folders for name, folders in owners.items() if len(folders) > 1}
    type_folder = {name: next(iter(folders)) for name, folders in owners.items() if len(folders) == 1}
    qualifier = qualifiers({layer for layer, _, _ in files} | set(ALLOWED))

    uses = defaultdict(lambda: defaultdict(set))  # (from, to) -> file -> what it uses
    for layer, shown, code in files:
        for match in USING.finditer(code):
            namespace = match.group(1)
            if namespace == NAMESPACE:
                continue  # the public types' namespace spans folders: their names are the arrows
            target = namespace_folder(namespace, qualifier, declared)
            if target is not None and target != layer:
                uses[(layer, target)][shown].add("using " + namespace)
        body = NAMESPACE_LINE.sub(lambda m: blank(m.group()), USING.sub(lambda m: blank(m.group()), code))
        for folder, name in references(body, layer, declared, type_folder, qualifier):
            uses[(layer, folder)][shown].add(name)
    return files, uses, ambiguous


# --- Judgement and report ------------------------------------------------------------------------------

def above(target, source):
    """True when the rules let `target` reach `source`, directly or through others: source is lower."""
    seen, todo = set(), [target]
    while todo:
        folder = todo.pop()
        allowed = ALLOWED.get(folder, set())
        if "*" in allowed or source in allowed:
            return True
        for nxt in allowed - seen:
            seen.add(nxt)
            todo.append(nxt)
    return False


def describe(file_uses):
    """One line per file: the types it names, then its usings."""
    lines = []
    for shown, what in sorted(file_uses.items()):
        types = sorted(w for w in what if not w.startswith("using "))
        usings = [f"`{w}`" for w in sorted(what) if w.startswith("using ")]
        lines.append(f"  - {shown} {'uses' if types else 'has'} {', '.join(types + usings)}")
    return lines


def violations(files, uses):
    """Each violation as its heading line and the lines of the files that cause it."""
    found = []
    layers = {layer for layer, _, _ in files}
    for folder in sorted(layers - set(ALLOWED)):
        shown = sorted(s for layer, s, _ in files if layer == folder)
        found.append([f"{folder} (unknown folder: add it to the rules): {', '.join(shown)}"])
    for (source, target), file_uses in sorted(uses.items()):
        if source not in ALLOWED:
            continue  # reported above as an unknown folder
        allowed = ALLOWED[source]
        if "*" in allowed or target in allowed:
            continue
        kind = "up" if above(target, source) else "not allowed"
        found.append([f"{source} → {target} ({kind}):"] + describe(file_uses))
    for (source, target), file_uses in sorted(uses.items()):
        if source < target and (target, source) in uses:
            found.append([f"{source} ⇄ {target} (both ways):"] + describe(file_uses) + describe(uses[(target, source)]))
    return found


def table(files, uses):
    present = {layer for layer, _, _ in files} | {folder for pair in uses for folder in pair}
    order = [f for f in ALLOWED if f in present] + sorted(present - set(ALLOWED))
    lines = ["| from \\ to | " + " | ".join(order) + " |", "|---" * (len(order) + 1) + "|"]
    for source in order:
        cells = [str(len(uses[(source, target)])) if (source, target) in uses else "" for target in order]
        lines.append(f"| {source} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[2],
                        help="the repository root (default: two levels above this script)")
    parser.add_argument("--markdown-only", action="store_true", help="print the table only, for the docs")
    args = parser.parse_args(argv)  # exits with 2 on a usage error
    sys.stdout.reconfigure(encoding="utf-8")  # the arrows (→, ⇄) whatever the locale; the tests read UTF-8
    if not (args.root / "src" / "Server").is_dir():
        print(f"layers.py: {args.root}/src/Server is not a folder: is --root the repository root?", file=sys.stderr)
        return 2

    files, uses, ambiguous = analyse(args.root)
    found = violations(files, uses)
    print(table(files, uses))
    if args.markdown_only:
        return 1 if found else 0  # the exit code still tells whether the arrows are right
    print()
    print("Cells: how many files of the row's folder reference the column's folder (a `using` or a type name).")
    for name, folders in sorted(ambiguous.items()):
        print(f"Ignored: {name} is declared at the top level in {', '.join(sorted(folders))}, so a bare {name} names no folder.")
    print()
    print(f"Violations: {len(found)}" if found else "Violations: none; every arrow is allowed and points one way.")
    for violation in found:
        print("- " + "\n".join(violation))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

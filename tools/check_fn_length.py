#!/usr/bin/env python3
"""Functions longer than a limit in keyscene's crates (issue 13, "Done when": no function in
`src/` over ~150 lines, exceptions listed with the reason in docs/api.md).

Usage: python3 tools/check_fn_length.py [--max N] [--all] [CRATE_SRC ...]
(default: --max 150, crates/keyscene/src crates/keyscene-cli/src, relative to the repository
root).

A function is a `fn NAME` item with a body; its length is the number of lines from the line of
`fn` to the line of its closing brace, both included (doc comments and attributes above it do
not count). Comments, string and character literals are blanked before braces are matched, so
a `{` inside them does not count. Test code does not count: files named `tests.rs` and
everything from a file's `#[cfg(test)] mod tests` on. Nested functions and closures count towards the function
they are in (and nested `fn` items are reported on their own as well).

Prints one line per offender, longest first: `LINES  path:line  name`. With `--all`, offenders
not listed in docs/api.md's exceptions are printed as well as listed ones (the default prints
every offender). Exit status 0 when every offender is listed in docs/api.md under
"Long functions" (as `path:name`), 1 otherwise, 2 on a usage error.
"""

import os
import re
import sys

FN = re.compile(r"\bfn\s+([A-Za-z_][A-Za-z0-9_]*)")


def blank(text):
    """`text` with comments and string/char literal contents replaced by spaces (newlines
    kept, so line numbers stay)."""
    out = []
    i, n = 0, len(text)
    keep = lambda s: re.sub(r"[^\n]", " ", s)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(keep(text[i:j]))
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(keep(text[i:j]))
            i = j
        elif c == "r" and re.match(r'r#*"', text[i:i + 260]) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'r(#*)"', text[i:])
            end = '"' + m.group(1)
            j = text.find(end, i + len(m.group(0)))
            j = n if j < 0 else j + len(end)
            out.append(keep(text[i:j]))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(keep(text[i:j + 1]))
            i = j + 1
        elif c == "'":
            # A char literal ('a', '\n', '\u{..}') or a lifetime ('a): only the former is blanked.
            m = re.match(r"'(\\.|\\u\{[0-9a-fA-F]+\}|[^\\'])'", text[i:])
            if m:
                out.append(keep(m.group(0)))
                i += len(m.group(0))
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def functions(code):
    """(name, first line, last line) of every function with a body in blanked `code`."""
    found = []
    for m in FN.finditer(code):
        # The body starts at the first `{` at bracket depth 0 after the signature; a `;`
        # first means a declaration without a body (trait methods, extern fns).
        depth, j = 0, m.end()
        while j < len(code):
            ch = code[j]
            if ch in "([<":
                depth += 1
            elif ch in ")]>" and depth > 0:
                depth -= 1
            elif ch == ";" and depth == 0:
                j = -1
                break
            elif ch == "{" and depth == 0:
                break
            j += 1
        if j < 0 or j >= len(code):
            continue
        # `->` and `=>` are not closing angle brackets; they only matter inside the signature
        # (`-> Result<A, B>`), where the `>` of `->` would unbalance the count: handled by
        # not letting depth go below 0 above.
        level, k = 0, j
        while k < len(code):
            if code[k] == "{":
                level += 1
            elif code[k] == "}":
                level -= 1
                if level == 0:
                    break
            k += 1
        first = code.count("\n", 0, m.start()) + 1
        last = code.count("\n", 0, k) + 1
        found.append((m.group(1), first, last))
    return found


def listed_exceptions(repo):
    """`path:name` entries of docs/api.md's "Long functions" section."""
    path = os.path.join(repo, "docs", "api.md")
    try:
        text = open(path, encoding="utf-8").read()
    except OSError:
        return set()
    m = re.search(r"^## Long functions\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    if not m:
        return set()
    return set(re.findall(r"`([\w./-]+\.rs:\w+)`", m.group(1)))


def main(argv):
    limit = 150
    args = list(argv)
    if "--max" in args:
        i = args.index("--max")
        try:
            limit = int(args[i + 1])
        except (IndexError, ValueError):
            print(__doc__.strip().split("\n")[3], file=sys.stderr)
            return 2
        del args[i : i + 2]
    args = [a for a in args if a != "--all"]
    if any(a.startswith("--") for a in args):
        print(__doc__.strip().split("\n")[3], file=sys.stderr)
        return 2
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    roots = args or [os.path.join(repo, "crates", c, "src") for c in ("keyscene", "keyscene-cli")]
    long = []
    for root in roots:
        for dirpath, _, names in os.walk(root):
            for name in sorted(names):
                if not name.endswith(".rs") or name == "tests.rs":
                    continue
                path = os.path.join(dirpath, name)
                text = open(path, encoding="utf-8").read()
                # The unit-test module (`#[cfg(test)]` then `mod tests`); a `#[cfg(test)]` on
                # one item elsewhere (a test-only helper) does not end the measured code.
                cut = re.search(r"^#\[cfg\(test\)\]\s*\n\s*mod tests\b", text, re.M)
                if cut:
                    text = text[: cut.start()]
                for fn, first, last in functions(blank(text)):
                    lines = last - first + 1
                    if lines > limit:
                        rel = os.path.relpath(path, repo)
                        long.append((lines, rel, first, fn))
    allowed = listed_exceptions(repo)
    unlisted = 0
    for lines, rel, first, fn in sorted(long, key=lambda x: (-x[0], x[1], x[2])):
        ok = f"{rel}:{fn}" in allowed
        unlisted += not ok
        print(f"{lines:5}  {rel}:{first}  {fn}{'' if ok else '  (not listed in docs/api.md)'}")
    print(f"{len(long)} function(s) over {limit} lines, {unlisted} not listed in docs/api.md")
    return 1 if unlisted else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

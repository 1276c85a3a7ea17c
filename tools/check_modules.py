#!/usr/bin/env python3
"""Module cycles in keyscene's crates, read from the `use` lines and inline paths.

Usage: python3 tools/check_modules.py [--graph] [CRATE_SRC ...]
(default: crates/keyscene/src crates/keyscene-cli/src, relative to the repository root).

Issue 13 §2: each module reads in one direction. The rule checked here:

* A module is a source file (`a/b.rs` or `a/b/mod.rs` is `a::b`; `lib.rs`/`main.rs` is the
  crate root). Files named `tests.rs` and everything after a `#[cfg(test)]` line are test code
  and do not count.
* A reference is `crate::x::y`, `super::x` (also `super::super::`) or `self::x` in a `use`
  line or an inline path; it names the longest module prefix of the path that is a file.
* A parent and its descendants may name each other (a `mod.rs` declares and re-exports its
  children; a child uses its parent's shared types) — that is the tree, not a cycle.
* Any other reference A -> B is lifted to the two children of their common ancestor that hold
  A and B: `formats::fbx::import -> formats::fbx::animation` is an edge between the siblings
  `import` and `animation` under `formats::fbx`; `scene -> anim::Track` is `scene -> anim` at
  the root. A cycle among the siblings of any module is reported, with one reference per edge
  (file and line) so it can be found.

Exit status 0 when there is no cycle, 1 when there is (the cycles are printed), 2 on a usage
error. `--graph` also prints every lifted edge.
"""

import os
import re
import sys

PATH = re.compile(r"\b(crate|super|self)((?:::[A-Za-z_][A-Za-z0-9_]*)+)")
# `use super::{a, b::C}` / `use crate::x::{y, z}`: the braces name several paths.
USE_GROUP = re.compile(r"\b(crate|super|self)((?:::[A-Za-z_][A-Za-z0-9_]*)*)::\{([^;]*)\}", re.S)


def module_of(root, path):
    rel = os.path.relpath(path, root)[:-3].split(os.sep)
    if rel[-1] == "mod" or (len(rel) == 1 and rel[0] in ("lib", "main")):
        rel = rel[:-1]
    return tuple(rel)


def code_of(text):
    """The source without test code and comments (string contents are left alone: the
    paths we look for do not occur in keyscene's strings)."""
    cut = re.search(r"^\s*#\[cfg\(test\)\]", text, re.M)
    if cut:
        text = text[: cut.start()]
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return "\n".join(line.split("//", 1)[0] for line in text.split("\n"))


def references(module, code):
    """(line, target path as a tuple of names) for every crate-relative path in `code`."""

    def absolute(head, rest):
        parts = [p for p in rest.split("::") if p]
        if head == "crate":
            return tuple(parts)
        base = list(module)
        while head == "super" or (parts and parts[0] == "super"):
            if head == "super":
                head = None
            else:
                parts = parts[1:]
            if base:
                base.pop()
        return tuple(base + parts)

    out = []
    for m in USE_GROUP.finditer(code):
        line = code.count("\n", 0, m.start()) + 1
        prefix = absolute(m.group(1), m.group(2))
        for item in re.split(r"[,{}\s]+", m.group(3)):
            item = item.split(" as ")[0].strip()
            if item and item not in ("self", "*"):
                out.append((line, prefix + tuple(p for p in item.split("::") if p)))
            elif item:
                out.append((line, prefix))
    for m in PATH.finditer(code):
        line = code.count("\n", 0, m.start()) + 1
        out.append((line, absolute(m.group(1), m.group(2))))
    return out


def resolve(modules, target):
    for n in range(len(target), -1, -1):
        if target[:n] in modules:
            return target[:n]
    return ()


def cycles(edges):
    """Strongly connected components with more than one member (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    nodes = sorted({a for a, _ in edges} | {b for _, b in edges})
    succ = {n: sorted({b for a, b in edges if a == n}) for n in nodes}

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in succ[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for n in nodes:
        if n not in index:
            visit(n)
    return out


def check(src):
    files = {}
    for dirpath, _, names in os.walk(src):
        for name in names:
            if name.endswith(".rs") and name != "tests.rs":
                path = os.path.join(dirpath, name)
                files[module_of(src, path)] = path
    modules = set(files)
    lifted = {}  # (parent, child_a, child_b) -> (file, line)
    for module, path in sorted(files.items()):
        with open(path, encoding="utf-8") as f:
            code = code_of(f.read())
        for line, target in references(module, code):
            dep = resolve(modules, target)
            n = 0
            while n < min(len(module), len(dep)) and module[n] == dep[n]:
                n += 1
            if n == len(module) or n == len(dep):
                continue  # ancestor or descendant: the module tree itself
            key = (module[:n], module[n], dep[n])
            lifted.setdefault(key, (os.path.relpath(path), line))
    found = []
    for parent in sorted({k[0] for k in lifted}):
        edges = {(a, b) for p, a, b in lifted if p == parent}
        for comp in cycles(edges):
            found.append((parent, comp))
    return lifted, found


def main(argv):
    graph = "--graph" in argv
    roots = [a for a in argv if not a.startswith("--")]
    if any(a.startswith("--") and a != "--graph" for a in argv):
        print(__doc__.strip().split("\n")[2], file=sys.stderr)
        return 2
    if not roots:
        here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        roots = [os.path.join(here, "crates", c, "src") for c in ("keyscene", "keyscene-cli")]
    bad = 0
    for src in roots:
        lifted, found = check(src)
        if graph:
            for (parent, a, b), (path, line) in sorted(lifted.items()):
                where = "::".join(parent) or "crate"
                print(f"{src}: {where}: {a} -> {b}  ({path}:{line})")
        for parent, comp in found:
            bad += 1
            where = "::".join(parent) or "the crate root"
            print(f"{src}: cycle under {where}: {' <-> '.join(comp)}")
            for (p, a, b), (path, line) in sorted(lifted.items()):
                if p == parent and a in comp and b in comp:
                    print(f"    {a} -> {b}: {path}:{line}")
    if bad == 0:
        print(f"no module cycles in {len(roots)} crate(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

#!/usr/bin/env python3
"""GLB size at the same exactness as FBX2glTF (issue 36 §4), on the FBX benchmark files.

For each file, FBX2glTF's GLB (`--binary`) and keyscene's — at the default options, and with
FBX2glTF's content (`visible_only`: FBX2glTF never writes a hidden mesh) at each tolerance of
`TOLERANCES` — are measured against the source as keyscene's reader evaluates it (checked
against ufbx on the corpus): every node origin at every quarter frame of every animation, in
glTF's +Y-up metres (`Scene.pose(time=…, target_axes="y", target_units=1)` of the source against
`Scene.sample(times=…)` of the GLB, nodes matched by name), the largest coordinate error
divided by the diagonal of the node origins' extent. So a tool's error covers whole frames and
the instants between them. keyscene "at the same exactness" is its output at the loosest tried
tolerance whose error is at most FBX2glTF's.

    python3 tools/gltf_size_exactness.py [FILE.fbx ...]

Prints a Markdown table (docs/gltf.md, "Size and exactness"). Needs the keyscene Python package
(`pip install ./crates/keyscene-py`) and numpy, and FBX2glTF ($FBX2GLTF, default the npm
fbx2gltf 0.9.7 binary that ../shared/oracles/install_oracles.sh installs). Files default to the
FBX benchmark files (the stems of crates/keyscene/benches/common/fbx_files.rs, as
tools/compare_tools.sh takes them) in $KEYSCENE_CORPUS. The Python test
`crates/keyscene-py/tests/test_gltf_size.py` asserts the table's claim.
"""

import os
import re
import subprocess
import sys
import tempfile

import keyscene
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
FBX2GLTF = os.environ.get(
    "FBX2GLTF", "/opt/keyscene-oracles/node/node_modules/fbx2gltf/bin/Linux/FBX2glTF"
)
CORPUS = os.environ.get("KEYSCENE_CORPUS", os.path.join(HERE, "..", "..", "shared", "corpus"))
TOLERANCES = [1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 1e-1]
# Errors at or below this are float rounding, not a difference in exactness: glTF stores f32
# (24 bits: 6e-8 of a coordinate), and the node origins compose several such values.
FLOAT_NOISE = 1e-6


def benchmark_files(corpus=CORPUS):
    """The FBX benchmark files: every `.fbx` under `corpus/fbx/DIR` whose name starts with a
    `DIR/PREFIX` stem of benches/common/fbx_files.rs (sorted)."""
    bench = os.path.join(HERE, "..", "crates", "keyscene", "benches", "common", "fbx_files.rs")
    text = open(bench, encoding="utf-8").read()
    block = text[text.index("BENCHMARK_STEMS"):]
    block = block[: block.index("];")]
    out = []
    for stem in re.findall(r'"([^"]+)"', block):
        d, prefix = stem.rsplit("/", 1)
        folder = os.path.join(corpus, "fbx", d)
        if os.path.isdir(folder):
            out += [os.path.join(folder, n) for n in os.listdir(folder)
                    if n.startswith(prefix) and n.lower().endswith(".fbx")]
    return sorted(out)


def source_origins(src):
    """Per animation (name, seconds, origins [time, node, 3]) and the origins' extent diagonal;
    a scene without animation counts its rest pose as one instant."""
    out, points = [], []
    for ai, a in enumerate(src.animations):
        f0, f1 = a.frame_range
        secs = np.arange(f0, f1 + 1e-9, 0.25) / a.fps
        w = np.array(
            [src.pose(time=t, animation=ai, target_axes="y", target_units=1.0).world for t in secs]
        )
        out.append((a.name, secs, w[:, :, :3, 3]))
        points.append(w[:, :, :3, 3].reshape(-1, 3))
    if not out:
        w = src.pose(time=0.0, target_axes="y", target_units=1.0).world
        out.append((None, np.zeros(1), w[None, :, :3, 3]))
        points.append(w[:, :3, 3])
    p = np.concatenate(points) if points else np.zeros((1, 3))
    return out, float(np.linalg.norm(p.max(0) - p.min(0))) or 1.0


def error(src, anims, size, glb):
    """The largest node-origin error of `glb` over every animation at quarter frames ÷ size
    (NaN when the GLB lacks an animation the source has, or every node)."""
    o = keyscene.load(glb)
    names = [n.name for n in src.nodes]
    on = {n.name: k for k, n in enumerate(o.nodes)}
    if not any(nm in on for nm in names):
        return float("nan")
    worst = 0.0
    for name, secs, s in anims:
        match = [k for k, b in enumerate(o.animations) if b.name == name]
        if match:
            got = o.sample(times=secs, animation=match[0])
        elif name is None or not o.animations:
            # No animation, or nothing moved away from the rest pose: the rest pose throughout.
            got = np.repeat(o.pose(time=0.0).world[None], len(secs), axis=0)
        else:
            return float("nan")
        for k, nm in enumerate(names):
            if nm in on:
                worst = max(worst, float(np.abs(s[:, k] - got[:, on[nm], :3, 3]).max()))
    return worst / size


def left_out(src, glb):
    """The names of `src`'s nodes that `glb` has no node of (FBX2glTF leaves out MotionBuilder's
    Producer cameras, the FBX SDK's global camera settings, and every node of a file it cannot
    read): its GLB then holds less, and sizes are not compared."""
    on = {n.name for n in keyscene.load(glb).nodes}
    return [n.name for n in src.nodes if n.name not in on]


def measure(path, tmp):
    """One row: (FBX2glTF bytes, its error, keyscene default bytes, its error, and per
    tolerance of TOLERANCES (tolerance, bytes, error) with `visible_only`, and the source
    nodes FBX2glTF's GLB lacks ([`left_out`]))."""
    stem = os.path.splitext(os.path.basename(path))[0]
    src = keyscene.load(path)
    anims, size = source_origins(src)
    theirs = os.path.join(tmp, stem + "-fbx2gltf")
    subprocess.run([FBX2GLTF, "--binary", "--input", path, "--output", theirs],
                   check=True, capture_output=True)
    theirs += ".glb"
    default = os.path.join(tmp, stem + ".glb")
    keyscene.convert(path, default, force=True)
    rows = []
    for t in TOLERANCES:
        ours = os.path.join(tmp, f"{stem}-{t}.glb")
        keyscene.convert(path, ours, force=True, tolerance=t, visible_only=True)
        rows.append((t, os.path.getsize(ours), error(src, anims, size, ours)))
    return (os.path.getsize(theirs), error(src, anims, size, theirs),
            os.path.getsize(default), error(src, anims, size, default), rows,
            left_out(src, theirs))


def same_exactness(rows, theirs_error):
    """The loosest (tolerance, bytes, error) whose error is at most `theirs_error` (or within
    FLOAT_NOISE), or None."""
    ok = [r for r in rows if r[2] <= max(theirs_error, FLOAT_NOISE)]
    return ok[-1] if ok else None


def main():
    files = sys.argv[1:] or benchmark_files()
    tmp = tempfile.mkdtemp()
    print("| file | FBX2glTF bytes | its error | keyscene (default) bytes | its error "
          "| keyscene `visible_only` at the same exactness: tolerance, bytes, error |")
    print("|---|---|---|---|---|---|")
    for f in files:
        b_f, e_f, b_d, e_d, rows, missing = measure(f, tmp)
        same = same_exactness(rows, e_f)
        cell = f"{same[0]:g}: {same[1]:,} ({same[2]:.1e})" if same else "none"
        if missing:
            cell = f"not compared: FBX2glTF leaves out {len(missing)} of the source's nodes"
        print(f"| {os.path.relpath(f, CORPUS)} | {b_f:,} | {e_f:.1e} | {b_d:,} | {e_d:.1e} "
              f"| {cell} |")


if __name__ == "__main__":
    main()

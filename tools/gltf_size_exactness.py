#!/usr/bin/env python3
"""GLB size at the same exactness as FBX2glTF (issue 36 §4), on the FBX benchmark files.

For each file: FBX2glTF's GLB (`--binary`) and keyscene's at the default tolerance and at
looser `--tolerance` values; each GLB's error is measured against the source as keyscene's
reader evaluates it (checked against ufbx on the corpus): every node origin at every quarter
frame of every animation, in glTF's +Y-up metres (`Scene.pose(time=…, target_axes="y",
target_units=1)` of the source against `Scene.sample(times=…)` of the GLB, nodes matched by
name), the largest coordinate error divided by the diagonal of the node origins' extent. A
tool's error is the largest over its animations at quarter frames (so between frames too).
Prints, per file, FBX2glTF's bytes and error, keyscene's at the default, and keyscene's at the
loosest tried tolerance whose error is at most FBX2glTF's ("same exactness").

    python3 tools/gltf_size_exactness.py KEYSCENE_BINARY [FILE.fbx ...]

Needs the keyscene Python package and numpy in the running interpreter, and FBX2glTF
($FBX2GLTF, default the npm fbx2gltf 0.9.7 binary that ../shared/oracles/install_oracles.sh
installs). Files default to the FBX benchmark files with animation in $KEYSCENE_CORPUS.
"""

import os
import subprocess
import sys
import tempfile

import keyscene
import numpy as np

FBX2GLTF = os.environ.get(
    "FBX2GLTF", "/opt/keyscene-oracles/node/node_modules/fbx2gltf/bin/Linux/FBX2glTF"
)
CORPUS = os.environ.get("KEYSCENE_CORPUS", os.path.join(os.path.dirname(__file__), "../../shared/corpus"))
DEFAULT_FILES = [
    "fbx/fbx-conv/knight.fbx",
    "fbx/ufbx/maya_kenney_character_7700_binary.fbx",
    "fbx/ufbx/maya_slime_7500_ascii.fbx",
    "fbx/ufbx/blender_293_barbarian_7400_binary.fbx",
    "fbx/ufbx/maya_human_ik_6100_binary.fbx",
]
TOLERANCES = [1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 1e-1]


def source_origins(src):
    """Per animation: (seconds, node names, origins [time, node, 3]); and the extent's diagonal."""
    out, points = [], []
    for ai, a in enumerate(src.animations):
        f0, f1 = a.frame_range
        secs = np.arange(f0, f1 + 1e-9, 0.25) / a.fps
        w = np.array(
            [src.pose(time=t, animation=ai, target_axes="y", target_units=1.0).world for t in secs]
        )
        out.append((a.name, secs, w[:, :, :3, 3]))
        points.append(w[:, :, :3, 3].reshape(-1, 3))
    p = np.concatenate(points) if points else np.zeros((1, 3))
    return out, float(np.linalg.norm(p.max(0) - p.min(0))) or 1.0


def error(src, anims, size, glb):
    """The largest node-origin error of `glb` over every animation at quarter frames ÷ size."""
    o = keyscene.load(glb)
    names = [n.name for n in src.nodes]
    on = {n.name: k for k, n in enumerate(o.nodes)}
    worst = 0.0
    for name, secs, s in anims:
        match = [k for k, b in enumerate(o.animations) if b.name == name]
        if not match:
            return float("nan")
        got = o.sample(times=secs, animation=match[0])
        for k, nm in enumerate(names):
            if nm in on:
                worst = max(worst, float(np.abs(s[:, k] - got[:, on[nm], :3, 3]).max()))
    return worst / size


def main():
    ks = sys.argv[1]
    files = sys.argv[2:] or [os.path.join(CORPUS, f) for f in DEFAULT_FILES]
    tmp = tempfile.mkdtemp()
    print("| file | FBX2glTF bytes | its error | keyscene (1e-4) bytes | its error "
          "| keyscene at the same exactness: --tolerance, bytes, error |")
    print("|---|---|---|---|---|---|")
    for f in files:
        stem = os.path.splitext(os.path.basename(f))[0]
        src = keyscene.load(f)
        anims, size = source_origins(src)
        theirs = os.path.join(tmp, stem + "-fbx2gltf")
        subprocess.run([FBX2GLTF, "--binary", "--input", f, "--output", theirs],
                       check=True, capture_output=True)
        theirs += ".glb"
        e_theirs = error(src, anims, size, theirs) if anims else 0.0
        rows = []
        for t in TOLERANCES:
            ours = os.path.join(tmp, f"{stem}-{t}.glb")
            subprocess.run([ks, "convert", f, ours, "--quiet", "--force", "--tolerance", str(t)],
                           check=True, capture_output=True)
            rows.append((t, os.path.getsize(ours), error(src, anims, size, ours) if anims else 0.0))
        same = [r for r in rows if r[2] <= e_theirs] or rows[:1]
        t, b, e = same[-1]
        print(f"| {os.path.relpath(f, CORPUS)} | {os.path.getsize(theirs):,} | {e_theirs:.1e} "
              f"| {rows[0][1]:,} | {rows[0][2]:.1e} | {t:g}: {b:,} ({e:.1e}) |")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Imports keyscene's USD files into Blender and compares Blender's evaluated world-space
vertex positions with keyscene's own posed vertices (issue #34, "Proof": Blender imports a
sample of the written files with the same vertex positions at a frame; not run in CI).

For each source file named on the command line (default: every corpus 3DS file and every FBX
file of shared/corpus/fbx/references.tsv), the script converts it with
`keyscene convert FILE OUT.usda`, imports the layer into an empty Blender scene with Blender's
own USD importer (`bpy.ops.wm.usd_import`, defaults except `apply_unit_conversion_scale=False`,
so that Blender's units are the file's), sets the scene to the first frame, the frame past the
middle and the last frame of the stage, reads every mesh object's evaluated mesh (depsgraph:
armature modifiers, mesh caches) in world space, and checks each of keyscene's sample vertices
(`keyscene sample --frame F`: `world_sample_vertices` of every mesh node not hidden at that
frame: Blender's importer leaves invisible prims out) against the nearest
evaluated vertex (Blender splits vertices as it likes, so vertices are matched by position).
A file passes when the worst distance is within 1e-4 of the scene size (the largest diagonal
of keyscene's posed mesh bounding boxes at that frame).

Blender conventions met: a `upAxis = "Y"` stage is turned to Blender's +Z up,
(x, y, z) -> (x, -z, y), which the script undoes; Blender frames are the stage's time codes
(the scene's rate is set to `timeCodesPerSecond`). Blender's USD importer takes `bindTransforms`
as the bones' rest matrices (no scale) and ignores `geomBindTransform` and
`!resetXformStack!`, and reads blend-shape weights from time samples only; the writer's rigs
are built so that this reading agrees with UsdSkel's (docs/usd.md, "Skinned meshes as UsdSkel
rigs"). Blender clamps shape key values to their slider range (0..1 by default): the script
widens every slider to -10..10 after the import, so weights outside 0..1 apply as stored.

Run (with the PyPI `bpy` module, Python 3.11; `pip install bpy==5.0.1`):
  cargo build --release -p keyscene-cli
  /opt/keyscene-oracles/venv-bpy/bin/python tools/blender_usd_check.py \\
      [--keyscene target/release/keyscene] [--corpus ../shared/corpus] [FILE...]
Exit status 0 when every file is within tolerance, 1 otherwise.
"""
import argparse
import csv
import json
import math
import os
import re
import subprocess
import sys
import tempfile

import bpy

TOLERANCE = 1e-4


def sources(corpus):
    """Every corpus 3DS/PRJ file, then every FBX file references.tsv names (each once)."""
    out = []
    for root, _, files in os.walk(os.path.join(corpus, "3ds")):
        if os.path.basename(root) == "reference":
            continue
        out += sorted(os.path.join(root, f) for f in files if f.lower().endswith((".3ds", ".prj")))
    seen = set()
    with open(os.path.join(corpus, "fbx", "references.tsv"), encoding="utf-8") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            if row["fbx"] not in seen:
                seen.add(row["fbx"])
                out.append(os.path.join(corpus, "fbx", row["fbx"]))
    return out


def blender_points(usd, frame, up):
    """World-space vertices of every evaluated mesh object at `frame`, in the stage's axes."""
    scene = bpy.context.scene
    scene.frame_set(int(math.floor(frame)), subframe=frame - math.floor(frame))
    depsgraph = bpy.context.evaluated_depsgraph_get()
    points = []
    for obj in scene.objects:
        if obj.type != "MESH":
            continue
        ev = obj.evaluated_get(depsgraph)
        mesh = ev.to_mesh()
        w = ev.matrix_world
        for v in mesh.vertices:
            p = w @ v.co
            points.append((p[0], p[2], -p[1]) if up == "Y" else (p[0], p[1], p[2]))
        ev.to_mesh_clear()
    return points


def check(keyscene, src, work):
    """The worst distance relative to the scene size over the three frames, or an error."""
    usd = os.path.join(work, "out.usda")
    r = subprocess.run([keyscene, "convert", src, usd, "--force", "--quiet"], capture_output=True, text=True)
    if r.returncode != 0:
        return None, "does not convert: " + r.stderr.strip()[-200:]
    head = open(usd, encoding="utf-8", errors="replace").read(4096)
    up = (re.search(r'upAxis = "(.)"', head) or [None, "Y"])[1]
    fps = float((re.search(r"timeCodesPerSecond = ([0-9.e+-]+)", head) or [None, 24])[1])
    start = float((re.search(r"startTimeCode = ([0-9.e+-]+)", head) or [None, 0])[1])
    end = float((re.search(r"endTimeCode = ([0-9.e+-]+)", head) or [None, start])[1])
    bpy.ops.wm.read_factory_settings(use_empty=True)
    bpy.context.scene.render.fps = max(1, round(fps))
    bpy.context.scene.render.fps_base = bpy.context.scene.render.fps / fps if fps > 0 else 1.0
    bpy.ops.wm.usd_import(filepath=usd, apply_unit_conversion_scale=False)
    # Blender clamps a shape key's value to its slider range (0..1 unless widened), which
    # cuts blend-shape weights outside it (a negative weight stored in the file): widened.
    for obj in bpy.context.scene.objects:
        keys = obj.data.shape_keys if obj.type == "MESH" else None
        for kb in keys.key_blocks if keys else []:
            kb.slider_min, kb.slider_max = -10.0, 10.0
    frames = sorted({start, math.floor((start + end) / 2) + 1 if end > start else start, end})
    worst = 0.0
    for f in frames:
        s = subprocess.run([keyscene, "sample", src, "--frame", repr(f)], capture_output=True, text=True)
        nodes = json.loads(s.stdout)["samples"][0]["nodes"]
        pts = blender_points(usd, f, up)
        size = 0.0
        for n in nodes:
            m = n.get("mesh")
            if m and m.get("world_bbox_min") is not None:
                size = max(size, math.dist(m["world_bbox_min"], m["world_bbox_max"]))
        size = max(size, 1e-12)
        for n in nodes:
            # A hidden mesh is written `invisible`, and Blender's importer leaves invisible
            # prims out by default (`import_visible_only`).
            if n.get("hidden"):
                continue
            for sv in (n.get("mesh") or {}).get("world_sample_vertices") or []:
                if not all(math.isfinite(x) for x in sv["position"]):
                    continue
                d = min((math.dist(sv["position"], p) for p in pts), default=math.inf)
                worst = max(worst, d / size)
    return worst, None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--keyscene", default="target/release/keyscene")
    ap.add_argument("--corpus", default=os.environ.get("KEYSCENE_CORPUS", "../shared/corpus"))
    ap.add_argument("files", nargs="*")
    args = ap.parse_args(sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else sys.argv[1:])
    files = args.files or sources(args.corpus)
    bad = checked = 0
    with tempfile.TemporaryDirectory() as work:
        for src in files:
            worst, err = check(args.keyscene, src, work)
            name = os.path.relpath(src, args.corpus) if src.startswith(args.corpus) else src
            if err:
                print(f"{name}\tskipped: {err}")
                continue
            ok = worst <= TOLERANCE
            bad += not ok
            checked += 1
            print(f"{name}\t{'ok' if ok else 'FAIL'}\tworst {worst:.3g} of the scene size", flush=True)
    print(f"{checked - bad} of {checked} converted files within {TOLERANCE} of the scene size ({len(files) - checked} skipped)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Imports keyscene's GLB files into Blender and compares Blender's evaluated world-space
vertex positions with the lib3ds references (issue #5, section 3 item 4; not run in CI).

For each corpus 3DS file with a reference (shared/corpus/3ds/reference/*.lib3ds.json), or the
ones named on the command line (substring of the reference name), the script converts it with
`keyscene convert FILE OUT.glb`, imports the GLB into an empty Blender scene with Blender's own
glTF importer (`bpy.ops.import_scene.gltf`, default options), sets the scene to each reference
frame and reads every mesh object's evaluated mesh (depsgraph: modifiers, armatures and shape
keys applied) in world space. Per reference mesh node it reports the worst of:
  * bbox: the evaluated world bounding box against lib3ds's;
  * vertex: each lib3ds sample vertex against the nearest evaluated vertex (Blender splits and
    merges glTF vertices as it likes, so vertices are matched by position, not index);
and prints one table row per file with the error relative to the tolerance
1e-4 x max(1, scene bbox diagonal at that frame).

FBX: the rows of shared/corpus/fbx/references.tsv that pose a file at a time in its own space
with no extra options (one row per file; the same sample as the three.js test) are converted
and imported the same way, posed at the row's time (Blender frame = time x 30), and every
vertex a ufbx reference .obj group's faces use must have an evaluated vertex of the matching
object within the row's tolerance (per component, as ufbx compares); --all-rows takes every
such row, not one per file. Positions are taken back to the source's axes and units as
C^-1 * ROOT^-1 * p: ROOT is keyscene's axis (and unit) root node, an empty in Blender, and C
Blender's +Y up -> +Z up import conversion (Blender re-expresses every node transform in its
axes, so the empty's Blender matrix is C * ROOT * C^-1; no root: C^-1 alone). The row's stack
is played: the action of that name, which the importer keeps as a muted NLA strip unless it
is the GLB's first animation (see play_stack).

Blender-side limits the options below lift (docs/gltf.md, "Proof in clients"):
  --import-option bone_heuristic=TEMPERANCE: with the importer's default bone heuristic
    (BLENDER) the rest matrices Blender rebuilds from bone head/tail/roll differ from the
    inverse bind matrices by up to ~1e-4 rad, enough to move skinned vertices 1-2 x 0.001;
  --widen-shape-keys: Blender clamps shape key values to their slider range, which the
    importer leaves at 0..1 unless the mesh's default weights need more, so animated morph
    weights outside it (in-between shares, extrapolated channels) are cut.

Blender conventions met: its importer turns glTF's +Y up into Blender's +Z up,
(x, y, z) -> (x, -z, y), which is exactly the inverse of keyscene's axis root node, so Blender's
world coordinates are the 3DS coordinates and are compared as they are. Blender counts time in
frames of the scene's rate (default 24 fps) and the importer converts glTF seconds with it; the
script sets the scene to 30 fps before importing so that Blender frame F is 3DS frame F
(the GLB's times are frame / 30 s).

Run (with the PyPI `bpy` module, Python 3.11):
  cargo build --release -p keyscene-cli
  /opt/keyscene-oracles/venv-bpy/bin/python tools/blender_check.py \\
      [--keyscene target/release/keyscene] [--corpus ../shared/corpus] [--keep DIR] \\
      [--all-rows] [--widen-shape-keys] [--import-option KEY=VALUE]... [NAME...]
Exit status 0 when every file is within tolerance, 1 otherwise.
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile

import bpy
from mathutils import Vector

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--keyscene", default=os.path.join(ROOT, "target/release/keyscene"))
    ap.add_argument("--corpus", default=os.environ.get(
        "KEYSCENE_CORPUS", os.path.join(ROOT, "../shared/corpus")))
    ap.add_argument("--keep", default=None, help="write the GLB files here (default: a temporary folder)")
    ap.add_argument("--fps", type=float, default=30.0,
                    help="scene rate before import (30: Blender frame = 3DS frame)")
    ap.add_argument("--all-rows", action="store_true",
                    help="every FBX time row of references.tsv, not one per file")
    ap.add_argument("--import-option", action="append", default=[], metavar="KEY=VALUE",
                    help="extra bpy.ops.import_scene.gltf option, e.g. bone_heuristic=FORTUNE")
    ap.add_argument("--widen-shape-keys", action="store_true",
                    help="set every shape key's slider range to Blender's widest, -10..10, after "
                         "import (Blender clamps shape key values to it; the importer leaves "
                         "0..1 unless the mesh's default weights need more)")
    ap.add_argument("names", nargs="*")
    return ap.parse_args()


def world_vertices(obj, dg):
    """Evaluated mesh vertices of `obj` in world space."""
    oe = obj.evaluated_get(dg)
    me = oe.to_mesh()
    mw = oe.matrix_world
    pts = [tuple(mw @ v.co) for v in me.vertices]
    oe.to_mesh_clear()
    return pts


def identity(obj):
    """The source name keyscene keeps for a node: extras `keyscene.name` (Blender stores glTF
    extras as custom properties) or the glTF node name."""
    ks = obj.get("keyscene")
    if ks is not None and "name" in ks:
        return ks["name"], ks.get("instance", "")
    return obj.name, ""


def dist(a, b):
    return math.sqrt(sum((a[k] - b[k]) ** 2 for k in range(3)))


IMPORT_OPTIONS = {}
WIDEN_SHAPE_KEYS = []


def after_import():
    """With --widen-shape-keys: shape key slider ranges -10..10 (Blender's limits)."""
    if WIDEN_SHAPE_KEYS:
        for key in bpy.data.shape_keys:
            for kb in key.key_blocks:
                kb.slider_min, kb.slider_max = -10.0, 10.0


def import_options(pairs):
    """`KEY=VALUE` strings as importer keyword arguments (True/False and numbers parsed)."""
    out = {}
    for kv in pairs:
        k, v = kv.split("=", 1)
        out[k] = {"True": True, "False": False}.get(v, v)
        if isinstance(out[k], str):
            try:
                out[k] = float(v)
            except ValueError:
                pass
    return out


def play_stack(stack):
    """Makes every animated datablock play the glTF animation of the FBX stack `stack` (the
    first action whose name contains it, as the references pick stacks). Blender's importer
    makes the GLB's first animation the active action and keeps the others as muted NLA
    strips; without this a file whose first animation is not the row's stack (the 6100
    sausage: "Default Take" before "Base") is posed by the wrong animation. An animation
    keyscene left out because nothing in it moves (docs/gltf.md, "Animation") has no action;
    its pose at any time is the glTF rest pose, the node transforms, which is the first
    animation's first frame. Blender has no way to show node transforms of an armature once an
    action has played (with no action its bones show the bind pose the importer guessed from
    the inverse bind matrices), so the script then leaves the first animation active and
    returns the frame to pose at: its first. Returns None when the stack is in the GLB."""
    if not stack:
        return None
    ids = [i for i in list(bpy.data.objects) + list(bpy.data.shape_keys) if i.animation_data]
    found = False
    for idb in ids:
        ad = idb.animation_data
        strips = [s for t in ad.nla_tracks for s in t.strips]
        strip = (next((s for s in strips if s.action and s.action.name == stack), None)
                 or next((s for s in strips if s.action and stack in s.action.name), None))
        if strip is not None:
            ad.action = strip.action
            ad.action_slot = strip.action_slot
            found = True
    if found or not ids:
        return None
    return min(i.animation_data.action.frame_range[0] for i in ids if i.animation_data.action)


def check_file(glb, ref, fps):
    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    scene.render.fps = int(fps)
    scene.render.fps_base = int(fps) / fps
    bpy.ops.import_scene.gltf(filepath=glb, **IMPORT_OPTIONS)
    after_import()
    meshes = [o for o in scene.objects if o.type == "MESH"]
    worst = {"bbox": 0.0, "vertex": 0.0}
    problems = []
    for sample in ref["samples"]:
        frame = sample["frame"]
        fi = math.floor(frame)
        scene.frame_set(int(fi), subframe=frame - fi)
        dg = bpy.context.evaluated_depsgraph_get()
        nodes = [n for n in sample["nodes"] if "world_bbox_min" in n]
        lo = [min(n["world_bbox_min"][k] for n in nodes) for k in range(3)] if nodes else [0] * 3
        hi = [max(n["world_bbox_max"][k] for n in nodes) for k in range(3)] if nodes else [0] * 3
        tol = 1e-4 * max(1.0, dist(lo, hi))
        used = set()
        for n in nodes:
            key = (n["name"], n.get("instance", ""))
            cands = [o for o in meshes if o.name not in used and identity(o) == key]
            if not cands:
                cands = [o for o in meshes if o.name not in used and identity(o)[0] == key[0]]
            if not cands:
                problems.append(f"frame {frame}: {key} not imported")
                continue
            obj = cands[0]
            used.add(obj.name)
            pts = world_vertices(obj, dg)
            if not pts:
                problems.append(f"frame {frame}: {key} has no vertices")
                continue
            gmin = [min(p[k] for p in pts) for k in range(3)]
            gmax = [max(p[k] for p in pts) for k in range(3)]
            e = max(max(abs(gmin[k] - n["world_bbox_min"][k]), abs(gmax[k] - n["world_bbox_max"][k]))
                    for k in range(3))
            worst["bbox"] = max(worst["bbox"], e / tol)
            for sv in n.get("world_sample_vertices", []):
                e = min(dist(p, sv["position"]) for p in pts)
                worst["vertex"] = max(worst["vertex"], e / tol)
                if e > tol and len(problems) < 50:
                    problems.append(f"frame {frame}: {key[0]} vertex {sv['index']} off by {e:.3g} (tol {tol:.3g})")
    return worst, problems, len(ref["samples"])


def fbx_rows(corpus, all_rows=False):
    """The `time` rows of references.tsv in the file's own space with no options, one per file
    (the three.js test's sample) or, with `all_rows`, every such row."""
    path = os.path.join(corpus, "fbx", "references.tsv")
    lines = open(path, encoding="utf-8").read().splitlines()
    header = lines[0].split("\t")
    rows, seen = [], set()
    for line in lines[1:]:
        r = dict(zip(header, line.split("\t")))
        if (r.get("mode") != "time" or r.get("transform_skin") != "no" or r.get("conversion")
                or r.get("options") or (r["fbx"] in seen and not all_rows)):
            continue
        seen.add(r["fbx"])
        rows.append(r)
    return sorted(rows, key=lambda r: (r["fbx"], float(r["time_s"])))


def obj_groups(path):
    """Reference OBJ groups: (names of the g/o line, positions the group's faces use);
    `g default...` lines are ignored as ufbx does."""
    v, groups = [], []
    for line in open(path, encoding="utf-8", errors="replace"):
        t = line.split()
        if not t:
            continue
        if t[0] == "v":
            v.append(tuple(float(x) for x in t[1:4]))
        elif t[0] == "g" and line.startswith("g default"):
            continue
        elif t[0] in ("g", "o"):
            groups.append((t[1:], set()))
        elif t[0] == "f":
            if not groups:
                groups.append(([], set()))
            for c in t[1:]:
                i = int(c.split("/")[0])
                groups[-1][1].add(i - 1 if i > 0 else len(v) + i)
    return [(names, [v[i] for i in sorted(idx)]) for names, idx in groups if idx]


def check_fbx(glb, row, fps):
    from mathutils import Matrix

    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    scene.render.fps = int(fps)
    scene.render.fps_base = int(fps) / fps
    bpy.ops.import_scene.gltf(filepath=glb, **IMPORT_OPTIONS)
    after_import()
    rest = play_stack(row.get("stack", ""))
    frame = float(row["time_s"]) * fps if rest is None else rest
    if rest is not None:
        problems_note = f"stack {row['stack']!r} not in the GLB (motionless): rest pose, frame {rest:g}"
    else:
        problems_note = None
    fi = math.floor(frame)
    scene.frame_set(int(fi), subframe=frame - fi)
    dg = bpy.context.evaluated_depsgraph_get()
    # Blender's importer re-expresses every node's transform and every vertex in its Z-up
    # axes, p_blender = C * p_glTF with C: (x, y, z) -> (x, -z, y); so the axis root empty's
    # Blender world matrix is C * ROOT * C^-1 and p_source = ROOT^-1 * p_glTF
    # = C^-1 * root_world^-1 * p_blender (root_world^-1 alone would give glTF's axes).
    c_inv = Matrix(((1, 0, 0, 0), (0, 0, 1, 0), (0, -1, 0, 0), (0, 0, 0, 1)))
    root = next((o for o in scene.objects if o.name.startswith("keyscene axis conversion")), None)
    to_source = c_inv @ root.evaluated_get(dg).matrix_world.inverted() if root is not None else c_inv
    meshes = [o for o in scene.objects if o.type == "MESH"]
    groups = obj_groups(row["_obj_path"])
    tol, scale = float(row["tolerance"]), float(row.get("position_scale") or 1)
    used, problems, worst = set(), [], 0.0
    for names, want in sorted(groups, key=lambda g: len(g[0])):
        free = [o for o in meshes if o.name not in used]
        obj = (next((o for o in free if identity(o)[0] in names), None)
               or next((o for o in free if identity(o)[0] in [n.split("_")[0] for n in names]), None)
               or (meshes[0] if len(groups) == 1 and len(meshes) == 1 else None))
        if obj is None:
            problems.append(f"group {names}: no object of that name")
            continue
        used.add(obj.name)
        pts = [tuple(to_source @ Vector(p)) for p in world_vertices(obj, dg)]
        off = 0.0
        for p in want:
            off = max(off, min(max(abs(p[k] - q[k]) * scale for k in range(3)) for q in pts) if pts else math.inf)
        worst = max(worst, off / tol)
        if off >= tol:
            problems.append(f"group {names} ({obj.name}): a reference vertex is {off:.3g} from every vertex (tol {tol})")
    return worst, problems, problems_note


def main():
    a = parse_args()
    IMPORT_OPTIONS.update(import_options(a.import_option))
    if a.widen_shape_keys:
        WIDEN_SHAPE_KEYS.append(True)
    ref_dir = os.path.join(a.corpus, "3ds", "reference")
    refs = sorted(f for f in os.listdir(ref_dir) if f.endswith(".lib3ds.json"))
    if a.names:
        refs = [r for r in refs if any(n in r for n in a.names)]
    out_dir = a.keep or tempfile.mkdtemp(prefix="keyscene-blender-")
    os.makedirs(out_dir, exist_ok=True)
    print(f"Blender {bpy.app.version_string}; scene rate {a.fps} fps; importer options "
          f"{IMPORT_OPTIONS or 'default'}{'; shape keys widened' if a.widen_shape_keys else ''}; "
          f"GLB files in {out_dir}")
    print(f"{'file':52} {'frames':>6} {'bbox/tol':>9} {'vertex/tol':>10}  result")
    failed = 0
    for r in refs:
        ref = json.load(open(os.path.join(ref_dir, r)))
        name = r[: -len(".lib3ds.json")]
        glb = os.path.join(out_dir, name + ".glb")
        conv = subprocess.run([a.keyscene, "convert", os.path.join(a.corpus, "3ds", ref["file"]), glb, "--force"],
                              capture_output=True, text=True)
        if conv.returncode != 0:
            print(f"{name:52} convert failed: {conv.stderr.strip()}")
            failed += 1
            continue
        worst, problems, frames = check_file(glb, ref, a.fps)
        ok = not problems
        failed += 0 if ok else 1
        print(f"{name:52} {frames:6} {worst['bbox']:9.3f} {worst['vertex']:10.3f}  "
              f"{'ok' if ok else 'DIFFERS'}")
        for p in problems[:3]:
            print(f"    {p}")
    total = len(refs)
    print(f"{'FBX file at time (s)':52} {'time':>6} {'':9} {'vertex/tol':>10}  result")
    for row in fbx_rows(a.corpus, a.all_rows):
        name = "fbx/" + row["fbx"][: -len(".fbx")]
        if a.names and not any(n in name for n in a.names):
            continue
        row["_obj_path"] = os.path.join(a.corpus, "fbx", row["obj"])
        glb = os.path.join(out_dir, name.replace("/", "_") + ".glb")
        if a.all_rows:
            name = f"{name} {row['stack'] or ''}".rstrip()
        conv = subprocess.run([a.keyscene, "convert", os.path.join(a.corpus, "fbx", row["fbx"]), glb, "--force"],
                              capture_output=True, text=True)
        total += 1
        if conv.returncode != 0:
            print(f"{name:52} convert failed: {conv.stderr.strip()[:80]}")
            failed += 1
            continue
        worst, problems, note = check_fbx(glb, row, a.fps)
        failed += 1 if problems else 0
        print(f"{name:52} {float(row['time_s']):6.3f} {'':9} {worst:10.3f}  {'ok' if not problems else 'DIFFERS'}")
        if note:
            print(f"    {note}")
        for p in problems[:3]:
            print(f"    {p}")
    print(f"{total - failed} passed, {failed} failed")
    sys.stdout.flush()
    os._exit(1 if failed else 0)


if __name__ == "__main__":
    main()

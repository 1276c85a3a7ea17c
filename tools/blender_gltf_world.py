"""World positions of every node of glTF files as Blender's glTF importer plays them.

Usage (bpy 4.2+ as a module, e.g. PyPI `bpy==5.0.1` in CPython 3.11):
    python blender_gltf_world.py JOB.json OUT.json

JOB.json: {"files": [{"path": "a.glb", "fps": 30, "frames": [0, 0.5, 1, ...]}, ...]}.
Writes OUT.json (Blender's importer logs to stdout): {"blender": VERSION, "files": [{"path", "error"?, "nodes": {NAME:
[[x, y, z] per frame]}}]} in glTF's axes (Blender's Z-up world (x, y, z) is glTF (x, z, -y)).

Each file is imported into an empty scene with Blender's own glTF importer
(`bpy.ops.import_scene.gltf`, default options) after setting the scene's frame rate to `fps`
(a whole number: the importer turns glTF seconds into frames with it), so Blender frame F is
glTF time F / fps. The first glTF animation is the one played (the importer makes it the
active action of each animated object, the others NLA strips). A node is an object (its world
origin) or a bone (its head in world space: the joint's world origin, whatever axes Blender
gives the bone); names that two nodes share are left out.
"""

import json
import sys

import bpy


def world_nodes():
    """(name, function giving the world origin) of every object and bone, unique names only."""
    out = {}
    seen = set()

    def put(name, fn):
        if name in seen:
            out.pop(name, None)
            return
        seen.add(name)
        out[name] = fn

    for ob in bpy.context.scene.objects:
        put(ob.name, lambda ob=ob: ob.matrix_world.translation.copy())
        if ob.type == "ARMATURE":
            for pb in ob.pose.bones:
                put(pb.name, lambda ob=ob, pb=pb: ob.matrix_world @ pb.head)
    return out


def play_first_animation():
    """Make the first glTF animation the active action of every object that has one."""
    for ob in bpy.context.scene.objects:
        ad = ob.animation_data
        if ad is None or ad.action is not None:
            continue
        strips = [s for t in ad.nla_tracks for s in t.strips]
        if strips:
            ad.action = strips[0].action


def one(job):
    bpy.ops.wm.read_factory_settings(use_empty=True)
    sc = bpy.context.scene
    sc.render.fps = int(round(job["fps"]))
    sc.render.fps_base = 1.0
    bpy.ops.import_scene.gltf(filepath=job["path"])
    play_first_animation()
    nodes = world_nodes()
    got = {name: [] for name in nodes}
    for f in job["frames"]:
        whole = int(f // 1)
        sc.frame_set(whole, subframe=f - whole)
        bpy.context.view_layer.update()
        for name, fn in nodes.items():
            p = fn()
            got[name].append([p.x, p.z, -p.y])
    return {"path": job["path"], "nodes": got}


def main():
    jobs = json.load(open(sys.argv[-2]))
    out = {"blender": bpy.app.version_string, "files": []}
    for job in jobs["files"]:
        try:
            out["files"].append(one(job))
        except Exception as e:  # one bad file must not hide the others
            out["files"].append({"path": job["path"], "error": str(e)})
    with open(sys.argv[-1], "w") as f:
        json.dump(out, f)


main()

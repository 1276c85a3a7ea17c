"""Every 3DS corpus file with a lib3ds reference, posed through Python and compared with
lib3ds 1.3's answers (``3ds/reference/*.lib3ds.json``, made by the oracle
``lib3ds_dump.c``), as the Rust test ``three_ds_lib3ds`` compares them: at each reference
frame, each object node with a mesh has its world-space bounding box, centroid and sample
vertices within ``1e-4 × max(1, diagonal of the union of the frame's mesh boxes)``.
"""

import json

import numpy as np
import pytest

import keyscene
from conftest import corpus_dir, lib3ds_references


def find_node(scene, ref):
    """The scene node of a reference node: same id and name, else same name and instance."""
    nodes = [n for n in scene.nodes if n.mesh is not None]
    for n in nodes:
        if n.source_id == ref["id"] and n.name == ref["name"]:
            return n.index
    for n in nodes:
        if n.name == ref["name"] and n.instance == ref.get("instance", ""):
            return n.index
    return None


@pytest.mark.parametrize("reference", lib3ds_references(), ids=lambda p: p.name)
def test_world_vertices_match_lib3ds(reference):
    ref = json.loads(reference.read_text())
    scene = keyscene.load(corpus_dir() / "3ds" / ref["file"])
    assert len(scene.meshes) == ref["mesh_count"]
    compared = 0
    for sample in ref["samples"]:
        pose = scene.pose(frame=sample["frame"])
        meshes = [n for n in sample["nodes"] if "world_centroid" in n]
        if not meshes:
            continue
        lo = np.min([n["world_bbox_min"] for n in meshes], axis=0)
        hi = np.max([n["world_bbox_max"] for n in meshes], axis=0)
        tol = 1e-4 * max(1.0, float(np.linalg.norm(hi - lo)))
        for r in meshes:
            i = find_node(scene, r)
            assert i is not None, f"frame {sample['frame']}: no node for {r['name']!r}"
            world = pose.world_positions(i)
            assert world.shape == (r["vertex_count"], 3)
            where = f"frame {sample['frame']} {r['name']}"
            np.testing.assert_allclose(world.min(axis=0), r["world_bbox_min"], rtol=0, atol=tol, err_msg=where)
            np.testing.assert_allclose(world.max(axis=0), r["world_bbox_max"], rtol=0, atol=tol, err_msg=where)
            np.testing.assert_allclose(world.mean(axis=0), r["world_centroid"], rtol=0, atol=tol, err_msg=where)
            for s in r["world_sample_vertices"]:
                np.testing.assert_allclose(world[s["index"]], s["position"], rtol=0, atol=tol, err_msg=where)
            compared += 1
    # A file whose keyframer lists no mesh node (fels.3ds) is checked by its mesh count alone.


def test_the_references_are_there():
    """The corpus brings lib3ds references (a missing folder must not pass silently)."""
    if corpus_dir() is None:
        pytest.skip("corpus not found (set KEYSCENE_CORPUS)")
    assert len(lib3ds_references()) >= 20

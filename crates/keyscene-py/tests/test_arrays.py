"""numpy arrays: dtypes, shapes and read-only flags as documented; views keep their scene
alive; the library's own numbers (lib3ds' for FLY.3DS)."""

import gc
import threading
import time

import numpy as np
import pytest

import keyscene
from conftest import EXAMPLES


@pytest.fixture
def scene():
    return keyscene.load(EXAMPLES / "FLY.3DS")


def test_mesh_arrays_are_read_only_views_of_the_documented_dtypes(scene):
    m = scene.meshes[0]
    assert m.positions.dtype == np.float64 and m.positions.shape == (len(m.positions), 3)
    assert m.polygon_starts.dtype == np.uint32 and m.corner_vertices.dtype == np.uint32
    assert m.polygon_starts[0] == 0 and m.polygon_starts[-1] == len(m.corner_vertices)
    for a in (m.positions, m.polygon_starts, m.corner_vertices):
        assert not a.flags.writeable
        with pytest.raises(ValueError):
            a[0] = 0
    # Views share memory: two reads are the same buffer.
    assert np.shares_memory(m.positions, scene.meshes[0].positions)
    tris = m.triangles()
    assert tris.dtype == np.uint32 and tris.shape[1] == 3
    # Every polygon of n corners gives n - 2 triangles (ufbx_triangulate_face's count).
    sizes = np.diff(m.polygon_starts.astype(np.int64))
    assert len(tris) == int(np.sum(np.maximum(sizes - 2, 0)))
    assert tris.max() < len(m.corner_vertices)


def test_views_keep_the_scene_alive():
    positions = keyscene.load(EXAMPLES / "FLY.3DS").meshes[0].positions
    world = keyscene.load(EXAMPLES / "FLY.3DS").pose(frame=200).world
    gc.collect()
    copy = positions.copy()
    _ = [np.zeros(100_000) for _ in range(20)]  # reuse freed memory if the scene had gone
    np.testing.assert_array_equal(positions, copy)
    assert world.shape[1:] == (4, 4) and np.allclose(world[:, 3, :], [0, 0, 0, 1])


def test_pose_matches_lib3ds_at_frame_200(scene):
    # lib3ds 1.3 puts vertex 0 of "enemy" at (-87.42739, 97.29549, -0.5763435) at frame 200.
    enemy = next(n.index for n in scene.nodes if n.name == "enemy")
    pose = scene.pose(frame=200)
    np.testing.assert_allclose(pose.world_positions(enemy)[0], [-87.42739, 97.29549, -0.5763435], atol=1e-3)
    assert pose.world.dtype == np.float64 and not pose.world.flags.writeable
    # world = parent world x local, translation in [:3, 3] (column vectors); cameras and
    # spotlights with a target are turned to look at it, so only the others compose plainly.
    for n in (n for n in scene.nodes if n.kind in ("mesh", "null")):
        expected = pose.local[n.index] if n.parent is None else pose.world[n.parent] @ pose.local[n.index]
        np.testing.assert_allclose(pose.world[n.index], expected, atol=1e-9)
    # The same instant by time (30 fps for 3DS).
    np.testing.assert_array_equal(scene.pose(time=200 / 30).world, pose.world)


def test_scene_metadata(scene):
    assert keyscene.__version__ and scene.up_axis == "z"
    assert [a.frame_range for a in scene.animations] == [(0.0, 600.0)]
    assert len(scene.meshes) == 3 and scene.warnings == []
    assert {"translation", "rotation_axis_angle", "scale"} <= {t["property"] for t in scene.animations[0].tracks}
    img = scene.render(frame=100, size=(80, 60))
    assert img.shape == (60, 80, 4) and img.dtype == np.uint8 and (img[..., 3] == 255).all()
    assert len(np.unique(img.reshape(-1, 4), axis=0)) > 2  # something was drawn


def test_the_gil_is_released_while_sample_runs(scene):
    """A Python thread keeps running while ``Scene.sample`` works: the call releases the GIL."""
    ticks, stop = [0], threading.Event()

    def spin():
        while not stop.is_set():
            ticks[0] += 1

    frames = np.linspace(0, 600, 200_000)
    worker = threading.Thread(target=spin)
    worker.start()
    time.sleep(0.05)
    before = ticks[0]
    out = scene.sample(frames=frames)
    during = ticks[0] - before
    stop.set()
    worker.join()
    assert out.shape[0] == len(frames)
    # Without releasing the GIL the thread could not run a single loop during the call.
    assert during > 1000, during

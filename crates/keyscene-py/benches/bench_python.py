#!/usr/bin/env python3
"""The Python package's benchmarks (issue 32), side by side in one run; the figures go to
docs/benchmarks.md. Not a test: timings depend on the machine.

    KEYSCENE_CORPUS=$PWD/../shared/corpus python crates/keyscene-py/benches/bench_python.py [--skip-rust]

1. ``keyscene.load(path).pose(frame=mid)`` from Python against the same calls from Rust
   (``cargo bench -p keyscene --bench load_pose``, run first; MANIFEST.md's FBX benchmark
   files): best of repeated runs each, ratio Python ÷ Rust (goal ≤ 1.1).
2. ``Scene.sample`` of 1,000 instants of ``maya_kenney_character_7700_binary.fbx`` against the
   ufbx Python binding (PyPI ``ufbx``) evaluating the same instants with its per-frame
   ``evaluate_scene`` loop and reading every node's ``node_to_world`` (goal ≥ 10× faster).
   ufbx runs in a subprocess: the binding (0.0.x, "work in progress") can crash the
   interpreter.
3. The wheel's size (``maturin build --release``; goal ≤ 8 MB), when ``maturin`` is installed.
"""

import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

import numpy as np

import keyscene

REPO = pathlib.Path(__file__).resolve().parents[3]
CORPUS = pathlib.Path(os.environ.get("KEYSCENE_CORPUS", REPO.parent / "shared" / "corpus"))


def best(f, budget=0.4, min_runs=5, max_runs=1000):
    """Best time of ``f()`` over at least ``min_runs`` calls and about ``budget`` seconds."""
    t_best, start, runs = float("inf"), time.perf_counter(), 0
    while runs < min_runs or (time.perf_counter() - start < budget and runs < max_runs):
        t = time.perf_counter()
        f()
        t_best = min(t_best, time.perf_counter() - t)
        runs += 1
    return t_best


def load_pose(skip_rust):
    env = dict(os.environ, KEYSCENE_CORPUS=str(CORPUS))
    if skip_rust:
        rust = {}
    else:
        out = subprocess.run(["cargo", "bench", "-q", "-p", "keyscene", "--bench", "load_pose"],
                             cwd=REPO, env=env, capture_output=True, text=True, check=True)
        rust = json.loads(out.stdout.strip().splitlines()[-1])
    print(f"{'file':<62} {'Rust ms':>9} {'Python ms':>10} {'ratio':>6}")
    total_r = total_p = 0.0
    for name, t_rust in sorted(rust.items()):
        path = CORPUS / "fbx" / name
        scene = keyscene.load(path)
        mid = sum(scene.animations[0].frame_range) / 2 if scene.animations else 0.0
        t_py = best(lambda: keyscene.load(path).pose(frame=mid))
        total_r += t_rust
        total_p += t_py
        print(f"{name:<62} {t_rust * 1e3:>9.3f} {t_py * 1e3:>10.3f} {t_py / t_rust:>6.3f}")
    if rust:
        print(f"{'total':<62} {total_r * 1e3:>9.3f} {total_p * 1e3:>10.3f} {total_p / total_r:>6.3f}")


UFBX_LOOP = r"""
import sys, time, numpy as np, ufbx
path, n = sys.argv[1], int(sys.argv[2])
scene = ufbx.load_file(path)
anim = scene.anim
stack = scene.anim_stacks[0]
times = np.linspace(stack.time_begin, stack.time_end, n)

def world(t):
    # Every node's node_to_world at one instant. The evaluated scene's node and matrix
    # objects must be gone before the next evaluate_scene frees it (the 0.0.x binding
    # crashes otherwise), hence a function and the dels.
    ev = ufbx.evaluate_scene(scene, anim, t)
    out = np.empty((len(scene.nodes), 4, 4))
    for k, node in enumerate(ev.nodes):
        m = node.node_to_world
        c0, c1, c2, c3 = m.c0, m.c1, m.c2, m.c3
        out[k] = ((c0.x, c1.x, c2.x, c3.x), (c0.y, c1.y, c2.y, c3.y), (c0.z, c1.z, c2.z, c3.z), (0, 0, 0, 1))
        del m, c0, c1, c2, c3, node
    return out

t0 = time.perf_counter()
out = np.stack([world(float(t)) for t in times])
elapsed = time.perf_counter() - t0
np.save(sys.argv[3], out)
print(elapsed)
"""


def sample_vs_ufbx(n=1000):
    path = CORPUS / "fbx" / "ufbx" / "maya_kenney_character_7700_binary.fbx"
    scene = keyscene.load(path)
    first, last = scene.animations[0].frame_range
    fps = scene.animations[0].fps
    times = np.linspace(first / fps, last / fps, n)
    t_ks = best(lambda: scene.sample(times=times), budget=1.0, min_runs=3)
    print(f"Scene.sample({n} instants, {len(scene.nodes)} nodes): {t_ks * 1e3:.2f} ms")
    with tempfile.TemporaryDirectory() as d:
        npy = pathlib.Path(d) / "ufbx.npy"
        proc = subprocess.run([sys.executable, "-c", UFBX_LOOP, str(path), str(n), str(npy)], capture_output=True, text=True)
        if proc.returncode != 0:
            print(f"ufbx evaluate_scene loop: failed (exit {proc.returncode}): {proc.stderr.strip()[-300:]}")
            return
        t_ufbx = float(proc.stdout.strip())
        theirs = np.load(npy)
    print(f"ufbx evaluate_scene loop ({n} instants): {t_ufbx * 1e3:.2f} ms; keyscene is {t_ufbx / t_ks:.1f}x faster")
    # The same instants, the same answer: ufbx's node list has its root first; match the
    # other nodes by name and compare translations.
    ours = scene.sample(times=times)
    import ufbx  # noqa: E402 (only to read node names, after the timed run)

    names = [nd.name for nd in ufbx.load_file(str(path)).nodes]
    index = {nd.name: nd.index for nd in scene.nodes}
    pairs = [(k, index[nm]) for k, nm in enumerate(names) if nm in index]
    worst = max(float(np.abs(theirs[:, k, :3, 3] - ours[:, i, :3, 3]).max()) for k, i in pairs)
    print(f"agreement: {len(pairs)} nodes matched by name, largest translation difference {worst:.3g} scene units")


def wheel_size():
    try:
        with tempfile.TemporaryDirectory() as d:
            subprocess.run(["maturin", "build", "--release", "-q", "-o", d], cwd=REPO / "crates" / "keyscene-py",
                           check=True, capture_output=True)
            for w in pathlib.Path(d).glob("*.whl"):
                print(f"wheel {w.name}: {w.stat().st_size / 1e6:.2f} MB")
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"wheel size: not measured ({e})")


if __name__ == "__main__":
    load_pose("--skip-rust" in sys.argv)
    sample_vs_ufbx()
    wheel_size()

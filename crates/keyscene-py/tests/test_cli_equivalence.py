"""The Python package gives what the command line gives: ``Pose.world`` and
``Pose.world_positions`` equal ``keyscene sample --json`` on the corpus, ``keyscene.convert``
and ``Scene.save`` write the CLI's bytes, ``keyscene.convert_all`` converts, skips and
records a manifest as ``keyscene convert DIR OUT --to``. The CLI binary is an independent
path through the same library (its own argument handling and printing)."""

import json
import subprocess

import numpy as np
import pytest

import keyscene
from conftest import EXAMPLES, corpus_3ds_files, corpus_dir, reference_rows


def sample_json(cli, path, frames):
    args = [str(cli), "sample", str(path)]
    for f in frames:
        args += ["--frame", repr(float(f))]
    out = subprocess.run(args, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)["samples"]


def fbx_sample_files():
    """The FBX files of references.tsv (each once): the ufbx-checked files."""
    seen = []
    for r in reference_rows():
        if r["fbx"] not in seen:
            seen.append(r["fbx"])
    c = corpus_dir()
    return [c / "fbx" / f for f in seen] if c else []


def loadable(path):
    try:
        return keyscene.load(path)
    except keyscene.Error:
        return None


@pytest.mark.parametrize("path", corpus_3ds_files() + fbx_sample_files(), ids=lambda p: p.name)
def test_pose_equals_keyscene_sample(path, cli):
    scene = loadable(path)
    if scene is None:
        pytest.skip("the file does not load (a negative corpus file): nothing to sample")
    first, last = scene.animations[0].frame_range if scene.animations else (0.0, 0.0)
    frames = [first, (first + last) / 2 + 0.25, last]
    samples = sample_json(cli, path, frames)
    assert len(samples) == 3
    for f, s in zip(frames, samples):
        pose = scene.pose(frame=f)
        assert pose.frame == s["frame"]
        cli_world = np.array([n["world_matrix"] for n in s["nodes"]]).reshape(-1, 4, 4).transpose(0, 2, 1)
        np.testing.assert_array_equal(pose.world, cli_world)
        for i, n in enumerate(s["nodes"]):
            if "mesh" not in n:
                continue
            world = pose.world_positions(i)
            assert world.shape[0] == n["mesh"]["vertex_count"]
            for v in n["mesh"]["world_sample_vertices"]:
                np.testing.assert_array_equal(world[v["index"]], v["position"])


def test_sample_is_pose_at_every_instant(fly):
    scene = keyscene.load(fly)
    frames = np.linspace(0, 600, 41)
    world = scene.sample(frames=frames)
    assert world.shape == (41, len(scene.nodes), 4, 4) and world.dtype == np.float64
    for k in (0, 17, 40):
        np.testing.assert_array_equal(world[k], scene.pose(frame=frames[k]).world)
    node = next(n.index for n in scene.nodes if n.mesh is not None)
    pos = scene.sample_positions(node, times=frames / 30.0)
    np.testing.assert_allclose(pos[17], scene.pose(frame=frames[17]).world_positions(node), rtol=0, atol=1e-9)


CONVERSIONS = [
    ("FLY.3DS", "out.glb", {}),
    ("FLY.3DS", "out.gltf", {"embed": True}),
    ("FLY.3DS", "out.3da", {"fps": 25}),
    ("FLY.3DS", "out.obj", {"frame": 120, "space": "y_up_m"}),
    ("FLY.3DS", "out.fbx", {"fbx_ascii": True}),
    ("FLY.3DS", "out.3ds", {}),
    ("FLY.3DS", "out.usda", {"up": "z", "units": "cm"}),
    ("FLY.3DS", "out.usdz", {}),
]


def cli_args(options):
    args = []
    for k, v in options.items():
        flag = "--" + k.replace("_", "-")
        args += [flag] if v is True else [flag, str(v)]
    return args


@pytest.mark.parametrize("src,dst,options", CONVERSIONS, ids=[f"{d} {o}" for _, d, o in CONVERSIONS])
def test_convert_writes_the_cli_bytes(src, dst, options, cli, tmp_path):
    (tmp_path / "py").mkdir()
    (tmp_path / "cli").mkdir()
    report = keyscene.convert(EXAMPLES / src, tmp_path / "py" / dst, **options)
    subprocess.run([str(cli), "convert", str(EXAMPLES / src), str(tmp_path / "cli" / dst), "-q"] + cli_args(options), check=True)
    assert (tmp_path / "py" / dst).read_bytes() == (tmp_path / "cli" / dst).read_bytes()
    assert report.format == dst.rsplit(".", 1)[1]
    assert report.outcome in ("converted", "warnings")
    assert str(tmp_path / "py" / dst) in [str(f) for f in report.files]
    # Scene.save writes the same bytes as convert.
    scene = keyscene.load(EXAMPLES / src)
    (tmp_path / "save").mkdir()
    scene.save(tmp_path / "save" / dst, **options)
    assert (tmp_path / "save" / dst).read_bytes() == (tmp_path / "py" / dst).read_bytes()


def test_convert_all_matches_the_cli_batch(cli, corpus, tmp_path):
    src = corpus / "3ds"
    py_out, cli_out = tmp_path / "py", tmp_path / "cli"
    results = keyscene.convert_all(src, py_out, "glb", manifest=tmp_path / "py.jsonl")
    proc = subprocess.run([str(cli), "convert", str(src), str(cli_out), "--to", "glb", "--json", "--manifest", str(tmp_path / "cli.jsonl")],
                          capture_output=True, text=True)
    summary = json.loads(proc.stdout)
    theirs = {r["input"]: r for r in summary["results"]}
    assert [r["input"] for r in results] == sorted(theirs)
    for r in results:
        t = theirs[r["input"]]
        assert (r["status"], r["output"], r["warnings"], r["error"]) == (t["status"], t["output"], t["warnings"], t["error"])
        if r["output"]:
            assert (py_out / r["output"]).read_bytes() == (cli_out / t["output"]).read_bytes()
    py_lines = [json.loads(l) for l in (tmp_path / "py.jsonl").read_text().splitlines()]
    cli_lines = [json.loads(l) for l in (tmp_path / "cli.jsonl").read_text().splitlines()]
    key = lambda l: (l["path"], l["size"], l["sha256"], l["outcome"], l["outputs"], l["warnings"], l["error"])
    assert sorted(map(key, py_lines)) == sorted(map(key, cli_lines))
    # A second run skips what is up to date, as the CLI does.
    again = keyscene.convert_all(src, py_out, "glb", manifest=tmp_path / "py.jsonl")
    assert {r["status"] for r in again if r["status"] != "failed"} == {"skipped"}
    # Shards split the files exactly once.
    halves = [keyscene.convert_all(src, tmp_path / f"s{i}", "glb", shard=(i, 2)) for i in range(2)]
    assert sorted(r["input"] for h in halves for r in h) == [r["input"] for r in results]

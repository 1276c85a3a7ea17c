"""keyscene at scale on an existing engine: Dask distributed's ``Client.map`` runs
``keyscene.convert`` over the shared 3DS corpus and a set of FBX files on a local cluster of
two worker processes, and every output is byte-identical to the command line's batch
(``keyscene convert DIR OUT --to glb``). docs/python.md shows the same recipe."""

import json
import os
import subprocess

import pytest

import keyscene
from conftest import reference_rows

distributed = pytest.importorskip("distributed")


def convert_one(src, dst):
    """What a worker runs: one conversion, its outcome as data (never an exception)."""
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    try:
        report = keyscene.convert(src, dst)
        return ("ok", report.warnings)
    except keyscene.Error as e:
        return ("failed", str(e))


def test_dask_client_map_writes_the_cli_batch_bytes(cli, corpus, tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    # The 3DS corpus mirrored file by file (the batch does not follow linked folders), with
    # the textures beside the scenes.
    for f in (corpus / "3ds").rglob("*"):
        if f.is_file() and "reference" not in f.relative_to(corpus / "3ds").parts:
            link = src / "3ds" / f.relative_to(corpus / "3ds")
            link.parent.mkdir(parents=True, exist_ok=True)
            link.symlink_to(f)
    fbx = src / "fbx"
    fbx.mkdir()
    picked = sorted({r["fbx"] for r in reference_rows()})[::6][:24]
    for rel in picked:
        link = fbx / rel.replace("/", "__")
        link.symlink_to(corpus / "fbx" / rel)
    batch = tmp_path / "batch"
    proc = subprocess.run([str(cli), "convert", str(src), str(batch), "--to", "glb", "--json"], capture_output=True, text=True)
    summary = json.loads(proc.stdout)
    jobs = [(str(src / r["input"]), str(tmp_path / "dask" / r["output"])) for r in summary["results"] if r["output"]]
    assert len(jobs) >= 30, summary["converted"]
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:
            futures = client.map(convert_one, [s for s, _ in jobs], [d for _, d in jobs])
            outcomes = client.gather(futures)
    for (s, d), (status, detail) in zip(jobs, outcomes):
        assert status == "ok", f"{s}: {detail}"
        rel = os.path.relpath(d, tmp_path / "dask")
        assert (tmp_path / "dask" / rel).read_bytes() == (batch / rel).read_bytes(), rel

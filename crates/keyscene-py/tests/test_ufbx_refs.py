"""The ufbx ``.obj`` reference rows of ``fbx/references.tsv`` through Python: each FBX
loaded with ``keyscene.load``, posed with ``Scene.pose`` as the row says (``static``: the
stored pose; ``time``: the row's stack at ``time_s`` seconds; ``conversion``, ``bind_pose=``,
``no_extrapolation``, ``transform_skin``), every mesh node's world positions
(``Pose.world_positions``), corner normals (``Pose.world_normals``) and UV set 0 written as
one OBJ group per node, and compared with the reference by the oracle ``obj_compare.py``
(ufbx's own matching, tolerance and position scale), as the Rust test
``fbx_obj_references`` compares keyscene's OBJ writer.
"""

import contextlib
import importlib.util
import io
import pathlib

import numpy as np
import pytest

import keyscene
from conftest import corpus_dir, oracles_dir, reference_rows


def escape(name):
    """A group name as keyscene's OBJ writer spells it: bytes outside [A-Za-z0-9_.:-] as
    FBXASCnnn (the escape ufbx's reference files use)."""
    out = []
    for b in name.encode("utf-8"):
        c = chr(b)
        out.append(c if (c.isascii() and c.isalnum()) or c in "_.:-" else f"FBXASC{b:03d}")
    return "".join(out)


def candidate_obj(scene, pose, normals, uvs):
    """The posed scene as OBJ text: one ``o`` group per mesh node."""
    lines, v_base, vt_base, vn_base, used = [], 0, 0, 0, {}
    for node in scene.nodes:
        if node.mesh is None:
            continue
        mesh = scene.meshes[node.mesh]
        name = escape(node.name)
        used[name] = used.get(name, 0) + 1
        lines.append(f"o {name}" if used[name] == 1 else f"o {name}.{used[name]}")
        for p in pose.world_positions(node.index):
            lines.append("v %.9g %.9g %.9g" % tuple(p))
        n = pose.world_normals(node.index) if normals else None
        uv = next(iter(mesh.uv_sets.values()), None) if uvs else None
        if n is not None:
            lines.extend("vn %.9g %.9g %.9g" % tuple(x) for x in n)
        if uv is not None:
            lines.extend("vt %.9g %.9g" % tuple(x) for x in uv)
        starts, corners = mesh.polygon_starts, mesh.corner_vertices
        for p in range(len(starts) - 1):
            face = []
            for c in range(starts[p], starts[p + 1]):
                v = f"{v_base + corners[c] + 1}"
                t = f"{vt_base + c + 1}" if uv is not None else ""
                nn = f"{vn_base + c + 1}" if n is not None else ""
                face.append(v if not (t or nn) else f"{v}/{t}/{nn}" if nn else f"{v}/{t}")
            if len(face) >= 3:
                lines.append("f " + " ".join(face))
        v_base += len(mesh.positions)
        vt_base += 0 if uv is None else len(uv)
        vn_base += 0 if n is None else len(n)
    return "\n".join(lines) + "\n"


def obj_compare():
    spec = importlib.util.spec_from_file_location("obj_compare", oracles_dir() / "obj_compare.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def posed(scene, row):
    """The pose the row asks for."""
    options = [o.strip() for o in row["options"].replace(";", ",").split(",") if o.strip()]
    kw = {"extrapolate": "no_extrapolation" not in options}
    for o in options:
        if o.startswith("bind_pose="):
            kw["bind_pose"] = o[len("bind_pose="):]
    if row["transform_skin"] == "yes":
        kw["skin_follows_node"] = True
    conversion = {"": {}, "y_up_m": {"target_axes": "y", "target_units": 1.0},
                  "y_up_cm": {"target_axes": "y", "target_units": 0.01}}[row["conversion"]]
    kw.update(conversion)
    if row["mode"] != "time":
        return scene.pose(frame=0, animation=None, **kw)
    t = float(row["time_s"])
    if not scene.animations:
        # Geometry caches are the animation of a scene without stacks.
        return scene.pose(time=t, animation=None, **kw)
    anim = 0
    if row["stack"]:
        anim = next(i for i, a in enumerate(scene.animations) if row["stack"] in a.name)
    return scene.pose(time=t, animation=anim, **kw)


def row_name(r):
    """A row's trial name: ``MODE FBX`` and the time, stack, conversion and options it has."""
    parts = [r["mode"], r["fbx"]]
    parts += [f"t={r['time_s']}"] if r["time_s"] else []
    parts += [f"stack={r['stack']}"] if r["stack"] else []
    parts += [f"conversion={r['conversion']}"] if r["conversion"] else []
    parts += [r["options"]] if r["options"] else []
    return " ".join(parts)


def known_defects():
    """Rows of crates/keyscene/tests/triage.tsv for this test: trial name -> defect class."""
    table = pathlib.Path(__file__).resolve().parents[2] / "keyscene" / "tests" / "triage.tsv"
    out = {}
    for line in table.read_text(encoding="utf-8").splitlines():
        cols = line.split("\t")
        if not line.startswith("#") and len(cols) >= 3 and cols[0] == "keyscene-py:test_ufbx_refs":
            out[cols[1]] = cols[2]
    return out


ROWS = reference_rows()
DEFECTS = known_defects()


def params():
    """Each row as a pytest parameter; a known defect is expected to fail (strict: a fix
    makes it pass, and the run fails until its triage.tsv row is deleted)."""
    for r in ROWS:
        name = row_name(r)
        marks = [pytest.mark.xfail(strict=True, reason=f"known defect: {DEFECTS[name]}")] if name in DEFECTS else []
        yield pytest.param(r, id=name, marks=marks)


@pytest.mark.parametrize("row", list(params()))
def test_pose_matches_ufbx_obj(row, tmp_path):
    fbx = corpus_dir() / "fbx"
    scene = keyscene.load(fbx / row["fbx"])
    pose = posed(scene, row)
    cand = tmp_path / "candidate.obj"
    cand.write_text(candidate_obj(scene, pose, row["compare_normals"] == "yes", row["compare_uvs"] == "yes"))
    argv = [str(fbx / row["obj"]), str(cand)]
    for flag, col in (("--match", "match"), ("--tolerance", "tolerance"), ("--position-scale", "position_scale")):
        if row[col]:
            argv += [flag, row[col]]
    if row["compare_normals"] == "yes":
        argv.append("--normals")
        for o in row["options"].replace(";", ",").split(","):
            if o.strip().startswith("skip_normals="):
                argv += ["--skip-normals-group", o.strip()[len("skip_normals="):]]
    if row["compare_uvs"] == "yes":
        argv.append("--uvs")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = obj_compare().main(argv)
    assert status == 0, out.getvalue()


def test_there_are_reference_rows():
    if corpus_dir() is None:
        pytest.skip("corpus not found (set KEYSCENE_CORPUS)")
    assert len(ROWS) >= 100
    names = {row_name(r) for r in ROWS}
    stale = [n for n in DEFECTS if n not in names]
    assert not stale, f"triage.tsv rows for rows that do not exist: {stale}"

"""The USD writer checked by OpenUSD itself (PyPI ``usd-core``; the module is skipped
without it): every 3DS/PRJ file of the corpus and every FBX file of ``fbx/references.tsv``
that loads is written as ``.usda`` and ``.usdz`` by ``keyscene.convert``, opened with
``Usd.Stage.Open`` and run through every validator OpenUSD registers (``UsdValidation``);
none may report an error. Then, at the first frame, a quarter frame past the middle and the
last frame of the stage's time codes, every mesh's world-space vertices as USD computes them
(``points`` at the time code, after ``UsdSkel.BakeSkinning`` on a copy of the stage, times
``UsdGeom.XformCache(t).GetLocalToWorldTransform``) must equal keyscene's posed vertices
(``Scene.pose(frame=…).world_positions``) within 1e-4 of the scene size (the diagonal of the
posed vertices' bounding box). The expected values are OpenUSD's and the evaluator's; none
comes from the writer.

Files that fail for a known reason are listed in ``crates/keyscene/tests/triage.tsv`` under
the binary name ``keyscene-py:test_usd`` and run as strict xfails.
"""

import pathlib
import re
import struct
import zlib

import numpy as np
import pytest

pxr = pytest.importorskip("pxr")
from pxr import Sdf, Usd, UsdGeom, UsdSkel, UsdValidation, Vt  # noqa: E402

import keyscene  # noqa: E402
from conftest import corpus_3ds_files, corpus_dir, reference_rows  # noqa: E402

TOLERANCE = 1e-4
FORMS = ("usda", "usdz")


def sources():
    """(id, path) of every corpus source: the 3DS folder's files, then the FBX files the
    reference table names (each once)."""
    c = corpus_dir()
    if c is None:
        return []
    out = [(f"3ds/{p.relative_to(c / '3ds').as_posix()}", p) for p in corpus_3ds_files()]
    seen = set()
    for r in reference_rows():
        if r["fbx"] not in seen:
            seen.add(r["fbx"])
            out.append((f"fbx/{r['fbx']}", c / "fbx" / r["fbx"]))
    return out


def known_defects():
    """Rows of crates/keyscene/tests/triage.tsv for this test: trial name -> defect class."""
    table = pathlib.Path(__file__).resolve().parents[2] / "keyscene" / "tests" / "triage.tsv"
    out = {}
    for line in table.read_text(encoding="utf-8").splitlines():
        cols = line.split("\t")
        if not line.startswith("#") and len(cols) >= 3 and cols[0] == "keyscene-py:test_usd":
            out[cols[1]] = cols[2]
    return out


SOURCES = sources()
DEFECTS = known_defects()


def params():
    for form in FORMS:
        for name, path in SOURCES:
            trial = f"{form} {name}"
            marks = [pytest.mark.xfail(strict=True, reason=f"known defect: {DEFECTS[trial]}")] if trial in DEFECTS else []
            yield pytest.param(form, path, id=trial, marks=marks)


def validation_errors(stage):
    """Every error of every registered OpenUSD validator on `stage`, as text."""
    registry = UsdValidation.ValidationRegistry()
    context = UsdValidation.ValidationContext(registry.GetOrLoadAllValidators())
    return [
        f"{e.GetName()}: {e.GetMessage()}"
        for e in context.Validate(stage)
        if e.GetType() == UsdValidation.ValidationErrorType.Error
    ]


def mesh_prims(scene, stage):
    """Node index -> its mesh prim, by walking the scene's node tree and the stage's prims in
    parallel: the default prim's Xform children are the scene's roots in order, each node
    prim's Xform children its children in order, and a mesh node's prim has one Mesh child."""

    def xform_children(prim):
        return [c for c in prim.GetChildren() if c.GetTypeName() == "Xform"]

    roots = [n.index for n in scene.nodes if n.parent is None]
    top = xform_children(stage.GetDefaultPrim())
    assert len(top) == len(roots), "one prim per root node"
    out, todo = {}, list(zip(roots, top))
    while todo:
        k, prim = todo.pop()
        node = scene.nodes[k]
        meshes = [c for c in prim.GetChildren() if c.GetTypeName() == "Mesh"]
        if node.mesh is not None:
            assert len(meshes) == 1, f"node {node.name!r}: one Mesh prim"
            out[k] = meshes[0]
        children = xform_children(prim)
        assert len(children) == len(node.children), f"node {node.name!r}: one prim per child"
        todo.extend(zip(node.children, children))
    return out


def usd_world_points(stage, prim, t, cache):
    points = prim.GetAttribute("points").Get(t)
    if points is None:
        return np.zeros((0, 3))
    m = np.array(cache.GetLocalToWorldTransform(prim), dtype=np.float64).reshape(4, 4)
    p = np.array(points, dtype=np.float64).reshape(-1, 3)
    # USD's row vectors: [p 1] · M.
    return p @ m[:3, :3] + m[3, :3]


@pytest.mark.parametrize("form,path", list(params()))
def test_usd_opens_validates_and_matches_posed_vertices(form, path, tmp_path):
    try:
        scene = keyscene.load(path)
    except keyscene.Error as e:
        pytest.skip(f"does not load: {e}")
    out = tmp_path / f"{path.stem}.{form}"
    keyscene.convert(path, out, force=True)
    stage = Usd.Stage.Open(str(out))
    assert stage, "Usd.Stage.Open failed"
    errors = validation_errors(stage)
    assert not errors, "\n".join(errors[:20])

    # A copy of the stage with the skinning baked into points (UsdSkel.BakeSkinning).
    baked = Usd.Stage.Open(stage.Flatten())
    assert UsdSkel.BakeSkinning(baked.Traverse())
    prims = mesh_prims(scene, baked)
    if baked.HasAuthoredTimeCodeRange():
        start, end = baked.GetStartTimeCode(), baked.GetEndTimeCode()
        frames = [start, (start + end) / 2 + 0.25, end] if end > start else [start]
        animation = 0
    else:
        frames, animation = [0.0], None
    poses = {f: scene.pose(frame=f, animation=animation) for f in frames}
    expected = {(f, k): poses[f].world_positions(k) for f in frames for k in prims}
    finite = [v[np.isfinite(v).all(axis=1)] for v in expected.values() if len(v)]
    if finite and sum(len(v) for v in finite):
        allv = np.concatenate(finite)
        size = float(np.linalg.norm(allv.max(axis=0) - allv.min(axis=0))) or 1.0
    else:
        size = 1.0
    worst = (0.0, None)
    for f in frames:
        t = Usd.TimeCode(f) if animation is not None else Usd.TimeCode.Default()
        cache = UsdGeom.XformCache(t)
        for k, prim in prims.items():
            want = expected[(f, k)]
            if len(want) == 0:
                continue
            got = usd_world_points(baked, prim, t, cache)
            assert got.shape == want.shape, f"{prim.GetPath()} at {f}: {got.shape} points, keyscene {want.shape}"
            ok = np.isfinite(want).all(axis=1)
            if ok.any():
                d = float(np.linalg.norm(got[ok] - want[ok], axis=1).max())
                if d > worst[0]:
                    worst = (d, f"{prim.GetPath()} at frame {f}")
    assert worst[0] <= TOLERANCE * size, f"{worst[1]}: {worst[0]:.6g} > {TOLERANCE} x scene size {size:.6g}"


def test_the_corpus_is_there_and_triage_rows_are_live():
    if corpus_dir() is None:
        pytest.skip("corpus not found (set KEYSCENE_CORPUS)")
    assert len(SOURCES) >= 100
    trials = {f"{form} {name}" for form in FORMS for name, _ in SOURCES}
    stale = [n for n in DEFECTS if n not in trials]
    assert not stale, f"triage.tsv rows for trials that do not exist: {stale}"


def test_stage_metadata_of_fly(fly, tmp_path):
    """Stage metadata against the source's own: 3DS is Z-up without a unit, 30 fps, frames
    0-600 (FLY.3DS's keyframer range, as `keyscene inspect` and lib3ds read it)."""
    scene = keyscene.load(fly)
    out = tmp_path / "fly.usda"
    keyscene.convert(fly, out)
    stage = Usd.Stage.Open(str(out))
    assert UsdGeom.GetStageUpAxis(stage) == UsdGeom.Tokens.z
    assert UsdGeom.GetStageMetersPerUnit(stage) == 1.0
    assert stage.GetTimeCodesPerSecond() == scene.animations[0].fps
    assert (stage.GetStartTimeCode(), stage.GetEndTimeCode()) == tuple(scene.animations[0].frame_range)
    assert stage.GetDefaultPrim().IsValid()


def usd_identifier(name):
    """A name as a USD identifier, by OpenUSD's grammar ([A-Za-z_][A-Za-z0-9_]*): other
    characters become ``_``, a leading digit (or nothing) gets a ``_``."""
    out = re.sub(r"[^A-Za-z0-9_]", "_", name)
    return "_" + out if not out or out[0].isdigit() else out


def expected_joint_paths(scene, skin_joints):
    """Per skin joint (node index): its joint path as the scene's hierarchy gives it: the
    identifiers of the nodes from its outermost ancestor that is a joint of the skin down to
    itself (ancestors that are not joints of the skin leave no element)."""
    in_skin = set(skin_joints)
    paths = []
    for node in skin_joints:
        chain, p = [node], scene.nodes[node].parent
        while p is not None:
            if p in in_skin:
                chain.append(p)
            p = scene.nodes[p].parent
        paths.append("/".join(usd_identifier(scene.nodes[k].name) for k in reversed(chain)))
    return paths


def test_linear_skins_are_usdskel_rigs(tmp_path):
    """Every skinned mesh of the FBX sources is a UsdSkel rig or named in a warning (never
    silently posed points): a rig's mesh prim is bound (``SkelBindingAPI``) to a ``Skeleton``
    with one joint per skin joint, whose joint paths follow the bones' parents in the scene
    (or, named in a warning, are all roots), its weights are the file's divided by their sum,
    and its animation source is a ``SkelAnimation``. The positions of every rig are checked
    by ``test_usd_opens_validates_and_matches_posed_vertices`` (after ``BakeSkinning``). The
    corpus has linear skins USD can hold: at least one file must be written with a rig, and
    at least one with a joint hierarchy."""
    if corpus_dir() is None:
        pytest.skip("corpus not found (set KEYSCENE_CORPUS)")
    rigged_files = trees = 0
    for name, path in SOURCES:
        if not name.startswith("fbx/"):
            continue
        try:
            scene = keyscene.load(path)
        except keyscene.Error:
            continue
        skinned = [n for n in scene.nodes if n.mesh is not None and scene.meshes[n.mesh].skin is not None]
        if not skinned:
            continue
        out = tmp_path / f"{path.stem}.usda"
        report = keyscene.convert(path, out, force=True)
        stage = Usd.Stage.Open(str(out))
        prims = mesh_prims(scene, stage)
        rigged = 0
        for n in skinned:
            prim = prims[n.index]
            binding = UsdSkel.BindingAPI(prim)
            targets = binding.GetSkeletonRel().GetTargets() if prim.HasAPI(UsdSkel.BindingAPI) else []
            if not targets:
                assert any(f'"{n.name}" written as posed points' in w for w in report.warnings), (
                    f"{name}: skinned node {n.name!r} is neither a rig nor in a warning"
                )
                continue
            rigged += 1
            mesh = scene.meshes[n.mesh]
            skel = UsdSkel.Skeleton(stage.GetPrimAtPath(targets[0]))
            skin_joints = scene.skins[mesh.skin]["joints"]
            written = list(skel.GetJointsAttr().Get())
            assert len(written) == len(skin_joints)
            # The joint tree: UsdSkel's topology of the written paths is valid (parents first)
            # and is the scene's bone hierarchy, or every joint is a root with a warning.
            topology = UsdSkel.Topology(written)
            assert topology.Validate()[0], f"{name}: {n.name!r}: joint topology invalid"
            want_paths = expected_joint_paths(scene, skin_joints)
            if all("/" not in p for p in written) and any("/" in p for p in want_paths):
                assert any(f'"{n.name}": joints written as roots' in w for w in report.warnings)
                want_paths = [p.rsplit("/", 1)[-1] for p in want_paths]
            elif any("/" in p for p in written):
                trees += 1
            if len(set(want_paths)) == len(want_paths):
                assert sorted(written) == sorted(want_paths), f"{name}: {n.name!r}: joint paths"
                to_written = [written.index(p) for p in want_paths]
            else:
                # Bones of one name under one parent: the writer numbers them; the tree is
                # checked through UsdSkel's topology and the element counts only.
                assert sorted(p.count("/") for p in written) == sorted(p.count("/") for p in want_paths)
                to_written = None
            anim = UsdSkel.BindingAPI(skel.GetPrim()).GetAnimationSource()
            assert anim and anim.IsA(UsdSkel.Animation), f"{name}: {n.name!r} has no SkelAnimation"
            if to_written is None:
                continue
            joints, weights = mesh.skin_weights()
            want = weights.astype(np.float64) / weights.astype(np.float64).sum(axis=1, keepdims=True)
            got = np.array(binding.GetJointWeightsPrimvar().Get(), dtype=np.float64)
            size = binding.GetJointWeightsPrimvar().GetElementSize()
            got = got.reshape(-1, size)
            idx = np.array(binding.GetJointIndicesPrimvar().Get()).reshape(-1, size)
            # The same (joint → weight) per vertex, whatever the padding and the joint order.
            for v in range(len(want)):
                a = {to_written[int(j)]: w for j, w in zip(joints[v], want[v]) if w != 0}
                b = {int(j): w for j, w in zip(idx[v], got[v]) if w != 0}
                assert a.keys() == b.keys() and all(abs(a[j] - b[j]) < 1e-6 for j in a), (
                    f"{name}: {n.name!r} vertex {v}: weights {b}, file {a}"
                )
        rigged_files += rigged > 0
    assert rigged_files >= 1
    assert trees >= 1


def fbx_full_weights(path):
    """``{channel name: [FullWeights …]}`` of every ``BlendShapeChannel`` deformer of an FBX
    file, read from the file itself (ASCII or binary FBX 7.x records; FBX SDK's percent)."""
    data = path.read_bytes()
    out = {}
    if not data.startswith(b"Kaydara FBX Binary"):
        text = data.decode("utf-8", "replace")
        pattern = r'Deformer: [^,]*, "SubDeformer::([^"]*)", "BlendShapeChannel" \{(.*?)\n\t\}'
        for name, body in re.findall(pattern, text, re.S):
            m = re.search(r"FullWeights: \*\d+ \{\s*a: ([^}]*)\}", body)
            out[name] = [float(x) for x in m.group(1).split(",")] if m else []
        return out
    wide = struct.unpack_from("<I", data, 23)[0] >= 7500
    head = "<QQQB" if wide else "<IIIB"

    def props(pos, count):
        values = []
        for _ in range(count):
            code = chr(data[pos])
            pos += 1
            if code in "YCIFDL":
                size = {"Y": 2, "C": 1, "I": 4, "F": 4, "D": 8, "L": 8}[code]
                values.append(struct.unpack_from("<" + {"Y": "h", "C": "B", "I": "i", "F": "f", "D": "d", "L": "q"}[code], data, pos)[0])
                pos += size
            elif code in "SR":
                (n,) = struct.unpack_from("<I", data, pos)
                values.append(data[pos + 4 : pos + 4 + n])
                pos += 4 + n
            else:
                n, enc, clen = struct.unpack_from("<III", data, pos)
                raw = data[pos + 12 : pos + 12 + clen]
                raw = zlib.decompress(raw) if enc == 1 else raw
                values.append(list(struct.unpack("<%d%s" % (n, {"d": "d", "f": "f", "l": "q", "i": "i", "b": "B"}[code]), raw)))
                pos += 12 + clen
        return values

    def nodes(pos, end):
        while pos + struct.calcsize(head) <= end:
            stop, count, length, n = struct.unpack_from(head, data, pos)
            if stop == 0:
                return
            start = pos + struct.calcsize(head)
            yield data[start : start + n].decode(), props(start + n, count), (start + n + length, stop)
            pos = stop

    def walk(pos, end):
        for name, values, children in nodes(pos, end):
            if name == "Deformer" and len(values) >= 3 and values[2] == b"BlendShapeChannel":
                channel = values[1].split(b"\x00\x01")[0].decode()
                out[channel] = next((list(v[0]) for c, v, _ in nodes(*children) if c == "FullWeights"), [])
            else:
                walk(*children)

    walk(27, len(data))
    return out


def test_inbetween_shapes_are_usdskel_inbetweens(tmp_path):
    """Every blend shape with in-between shapes of the FBX sources is a UsdSkel ``BlendShape``
    with one ``UsdSkelInbetweenShape`` per in-between, at the weights the file's
    ``FullWeights`` give (percent / 100, sorted; the highest is the shape itself, at 1), or
    its mesh is named in a warning. (Their positions, in-betweens blended by UsdSkel, are
    checked by ``test_usd_opens_validates_and_matches_posed_vertices``.) The corpus has such
    shapes: at least one must be written."""
    if corpus_dir() is None:
        pytest.skip("corpus not found (set KEYSCENE_CORPUS)")
    written = 0
    for name, path in SOURCES:
        if not name.startswith("fbx/"):
            continue
        try:
            scene = keyscene.load(path)
        except keyscene.Error:
            continue
        nodes = [n for n in scene.nodes if n.mesh is not None and any(t["inbetweens"] for t in scene.meshes[n.mesh].blend_shapes)]
        if not nodes:
            continue
        full = fbx_full_weights(path)
        out = tmp_path / f"{path.stem}.usda"
        report = keyscene.convert(path, out, force=True)
        stage = Usd.Stage.Open(str(out))
        prims = mesh_prims(scene, stage)
        for n in nodes:
            prim = prims[n.index]
            targets = UsdSkel.BindingAPI(prim).GetBlendShapeTargetsRel().GetTargets() if prim.HasAPI(UsdSkel.BindingAPI) else []
            if not targets:
                assert any(f'"{n.name}" written as posed points' in w for w in report.warnings), (
                    f"{name}: node {n.name!r} with in-betweens is neither a rig nor in a warning"
                )
                continue
            shapes = {UsdSkel.BlendShape(stage.GetPrimAtPath(t)).GetPrim().GetName(): UsdSkel.BlendShape(stage.GetPrimAtPath(t)) for t in targets}
            for channel, weights in full.items():
                shape = shapes.get(usd_identifier(channel))
                if shape is None or len(weights) < 2:
                    continue
                want = sorted(w / 100 for w in weights)[:-1]
                got = sorted(ib.GetWeight() for ib in shape.GetInbetweens())
                assert np.allclose(got, want, atol=1e-6), f"{name}: {channel}: in-between weights {got}, FullWeights {want}"
                for ib in shape.GetInbetweens():
                    assert len(ib.GetOffsets()) == len(shape.GetPointIndicesAttr().Get())
                written += 1
    assert written >= 1


def ufbx_inbetween_weights(w, levels):
    """The effective weight of each shape of an FBX blend channel at channel weight ``w``, by
    ufbx's rule (``ufbxi_update_blend_channel`` in ufbx.c, ported here): ``levels`` are the
    shapes' full weights, sorted; an empty shape sits at 0; the walk goes outwards from 0 on
    the weight's side until a shape lies beyond ``w``, and ``w`` blends the shape before it
    and that one linearly (extrapolating past the end)."""
    eff = [0.0] * len(levels)
    last_negative = max((i for i, l in enumerate(levels) if l < 0), default=-1)
    zero = None
    prev = nxt = zero
    if w > 0:
        for i in range(last_negative + 1, len(levels)):
            prev, nxt = nxt, i
            if levels[i] > w:
                break
    else:
        if last_negative + 1 < len(levels):
            prev = last_negative + 1
        for i in range(last_negative, -1, -1):
            prev, nxt = nxt, i
            if levels[i] < w:
                break
    level = lambda k: 0.0 if k is None else levels[k]  # noqa: E731
    delta = level(nxt) - level(prev)
    if delta != 0:
        t = (w - level(prev)) / delta
        if prev is not None:
            eff[prev] = 1 - t
        if nxt is not None:
            eff[nxt] = t
    return eff


def test_usdskel_blends_inbetweens_by_the_ufbx_rule():
    """The premise of writing FBX in-betweens as UsdSkel in-betweens: OpenUSD's
    ``UsdSkel.BlendShapeQuery.ComputeSubShapeWeights`` gives every shape the weight ufbx's rule
    gives it, at weights inside 0..1 and outside (extrapolation), for in-betweens above and
    below 0 and a first in-between away from 0 (docs/usd.md, "Blend shapes")."""
    from pxr import Vt

    for inbetweens in ([0.5], [-0.499, -0.249], [0.25, 0.75], [-0.5, 0.5], [0.3, 0.6, 0.9], [-0.75]):
        stage = Usd.Stage.CreateInMemory()
        mesh = UsdGeom.Mesh.Define(stage, "/m")
        shape = UsdSkel.BlendShape.Define(stage, "/m/b")
        shape.CreateOffsetsAttr([(1, 0, 0)])
        shape.CreatePointIndicesAttr([0])
        for i, level in enumerate(inbetweens):
            ib = shape.CreateInbetween(f"i{i}")
            ib.SetWeight(level)
            ib.SetOffsets([(0, 0, 0)])
        binding = UsdSkel.BindingAPI.Apply(mesh.GetPrim())
        binding.CreateBlendShapeTargetsRel().SetTargets([shape.GetPath()])
        query = UsdSkel.BlendShapeQuery(binding)
        # Sub-shape index -> position in `levels` (the in-betweens, then the shape itself).
        names = [f"inbetweens:i{i}" for i in range(len(inbetweens))]
        levels = sorted(inbetweens) + [1.0]
        for w in sorted(set(np.round(np.linspace(-3, 3, 241), 6)) | set(levels)):
            want = ufbx_inbetween_weights(w, levels)
            got = [0.0] * len(levels)
            weights, _, subs = query.ComputeSubShapeWeights(Vt.FloatArray([w]))
            for x, s in zip(weights, subs):
                ib = query.GetInbetween(s)
                k = levels.index(inbetweens[names.index(ib.GetAttr().GetName())]) if ib else len(levels) - 1
                got[k] += x
            assert np.allclose(got, want, atol=1e-5), f"in-betweens {inbetweens}, weight {w}: UsdSkel {got}, ufbx {want}"


def all_corpus_sources():
    """(id, path) of every 3DS/PRJ and FBX file of the corpus (scanned from the folders)."""
    c = corpus_dir()
    if c is None:
        return []
    out = [(f"3ds/{p.relative_to(c / '3ds').as_posix()}", p) for p in corpus_3ds_files()]
    fbx = sorted(p for p in (c / "fbx").rglob("*") if p.suffix.lower() == ".fbx" and p.is_file())
    return out + [(f"fbx/{p.relative_to(c / 'fbx').as_posix()}", p) for p in fbx]


def node_prims(scene, stage):
    """Node index -> its Xform prim (as ``mesh_prims`` walks them)."""
    def xform_children(prim):
        return [c for c in prim.GetChildren() if c.GetTypeName() == "Xform"]

    roots = [n.index for n in scene.nodes if n.parent is None]
    out, todo = {}, list(zip(roots, xform_children(stage.GetDefaultPrim())))
    while todo:
        k, prim = todo.pop()
        out[k] = prim
        todo.extend(zip(scene.nodes[k].children, xform_children(prim)))
    return out


def animated_tracks(scene, properties):
    """Tracks of the first animation whose property is in ``properties`` and that have more
    than one key and keys of more than one value."""
    if not scene.animations:
        return []
    return [
        t
        for t in scene.animations[0].tracks
        if t["property"] in properties and len(t["times"]) > 1 and np.ptp(t["values"]) > 0
    ]


def check_times(stage, key_frames, limit=4000):
    """Whole and quarter frames of the stage's range, and every key frame with a point just
    before and after it and the middle of every two keys (within the range), at most
    ``limit`` of them, evenly thinned."""
    start, end = stage.GetStartTimeCode(), stage.GetEndTimeCode()
    times = set(np.arange(start, end + 1e-9, 0.25).tolist())
    keys = sorted(k for k in key_frames if start <= k <= end)
    for a, b in zip(keys, keys[1:]):
        times.add(0.5 * (a + b))
    for k in keys:
        times.update((k - 1e-3, k + 1e-3))
    times = sorted(t for t in times if start <= t <= end)
    step = max(1, len(times) // limit)
    return times[::step]


def test_visibility_over_time_matches_the_evaluated_hidden_state(tmp_path):
    """Every mesh whose visibility is animated (3DS hide tracks, FBX ``Visibility`` curves;
    corpus files found by scanning their tracks) gets ``token visibility`` time samples on its
    Mesh prim: OpenUSD's ``ComputeVisibility`` at whole and quarter frames, around every key
    and between keys equals keyscene's ``Pose.hidden`` of the node. At least one file must
    change a mesh's visibility."""
    if corpus_dir() is None:
        pytest.skip("corpus not found (set KEYSCENE_CORPUS)")
    checked = 0
    for name, path in all_corpus_sources():
        try:
            scene = keyscene.load(path)
        except keyscene.Error:
            continue
        tracks = [t for t in animated_tracks(scene, ("hidden", "Visibility")) if scene.nodes[t["node"]].mesh is not None]
        if not tracks:
            continue
        out = tmp_path / f"{path.stem}.usda"
        keyscene.convert(path, out, force=True)
        stage = Usd.Stage.Open(str(out))
        assert not validation_errors(stage), name
        prims = mesh_prims(scene, stage)
        fps = scene.animations[0].fps
        nodes = sorted({t["node"] for t in tracks})
        keys = [k * fps for t in tracks for k in t["times"]]
        seen = {k: set() for k in nodes}
        for t in check_times(stage, keys):
            hidden = scene.pose(frame=t).hidden
            for k in nodes:
                usd = UsdGeom.Imageable(prims[k]).ComputeVisibility(t)
                assert (usd == UsdGeom.Tokens.invisible) == hidden[k], f"{name} node {scene.nodes[k].name!r} frame {t}"
                seen[k].add(hidden[k])
        checked += sum(len(s) == 2 for s in seen.values())
    assert checked > 0, "no corpus mesh changes its visibility in the written range"


def test_animated_camera_and_light_parameters_match_the_pose(tmp_path):
    """Cameras with an animated field of view and lights with an animated colour, intensity
    or cone (corpus files found by scanning their tracks: 3DS FOV/colour/hotspot/falloff
    tracks, FBX ``Color``/``Intensity``/``InnerAngle``/``OuterAngle`` curves) have time
    samples OpenUSD interpolates to keyscene's ``Pose`` values at whole and quarter frames:
    ``GfCamera.GetFieldOfView`` within 1e-4 relative of ``Pose.camera_fov`` (the focal length
    is sampled within 1e-4 of itself), ``inputs:color``, ``inputs:intensity``,
    ``inputs:shaping:cone:angle`` (half the falloff) and ``softness`` (the share of the
    falloff outside the hotspot) within 1e-4 of the value's largest magnitude (at least 1),
    plus ``float`` rounding. At least one camera and one light must change."""
    from pxr import Gf

    if corpus_dir() is None:
        pytest.skip("corpus not found (set KEYSCENE_CORPUS)")
    camera_props = ("fov",)
    light_props = ("color", "hotspot", "falloff", "Color|X", "Color|Y", "Color|Z", "Intensity", "InnerAngle", "OuterAngle", "HotSpot", "Cone angle", "ConeAngle")
    changed = {"camera": 0, "light": 0}
    f32 = 1e-6
    for name, path in all_corpus_sources():
        try:
            scene = keyscene.load(path)
        except keyscene.Error:
            continue
        cams = {t["node"] for t in animated_tracks(scene, camera_props) if scene.nodes[t["node"]].camera is not None}
        lights = {t["node"] for t in animated_tracks(scene, light_props) if scene.nodes[t["node"]].light is not None}
        if not cams and not lights:
            continue
        out = tmp_path / f"{path.stem}.usda"
        keyscene.convert(path, out, force=True)
        stage = Usd.Stage.Open(str(out))
        assert not validation_errors(stage), name
        prims = node_prims(scene, stage)
        times = check_times(stage, [])
        poses = [scene.pose(frame=t) for t in times]
        for k in sorted(cams):
            c = scene.nodes[k].camera
            prim = next(p for p in prims[k].GetChildren() if p.GetTypeName() == "Camera")
            axis = Gf.Camera.FOVHorizontal if scene.cameras[c]["fov_axis"] == "horizontal" else Gf.Camera.FOVVertical
            want = np.array([p.camera_fov[c] for p in poses])
            got = np.array([UsdGeom.Camera(prim).GetCamera(t).GetFieldOfView(axis) for t in times])
            err = np.abs(got - want) / np.abs(want)
            assert err.max() <= TOLERANCE + f32, f"{name} camera {c}: {err.max()} at frame {times[int(err.argmax())]}"
            changed["camera"] += int(np.ptp(want) > 0)
        for k in sorted(lights):
            li = scene.nodes[k].light
            light = scene.lights[li]
            prim = next(p for p in prims[k].GetChildren() if p.GetTypeName().endswith("Light"))
            get = lambda attr: np.array([np.array(prim.GetAttribute(attr).Get(t), dtype=np.float64) for t in times])
            fall = np.clip([p.light_falloff[li] for p in poses], 0, 360)
            hot = np.minimum(np.clip([p.light_hotspot[li] for p in poses], 0, None), fall)
            cases = [
                ("inputs:color", np.array([p.light_color[li] for p in poses])),
                ("inputs:intensity", np.array([p.light_intensity[li] if light["on"] else 0.0 for p in poses])),
            ]
            if light["kind"] == "spot":
                soft = np.where(fall > 0, (fall - hot) / np.where(fall > 0, fall, 1), 0)
                cases += [("inputs:shaping:cone:angle", fall / 2), ("inputs:shaping:cone:softness", soft)]
            for attr, want in cases:
                got = get(attr).reshape(want.shape)
                scale = max(1.0, float(np.abs(want).max()))
                err = np.abs(got - want).max() / scale
                assert err <= TOLERANCE + f32, f"{name} light {light['name']!r} {attr}: {err}"
                changed["light"] += int(np.ptp(want) > 0)
    assert changed["camera"] > 0 and changed["light"] > 0, changed


FBX_USD_TYPES = {
    "Vector": "double3", "Vector3D": "double3", "Integer": "int", "int": "int", "KString": "string",
    "String": "string", "Number": "double", "double": "double", "Float": "double", "Bool": "bool",
    "bool": "bool", "Enum": "int", "enum": "int", "Color": "color3d", "ColorRGB": "color3d", "KTime": "double",
}


def fbx_text_user_properties(path):
    """name -> (FBX type, value fields as text) of every user-defined (``U`` flag) property of
    an ASCII FBX file: FBX 7 ``P: name, type, label, flags, values…`` and FBX 6.1
    ``Property: name, type, flags, values…`` records."""
    import csv

    out = {}
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        m = re.match(r"\s*(P|Property):\s*(.*)$", line)
        if not m:
            continue
        f = next(csv.reader([m.group(2)], skipinitialspace=True))
        flags_at = 3 if m.group(1) == "P" else 2
        if len(f) > flags_at and "U" in f[flags_at]:
            out[f[0]] = (f[1], f[flags_at + 1:])
    return out


def usd_user_attributes(prim):
    return {a.GetName()[len("userProperties:"):]: a for a in prim.GetAttributes() if a.GetName().startswith("userProperties:")}


def close(a, b, tol):
    a, b = np.atleast_1d(np.asarray(a, dtype=np.float64)), np.atleast_1d(np.asarray(b, dtype=np.float64))
    return a.shape == b.shape and np.abs(a - b).max() <= tol * max(1.0, float(np.abs(b).max()))


def test_user_properties_are_userproperties_attributes(tmp_path):
    """Node user properties are ``custom`` attributes ``userProperties:<name>`` of the node
    prim (Blender's convention), typed as ``docs/usd.md`` says, their default the value the
    ASCII FBX text stores (a binary file is checked against its ASCII twin's text), an enum's
    choices in ``customData``; an animated property's time samples equal its keys' values at
    the key frames (truncated for integers and booleans) and ``Node.user_properties_at`` at
    whole and quarter frames within 1e-4 of its magnitude (held types exactly). Corpus files
    found by scanning for FBX files whose nodes carry user properties; the
    ``maya_user_props_*`` files must be among them and animate some."""
    if corpus_dir() is None:
        pytest.skip("corpus not found (set KEYSCENE_CORPUS)")
    checked, animated = set(), 0
    for name, path in all_corpus_sources():
        if not name.startswith("fbx/") or "user_prop" not in path.name:
            continue
        scene = keyscene.load(path)
        twin = path.with_name(path.name.replace("_binary", "_ascii"))
        text = fbx_text_user_properties(twin) if twin.exists() else {}
        out = tmp_path / f"{path.stem}.usda"
        report = keyscene.convert(path, out, force=True)
        assert not any("user properties" in w and "node(s)" in w for w in report.warnings), report.warnings
        stage = Usd.Stage.Open(str(out))
        assert not validation_errors(stage), name
        prims = node_prims(scene, stage)
        fps = scene.animations[0].fps if scene.animations else 30.0
        for node in scene.nodes:
            if not node.user_properties:
                continue
            attrs = usd_user_attributes(prims[node.index])
            assert set(attrs) == set(node.user_properties), f"{name} {node.name}"
            for prop, value in node.user_properties.items():
                attr = attrs[prop]
                assert attr.IsCustom()
                if prop in text:
                    ty, fields = text[prop]
                    assert str(attr.GetTypeName()) == FBX_USD_TYPES[ty], f"{name} {prop}: {attr.GetTypeName()} for {ty}"
                    got = attr.Get()
                    if ty in ("KString", "String"):
                        assert got == fields[0]
                    elif ty in ("Bool", "bool"):
                        assert got == (float(fields[0]) != 0)
                    elif ty in ("Enum", "enum"):
                        assert got == int(fields[0])
                        assert list(attr.GetCustomDataByKey("choices")) == fields[1].split("~")
                    else:
                        n = 3 if FBX_USD_TYPES[ty] in ("double3", "color3d") else 1
                        assert close(got, [float(x) for x in fields[:n]], 1e-12), f"{name} {prop}"
                checked.add(path.name)
            tracks = [t for a in scene.animations[:1] for t in a.tracks if t["node"] == node.index]
            start, end = stage.GetStartTimeCode(), stage.GetEndTimeCode()
            for t in tracks:
                base, _, comp = t["property"].partition("|")
                if base not in attrs or not stage.HasAuthoredTimeCodeRange():
                    continue
                held = str(attrs[base].GetTypeName()) in ("int", "int64", "bool")
                i = "XYZ".index(comp) if comp else 0
                for k, v in zip(t["times"] * fps, t["values"]):
                    if start <= k <= end:
                        got = np.atleast_1d(np.asarray(attrs[base].Get(float(k)), dtype=np.float64))[i]
                        want = float(int(v)) if held else v
                        if str(attrs[base].GetTypeName()) == "bool":
                            want = float(int(v) != 0)
                        assert abs(got - want) <= 1e-4 * max(1.0, abs(want)), f"{name} {t['property']} key at {k}"
                animated += attrs[base].GetNumTimeSamples() > 1
            for f in check_times(stage, []):
                at = node.user_properties_at(f)
                for prop, attr in attrs.items():
                    if attr.GetNumTimeSamples() == 0:
                        continue
                    held = str(attr.GetTypeName()) in ("int", "int64", "bool")
                    assert close(attr.Get(f), at[prop], 0.0 if held else 1e-4), f"{name} {prop} at {f}: {attr.Get(f)} vs {at[prop]}"
    assert {p for p in checked if p.startswith("maya_user_props_")} and animated > 0, (checked, animated)


def test_generated_user_properties_keep_their_types(tmp_path):
    """glTF ``extras`` (a generated file, values written by the test) become typed
    ``userProperties:`` attributes: bool, int (``int64`` past 32 bits), double, string,
    double3 for three numbers, color4d for four; a name that is not an identifier is made one
    and keeps its own as ``displayName``."""
    import json

    extras = {"flag": True, "count": 7, "big": 3_000_000_000, "ratio": 0.25, "label": 'say "hi"', "dir": [1.5, -2.0, 3.25], "rgba": [0.1, 0.2, 0.3, 0.4], "bad name!": 2.5}
    gltf = {"asset": {"version": "2.0"}, "scene": 0, "scenes": [{"nodes": [0]}], "nodes": [{"name": "n", "extras": extras}]}
    src = tmp_path / "props.gltf"
    src.write_text(json.dumps(gltf), encoding="utf-8")
    out = tmp_path / "props.usda"
    keyscene.convert(src, out, force=True)
    stage = Usd.Stage.Open(str(out))
    assert not validation_errors(stage)
    prim = node_prims(keyscene.load(src), stage)[0]
    attrs = usd_user_attributes(prim)
    want_types = {"flag": "bool", "count": "int", "big": "int64", "ratio": "double", "label": "string", "dir": "double3", "rgba": "color4d", "bad_name_": "double"}
    assert {k: str(a.GetTypeName()) for k, a in attrs.items()} == want_types
    for k, v in extras.items():
        a = attrs[re.sub(r"[^A-Za-z0-9_]", "_", k)]
        if isinstance(v, (bool, int, str)):
            assert a.Get() == v
        else:
            assert close(a.Get(), v, 1e-12)
    assert attrs["bad_name_"].GetDisplayName() == "bad name!"


def multi_animation_sources():
    """(id, path, scene) of every corpus source (3DS/PRJ and FBX, scanned) that loads with
    more than one animation."""
    out = []
    for name, path in all_corpus_sources():
        try:
            scene = keyscene.load(path)
        except keyscene.Error:
            continue
        if len(scene.animations) > 1:
            out.append((name, path, scene))
    return out


def unique_identifiers(names):
    """The names as USD identifiers made unique in order, as docs/usd.md states the rule
    for prim names: the first keeps the identifier, the next get ``_2``, ``_3``, … (the first
    suffix not taken)."""
    taken, out = set(), []
    for n in names:
        base = usd_identifier(n)
        name, k = base, 2
        while name in taken:
            name, k = f"{base}_{k}", k + 1
        taken.add(name)
        out.append(name)
    return out


def test_every_animation_is_a_variant_at_the_posed_vertices(tmp_path):
    """Every corpus file with several animations (FBX takes/stacks) is written with all of
    them: the root prim has the variant set ``animation``, one variant per animation named as
    a USD identifier (unique), the first selected, the selected one's range the stage's. For
    each animation, its variant selected (``VariantSet.SetVariantSelection`` in the session layer), the stage passes
    OpenUSD's validators, the variant's ``customData`` names the animation and its rate, and at
    its first frame, a quarter frame past its middle and its last frame every mesh's world
    vertices (joint rigs read UsdSkel's way, others after ``UsdSkel.BakeSkinning``;
    ``UsdGeom.XformCache``: ``take_positions``) equal
    ``Scene.pose(frame=…, animation=i).world_positions`` within 1e-4 of the scene size."""
    if corpus_dir() is None:
        pytest.skip("corpus not found (set KEYSCENE_CORPUS)")
    found = multi_animation_sources()
    assert found, "no corpus file with several animations"
    failures = []
    for name, path, scene in found:
        out = tmp_path / f"{path.stem}.usda"
        keyscene.convert(path, out, force=True)
        stage = Usd.Stage.Open(str(out))
        root = stage.GetDefaultPrim()
        sets = root.GetVariantSets()
        assert sets.GetNames() == ["animation"], name
        vset = sets.GetVariantSet("animation")
        want = unique_identifiers([a.name for a in scene.animations])
        assert sorted(vset.GetVariantNames()) == sorted(want), name
        assert vset.GetVariantSelection() == want[0], name
        assert (stage.GetStartTimeCode(), stage.GetEndTimeCode()) == (
            root.GetCustomData()["startTimeCode"],
            root.GetCustomData()["endTimeCode"],
        ), name
        for i, variant in enumerate(want):
            with Usd.EditContext(stage, stage.GetSessionLayer()):
                vset.SetVariantSelection(variant)
            data = root.GetCustomData()
            assert data["animationName"] == scene.animations[i].name, (name, variant)
            assert data["timeCodesPerSecond"] == scene.animations[i].fps, (name, variant)
            errors = validation_errors(stage)
            if errors:
                failures.append(f"{name} {variant}: " + "; ".join(errors[:5]))
                continue
            start, end = data["startTimeCode"], data["endTimeCode"]
            frames = [start, (start + end) / 2 + 0.25, end] if end > start else [start]
            worst, size = take_positions(scene, stage, i, frames)
            print(f"{name} {variant}: frames {frames}, worst {worst[0] / size:.3g} of the size")
            if worst[0] > TOLERANCE * size:
                failures.append(f"{name} {variant}: {worst[1]}: {worst[0]:.6g} > {TOLERANCE} x {size:.6g}")
    print(f"{len(found)} files, {sum(len(s.animations) for _, _, s in found)} animations")
    assert not failures, "\n".join(failures)


def skinned_world_points(query, mesh, t):
    """A rig's skinned points read UsdSkel's way at ``t`` (``SkeletonQuery.
    ComputeSkinningTransforms`` at the time, ``SkinningQuery.ComputeSkinnedPoints``, placed by
    the skeleton prim's world matrix), or None when ``mesh`` is not a joint rig without blend
    shapes."""
    if query is None:
        return None
    skinning = query.GetSkinningQuery(mesh)
    if not skinning or not skinning.HasJointInfluences() or skinning.HasBlendShapes():
        return None
    skel = UsdSkel.BindingAPI(mesh).GetInheritedSkeleton()
    xforms = query.GetSkelQuery(skel).ComputeSkinningTransforms(t)
    points = Vt.Vec3fArray(mesh.GetAttribute("points").Get(t))
    if not skinning.ComputeSkinnedPoints(xforms, points, t):
        return None
    m = np.array(UsdGeom.XformCache(t).GetLocalToWorldTransform(skel.GetPrim()), dtype=np.float64)
    return np.array(points, dtype=np.float64).reshape(-1, 3) @ m[:3, :3] + m[3, :3]


def take_positions(scene, stage, animation, frames):
    """The largest distance between a mesh vertex of the stage as selected (flattened) and
    keyscene's posed vertex of ``animation`` at ``frames``, where, and the size. A joint rig
    without blend shapes is read UsdSkel's way at the time (``skinned_world_points``), every
    other mesh after ``UsdSkel.BakeSkinning``: the bake poses points at the joints' samples and
    interpolates the points between them, which strays from UsdSkel's reading where a joint
    turns between samples (docs/usd.md: ``blender_279_sausage``, 3.6e-3 baked and 1.1e-6 read
    UsdSkel's way at frame 9.75 of its ``Spin`` take)."""
    flat = Usd.Stage.Open(stage.Flatten())
    baked = Usd.Stage.Open(stage.Flatten())
    assert UsdSkel.BakeSkinning(baked.Traverse())
    prims = mesh_prims(scene, baked)
    rigs = mesh_prims(scene, flat)
    root = UsdSkel.Root(flat.GetDefaultPrim())
    query = None
    if root:
        query = UsdSkel.Cache()
        query.Populate(root, Usd.TraverseInstanceProxies())
    expected = {}
    for f in frames:
        pose = scene.pose(frame=f, animation=animation)
        expected.update({(f, k): pose.world_positions(k) for k in prims})
    finite = [v[np.isfinite(v).all(axis=1)] for v in expected.values() if len(v)]
    allv = np.concatenate(finite) if finite else np.zeros((0, 3))
    size = float(np.linalg.norm(allv.max(axis=0) - allv.min(axis=0))) if len(allv) else 1.0
    worst = (0.0, None)
    for f in frames:
        t = Usd.TimeCode(f)
        cache = UsdGeom.XformCache(t)
        for k, prim in prims.items():
            want = expected[(f, k)]
            if len(want) == 0:
                continue
            got = skinned_world_points(query, rigs[k], f)
            if got is None:
                got = usd_world_points(baked, prim, t, cache)
            assert got.shape == want.shape, f"{prim.GetPath()} at {f}"
            ok = np.isfinite(want).all(axis=1)
            if ok.any():
                d = float(np.linalg.norm(got[ok] - want[ok], axis=1).max())
                if d > worst[0]:
                    worst = (d, f"{prim.GetPath()} at frame {f}")
    return worst, size or 1.0


def ngon_sources(limit=4):
    """Up to `limit` corpus sources (in SOURCES' order: the scanned 3DS folder, then the FBX
    reference files) that load and hold a polygon of more than three corners."""
    out = []
    for _, path in SOURCES:
        try:
            scene = keyscene.load(path)
        except keyscene.Error:
            continue
        if any(np.diff(m.polygon_starts.astype(np.int64)).max(initial=0) > 3 for m in scene.meshes):
            out.append(path)
        if len(out) == limit:
            break
    return out


def test_triangulate_writes_triangles_at_the_same_world_positions(tmp_path):
    """`triangulate=True`: OpenUSD reads every face as a triangle (`faceVertexCounts` all 3),
    the stage validates, and every mesh's world-space points at the first frame equal those of
    the file written without it (triangulation moves no vertex)."""
    paths = ngon_sources()
    if not paths:
        pytest.skip("no corpus file with n-gons (set KEYSCENE_CORPUS)")
    for path in paths:
        scene = keyscene.load(path)
        stages = {}
        for split in (False, True):
            out = tmp_path / f"{path.stem}_{int(split)}.usda"
            keyscene.convert(path, out, force=True, triangulate=split)
            stages[split] = Usd.Stage.Open(str(out))
            assert stages[split], f"{path.name}: Usd.Stage.Open failed"
        errors = validation_errors(stages[True])
        assert not errors, f"{path.name}: " + "\n".join(errors[:20])
        plain, split = (mesh_prims(scene, stages[s]) for s in (False, True))
        t = stages[True].GetStartTimeCode() if stages[True].HasAuthoredTimeCodeRange() else Usd.TimeCode.Default()
        t = Usd.TimeCode(t)
        caches = {s: UsdGeom.XformCache(t) for s in (False, True)}
        ngons = 0
        for k, prim in split.items():
            counts = np.array(prim.GetAttribute("faceVertexCounts").Get(t), dtype=np.int64)
            assert (counts == 3).all(), f"{path.name} {prim.GetPath()}: faces of {sorted(set(counts))} corners"
            before = np.array(plain[k].GetAttribute("faceVertexCounts").Get(t), dtype=np.int64)
            # n - 2 triangles per polygon of n corners (ufbx_triangulate_face's count).
            assert len(counts) == int(np.sum(before - 2)), f"{path.name} {prim.GetPath()}"
            ngons += int(np.sum(before > 3))
            got = usd_world_points(stages[True], prim, t, caches[True])
            want = usd_world_points(stages[False], plain[k], t, caches[False])
            np.testing.assert_array_equal(got, want, err_msg=f"{path.name} {prim.GetPath()}")
        assert ngons > 0, f"{path.name}: no n-gon written"


def moving_sources(per_kind=3):
    """Up to `per_kind` 3DS and `per_kind` FBX corpus sources (SOURCES' order) whose first
    animation moves a mesh vertex between its first and last frame."""
    out, counts = [], {"3ds": 0, "fbx": 0}
    for key, path in SOURCES:
        kind = key.split("/")[0]
        if counts[kind] == per_kind:
            continue
        try:
            scene = keyscene.load(path)
        except keyscene.Error:
            continue
        if not scene.animations or not any(n.mesh is not None for n in scene.nodes):
            continue
        a, b = scene.animations[0].frame_range
        if not (np.isfinite(a) and np.isfinite(b) and b > a):
            continue
        first, last = scene.pose(frame=a, animation=0), scene.pose(frame=b, animation=0)
        meshes = [k for k, n in enumerate(scene.nodes) if n.mesh is not None]
        if any(not np.allclose(first.world_positions(k), last.world_positions(k), equal_nan=True) for k in meshes):
            out.append(path)
            counts[kind] += 1
    return out


def test_tolerance_bounds_the_posed_vertices_and_thins_the_samples(tmp_path):
    """`tolerance=1e-2` (CLI `--tolerance`): every mesh's world-space vertices read through
    OpenUSD (skinning baked) at every quarter frame of the first ten frames and at the last
    frame are within 1e-2 of the scene size of keyscene's own pose, and the layer holds no more
    time samples than at the default 1e-4 (fewer for some file: what is resampled thins)."""
    paths = moving_sources()
    if not paths:
        pytest.skip("no animated corpus file (set KEYSCENE_CORPUS)")
    fewer = []
    for path in paths:
        scene = keyscene.load(path)
        samples = {}
        for r in (1e-4, 1e-2):
            out = tmp_path / f"{path.stem}_{r}.usda"
            keyscene.convert(path, out, force=True, tolerance=r)
            layer = Sdf.Layer.FindOrOpen(str(out))
            count = []
            layer.Traverse(Sdf.Path.absoluteRootPath, lambda p: count.append(layer.GetNumTimeSamplesForPath(p)) if p.IsPropertyPath() else None)
            samples[r] = sum(count)
        # Source keys USD holds exactly and the frame grid stay at any bound; only what is
        # resampled between them thins.
        assert samples[1e-2] <= samples[1e-4], f"{path.name}: {samples}"
        fewer.append(samples[1e-2] < samples[1e-4])
        stage = Usd.Stage.Open(str(tmp_path / f"{path.stem}_0.01.usda"))
        assert not validation_errors(stage)
        baked = Usd.Stage.Open(stage.Flatten())
        assert UsdSkel.BakeSkinning(baked.Traverse())
        prims = mesh_prims(scene, baked)
        start, end = baked.GetStartTimeCode(), baked.GetEndTimeCode()
        frames = sorted({min(start + q / 4, end) for q in range(41)} | {end})
        poses = {f: scene.pose(frame=f, animation=0) for f in frames}
        want = {(f, k): poses[f].world_positions(k) for f in frames for k in prims}
        allv = np.concatenate([v[np.isfinite(v).all(axis=1)] for v in want.values() if len(v)])
        size = float(np.linalg.norm(allv.max(axis=0) - allv.min(axis=0))) or 1.0
        for f in frames:
            t = Usd.TimeCode(f)
            cache = UsdGeom.XformCache(t)
            for k, prim in prims.items():
                w = want[(f, k)]
                ok = np.isfinite(w).all(axis=1)
                if not ok.any():
                    continue
                got = usd_world_points(baked, prim, t, cache)
                d = float(np.linalg.norm(got[ok] - w[ok], axis=1).max())
                assert d <= 1e-2 * size, f"{path.name} {prim.GetPath()} at {f}: {d:.3g} > 1e-2 x {size:.3g}"
    assert any(fewer), f"no file thinned at 1e-2: {[p.name for p in paths]}"

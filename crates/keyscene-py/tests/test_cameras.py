"""Cameras through Python: ``Scene.cameras`` gives an orthographic camera's projection and its
``xmag``/``ymag``, checked against magnum's UfbxImporter reference values for
``fbx/magnum/cameras.fbx`` (``fbx/magnum/refs/cameras.expected.txt``: full view sizes, so
twice ``xmag``/``ymag``)."""

import pytest

import keyscene
from conftest import corpus_dir


def test_orthographic_cameras_keep_their_view_size():
    corpus = corpus_dir()
    if corpus is None:
        pytest.skip("no corpus")
    scene = keyscene.load(str(corpus / "fbx" / "magnum" / "cameras.fbx"))
    cams = {c["name"]: c for c in scene.cameras}
    # name: full width, full height (magnum's reference), None for perspective.
    want = {
        "cameraPerspective": None,
        "cameraOrthographicFill": (10.0, 10.0 / (16.0 / 9.0)),
        "cameraOrthographicOverscan": (10.0 * 16.0 / 9.0, 10.0),
    }
    for name, size in want.items():
        c = cams[name]
        if size is None:
            assert c["projection"] == "perspective"
            assert c["xmag"] is None and c["ymag"] is None
        else:
            assert c["projection"] == "orthographic"
            assert c["xmag"] * 2 == pytest.approx(size[0], rel=1e-6)
            assert c["ymag"] * 2 == pytest.approx(size[1], rel=1e-6)

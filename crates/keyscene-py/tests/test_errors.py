"""Every kind of error reaches Python as its own exception class, with the file named, the
place in it and the command line's sentence; bad input never crashes the interpreter."""

import os
import random

import pytest

import keyscene
from conftest import EXAMPLES


def test_a_missing_input_is_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError) as e:
        keyscene.load(tmp_path / "nope.fbx")
    assert isinstance(e.value, keyscene.NotFoundError) and isinstance(e.value, keyscene.Error)
    assert e.value.path == str(tmp_path / "nope.fbx")
    assert "nope.fbx" in str(e.value)
    with pytest.raises(FileNotFoundError):
        keyscene.convert(tmp_path / "nope.3ds", tmp_path / "out.glb")


def test_a_truncated_3ds_names_the_file_and_the_chunk(tmp_path):
    data = (EXAMPLES / "FLY.3DS").read_bytes()
    bad = tmp_path / "cut.3ds"
    bad.write_bytes(data[: len(data) // 3])
    with pytest.raises(keyscene.BadInputError) as e:
        keyscene.load(bad)
    err = e.value
    assert err.path == str(bad)
    assert err.place and "byte 0x" in err.place, err.place
    assert str(err).startswith(f"{bad}: 3ds: ") and err.message == str(err)


def test_an_empty_file_is_no_scene(tmp_path):
    empty = tmp_path / "empty.fbx"
    empty.write_bytes(b"")
    with pytest.raises(keyscene.BadInputError, match="empty"):
        keyscene.load(empty)
    with pytest.raises(keyscene.BadInputError):
        keyscene.load_bytes(b"")


def test_garbage_bytes_are_an_error_or_a_warned_load_never_a_crash():
    """Hostile bytes raise keyscene.Error, or load what is usable with a warning (as ufbx
    does); a result without a word of warning would be an empty success."""
    rng = random.Random(7)
    heads = (b"Kaydara FBX Binary  \x00\x1a\x00", b"MM", b"glTF\x02\x00\x00\x00", b"3DA_", b"; FBX 7.4.0\n")
    for k in range(200):
        junk = heads[k % len(heads)] + bytes(rng.randrange(256) for _ in range(rng.randrange(1, 300)))
        try:
            scene = keyscene.load_bytes(junk)
        except keyscene.Error as e:
            assert str(e)
            continue
        assert scene.warnings, junk


def test_limits_are_their_own_kind():
    data = (EXAMPLES / "FLY.3DS").read_bytes()
    with pytest.raises(keyscene.LimitError) as e:
        keyscene.load_bytes(data, format="3ds", name="FLY.3DS", ) if False else keyscene.load(EXAMPLES / "FLY.3DS", limits={"max_elements": 10})
    assert e.value.place is not None


def test_an_existing_output_is_file_exists(tmp_path):
    out = tmp_path / "fly.glb"
    keyscene.convert(EXAMPLES / "FLY.3DS", out)
    with pytest.raises(FileExistsError) as e:
        keyscene.convert(EXAMPLES / "FLY.3DS", out)
    assert isinstance(e.value, keyscene.OutputExistsError)
    assert e.value.path == str(out) and "--force" in str(e.value)
    keyscene.convert(EXAMPLES / "FLY.3DS", out, force=True)
    with pytest.raises(keyscene.OutputExistsError):
        keyscene.load(EXAMPLES / "FLY.3DS").save(out)


def test_bad_options_are_value_errors(tmp_path):
    scene = keyscene.load(EXAMPLES / "FLY.3DS")
    with pytest.raises(ValueError) as e:
        scene.pose(frame=0, animation="Walk")
    assert isinstance(e.value, keyscene.OptionError) and "Walk" in str(e.value)
    with pytest.raises(keyscene.OptionError):
        scene.pose(frame=0, animation=3)
    with pytest.raises(keyscene.OptionError, match="exactly one"):
        scene.pose()
    with pytest.raises(keyscene.OptionError, match="bind pose"):
        scene.pose(frame=0, bind_pose="skinCluster1")
    with pytest.raises(keyscene.OptionError, match="fbx-ascii"):
        keyscene.convert(EXAMPLES / "FLY.3DS", tmp_path / "a.glb", fbx_ascii=True)
    with pytest.raises(keyscene.OptionError, match="7400 or 7500"):
        keyscene.convert(EXAMPLES / "FLY.3DS", tmp_path / "a.fbx", fbx_version=7300)
    with pytest.raises(keyscene.OptionError, match="camera"):
        scene.render(camera="no such camera", size=(16, 16))
    with pytest.raises(keyscene.OptionError):
        keyscene.convert_all(EXAMPLES, tmp_path / "o", "xyz")


def test_an_unknown_keyword_is_a_type_error_listing_the_valid_ones(tmp_path):
    with pytest.raises(TypeError, match="resample_fps"):
        keyscene.convert(EXAMPLES / "FLY.3DS", tmp_path / "a.glb", resample=30)
    with pytest.raises(TypeError, match="base_dir"):
        keyscene.load(EXAMPLES / "FLY.3DS", basedir=".")


def test_an_unknown_output_format_is_bad_input(tmp_path):
    with pytest.raises(keyscene.Error, match="unknown output format"):
        keyscene.convert(EXAMPLES / "FLY.3DS", tmp_path / "a.xyz")


def test_a_folder_that_does_not_exist_is_not_found(tmp_path):
    with pytest.raises(FileNotFoundError):
        keyscene.convert_all(tmp_path / "missing", tmp_path / "out", "glb")


def test_a_source_is_never_replaced_even_with_force(tmp_path):
    src = tmp_path / "a.3ds"
    src.write_bytes((EXAMPLES / "FLY.3DS").read_bytes())
    before = src.read_bytes()
    (tmp_path / "sub").mkdir()
    hard = tmp_path / "hard.3ds"
    os.link(src, hard)
    for out in (src, tmp_path / "sub" / ".." / "a.3ds", hard):
        with pytest.raises(FileExistsError) as e:
            keyscene.convert(src, out, force=True)
        assert isinstance(e.value, keyscene.OutputExistsError) and "never replaced" in str(e.value)
    with pytest.raises(keyscene.OutputExistsError):
        keyscene.load(src).save(src, force=True)
    assert src.read_bytes() == before


def test_other_io_failures_are_os_errors_naming_the_file(tmp_path):
    # A folder where a scene file is expected: an I/O error, not "bad input".
    with pytest.raises(keyscene.IoError) as e:
        keyscene.load(tmp_path)
    assert isinstance(e.value, OSError) and e.value.path == str(tmp_path)
    # An output whose folder does not exist: not found, naming the output.
    (tmp_path / "afile").write_text("x")
    out = tmp_path / "afile" / "out.glb"
    with pytest.raises(FileNotFoundError) as e:
        keyscene.convert(EXAMPLES / "FLY.3DS", out)
    assert isinstance(e.value, keyscene.NotFoundError) and e.value.path == str(out)
    assert not out.exists()

"""Material shading models and PBR values through Python (issue 33 §1), on the generated FBX
cases of ``crates/keyscene/tests/data/pbr`` (hand-built; the Rust test ``fbx_pbr_ufbx``
checks them against ufbx). Expected values are computed by hand from the files."""

import pathlib

import pytest

import keyscene

DATA = pathlib.Path(__file__).resolve().parents[2] / "keyscene" / "tests" / "data" / "pbr"


def test_openpbr_values_come_apart_with_their_factors():
    (m,) = keyscene.load(str(DATA / "openpbr_luminance.fbx")).materials
    assert m["shading_model"] == "openpbr_material"
    pbr = m["pbr"]
    # emission_weight 0.5 × emission_luminance 1000 (ufbx multiplies them).
    assert pbr["emission_factor"]["value"][0] == pytest.approx(500.0)
    assert pbr["emission_factor"]["stored"] is True
    assert pbr["emission_color"]["value"][:3] == pytest.approx([1.0, 0.5, 0.0])
    assert pbr["sheen_factor"]["value"][0] == pytest.approx(0.25)
    assert pbr["coat_factor"]["value"][0] == pytest.approx(0.75)
    assert pbr["emission_color"]["map"] is None


def test_maps_carry_their_file_and_channel():
    (m,) = keyscene.load(str(DATA / "arnold_binding_table.fbx")).materials
    assert m["shading_model"] == "arnold_standard_surface"
    base = m["pbr"]["base_color"]
    assert (base["map"], base["channel"]) == ("base.png", "rgb")
    assert m["pbr"]["roughness"]["value"][0] == pytest.approx(0.3)


def test_phong_materials_have_a_model_and_no_pbr_values():
    ms = keyscene.load(str(DATA / "phong_shininess.fbx")).materials
    assert [m["shading_model"] for m in ms] == ["phong", "phong", "lambert"]
    assert all(m["pbr"] == {} for m in ms)

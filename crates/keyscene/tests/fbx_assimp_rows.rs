//! The expectations MANIFEST.md lists for the `assimp/` corpus files (from assimp's own unit
//! tests), as far as the scene model expresses them: hierarchy and names, triangle counts,
//! global settings, Phong material values and texture file names. Values are typed from
//! MANIFEST.md, not computed by keyscene.
//!
//! Not checked: embedded texture bytes (the scene keeps file names only) and 3ds Max PBR
//! material properties (no PBR fields in the scene model yet).

mod common;

use std::path::Path;

use glam::Vec3;
use keyscene::scene::{MapSlot, Scene, Units};
use libtest_mimic::Failed;

fn load(corpus: &Path, name: &str) -> Result<Scene, Failed> {
    Ok(keyscene::load(&corpus.join("fbx/assimp").join(name)).map_err(|e| format!("{name}: {e}"))?.0)
}

fn names(scene: &Scene, ids: &[usize]) -> Vec<String> {
    let mut v: Vec<String> = ids.iter().map(|&i| scene.nodes[i].name.clone()).collect();
    v.sort();
    v
}

fn expect(ok: bool, what: impl FnOnce() -> String) -> Result<(), Failed> {
    if ok {
        Ok(())
    } else {
        Err(what().into())
    }
}

fn box_has_twelve_triangles(c: &Path) -> Result<(), Failed> {
    let s = load(c, "box.fbx")?;
    let meshes: Vec<_> = s.nodes.iter().filter_map(|n| n.mesh).collect();
    let tris: usize = meshes
        .iter()
        .map(|&m| &s.meshes[m])
        .map(|m| {
            (0..m.polygon_count()).map(|p| m.polygon(p).len().saturating_sub(2)).sum::<usize>()
        })
        .sum();
    expect(meshes.len() == 1 && tris == 12, || format!("{} meshes, {tris} triangles", meshes.len()))
}

fn cubes_nonames_root_has_two_children(c: &Path) -> Result<(), Failed> {
    let s = load(c, "cubes_nonames.fbx")?;
    expect(s.roots.len() == 2, || format!("{} roots", s.roots.len()))
}

fn cubes_with_names_keep_duplicate_utf8_names(c: &Path) -> Result<(), Failed> {
    let s = load(c, "cubes_with_names.fbx")?;
    expect(names(&s, &s.roots) == ["Cube2", "Cube3"], || {
        format!("roots {:?}", names(&s, &s.roots))
    })?;
    for &r in &s.roots {
        let kids = names(&s, &s.nodes[r].children);
        expect(kids == ["Куб1"], || format!("children of {}: {kids:?}", s.nodes[r].name))?;
    }
    Ok(())
}

fn cubes_with_mirroring_and_pivot_hierarchy(c: &Path) -> Result<(), Failed> {
    let s = load(c, "cubes_with_mirroring_and_pivot.fbx")?;
    expect(names(&s, &s.roots) == ["Cube2", "Cube3"], || {
        format!("roots {:?}", names(&s, &s.roots))
    })?;
    let cube2 = s.roots.iter().copied().find(|&r| s.nodes[r].name == "Cube2").unwrap_or(0);
    let kids = names(&s, &s.nodes[cube2].children);
    expect(kids == ["Cube1"], || format!("children of Cube2: {kids:?}"))
}

fn odd_floats_and_near_identity_import(c: &Path) -> Result<(), Failed> {
    for f in [
        "close_to_identity_transforms.fbx",
        "cubes_with_outofrange_float.fbx",
        "spider.fbx",
        "animation_with_skeleton.fbx",
    ] {
        let s = load(c, f)?;
        expect(!s.roots.is_empty(), || format!("{f}: no root"))?;
    }
    Ok(())
}

fn global_settings_unit_scale_500(c: &Path) -> Result<(), Failed> {
    let s = load(c, "global_settings.fbx")?;
    let creator = s
        .meta
        .properties
        .iter()
        .find(|(k, _)| k == "creator")
        .map(|(_, v)| v.as_str())
        .unwrap_or("");
    expect(
        s.meta.units == Units::Metres(5.0)
            && s.meta.version == Some(7400)
            && creator.starts_with("Blender"),
        || format!("units {:?} version {:?} creator {creator:?}", s.meta.units, s.meta.version),
    )
}

fn phong_cube_material_values(c: &Path) -> Result<(), Failed> {
    let s = load(c, "phong_cube.fbx")?;
    let m = s.materials.first().ok_or("no material")?;
    let near = |a: Vec3, b: [f32; 3]| (a - Vec3::from(b)).abs().max_element() < 1e-6;
    expect(
        near(m.effective_diffuse(), [0.5, 0.25, 0.25])
            && near(m.specular, [0.25, 0.25, 0.5])
            && near(m.effective_ambient(), [0.125, 0.25, 0.25])
            && (m.shininess_strength - 0.5).abs() < 1e-6
            && (m.transparency - 0.5).abs() < 1e-6
            && (m.shininess * 100.0 - 10.0).abs() < 1e-4,
        || format!("{m:?}"),
    )
}

fn diffuse_texture_file(c: &Path, file: &str, want: &str) -> Result<(), Failed> {
    let s = load(c, file)?;
    let maps: Vec<&str> = s
        .materials
        .iter()
        .flat_map(|m| &m.maps)
        .filter(|t| t.slot == MapSlot::Diffuse)
        .map(|t| t.file.as_str())
        .collect();
    expect(s.materials.len() == 1 && maps == [want], || {
        format!("{file}: {} materials, diffuse maps {maps:?}", s.materials.len())
    })
}

fn main() {
    let corpus = common::corpus();
    let t = |name: &str, f: fn(&Path) -> Result<(), Failed>| {
        common::corpus_trial(format!("assimp::{name}"), &corpus, f)
    };
    let trials = vec![
        t("box_has_twelve_triangles", box_has_twelve_triangles),
        t("cubes_nonames_root_has_two_children", cubes_nonames_root_has_two_children),
        t("cubes_with_names_keep_duplicate_utf8_names", cubes_with_names_keep_duplicate_utf8_names),
        t("cubes_with_mirroring_and_pivot_hierarchy", cubes_with_mirroring_and_pivot_hierarchy),
        t("odd_floats_and_near_identity_import", odd_floats_and_near_identity_import),
        t("global_settings_unit_scale_500", global_settings_unit_scale_500),
        t("phong_cube_material_values", phong_cube_material_values),
        t("orphan_embedded_texture_keeps_its_relative_path", |c| {
            diffuse_texture_file(
                c,
                "box_orphant_embedded_texture.fbx",
                "..\\Primitives\\GridGrey.tga",
            )
        }),
        t("embedded_ascii_box_texture_path", |c| {
            diffuse_texture_file(c, "embedded_ascii/box.FBX", "..\\..\\..\\Desktop\\uv_test.png")
        }),
        t("fragmented_embedded_texture_path", |c| {
            diffuse_texture_file(
                c,
                "embedded_ascii/box_embedded_texture_fragmented.fbx",
                "paper.png",
            )
        }),
    ];
    common::run(trials)
}

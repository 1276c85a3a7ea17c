//! FBX tangent layers and texture wrap modes against the `ufbx` crate (issue #5).
//!
//! - `tangents/FILE`: every corpus FBX file that names a `LayerElementTangent`. Per mesh node
//!   (paired by name and corner count; names ufbx turned into U+FFFD are skipped, as in
//!   `fbx_ufbx_differential`) and per polygon corner, keyscene's
//!   `Mesh::tangents` and `Mesh::binormals` equal ufbx's `vertex_tangent` and
//!   `vertex_bitangent` (1e-6: f32 against f64). Then the glTF primitives the writer builds
//!   (`geometry::primitives` + `add_tangents`, identity bake) carry, at every glTF vertex, the
//!   TANGENT expected from ufbx's values at one of that source vertex's corners: xyz =
//!   ufbx's tangent normalised, w = `sign(dot(cross(N, T), B))` from ufbx's normal, tangent
//!   and bitangent (glTF 2.0 §3.7.2.1). Vertices with a corner whose ufbx tangent is zero
//!   are skipped (the writer derives those, and which corner a glTF vertex came from is not
//!   recorded), and so are vertices where ufbx has no normal or bitangent. Files ufbx does
//!   not load are reported ignored.
//! - `wrap/FILE`: the corpus files whose textures set `WrapModeU`/`WrapModeV` to 1. Every
//!   keyscene texture map whose file name matches a ufbx texture's has that texture's
//!   `wrap_u`/`wrap_v`, and at least one clamped map is compared per file.

mod common;

use std::path::Path;

use glam::{DMat4, DVec3};
use keyscene::formats::gltf::geometry;
use keyscene::scene::WrapMode;
use libtest_mimic::{Failed, Trial};

/// Files whose textures store `WrapModeU`/`WrapModeV` 1 (clamp) somewhere (`grep -a`).
const WRAP_FILES: &[&str] = &[
    "magnum/texture-wrap-modes.fbx",
    "fbx-conv/softimage_cube_anim.fbx",
    "fbx-conv/softimage_cube_anim_2clips_ascii.fbx",
    "fbx-conv/softimage_cube_anim_linear.fbx",
    "fbx-conv/softimage_cube_multi_uv.fbx",
    "fbx-conv/softimage_cube_single_uv_multi_material.fbx",
];

fn dvec(v: ufbx::Vec3) -> DVec3 {
    DVec3::new(v.x, v.y, v.z)
}

/// ufbx's value of `attr` at corner `c`, when it has the attribute.
fn at(attr: &ufbx::VertexVec3, c: usize) -> Option<DVec3> {
    attr.exists.then(|| dvec(attr.values[attr.indices[c] as usize]))
}

fn check_tangents(path: &Path) -> Result<(), String> {
    let (scene, theirs) = common::ufbx_corpus::load_both(path)?;
    let (mut compared, mut skipped) = (0, 0);
    for node in theirs.nodes.iter().filter(|n| !n.is_root) {
        let Some(mesh) = node.mesh.as_ref() else { continue };
        if !mesh.vertex_tangent.exists {
            continue;
        }
        // Pairs by name and corner count; names ufbx made valid UTF-8 differently (with
        // U+FFFD) have no partner and are skipped, as in fbx_ufbx_differential.
        let name: &str = &node.element.name;
        if name.contains('\u{FFFD}') {
            skipped += 1;
            continue;
        }
        let Some(ours) = scene
            .nodes
            .iter()
            .filter(|n| n.name == name)
            .filter_map(|n| n.mesh.map(|m| &scene.meshes[m]))
            .find(|m| m.corner_vertices.len() == mesh.num_indices)
        else {
            return Err(format!("{name:?}: no keyscene mesh of {} corners", mesh.num_indices));
        };
        let (Some(t), Some(b)) = (&ours.tangents, &ours.binormals) else {
            return Err(format!("{name:?}: keyscene read no tangents or binormals"));
        };
        // Scene attributes, corner by corner.
        for p in 0..ours.polygon_count() {
            for c in ours.polygon_corners(p) {
                let v = ours.corner_vertices[c];
                for (what, ours, theirs) in
                    [("tangent", t, &mesh.vertex_tangent), ("binormal", b, &mesh.vertex_bitangent)]
                {
                    let got = ours.get(v, c, p).map(|x| x.as_dvec3());
                    let want = at(theirs, c);
                    let close = match (got, want) {
                        (Some(g), Some(w)) => (g - w).abs().max_element() < 1e-6,
                        _ => false,
                    };
                    if !close {
                        return Err(format!("{name:?} corner {c}: {what} {got:?}, ufbx {want:?}"));
                    }
                }
                compared += 1;
            }
        }
        // The glTF writer's TANGENT at every vertex.
        let (mut prims, _) = geometry::primitives(ours, DMat4::IDENTITY);
        for prim in &mut prims {
            geometry::add_tangents(prim);
            let tangents = prim.tangents.as_ref().ok_or(format!("{name:?}: no TANGENT"))?;
            for (i, got) in tangents.iter().enumerate() {
                let v = prim.source_vertices[i];
                let corners: Vec<usize> =
                    (0..mesh.num_indices).filter(|&c| mesh.vertex_indices[c] == v).collect();
                // A corner whose tangent is zero gets the derived one: nothing to compare.
                let zero =
                    |c: &usize| at(&mesh.vertex_tangent, *c).is_none_or(|t| t.length() <= 1e-6);
                if corners.is_empty() || corners.iter().any(zero) {
                    continue;
                }
                let expected: Vec<[f64; 4]> = corners
                    .iter()
                    .filter_map(|&c| {
                        let t = at(&mesh.vertex_tangent, c)?;
                        let (n, b) = (at(&mesh.vertex_normal, c)?, at(&mesh.vertex_bitangent, c)?);
                        let w = if n.cross(t).dot(b) < 0.0 { -1.0 } else { 1.0 };
                        let t = t.normalize();
                        Some([t.x, t.y, t.z, w])
                    })
                    .collect();
                if expected.is_empty() {
                    continue; // ufbx has no normal or bitangent here (no handedness to check)
                }
                let close =
                    |e: &[f64; 4]| e.iter().zip(got).all(|(e, g)| (e - *g as f64).abs() < 1e-5);
                if !expected.iter().any(close) {
                    return Err(format!(
                        "{name:?} glTF vertex {i} (source vertex {v}): TANGENT {got:?}, from ufbx one of {expected:?}"
                    ));
                }
            }
        }
    }
    if compared == 0 && skipped == 0 {
        return Err("no mesh with tangents compared".into());
    }
    Ok(())
}

fn file_name(s: &str) -> String {
    s.rsplit(['/', '\\']).next().unwrap_or(s).to_lowercase()
}

fn check_wrap(path: &Path) -> Result<(), String> {
    let (scene, theirs) = common::ufbx_corpus::load_both(path)?;
    let mode = |w: ufbx::WrapMode| match w {
        ufbx::WrapMode::Clamp => WrapMode::Clamp,
        _ => WrapMode::Repeat,
    };
    let mut compared = 0;
    let mut clamped = 0;
    for tex in theirs.textures.iter() {
        let names = [&tex.relative_filename, &tex.filename].map(|s| file_name(s));
        let want = [mode(tex.wrap_u), mode(tex.wrap_v)];
        for map in scene.materials.iter().flat_map(|m| &m.maps) {
            if names.contains(&file_name(&map.file)) {
                if map.wrap != want {
                    return Err(format!("{}: wrap {:?}, ufbx {want:?}", map.file, map.wrap));
                }
                compared += 1;
                clamped += usize::from(want.contains(&WrapMode::Clamp));
            }
        }
    }
    if clamped == 0 {
        return Err(format!("no clamped texture compared ({compared} compared)"));
    }
    Ok(())
}

fn main() {
    let corpus = common::corpus();
    let mut trials: Vec<Trial> = Vec::new();
    // Every corpus FBX file that names a tangent layer (binary files hold the record name as
    // text too).
    for common::ufbx_corpus::FbxFile { path, rel, ufbx_loads: loads, .. } in
        common::ufbx_corpus::fbx_files(&corpus)
    {
        let has = std::fs::read(&path).is_ok_and(|b| {
            b.windows(b"LayerElementTangent".len()).any(|w| w == b"LayerElementTangent")
        });
        if !has {
            continue;
        }
        let name = format!("tangents/{rel}");
        trials.push(if loads {
            common::corpus_trial(name, &corpus, move |_| {
                check_tangents(&path).map_err(Failed::from)
            })
        } else {
            Trial::test(format!("ignored: ufbx cannot load it :: {name}"), || Ok(()))
                .with_ignored_flag(true)
        });
    }
    if corpus.is_none() {
        trials.push(common::corpus_trial("tangents", &corpus, |_| Ok(())));
    }
    for &rel in WRAP_FILES {
        trials.push(common::corpus_trial(format!("wrap/{rel}"), &corpus, move |c| {
            check_wrap(&c.join("fbx").join(rel)).map_err(Failed::from)
        }));
    }
    common::run(trials)
}

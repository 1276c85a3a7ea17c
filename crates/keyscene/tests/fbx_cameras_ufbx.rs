//! FBX cameras against the `ufbx` crate (issue 33 §2): projection, field of view and
//! orthographic size as the FBX SDK's rules give them (`ufbxi_update_camera`).
//!
//! The files: every corpus FBX file ufbx loads (not a negative case) in which ufbx finds a
//! camera — found by that scan, not listed. For each camera node (paired by name, names that
//! name one node only):
//!
//! - **Projection**: keyscene's [`Projection`] is orthographic exactly when ufbx's
//!   `projection_mode` is; an orthographic camera's `xmag`/`ymag` equal half ufbx's
//!   `orthographic_size` (the view's full width and height: ufbx's own tests read Maya's
//!   orthographic width 10 as size 10), relative 1e-6.
//! - **Field of view**: the tangents of half the horizontal and vertical fields of view that
//!   keyscene's `fov_degrees` along `fov_axis` and `aspect` give (only the one along the axis
//!   where the file states nothing the aspect comes from) equal ufbx's
//!   `field_of_view_tan` (relative 1e-6: ufbx converts millimetres to inches and degrees to
//!   radians with `float` constants, keyscene in `f64`), for perspective and orthographic
//!   cameras alike.
//! - **Clip planes**: `near`/`far`, where keyscene states them, equal ufbx's
//!   `near_plane`/`far_plane`.
//! - **FBX written back**: the FBX keyscene writes (`formats::fbx::export::write`, binary
//!   7.4), loaded by ufbx, has every compared camera with the same projection mode and
//!   `orthographic_size` (orthographic) or `field_of_view_tan` (perspective) as ufbx's reading
//!   of the source (relative 1e-6).
//! - **glTF**: the GLB keyscene writes, read back, has the same projection and `xmag`/`ymag`
//!   (relative 1e-6: glTF stores `f32`).

mod common;

use std::collections::HashMap;
use std::path::Path;

use keyscene::scene::{FovAxis, NodeKind, Projection};

/// Whether `a` and `b` agree to `rel` relative to the larger magnitude (at least 1e-12).
fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * a.abs().max(b.abs()).max(1e-12)
}

/// Compares every camera of `path`; returns how many it compared, and how many of them are
/// orthographic.
fn check(path: &Path) -> Result<(usize, usize), String> {
    let (scene, theirs) = common::ufbx_corpus::load_both(path)?;
    let mut count: HashMap<&str, usize> = HashMap::new();
    for n in &scene.nodes {
        *count.entry(n.name.as_str()).or_default() += 1;
    }
    let (mut compared, mut orthographic) = (0, 0);
    for node in theirs.nodes.iter() {
        let Some(cam) = node.camera.as_ref() else { continue };
        let name = node.element.name.as_ref();
        if count.get(name) != Some(&1) {
            continue;
        }
        let ours = scene.nodes.iter().find(|n| n.name == name).expect("counted above");
        let NodeKind::Camera(c) = ours.kind else {
            return Err(format!("{name}: ufbx has a camera, keyscene a {}", ours.kind.name()));
        };
        let c = &scene.cameras[c];
        let t = (c.fov_degrees.to_radians() * 0.5).tan();
        let want = cam.field_of_view_tan;
        // Without a stated aspect (no render aspect, film or second angle in the file) only
        // the angle along the axis is keyscene's: the other is the writer's assumption.
        let (tx, ty) = match (c.fov_axis, c.aspect) {
            (FovAxis::Horizontal, Some(aspect)) => (t, t / aspect),
            (FovAxis::Vertical, Some(aspect)) => (t * aspect, t),
            (FovAxis::Horizontal, None) => (t, want.y),
            (FovAxis::Vertical, None) => (want.x, t),
        };
        if !close(tx, want.x, 1e-6) || !close(ty, want.y, 1e-6) {
            return Err(format!(
                "{name}: tan half fov ({tx}, {ty}), ufbx ({}, {}); fov {} {:?} aspect {:?}",
                want.x, want.y, c.fov_degrees, c.fov_axis, c.aspect
            ));
        }
        let ortho = cam.projection_mode == ufbx::ProjectionMode::Orthographic;
        match (c.projection, ortho) {
            (Projection::Perspective, false) => {}
            (Projection::Orthographic { xmag, ymag }, true) => {
                orthographic += 1;
                let s = cam.orthographic_size;
                if !close(2.0 * xmag, s.x, 1e-6) || !close(2.0 * ymag, s.y, 1e-6) {
                    return Err(format!(
                        "{name}: xmag/ymag {xmag}/{ymag}, ufbx size {}/{}",
                        s.x, s.y
                    ));
                }
            }
            (p, _) => return Err(format!("{name}: {p:?}, ufbx {:?}", cam.projection_mode)),
        }
        for (what, got, want) in [("near", c.near, cam.near_plane), ("far", c.far, cam.far_plane)] {
            if got.is_some_and(|g| !close(g, want, 1e-6)) {
                return Err(format!("{name}: {what} {got:?}, ufbx {want}"));
            }
        }
        compared += 1;
    }
    check_written(&scene, &theirs, &count)?;
    Ok((compared, orthographic))
}

/// The FBX and glTF keyscene writes from `scene` keep the cameras ufbx read in the source
/// (`theirs`), paired by node name (`count`: how many nodes bear each name).
fn check_written(
    scene: &keyscene::scene::Scene,
    theirs: &ufbx::Scene,
    count: &HashMap<&str, usize>,
) -> Result<(), String> {
    use keyscene::formats::{fbx::export, gltf};
    let (bytes, _) = export::write(scene, &export::WriteOptions::default())
        .map_err(|e| format!("FBX write: {e}"))?;
    let back = ufbx::load_memory(&bytes, ufbx::LoadOpts::default())
        .map_err(|e| format!("ufbx on the written FBX: {:?}", e.description))?;
    let glb = gltf::write(scene, &gltf::WriteOptions::default()).map_err(|e| e.to_string())?;
    let (from_glb, _) =
        gltf::read(&glb.main, &keyscene::ReadOptions::default()).map_err(|e| e.to_string())?;
    for node in theirs.nodes.iter() {
        let Some(want) = node.camera.as_ref() else { continue };
        let name = node.element.name.as_ref();
        if count.get(name) != Some(&1) {
            continue;
        }
        let got = back
            .nodes
            .iter()
            .find(|n| n.element.name.as_ref() == name)
            .and_then(|n| n.camera.as_ref())
            .ok_or(format!("{name}: no camera in the written FBX"))?;
        let (a, b) = (got.field_of_view_tan, want.field_of_view_tan);
        let (sa, sb) = (got.orthographic_size, want.orthographic_size);
        let ortho = want.projection_mode == ufbx::ProjectionMode::Orthographic;
        let same_view = if ortho {
            close(sa.x, sb.x, 1e-6) && close(sa.y, sb.y, 1e-6)
        } else {
            close(a.x, b.x, 1e-6) && close(a.y, b.y, 1e-6)
        };
        if got.projection_mode != want.projection_mode || !same_view {
            return Err(format!(
                "{name}: written FBX {:?} tan ({}, {}) size ({}, {}), source {:?} ({}, {}) ({}, {})",
                got.projection_mode, a.x, a.y, sa.x, sa.y, want.projection_mode, b.x, b.y, sb.x, sb.y
            ));
        }
        let c = from_glb
            .nodes
            .iter()
            .find_map(|n| match n.kind {
                NodeKind::Camera(c) if n.name == name || n.name == format!("{name} axes") => {
                    from_glb.cameras.get(c)
                }
                _ => None,
            })
            .ok_or(format!("{name}: no camera in the written glTF"))?;
        match (c.projection, ortho) {
            (Projection::Perspective, false) => {}
            (Projection::Orthographic { xmag, ymag }, true)
                if close(2.0 * xmag, sb.x, 1e-6) && close(2.0 * ymag, sb.y, 1e-6) => {}
            (p, _) => {
                return Err(format!(
                    "{name}: glTF {p:?}, ufbx {:?} size ({}, {})",
                    want.projection_mode, sb.x, sb.y
                ))
            }
        }
    }
    Ok(())
}

fn main() {
    let corpus = common::corpus();
    let mut trials = Vec::new();
    for f in common::ufbx_corpus::fbx_files(&corpus) {
        if !f.ufbx_loads || common::is_negative_fbx(&f.rel) {
            continue;
        }
        let Ok(bytes) = std::fs::read(&f.path) else { continue };
        let Ok(s) = ufbx::load_memory(&bytes, ufbx::LoadOpts::default()) else { continue };
        if s.cameras.is_empty() {
            continue;
        }
        let path = f.path.clone();
        trials.push(common::corpus_trial(format!("cameras::{}", f.rel), &corpus, move |_| {
            let (n, ortho) = check(&path)?;
            eprintln!("{}: {n} cameras, {ortho} orthographic", path.display());
            Ok(())
        }));
    }
    if trials.is_empty() {
        trials.push(common::corpus_trial("cameras::corpus", &corpus, |_| {
            Err("no corpus file with a camera".into())
        }));
    }
    common::run(trials);
}

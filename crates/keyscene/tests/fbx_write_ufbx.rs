//! The FBX writer against the `ufbx` crate (issue #14 §1, "Proof"): every corpus 3DS file and
//! every positive corpus FBX file (MANIFEST.md's negative ones left out; every
//! [`FBX_SAMPLE_STEP`]th in path order) are loaded by keyscene, written with `formats::fbx::export::write`, and the written bytes
//! are
//!
//! 1. read back by our own parser with no warnings (`fbx::parse`), its `Definitions` counts
//!    equal to the objects written, every connection's ends existing, ids unique and non-zero;
//! 2. loaded by ufbx (default options) without an error;
//! 3. evaluated by ufbx at the first animation's first, middle (integer) and last frame, or at
//!    rest: every node's world matrix agrees with keyscene's evaluation of the *source* at the
//!    same time, 1e-4 × max(1, scene size) (`common::ufbx_corpus::difference`); at the first
//!    of those times every mesh's world vertex positions agree too, and skinned or blend-shaped
//!    meshes' deformed world vertices (ufbx `evaluate_skinning`, `skinned_position`) at every
//!    one of the integer times (geometry-cached meshes and 3DS mesh swaps left out);
//! 4. evaluated by ufbx *between* frames (the half frame after the first, and four times 0.37
//!    of a frame past an integer frame spread over the range): every node whose animation the
//!    writer kept key for key (it and its ancestors are not in `Report::resampled`) agrees
//!    there too — the written curves are the source's, not a sample of it;
//! 5. cameras and lights look the same way: at every time of 3. a camera's view direction and
//!    up in ufbx (its node's world +X and +Y, FBX's camera axes) equal the source's in
//!    keyscene's pose (−Z and +Y for 3DS/glTF/3DA sources, +X and +Y for FBX ones), and a
//!    light's direction (FBX −Y) the source's (−Z, or −Y for FBX);
//! 6. cameras and lights: ufbx's field of view, clip planes, light kind, colour and intensity
//!    of the written `NodeAttribute`s equal the source's.
//!
//! A source keyscene cannot load (the negative `wrong.3ds`) is reported *ignored*. A second opinion from the FBX SDK itself:
//! the `fbx2gltf::` trials run FBX2glTF 0.9.7 (`/opt/keyscene-oracles`, see
//! `shared/oracles/install_oracles.sh`) on the written 3DS files and on the written FBX files
//! whose source has a skin or blend shapes (its glTF must then have a skin / morph targets too);
//! ignored when it is absent.

mod common;

use common::ufbx_corpus::to_dmat4;

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use glam::{DMat4, DVec3};
use keyscene::anim::Time;
use keyscene::formats::fbx::{self, export};
use keyscene::scene::Scene;
use libtest_mimic::Trial;

/// One FBX corpus file of this many (positive files, path order) is converted.
const FBX_SAMPLE_STEP: usize = 1;

/// FBX2glTF from the oracle install.
const FBX2GLTF: &str = "/opt/keyscene-oracles/node/node_modules/fbx2gltf/bin/Linux/FBX2glTF";

/// Our structural lint over the written bytes (1. above).
fn lint(bytes: &[u8]) -> Result<(), String> {
    let doc = fbx::parse(bytes, &Default::default()).map_err(|e| format!("our reader: {e}"))?;
    if !doc.warnings.is_empty() {
        return Err(format!("our reader warns: {:?}", doc.warnings));
    }
    let objects = doc.root("Objects").ok_or("no Objects")?;
    let mut ids = HashSet::new();
    let mut per_type: Vec<(String, i64)> = Vec::new();
    for o in objects.children() {
        let id = o.property(0).and_then(|p| p.as_i64()).ok_or("object without an id")?;
        if id <= 0 || !ids.insert(id) {
            return Err(format!("object id {id} is zero, negative or repeated"));
        }
        match per_type.iter_mut().find(|(t, _)| t == o.name()) {
            Some((_, n)) => *n += 1,
            None => per_type.push((o.name().to_string(), 1)),
        }
    }
    let defs = doc.root("Definitions").ok_or("no Definitions")?;
    let mut total = 0;
    for t in defs.children().filter(|c| c.name() == "ObjectType") {
        let ty = t.property(0).and_then(|p| p.as_str()).unwrap_or("");
        let n = t.child("Count").and_then(|c| c.property(0)).and_then(|p| p.as_i64()).unwrap_or(-1);
        total += n;
        let have = per_type.iter().find(|(x, _)| x == ty).map_or(0, |x| x.1);
        if ty != "GlobalSettings" && have != n {
            return Err(format!("Definitions count {n} for {ty}, {have} written"));
        }
    }
    let declared = defs.child("Count").and_then(|c| c.property(0)).and_then(|p| p.as_i64());
    if declared != Some(total) {
        return Err(format!("Definitions › Count {declared:?}, object types sum to {total}"));
    }
    for c in doc.root("Connections").ok_or("no Connections")?.children() {
        for k in [1, 2] {
            let id = c.property(k).and_then(|p| p.as_i64()).ok_or("connection without ids")?;
            if !(ids.contains(&id) || id == 0 && k == 2) {
                return Err(format!("a connection names object {id}, which is not written"));
            }
        }
    }
    Ok(())
}

fn clean(name: &str) -> String {
    name.chars().filter(|&c| c != '\0').collect()
}

fn check(path: &Path) -> Result<(), String> {
    let (scene, _) = keyscene::load(path).map_err(|e| format!("keyscene cannot load it: {e}"))?;
    let (bytes, report) = export::write(&scene, &export::WriteOptions::default())
        .map_err(|e| format!("write: {e}"))?;
    lint(&bytes)?;
    let theirs = ufbx::load_memory(&bytes, ufbx::LoadOpts::default())
        .map_err(|e| format!("ufbx cannot load the written file: {:?}", e.description))?;
    // Nodes whose first animation is written key for key, themselves and every ancestor: ufbx
    // must agree with keyscene between frames too. The others were resampled on integer
    // frames (the report says which) and are compared on integer frames only.
    let resampled: HashSet<usize> =
        report.resampled.iter().filter(|r| r.animation == 0).map(|r| r.node).collect();
    let exact: Vec<bool> = (0..scene.nodes.len())
        .map(|i| {
            let mut at = Some(i);
            while let Some(k) = at {
                if resampled.contains(&k) {
                    return false;
                }
                at = scene.nodes[k].parent;
            }
            true
        })
        .collect();
    let unskinned = report.dropped.iter().any(|d| d.contains("unskinned"));
    compare(&scene, &theirs, &exact, unskinned)?;
    compare_attributes(&scene, &theirs)
}

/// Cameras and lights as ufbx reads the written `NodeAttribute`s against the source's (rest
/// values): a camera's field of view along its axis (ufbx `field_of_view_deg`), near and far
/// planes; a light's kind, colour and intensity (ufbx divides `Intensity` by 100).
fn compare_attributes(scene: &Scene, theirs: &ufbx::SceneRoot) -> Result<(), String> {
    use keyscene::scene::{FovAxis, LightKind, NodeKind};
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-5 * a.abs().max(1.0);
    for n in theirs.nodes.iter().filter(|n| !n.is_root) {
        let name = n.element.name.to_string();
        let src = scene.nodes.iter().filter(|s| clean(&s.name) == name);
        if let Some(cam) = &n.camera {
            let Some(c) = src.clone().find_map(|s| match s.kind {
                NodeKind::Camera(c) => scene.cameras.get(c),
                _ => None,
            }) else {
                return Err(format!("ufbx camera {name:?} has no source camera"));
            };
            let fov = match c.fov_axis {
                FovAxis::Horizontal => cam.field_of_view_deg.x,
                FovAxis::Vertical => cam.field_of_view_deg.y,
            };
            if !close(fov, c.fov_degrees) {
                return Err(format!(
                    "camera {name:?}: ufbx reads a field of view of {fov}°, the source has {}°",
                    c.fov_degrees
                ));
            }
            for (what, want, got) in
                [("near", c.near, cam.near_plane), ("far", c.far, cam.far_plane)]
            {
                if want.is_some_and(|w| w.is_finite() && !close(w, got)) {
                    return Err(format!("camera {name:?}: {what} plane {got}, source {want:?}"));
                }
            }
        }
        if let Some(light) = &n.light {
            let Some(l) = src.clone().find_map(|s| match s.kind {
                NodeKind::Light(l) => scene.lights.get(l),
                _ => None,
            }) else {
                return Err(format!("ufbx light {name:?} has no source light"));
            };
            let kind = match light.type_ {
                ufbx::LightType::Directional => LightKind::Directional,
                ufbx::LightType::Spot => LightKind::Spot,
                _ => LightKind::Point,
            };
            let col = DVec3::new(light.color.x, light.color.y, light.color.z);
            let want = l.color.as_dvec3();
            if kind != l.kind
                || !(0..3).all(|k| close(col[k], want[k]))
                || !close(light.intensity, l.intensity)
            {
                return Err(format!(
                    "light {name:?}: ufbx reads {kind:?} colour {col} intensity {}, the source has {:?} colour {want} intensity {}",
                    light.intensity, l.kind, l.intensity
                ));
            }
        }
    }
    Ok(())
}

/// `unskinned`: the report says some skin was not written (the meshes it deforms, which ufbx
/// reads without a skin deformer, are left out of the vertex comparison).
fn compare(
    scene: &Scene,
    theirs: &ufbx::SceneRoot,
    exact: &[bool],
    unskinned: bool,
) -> Result<(), String> {
    // (frame on keyscene's clock, whether it is a frame between integer frames); `None`: the
    // rest pose. Between frames: the half frame after the first, and four times spread over
    // the range a 0.37 frame past an integer frame.
    let times: Vec<(Option<f64>, bool)> = match scene.animations.first() {
        Some(a) => {
            let (f0, f1) = a.frame_range;
            let f1 = f1.max(f0);
            let mid = (0.5 * (f0 + f1)).round().clamp(f0, f1);
            let mut t = vec![(Some(f0), false), (Some(mid), false), (Some(f1), false)];
            for j in 0..5 {
                let f = if j == 0 {
                    f0 + 0.5
                } else {
                    (f0 + (f1 - f0) * j as f64 / 5.0).floor() + 0.37
                };
                if f < f1 {
                    t.push((Some(f), true));
                }
            }
            t
        }
        None => vec![(None, false)],
    };
    let fps = scene.animations.first().map_or(30.0, |a| a.fps);
    // ufbx deforms meshes (blend shapes, then skin) only when asked.
    let deforms = !theirs.skin_deformers.is_empty() || !theirs.blend_deformers.is_empty();
    let opts = || ufbx::EvaluateOpts { evaluate_skinning: deforms, ..Default::default() };
    let mut posed = Vec::new();
    for &(t, between) in &times {
        let ours = match t {
            Some(f) => scene.evaluate(Some(0), Time::Frame(f)),
            None => scene.evaluate(None, Time::Frame(0.0)),
        };
        let evaluated;
        let nodes = match t {
            Some(f) => {
                evaluated = ufbx::evaluate_scene(theirs, &theirs.anim, f / fps, opts())
                    .map_err(|e| format!("ufbx evaluate: {:?}", e.description))?;
                &evaluated.nodes
            }
            None if deforms => {
                evaluated = ufbx::evaluate_scene(theirs, &theirs.anim, 0.0, opts())
                    .map_err(|e| format!("ufbx evaluate: {:?}", e.description))?;
                &evaluated.nodes
            }
            None => &theirs.nodes,
        };
        let worlds: Vec<(String, DMat4, DMat4, Vec<DVec3>, bool)> = nodes
            .iter()
            .filter(|n| !n.is_root)
            .map(|n| {
                let g = to_dmat4(&n.geometry_to_world);
                // Deformed positions (`skinned_position`, the plain vertices when nothing
                // deforms the mesh), in the mesh's frame when `skinned_is_local`.
                let v = n.mesh.as_ref().map_or(Vec::new(), |m| {
                    let local = m.skinned_is_local;
                    (0..m.num_vertices)
                        .map(|i| {
                            let p = m.skinned_position.values.get(i).or(m.vertices.get(i));
                            let p = p.map_or(DVec3::ZERO, |p| DVec3::new(p.x, p.y, p.z));
                            if local {
                                g.transform_point3(p)
                            } else {
                                p
                            }
                        })
                        .collect()
                });
                let skinned = n.mesh.as_ref().is_some_and(|m| !m.skin_deformers.is_empty());
                (n.element.name.to_string(), to_dmat4(&n.node_to_world), g, v, skinned)
            })
            .collect();
        // Animated camera FOV and light colour/intensity, as ufbx evaluates them.
        if t.is_some() {
            for n in nodes.iter().filter(|n| !n.is_root) {
                let name = n.element.name.to_string();
                check_animated_attributes(scene, &ours, &name, n, between, exact)
                    .map_err(|e| format!("at {}: {e}", t.map_or(0.0, |f| f)))?;
            }
        }
        posed.push((t, between, ours, worlds));
    }
    let size = common::ufbx_corpus::scene_size(
        posed.iter().flat_map(|(_, _, _, w)| w.iter().map(|x| &x.1)),
    );
    let names: Vec<String> = scene.nodes.iter().map(|n| clean(&n.name)).collect();
    for (k, (t, between, pose, worlds)) in posed.iter().enumerate() {
        let when = t.map_or("the rest pose".to_string(), |f| format!("frame {f}"));
        for (name, want, _, verts, ufbx_skinned) in worlds {
            let cands: Vec<usize> = (0..names.len()).filter(|&i| names[i] == *name).collect();
            // Between frames, a name that a resampled node shares (a 3DS camera and its
            // target) is left out: the ufbx node may be the resampled one.
            if *between && cands.iter().any(|&i| !exact[i]) {
                continue;
            }
            if cands.is_empty() {
                return Err(format!("ufbx node {name:?} has no source node of that name"));
            }
            let (err, i) = cands
                .iter()
                .map(|&i| {
                    let ours = pose.world[i] * attribute_turn(scene, i);
                    let (l, tr) = common::ufbx_corpus::difference(ours, *want, size);
                    (l.max(tr), i)
                })
                .min_by(|a, b| a.0.total_cmp(&b.0))
                .unwrap();
            if err.is_nan() || err > 1e-4 {
                return Err(format!(
                    "node {name:?} at {when}: world differs by {err:e}\nkeyscene {}\nufbx     {want}",
                    pose.world[i]
                ));
            }
            check_view_axes(scene, i, pose, *want)
                .map_err(|e| format!("{name:?} at {when}: {e}"))?;
            // Vertices at the first time; deformed meshes at every integer frame of 3.
            if *between || verts.is_empty() {
                continue;
            }
            // Of several nodes with this name (LOD groups), the one placed so with as many
            // vertices.
            let i = cands
                .iter()
                .copied()
                .find(|&c| {
                    let (l, tr) = common::ufbx_corpus::difference(pose.world[c], *want, size);
                    l.max(tr) <= 1e-4
                        && scene.nodes[c]
                            .mesh
                            .is_some_and(|m| scene.meshes[m].positions.len() == verts.len())
                })
                .unwrap_or(i);
            let node = &scene.nodes[i];
            let Some(m) = node.mesh else { continue };
            let mesh = &scene.meshes[m];
            let morphed = scene.animations.first().is_some_and(|a| {
                a.channels.iter().any(|c| {
                    c.node == i && matches!(c.target, keyscene::anim::ChannelTarget::Morph(_))
                })
            });
            let deformed = mesh.skin.is_some() || !mesh.morph_targets.is_empty();
            if mesh.skin.is_some() && !ufbx_skinned {
                if unskinned {
                    continue;
                }
                return Err(format!(
                    "mesh of {name:?}: the source's skin is not in the written file"
                ));
            }
            if (k != 0 && !deformed)
                || mesh.geometry_cache.is_some()
                || morphed
                || pose.mesh[i] != Some(m)
            {
                continue;
            }
            let ours = pose.world_positions(scene, i);
            if ours.len() != verts.len() {
                return Err(format!(
                    "mesh of {name:?}: {} vertices written, ufbx reads {}",
                    ours.len(),
                    verts.len()
                ));
            }
            for (j, (a, b)) in ours.iter().zip(verts).enumerate() {
                // A source vertex that is not finite (the synthetic NaN files) must read back
                // as the same non-finite value.
                let same_nonfinite = !a.is_finite()
                    && (0..3).all(|c| a[c] == b[c] || (a[c].is_nan() && b[c].is_nan()));
                let d = (*a - *b).abs().max_element() / size;
                if !same_nonfinite && (d.is_nan() || d > 1e-4) {
                    return Err(format!(
                        "mesh of {name:?} at {when}: vertex {j} keyscene {a}, ufbx {b} ({d:e} of the scene size)"
                    ));
                }
            }
        }
    }
    Ok(())
}

/// The turn from a source node's axes to its FBX node's (`world_fbx = world · C`): identity
/// except for cameras and lights of non-FBX sources. keyscene's scene model aims those down the
/// node's −Z with +Y up (`scene::Camera`, `scene::Light`; `render::View::from_camera`), FBX
/// cameras look down +X with +Y up and lights shine down −Y (FbxCamera; ufbx.c's camera axes
/// right +Z, up +Y, front −X, and `ufbx_light::local_direction` −Y). Columns, hand-derived:
/// camera +X → −Z, +Y → +Y, +Z → +X; light +X → +X, +Y → +Z, +Z → −Y.
fn attribute_turn(scene: &Scene, i: usize) -> DMat4 {
    use keyscene::scene::{LightKind, NodeKind};
    let n = &scene.nodes[i];
    if scene.meta.format == "fbx" || n.mesh.is_some() {
        return DMat4::IDENTITY;
    }
    let cols = |x: DVec3, y: DVec3, z: DVec3| {
        DMat4::from_cols(x.extend(0.0), y.extend(0.0), z.extend(0.0), glam::DVec4::W)
    };
    match n.kind {
        NodeKind::Camera(c) if c < scene.cameras.len() => cols(-DVec3::Z, DVec3::Y, DVec3::X),
        NodeKind::Light(l) if scene.lights.get(l).is_some_and(|l| l.kind != LightKind::Ambient) => {
            cols(DVec3::X, DVec3::Z, -DVec3::Y)
        }
        _ => DMat4::IDENTITY,
    }
}

/// A camera's view direction and up, and a light's direction, in ufbx's world (`theirs`: the
/// written node's world matrix; FBX cameras look down +X with +Y up, lights shine down −Y)
/// against the source's in keyscene's pose (FBX sources: the same axes; others: −Z, with +Y
/// up for cameras), as unit vectors within 1e-4.
fn check_view_axes(
    scene: &Scene,
    i: usize,
    pose: &keyscene::anim::Pose,
    theirs: DMat4,
) -> Result<(), String> {
    use keyscene::scene::NodeKind;
    let dir = |m: DMat4, v: DVec3| m.transform_vector3(v).normalize_or_zero();
    let fbx = scene.meta.format == "fbx";
    let ours = pose.world[i];
    if scene.nodes[i].mesh.is_some() || !(fbx || attribute_turn(scene, i) != DMat4::IDENTITY) {
        return Ok(());
    }
    let pairs = match scene.nodes[i].kind {
        NodeKind::Camera(_) => {
            let forward = if fbx { dir(ours, DVec3::X) } else { dir(ours, -DVec3::Z) };
            vec![
                ("view direction", forward, dir(theirs, DVec3::X)),
                ("up", dir(ours, DVec3::Y), dir(theirs, DVec3::Y)),
            ]
        }
        NodeKind::Light(_) => {
            let shines = if fbx { dir(ours, -DVec3::Y) } else { dir(ours, -DVec3::Z) };
            vec![("light direction", shines, dir(theirs, -DVec3::Y))]
        }
        _ => vec![],
    };
    for (what, want, got) in pairs {
        if want != DVec3::ZERO && !want.abs_diff_eq(got, 1e-4) {
            return Err(format!("{what}: the source's {want}, ufbx's {got}"));
        }
    }
    Ok(())
}

/// One ufbx node's evaluated camera field of view and light colour and intensity against
/// keyscene's pose of the source (`Pose::camera_fov`, `light_color`, `light_intensity`).
/// Between frames only sources written key for key (`exact`) are compared. FBX sources whose
/// camera `FieldOfView` is animated are skipped: keyscene's evaluator does not apply that
/// property (it keeps the stored value), while the writer carries the curve over.
fn check_animated_attributes(
    scene: &Scene,
    pose: &keyscene::anim::Pose,
    name: &str,
    n: &ufbx::Node,
    between: bool,
    exact: &[bool],
) -> Result<(), String> {
    use keyscene::anim::ChannelTarget;
    use keyscene::scene::{FovAxis, NodeKind};
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-4 * a.abs().max(1.0);
    let src: Vec<usize> = (0..scene.nodes.len())
        .filter(|&i| clean(&scene.nodes[i].name) == name && (!between || exact[i]))
        .collect();
    let channels = |i: usize| {
        scene.animations.first().into_iter().flat_map(|a| &a.channels).filter(move |c| c.node == i)
    };
    if let Some(cam) = &n.camera {
        for &i in &src {
            let NodeKind::Camera(c) = scene.nodes[i].kind else { continue };
            if channels(i).any(|c| c.target.property_name() == Some("FieldOfView")) {
                continue;
            }
            let fov = match scene.cameras[c].fov_axis {
                FovAxis::Horizontal => cam.field_of_view_deg.x,
                FovAxis::Vertical => cam.field_of_view_deg.y,
            };
            if !close(fov, pose.camera_fov[c]) {
                return Err(format!(
                    "camera {name:?}: ufbx evaluates a field of view of {fov}°, keyscene {}°",
                    pose.camera_fov[c]
                ));
            }
        }
    }
    if let Some(light) = &n.light {
        for &i in &src {
            let NodeKind::Light(l) = scene.nodes[i].kind else { continue };
            let animated = channels(i).any(|c| {
                matches!(c.target, ChannelTarget::Color(_))
                    || c.target
                        .property_name()
                        .is_some_and(|p| p.starts_with("Color") || p == "Intensity")
            });
            if !animated {
                continue;
            }
            let col = DVec3::new(light.color.x, light.color.y, light.color.z);
            let want = pose.light_color[l];
            if !(0..3).all(|k| close(col[k], want[k]))
                || !close(light.intensity, pose.light_intensity[l])
            {
                return Err(format!(
                    "light {name:?}: ufbx evaluates colour {col} intensity {}, keyscene colour {want} intensity {}",
                    light.intensity, pose.light_intensity[l]
                ));
            }
        }
    }
    Ok(())
}

fn sources(corpus: &Path) -> Vec<PathBuf> {
    let mut files = common::files_with_ext(&corpus.join("3ds"), &["3ds"]);
    let fbx_dir = corpus.join("fbx");
    let positives: Vec<PathBuf> = common::files_with_ext(&fbx_dir, &["fbx"])
        .into_iter()
        .filter(|p| {
            let rel = p.strip_prefix(&fbx_dir).unwrap().to_string_lossy().replace('\\', "/");
            !common::is_negative_fbx(&rel)
        })
        .collect();
    files.extend(positives.into_iter().step_by(FBX_SAMPLE_STEP));
    files
}

fn fbx2gltf(path: &Path) -> Result<(), String> {
    let (scene, _) = keyscene::load(path).map_err(|e| format!("keyscene cannot load it: {e}"))?;
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let out = dir.path().join("written.fbx");
    let report =
        export::save(&scene, &out, &export::WriteOptions::default()).map_err(|e| e.to_string())?;
    let glb = dir.path().join("out");
    let run = std::process::Command::new(FBX2GLTF)
        .arg("--binary")
        .arg("--input")
        .arg(&out)
        .arg("--output")
        .arg(&glb)
        .output()
        .map_err(|e| format!("running FBX2glTF: {e}"))?;
    let text =
        String::from_utf8_lossy(&run.stdout).to_string() + &String::from_utf8_lossy(&run.stderr);
    if !run.status.success() || !dir.path().join("out.glb").is_file() {
        return Err(format!("FBX2glTF failed ({}):\n{text}", run.status));
    }
    if text.to_ascii_lowercase().contains("error") {
        return Err(format!("FBX2glTF reports an error:\n{text}"));
    }
    // The SDK saw the deformers: its glTF (read back by keyscene) has a skin where the source
    // has one and morph targets where the source has blend shapes.
    let (glb, _) = keyscene::load(&dir.path().join("out.glb"))
        .map_err(|e| format!("keyscene cannot read FBX2glTF's output: {e}"))?;
    let unskinned = report.dropped.iter().any(|d| d.contains("unskinned"));
    if deformed(&scene).0 && !unskinned && glb.skins.is_empty() {
        return Err("the source has a skin, FBX2glTF's glTF none".into());
    }
    if deformed(&scene).1 && !glb.meshes.iter().any(|m| !m.morph_targets.is_empty()) {
        return Err("the source has blend shapes, FBX2glTF's glTF no morph targets".into());
    }
    Ok(())
}

/// Whether a scene's meshes have (a skin, blend shapes).
fn deformed(scene: &Scene) -> (bool, bool) {
    let skin = scene.meshes.iter().any(|m| m.skin.is_some());
    (skin, scene.meshes.iter().any(|m| !m.morph_targets.is_empty()))
}

fn main() {
    let corpus = common::corpus();
    let mut trials = Vec::new();
    let files = corpus.as_deref().map(sources).unwrap_or_default();
    if files.is_empty() {
        trials.push(common::corpus_trial("write_ufbx::corpus", &corpus, |_| {
            Err("the corpus holds no 3DS or FBX file".into())
        }));
    }
    let root = corpus.clone().unwrap_or_default();
    for path in files {
        let rel = path.strip_prefix(&root).unwrap_or(&path).to_string_lossy().replace('\\', "/");
        let loaded = keyscene::load(&path);
        if let Err(e) = &loaded {
            let why = e.to_string().chars().take(60).collect::<String>();
            let is_3ds = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("3ds"));
            for kind in if is_3ds { &["write_ufbx", "fbx2gltf"][..] } else { &["write_ufbx"][..] } {
                trials.push(
                    Trial::test(
                        format!("{kind}::{rel} (ignored: the source does not load: {why})"),
                        || Ok(()),
                    )
                    .with_ignored_flag(true),
                );
            }
            continue;
        }
        let p = path.clone();
        trials.push(common::corpus_trial(format!("write_ufbx::{rel}"), &corpus, move |_| {
            check(&p).map_err(|e| format!("{}: {e}", p.display()).into())
        }));
        // FBX2glTF on every written 3DS file and every written FBX file with a skin or
        // blend shapes.
        let is_3ds = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("3ds"));
        let deforms = loaded.as_ref().is_ok_and(|(s, _)| deformed(s) != (false, false));
        if is_3ds || deforms {
            let p = path.clone();
            let t = if Path::new(FBX2GLTF).is_file() {
                common::corpus_trial(format!("fbx2gltf::{rel}"), &corpus, move |_| {
                    fbx2gltf(&p).map_err(|e| format!("{}: {e}", p.display()).into())
                })
            } else {
                Trial::test(format!("fbx2gltf::{rel}"), || Ok(())).with_ignored_flag(true)
            };
            trials.push(t);
        }
    }
    common::run(trials)
}

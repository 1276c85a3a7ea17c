//! The 3DS writer (issue #14 §2, "Proof"): corpus files are loaded by keyscene, written with
//! `formats::three_ds::export::write`, and the written bytes are
//!
//! 1. linted: every chunk length covers its 6-byte header and the sub-chunks of every
//!    container end exactly at its end (`write::lint`);
//! 2. read back by keyscene's 3DS reader without a warning; every keyframer node's world
//!    matrix (object nodes; position for cameras, lights and targets) and every mesh node's
//!    world vertices agree with keyscene's evaluation of the *source* at the same time;
//! 3. read by lib3ds 1.3 (`lib3ds_dump -x`, `/opt/keyscene-oracles/bin`): every object node's
//!    matrix and every mesh's world bounding box (and, where the points are the source's
//!    vertices in order, its centroid and the three sample vertices) agree with keyscene's
//!    evaluation of the source;
//! 4. for 3DS sources written exactly: a second write of the read-back scene equals the first
//!    byte for byte.
//!
//! Times: 3DS sources written exactly are compared at every integer and half frame of the
//! keyframer segment; resampled sources (FBX, glTF, 3DS files without a keyframer) at every
//! integer keyframer frame (the writer keys those, exact there), 3DS frame `f` being source
//! time `(f − frame_shift) / 30` s. At most 2 001 samples per file (evenly spaced). Meshes with
//! skins, blend shapes or caches are compared at the first frame only (the writer poses them
//! there and reports it). Tolerance 1e-4 × max(1, diagonal of the source's world mesh box at
//! that time).
//!
//! Sources: every 3DS/PRJ corpus file, every [`FBX_SAMPLE_STEP`]th positive corpus FBX file
//! (path order), and glTF sources made from every [`GLTF_SAMPLE_STEP`]th of those by keyscene's
//! GLB writer. A source keyscene cannot load is reported *ignored*; lib3ds checks are skipped
//! (the trial still runs the rest) when lib3ds_dump is absent, and say so on stderr.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use glam::{DMat4, DVec3};
use keyscene::anim::{Pose, Time};
use keyscene::formats::three_ds::{self, export, write};
use keyscene::scene::{LightKind, NodeKind, Scene};
use libtest_mimic::{Failed, Trial};
use serde_json::Value;

/// One positive FBX corpus file of this many (path order) is converted.
const FBX_SAMPLE_STEP: usize = 20;
/// One sampled FBX file of this many also goes through glTF first.
const GLTF_SAMPLE_STEP: usize = 3;
/// Most samples compared per file.
const MAX_SAMPLES: usize = 2001;

const LIB3DS_DUMP: &str = "/opt/keyscene-oracles/bin/lib3ds_dump";

#[derive(Clone, Copy, PartialEq)]
enum Source {
    ThreeDs,
    Fbx,
    Gltf,
}

fn frames_of(scene: &Scene, report: &export::Report) -> Vec<f64> {
    let (f0, f1) = (report.frames.0 as f64, report.frames.1 as f64);
    let half = report.exact;
    let step = if half { 0.5 } else { 1.0 };
    let n = ((f1 - f0) / step).round() as usize + 1;
    let all: Vec<f64> = (0..n).map(|k| f0 + k as f64 * step).collect();
    let _ = scene;
    if all.len() <= MAX_SAMPLES {
        return all;
    }
    // Evenly spaced, ends kept, on the grid.
    (0..MAX_SAMPLES).map(|k| all[(k * (all.len() - 1)) / (MAX_SAMPLES - 1)]).collect()
}

fn source_pose(scene: &Scene, report: &export::Report, frame: f64) -> Pose {
    if scene.animations.is_empty() {
        return scene.evaluate(None, Time::Frame(0.0));
    }
    if report.exact {
        return scene.evaluate(Some(0), Time::Frame(frame));
    }
    scene.evaluate(Some(0), Time::Seconds((frame - report.frame_shift as f64) / 30.0))
}

/// Whether mesh node `i` is deformed (skin, blend shapes, cache): compared at the first frame only.
fn deformed(scene: &Scene, i: usize) -> bool {
    scene.nodes[i].mesh.map(|m| &scene.meshes[m]).is_some_and(|m| {
        m.skin.is_some() || !m.morph_targets.is_empty() || m.geometry_cache.is_some()
    })
}

fn scene_tol(scene: &Scene, pose: &Pose) -> f64 {
    let (mut lo, mut hi) = (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY));
    for i in 0..scene.nodes.len() {
        for p in pose.world_positions(scene, i) {
            if p.is_finite() {
                lo = lo.min(p);
                hi = hi.max(p);
            }
        }
        let t = pose.world[i].w_axis.truncate();
        if t.is_finite() {
            lo = lo.min(t);
            hi = hi.max(t);
        }
    }
    let d = if lo.x.is_finite() { (hi - lo).length() } else { 0.0 };
    1e-4 * d.max(1.0)
}

/// The box of the world positions `world` of node `i`'s mesh over the vertices its polygons
/// use (a renumbered object holds only those).
fn used_box(scene: &Scene, i: usize, world: &[DVec3]) -> (DVec3, DVec3) {
    let Some(mesh) = scene.nodes[i].mesh.map(|m| &scene.meshes[m]) else {
        return common::bbox(world.iter().copied());
    };
    common::bbox(mesh.corner_vertices.iter().filter_map(|&v| world.get(v as usize).copied()))
}

/// lib3ds_dump prints non-finite numbers as bare `nan`/`inf` (C `%g`): made JSON `null`s.
fn json_numbers(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let b = text.as_bytes();
    let mut k = 0;
    while k < b.len() {
        let prev = if k == 0 { b' ' } else { b[k - 1] };
        if matches!(prev, b' ' | b'[' | b',' | b':') {
            let rest = &text[k..];
            let tok = ["-nan", "nan", "-inf", "inf"].into_iter().find(|t| rest.starts_with(t));
            if let Some(t) = tok {
                out.push_str("null");
                k += t.len();
                continue;
            }
        }
        out.push(b[k] as char);
        k += 1;
    }
    out
}

/// Whether every position is finite and within `f32` range (what a 3DS point can hold).
fn representable(p: &[DVec3]) -> bool {
    p.iter().all(|v| v.is_finite() && v.abs().max_element() < f32::MAX as f64)
}

fn mat_diff(a: DMat4, b: DMat4) -> f64 {
    a.to_cols_array().iter().zip(b.to_cols_array()).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max)
}

fn is_object_kind(k: &NodeKind) -> bool {
    matches!(k, NodeKind::Mesh | NodeKind::Null | NodeKind::Bone)
}

/// The largest difference between the unit axes of two frames (their rotations).
fn rot_diff(a: DMat4, b: DMat4) -> f64 {
    let axes = |m: DMat4| {
        [m.x_axis, m.y_axis, m.z_axis].map(|c| c.truncate().normalize_or_zero()).to_vec()
    };
    axes(a).iter().zip(axes(b)).map(|(x, y)| (*x - y).abs().max_element()).fold(0.0, f64::max)
}

/// The frame of a 3D Studio camera at `eye` looking at `target` with `roll` degrees, as lib3ds'
/// camera matrix and docs/3ds.md describe it: −Z at the target, +Y leaning to world +Z (+X when
/// looking straight along Z), then turned by `roll` counter-clockwise seen from behind.
fn camera_frame(eye: DVec3, target: DVec3, roll: f64) -> DMat4 {
    let back = (eye - target).normalize();
    let mut side = DVec3::Z.cross(back);
    if side.length_squared() < 1e-24 {
        side = DVec3::X.cross(back);
    }
    let side = side.normalize();
    let up = back.cross(side);
    let (s, c) = roll.to_radians().sin_cos();
    let x = side * c - up * s;
    let y = side * s + up * c;
    DMat4::from_cols(x.extend(0.0), y.extend(0.0), back.extend(0.0), eye.extend(1.0))
}

/// The direction the spotlight node `k` of a written file shines in `pose`: at its target.
fn light_direction_back(back: &Scene, pose: &Pose, k: usize) -> DVec3 {
    let t = match back.nodes[k].kind {
        NodeKind::Light(l) => back.lights[l].target,
        _ => None,
    };
    let at = pose.world[k].w_axis.truncate();
    t.map_or(DVec3::NAN, |t| (pose.world[t].w_axis.truncate() - at).normalize())
}

/// The direction a directional light shines in `pose`: −Z of its world matrix, or at its
/// target.
fn light_direction(scene: &Scene, pose: &Pose, i: usize) -> Option<DVec3> {
    let NodeKind::Light(l) = scene.nodes[i].kind else { return None };
    if scene.lights[l].kind != LightKind::Directional {
        return None;
    }
    let at = pose.world[i].w_axis.truncate();
    Some(match scene.lights[l].target {
        Some(t) => (pose.world[t].w_axis.truncate() - at).normalize(),
        None => (-pose.world[i].z_axis.truncate()).normalize(),
    })
}

/// Translation of a lib3ds node's matrix (elements 12..14 of `matrix_col_major`).
fn lib3ds_position(n: &Value) -> DVec3 {
    let m = &n["matrix_col_major"];
    let e = |k: usize| m[k].as_f64().unwrap_or(f64::NAN);
    DVec3::new(e(12), e(13), e(14))
}

/// lib3ds' camera or light node `n` (written for source node `i`) against the source pose:
/// a camera's position and its frame from lib3ds' position, target and roll;
/// a light's position and its spotlight target (a directional light: the direction from the
/// light to its target).
fn lib3ds_view(
    m: &mut common::lib3ds::Mismatches,
    at: &str,
    (scene, src, i): (&Scene, &Pose, usize),
    nodes: &[Value],
    n: &Value,
    tol: f64,
) {
    // lib3ds names a camera's target "target", a light's "spot_target"; both carry its name.
    let kind = if n["type"] == "camera" { "target" } else { "spot_target" };
    let target =
        nodes.iter().find(|t| t["type"] == kind && t["name"] == n["name"]).map(lib3ds_position);
    let pos = common::try_vec3(&n["x_pos"]).unwrap_or_else(|| lib3ds_position(n));
    let src_pos = src.world[i].w_axis.truncate();
    if let Some(dir) = light_direction(scene, src, i) {
        let d = target.map_or(DVec3::NAN, |t| (t - pos).normalize());
        m.check(at, "directional light's direction (lib3ds)", (d - dir).abs().max_element(), 1e-4);
        return;
    }
    m.check(at, "position (lib3ds)", (pos - src_pos).abs().max_element(), tol);
    match scene.nodes[i].kind {
        NodeKind::Camera(_) => {
            let roll = n["x_roll"].as_f64().unwrap_or(f64::NAN);
            let target = target.unwrap_or(DVec3::NAN);
            let frame = camera_frame(pos, target, roll);
            // Positions may be off by `tol` (f32, 7 digits printed): the view direction by
            // `tol` over the distance to the target.
            let rot_tol = (tol / (target - pos).length()).max(1e-4);
            m.check(
                at,
                "camera frame from position, target and roll (lib3ds)",
                rot_diff(frame, src.world[i]),
                rot_tol,
            );
        }
        NodeKind::Light(l) if scene.lights[l].kind == LightKind::Spot => {
            // The source's target, else (docs/3ds.md) 100 units along the light's −Z.
            let want = match scene.lights[l].target {
                Some(t) => src.world[t].w_axis.truncate(),
                None => src_pos + (-src.world[i].z_axis.truncate()).normalize() * 100.0,
            };
            let d = target.map_or(f64::NAN, |t| (t - want).abs().max_element());
            m.check(at, "spotlight target (lib3ds)", d, tol);
        }
        _ => {}
    }
}

fn check(path: &Path, kind: Source, lib3ds: bool) -> Result<(), Failed> {
    let (scene, _) = keyscene::load(path).map_err(|e| format!("source: {e}"))?;
    let scene = if kind == Source::Gltf {
        let dir = tempfile::tempdir()?;
        let glb = dir.path().join("source.glb");
        keyscene::formats::gltf::save(&scene, &glb, &Default::default())
            .map_err(|e| format!("glTF writer: {e}"))?;
        keyscene::load(&glb).map_err(|e| format!("glTF source: {e}"))?.0
    } else {
        scene
    };
    let (bytes, report) =
        export::write(&scene, &export::WriteOptions::default()).map_err(|e| e.to_string())?;
    // 1. Chunk lint.
    write::lint(&bytes, &export::container_head)
        .map_err(|(at, what)| format!("lint at byte {at:#x}: {what}"))?;
    // 2. Our reader.
    let (back, warnings) = three_ds::read(&bytes, &Default::default())
        .map_err(|e| format!("our reader on the written file: {e}"))?;
    if !warnings.is_empty() {
        return Err(format!("our reader warns on the written file: {}", warnings[0]).into());
    }
    if back.nodes.len() != report.node_sources.len() {
        return Err(format!(
            "{} keyframer nodes written, {} read back",
            report.node_sources.len(),
            back.nodes.len()
        )
        .into());
    }
    let frames = frames_of(&scene, &report);
    let mut m = common::lib3ds::Mismatches::default();
    let first = frames[0];
    let renumbered: std::collections::HashSet<&str> =
        report.renumbered.iter().map(String::as_str).collect();
    let mut src_poses = Vec::with_capacity(frames.len());
    for &f in &frames {
        let src = source_pose(&scene, &report, f);
        let bp =
            back.evaluate(if back.animations.is_empty() { None } else { Some(0) }, Time::Frame(f));
        let tol = scene_tol(&scene, &src);
        for (k, s) in report.node_sources.iter().enumerate() {
            let Some(i) = *s else { continue };
            let at = format!("frame {f} node {k} {:?}", back.nodes[k].name);
            if is_object_kind(&scene.nodes[i].kind) && is_object_kind(&back.nodes[k].kind) {
                if !report.exact || scene.nodes[i].source.three_ds.is_some() {
                    m.check(
                        &at,
                        "world matrix (our reader)",
                        mat_diff(bp.world[k], src.world[i]),
                        tol,
                    );
                }
            } else if let Some(dir) = light_direction(&scene, &src, i) {
                // Written far back along its direction: compare where it shines.
                let back_dir = light_direction_back(&back, &bp, k);
                m.check(
                    &at,
                    "directional light's direction (our reader)",
                    (back_dir - dir).abs().max_element(),
                    1e-4,
                );
            } else {
                let d = (bp.world[k].w_axis - src.world[i].w_axis).abs().max_element();
                m.check(&at, "world position (our reader)", d, tol);
                if matches!(scene.nodes[i].kind, NodeKind::Camera(_)) {
                    // The roll written shows the source camera's own orientation.
                    m.check(
                        &at,
                        "camera orientation (our reader)",
                        rot_diff(bp.world[k], src.world[i]),
                        1e-4,
                    );
                }
            }
            if back.nodes[k].mesh.is_some() && (f == first || !deformed(&scene, i)) {
                let ours = bp.world_positions(&back, k);
                let theirs = src.world_positions(&scene, i);
                if !representable(&theirs) {
                    // Non-finite (or past f32) source vertices must read back non-finite.
                    if representable(&ours) {
                        m.push(format!("{at}: non-finite source vertices read back finite"));
                    }
                } else if renumbered.contains(back.nodes[k].name.as_str()) {
                    if !ours.is_empty() {
                        let d = common::bbox_diff(
                            common::bbox(ours.iter().copied()),
                            used_box(&scene, i, &theirs),
                        );
                        m.check(&at, "world mesh box (our reader)", d, tol);
                    }
                } else if ours.len() != theirs.len() {
                    m.push(format!(
                        "{at}: {} vertices read back, source {}",
                        ours.len(),
                        theirs.len()
                    ));
                } else {
                    let d = ours
                        .iter()
                        .zip(&theirs)
                        .filter(|(a, b)| a.is_finite() && b.is_finite())
                        .map(|(a, b)| (*a - *b).abs().max_element())
                        .fold(0.0, f64::max);
                    m.check(&at, "world vertices (our reader)", d, tol);
                }
            }
        }
        src_poses.push((src, tol));
    }
    // 4. Second write.
    if report.exact {
        let (again, _) = export::write(&back, &export::WriteOptions::default())
            .map_err(|e| format!("second write: {e}"))?;
        if let Some(d) = std::env::var_os("KEYSCENE_3DS_WRITE_DUMP") {
            let stem = path.file_name().unwrap().to_string_lossy().to_string();
            std::fs::write(Path::new(&d).join(format!("{stem}.1.3ds")), &bytes)?;
            std::fs::write(Path::new(&d).join(format!("{stem}.2.3ds")), &again)?;
        }
        if again != bytes {
            let at = again
                .iter()
                .zip(&bytes)
                .position(|(a, b)| a != b)
                .unwrap_or(again.len().min(bytes.len()));
            m.push(format!(
                "second write differs from the first at byte {at:#x} ({} and {} bytes)",
                again.len(),
                bytes.len()
            ));
        }
    }
    // 3. lib3ds.
    if lib3ds {
        let dir = tempfile::tempdir()?;
        let out = dir.path().join("written.3ds");
        std::fs::write(&out, &bytes)?;
        let mut cmd = Command::new(LIB3DS_DUMP);
        cmd.arg("-x").arg(&out);
        for f in &frames {
            cmd.arg(format!("{f}"));
        }
        let o = cmd.output()?;
        if !o.status.success() {
            return Err(
                format!("lib3ds_dump failed: {}", String::from_utf8_lossy(&o.stderr)).into()
            );
        }
        let j: Value = serde_json::from_str(&json_numbers(&String::from_utf8_lossy(&o.stdout)))?;
        for (sample, (src, tol)) in
            j["samples"].as_array().ok_or("no samples")?.iter().zip(&src_poses)
        {
            let f = sample["frame"].as_f64().unwrap_or(f64::NAN);
            let nodes = sample["nodes"].as_array().ok_or("no nodes")?;
            for n in nodes {
                let k = n["id"].as_u64().unwrap_or(u64::MAX) as usize;
                let Some(Some(i)) = report.node_sources.get(k) else { continue };
                let i = *i;
                let at = format!("frame {f} lib3ds node {k} {}", n["name"]);
                if n["type"] == "camera" || n["type"] == "light" {
                    lib3ds_view(&mut m, &at, (&scene, src, i), nodes, n, *tol);
                }
                if n["type"] != "object" || !is_object_kind(&scene.nodes[i].kind) {
                    continue;
                }
                let mm: Vec<f64> = n["matrix_col_major"]
                    .as_array()
                    .map(|a| a.iter().filter_map(Value::as_f64).collect())
                    .unwrap_or_default();
                if mm.len() == 16 && (!report.exact || scene.nodes[i].source.three_ds.is_some()) {
                    let lm = DMat4::from_cols_slice(&mm);
                    m.check(&at, "node matrix (lib3ds)", mat_diff(lm, src.world[i]), *tol);
                }
                if n.get("world_centroid").is_none() || (f != first && deformed(&scene, i)) {
                    continue;
                }
                let world = src.world_positions(&scene, i);
                let v3 = |v: &Value| common::try_vec3(v).unwrap_or(DVec3::NAN);
                let name = n["name"].as_str().unwrap_or("");
                let ours = if renumbered.contains(name) {
                    // The written points are the source's, reordered: compare the boxes of the
                    // vertices the faces use.
                    used_box(&scene, i, &world)
                } else {
                    common::bbox(world.iter().copied())
                };
                let theirs = (v3(&n["world_bbox_min"]), v3(&n["world_bbox_max"]));
                if !representable(&world) {
                    continue;
                }
                {
                    m.check(&at, "world mesh box (lib3ds)", common::bbox_diff(ours, theirs), *tol);
                }
                if renumbered.contains(name) {
                    continue;
                }
                let centroid = world.iter().copied().sum::<DVec3>() / world.len().max(1) as f64;
                if centroid.is_finite() {
                    m.check(
                        &at,
                        "centroid (lib3ds)",
                        (centroid - v3(&n["world_centroid"])).abs().max_element(),
                        *tol,
                    );
                }
                for s in n["world_sample_vertices"].as_array().into_iter().flatten() {
                    let idx = s["index"].as_u64().unwrap_or(0) as usize;
                    if let Some(p) = world.get(idx).filter(|p| p.is_finite()) {
                        let d = (*p - v3(&s["position"])).abs().max_element();
                        m.check(&at, &format!("vertex {idx} (lib3ds)"), d, *tol);
                    }
                }
            }
        }
    }
    eprintln!(
        "{}: {} frames, {}, {} keyframer nodes, lib3ds {}",
        path.display(),
        frames.len(),
        if report.exact { "exact keys" } else { "resampled" },
        report.nodes,
        if lib3ds { "compared" } else { "absent" }
    );
    m.finish()
}

/// A hand-made scene: a camera without a target looking along +Y, rolled 30°, a directional
/// light shining along (1, 1, −1), a point light at (3, 4, 5), a spotlight at (0, 0, 10) looking
/// down, and a triangle spanning (−1, −1, 0)…(1, 1, 0).
fn views_scene() -> Scene {
    use glam::DQuat;
    use keyscene::scene::{Camera, FovAxis, Light, Mesh, Node};
    let mut scene = Scene::default();
    scene.meshes.push(Mesh {
        name: "tri".into(),
        positions: vec![
            DVec3::new(-1.0, -1.0, 0.0),
            DVec3::new(1.0, -1.0, 0.0),
            DVec3::new(0.0, 1.0, 0.0),
        ],
        corner_vertices: vec![0, 1, 2],
        polygon_starts: vec![0, 3],
        ..Mesh::default()
    });
    let add = |scene: &mut Scene, mut node: Node, at: DVec3, rot: DQuat| {
        node.transform.translation = at;
        node.transform.rotation = rot;
        scene.nodes.push(node);
        let k = scene.nodes.len() - 1;
        scene.attach(k, None);
    };
    let mut tri = Node::new("tri", NodeKind::Mesh);
    tri.mesh = Some(0);
    add(&mut scene, tri, DVec3::ZERO, DQuat::IDENTITY);
    scene.cameras.push(Camera::new("cam", 45.0, FovAxis::Horizontal));
    // Looking along +Y with +Z up is Rx(90°); a roll of 30° turns it by −30° about its own Z.
    let cam_rot =
        DQuat::from_rotation_x(90f64.to_radians()) * DQuat::from_rotation_z(-30f64.to_radians());
    add(&mut scene, Node::new("cam", NodeKind::Camera(0)), DVec3::new(0.0, -10.0, 2.0), cam_rot);
    let light = |name: &str, kind: LightKind| Light {
        name: name.into(),
        kind,
        color: glam::Vec3::ONE,
        intensity: 1.0,
        hotspot_degrees: 30.0,
        falloff_degrees: 40.0,
        attenuation: None,
        on: true,
        target: None,
        roll_degrees: 0.0,
    };
    for (l, (name, kind, at, dir)) in [
        ("sun", LightKind::Directional, DVec3::new(5.0, 5.0, 5.0), DVec3::new(1.0, 1.0, -1.0)),
        ("bulb", LightKind::Point, DVec3::new(3.0, 4.0, 5.0), -DVec3::Z),
        ("spot", LightKind::Spot, DVec3::new(0.0, 0.0, 10.0), -DVec3::Z),
    ]
    .into_iter()
    .enumerate()
    {
        scene.lights.push(light(name, kind));
        let rot = DQuat::from_rotation_arc(-DVec3::Z, dir.normalize());
        add(&mut scene, Node::new(name, NodeKind::Light(l)), at, rot);
    }
    scene
}

/// [`views_scene`] written and read by lib3ds: the camera's roll is 30° and its frame the
/// source's, the sun shines along (1, 1, −1) from 100 scene radii away (radius √2: half the
/// triangle's box diagonal), the point light and spotlight stand where the source has them.
fn views_reach_lib3ds() -> Result<(), Failed> {
    let scene = views_scene();
    let (bytes, report) =
        export::write(&scene, &export::WriteOptions::default()).map_err(|e| e.to_string())?;
    let dir = tempfile::tempdir()?;
    let out = dir.path().join("views.3ds");
    std::fs::write(&out, &bytes)?;
    let o = Command::new(LIB3DS_DUMP).arg("-x").arg(&out).arg("0").output()?;
    let j: Value = serde_json::from_str(&json_numbers(&String::from_utf8_lossy(&o.stdout)))?;
    let nodes = j["samples"][0]["nodes"].as_array().ok_or("no nodes")?.clone();
    let find = |ty: &str, name: &str| {
        nodes
            .iter()
            .find(|n| n["type"] == ty && n["name"] == name)
            .cloned()
            .ok_or(format!("no {ty} {name}"))
    };
    let mut m = common::lib3ds::Mismatches::default();
    let cam = find("camera", "cam")?;
    m.check(
        "cam",
        "roll (lib3ds)",
        (cam["x_roll"].as_f64().unwrap_or(f64::NAN) - 30.0).abs(),
        1e-4,
    );
    let src = scene.evaluate(None, Time::Frame(0.0));
    let sun = find("light", "sun")?;
    let sun_at = common::try_vec3(&sun["x_pos"]).ok_or("sun without x_pos")?;
    let far = -DVec3::new(1.0, 1.0, -1.0).normalize() * 100.0 * 2f64.sqrt();
    m.check("sun", "position (lib3ds)", (sun_at - far).abs().max_element(), 1e-3);
    let sun_target = lib3ds_position(&find("spot_target", "sun")?);
    m.check("sun", "target (lib3ds)", sun_target.abs().max_element(), 1e-4);
    let bulb = find("light", "bulb")?;
    let bulb_at = common::try_vec3(&bulb["x_pos"]).ok_or("bulb without x_pos")?;
    m.check(
        "bulb",
        "position (lib3ds)",
        (bulb_at - DVec3::new(3.0, 4.0, 5.0)).abs().max_element(),
        1e-5,
    );
    if nodes.iter().any(|n| n["type"] == "spot_target" && n["name"] == "bulb") {
        m.push("bulb: a point light was written with a spotlight target".into());
    }
    // And the checks every written file gets (camera frame, spotlight target, directions).
    for n in &nodes {
        let k = n["id"].as_u64().unwrap_or(u64::MAX) as usize;
        let Some(Some(i)) = report.node_sources.get(k) else { continue };
        if n["type"] == "camera" || n["type"] == "light" {
            lib3ds_view(&mut m, &format!("node {k}"), (&scene, &src, *i), &nodes, n, 1e-4);
        }
    }
    m.finish()
}

fn main() {
    let corpus = common::corpus();
    let lib3ds = Path::new(LIB3DS_DUMP).is_file();
    if !lib3ds {
        eprintln!("{LIB3DS_DUMP} not found: lib3ds checks skipped (run shared/oracles/install_oracles.sh)");
    }
    let mut trials = Vec::new();
    trials.push(Trial::test("writer_rejects_a_bad_animation_index", || {
        let scene = Scene::default();
        let opts = export::WriteOptions { animation: Some(3), ..Default::default() };
        match export::write(&scene, &opts) {
            Err(e) if e.to_string().contains("no animation 3") => Ok(()),
            other => Err(format!("expected an error naming animation 3, got {other:?}").into()),
        }
    }));
    trials.push(
        Trial::test("rolled_camera_and_lights_reach_lib3ds", views_reach_lib3ds)
            .with_ignored_flag(!lib3ds),
    );
    let Some(dir) = corpus.clone() else {
        trials.push(common::corpus_trial("corpus", &None, |_| Ok(())));
        common::run(trials);
    };
    let mut sources: Vec<(String, PathBuf, Source)> = Vec::new();
    for p in common::files_with_ext(&dir.join("3ds"), &["3ds", "prj"]) {
        let rel = p.strip_prefix(&dir).unwrap().to_string_lossy().replace('\\', "/");
        sources.push((rel, p, Source::ThreeDs));
    }
    let fbx: Vec<PathBuf> = common::files_with_ext(&dir.join("fbx"), &["fbx"])
        .into_iter()
        .filter(|p| {
            let rel = p.strip_prefix(dir.join("fbx")).unwrap().to_string_lossy().replace('\\', "/");
            !common::is_negative_fbx(&rel)
        })
        // KEYSCENE_3DS_WRITE_FBX_STEP=1 converts every positive FBX file (a measurement run).
        .step_by(
            std::env::var("KEYSCENE_3DS_WRITE_FBX_STEP")
                .ok()
                .and_then(|s| s.parse().ok())
                .filter(|&n: &usize| n > 0)
                .unwrap_or(FBX_SAMPLE_STEP),
        )
        .collect();
    for (k, p) in fbx.into_iter().enumerate() {
        let rel = p.strip_prefix(&dir).unwrap().to_string_lossy().replace('\\', "/");
        if k % GLTF_SAMPLE_STEP == 0 {
            sources.push((format!("gltf_from/{rel}"), p.clone(), Source::Gltf));
        }
        sources.push((rel, p, Source::Fbx));
    }
    for (name, path, kind) in sources {
        // Sources keyscene cannot load are not this writer's business: ignored.
        if keyscene::load(&path).is_err() {
            trials.push(Trial::test(name, || Ok(())).with_ignored_flag(true));
            continue;
        }
        trials.push(Trial::test(name, move || check(&path, kind, lib3ds)));
    }
    common::run(trials);
}

//! Round trip (issue #2, Done-when 4; issue #5, proof 2).
//!
//! **3DS.** Every corpus 3DS file with a lib3ds reference is
//! written as GLB, read back by our glTF reader and evaluated at the reference frames
//! (time = frame / 30 s). Every mesh node's world bounding box, centroid and sample vertices
//! (by index: the writer's `_KEYSCENE_VERTEX` attribute restores the source vertex order)
//! must match lib3ds's within 1e-4 × max(1, scene bbox diagonal).
//!
//! The glTF is Y-up; its world positions are mapped back to 3DS's Z-up with
//! `(x, y, z) → (x, −z, y)` (the inverse of the writer's axis root). Nodes are matched by the
//! source name and instance the writer keeps in extras (the k-th node of a name/instance pair
//! to the k-th reference node of that pair).

//!
//! **FBX.** Every row of `fbx/references.tsv` (the ufbx `.obj` references; see
//! `fbx_obj_references.rs` for the row format): the FBX is loaded, written as GLB (default
//! options: axis root, 4 influences per vertex, resampled animation) — for `static` rows with
//! its animations left out, so the glTF rest pose is the stored one — read back, and
//! evaluated at the row's time (`Time::Seconds`, in the read-back animation of the row's
//! stack, by name). The read-back world positions, turned back to the source's axes by the
//! inverse of the axis root and put through the row's axis/unit conversion, then
//! 1. replace the source mesh positions in an OBJ with the source's topology (the writer's
//!    `_KEYSCENE_VERTEX` restores vertex identity), compared with the ufbx reference by
//!    `obj_compare.py` with the row's matching and tolerance, and
//! 2. must lie within 1e-4 × the scene size (the reference OBJ's bounding-box diagonal, at
//!    least 1) of the source's own evaluation at that time.
//!
//! Rows are ignored (named `ignored: <reason> :: <row>`) when the source pipeline cannot do
//! them either (`time` rows without animation) or glTF cannot carry what
//! they ask: `bind_pose=` rows (posing from a stored FBX bind pose) and `transform_skin` rows
//! (a skinned mesh that also follows its node's movement since binding, Maya's display; glTF
//! skinning ignores the mesh node), rows with dual-quaternion skins that do not match (glTF
//! has linear blend skinning only; the writer warns), and rows whose source check against
//! ufbx fails too.

mod common;
#[path = "gltf_scenes/mod.rs"]
mod gltf_scenes;

use std::path::{Path, PathBuf};

use common::refs::{reference_rows, Outcome, RefRow};
use glam::DVec3;
use keyscene::anim::Time;
use keyscene::formats::gltf::{read, write, WriteOptions};
use keyscene::scene::{AxisSystem, Scene};
use libtest_mimic::{Failed, Trial};

use common::lib3ds;
use common::try_vec3 as vec3;

/// The writer's defaults with `_KEYSCENE_VERTEX` ([`WriteOptions::source_vertex_ids`]): the
/// read-back meshes are compared with the source by vertex index.
fn ids() -> WriteOptions {
    let mut o = WriteOptions::default();
    o.source_vertex_ids = true;
    o
}

fn check(corpus: &Path, reference: &Path) -> Result<(), Failed> {
    let (refj, file) = lib3ds::load(corpus, reference)?;
    let (src, _) = keyscene::load(&file).map_err(|e| format!("{}: {e}", file.display()))?;
    let glb = write(&src, &ids()).map_err(|e| e.to_string())?;
    let (back, _) =
        read(&glb.main, &keyscene::ReadOptions::default()).map_err(|e| e.to_string())?;
    let anim = (!back.animations.is_empty()).then_some(0);
    let samples = refj["samples"].as_array().ok_or("reference without samples")?;
    let mut mismatches = lib3ds::Mismatches::default();
    for sample in samples {
        let frame = sample["frame"].as_f64().ok_or("sample without frame")?;
        let pose = back.evaluate(anim, Time::Seconds(frame / 30.0));
        let nodes = sample["nodes"].as_array().ok_or("sample without nodes")?;
        let tol = lib3ds::tolerance(nodes);
        let mut used = vec![false; back.nodes.len()];
        for n in nodes {
            let Some(bmin) = vec3(&n["world_bbox_min"]) else { continue };
            let bmax = vec3(&n["world_bbox_max"]).ok_or("bbox without max")?;
            let name = n["name"].as_str().unwrap_or("");
            let instance = n["instance"].as_str().unwrap_or("");
            let at = format!("frame {frame}: node {name:?}/{instance:?}");
            let Some(id) = matching_node(&back, &used, name, instance) else {
                mismatches.push(format!("{at} missing"));
                continue;
            };
            used[id] = true;
            let world: Vec<DVec3> = pose
                .world_positions(&back, id)
                .into_iter()
                .map(|p| DVec3::new(p.x, -p.z, p.y))
                .collect();
            if world.is_empty() {
                mismatches.push(format!("{at} has no mesh"));
                continue;
            }
            let (gmin, gmax) = common::bbox(world.iter().copied());
            mismatches.check(&at, "bbox", common::bbox_diff((gmin, gmax), (bmin, bmax)), tol);
            if let Some(c) = vec3(&n["world_centroid"]) {
                let mean = world.iter().sum::<DVec3>() / world.len() as f64;
                mismatches.check(&at, "centroid", (mean - c).length(), tol);
            }
            for sv in n["world_sample_vertices"].as_array().into_iter().flatten() {
                let want = vec3(&sv["position"]).ok_or("sample vertex without position")?;
                let index = sv["index"].as_u64().ok_or("sample vertex without index")? as usize;
                let got = world.get(index).ok_or_else(|| format!("{name:?}: no vertex {index}"))?;
                mismatches.check(&at, "sample vertex", (*got - want).length(), tol);
            }
        }
    }
    mismatches.finish()
}

/// The first unused read-back node with this source name and instance.
fn matching_node(scene: &Scene, used: &[bool], name: &str, instance: &str) -> Option<usize> {
    (0..scene.nodes.len()).find(|&i| {
        !used[i]
            && scene.nodes[i].name == name
            && scene.nodes[i].instance == instance
            && scene.nodes[i].mesh.is_some()
    })
}

/// The hand-built feature scene (TCB, relative rotations with a double key, a scale through
/// zero, instancing with geometry transforms, aimed camera): every mesh node's world
/// positions after the round trip equal the source's: at whole frames with the default one
/// sample per frame within a tenth of 1e-4 × scene size (12 here: the samples the writer drops
/// are those its chords reproduce within that share, docs/gltf.md "Keys reduced to what the
/// interpolation needs"), and within 1e-4 × scene size at fractional frames with
/// 8 samples per frame (this scene spins 5 rad in 20 frames: linear interpolation between
/// whole-frame samples is off by ~1e-3 × its size between frames).
fn synthetic() -> Result<(), Failed> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let src = gltf_scenes::feature_scene(dir.path());
    check_synthetic(&src, None, &[0.0, 7.0, 19.0, 20.0, 29.0, 30.0, 33.0, 40.0], 1e-5 * 12.0)?;
    check_synthetic(&src, Some(240.0), &[0.5, 7.3, 19.9, 20.25, 29.5, 33.7], 1e-4 * 12.0)
}

fn check_synthetic(
    src: &Scene,
    resample_fps: Option<f64>,
    frames: &[f64],
    tol: f64,
) -> Result<(), Failed> {
    let src = src.clone();
    let mut opts = ids();
    opts.resample_fps = resample_fps;
    let glb = write(&src, &opts).map_err(|e| e.to_string())?;
    let (back, _) =
        read(&glb.main, &keyscene::ReadOptions::default()).map_err(|e| e.to_string())?;
    let mut worst = 0.0f64;
    for &frame in frames {
        let want = src.evaluate(Some(0), Time::Frame(frame));
        let got = back.evaluate(Some(0), Time::Seconds(frame / 30.0));
        for (i, node) in src.nodes.iter().enumerate() {
            let Some(j) =
                back.nodes.iter().position(|n| n.name == node.name && n.instance == node.instance)
            else {
                return Err(format!("node {:?}/{:?} missing", node.name, node.instance).into());
            };
            let w = want.world_positions(&src, i);
            let g = got.world_positions(&back, j);
            if w.is_empty() {
                continue;
            }
            if w.len() != g.len() {
                return Err(format!(
                    "{:?}: {} vertices read back, {} written",
                    node.name,
                    g.len(),
                    w.len()
                )
                .into());
            }
            for (p, q) in w.iter().zip(&g) {
                worst = worst.max((DVec3::new(q.x, -q.z, q.y) - *p).length());
            }
        }
    }
    if worst > tol {
        return Err(
            format!("resample {resample_fps:?}: worst vertex error {worst:e} > {tol:e}").into()
        );
    }
    Ok(())
}

/// The source scene's world positions of every mesh node's mesh at `time` (`None`: stored
/// pose) in animation `anim`, after `convert`.
fn source_world(
    src: &Scene,
    anim: Option<usize>,
    time: f64,
    convert: glam::DMat4,
) -> Vec<Vec<DVec3>> {
    let mut pose = src.evaluate(anim, Time::Seconds(time));
    pose.transform_world(convert);
    (0..src.nodes.len()).map(|i| pose.world_positions(src, i)).collect()
}

/// `(min, max)` of the `v` lines of an OBJ file.
fn obj_bounds(text: &str) -> (DVec3, DVec3) {
    let (mut lo, mut hi) = (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY));
    for l in text.lines().filter_map(|l| l.strip_prefix("v ")) {
        let v: Vec<f64> = l.split_whitespace().filter_map(|x| x.parse().ok()).collect();
        if v.len() >= 3 {
            let p = DVec3::new(v[0], v[1], v[2]);
            lo = lo.min(p);
            hi = hi.max(p);
        }
    }
    (lo, hi)
}

fn check_fbx(corpus: &Path, oracles: &Path, row: &RefRow, out_dir: &Path, k: usize) -> Outcome {
    let fbx_dir = corpus.join("fbx");
    let path = fbx_dir.join(&row.fbx);
    let mut src = match keyscene::load(&path) {
        Ok((s, _)) => s,
        Err(e) => return Outcome::Fail(format!("load: {e}")),
    };
    if row.options.contains("bind_pose=") {
        return Outcome::Ignore("posing from a stored FBX bind pose has no glTF form".into());
    }
    if row.transform_skin {
        return Outcome::Ignore(
            "skin following its node since binding (Maya display) has no glTF form".into(),
        );
    }
    if !src.geometry_caches.is_empty() {
        return Outcome::Ignore(
            "geometry caches are left out of glTF (docs/gltf.md, Geometry caches)".into(),
        );
    }
    let (anim, time) = match row.posed_animation(&mut src) {
        Ok(Some((a, t))) => (a, t),
        Ok(None) => {
            src.animations.clear();
            (None, 0.0)
        }
        Err(outcome) => return outcome,
    };
    let convert = match row.conversion.as_str() {
        "" => glam::DMat4::IDENTITY,
        "y_up_m" => src.axis_unit_conversion(AxisSystem::Y_UP_RIGHT_HANDED, Some(1.0)),
        "y_up_cm" => src.axis_unit_conversion(AxisSystem::Y_UP_RIGHT_HANDED, Some(0.01)),
        other => return Outcome::Fail(format!("unknown conversion {other}")),
    };
    let glb = match write(&src, &ids()) {
        Ok(g) => g,
        Err(e) => return Outcome::Fail(format!("write: {e}")),
    };
    let back = match read(&glb.main, &keyscene::ReadOptions::default()) {
        Ok((b, _)) => b,
        Err(e) => return Outcome::Fail(format!("read back: {e}")),
    };
    // The writer's root (axis and unit conversion, or joint root) comes first: undo it.
    let roots = [keyscene::formats::gltf::AXIS_ROOT_NAME, keyscene::formats::gltf::JOINT_ROOT_NAME];
    let base = usize::from(back.nodes.first().is_some_and(|n| roots.contains(&n.name.as_str())));
    let unroot =
        if base == 1 { back.nodes[0].transform.matrix().inverse() } else { glam::DMat4::IDENTITY };
    let back_anim = anim.and_then(|a| {
        let name = &src.animations[a].name;
        back.animations.iter().position(|b| &b.name == name)
    });
    // An animation in which nothing moves away from the rest pose is not written (docs/gltf.md):
    // the read-back scene's rest pose stands for it.
    let mut pose = back.evaluate(back_anim, Time::Seconds(time));
    pose.transform_world(convert * unroot);
    let want = source_world(&src, anim, time, convert);
    // The source scene with every mesh node's mesh replaced by its read-back world positions:
    // written as OBJ at an identity pose, it has the source's topology and the glTF's shape.
    let mut flat = src.clone();
    flat.skins.clear();
    flat.animations.clear();
    let mut worst = 0.0f64;
    let mut got_all = Vec::new();
    for (i, node) in src.nodes.iter().enumerate() {
        let Some(m) = node.mesh else { continue };
        let j = i + base;
        if back.nodes.get(j).map(|n| &n.name) != Some(&node.name) {
            return Outcome::Fail(format!(
                "node {i} {:?} not found after the round trip",
                node.name
            ));
        }
        let got = pose.world_positions(&back, j);
        if got.len() != want[i].len() {
            if got.is_empty() && src.meshes[m].polygon_count() == 0 {
                continue;
            }
            return Outcome::Fail(format!(
                "{:?}: {} vertices read back, {} in the source",
                node.name,
                got.len(),
                want[i].len()
            ));
        }
        for (g, w) in got.iter().zip(&want[i]) {
            worst = worst.max((*g - *w).length());
        }
        got_all.push((i, m, got));
    }
    for (i, m, got) in got_all {
        let mut mesh = src.meshes[m].clone();
        mesh.positions = got;
        mesh.skin = None;
        mesh.morph_targets.clear();
        flat.meshes.push(mesh);
        flat.nodes[i].mesh = Some(flat.meshes.len() - 1);
    }
    for node in &mut flat.nodes {
        node.transform = keyscene::scene::Transform::IDENTITY;
        node.set_geometry_transform(glam::DMat4::IDENTITY);
        node.pivots = None;
        node.inherit = Default::default();
    }
    let reference = fbx_dir.join(&row.obj);
    let ref_text = std::fs::read_to_string(&reference).unwrap_or_default();
    let (lo, hi) = obj_bounds(&ref_text);
    let size = if lo.x.is_finite() { (hi - lo).length() } else { 0.0 };
    let tol = 1e-4 * size.max(1.0);
    let dual_quaternion = src.skins.iter().any(|s| s.dq_weights.iter().any(|&d| d > 0.0));
    if worst > tol && dual_quaternion {
        return Outcome::Ignore(
            "dual-quaternion skinning: glTF has linear blend skinning only".into(),
        );
    }
    if worst > tol {
        return Outcome::Fail(format!(
            "read-back positions off the source's by {worst:.3e} (tolerance 1e-4 × size = {tol:.3e})"
        ));
    }
    let text = match keyscene::formats::obj::write(&flat, None, "x.mtl") {
        Ok(t) => t,
        Err(e) => return Outcome::Fail(format!("write OBJ: {e}")),
    };
    let cand = out_dir.join(format!("row{k}.obj"));
    if let Err(e) = std::fs::write(&cand, text.obj) {
        return Outcome::Fail(format!("{}: {e}", cand.display()));
    }
    let out = match row.obj_compare(oracles, &reference, &cand, false).output() {
        Ok(o) => o,
        Err(e) => return Outcome::Fail(format!("python3 obj_compare.py: {e}")),
    };
    if out.status.success() {
        return Outcome::Pass;
    }

    let report = String::from_utf8_lossy(&out.stdout).trim().to_string();
    // Does the source itself (no glTF) match ufbx? If not, this row is not the writer's to pass.
    let mut pose = src.evaluate(anim, Time::Seconds(time));
    pose.transform_world(convert);
    if let Ok(t) = keyscene::formats::obj::write(&src, Some(&pose), "x.mtl") {
        let direct = out_dir.join(format!("row{k}_source.obj"));
        if std::fs::write(&direct, t.obj).is_ok() {
            let mut cmd = row.obj_compare(oracles, &reference, &direct, false);
            if cmd.output().is_ok_and(|o| !o.status.success()) {
                return Outcome::Ignore("the source itself does not match ufbx here".into());
            }
        }
    }
    Outcome::Fail(format!("{report}{}", String::from_utf8_lossy(&out.stderr)))
}

/// One trial per `references.tsv` row; the checks run here because whether a row is ignored
/// depends on its outcome (the name filter is honoured so a filtered run stays quick).
fn fbx_trials(corpus: &Option<PathBuf>) -> Vec<Trial> {
    let Some(dir) = corpus.clone() else { return Vec::new() };
    let oracles = common::refs::oracles(&dir);
    let out_dir = tempfile::tempdir().expect("temporary folder");
    let rows = reference_rows(&dir.join("fbx"));
    common::refs::checked_trials(&rows, "fbx ", |k, row| {
        check_fbx(&dir, &oracles, row, out_dir.path(), k)
    })
}

fn main() {
    let corpus = common::corpus();
    let mut trials: Vec<Trial> = vec![Trial::test("synthetic/every_feature", synthetic)];
    if !lib3ds::references(&corpus).is_empty() {
        trials.extend(lib3ds::trials(&corpus, check));
    }
    trials.extend(fbx_trials(&corpus));
    common::run(trials)
}

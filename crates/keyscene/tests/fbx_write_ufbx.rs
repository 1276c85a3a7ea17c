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
//!    same time, 1e-4 × max(1, scene size) (`common::ufbx_corpus::difference`), and at the
//!    first of those times every unskinned, unmorphed mesh's world vertex positions agree too.
//!
//! A source keyscene cannot load (the negative `wrong.3ds`) is reported *ignored*. A second opinion from the FBX SDK itself:
//! `fbx2gltf_converts_written_files` runs FBX2glTF 0.9.7 (`/opt/keyscene-oracles`, see
//! `shared/oracles/install_oracles.sh`) on the written 3DS files; ignored when it is absent.

mod common;

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

fn to_dmat4(m: &ufbx::Matrix) -> DMat4 {
    DMat4::from_cols_array(&[
        m.m00, m.m10, m.m20, 0.0, m.m01, m.m11, m.m21, 0.0, m.m02, m.m12, m.m22, 0.0, m.m03, m.m13,
        m.m23, 1.0,
    ])
}

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
            if !(id == 0 && k == 2) && !ids.contains(&id) {
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
    let (bytes, _report) = export::write(&scene, &export::WriteOptions::default())
        .map_err(|e| format!("write: {e}"))?;
    lint(&bytes)?;
    let theirs = ufbx::load_memory(&bytes, ufbx::LoadOpts::default())
        .map_err(|e| format!("ufbx cannot load the written file: {:?}", e.description))?;
    compare(&scene, &theirs)
}

fn compare(scene: &Scene, theirs: &ufbx::SceneRoot) -> Result<(), String> {
    // (frame on keyscene's clock, seconds); `None`: the rest pose.
    let times: Vec<Option<f64>> = match scene.animations.first() {
        Some(a) => {
            let (f0, f1) = a.frame_range;
            let mid = (0.5 * (f0 + f1)).round().clamp(f0, f1.max(f0));
            vec![Some(f0), Some(mid), Some(f1.max(f0))]
        }
        None => vec![None],
    };
    let fps = scene.animations.first().map_or(30.0, |a| a.fps);
    let mut posed = Vec::new();
    for &t in &times {
        let ours = match t {
            Some(f) => scene.evaluate(Some(0), Time::Frame(f)),
            None => scene.evaluate(None, Time::Frame(0.0)),
        };
        let evaluated;
        let nodes = match t {
            Some(f) => {
                evaluated = ufbx::evaluate_scene(theirs, &theirs.anim, f / fps, Default::default())
                    .map_err(|e| format!("ufbx evaluate: {:?}", e.description))?;
                &evaluated.nodes
            }
            None => &theirs.nodes,
        };
        let worlds: Vec<(String, DMat4, DMat4, Vec<DVec3>)> = nodes
            .iter()
            .filter(|n| !n.is_root)
            .map(|n| {
                let g = to_dmat4(&n.geometry_to_world);
                let v = n.mesh.as_ref().map_or(Vec::new(), |m| {
                    m.vertices
                        .iter()
                        .map(|p| g.transform_point3(DVec3::new(p.x, p.y, p.z)))
                        .collect()
                });
                (n.element.name.to_string(), to_dmat4(&n.node_to_world), g, v)
            })
            .collect();
        posed.push((t, ours, worlds));
    }
    let size =
        common::ufbx_corpus::scene_size(posed.iter().flat_map(|(_, _, w)| w.iter().map(|x| &x.1)));
    let names: Vec<String> = scene.nodes.iter().map(|n| clean(&n.name)).collect();
    for (k, (t, pose, worlds)) in posed.iter().enumerate() {
        let when = t.map_or("the rest pose".to_string(), |f| format!("frame {f}"));
        for (name, want, _, verts) in worlds {
            let cands: Vec<usize> = (0..names.len()).filter(|&i| names[i] == *name).collect();
            if cands.is_empty() {
                return Err(format!("ufbx node {name:?} has no source node of that name"));
            }
            let (err, i) = cands
                .iter()
                .map(|&i| {
                    let (l, tr) = common::ufbx_corpus::difference(pose.world[i], *want, size);
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
            if k != 0 || verts.is_empty() {
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
            if mesh.skin.is_some()
                || !mesh.morph_targets.is_empty()
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
    Ok(())
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
        if let Err(e) = keyscene::load(&path) {
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
        if path.extension().is_some_and(|e| e.eq_ignore_ascii_case("3ds")) {
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

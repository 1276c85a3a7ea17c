//! Differential test against the `ufbx` crate (issue #3, §4 item 4): for every corpus FBX file
//! that ufbx loads with default options, keyscene's `Scene::evaluate` and ufbx's
//! `evaluate_scene` agree on every node's world matrix at the first animation stack's start,
//! middle and end (ufbx's default animation is the first stack, `scene.anim`; keyscene's is
//! animation 0), and on every mesh's vertex and index counts.
//!
//! - Times are ufbx's `anim_stacks[0].time_begin`, the midpoint and `time_end`, in seconds
//!   (`Time::Seconds` on the keyscene side). A file without stacks is compared once, at its
//!   stored pose (`evaluate(None, …)` against ufbx's `node_to_world` as loaded).
//! - Tolerance 1e-4: the 3×3 part relative to its largest entry (at least 1); translations
//!   relative to the scene size, the largest ufbx world translation over the three times (at
//!   least 1).
//! - Nodes pair by name (ufbx orders them by hierarchy, keyscene by file); of several nodes
//!   with one name the closest pairs. Names that are not UTF-8 (`magnum/warning-cube.fbx`)
//!   are made valid differently by ufbx and by keyscene (`String::from_utf8_lossy`); such
//!   nodes have no partner and are skipped.
//! - Mesh counts: vertices (control points) and indices (polygon corners) per named mesh node.
//!
//! Files ufbx cannot load are reported *ignored*; every other file is compared, MANIFEST.md's
//! negative ones included (where ufbx loads one, keyscene must too). Disagreements that are understood are listed in [`EXCEPTIONS`], each with why; a
//! listed file that starts to agree fails, so the list stays true.

mod common;

use common::ufbx_corpus::{to_dmat4, NodesByName};

use std::path::Path;

use glam::DMat4;
use keyscene::anim::Time;
use libtest_mimic::Trial;

/// Known disagreements: (file, text the failure must contain, why). A listed file must still
/// fail with that text: when it agrees with ufbx, or fails differently, the trial fails.
const EXCEPTIONS: &[(&str, &str, &str)] = &[];

fn check(fbx_dir: &Path, rel: &str) -> Result<(), String> {
    let bytes = std::fs::read(fbx_dir.join(rel)).map_err(|e| e.to_string())?;
    let theirs = ufbx::load_memory(&bytes, ufbx::LoadOpts::default())
        .map_err(|e| format!("ufbx: {:?}", e.description))?;
    let (scene, _) = keyscene::load_bytes(&bytes, Some(&fbx_dir.join(rel)), &Default::default())
        .map_err(|e| format!("keyscene: {e}"))?;

    // Mesh counts, per named mesh node.
    for node in theirs.nodes.iter().filter(|n| !n.is_root) {
        let Some(mesh) = node.mesh.as_ref() else { continue };
        let name: &str = &node.element.name;
        if !scene.nodes.iter().any(|n| n.name == name) {
            continue; // a name ufbx sanitised differently (see the module docs)
        }
        let ours: Vec<_> =
            scene.nodes.iter().filter(|n| n.name == name).filter_map(|n| n.mesh).collect();
        let want = (mesh.num_vertices, mesh.num_indices);
        if !ours.iter().any(|&m| {
            (scene.meshes[m].positions.len(), scene.meshes[m].corner_vertices.len()) == want
        }) {
            let got: Vec<_> = ours
                .iter()
                .map(|&m| (scene.meshes[m].positions.len(), scene.meshes[m].corner_vertices.len()))
                .collect();
            return Err(format!(
                "mesh of {name:?}: (vertices, indices) ufbx {want:?}, keyscene {got:?}"
            ));
        }
    }

    // World matrices at the stack's start, middle and end (or the stored pose).
    let stack = theirs.anim_stacks.iter().next();
    let times: Vec<Option<f64>> = match stack {
        Some(s) => {
            vec![Some(s.time_begin), Some(0.5 * (s.time_begin + s.time_end)), Some(s.time_end)]
        }
        None => vec![None],
    };
    let mut posed = Vec::new();
    for &t in &times {
        let worlds: Vec<(String, DMat4)> = match t {
            Some(t) => {
                let s = ufbx::evaluate_scene(&theirs, &theirs.anim, t, Default::default())
                    .map_err(|e| format!("ufbx evaluate: {:?}", e.description))?;
                s.nodes
                    .iter()
                    .filter(|n| !n.is_root)
                    .map(|n| (n.element.name.to_string(), to_dmat4(&n.node_to_world)))
                    .collect()
            }
            None => theirs
                .nodes
                .iter()
                .filter(|n| !n.is_root)
                .map(|n| (n.element.name.to_string(), to_dmat4(&n.node_to_world)))
                .collect(),
        };
        posed.push((t, worlds));
    }
    let size =
        common::ufbx_corpus::scene_size(posed.iter().flat_map(|(_, w)| w.iter().map(|(_, m)| m)));
    let by_name = NodesByName::new(&scene, str::to_string);
    for (t, worlds) in &posed {
        let pose = match t {
            Some(t) => scene.evaluate(Some(0), Time::Seconds(*t)),
            None => scene.evaluate(None, Time::Frame(0.0)),
        };
        let ranks = NodesByName::ranks(worlds.iter().map(|w| w.0.as_str()));
        for ((name, want), rank) in worlds.iter().zip(ranks) {
            let best = by_name.pair(name, rank, 1e-4, |i| {
                let (l, tr) = common::ufbx_corpus::difference(pose.world[i], *want, size);
                l.max(tr)
            });
            let Some((err, got)) = best.map(|(e, i)| (e, pose.world[i])) else { continue };
            if err.is_nan() || err > 1e-4 {
                let when = t.map_or("the stored pose".to_string(), |t| format!("t = {t} s"));
                return Err(format!(
                    "node {name:?} at {when}: world differs from ufbx by {err:e}\nkeyscene {got}\nufbx     {want}"
                ));
            }
        }
    }
    Ok(())
}

fn main() {
    let corpus = common::corpus();
    let mut trials = Vec::new();
    for common::ufbx_corpus::FbxFile { dir, rel, ufbx_loads, .. } in
        common::ufbx_corpus::fbx_files(&corpus)
    {
        if !ufbx_loads {
            trials.push(
                Trial::test(format!("ignored: ufbx cannot load it :: {rel}"), || Ok(()))
                    .with_ignored_flag(true),
            );
            continue;
        }
        let exception = EXCEPTIONS.iter().find(|(f, ..)| *f == rel).map(|&(_, m, why)| (m, why));
        let name = match exception {
            Some(_) => format!("ufbx::{rel} (listed exception)"),
            None => format!("ufbx::{rel}"),
        };
        trials.push(common::corpus_trial(name, &corpus, move |_| {
            match (check(&dir, &rel), exception) {
                (Ok(()), None) => Ok(()),
                (Err(e), None) => Err(format!("{rel}: {e}").into()),
                (Err(e), Some((m, _))) if e.contains(m) => Ok(()),
                (Err(e), Some((_, why))) => {
                    Err(format!("{rel}: {e}\n(listed exception, for another reason: {why})").into())
                }
                (Ok(()), Some((_, why))) => {
                    Err(format!("{rel} now agrees with ufbx; remove its exception ({why})").into())
                }
            }
        }));
    }
    common::run(trials)
}

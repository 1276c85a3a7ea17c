//! Corpus FBX files vs the ufbx `.obj` references, row by row of `fbx/references.tsv`
//! (MANIFEST.md, "How the ufbx .obj references work"; oracles README, "FBX → OBJ reference
//! harness").
//!
//! Each row: `keyscene::load` the FBX, pose it (`static` rows: the stored pose,
//! `Scene::evaluate(None, …)`; `time` rows: the row's stack at `time_s` seconds), apply the
//! row's axis/unit conversion (`y_up_m`, `y_up_cm`: the world re-expressed in right-handed
//! Y-up axes and metres or centimetres, as ufbx's `target_axes`/`target_unit_meters` with
//! `space_conversion = transform-root`; `Scene::axis_unit_conversion`), pose from a stored bind pose when the row says
//! `bind_pose=NAME` (`Pose::apply_bind_pose`: every node the pose lists at its matrix, the
//! others under their parents),
//! evaluate without curve extrapolation for `no_extrapolation` rows
//! (`Animation::without_extrapolation`), and for `transform_skin` rows map the skinned mesh
//! once more by its node's `mesh_to_world · bind⁻¹` (`Pose::follow_skinned_nodes`),
//! write OBJ with `formats::obj::write`, and compare
//! with `obj_compare.py` (found at `KEYSCENE_ORACLES`, else `<corpus>/../oracles`) with the
//! row's matching, tolerance, position scale, normals and UVs.
//!
//! A row that fails is a failure: rows that fail today for a known reason are listed, by
//! defect class, in `tests/triage.tsv` and reported ignored under `[known defect: CLASS]`.

mod common;

use std::path::Path;

use common::refs::{reference_rows, Outcome, RefRow};
use keyscene::anim::Time;
use keyscene::scene::AxisSystem;

fn check(corpus: &Path, oracles: &Path, row: &RefRow, out_dir: &Path, k: usize) -> Outcome {
    let fbx_dir = corpus.join("fbx");
    let bytes = match std::fs::read(fbx_dir.join(&row.fbx)) {
        Ok(b) => b,
        Err(e) => return Outcome::Fail(format!("read: {e}")),
    };
    let mut opts = keyscene::ReadOptions::default();
    opts.base_dir = fbx_dir.join(&row.fbx).parent().map(Path::to_path_buf);
    let mut scene = match keyscene::load_bytes(&bytes, Some(&fbx_dir.join(&row.fbx)), &opts) {
        Ok((s, _)) => s,
        Err(e) => return Outcome::Fail(format!("load: {e}")),
    };
    let mut pose = match row.posed_animation(&mut scene) {
        Ok(Some((anim, t))) => scene.evaluate(anim, Time::Seconds(t)),
        Ok(None) => scene.evaluate(None, Time::Frame(0.0)),
        Err(outcome) => return outcome,
    };
    if let Some(name) = row.options.split(',').find_map(|o| o.trim().strip_prefix("bind_pose=")) {
        let Some(bind) = scene.bind_pose(name) else {
            return Outcome::Fail(format!("no bind pose {name:?}"));
        };
        pose.apply_bind_pose(&scene, bind);
    }
    if row.transform_skin {
        let missing = pose.follow_skinned_nodes(&scene, &scene.bind_poses);
        if let Some(&n) = missing.first() {
            return Outcome::Fail(format!(
                "{}: no bind pose matrix for transform_skin",
                scene.nodes[n].name
            ));
        }
    }
    let convert = match row.conversion.as_str() {
        "" => None,
        "y_up_m" => Some(scene.axis_unit_conversion(AxisSystem::Y_UP_RIGHT_HANDED, Some(1.0))),
        "y_up_cm" => Some(scene.axis_unit_conversion(AxisSystem::Y_UP_RIGHT_HANDED, Some(0.01))),
        other => return Outcome::Fail(format!("unknown conversion {other}")),
    };
    if let Some(c) = convert {
        pose.transform_world(c);
    }
    let text = match keyscene::formats::obj::write(&scene, Some(&pose), "x.mtl") {
        Ok(t) => t,
        Err(e) => return Outcome::Fail(format!("write: {e}")),
    };
    let cand = out_dir.join(format!("row{k}.obj"));
    if let Err(e) = std::fs::write(&cand, text.obj) {
        return Outcome::Fail(format!("{}: {e}", cand.display()));
    }
    let out = match row.obj_compare(oracles, &fbx_dir.join(&row.obj), &cand, true).output() {
        Ok(o) => o,
        Err(e) => return Outcome::Fail(format!("python3 obj_compare.py: {e}")),
    };
    let report = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if out.status.success() {
        return Outcome::Pass;
    }
    Outcome::Fail(format!("{report}{}", String::from_utf8_lossy(&out.stderr)))
}

fn main() {
    let corpus = common::corpus();
    let Some(dir) = corpus.clone() else {
        common::run(vec![common::corpus_trial("references", &corpus, |_| Ok(()))]);
    };
    let oracles = common::refs::oracles(&dir);
    let out_dir = tempfile::tempdir().expect("temporary folder");
    let all = reference_rows(&dir.join("fbx"));
    assert!(all.len() >= 100, "references.tsv has {} rows", all.len());
    let trials = common::refs::checked_trials(&all, "", |k, row| {
        check(&dir, &oracles, row, out_dir.path(), k)
    });
    common::run(trials)
}

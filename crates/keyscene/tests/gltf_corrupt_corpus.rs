//! Hostile glTF made from the corpus: the glTF reader (`formats::gltf::read`) must never panic,
//! hang or allocate without bound, whatever the bytes (the brief's "Untrusted input").
//!
//! Every 3DS corpus file and a set of FBX corpus files chosen for what they carry (skins, blend
//! shapes, cameras and lights, textures, long and layered animation; [`FBX_FILES`]) is written
//! as GLB in memory (`gltf::write` with its defaults). One trial per source file then feeds the
//! reader:
//!
//! 1. **Truncation** at 64 offsets spread over the file: the reader returns an error (a GLB
//!    header states the total length, glTF 2.0 §4.4.3.1, so no cut file is valid).
//! 2. **Byte flips**: 96 random bytes (a fixed seed per file) XOR-ed with a random non-zero
//!    value, one at a time. Flips in the BIN chunk leave a valid container whose numbers are
//!    wrong: indices past the vertex count, NaN positions, joint indices past the skin.
//! 3. **Structural edits** of the JSON chunk, each written back as GLB ([`edits`]): accessor
//!    `count`/`byteOffset` past the buffer, wrong `componentType`/`type`; buffer views past the
//!    BIN chunk or with a stride shorter than their element; primitives whose `indices` or
//!    `JOINTS_0` name a float accessor; keyscene's `_KEYSCENE_VERTEX` attribute pointing at a
//!    VEC3 accessor or at huge indices; morph targets and animation samplers naming accessors
//!    of the wrong count; skins with a joint out of range, a missing or wrong-typed
//!    `inverseBindMatrices`; node hierarchies with a cycle or a node of two parents; channels
//!    whose node is out of range; huge or zero scales. An edit that breaks a rule of glTF 2.0
//!    (§3.6.2.4 accessor bounds, §3.7.2.1 "all indices MUST be less than the number of
//!    vertices"... wherever the reader has no way to read the data) must give an error or a
//!    warning, not a silent scene: [`Edit::must_complain`].
//!
//! Every scene that does load is then evaluated at the first, middle and last frame of its
//! first animation, with every mesh node's world positions computed, so the evaluator sees
//! the hostile numbers too. Each probe runs under `catch_unwind` and a time limit: a panic, or
//! a read plus evaluation over 10 s, fails the trial. A file's probes stop after 40 s (said).

mod common;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::time::{Duration, Instant};

use keyscene::anim::Time;
use keyscene::formats::gltf;
use libtest_mimic::{Failed, Trial};
use serde_json::{json, Value};

/// Truncation offsets per file.
const CUTS: usize = 64;
/// Byte flips per file.
const FLIPS: usize = 96;
/// Time per file; the probes left when it is spent are not run (printed).
const BUDGET: Duration = Duration::from_secs(40);
/// GLBs larger than this are not corrupted (each probe reads the whole file).
const MAX_BYTES: usize = 4 << 20;

/// FBX corpus files whose GLB is corrupted, each for what it carries.
const FBX_FILES: &[&str] = &[
    "ufbx/maya_kenney_character_7700_binary.fbx", // skin, walk animation
    "ufbx/blender_293_barbarian_7400_binary.fbx", // skin, textures
    "ufbx/maya_blend_shape_cube_7700_binary.fbx", // blend shapes
    "ufbx/maya_blend_inbetween_7500_binary.fbx",  // in-between shapes
    "magnum/cameras.fbx",
    "magnum/lights.fbx",
    "magnum/animation-interpolation.fbx", // cubic, linear, constant keys
    "magnum/animation-layer.fbx",
    "magnum/skinning.fbx",
    "magnum/texture-wrap-modes.fbx",
    "ufbx/maya_anim_layer_anim_7700_ascii.fbx",
    "fbx-conv/softimage_head2.fbx", // large mesh, tangents
];

/// One structural edit of the glTF JSON.
struct Edit {
    what: String,
    /// Whether the edited file breaks a rule whose data the reader cannot use, so loading it
    /// without an error or a warning would be wrong.
    must_complain: bool,
    json: Value,
}

fn len_of(v: &Value, key: &str) -> usize {
    v.get(key).and_then(Value::as_array).map_or(0, Vec::len)
}

/// The structural edits of `doc` (see the module docs), at most a few per kind.
fn edits(doc: &Value) -> Vec<Edit> {
    let mut out = Vec::new();
    let mut push = |what: String, must_complain: bool, f: &dyn Fn(&mut Value)| {
        let mut j = doc.clone();
        f(&mut j);
        if &j != doc {
            out.push(Edit { what, must_complain, json: j });
        }
    };
    let accessors = len_of(doc, "accessors");
    let views = len_of(doc, "bufferViews");
    // Accessors: count and offset past their view, wrong component type and type.
    for a in (0..accessors).step_by((accessors / 6).max(1)) {
        push(format!("accessors[{a}].count = 2^31"), true, &|j| {
            j["accessors"][a]["count"] = json!(0x8000_0000u64)
        });
        push(format!("accessors[{a}].byteOffset = 2^31"), true, &|j| {
            j["accessors"][a]["byteOffset"] = json!(0x8000_0000u64)
        });
        push(format!("accessors[{a}].componentType = UNSIGNED_BYTE"), false, &|j| {
            j["accessors"][a]["componentType"] = json!(5121)
        });
        push(format!("accessors[{a}].type = MAT4"), false, &|j| {
            j["accessors"][a]["type"] = json!("MAT4")
        });
    }
    // Buffer views past the buffer, strides shorter than an element.
    for v in (0..views).step_by((views / 4).max(1)) {
        push(format!("bufferViews[{v}].byteLength = 2^31"), true, &|j| {
            j["bufferViews"][v]["byteLength"] = json!(0x8000_0000u64)
        });
        push(format!("bufferViews[{v}].byteOffset = 2^31"), true, &|j| {
            j["bufferViews"][v]["byteOffset"] = json!(0x8000_0000u64)
        });
        push(format!("bufferViews[{v}].byteStride = 4"), false, &|j| {
            j["bufferViews"][v]["byteStride"] = json!(4)
        });
    }
    push("buffers[0].byteLength = 2^31".into(), true, &|j| {
        if j["buffers"][0].is_object() {
            j["buffers"][0]["byteLength"] = json!(0x8000_0000u64)
        }
    });
    // Primitives: indices and joints naming a float accessor; the vertex-order attribute
    // pointing at a VEC3 accessor.
    for (m, mesh) in doc["meshes"].as_array().into_iter().flatten().enumerate().take(3) {
        let Some(p0) = mesh["primitives"].get(0) else { continue };
        let pos = p0["attributes"]["POSITION"].clone();
        push(format!("meshes[{m}].primitives[0].indices = POSITION"), false, &|j| {
            j["meshes"][m]["primitives"][0]["indices"] = pos.clone()
        });
        push(
            format!("meshes[{m}].primitives[0].attributes._KEYSCENE_VERTEX = POSITION"),
            false,
            &|j| {
                if j["meshes"][m]["primitives"][0]["attributes"].get("_KEYSCENE_VERTEX").is_some() {
                    j["meshes"][m]["primitives"][0]["attributes"]["_KEYSCENE_VERTEX"] = pos.clone()
                }
            },
        );
        if p0["attributes"].get("JOINTS_0").is_some() {
            let w = p0["attributes"]["WEIGHTS_0"].clone();
            push(
                format!("meshes[{m}].primitives[0].attributes.JOINTS_0 = WEIGHTS_0"),
                false,
                &|j| j["meshes"][m]["primitives"][0]["attributes"]["JOINTS_0"] = w.clone(),
            );
        }
        if p0.get("targets").and_then(|t| t.get(0)).is_some() {
            let idx = p0["indices"].clone();
            push(format!("meshes[{m}].primitives[0].targets[0].POSITION = indices"), false, &|j| {
                j["meshes"][m]["primitives"][0]["targets"][0]["POSITION"] = idx.clone()
            });
        }
    }
    // Skins.
    for s in 0..len_of(doc, "skins").min(2) {
        let nodes = len_of(doc, "nodes");
        push(format!("skins[{s}].joints[0] = nodes.len()"), false, &|j| {
            j["skins"][s]["joints"][0] = json!(nodes)
        });
        push(format!("skins[{s}] without inverseBindMatrices"), false, &|j| {
            if let Some(o) = j["skins"][s].as_object_mut() {
                o.remove("inverseBindMatrices");
            }
        });
        push(format!("skins[{s}].inverseBindMatrices = accessors[0]"), false, &|j| {
            j["skins"][s]["inverseBindMatrices"] = json!(0)
        });
    }
    // Animations: samplers naming each other's accessors, interpolation changed, channel
    // target out of range.
    for a in 0..len_of(doc, "animations").min(2) {
        let samplers = len_of(&doc["animations"][a], "samplers");
        for s in (0..samplers).step_by((samplers / 3).max(1)) {
            push(format!("animations[{a}].samplers[{s}]: input and output swapped"), false, &|j| {
                let smp = &mut j["animations"][a]["samplers"][s];
                let (i, o) = (smp["input"].clone(), smp["output"].clone());
                smp["input"] = o;
                smp["output"] = i;
            });
            push(
                format!("animations[{a}].samplers[{s}].interpolation = CUBICSPLINE"),
                false,
                &|j| j["animations"][a]["samplers"][s]["interpolation"] = json!("CUBICSPLINE"),
            );
        }
        let nodes = len_of(doc, "nodes");
        push(format!("animations[{a}].channels[0].target.node = nodes.len()"), true, &|j| {
            j["animations"][a]["channels"][0]["target"]["node"] = json!(nodes)
        });
    }
    // Hierarchy: a cycle, a node with two parents, degenerate scales.
    let nodes = len_of(doc, "nodes");
    let with_child =
        doc["nodes"].as_array().and_then(|ns| ns.iter().position(|n| len_of(n, "children") > 0));
    if let Some(p) = with_child {
        let c = doc["nodes"][p]["children"][0].as_u64().unwrap_or(0) as usize;
        push(format!("nodes[{c}].children += {p} (cycle)"), true, &|j| {
            let ch = &mut j["nodes"][c]["children"];
            if !ch.is_array() {
                *ch = json!([]);
            }
            ch.as_array_mut().unwrap().push(json!(p));
        });
    }
    if nodes >= 3 {
        let last = nodes - 1;
        push(format!("nodes[0].children += {last} (second parent)"), true, &|j| {
            let ch = &mut j["nodes"][0]["children"];
            if !ch.is_array() {
                *ch = json!([]);
            }
            if !ch.as_array().unwrap().contains(&json!(last)) {
                ch.as_array_mut().unwrap().push(json!(last));
            }
        });
    }
    for (what, s) in [("0", 0.0), ("1e300", 1e300)] {
        push(format!("every node's scale = {what}"), false, &|j| {
            for n in j["nodes"].as_array_mut().into_iter().flatten() {
                if n.get("matrix").is_none() {
                    n["scale"] = json!([s, s, s]);
                }
            }
        });
    }
    out
}

/// Reads `bytes`, then evaluates what loaded; returns whether the reader complained (an
/// error, or a warning).
fn probe(bytes: &[u8]) -> Result<bool, String> {
    let t = Instant::now();
    let complained = catch_unwind(AssertUnwindSafe(|| {
        match gltf::read(bytes, &keyscene::ReadOptions::default()) {
            Err(_) => true,
            Ok((scene, warnings)) => {
                if let Some(a) = scene.animations.first() {
                    let (lo, hi) = a.frame_range;
                    for f in [lo, (lo + hi) / 2.0, hi] {
                        let pose = scene.evaluate(Some(0), Time::Frame(f));
                        for n in (0..scene.nodes.len()).filter(|&n| scene.nodes[n].mesh.is_some()) {
                            let _ = pose.world_positions(&scene, n);
                        }
                    }
                } else {
                    let pose = scene.evaluate(None, Time::Frame(0.0));
                    for n in (0..scene.nodes.len()).filter(|&n| scene.nodes[n].mesh.is_some()) {
                        let _ = pose.world_positions(&scene, n);
                    }
                }
                !warnings.is_empty()
            }
        }
    }))
    .map_err(|_| "panicked".to_string())?;
    if t.elapsed() > Duration::from_secs(10) {
        return Err(format!("took {:?}", t.elapsed()));
    }
    Ok(complained)
}

/// The JSON and BIN chunks of a GLB the writer made (trusted bytes).
fn chunks(glb: &[u8]) -> (Value, Vec<u8>, usize) {
    let u32_at = |o: usize| u32::from_le_bytes(glb[o..o + 4].try_into().unwrap()) as usize;
    let json_len = u32_at(12);
    let json: Value = serde_json::from_slice(&glb[20..20 + json_len]).expect("writer's JSON");
    let bin_at = 20 + json_len;
    let bin = if glb.len() > bin_at + 8 {
        glb[bin_at + 8..bin_at + 8 + u32_at(bin_at)].to_vec()
    } else {
        Vec::new()
    };
    (json, bin, bin_at + 8)
}

fn corrupt(glb: &[u8], seed: u64) -> Result<(), Failed> {
    let deadline = Instant::now() + BUDGET;
    let mut failures = Vec::new();
    let mut skipped = 0usize;
    let mut run = |b: &[u8]| {
        if Instant::now() < deadline {
            Some(probe(b))
        } else {
            skipped += 1;
            None
        }
    };
    // 1. Truncation.
    let len = glb.len();
    let mut cuts: Vec<usize> = (0..CUTS).map(|i| i * (len - 1) / (CUTS - 1)).collect();
    cuts.dedup();
    for &cut in &cuts {
        match run(&glb[..cut]) {
            Some(Ok(true)) | None => {}
            Some(Ok(false)) => failures.push(format!("cut at {cut}: loaded without complaint")),
            Some(Err(e)) => failures.push(format!("cut at {cut}: {e}")),
        }
    }
    // 2. Byte flips, half of them in the BIN chunk (where the container stays valid).
    let (doc, bin, bin_at) = chunks(glb);
    let mut rng = common::Rng(seed | 1);
    for i in 0..FLIPS {
        let at = if i % 2 == 1 && !bin.is_empty() {
            bin_at + (rng.next() % bin.len() as u64) as usize
        } else {
            (rng.next() % len as u64) as usize
        };
        let x = (rng.next() % 255) as u8 + 1;
        let mut b = glb.to_vec();
        b[at] ^= x;
        if let Some(Err(e)) = run(&b) {
            failures.push(format!("flip {x:#04x} at {at}: {e}"));
        }
    }
    // 3. Structural edits.
    for e in edits(&doc) {
        let json = serde_json::to_vec(&e.json).expect("JSON");
        let b = gltf::glb::to_glb(&json, &bin).expect("GLB");
        match run(&b) {
            Some(Ok(false)) if e.must_complain => {
                failures.push(format!("{}: loaded without an error or a warning", e.what))
            }
            Some(Err(err)) => failures.push(format!("{}: {err}", e.what)),
            _ => {}
        }
    }
    if skipped > 0 {
        eprintln!("time budget of {BUDGET:?} spent: {skipped} probes not run");
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(format!("{} of the corruptions failed:\n{}", failures.len(), failures.join("\n"))
            .into())
    }
}

fn trial(name: String, corpus: &Option<std::path::PathBuf>, rel: String, seed: u64) -> Trial {
    common::corpus_trial(name, corpus, move |dir: &Path| {
        let path = dir.join(&rel);
        let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let (scene, _) = keyscene::load_bytes(&bytes, Some(&path), &Default::default())
            .map_err(|e| format!("{rel}: {e}"))?;
        // With `_KEYSCENE_VERTEX`, so that its reader is corrupted too.
        let mut opts = gltf::WriteOptions::default();
        opts.source_vertex_ids = true;
        let glb = gltf::write(&scene, &opts).map_err(|e| format!("{rel}: writing GLB: {e}"))?.main;
        if glb.len() > MAX_BYTES {
            eprintln!("{rel}: GLB of {} bytes not corrupted (over {MAX_BYTES})", glb.len());
            return Ok(());
        }
        gltf::read(&glb, &Default::default()).map_err(|e| format!("the intact GLB: {e}"))?;
        corrupt(&glb, seed)
    })
}

fn main() {
    let corpus = common::corpus();
    let mut trials = Vec::new();
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    let three_ds: Vec<String> = match &corpus {
        Some(dir) => common::files_with_ext(&dir.join("3ds"), &["3ds", "prj"])
            .into_iter()
            .filter(|p| !p.ends_with("wrong.3ds"))
            .map(|p| p.strip_prefix(dir).unwrap().to_string_lossy().into_owned())
            .collect(),
        // Without a corpus one ignored trial stands for the folder.
        None => vec!["3ds".into()],
    };
    for rel in three_ds.into_iter().chain(FBX_FILES.iter().map(|f| format!("fbx/{f}"))) {
        seed = seed.wrapping_add(0x9E37_79B9);
        trials.push(trial(rel.clone(), &corpus, rel, seed));
    }
    common::run(trials)
}

//! `--compress` output (issue 36 §4, docs/gltf.md "Compressed output"): every corpus 3DS/PRJ
//! file (except `online3dviewer/wrong.3ds`, not 3DS) and every corpus FBX file that loads, plus
//! the hand-built feature scene, is written with `WriteOptions::compress` and
//!
//! 1. gets 0 errors from the Khronos glTF-Validator (`tools/validate_gltf.mjs`, which knows
//!    `EXT_meshopt_compression` and `KHR_mesh_quantization`; files in chunks, one node process
//!    per chunk), and
//! 2. read back by keyscene's reader (meshopt decoding, dequantization), puts every mesh node's
//!    vertices within 1e-4 × the scene size (the bounding-box diagonal of all vertices at that
//!    time, the writers' bound) of where the uncompressed GLB, read back the same way, puts
//!    them: at the first, middle and last frame (and half a frame after the first) of the first
//!    animation, or at rest (by vertex index; as sets, [`set_distance`], when the order differs).
//!    The uncompressed output is itself held to lib3ds and ufbx by
//!    `gltf_roundtrip`; mesh instances are matched by mesh (the compressed file carries an
//!    unskinned mesh on a child node holding the dequantization).
//!
//! The feature scene's document is also checked against the extension specs: both extensions
//! used and required, buffer 1 a fallback buffer (`fallback: true`, no `uri`), every compressed
//! view inside it and its stream inside buffer 0.
//!
//! The reader on files it did not write: with `KEYSCENE_GLTFPACK` naming a gltfpack executable
//! (npm `gltfpack`, 0.24), a sample of the corpus (every 20th file) written plain is packed
//! by gltfpack (`-c -kn -km -ke -af 0`, keys not resampled: meshopt with its filters, `TRIANGLES` indices, its own
//! quantization) and read back; the posed bounding box at the times above must lie within
//! 1e-3 of the diagonal of the plain file's (gltfpack's 14-bit positions and 12-bit rotations
//! are coarser than keyscene's bound; a wrong decode is far outside).
//!
//! Without node or the validator package (`KEYSCENE_NODE_MODULES`) the validator half is
//! skipped (each trial says so on stderr); without the corpus the corpus trials are ignored.

mod common;
#[path = "gltf_scenes/mod.rs"]
mod gltf_scenes;

use std::path::{Path, PathBuf};
use std::process::Command;

use glam::DVec3;
use keyscene::anim::Time;
use keyscene::formats::gltf::{read, save, WriteOptions};
use keyscene::scene::Scene;
use libtest_mimic::{Failed, Trial};

/// Files per validator run.
const CHUNK: usize = 24;

fn node_modules() -> PathBuf {
    std::env::var_os("KEYSCENE_NODE_MODULES")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/opt/keyscene-oracles/node/node_modules"))
}

/// Why the validator cannot run here, or `None` when it can.
fn validator_missing() -> Option<String> {
    let probe = Command::new("node")
        .arg("-e")
        .arg("require(require('path').join(process.argv[1], 'gltf-validator'))")
        .arg(node_modules())
        .output();
    match probe {
        Err(e) => Some(format!("node not found: {e}")),
        Ok(o) if !o.status.success() => {
            Some(format!("gltf-validator not found in {}", node_modules().display()))
        }
        Ok(_) => None,
    }
}

/// Validates `files` in one node process: the files with errors and their first messages.
fn validate(files: &[PathBuf]) -> Result<(), String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tools/validate_gltf.mjs");
    let out = Command::new("node")
        .arg("--stack-size=4000")
        .arg(script)
        .args(files)
        .env("KEYSCENE_NODE_MODULES", node_modules())
        .output()
        .map_err(|e| format!("cannot run node: {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    let report = String::from_utf8_lossy(&out.stdout);
    let bad: Vec<&str> = report.lines().filter(|l| !l.contains("\"errors\":0,")).collect();
    Err(format!("validator: {}{}", bad.join("\n"), String::from_utf8_lossy(&out.stderr)))
}

/// The times compared: first, first + half a frame, middle and last frame of the first
/// animation (seconds), or the rest pose.
fn times(scene: &Scene) -> (Option<usize>, Vec<f64>) {
    let Some(a) = scene.animations.first() else { return (None, vec![0.0]) };
    let fps = if a.fps > 0.0 { a.fps } else { 30.0 };
    let (s, e) = a.frame_range;
    (Some(0), vec![s / fps, (s + 0.5) / fps, (s + e) / 2.0 / fps, e / fps])
}

/// World positions of every node showing mesh `m`, in node order, of the vertices a polygon
/// uses (the reader gives a source vertex no glTF vertex carries the mesh's local origin,
/// which the dequantization node moves).
fn instances(scene: &Scene, pose: &keyscene::anim::Pose, m: usize) -> Vec<Vec<DVec3>> {
    let mesh = &scene.meshes[m];
    let mut used = vec![false; mesh.positions.len()];
    for &v in &mesh.corner_vertices {
        if let Some(u) = used.get_mut(v as usize) {
            *u = true;
        }
    }
    (0..scene.nodes.len())
        .filter(|&i| scene.nodes[i].mesh == Some(m))
        .map(|i| {
            let world = pose.world_positions(scene, i);
            let keep = |(k, _): &(usize, &DVec3)| used.get(*k).copied().unwrap_or(true);
            world.iter().enumerate().filter(keep).map(|(_, p)| *p).collect()
        })
        .collect()
}

/// The largest distance from a point of either set to the nearest point of the other. Used
/// when the vertices differ in order: meshopt's `TRIANGLES` codec may start a triangle at
/// another corner (same winding), and where `_KEYSCENE_VERTEX` does not name every vertex
/// the reader's vertex order follows the corners.
fn set_distance(a: &[DVec3], b: &[DVec3]) -> f64 {
    let near = |p: &DVec3, set: &[DVec3]| {
        set.iter().map(|q| (*p - *q).abs().max_element()).fold(f64::INFINITY, f64::min)
    };
    let ab = a.iter().map(|p| near(p, b)).fold(0.0, f64::max);
    let ba = b.iter().map(|p| near(p, a)).fold(0.0, f64::max);
    ab.max(ba)
}

/// `packed` (read back from the compressed file) against `plain` (from the uncompressed one):
/// see the module docs.
fn compare(plain: &Scene, packed: &Scene) -> Result<(), String> {
    if plain.meshes.len() != packed.meshes.len() {
        return Err(format!("{} meshes, {} compressed", plain.meshes.len(), packed.meshes.len()));
    }
    let (anim, times) = times(plain);
    for t in times {
        let (pp, pc) =
            (plain.evaluate(anim, Time::Seconds(t)), packed.evaluate(anim, Time::Seconds(t)));
        let all: Vec<DVec3> =
            (0..plain.nodes.len()).flat_map(|i| pp.world_positions(plain, i)).collect();
        let (lo, hi) = common::bbox(all.iter().copied());
        let tol = 1e-4 * (hi - lo).length().max(1e-12);
        for m in 0..plain.meshes.len() {
            let (a, mut b) = (instances(plain, &pp, m), instances(packed, &pc, m));
            if a.len() != b.len() {
                return Err(format!("mesh {m}: {} instances, {} compressed", a.len(), b.len()));
            }
            for (k, want) in a.iter().enumerate() {
                let off = |got: &Vec<DVec3>| {
                    (got.len() == want.len()).then(|| {
                        let d = want
                            .iter()
                            .zip(got)
                            .map(|(w, g)| (*w - *g).abs().max_element())
                            .fold(0.0, f64::max);
                        if d > tol && want.len() <= 4000 {
                            set_distance(want, got)
                        } else {
                            d
                        }
                    })
                };
                // The instance nearest to this one (their order may differ).
                let best = (0..b.len())
                    .filter_map(|j| off(&b[j]).map(|d| (d, j)))
                    .min_by(|x, y| x.0.total_cmp(&y.0));
                let Some((d, j)) = best else {
                    return Err(format!("t {t:.4} s: mesh {m} instance {k}: no compressed match"));
                };
                if d > tol {
                    return Err(format!(
                        "t {t:.4} s: mesh {m} instance {k}: {d:.3e} from the uncompressed positions (tolerance {tol:.3e})"
                    ));
                }
                b.remove(j);
            }
        }
    }
    Ok(())
}

/// Writes `scene` compressed into `dir` (`NAME.glb`, and `NAME.gltf` when `gltf`), checks the
/// read-back positions ([`compare`]); returns the written files.
fn write_and_compare(
    scene: &Scene,
    dir: &Path,
    name: &str,
    gltf: bool,
) -> Result<Vec<PathBuf>, String> {
    let mut opts = WriteOptions::default();
    // The plain file keeps the source vertex order (`_KEYSCENE_VERTEX`) to compare by index.
    opts.source_vertex_ids = true;
    let plain = keyscene::formats::gltf::write(scene, &opts).map_err(|e| format!("write: {e}"))?;
    opts.compress = true;
    let glb = dir.join(format!("{name}.glb"));
    save(scene, &glb, &opts).map_err(|e| format!("write compressed: {e}"))?;
    let mut files = vec![glb.clone()];
    if gltf {
        let path = dir.join(format!("{name}.gltf"));
        save(scene, &path, &opts).map_err(|e| format!("write compressed .gltf: {e}"))?;
        files.push(path);
    }
    let ro = keyscene::ReadOptions::default();
    let (a, _) = read(&plain.main, &ro).map_err(|e| format!("read back: {e}"))?;
    let bytes = std::fs::read(&glb).map_err(|e| e.to_string())?;
    let (b, _) = read(&bytes, &ro).map_err(|e| format!("read back compressed: {e}"))?;
    compare(&a, &b)?;
    Ok(files)
}

/// The feature scene's compressed document against the extension specs (module docs).
fn document_follows_the_specs(glb: &[u8]) -> Result<(), String> {
    let (json, bin) = keyscene::formats::gltf::glb::split(glb).map_err(|e| e.to_string())?;
    let v: serde_json::Value = serde_json::from_slice(json).map_err(|e| e.to_string())?;
    for list in ["extensionsUsed", "extensionsRequired"] {
        for ext in ["EXT_meshopt_compression", "KHR_mesh_quantization"] {
            if !v[list].as_array().is_some_and(|l| l.iter().any(|e| e == ext)) {
                return Err(format!("{list} lacks {ext}"));
            }
        }
    }
    let fallback = &v["buffers"][1];
    if fallback["extensions"]["EXT_meshopt_compression"]["fallback"] != true
        || fallback.get("uri").is_some()
    {
        return Err(format!("buffer 1 is not a fallback buffer: {fallback}"));
    }
    let (len0, len1) =
        (bin.map_or(0, <[u8]>::len) as u64, fallback["byteLength"].as_u64().unwrap_or(0));
    let mut compressed = 0;
    for (i, view) in v["bufferViews"].as_array().into_iter().flatten().enumerate() {
        let ext = &view["extensions"]["EXT_meshopt_compression"];
        if ext.is_null() {
            continue;
        }
        compressed += 1;
        let end =
            view["byteOffset"].as_u64().unwrap_or(0) + view["byteLength"].as_u64().unwrap_or(0);
        let stream_end =
            ext["byteOffset"].as_u64().unwrap_or(0) + ext["byteLength"].as_u64().unwrap_or(0);
        let raw = ext["count"].as_u64().unwrap_or(0) * ext["byteStride"].as_u64().unwrap_or(0);
        if view["buffer"] != 1
            || end > len1
            || ext["buffer"] != 0
            || stream_end > len0
            || raw != view["byteLength"]
        {
            return Err(format!("bufferViews[{i}]: {view}"));
        }
    }
    if compressed == 0 {
        return Err("no compressed buffer view".into());
    }
    Ok(())
}

/// Every byte of the BIN chunk (the meshopt streams) flipped, and each stream's `count` and
/// `byteStride` set far past what its bytes hold: the reader returns (an error or a scene, the
/// decoder being safe on garbage), never panics, and refuses the huge counts before
/// allocating (`Limits::max_bytes`).
fn corrupt_streams_are_errors(glb: &[u8]) -> Result<(), Failed> {
    let ro = keyscene::ReadOptions::default();
    let json_len = u32::from_le_bytes(glb[12..16].try_into().expect("GLB header")) as usize;
    let bin_start = 20 + json_len + 8;
    for at in bin_start..glb.len() {
        let mut bad = glb.to_vec();
        bad[at] ^= 0xA5;
        let _ = read(&bad, &ro);
    }
    let json = std::str::from_utf8(&glb[20..20 + json_len]).map_err(|e| e.to_string())?;
    // The first ATTRIBUTES stream's `count` / `byteStride` (its object's keys are sorted, so
    // they come just before its `mode`).
    let mode = json.find("\"mode\":\"ATTRIBUTES\"").ok_or("no ATTRIBUTES stream")?;
    for (key, value) in [("\"count\":", "4000000000000"), ("\"byteStride\":", "252")] {
        let at = json[..mode].rfind(key).ok_or("no key before mode")? + key.len();
        let end = at + json[at..].find(',').ok_or("no comma")?;
        let edited = format!("{}{value}{}", &json[..at], &json[end..]);
        let to = format!("{key}{value}");
        let mut bytes = glb[..12].to_vec();
        let padded = format!("{edited:<width$}", width = edited.len().next_multiple_of(4));
        bytes.extend_from_slice(&(padded.len() as u32).to_le_bytes());
        bytes.extend_from_slice(b"JSON");
        bytes.extend_from_slice(padded.as_bytes());
        bytes.extend_from_slice(&glb[20 + json_len..]);
        let total = bytes.len() as u32;
        bytes[8..12].copy_from_slice(&total.to_le_bytes());
        if read(&bytes, &ro).is_ok() {
            return Err(format!("{to}…: read without an error").into());
        }
    }
    Ok(())
}

fn main() {
    let corpus = common::corpus();
    let missing = validator_missing();
    if let Some(why) = &missing {
        eprintln!("glTF validator unavailable ({why}): positions only");
    }
    let missing = std::sync::Arc::new(missing);
    let mut trials = Vec::new();
    let m = missing.clone();
    trials.push(Trial::test("synthetic/feature_scene_compressed_follows_the_specs", move || {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let scene = gltf_scenes::feature_scene(dir.path());
        let files = write_and_compare(&scene, dir.path(), "features", true)?;
        document_follows_the_specs(&std::fs::read(&files[0]).map_err(|e| e.to_string())?)?;
        if m.is_none() {
            validate(&files)?;
        }
        Ok(())
    }));
    trials.push(Trial::test("synthetic/corrupt_compressed_streams_are_errors_not_panics", || {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let scene = gltf_scenes::feature_scene(dir.path());
        let mut opts = WriteOptions::default();
        opts.compress = true;
        let glb = keyscene::formats::gltf::write(&scene, &opts).map_err(|e| e.to_string())?.main;
        corrupt_streams_are_errors(&glb)
    }));
    let mut files: Vec<PathBuf> = Vec::new();
    let gltfpack = std::env::var_os("KEYSCENE_GLTFPACK").map(PathBuf::from);
    if let Some(c) = &corpus {
        files.extend(
            common::files_with_ext(&c.join("3ds"), &["3ds", "prj"])
                .into_iter()
                .filter(|p| !p.ends_with("online3dviewer/wrong.3ds")),
        );
        files.extend(common::files_with_ext(&c.join("fbx"), &["fbx"]));
    }
    let root = corpus.clone().unwrap_or_default();
    // The same trials with or without gltfpack (their names are what tests/triage.tsv rows
    // name); without it each is ignored, its kind saying why.
    for file in files.iter().step_by(20) {
        let rel = file.strip_prefix(&root).unwrap_or(file).display().to_string();
        let trial = match &gltfpack {
            Some(exe) => {
                let (file, exe) = (file.clone(), exe.clone());
                Trial::test(format!("gltfpack/{rel}"), move || read_gltfpack(&file, &exe))
            }
            None => Trial::test(format!("gltfpack/{rel}"), || Ok(()))
                .with_kind("needs KEYSCENE_GLTFPACK")
                .with_ignored_flag(true),
        };
        trials.push(trial);
    }
    for (k, chunk) in files.chunks(CHUNK).enumerate() {
        let chunk: Vec<PathBuf> = chunk.to_vec();
        let rel = |p: &Path| p.strip_prefix(&root).unwrap_or(p).display().to_string();
        let name = format!(
            "corpus/chunk_{k:02}_validator_clean_and_positions_within_bound ({} … {})",
            rel(&chunk[0]),
            rel(chunk.last().expect("chunks are not empty"))
        );
        let (missing, root) = (missing.clone(), root.clone());
        trials.push(common::corpus_trial(name, &corpus, move |_| {
            check_chunk(&chunk, &root, &missing)
        }));
    }
    common::run(trials)
}

/// `file` written plain, packed by gltfpack, read back by keyscene: its posed bounding boxes
/// against the plain file's (module docs).
fn read_gltfpack(file: &Path, exe: &Path) -> Result<(), Failed> {
    let Ok((scene, _)) = keyscene::load(file) else { return Ok(()) };
    if scene.meshes.is_empty() {
        return Ok(());
    }
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let (plain, packed) = (dir.path().join("plain.glb"), dir.path().join("packed.glb"));
    save(&scene, &plain, &WriteOptions::default()).map_err(|e| e.to_string())?;
    let out = Command::new(exe)
        .args(["-c", "-kn", "-km", "-ke", "-af", "0", "-i"])
        .arg(&plain)
        .arg("-o")
        .arg(&packed)
        .output()
        .map_err(|e| format!("cannot run gltfpack: {e}"))?;
    if !out.status.success() {
        return Err(format!("gltfpack: {}", String::from_utf8_lossy(&out.stderr)).into());
    }
    let ro = keyscene::ReadOptions::default();
    let read_file = |p: &Path| -> Result<Scene, String> {
        let bytes = std::fs::read(p).map_err(|e| e.to_string())?;
        Ok(read(&bytes, &ro).map_err(|e| format!("{}: {e}", p.display()))?.0)
    };
    let (a, b) = (read_file(&plain)?, read_file(&packed)?);
    let (anim, times) = times(&a);
    for t in times {
        let bbox = |s: &Scene| {
            let pose = s.evaluate(anim.filter(|_| !s.animations.is_empty()), Time::Seconds(t));
            common::bbox((0..s.nodes.len()).flat_map(|i| pose.world_positions(s, i)))
        };
        let (pa, pb) = (bbox(&a), bbox(&b));
        let diag = (pa.1 - pa.0).length();
        let off = common::bbox_diff(pa, pb);
        // A scene with non-finite positions (`synthetic_inf_nan`) has no box to compare.
        let finite = [pa.0, pa.1, pb.0, pb.1].iter().all(|v| v.is_finite());
        if finite && off > 1e-3 * diag {
            return Err(
                format!("t {t:.4} s: bounding box {off:.3e} off (diagonal {diag:.3e})").into()
            );
        }
    }
    Ok(())
}

/// One chunk of corpus files: each written, compared and then validated (module docs). A file
/// that does not load is not this test's matter (the loaders' tests hold them).
fn check_chunk(chunk: &[PathBuf], root: &Path, missing: &Option<String>) -> Result<(), Failed> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let mut problems = Vec::new();
    let mut written = Vec::new();
    for (i, file) in chunk.iter().enumerate() {
        let rel = file.strip_prefix(root).unwrap_or(file).display().to_string();
        let Ok((scene, _)) = keyscene::load(file) else { continue };
        let name =
            format!("{i:02}_{}", file.file_stem().and_then(|s| s.to_str()).unwrap_or("scene"));
        // Every 8th file also as `.gltf` (an external buffer next to a fallback buffer).
        match write_and_compare(&scene, dir.path(), &name, i % 8 == 0) {
            Ok(files) => written.extend(files),
            Err(e) => problems.push(format!("{rel}: {e}")),
        }
    }
    if missing.is_none() && !written.is_empty() {
        if let Err(e) = validate(&written) {
            problems.push(e);
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n").into())
    }
}

//! Proof in a real client (issue #5, §3 item 3): every corpus 3DS file with a lib3ds reference
//! is written as GLB and loaded by three.js's `GLTFLoader` in headless Chromium; an
//! `AnimationMixer` plays it to each reference frame (time = frame / 30 s) and the page reports
//! world-space positions as three computes them for rendering (`Mesh.getVertexPosition`, which
//! applies morph targets and skinning, then `matrixWorld`). Every mesh node's world bounding
//! box, centroid (over source vertices) and sample vertices must match lib3ds's within
//! 1e-4 × max(1, scene bbox diagonal at that frame), the tolerance of `gltf_roundtrip`.
//!
//! All files go through one browser session: `tools/threejs_check.mjs` (playwright-core driving
//! `tools/threejs_page.html`). A screenshot of each file at its first reference frame is saved
//! as `target/tmp/threejs/NAME.png` beside the GLB. Needs `node` on the PATH, the npm packages
//! `playwright-core` and `three` in `KEYSCENE_NODE_MODULES` (default
//! `/opt/keyscene-oracles/node/node_modules`) and Chromium at `KEYSCENE_CHROMIUM` (default
//! `/usr/bin/chromium`); without them every trial is reported ignored, saying why. `.ci/run`
//! installs them.
//!
//! FBX: a sample of the rows of `shared/corpus/fbx/references.tsv` that pose a file at a time
//! (`mode` = time, the file's own space, no extra options; at most [`FBX_SAMPLE`] files, spread
//! over the sorted list; skinned or blend-shape files only once the GLB carries `skins` /
//! morph `targets`) go through the same browser session, playing the row's stack to its time.
//! Positions are taken relative to keyscene's axis root node (the source's axes and units),
//! and every vertex the ufbx reference `.obj` group uses must have a three vertex of that node
//! within the row's tolerance (per component, after `position_scale`, as ufbx compares).
//!
//! `--compress`: every 3DS file and every sampled FBX file is also written with
//! `WriteOptions::compress` (trials `compressed/…`) and loaded with three's `MeshoptDecoder`;
//! it is held to the same references, FBX ones within the larger of the row's tolerance and
//! 1e-4 × the reference's bounding-box diagonal (the bound `--compress` keeps to).
//! A node whose mesh a geometry cache deforms is the exception: the writer leaves caches out
//! with a warning (docs/gltf.md, "Geometry caches"), so such a group passes only when the
//! write's warnings say so for its mesh, and its (rest) positions are not compared.
//!
//! Off-key FBX poses: the files of [`FBX_OFF_KEY`], whose translation/scale curves the writer
//! keeps as keys (CUBICSPLINE with tangents converted from the FBX slopes, or LINEAR), are
//! played to quarter and half frames, where a curve resampled at whole frames would be off;
//! every vertex of every unskinned mesh node as ufbx poses it at that time
//! (`evaluate_scene`, `geometry_to_world · vertices`, no axis or unit conversion) must have a
//! three vertex of that node (source space) within 1e-4 × max(1, largest ufbx coordinate).
//! This is the client-side proof of the CUBICSPLINE tangents (three.js has its own
//! `CubicSplineInterpolant`).
//!
//! glTF is Y-up; three's world positions are mapped back to 3DS's Z-up with
//! `(x, y, z) → (x, −z, y)` (docs/gltf.md, "Axis root node"). Nodes are matched by the source
//! name and instance (glTF node extras, docs/gltf.md, "Node extras"), the k-th three node of a
//! pair to the k-th reference node of that pair; vertices by source index (`_KEYSCENE_VERTEX`).

/// The browser set-up shared with `keyscene view`'s trials (node half: `tools/browser.mjs`).
#[path = "common/browser.rs"]
mod browser;
mod common;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use common::refs::reference_rows;
use glam::DVec3;
use keyscene::formats::gltf::{save, WriteOptions};
use libtest_mimic::{Failed, Trial};
use serde_json::{json, Value};

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tools/threejs_check.mjs")
}

/// One corpus file: its lib3ds reference and the GLB written for it.
struct Case {
    name: String,
    reference: Value,
    glb: PathBuf,
}

/// Writes the GLB of the file `reference` names into `dir` and builds the page's job entry.
/// `compress`: written with [`WriteOptions::compress`] (named `compressed/NAME`), so three.js's
/// `MeshoptDecoder` and its dequantization are held to the same lib3ds reference.
fn prepare(
    corpus: &Path,
    reference: &Path,
    dir: &Path,
    compress: bool,
) -> Result<(Case, Value), String> {
    let (refj, file) = lib3ds::load(corpus, reference)?;
    let name = lib3ds::name(reference);
    let (name, stem) = if compress {
        (format!("compressed/{name}"), format!("{name}_compressed"))
    } else {
        (name.clone(), name)
    };
    let (scene, _) = keyscene::load(&file).map_err(|e| format!("{}: {e}", file.display()))?;
    let glb = dir.join(format!("{stem}.glb"));
    let mut opts = WriteOptions::default();
    opts.compress = compress;
    // lib3ds's sample vertices are found by source index (`_KEYSCENE_VERTEX`).
    opts.source_vertex_ids = true;
    save(&scene, &glb, &opts).map_err(|e| e.to_string())?;
    let samples = refj["samples"].as_array().ok_or("reference without samples")?;
    let times: Vec<f64> =
        samples.iter().filter_map(|s| s["frame"].as_f64()).map(|f| f / 30.0).collect();
    let mut vertices: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for s in samples {
        for n in s["nodes"].as_array().into_iter().flatten() {
            let key = format!(
                "{}\u{0}{}",
                n["name"].as_str().unwrap_or(""),
                n["instance"].as_str().unwrap_or("")
            );
            let list = vertices.entry(key).or_default();
            for v in n["world_sample_vertices"].as_array().into_iter().flatten() {
                if let Some(i) = v["index"].as_u64() {
                    if !list.contains(&i) {
                        list.push(i);
                    }
                }
            }
        }
    }
    let job = json!({
        "name": name,
        "file": glb,
        "times": times,
        "vertices": vertices,
        "screenshot": dir.join(format!("{stem}.png")),
    });
    Ok((Case { name, reference: refj, glb }, job))
}

/// Runs the browser once on every job; the answer per file name, or why it could not run.
fn run_browser(jobs: &[Value], dir: &Path) -> Result<HashMap<String, Value>, String> {
    let job_file = dir.join("job.json");
    std::fs::write(&job_file, json!({ "files": jobs }).to_string()).map_err(|e| e.to_string())?;
    let started = std::time::Instant::now();
    let out = browser::run_node(&script(), &job_file)?;
    let answer: Value = serde_json::from_slice(&out.stdout).map_err(|e| {
        let stdout = String::from_utf8_lossy(&out.stdout);
        format!(
            "threejs_check.mjs printed no JSON ({e}): {}… {}",
            stdout.chars().take(500).collect::<String>(),
            String::from_utf8_lossy(&out.stderr)
        )
    })?;
    if let Some(e) = answer["error"].as_str() {
        return Err(format!("threejs_check.mjs: {e}"));
    }
    eprintln!(
        "three.js {} in Chromium {}: {} files in {:.1} s; screenshots in {}",
        answer["three"].as_str().unwrap_or("?"),
        answer["chromium"].as_str().unwrap_or("?"),
        jobs.len(),
        started.elapsed().as_secs_f64(),
        dir.display()
    );
    Ok(answer["files"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|f| Some((f["name"].as_str()?.to_string(), f.clone())))
        .collect())
}

use common::lib3ds;
use common::try_vec3 as vec3;

/// glTF (Y-up) world position → 3DS (Z-up).
fn to_z_up(v: DVec3) -> DVec3 {
    DVec3::new(v.x, -v.z, v.y)
}

/// Compares three's answer for one file with its lib3ds reference.
fn check(case: &Case, answer: &Value) -> Result<(), Failed> {
    if let Some(e) = answer["error"].as_str() {
        return Err(format!("three.js could not load {}: {e}", case.glb.display()).into());
    }
    let ref_samples = case.reference["samples"].as_array().ok_or("reference without samples")?;
    let got_samples = answer["samples"].as_array().ok_or("answer without samples")?;
    if ref_samples.len() != got_samples.len() {
        return Err(
            format!("{} samples asked, {} answered", ref_samples.len(), got_samples.len()).into()
        );
    }
    let mut mismatches = lib3ds::Mismatches::default();
    for (sample, got) in ref_samples.iter().zip(got_samples) {
        let frame = sample["frame"].as_f64().ok_or("sample without frame")?;
        let nodes = sample["nodes"].as_array().ok_or("sample without nodes")?;
        let tol = lib3ds::tolerance(nodes);
        let three_nodes = got["nodes"].as_array().ok_or("answer without nodes")?;
        let mut used = vec![false; three_nodes.len()];
        for n in nodes {
            let Some(bmin) = vec3(&n["world_bbox_min"]) else { continue };
            let bmax = vec3(&n["world_bbox_max"]).ok_or("bbox without max")?;
            let (name, instance) =
                (n["name"].as_str().unwrap_or(""), n["instance"].as_str().unwrap_or(""));
            let at = format!("frame {frame}: node {name:?}/{instance:?}");
            let Some(k) = (0..three_nodes.len()).find(|&k| {
                !used[k] && three_nodes[k]["name"] == name && three_nodes[k]["instance"] == instance
            }) else {
                mismatches.push(format!("{at}: not among three's mesh nodes"));
                continue;
            };
            used[k] = true;
            let t = &three_nodes[k];
            if t["vertex_count"] != n["vertex_count"] {
                mismatches.push(format!(
                    "{at}: {} source vertices in three, lib3ds has {}",
                    t["vertex_count"], n["vertex_count"]
                ));
            }
            // The Y-up box's corners map to the Z-up box's (the map permutes and negates axes).
            let (a, b) = (
                to_z_up(vec3(&t["world_bbox_min"]).ok_or("no bbox")?),
                to_z_up(vec3(&t["world_bbox_max"]).ok_or("no bbox")?),
            );
            let err = common::bbox_diff((a.min(b), a.max(b)), (bmin, bmax));
            mismatches.check(&at, "bbox", err, tol);
            if let (Some(c), Some(g)) = (vec3(&n["world_centroid"]), vec3(&t["world_centroid"])) {
                mismatches.check(&at, "centroid", (to_z_up(g) - c).length(), tol);
            }
            let three_vertices: HashMap<u64, DVec3> = t["vertices"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|v| Some((v[0].as_u64()?, to_z_up(vec3(&v[1])?))))
                .collect();
            for sv in n["world_sample_vertices"].as_array().into_iter().flatten() {
                let want = vec3(&sv["position"]).ok_or("sample vertex without position")?;
                let index = sv["index"].as_u64().ok_or("sample vertex without index")?;
                match three_vertices.get(&index) {
                    Some(got) => mismatches.check(
                        &at,
                        &format!("vertex {index}"),
                        (*got - want).length(),
                        tol,
                    ),
                    None => mismatches.push(format!("{at}: three has no source vertex {index}")),
                }
            }
        }
    }
    mismatches.finish()
}

/// At most this many FBX files go to the browser (CI time).
const FBX_SAMPLE: usize = 16;

/// FBX files larger than this many vertices are left out of the sample (page time).
const FBX_MAX_VERTICES: usize = 20_000;

/// One row of `references.tsv`: an FBX file posed at `time` seconds of `stack`, and its
/// reference OBJ.
#[derive(Clone)]
struct FbxRow {
    name: String,
    fbx: PathBuf,
    obj: PathBuf,
    time: f64,
    stack: String,
    tolerance: f64,
    position_scale: f64,
    /// The nodes showing a mesh a geometry cache deforms, and whether the glTF writer warned
    /// that it left that mesh's cache out (filled by [`prepare_fbx`]).
    cached: Vec<(String, bool)>,
    /// Written with [`WriteOptions::compress`] (the trial is named `compressed/fbx/…`).
    compress: bool,
}

/// The `time` rows of `references.tsv` in the file's own space with no extra options, one per
/// FBX file, sorted by file.
fn fbx_rows(corpus: &Path) -> Vec<FbxRow> {
    let dir = corpus.join("fbx");
    let mut rows: Vec<FbxRow> = Vec::new();
    for row in reference_rows(&dir) {
        if row.mode != "time"
            || row.transform_skin
            || !row.conversion.is_empty()
            || !row.options.is_empty()
        {
            continue;
        }
        if rows.iter().any(|r| r.fbx == dir.join(&row.fbx)) {
            continue;
        }
        let (Ok(time), Ok(tolerance)) = (row.time_s.parse::<f64>(), row.tolerance.parse::<f64>())
        else {
            continue;
        };
        rows.push(FbxRow {
            name: format!("fbx/{}", row.fbx.trim_end_matches(".fbx")),
            fbx: dir.join(&row.fbx),
            obj: dir.join(&row.obj),
            time,
            stack: row.stack,
            tolerance,
            position_scale: row.position_scale.parse().unwrap_or(1.0),
            cached: Vec::new(),
            compress: false,
        });
    }
    rows.sort_by(|a, b| a.fbx.cmp(&b.fbx));
    rows
}

/// Writes the GLB of `row`'s file into `dir` when it belongs in the sample (loads, small
/// enough, its skins and blend shapes written): the page's job entry, else why not. Fills
/// `row.cached` with the nodes whose mesh a geometry cache deforms.
fn prepare_fbx(row: &mut FbxRow, dir: &Path) -> Result<Value, &'static str> {
    let (scene, _) = keyscene::load(&row.fbx).map_err(|_| "does not load")?;
    let vertices: usize = scene.meshes.iter().map(|m| m.positions.len()).sum();
    if vertices == 0 || vertices > FBX_MAX_VERTICES {
        return Err("no mesh or too large");
    }
    let mut opts = WriteOptions::default();
    opts.compress = row.compress;
    // Source vertices are found by index (`_KEYSCENE_VERTEX`).
    opts.source_vertex_ids = true;
    let file = keyscene::formats::gltf::write(&scene, &opts).map_err(|_| "glTF write fails")?;
    let has = |s: &str| file.main.windows(s.len()).any(|w| w == s.as_bytes());
    if !scene.skins.is_empty() && !has("\"skins\"") {
        return Err("skinned, skins not written");
    }
    if scene.meshes.iter().any(|m| !m.morph_targets.is_empty()) && !has("\"targets\"") {
        return Err("blend shapes, morph targets not written");
    }
    // The writer leaves geometry caches out, warning per mesh (docs/gltf.md, "Geometry
    // caches"); `check_fbx` holds it to that warning instead of the cached reference.
    row.cached = scene
        .nodes
        .iter()
        .filter_map(|n| {
            let mesh = &scene.meshes[n.mesh?];
            mesh.geometry_cache.is_some().then(|| {
                let place = format!("mesh \"{}\"", mesh.name);
                let warned = file.warnings.iter().any(|w| {
                    w.place.ends_with(&place) && w.message.starts_with("geometry cache not written")
                });
                (n.name.clone(), warned)
            })
        })
        .collect();
    let stem = row.name.replace('/', "_");
    let glb = dir.join(format!("{stem}.glb"));
    std::fs::write(&glb, &file.main).map_err(|_| "cannot write the GLB")?;
    Ok(json!({
        "name": row.name,
        "file": glb,
        "times": [row.time],
        "all": true,
        "clip": if row.stack.is_empty() { Value::Null } else { Value::from(row.stack.clone()) },
        "source_space": true,
        "screenshot": dir.join(format!("{stem}.png")),
    }))
}

/// A reference OBJ's groups: the names on each `g`/`o` line (ufbx ignores `g default…`), and
/// the positions of the vertices the group's faces use.
fn obj_groups(text: &str) -> Vec<(Vec<String>, Vec<DVec3>)> {
    let mut v: Vec<DVec3> = Vec::new();
    let mut groups: Vec<(Vec<String>, Vec<usize>)> = Vec::new();
    for line in text.lines() {
        let mut it = line.split_whitespace();
        match it.next() {
            Some("v") => {
                let p: Vec<f64> = it.take(3).filter_map(|x| x.parse().ok()).collect();
                let at = |k: usize| p.get(k).copied().unwrap_or(0.0);
                v.push(DVec3::new(at(0), at(1), at(2)));
            }
            Some("g") if line.starts_with("g default") => {}
            Some("g" | "o") => groups.push((it.map(String::from).collect(), Vec::new())),
            Some("f") => {
                if groups.is_empty() {
                    groups.push((Vec::new(), Vec::new()));
                }
                let Some(g) = groups.last_mut() else { continue };
                for c in it {
                    let i: i64 = c.split('/').next().unwrap_or("").parse().unwrap_or(0);
                    let i = if i < 0 { v.len() as i64 + i } else { i - 1 };
                    if i >= 0 {
                        g.1.push(i as usize);
                    }
                }
            }
            _ => {}
        }
    }
    groups
        .into_iter()
        .filter(|g| !g.1.is_empty())
        .map(|(names, mut idx)| {
            idx.sort_unstable();
            idx.dedup();
            (names, idx.into_iter().filter_map(|i| v.get(i).copied()).collect())
        })
        .collect()
}

/// Compares three's answer for one FBX row with the ufbx reference OBJ.
fn check_fbx(row: &FbxRow, answer: &Value) -> Result<(), Failed> {
    if let Some(e) = answer["error"].as_str() {
        return Err(format!("three.js could not load the GLB of {}: {e}", row.fbx.display()).into());
    }
    let text = std::fs::read_to_string(&row.obj).map_err(|e| e.to_string())?;
    let groups = obj_groups(&text);
    let nodes = answer["samples"][0]["nodes"].as_array().ok_or("answer without nodes")?;
    let points = |n: &Value| -> Vec<DVec3> {
        n["vertices"].as_array().into_iter().flatten().filter_map(|v| vec3(&v[1])).collect()
    };
    let (s, mut tol) = (row.position_scale, row.tolerance);
    if row.compress {
        // `--compress` keeps positions within 1e-4 of the scene size (docs/gltf.md,
        // "Compressed output"): 16-bit grids move a vertex up to 1/131,070 of its mesh's
        // extent, over ufbx's absolute 0.001 in a 400-unit scene.
        let all: Vec<DVec3> = groups.iter().flat_map(|g| g.1.iter().map(|p| *p * s)).collect();
        let (lo, hi) = common::bbox(all.into_iter());
        tol = tol.max(1e-4 * (hi - lo).length());
    }
    let mut failures = Vec::new();
    let mut worst = 0.0f64;
    // As ufbx matches: groups with fewer names first (a Maya group line names the node and its
    // ancestors), each three node used once, an exact name before a Blender `NODE_MESH` prefix.
    let mut order: Vec<usize> = (0..groups.len()).collect();
    order.sort_by_key(|&g| groups[g].0.len());
    let mut used = vec![false; nodes.len()];
    for (names, want) in order.iter().map(|&g| &groups[g]) {
        let free = |k: &usize| !used[*k];
        let named =
            |k: &usize| names.iter().any(|g| Some(g.as_str()) == nodes[*k]["name"].as_str());
        let prefix =
            |k: &usize| names.iter().any(|g| g.split('_').next() == nodes[*k]["name"].as_str());
        let k = (0..nodes.len())
            .filter(free)
            .find(named)
            .or_else(|| (0..nodes.len()).filter(free).find(prefix))
            .or_else(|| (groups.len() == 1 && nodes.len() == 1).then_some(0));
        if let Some(k) = k {
            used[k] = true;
        }
        let node = k.map(|k| &nodes[k]);
        let Some(node) = node else {
            failures.push(format!("group {names:?}: no three mesh node of that name"));
            continue;
        };
        // A node whose geometry cache the writer left out is at rest in the GLB: it must carry
        // the writer's warning, and is not held to the cached reference.
        if let Some((_, warned)) = row.cached.iter().find(|(n, _)| node["name"].as_str() == Some(n))
        {
            if !warned {
                failures.push(format!(
                    "group {names:?}: its mesh's geometry cache is left out of the GLB without the \
                     writer's warning \"geometry cache not written\""
                ));
            } else {
                eprintln!(
                    "{}: group {names:?}: geometry cache left out with a warning (docs/gltf.md)",
                    row.name
                );
            }
            continue;
        }
        let got = points(node);
        let mut off = 0.0f64;
        for p in want {
            let d = got
                .iter()
                .map(|q| ((*q - *p) * s).abs().max_element())
                .fold(f64::INFINITY, f64::min);
            off = off.max(d);
        }
        worst = worst.max(off / tol);
        if off.is_nan() || off >= tol {
            failures.push(format!(
                "group {names:?} (node {}): a reference vertex is {off:.3e} from every three vertex (tolerance {tol})",
                node["name"]
            ));
        }
    }
    if failures.is_empty() {
        Ok(())
    } else {
        let n = failures.len();
        failures.truncate(8);
        Err(format!("{n} mismatches (worst {worst:.2} × tolerance):\n{}", failures.join("\n"))
            .into())
    }
}

/// FBX files posed off-key against ufbx: (file under `fbx/`, sampler interpolation the GLB must
/// use; CUBICSPLINE ones are written with `cubic_spline`). Their rotations are not animated (Euler rotations are resampled at whole frames, so
/// off-key they would not be exact).
const FBX_OFF_KEY: &[(&str, &str)] = &[
    ("ufbx/motionbuilder_tangent_auto_7700_ascii.fbx", "CUBICSPLINE"),
    ("ufbx/motionbuilder_tangent_tcb_7700_ascii.fbx", "CUBICSPLINE"),
    ("ufbx/motionbuilder_extrapolation_slope_7700_binary.fbx", "CUBICSPLINE"),
    ("ufbx/maya_tangent_spline_7700_binary.fbx", "CUBICSPLINE"),
    ("ufbx/motionbuilder_tangent_linear_7700_ascii.fbx", "LINEAR"),
];

/// ufbx's pose at one time: (mesh node name, world vertices) per unskinned mesh node, and the
/// tolerance.
type OffKeyPose = (Vec<(String, Vec<DVec3>)>, f64);

/// An FBX file posed at off-key times, with ufbx's world vertices per mesh node and time.
struct OffKey {
    name: String,
    /// Per time.
    reference: Vec<OffKeyPose>,
}

fn ufbx_point(m: &ufbx::Matrix, v: ufbx::Vec3) -> DVec3 {
    DVec3::new(
        m.m00 * v.x + m.m01 * v.y + m.m02 * v.z + m.m03,
        m.m10 * v.x + m.m11 * v.y + m.m12 * v.z + m.m13,
        m.m20 * v.x + m.m21 * v.y + m.m22 * v.z + m.m23,
    )
}

/// Writes the GLB of `rel` into `dir`, checks it uses `interpolation`, poses ufbx at off-key
/// times of the first stack; the case and the page's job entry.
fn prepare_off_key(
    corpus: &Path,
    rel: &str,
    interpolation: &str,
    dir: &Path,
) -> Result<(OffKey, Value), String> {
    let path = corpus.join("fbx").join(rel);
    let bytes = std::fs::read(&path).map_err(|e| e.to_string())?;
    let (scene, _) = keyscene::load_bytes(&bytes, Some(&path), &Default::default())
        .map_err(|e| format!("keyscene: {e}"))?;
    let fps = scene.animations.first().ok_or("no animation")?.fps;
    let mut opts = WriteOptions::default();
    opts.only_animation = Some(0);
    // CUBICSPLINE keys are written only when asked for (issue 36 §4: the default is
    // LINEAR/STEP, which Blender plays right too).
    opts.cubic_spline = interpolation == "CUBICSPLINE";
    let file = keyscene::formats::gltf::write(&scene, &opts).map_err(|e| e.to_string())?;
    let tag = format!("\"interpolation\":\"{interpolation}\"");
    if !file.main.windows(tag.len()).any(|w| w == tag.as_bytes()) {
        return Err(format!("the GLB has no {interpolation} sampler"));
    }
    let name = format!("fbx off-key/{}", rel.trim_end_matches(".fbx"));
    let stem = name.replace(['/', ' '], "_");
    let glb = dir.join(format!("{stem}.glb"));
    std::fs::write(&glb, &file.main).map_err(|e| e.to_string())?;
    let theirs = ufbx::load_memory(&bytes, ufbx::LoadOpts::default())
        .map_err(|e| format!("ufbx: {:?}", e.description))?;
    let stack = theirs.anim_stacks.iter().next().ok_or("ufbx: no stack")?;
    let (begin, end) = (stack.time_begin.max(0.0), stack.time_end);
    // Quarter and half frames spread over the stack.
    let times: Vec<f64> = [0.13, 0.37, 0.61, 0.89]
        .iter()
        .zip([0.25, 0.5, 0.25, 0.5])
        .map(|(&at, q)| ((begin + (end - begin) * at) * fps).floor() + q)
        .map(|f| f / fps)
        .filter(|&t| t >= begin && t <= end)
        .collect();
    let mut reference = Vec::new();
    for &t in &times {
        let posed = ufbx::evaluate_scene(&theirs, &theirs.anim, t, Default::default())
            .map_err(|e| format!("ufbx evaluate: {:?}", e.description))?;
        let mut nodes = Vec::new();
        let mut size = 1.0f64;
        for node in posed.nodes.iter() {
            let Some(mesh) = node.mesh.as_ref() else { continue };
            if !mesh.skin_deformers.is_empty() || !mesh.blend_deformers.is_empty() {
                continue;
            }
            let points: Vec<DVec3> =
                mesh.vertices.iter().map(|&v| ufbx_point(&node.geometry_to_world, v)).collect();
            size = points.iter().map(|p| p.abs().max_element()).fold(size, f64::max);
            nodes.push((node.element.name.to_string(), points));
        }
        reference.push((nodes, 1e-4 * size));
    }
    let job = json!({
        "name": name,
        "file": glb,
        "times": times,
        "all": true,
        "source_space": true,
        "screenshot": dir.join(format!("{stem}.png")),
    });
    Ok((OffKey { name, reference }, job))
}

/// Compares three's off-key poses with ufbx's.
fn check_off_key(case: &OffKey, answer: &Value) -> Result<(), Failed> {
    if let Some(e) = answer["error"].as_str() {
        return Err(format!("three.js could not load the GLB: {e}").into());
    }
    let mut compared = 0;
    for (k, (nodes, tol)) in case.reference.iter().enumerate() {
        let sample = &answer["samples"][k];
        let got = sample["nodes"].as_array().ok_or("answer without nodes")?;
        for (name, want) in nodes {
            let Some(node) = got.iter().find(|n| n["name"].as_str() == Some(name.as_str())) else {
                return Err(format!("no three mesh node {name:?}").into());
            };
            let points: Vec<DVec3> = node["vertices"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|v| vec3(&v[1]))
                .collect();
            for p in want {
                let d = points
                    .iter()
                    .map(|q| (*q - *p).abs().max_element())
                    .fold(f64::INFINITY, f64::min);
                if d.is_nan() || d > *tol {
                    return Err(format!(
                        "node {name:?} at t = {} s: a ufbx vertex {p} is {d:.3e} from every three \
                         vertex (tolerance {tol:.1e})",
                        sample["time"]
                    )
                    .into());
                }
                compared += 1;
            }
        }
    }
    if compared == 0 {
        return Err("no vertex compared".into());
    }
    Ok(())
}

/// Whether libtest-mimic's arguments select a trial of this name.
fn selected(args: &libtest_mimic::Arguments, name: &str) -> bool {
    let filter_ok = match &args.filter {
        Some(f) if args.exact => name == f,
        Some(f) => name.contains(f.as_str()),
        None => true,
    };
    filter_ok
        && !args.skip.iter().any(|s| if args.exact { name == s } else { name.contains(s.as_str()) })
}

fn main() {
    let args = libtest_mimic::Arguments::from_args();
    let corpus = common::corpus();
    let refs = lib3ds::references(&corpus);
    let missing = browser::client_missing(&["three/build/three.module.js"]);
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("threejs");
    let mut trials = Vec::new();
    match (&corpus, &missing) {
        (None, _) => trials.push(common::corpus_trial("corpus", &corpus, |_| Ok(()))),
        (Some(_), Some(why)) => {
            eprintln!("three.js browser check skipped: {why}");
            // Each ignored trial says why in its name, as README promises.
            for r in &refs {
                let name = format!("ignored: {why} :: {}", lib3ds::name(r));
                trials.push(Trial::test(name, || Ok(())).with_ignored_flag(true));
            }
        }
        (Some(c), None) => {
            let _ = std::fs::create_dir_all(&dir);
            let mut cases = Vec::new();
            let mut jobs = Vec::new();
            for (r, compress) in refs.iter().flat_map(|r| [(r, false), (r, true)]) {
                let name = lib3ds::name(r);
                let name = if compress { format!("compressed/{name}") } else { name };
                if !selected(&args, &name) {
                    continue;
                }
                match prepare(c, r, &dir, compress) {
                    Ok((case, job)) => {
                        cases.push(case);
                        jobs.push(job);
                    }
                    Err(e) => trials.push(Trial::test(name, move || Err(e.into()))),
                }
            }
            // Each row also written with `--compress` (`compressed/fbx/…`): the sample then
            // holds the meshopt decoder, the dequantization nodes and the skins' folded inverse
            // bind matrices to the same ufbx references.
            let rows: Vec<FbxRow> = fbx_rows(c)
                .into_iter()
                .flat_map(|r| {
                    let mut z = r.clone();
                    z.compress = true;
                    z.name = format!("compressed/{}", r.name);
                    [r, z]
                })
                .filter(|r| selected(&args, &r.name))
                .collect();
            let mut fbx_cases = Vec::new();
            let mut left_out: BTreeMap<&str, usize> = BTreeMap::new();
            for row in &rows {
                let mut row = row.clone();
                match prepare_fbx(&mut row, &dir) {
                    Ok(job) => fbx_cases.push((row.clone(), job)),
                    Err(why) => *left_out.entry(why).or_default() += 1,
                }
            }
            eprintln!(
                "FBX: {} files with a time reference, {} usable, left out: {left_out:?}",
                rows.len(),
                fbx_cases.len()
            );
            // Spread the sample over the sorted list of files (each file with both variants).
            let mut files: Vec<PathBuf> = fbx_cases.iter().map(|(r, _)| r.fbx.clone()).collect();
            files.dedup();
            let step = files.len().div_ceil(FBX_SAMPLE).max(1);
            let sample: Vec<PathBuf> = files.into_iter().step_by(step).collect();
            let fbx_cases: Vec<(FbxRow, Value)> =
                fbx_cases.into_iter().filter(|(r, _)| sample.contains(&r.fbx)).collect();
            jobs.extend(fbx_cases.iter().map(|(_, j)| j.clone()));
            let mut off_key = Vec::new();
            for &(rel, interpolation) in FBX_OFF_KEY {
                let name = format!("fbx off-key/{}", rel.trim_end_matches(".fbx"));
                if !selected(&args, &name) {
                    continue;
                }
                match prepare_off_key(c, rel, interpolation, &dir) {
                    Ok((case, job)) => {
                        off_key.push(case);
                        jobs.push(job);
                    }
                    Err(e) => trials.push(Trial::test(name, move || Err(e.into()))),
                }
            }
            let answers =
                if jobs.is_empty() { Ok(HashMap::new()) } else { run_browser(&jobs, &dir) };
            let answers = Arc::new(answers);
            for case in cases {
                let answers = Arc::clone(&answers);
                trials.push(Trial::test(case.name.clone(), move || match answers.as_ref() {
                    Err(e) => Err(e.clone().into()),
                    Ok(map) => match map.get(&case.name) {
                        Some(a) => check(&case, a),
                        None => Err("no answer from the browser".into()),
                    },
                }));
            }
            for case in off_key {
                let answers = Arc::clone(&answers);
                trials.push(Trial::test(case.name.clone(), move || match answers.as_ref() {
                    Err(e) => Err(e.clone().into()),
                    Ok(map) => match map.get(&case.name) {
                        Some(a) => check_off_key(&case, a),
                        None => Err("no answer from the browser".into()),
                    },
                }));
            }
            for (row, _) in fbx_cases {
                let answers = Arc::clone(&answers);
                trials.push(Trial::test(row.name.clone(), move || match answers.as_ref() {
                    Err(e) => Err(e.clone().into()),
                    Ok(map) => match map.get(&row.name) {
                        Some(a) => check_fbx(&row, a),
                        None => Err("no answer from the browser".into()),
                    },
                }));
            }
        }
    }
    if trials.is_empty() {
        trials.push(common::corpus_trial("corpus", &corpus, |_| Ok(())));
    }
    common::run(trials)
}

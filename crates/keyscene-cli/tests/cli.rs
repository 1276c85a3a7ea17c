//! The `keyscene` binary on the bundled example `examples/FLY.3DS` (Second Reality, Unlicense):
//! what each command prints, that `sample` agrees with lib3ds (`tests/data/FLY.3DS.lib3ds.json`,
//! lib3ds 1.3's own answers), and that failures exit non-zero and leave no output file.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

mod common;
use common::corpus;

fn keyscene(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_keyscene")).args(args).output().expect("keyscene runs")
}

fn fly() -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/FLY.3DS");
    assert!(p.is_file(), "{} is bundled with the repository", p.display());
    p.to_str().unwrap().to_owned()
}

fn stdout_json(out: &Output) -> Value {
    assert!(out.status.success(), "failed: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("stdout is JSON")
}

fn reference() -> Value {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/FLY.3DS.lib3ds.json");
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

fn vec3(v: &Value) -> [f64; 3] {
    let a = v.as_array().expect("a 3-vector");
    [a[0].as_f64().unwrap(), a[1].as_f64().unwrap(), a[2].as_f64().unwrap()]
}

fn dist(a: [f64; 3], b: [f64; 3]) -> f64 {
    ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
}

/// Issue #2's tolerance: 1e-4 × max(1, diagonal of the box around every mesh vertex lib3ds
/// reports at any frame).
fn tolerance(reference: &Value) -> f64 {
    let (mut lo, mut hi) = ([f64::INFINITY; 3], [f64::NEG_INFINITY; 3]);
    for s in reference["samples"].as_array().unwrap() {
        for n in s["nodes"].as_array().unwrap() {
            if n.get("world_bbox_min").is_some() {
                let (a, b) = (vec3(&n["world_bbox_min"]), vec3(&n["world_bbox_max"]));
                for k in 0..3 {
                    lo[k] = lo[k].min(a[k]);
                    hi[k] = hi[k].max(b[k]);
                }
            }
        }
    }
    1e-4 * dist(lo, hi).max(1.0)
}

#[test]
fn sample_matches_lib3ds_at_its_reference_frames() {
    let reference = reference();
    let tol = tolerance(&reference);
    let ref_samples = reference["samples"].as_array().unwrap();
    let mut args = vec!["sample".to_owned(), fly(), "--json".to_owned()];
    for s in ref_samples {
        args.push("--frame".into());
        args.push(s["frame"].to_string());
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let ours = stdout_json(&keyscene(&args));
    let samples = ours["samples"].as_array().unwrap();
    assert_eq!(samples.len(), ref_samples.len());
    let mut compared = 0;
    for (ours, theirs) in samples.iter().zip(ref_samples) {
        let frame = theirs["frame"].as_f64().unwrap();
        assert_eq!(ours["frame"].as_f64(), Some(frame));
        assert_eq!(ours["time"].as_f64(), Some(frame / 30.0));
        let nodes = ours["nodes"].as_array().unwrap();
        for r in theirs["nodes"].as_array().unwrap().iter().filter(|n| n.get("mesh").is_some()) {
            let matches: Vec<&Value> = nodes
                .iter()
                .filter(|n| n["name"] == r["name"] && n["instance"] == r["instance"])
                .collect();
            assert_eq!(matches.len(), 1, "one node {} at frame {frame}", r["name"]);
            let m = &matches[0]["mesh"];
            let at = format!("{} at frame {frame}", r["name"]);
            assert_eq!(m["vertex_count"], r["vertex_count"], "{at}");
            assert_eq!(m["face_count"], r["face_count"], "{at}");
            for key in ["world_bbox_min", "world_bbox_max", "world_centroid"] {
                let d = dist(vec3(&m[key]), vec3(&r[key]));
                assert!(d <= tol, "{at}: {key} {} vs lib3ds {} (off by {d})", m[key], r[key]);
            }
            let (sv, rv) = (
                m["world_sample_vertices"].as_array().unwrap(),
                r["world_sample_vertices"].as_array().unwrap(),
            );
            assert_eq!(sv.len(), rv.len(), "{at}");
            for (a, b) in sv.iter().zip(rv) {
                assert_eq!(a["index"], b["index"], "{at}");
                let d = dist(vec3(&a["position"]), vec3(&b["position"]));
                assert!(d <= tol, "{at}: vertex {} off by {d}", a["index"]);
            }
            compared += 1;
        }
    }
    assert_eq!(compared, 3 * ref_samples.len(), "FLY.3DS has three mesh nodes");
}

#[test]
fn sample_keeps_frames_and_times_in_command_line_order() {
    let f = fly();
    let out = stdout_json(&keyscene(&[
        "sample", &f, "--time", "1", "--frame", "7.5", "--time", "0.5", "--json",
    ]));
    let frames: Vec<f64> =
        out["samples"].as_array().unwrap().iter().map(|s| s["frame"].as_f64().unwrap()).collect();
    assert_eq!(frames, vec![30.0, 7.5, 15.0]);
    // --fps changes only the seconds ↔ frames rate.
    let out = stdout_json(&keyscene(&["sample", &f, "--time", "1", "--fps", "25", "--json"]));
    assert_eq!(out["samples"][0]["frame"].as_f64(), Some(25.0));
    assert_eq!(out["samples"][0]["time"].as_f64(), Some(1.0));
}

#[test]
fn sample_at_a_time_equals_sample_at_its_frame() {
    let f = fly();
    let a = stdout_json(&keyscene(&["sample", &f, "--time", "2", "--json"]));
    let b = stdout_json(&keyscene(&["sample", &f, "--frame", "60", "--json"]));
    assert_eq!(a["samples"][0]["nodes"], b["samples"][0]["nodes"]);
}

#[test]
fn sample_nodes_have_the_documented_fields() {
    let out = stdout_json(&keyscene(&["sample", &fly(), "--frame", "0", "--json"]));
    let keys: Vec<&str> = out.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, vec!["samples"]);
    for n in out["samples"][0]["nodes"].as_array().unwrap() {
        for k in ["name", "instance", "kind", "parent", "world_matrix", "hidden"] {
            assert!(n.get(k).is_some(), "node lacks {k}: {n}");
        }
        assert_eq!(n["world_matrix"].as_array().unwrap().len(), 16);
        assert_eq!(n.get("mesh").is_some(), n["kind"] == "mesh", "{n}");
    }
}

#[test]
fn inspect_json_counts_what_lib3ds_counts() {
    let out = stdout_json(&keyscene(&["inspect", &fly(), "--json"]));
    assert_eq!(out["format"], "3ds");
    // lib3ds: three meshes (8 + 66 + 122 vertices, 12 + 108 + 216 faces), a camera and its
    // target, two lights; keyframer 0..600.
    assert_eq!(out["counts"]["meshes"], 3);
    assert_eq!(out["counts"]["vertices"], 8 + 66 + 122);
    assert_eq!(out["counts"]["faces"], 12 + 108 + 216);
    assert_eq!(out["counts"]["cameras"], 1);
    assert_eq!(out["counts"]["lights"], 2);
    assert_eq!(out["counts"]["nodes"], 7);
    assert_eq!(out["frame_range"], serde_json::json!([0.0, 600.0]));
    let tracks = out["animations"][0]["tracks"].as_array().unwrap();
    assert!(tracks.iter().any(|t| t["track"] == "translation" && t["keys"].as_u64() > Some(0)));
}

#[test]
fn inspect_prints_an_indented_tree() {
    let out = keyscene(&["inspect", &fly()]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("\n  sippi [mesh]"), "{text}");
    // The camera target hangs under sippi, one level deeper.
    assert!(text.contains("\n    Camera01 [camera_target]"), "{text}");
}

/// Vertex lines of object `name` in an OBJ text.
fn obj_vertices(obj: &str, name: &str) -> Vec<[f64; 3]> {
    let mut inside = false;
    let mut out = Vec::new();
    for line in obj.lines() {
        if let Some(n) = line.strip_prefix("o ") {
            inside = n == name;
        } else if let (true, Some(v)) = (inside, line.strip_prefix("v ")) {
            let p: Vec<f64> = v.split(' ').map(|x| x.parse().unwrap()).collect();
            out.push([p[0], p[1], p[2]]);
        }
    }
    out
}

#[test]
fn convert_to_obj_at_a_frame_puts_vertices_where_lib3ds_does() {
    let reference = reference();
    let tol = tolerance(&reference);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("fly.obj");
    let r = keyscene(&["convert", &fly(), out.to_str().unwrap(), "--frame", "200"]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let obj = std::fs::read_to_string(&out).unwrap();
    assert!(obj.contains("mtllib fly.mtl\n"));
    assert!(dir.path().join("fly.mtl").is_file());
    let sample = reference["samples"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["frame"].as_f64() == Some(200.0))
        .unwrap();
    for r in sample["nodes"].as_array().unwrap().iter().filter(|n| n.get("mesh").is_some()) {
        let vs = obj_vertices(&obj, r["name"].as_str().unwrap());
        assert_eq!(vs.len() as u64, r["vertex_count"].as_u64().unwrap(), "{}", r["name"]);
        for s in r["world_sample_vertices"].as_array().unwrap() {
            let i = s["index"].as_u64().unwrap() as usize;
            let d = dist(vs[i], vec3(&s["position"]));
            assert!(d <= tol, "{} vertex {i} off by {d}", r["name"]);
        }
    }
}

#[test]
fn convert_to_obj_without_a_frame_writes_every_mesh() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("fly.obj");
    let r = keyscene(&["convert", &fly(), out.to_str().unwrap()]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let obj = std::fs::read_to_string(&out).unwrap();
    let objects: Vec<&str> = obj.lines().filter_map(|l| l.strip_prefix("o ")).collect();
    assert_eq!(objects.len(), 3, "{objects:?}");
    assert_eq!(obj.lines().filter(|l| l.starts_with("v ")).count(), 8 + 66 + 122);
    assert_eq!(obj.lines().filter(|l| l.starts_with("f ")).count(), 12 + 108 + 216);
}

fn files_in(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect()
}

#[test]
fn a_file_that_is_not_3ds_fails_with_an_error_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("wrong.3ds");
    std::fs::write(&bad, b"this is no 3ds!\n").unwrap();
    let out = dir.path().join("out.obj");
    let r = keyscene(&["convert", bad.to_str().unwrap(), out.to_str().unwrap()]);
    assert!(!r.status.success());
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(err.starts_with("keyscene: error: "), "{err}");
    assert_eq!(files_in(dir.path()), vec![bad.clone()], "no output, no temporary file");
    for cmd in [
        &["inspect", bad.to_str().unwrap()][..],
        &["sample", bad.to_str().unwrap(), "--frame", "0", "--json"],
    ] {
        let r = keyscene(cmd);
        assert!(!r.status.success());
        assert!(r.stdout.is_empty());
    }
}

#[test]
fn a_missing_file_is_named_in_the_error() {
    let r = keyscene(&["inspect", "no/such/file.3ds"]);
    assert!(!r.status.success());
    assert!(String::from_utf8_lossy(&r.stderr).contains("no/such/file.3ds"));
}

#[test]
fn an_unknown_output_extension_is_refused_without_writing() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("fly.xyz");
    let r = keyscene(&["convert", &fly(), out.to_str().unwrap()]);
    assert!(!r.status.success());
    assert!(String::from_utf8_lossy(&r.stderr).contains("unknown output format"));
    assert!(files_in(dir.path()).is_empty());
}

#[test]
fn sample_needs_a_frame_or_time() {
    let r = keyscene(&["sample", &fly(), "--json"]);
    assert!(!r.status.success());
    assert!(String::from_utf8_lossy(&r.stderr).contains("--frame or --time"));
}

#[test]
fn convert_to_glb_and_gltf_writes_files_that_read_back() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["fly.glb", "fly.gltf"] {
        let out = dir.path().join(name);
        // With `_KEYSCENE_VERTEX`, the reader restores the source's vertices (not glTF's,
        // split where corners differ in normal or UV).
        let r = keyscene(&["convert", &fly(), out.to_str().unwrap(), "--source-vertex-ids"]);
        assert!(r.status.success(), "{name}: {}", String::from_utf8_lossy(&r.stderr));
        let back = stdout_json(&keyscene(&["inspect", out.to_str().unwrap(), "--json"]));
        assert_eq!(back["format"], "gltf", "{name}");
        assert_eq!(back["counts"]["meshes"], 3, "{name}");
        assert_eq!(back["counts"]["vertices"], 8 + 66 + 122, "{name}");
    }
    assert!(std::fs::read(dir.path().join("fly.glb")).unwrap().starts_with(b"glTF"));
    assert!(dir.path().join("fly.bin").is_file(), "the .gltf's buffer is written beside it");
}

#[test]
fn convert_to_fbx_writes_a_binary_fbx_that_reads_back_with_the_same_meshes() {
    // FLY.3DS has 3 meshes of 8, 66 and 122 vertices (the glTF test above and lib3ds agree).
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("fly.fbx");
    let r = keyscene(&["convert", &fly(), out.to_str().unwrap(), "--report"]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert!(String::from_utf8_lossy(&r.stdout).contains("models"), "the report is printed");
    let bytes = std::fs::read(&out).unwrap();
    assert!(bytes.starts_with(b"Kaydara FBX Binary  \0\x1a\0"));
    assert_eq!(&bytes[23..27], &7400u32.to_le_bytes());
    let back = stdout_json(&keyscene(&["inspect", out.to_str().unwrap(), "--json"]));
    assert_eq!(back["format"], "fbx");
    assert_eq!(back["counts"]["meshes"], 3);
    assert_eq!(back["counts"]["vertices"], 8 + 66 + 122);
}

#[test]
fn convert_to_fbx_as_ascii_and_as_7500_reads_back_with_the_same_meshes() {
    // As above: FLY.3DS has 3 meshes of 8, 66 and 122 vertices. The ASCII header line and the
    // 7.5 version field are the SDK's (maya_cube_7400_ascii.fbx, FBX binary header).
    for (options, head) in [
        (&["--fbx-ascii"][..], &b"; FBX 7.4.0 project file\n"[..]),
        (&["--fbx-version", "7500"][..], &b"Kaydara FBX Binary  \0\x1a\0\x4c\x1d\0\0"[..]),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("fly.fbx");
        let r = convert_fly(&out, options);
        assert!(r.status.success(), "{options:?}: {}", String::from_utf8_lossy(&r.stderr));
        assert!(std::fs::read(&out).unwrap().starts_with(head), "{options:?}");
        let back = stdout_json(&keyscene(&["inspect", out.to_str().unwrap(), "--json"]));
        assert_eq!(back["counts"]["meshes"], 3, "{options:?}");
        assert_eq!(back["counts"]["vertices"], 8 + 66 + 122, "{options:?}");
    }
}

/// Each `convert` option used with an output it does not apply to (README, "The `keyscene`
/// command": OBJ posing options, glTF options, 3DA options) and the formats the error must name.
const MISPLACED_OPTIONS: &[(&str, &[&str], &str)] = &[
    (
        "fly.glb",
        &["--frame", "10"],
        "--frame does not apply to .glb output: it applies to .obj only",
    ),
    ("fly.3da", &["--time", "1"], "--time does not apply to .3da output: it applies to .obj only"),
    (
        "fly.gltf",
        &["--bind-pose", "x"],
        "--bind-pose does not apply to .gltf output: it applies to .obj only",
    ),
    (
        "fly.3da",
        &["--no-extrapolation"],
        "--no-extrapolation does not apply to .3da output: it applies to .obj only",
    ),
    (
        "fly.glb",
        &["--transform-skin"],
        "--transform-skin does not apply to .glb output: it applies to .obj only",
    ),
    (
        "fly.3da",
        &["--up", "z"],
        "--up does not apply to .3da output: it applies to .obj, .gltf, .glb, .usda and .usdz only",
    ),
    (
        "fly.3da",
        &["--units", "cm"],
        "--units does not apply to .3da output: it applies to .obj, .gltf, .glb, .usda and .usdz only",
    ),
    (
        "fly.3da",
        &["--space", "y_up_m"],
        "--space does not apply to .3da output: it applies to .obj, .gltf, .glb, .usda and .usdz only",
    ),
    (
        "fly.obj",
        &["--embed"],
        "--embed does not apply to .obj output: it applies to .gltf and .fbx only",
    ),
    (
        "fly.glb",
        &["--embed"],
        "--embed does not apply to .glb output: it applies to .gltf and .fbx only",
    ),
    (
        "fly.glb",
        &["--fbx-ascii"],
        "--fbx-ascii does not apply to .glb output: it applies to .fbx only",
    ),
    (
        "fly.3ds",
        &["--triangulate"],
        "--triangulate does not apply to .3ds output: it applies to .fbx, .usda and .usdz only",
    ),
    (
        "fly.obj",
        &["--fbx-version", "7500"],
        "--fbx-version does not apply to .obj output: it applies to .fbx only",
    ),
    (
        "fly.3da",
        &["--no-animation"],
        "--no-animation does not apply to .3da output: it applies to .gltf and .glb only",
    ),
    (
        "fly.obj",
        &["--resample-fps", "30"],
        "--resample-fps does not apply to .obj output: it applies to .gltf and .glb only",
    ),
    (
        "fly.3da",
        &["--max-influences", "4"],
        "--max-influences does not apply to .3da output: it applies to .gltf and .glb only",
    ),
    ("fly.glb", &["--fps", "30"], "--fps does not apply to .glb output: it applies to .3da only"),
    (
        "fly.obj",
        &["--axes", "source"],
        "--axes does not apply to .obj output: it applies to .3da only",
    ),
];

/// `keyscene convert FLY.3DS out OPTIONS…`.
fn convert_fly(out: &Path, options: &[&str]) -> Output {
    let input = fly();
    let mut args = vec!["convert", &input, out.to_str().unwrap()];
    args.extend_from_slice(options);
    keyscene(&args)
}

#[test]
fn convert_refuses_an_option_its_output_format_does_not_use_and_writes_nothing() {
    for (name, options, message) in MISPLACED_OPTIONS {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join(name);
        let r = convert_fly(&out, options);
        let stderr = String::from_utf8_lossy(&r.stderr);
        assert!(!r.status.success(), "{name} {options:?} was accepted");
        assert!(stderr.contains(message), "{name} {options:?}: {stderr}");
        assert!(files_in(dir.path()).is_empty(), "{name} {options:?} wrote a file");
    }
}

#[test]
fn convert_accepts_each_option_with_an_output_it_applies_to() {
    let accepted: &[(&str, &[&str])] = &[
        ("fly.gltf", &["--embed"]),
        ("fly.glb", &["--no-animation", "--resample-fps", "30", "--max-influences", "8"]),
        ("fly.gltf", &["--up", "z", "--units", "cm"]),
        ("fly.obj", &["--frame", "10", "--space", "y_up_m", "--no-extrapolation"]),
        ("fly.3da", &["--fps", "30", "--axes", "source"]),
        ("fly.fbx", &["--fbx-ascii", "--triangulate", "--embed"]),
        ("fly.fbx", &["--fbx-version", "7500"]),
        ("fly.usda", &["--triangulate"]),
    ];
    for (name, options) in accepted {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join(name);
        let r = convert_fly(&out, options);
        assert!(r.status.success(), "{name} {options:?}: {}", String::from_utf8_lossy(&r.stderr));
        assert!(out.is_file(), "{name} {options:?}");
    }
}

#[test]
fn check_passes_a_sound_file_and_fails_a_cut_one_with_its_place() {
    let ok = keyscene(&["check", &fly()]);
    assert!(ok.status.success(), "{}", String::from_utf8_lossy(&ok.stderr));
    assert!(String::from_utf8_lossy(&ok.stdout).ends_with("0 errors, 0 warnings\n"));
    // FLY.3DS cut inside its first chunk's header: the reader must refuse it and say where.
    let dir = tempfile::tempdir().unwrap();
    let cut = dir.path().join("cut.3ds");
    std::fs::write(&cut, &std::fs::read(fly()).unwrap()[..4]).unwrap();
    let bad = keyscene(&["check", cut.to_str().unwrap()]);
    assert!(!bad.status.success());
    // The error is printed once: the report line (stdout) names the byte offset; stderr only
    // says the check failed (issue 36 §2: it was printed twice).
    let out = String::from_utf8_lossy(&bad.stdout);
    assert!(out.contains("error:") && out.contains("byte"), "error names a byte offset: {out}");
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(!err.contains("byte") && err.contains("1 errors"), "stderr repeats the error: {err}");
}

#[test]
fn convert_to_3da_writes_a_file_that_checks_clean_and_samples_like_lib3ds() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("fly.3da");
    let conv = keyscene(&["convert", &fly(), out.to_str().unwrap(), "--report"]);
    assert!(conv.status.success(), "{}", String::from_utf8_lossy(&conv.stderr));
    let report = String::from_utf8_lossy(&conv.stdout);
    assert!(report.contains("3DA has no camera"), "the camera is reported dropped:\n{report}");
    // Without --report, what was dropped is still said: as a warning on stderr.
    let again = keyscene(&["convert", &fly(), out.to_str().unwrap(), "--force"]);
    let warned = String::from_utf8_lossy(&again.stderr);
    assert!(warned.contains("not written") && warned.contains("3DA has no camera"), "{warned}");
    assert!(dir.path().join("fly_default.mat").is_file(), "material script beside the model");
    let check = keyscene(&["check", out.to_str().unwrap()]);
    assert!(check.status.success(), "{}", String::from_utf8_lossy(&check.stdout));

    // The 3DA's world-space mesh boxes at lib3ds' reference frames. The exporter splits
    // vertices where corners differ in normal or UV (3DA streams are per vertex), so the
    // vertex mean (centroid) and vertex indices legitimately differ; the box does not.
    let reference = reference();
    let tol = tolerance(&reference);
    for r in reference["samples"].as_array().unwrap() {
        let frame = r["frame"].as_f64().unwrap();
        let ours = stdout_json(&keyscene(&[
            "sample",
            out.to_str().unwrap(),
            "--frame",
            &frame.to_string(),
            "--json",
        ]));
        let nodes = ours["samples"][0]["nodes"].as_array().unwrap();
        for rn in r["nodes"].as_array().unwrap().iter().filter(|n| n.get("mesh").is_some()) {
            let n = nodes.iter().find(|n| n["name"] == rn["name"]).expect("entity by name");
            for key in ["world_bbox_min", "world_bbox_max"] {
                let d = dist(vec3(&n["mesh"][key]), vec3(&rn[key]));
                assert!(d <= tol, "{} {key} at frame {frame}: off by {d}", rn["name"]);
            }
        }
    }
}

/// Files under `dir` whose extension is one a batch converts, relative, `/`-separated.
fn batch_inputs(dir: &Path, rel: &str, out: &mut Vec<String>) {
    for e in std::fs::read_dir(dir.join(rel)).unwrap() {
        let e = e.unwrap();
        let name = e.file_name().to_string_lossy().into_owned();
        let sub = if rel.is_empty() { name.clone() } else { format!("{rel}/{name}") };
        if e.file_type().unwrap().is_dir() {
            batch_inputs(dir, &sub, out);
        } else if let Some((_, ext)) = name.rsplit_once('.') {
            let ext = ext.to_ascii_lowercase();
            if ["3ds", "prj", "fbx", "3da", "gltf", "glb"].contains(&ext.as_str()) {
                out.push(sub);
            }
        }
    }
}

#[test]
fn batch_convert_of_the_3ds_corpus_converts_every_file_but_the_broken_one() {
    let Some(corpus) = corpus() else {
        eprintln!("corpus not found (set KEYSCENE_CORPUS): nothing checked");
        return;
    };
    let input = corpus.join("3ds");
    let mut expected = Vec::new();
    batch_inputs(&input, "", &mut expected);
    expected.sort();
    // MANIFEST.md: online3dviewer/wrong.3ds is "not a 3ds root"; every other file loads.
    assert!(expected.contains(&"online3dviewer/wrong.3ds".to_string()));
    let dir = tempfile::tempdir().unwrap();
    let r = keyscene(&[
        "convert",
        input.to_str().unwrap(),
        dir.path().to_str().unwrap(),
        "--to",
        "glb",
        "--json",
    ]);
    assert!(!r.status.success(), "one input fails, so the batch exits non-zero");
    assert!(
        String::from_utf8_lossy(&r.stderr).contains("1 of"),
        "{}",
        String::from_utf8_lossy(&r.stderr)
    );
    let s: Value = serde_json::from_slice(&r.stdout).expect("the summary is JSON");
    assert_eq!(s["files"].as_u64(), Some(expected.len() as u64));
    assert_eq!(s["converted"].as_u64(), Some(expected.len() as u64 - 1));
    assert_eq!(s["failed"].as_u64(), Some(1));
    let results = s["results"].as_array().unwrap();
    let inputs: Vec<&str> = results.iter().map(|r| r["input"].as_str().unwrap()).collect();
    assert_eq!(inputs, expected.iter().map(String::as_str).collect::<Vec<_>>());
    for r in results {
        let input = r["input"].as_str().unwrap();
        if input == "online3dviewer/wrong.3ds" {
            assert_eq!(r["status"], "failed");
            // MANIFEST.md: "not a 3ds root"; the reason names the root chunk expected.
            assert!(r["error"].as_str().unwrap().contains("M3DMAGIC"), "{r}");
            assert!(r["output"].is_null());
            assert!(!dir.path().join("online3dviewer/wrong.glb").exists(), "nothing written");
            continue;
        }
        assert_ne!(r["status"], "failed", "{r}");
        let out = dir.path().join(r["output"].as_str().unwrap());
        assert!(std::fs::read(&out).unwrap().starts_with(b"glTF"), "{}", out.display());
        // The output mirrors the input's folder and name.
        let (stem, _) = input.rsplit_once('.').unwrap();
        assert_eq!(r["output"].as_str().unwrap(), format!("{stem}.glb"));
    }
}

#[test]
fn batch_convert_goes_on_past_a_broken_file_and_mirrors_subfolders() {
    let src = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(src.path().join("deep/er")).unwrap();
    std::fs::copy(fly(), src.path().join("deep/er/FLY.3DS")).unwrap();
    std::fs::copy(fly(), src.path().join("fly.prj")).unwrap();
    std::fs::write(src.path().join("broken.fbx"), b"Kaydara FBX Binary  \0\x1a\0").unwrap();
    std::fs::write(src.path().join("notes.txt"), b"not a scene").unwrap();
    let dst = tempfile::tempdir().unwrap();
    for (to, ext) in [("3da", "3da"), ("obj", "obj"), ("gltf", "gltf")] {
        let out = dst.path().join(to);
        let r =
            keyscene(&["convert", src.path().to_str().unwrap(), out.to_str().unwrap(), "--to", to]);
        assert!(!r.status.success());
        let text = String::from_utf8_lossy(&r.stdout);
        assert!(text.contains("failed: broken.fbx: "), "{text}");
        assert!(text.contains(&format!("converted 2 of 3 files to {ext}")), "{text}");
        assert!(out.join(format!("deep/er/FLY.{ext}")).is_file(), "{to}: {text}");
        assert!(out.join(format!("fly.{ext}")).is_file(), "{to}");
        assert!(!out.join(format!("broken.{ext}")).exists(), "{to}");
    }
    // The .gltf keeps its buffer beside it; the .obj its .mtl.
    assert!(dst.path().join("gltf/deep/er/FLY.bin").is_file());
    assert!(dst.path().join("obj/deep/er/FLY.mtl").is_file());
}

#[test]
fn batch_convert_succeeds_when_nothing_fails_and_refuses_single_file_options() {
    let src = tempfile::tempdir().unwrap();
    std::fs::copy(fly(), src.path().join("FLY.3DS")).unwrap();
    let dst = tempfile::tempdir().unwrap();
    let (s, d) = (src.path().to_str().unwrap(), dst.path().to_str().unwrap());
    let ok = stdout_json(&keyscene(&["convert", s, d, "--to", "glb", "--json"]));
    assert_eq!(
        (ok["files"].as_u64(), ok["converted"].as_u64(), ok["failed"].as_u64()),
        (Some(1), Some(1), Some(0))
    );
    assert_eq!(ok["results"][0]["output"], "FLY.glb");
    let no_to = keyscene(&["convert", s, d]);
    assert!(!no_to.status.success());
    assert!(String::from_utf8_lossy(&no_to.stderr).contains("--to"));
    let frame = keyscene(&["convert", s, d, "--to", "obj", "--frame", "3"]);
    assert!(!frame.status.success());
    assert!(
        String::from_utf8_lossy(&frame.stderr).contains("--frame applies to converting one file")
    );
    // Format options too: a batch converts each file as `convert FILE OUT` with no options.
    let embed = keyscene(&["convert", s, d, "--to", "gltf", "--embed"]);
    assert!(!embed.status.success());
    assert!(
        String::from_utf8_lossy(&embed.stderr).contains("--embed applies to converting one file")
    );
    let to_on_file = keyscene(&["convert", &fly(), &format!("{d}/x.glb"), "--to", "glb"]);
    assert!(!to_on_file.status.success());
}

/// Issue 36 §4: `--compress` writes glTF with `EXT_meshopt_compression` and
/// `KHR_mesh_quantization` required (their spec names), for one file and for a folder with
/// `--to glb`; it is refused for other outputs; the file reads back (`convert out.glb x.obj`).
#[test]
fn compress_writes_the_two_extensions_for_a_file_and_a_folder_and_only_for_gltf() {
    let src = tempfile::tempdir().unwrap();
    std::fs::copy(fly(), src.path().join("FLY.3DS")).unwrap();
    let dst = tempfile::tempdir().unwrap();
    let (s, d) = (src.path().to_str().unwrap(), dst.path().to_str().unwrap());
    let required = |glb: &Path| {
        let bytes = std::fs::read(glb).unwrap();
        let len = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
        let json: Value = serde_json::from_slice(&bytes[20..20 + len]).unwrap();
        json["extensionsRequired"].clone()
    };
    let both = serde_json::json!(["EXT_meshopt_compression", "KHR_mesh_quantization"]);
    let one = format!("{d}/one.glb");
    let out = keyscene(&["convert", &fly(), &one, "--compress"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(required(Path::new(&one)), both);
    let obj = format!("{d}/back.obj");
    let back = keyscene(&["convert", &one, &obj]);
    assert!(back.status.success(), "{}", String::from_utf8_lossy(&back.stderr));
    let folder = format!("{d}/folder");
    let out = keyscene(&["convert", s, &folder, "--to", "glb", "--compress"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(required(&Path::new(&folder).join("FLY.glb")), both);
    let obj_folder = keyscene(&["convert", s, &format!("{d}/o"), "--to", "obj", "--compress"]);
    assert!(!obj_folder.status.success());
    let err = String::from_utf8_lossy(&obj_folder.stderr);
    assert!(err.contains("--compress applies to --to glb or --to gltf"), "{err}");
    let obj_file = keyscene(&["convert", &fly(), &format!("{d}/x.obj"), "--compress"]);
    assert!(!obj_file.status.success());
    let err = String::from_utf8_lossy(&obj_file.stderr);
    assert!(err.contains("--compress does not apply to .obj output"), "{err}");
}

/// Issue 17 §1: an empty file of any format is an error that names the file and says
/// "empty", for every command that reads it; `convert` leaves no output behind.
#[test]
fn empty_files_of_every_format_are_errors_that_say_empty() {
    let dir = tempfile::tempdir().unwrap();
    for ext in ["glb", "gltf", "3da", "3ds", "fbx"] {
        let empty = dir.path().join(format!("e.{ext}"));
        std::fs::write(&empty, b"").unwrap();
        let e = empty.to_str().unwrap();
        let out = dir.path().join(format!("out_{ext}.glb"));
        for args in [
            vec!["inspect", e],
            vec!["check", e],
            vec!["sample", e, "--frame", "0"],
            vec!["convert", e, out.to_str().unwrap()],
        ] {
            let r = keyscene(&args);
            // `check` says it once, on its report line (stdout); the others on stderr.
            let err =
                String::from_utf8_lossy(if args[0] == "check" { &r.stdout } else { &r.stderr });
            assert!(!r.status.success(), "{args:?} succeeded on an empty file");
            assert!(err.contains(e) && err.contains("empty"), "{args:?}: {err}");
        }
        assert!(!out.exists(), "no output for an empty .{ext}");
    }
}

/// Issue 17 §3: JSON is `sample`'s only output, so it needs no `--json`.
#[test]
fn sample_prints_json_without_the_json_flag() {
    let plain = stdout_json(&keyscene(&["sample", &fly(), "--frame", "5"]));
    let flagged = stdout_json(&keyscene(&["sample", &fly(), "--frame", "5", "--json"]));
    assert_eq!(plain, flagged);
}

/// Issue 17 §3: `convert FILE existing_folder` says OUT is a folder and shows both forms.
#[test]
fn convert_into_an_existing_folder_says_it_is_a_folder() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let r = keyscene(&["convert", &fly(), d]);
    assert!(!r.status.success());
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(err.contains(&format!("{d} is a folder")), "{err}");
    assert!(err.contains(&format!("{d}/FLY.glb")) && err.contains("--to"), "{err}");
    assert!(!err.contains("unknown output format"), "{err}");
}

/// Issue 17 §1: every line `check` prints names the file and the format.
#[test]
fn check_names_the_file_and_format_on_every_line() {
    let r = keyscene(&["check", &fly()]);
    assert!(r.status.success());
    let text = String::from_utf8_lossy(&r.stdout);
    for line in text.lines() {
        assert!(line.starts_with(&format!("{}: ", fly())), "{line}");
    }
    // A 3DA file: the layout line and the summary.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("fly.3da");
    assert!(keyscene(&["convert", &fly(), out.to_str().unwrap()]).status.success());
    let r = keyscene(&["check", out.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&r.stdout);
    let o = out.to_str().unwrap();
    assert!(text.lines().next().unwrap().starts_with(&format!("{o}: 3DA: ")), "{text}");
    assert!(text.lines().all(|l| l.starts_with(&format!("{o}: "))), "{text}");
}

/// Issue 17 §4: three `--shard I/3` runs into one folder convert every file exactly once.
#[test]
fn three_shards_into_one_folder_convert_every_file_once() {
    let src = tempfile::tempdir().unwrap();
    let bytes = std::fs::read(fly()).unwrap();
    let mut all = Vec::new();
    for i in 0..12 {
        let rel = format!("d{}/fly{i}.3ds", i % 3);
        std::fs::create_dir_all(src.path().join(format!("d{}", i % 3))).unwrap();
        std::fs::write(src.path().join(&rel), &bytes).unwrap();
        all.push(rel);
    }
    let out = tempfile::tempdir().unwrap();
    let mut seen: Vec<String> = Vec::new();
    for i in 0..3 {
        let shard = format!("{i}/3");
        let s = src.path().to_str().unwrap();
        let o = out.path().to_str().unwrap();
        let r =
            stdout_json(&keyscene(&["convert", s, o, "--to", "obj", "--json", "--shard", &shard]));
        assert_eq!(r["shard"], shard.as_str());
        for f in r["results"].as_array().unwrap() {
            assert_eq!(f["status"], "converted");
            seen.push(f["input"].as_str().unwrap().to_owned());
        }
    }
    seen.sort();
    all.sort();
    assert_eq!(seen, all, "the shards' union is every file, each once");
    // A second run of every shard converts nothing: each output is up to date.
    for i in 0..3 {
        let shard = format!("{i}/3");
        let (s, o) = (src.path().to_str().unwrap(), out.path().to_str().unwrap());
        let r =
            stdout_json(&keyscene(&["convert", s, o, "--to", "obj", "--json", "--shard", &shard]));
        assert_eq!(r["converted"].as_u64(), Some(0), "{r}");
        for f in r["results"].as_array().unwrap() {
            assert_eq!(f["status"], "skipped", "{f}");
        }
    }
    for rel in &all {
        assert!(out.path().join(rel.replace(".3ds", ".obj")).is_file(), "{rel}");
    }
    let bad =
        keyscene(&["convert", src.path().to_str().unwrap(), "x", "--to", "obj", "--shard", "3/3"]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("0 <= I < N"));
}

/// Issue 17 §2: a 24 fps source written to 3DA (which readers play at 30 fps) says so and
/// names `--fps 30`; with `--fps 30` the warning is gone.
#[test]
fn a_24_fps_source_to_3da_warns_and_names_fps_30() {
    let Some(corpus) = corpus() else {
        eprintln!("corpus not found (set KEYSCENE_CORPUS): nothing checked");
        return;
    };
    let src = corpus.join("fbx/ufbx/maya_kenney_character_7700_binary.fbx");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("k.3da");
    let r = keyscene(&["convert", src.to_str().unwrap(), out.to_str().unwrap()]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let all =
        format!("{}{}", String::from_utf8_lossy(&r.stdout), String::from_utf8_lossy(&r.stderr));
    assert!(all.contains("24 fps") && all.contains("--fps 30"), "{all}");
    let r = keyscene(&[
        "convert",
        src.to_str().unwrap(),
        out.to_str().unwrap(),
        "--fps",
        "30",
        "--force",
    ]);
    assert!(r.status.success());
    let all =
        format!("{}{}", String::from_utf8_lossy(&r.stdout), String::from_utf8_lossy(&r.stderr));
    assert!(!all.contains("--fps 30"), "{all}");
}

#[test]
fn convert_to_3ds_keeps_fly_s_meshes_and_refuses_posing_options() {
    // FLY.3DS has 3 meshes of 8, 66 and 122 vertices (lib3ds agrees); written back exactly.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("fly.3ds");
    let r = keyscene(&["convert", &fly(), out.to_str().unwrap(), "--report"]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert!(String::from_utf8_lossy(&r.stdout).contains("3DS keys written exactly"));
    let bytes = std::fs::read(&out).unwrap();
    assert_eq!(&bytes[..2], &0x4D4Du16.to_le_bytes(), "M3DMAGIC");
    assert_eq!(&bytes[2..6], &(bytes.len() as u32).to_le_bytes(), "root length = file size");
    let back = stdout_json(&keyscene(&["inspect", out.to_str().unwrap(), "--json"]));
    assert_eq!(back["format"], "3ds");
    assert_eq!(back["counts"]["meshes"], 3);
    assert_eq!(back["counts"]["vertices"], 8 + 66 + 122);
    let r = keyscene(&["convert", &fly(), out.to_str().unwrap(), "--frame", "3"]);
    assert!(!r.status.success());
    assert!(
        String::from_utf8_lossy(&r.stderr).contains("--frame does not apply to .3ds output"),
        "{}",
        String::from_utf8_lossy(&r.stderr)
    );
}

/// Issue 17 §2: an existing output file is replaced only with `--force`, whichever run wrote
/// it; without it nothing is written and the error names the file and `--force`.
#[test]
fn an_existing_output_is_replaced_only_with_force() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["fly.glb", "fly.obj", "fly.3da", "fly.fbx", "fly.gltf", "fly.3ds"] {
        let out = dir.path().join(name);
        std::fs::write(&out, b"someone else's file").unwrap();
        let r = keyscene(&["convert", &fly(), out.to_str().unwrap()]);
        assert!(!r.status.success(), "{name}: an existing output was replaced");
        let err = String::from_utf8_lossy(&r.stderr);
        assert!(
            err.contains(out.to_str().unwrap())
                && err.contains("already exists")
                && err.contains("--force"),
            "{name}: {err}"
        );
        assert_eq!(std::fs::read(&out).unwrap(), b"someone else's file", "{name}");
        let r = keyscene(&["convert", &fly(), out.to_str().unwrap(), "--force"]);
        assert!(r.status.success(), "{name}: {}", String::from_utf8_lossy(&r.stderr));
        assert_ne!(std::fs::read(&out).unwrap(), b"someone else's file", "{name}");
    }
}

/// Issue 17 §2: every output format prints one summary line by default, nothing with
/// `--quiet`, one JSON document with `--json`, and the line plus the report with `--report`.
#[test]
fn every_output_format_prints_one_line_nothing_quietly_and_json_on_request() {
    let dir = tempfile::tempdir().unwrap();
    for ext in ["obj", "gltf", "glb", "3da", "fbx", "3ds", "usda", "usdz"] {
        let out = dir.path().join(format!("fly.{ext}"));
        let o = out.to_str().unwrap();
        let r = keyscene(&["convert", &fly(), o]);
        assert!(r.status.success(), "{ext}: {}", String::from_utf8_lossy(&r.stderr));
        let text = String::from_utf8_lossy(&r.stdout);
        assert_eq!(text.lines().count(), 1, "{ext}: {text}");
        assert!(text.starts_with(&format!("converted {} to {o} (", fly())), "{ext}: {text}");
        let quiet = keyscene(&["convert", &fly(), o, "--force", "--quiet"]);
        assert!(quiet.status.success() && quiet.stdout.is_empty(), "{ext} --quiet");
        let json = stdout_json(&keyscene(&["convert", &fly(), o, "--force", "--json"]));
        assert_eq!(json["format"], ext);
        assert_eq!(json["output"], o);
        assert!(json["warnings"].is_array() && json["seconds"].is_f64(), "{json}");
        let report = keyscene(&["convert", &fly(), o, "--force", "--report"]);
        let text = String::from_utf8_lossy(&report.stdout);
        // FLY.3DS has 3 meshes (lib3ds): the 3DA report lists their triangles, the FBX one
        // its models, the 3DS one its mesh objects.
        match ext {
            "3da" => assert!(text.contains("triangles; ACMR"), "{text}"),
            "fbx" => assert!(text.contains("models"), "{text}"),
            "3ds" => assert!(text.contains("3 mesh objects"), "{text}"),
            _ => assert_eq!(text.lines().count(), 1, "{ext}: {text}"),
        }
    }
    let both = keyscene(&["convert", &fly(), "x.glb", "--quiet", "--json"]);
    assert!(!both.status.success(), "--quiet and --json exclude each other");
}

fn sha256sum(path: &Path) -> Option<String> {
    let out = Command::new("sha256sum").arg(path).output().ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    Some(text.split_whitespace().next()?.to_string())
}

/// Issue 17 §4: a second run converts nothing (every output up to date); the manifest has one
/// line per source with its size and SHA-256 (as `sha256sum` computes it); a source changed
/// since is converted again when the manifest records its output, and fails without one.
#[test]
fn a_second_batch_run_converts_nothing_and_the_manifest_resumes() {
    let src = tempfile::tempdir().unwrap();
    let bytes = std::fs::read(fly()).unwrap();
    for i in 0..4 {
        std::fs::write(src.path().join(format!("fly{i}.3ds")), &bytes).unwrap();
    }
    let out = tempfile::tempdir().unwrap();
    let manifest = out.path().join("m.jsonl");
    let (s, o, m) =
        (src.path().to_str().unwrap(), out.path().to_str().unwrap(), manifest.to_str().unwrap());
    let first =
        stdout_json(&keyscene(&["convert", s, o, "--to", "glb", "--json", "--manifest", m]));
    assert_eq!((first["converted"].as_u64(), first["skipped"].as_u64()), (Some(4), Some(0)));
    let lines: Vec<Value> = std::fs::read_to_string(&manifest)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 4);
    let source0 = src.path().join("fly0.3ds");
    for l in &lines {
        assert_eq!(l["size"].as_u64(), Some(bytes.len() as u64));
        assert_eq!(l["outcome"], "converted");
        if let Some(sum) = sha256sum(&source0) {
            assert_eq!(l["sha256"].as_str(), Some(sum.as_str()), "{l}");
        }
    }
    // Second run, with and without the manifest: nothing converted.
    for args in [vec!["--manifest", m], vec![]] {
        let mut a = vec!["convert", s, o, "--to", "glb", "--json"];
        a.extend(args);
        let again = stdout_json(&keyscene(&a));
        assert_eq!((again["converted"].as_u64(), again["skipped"].as_u64()), (Some(0), Some(4)));
    }
    // fly0 changes (a later modification time): converted again with the manifest.
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(5);
    let f = std::fs::File::options().write(true).open(&source0).unwrap();
    f.set_modified(later).unwrap();
    drop(f);
    let plain = keyscene(&["convert", s, o, "--to", "glb", "--json"]);
    assert!(!plain.status.success(), "without a manifest an existing output is not replaced");
    let r: Value = serde_json::from_slice(&plain.stdout).unwrap();
    assert_eq!(r["failed"].as_u64(), Some(1));
    assert!(r["results"][0]["error"].as_str().unwrap().contains("--force"), "{r}");
    let resumed =
        stdout_json(&keyscene(&["convert", s, o, "--to", "glb", "--json", "--manifest", m]));
    assert_eq!((resumed["converted"].as_u64(), resumed["skipped"].as_u64()), (Some(1), Some(3)));
    assert_eq!(resumed["results"][0]["input"], "fly0.3ds");
    assert_eq!(resumed["results"][0]["status"], "converted");
    let forced = stdout_json(&keyscene(&["convert", s, o, "--to", "glb", "--json", "--force"]));
    assert_eq!(forced["converted"].as_u64(), Some(4));
}

#[test]
fn sample_says_which_nodes_are_hidden_and_a_glb_keeps_it() {
    // fbx/magnum/animation-visibility.fbx: pCube1's Visibility curve has constant keys 0, 1,
    // 0, 1 at 0, 1/6, 1/3 and 1/2 s, pCube2's 1, 0, 1 at 0, 1/4 and 1/2 s (KeyTime ÷
    // 46186158000, KeyAttrFlags 2 = constant); a value of 0 hides. By hand, (pCube1, pCube2)
    // hidden at 0.1 s: (yes, no); 0.2: (no, no); 0.3: (no, yes); 0.4: (yes, yes); 0.5: (no, no).
    let Some(corpus) = corpus() else {
        eprintln!("corpus not found (set KEYSCENE_CORPUS): nothing checked");
        return;
    };
    let fbx = corpus.join("fbx/magnum/animation-visibility.fbx");
    let dir = tempfile::tempdir().unwrap();
    let glb = dir.path().join("v.glb");
    let conv = keyscene(&["convert", fbx.to_str().unwrap(), glb.to_str().unwrap()]);
    assert!(conv.status.success(), "{}", String::from_utf8_lossy(&conv.stderr));
    let want = [
        (0.1, [true, false]),
        (0.2, [false, false]),
        (0.3, [false, true]),
        (0.4, [true, true]),
        (0.5, [false, false]),
    ];
    for file in [&fbx, &glb] {
        for (t, hidden) in want {
            let out = stdout_json(&keyscene(&[
                "sample",
                file.to_str().unwrap(),
                "--time",
                &t.to_string(),
                "--json",
            ]));
            for (name, h) in ["pCube1", "pCube2"].into_iter().zip(hidden) {
                let node = out["samples"][0]["nodes"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|n| n["name"] == name)
                    .unwrap_or_else(|| panic!("{name} in {}", file.display()));
                assert_eq!(node["hidden"], h, "{name} at {t} s in {}", file.display());
            }
        }
    }
}

/// `inspect --json` and `sample` list a node's user properties (issue 33 §3). Expected values
/// from the file's text (`maya_user_props_7700_ascii.fbx`): `P: "User_Float_Bounded",
/// "Number", "", "A+U",0.4,0,1`, `P: "User_Enum", "Enum", "", "A+U",1,
/// "ValueA~ValueB~ValueC"`, and User_Float_Bounded's curve key 0.5 at KTime 19244232500
/// (0.41667 s, frame 10 at the file's 24 fps).
#[test]
fn inspect_and_sample_list_fbx_user_properties() {
    let Some(corpus) = corpus() else {
        eprintln!("corpus not found (set KEYSCENE_CORPUS): nothing checked");
        return;
    };
    let file = corpus.join("fbx/ufbx/maya_user_props_7700_ascii.fbx");
    let file = file.to_str().unwrap();
    let report = stdout_json(&keyscene(&["inspect", "--json", file]));
    let props = report["nodes"][0]["user_properties"].as_array().expect("user_properties");
    let find = |props: &[Value], name: &str| {
        props.iter().find(|p| p["name"] == name).cloned().unwrap_or_else(|| panic!("{name}"))
    };
    let f = find(props, "User_Float_Bounded");
    assert_eq!((f["type"].as_str(), f["value"].as_f64()), (Some("number"), Some(0.4)));
    assert_eq!((f["min"].as_f64(), f["max"].as_f64()), (Some(0.0), Some(1.0)));
    assert_eq!(f["animated"], true);
    let e = find(props, "User_Enum");
    assert_eq!(e["value"], 1);
    assert_eq!(e["enum_names"], serde_json::json!(["ValueA", "ValueB", "ValueC"]));
    let text = String::from_utf8(keyscene(&["inspect", file]).stdout).unwrap();
    assert!(text.contains("user User_Enum (enum) = 1 [ValueB of ValueA~ValueB~ValueC]"), "{text}");
    let sample = stdout_json(&keyscene(&["sample", "--frame", "10", file]));
    let props = sample["samples"][0]["nodes"][0]["user_properties"].as_array().expect("listed");
    assert_eq!(find(props, "User_Float_Bounded")["value"].as_f64(), Some(0.5));
}

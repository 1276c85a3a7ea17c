//! Issue #17 §2, "nothing overwritten, nothing dropped without a word", through the `keyscene`
//! binary on corpus files: textures travel with every output (OBJ, 3DA, `.gltf`, 3DS under 8.3
//! names; the copies are byte-for-byte the corpus images beside the source),
//! `--no-copy-textures` copies none,
//! TGA/BMP textures reach glTF as PNG (dimensions as the source image's header states them;
//! the Khronos validator, when installed, accepts the file), and material scripts of
//! different sources never replace each other (a collision is an error naming both sources;
//! a batch of `fbx/fbx-conv` leaves every `.3da`'s scripts holding that model's materials).
//!
//! The corpus is `KEYSCENE_CORPUS`, else `../shared/corpus` beside the workspace; without it
//! every trial is reported ignored, never passed.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use libtest_mimic::{Arguments, Failed, Trial};

mod common;
use common::corpus;

fn keyscene(args: &[&Path]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_keyscene")).args(args).output().expect("keyscene runs")
}

fn ok(out: &Output) -> Result<(), Failed> {
    if out.status.success() {
        Ok(())
    } else {
        Err(format!("keyscene failed: {}", String::from_utf8_lossy(&out.stderr)).into())
    }
}

/// `dir/name` exists and holds the same bytes as `original`.
fn same_bytes(dir: &Path, name: &str, original: &Path) -> Result<(), Failed> {
    let copy =
        std::fs::read(dir.join(name)).map_err(|e| format!("{name} not beside the output: {e}"))?;
    let orig = std::fs::read(original).map_err(|e| format!("{}: {e}", original.display()))?;
    if copy != orig {
        return Err(format!("{name} differs from {}", original.display()).into());
    }
    Ok(())
}

/// The corpus images assimp/test1.3ds names (its materials' maps, as the folder holds them).
const TEST1_IMAGES: [&str; 3] = ["IMAGE1.jpg", "CWALL02.jpg", "IMAGE2.jpg"];

fn obj_textures(c: &Path) -> Result<(), Failed> {
    let dir = tempfile::tempdir()?;
    let src = c.join("3ds/assimp/test1.3ds");
    ok(&keyscene(&[Path::new("convert"), &src, &dir.path().join("t.obj")]))?;
    let mtl = std::fs::read_to_string(dir.path().join("t.mtl"))?;
    for img in TEST1_IMAGES {
        if !mtl.lines().any(|l| l == format!("map_Kd {img}")) {
            return Err(format!("t.mtl does not name {img}:\n{mtl}").into());
        }
        same_bytes(dir.path(), img, &c.join("3ds/assimp").join(img))?;
    }
    // Opt-out: nothing copied, the .mtl still names them.
    let none = tempfile::tempdir()?;
    let out = none.path().join("t.obj");
    ok(&keyscene(&[Path::new("convert"), &src, &out, Path::new("--no-copy-textures")]))?;
    for img in TEST1_IMAGES {
        if none.path().join(img).exists() {
            return Err(format!("--no-copy-textures copied {img}").into());
        }
    }
    Ok(())
}

fn three_da_textures(c: &Path) -> Result<(), Failed> {
    let dir = tempfile::tempdir()?;
    let src = c.join("3ds/assimp/test1.3ds");
    ok(&keyscene(&[Path::new("convert"), &src, &dir.path().join("t.3da")]))?;
    let mut named = Vec::new();
    for e in std::fs::read_dir(dir.path())? {
        let p = e?.path();
        if p.extension().is_some_and(|x| x == "mat") {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            if !name.starts_with("t_") {
                return Err(format!("script {name} is not prefixed with the model's name").into());
            }
            for l in std::fs::read_to_string(&p)?.lines() {
                if let Some(rest) = l.strip_prefix("Texture( \"") {
                    named.push(rest.split('"').next().unwrap().to_string());
                }
            }
        }
    }
    named.sort();
    let mut expected: Vec<String> = TEST1_IMAGES.iter().map(|s| s.to_string()).collect();
    expected.sort();
    if named != expected {
        return Err(format!("scripts name {named:?}, expected {expected:?}").into());
    }
    for img in TEST1_IMAGES {
        same_bytes(dir.path(), img, &c.join("3ds/assimp").join(img))?;
    }
    Ok(())
}

/// 3D Studio names images 8.3, upper case (`MAT_MAPNAME`): test1.3ds's `IMAGE1.jpg` travels as
/// `IMAGE1.JPG`, with the corpus image's bytes, and the written file names it so.
fn three_ds_textures(c: &Path) -> Result<(), Failed> {
    let dir = tempfile::tempdir()?;
    let src = c.join("3ds/assimp/test1.3ds");
    let out = dir.path().join("t.3ds");
    ok(&keyscene(&[Path::new("convert"), &src, &out]))?;
    let bytes = std::fs::read(&out)?;
    for img in TEST1_IMAGES {
        let dos = img.to_ascii_uppercase();
        same_bytes(dir.path(), &dos, &c.join("3ds/assimp").join(img))?;
        let named = format!("{dos}\0");
        if !bytes.windows(named.len()).any(|w| w == named.as_bytes()) {
            return Err(format!("t.3ds does not name {dos}").into());
        }
    }
    let none = tempfile::tempdir()?;
    let out = none.path().join("t.3ds");
    ok(&keyscene(&[Path::new("convert"), &src, &out, Path::new("--no-copy-textures")]))?;
    if std::fs::read_dir(none.path())?.count() != 1 {
        return Err("--no-copy-textures copied images beside t.3ds".into());
    }
    Ok(())
}

fn gltf_textures(c: &Path) -> Result<(), Failed> {
    let dir = tempfile::tempdir()?;
    let src = c.join("3ds/assimp/test1.3ds");
    let out = dir.path().join("t.gltf");
    ok(&keyscene(&[Path::new("convert"), &src, &out]))?;
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&out)?)?;
    let uris: Vec<&str> = json["images"]
        .as_array()
        .ok_or("no images")?
        .iter()
        .filter_map(|i| i["uri"].as_str())
        .collect();
    for img in TEST1_IMAGES {
        if !uris.contains(&img) {
            return Err(format!("no image uri {img}: {uris:?}").into());
        }
        same_bytes(dir.path(), img, &c.join("3ds/assimp").join(img))?;
    }
    Ok(())
}

/// Width and height of an uncompressed or RLE TGA (header bytes 12..16, little-endian; the
/// Truevision TGA 2.0 spec) and of a PNG (IHDR at 16..24, big-endian; PNG spec §11.2.2).
fn tga_size(b: &[u8]) -> (u32, u32) {
    (u32::from(u16::from_le_bytes([b[12], b[13]])), u32::from(u16::from_le_bytes([b[14], b[15]])))
}
fn png_size(b: &[u8]) -> Option<(u32, u32)> {
    if !b.starts_with(b"\x89PNG\r\n\x1a\n") {
        return None;
    }
    let be = |i: usize| u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
    Some((be(16), be(20)))
}

fn validator(files: &[PathBuf]) -> Result<(), Failed> {
    let modules = std::env::var("KEYSCENE_NODE_MODULES")
        .unwrap_or_else(|_| "/opt/keyscene-oracles/node/node_modules".into());
    if !Path::new(&modules).join("gltf-validator").is_dir() {
        eprintln!("gltf-validator not installed in {modules}: validation skipped");
        return Ok(());
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tools/validate_gltf.mjs");
    let out = Command::new("node")
        .arg(script)
        .args(files)
        .env("KEYSCENE_NODE_MODULES", &modules)
        .output()?;
    if !out.status.success() {
        return Err(format!("validator: {}", String::from_utf8_lossy(&out.stdout)).into());
    }
    Ok(())
}

fn tga_to_png(c: &Path) -> Result<(), Failed> {
    let dir = tempfile::tempdir()?;
    let src = c.join("3ds/ogre-lib3ds/cube.3ds");
    let out = dir.path().join("cube.gltf");
    let run = keyscene(&[Path::new("convert"), &src, &out]);
    ok(&run)?;
    let stderr = String::from_utf8_lossy(&run.stderr);
    if !stderr.contains("transcoded to PNG") {
        return Err(format!("no note of the transcoding: {stderr}").into());
    }
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&out)?)?;
    let uri = json["images"][0]["uri"].as_str().ok_or("no image uri")?;
    let png = std::fs::read(dir.path().join(uri))?;
    let tga = std::fs::read(c.join("3ds/ogre-lib3ds/cube.tga"))?;
    if png_size(&png) != Some(tga_size(&tga)) {
        return Err(format!("{uri}: {:?}, the TGA is {:?}", png_size(&png), tga_size(&tga)).into());
    }
    // claw.3DS's BMP into a self-contained GLB: an image/png in the buffer.
    let glb = dir.path().join("claw.glb");
    ok(&keyscene(&[Path::new("convert"), &c.join("3ds/blitz3d/claw.3DS"), &glb]))?;
    let bytes = std::fs::read(&glb)?;
    let len = u32::from_le_bytes(bytes[12..16].try_into()?) as usize;
    let json: serde_json::Value = serde_json::from_slice(&bytes[20..20 + len])?;
    if json["images"][0]["mimeType"] != "image/png" {
        return Err(format!("claw.glb images: {}", json["images"]).into());
    }
    validator(&[out, glb])
}

fn collision(c: &Path) -> Result<(), Failed> {
    let dir = tempfile::tempdir()?;
    let out = dir.path().join("x.3da");
    // Both 3ds Max files have a material "02 - Default" (their FBX text says so).
    let a = c.join("fbx/fbx-conv/3dsmax_animation.FBX");
    let b = c.join("fbx/fbx-conv/3dsmax_textured_bin.FBX");
    ok(&keyscene(&[Path::new("convert"), &a, &out]))?;
    let script = dir.path().join("x_02_-_Default.mat");
    let before = std::fs::read(&script).map_err(|e| format!("x_02_-_Default.mat: {e}"))?;
    // Re-running the same source replaces the model only on purpose (--force), and may then
    // overwrite its own scripts.
    let again = keyscene(&[Path::new("convert"), &a, &out]);
    if again.status.success() || !String::from_utf8_lossy(&again.stderr).contains("--force") {
        return Err("an existing output was replaced without --force".into());
    }
    ok(&keyscene(&[Path::new("convert"), &a, &out, Path::new("--force")]))?;
    // Another source's scripts are not replaced, --force or not.
    let second = keyscene(&[Path::new("convert"), &b, &out, Path::new("--force")]);
    if second.status.success() {
        return Err("a second source replaced the first one's script".into());
    }
    let msg = String::from_utf8_lossy(&second.stderr);
    for name in ["3dsmax_animation.FBX", "3dsmax_textured_bin.FBX", "x_02_-_Default.mat"] {
        if !msg.contains(name) {
            return Err(format!("the error does not name {name}: {msg}").into());
        }
    }
    if std::fs::read(&script)? != before {
        return Err("the first source's script was changed".into());
    }
    Ok(())
}

/// Every `.3da` of a batch over `fbx/fbx-conv` names scripts that hold its own source's
/// materials: the provenance line names the source, the header the material the source's
/// FBX `Material` objects are called (read back with keyscene's FBX reader).
fn batch_scripts(c: &Path) -> Result<(), Failed> {
    let dir = tempfile::tempdir()?;
    let input = c.join("fbx/fbx-conv");
    ok(&keyscene(&[
        Path::new("convert"),
        &input,
        dir.path(),
        Path::new("--to"),
        Path::new("3da"),
    ]))?;
    let mut checked = 0;
    for e in std::fs::read_dir(&input)? {
        let src = e?.path();
        if !src.extension().is_some_and(|x| x.eq_ignore_ascii_case("fbx")) {
            continue;
        }
        let model = dir.path().join(src.with_extension("3da").file_name().unwrap());
        let Ok(bytes) = std::fs::read(&model) else { continue };
        let (file, _) = keyscene::formats::three_da::read(&bytes, &Default::default())
            .map_err(|e| format!("{}: {e}", model.display()))?;
        let (scene, _) = keyscene::load(&src)?;
        let names: Vec<&str> = scene.materials.iter().map(|m| m.name.as_str()).collect();
        let canonical = src.canonicalize()?.display().to_string();
        for m in &file.materials {
            let script = keyscene::formats::three_da::layout::name_str(&m.name);
            let text = std::fs::read_to_string(dir.path().join(&script))
                .map_err(|e| format!("{}: {script}: {e}", model.display()))?;
            if !text.contains(&format!("from {canonical:?}")) {
                return Err(format!(
                    "{script} (of {}) was written from another source:\n{text}",
                    model.display()
                )
                .into());
            }
            let first = text.lines().next().unwrap_or("");
            let own = names.iter().any(|n| first.contains(&format!("material {n:?}")))
                || first.contains("polygons without a material");
            if !own {
                return Err(format!("{script}: {first:?} is none of {names:?}").into());
            }
            checked += 1;
        }
    }
    if checked == 0 {
        return Err("no script checked".into());
    }
    eprintln!("{checked} scripts hold their own model's materials");
    Ok(())
}

/// Every file under `dir` (recursively), relative to it, `/`-separated, but `skip`.
fn files_under(dir: &Path, rel: &Path, skip: &str, out: &mut Vec<String>) -> std::io::Result<()> {
    for e in std::fs::read_dir(dir.join(rel))? {
        let e = e?;
        let path = rel.join(e.file_name());
        if e.file_type()?.is_dir() {
            files_under(dir, &path, skip, out)?;
        } else {
            let name = path.to_string_lossy().replace('\\', "/");
            if name != skip {
                out.push(name);
            }
        }
    }
    Ok(())
}

/// Issue #17 §4: a batch's manifest line lists in `outputs` every file the conversion wrote,
/// the main output first: for assimp/test1.3ds (three textures beside it) into each output
/// format, the files in the output folder (walked on disk) are exactly the line's `outputs`;
/// a second run, skipping the file as up to date, lists the same files.
fn manifest_lists_every_output(c: &Path) -> Result<(), Failed> {
    let src = tempfile::tempdir()?;
    std::fs::copy(c.join("3ds/assimp/test1.3ds"), src.path().join("test1.3ds"))?;
    for img in TEST1_IMAGES {
        std::fs::copy(c.join("3ds/assimp").join(img), src.path().join(img))?;
    }
    for to in ["obj", "gltf", "glb", "3da", "fbx", "3ds", "usda", "usdz"] {
        let dir = tempfile::tempdir()?;
        let manifest = dir.path().join("m.jsonl");
        let run = || {
            keyscene(&[
                Path::new("convert"),
                src.path(),
                dir.path(),
                Path::new("--to"),
                Path::new(to),
                Path::new("--quiet"),
                Path::new("--manifest"),
                &manifest,
            ])
        };
        ok(&run())?;
        let mut on_disk = Vec::new();
        files_under(dir.path(), Path::new(""), "m.jsonl", &mut on_disk)?;
        on_disk.sort();
        let lines = |m: &Path| -> Result<Vec<serde_json::Value>, Failed> {
            let text = std::fs::read_to_string(m)?;
            Ok(text.lines().map(serde_json::from_str).collect::<Result<_, _>>()?)
        };
        let first = lines(&manifest)?;
        if first.len() != 1 {
            return Err(format!("{to}: {} manifest lines, expected 1", first.len()).into());
        }
        let outputs: Vec<String> = serde_json::from_value(first[0]["outputs"].clone())?;
        if outputs.first().map(String::as_str) != Some(format!("test1.{to}").as_str()) {
            return Err(
                format!("{to}: outputs do not start with the main output: {outputs:?}").into()
            );
        }
        let mut listed = outputs.clone();
        listed.sort();
        if listed != on_disk {
            return Err(format!("{to}: outputs {outputs:?}, the folder holds {on_disk:?}").into());
        }
        // The side files the issue names are there (so the check above is not vacuous).
        let side = outputs.len() - 1;
        let least = match to {
            "obj" => 1 + TEST1_IMAGES.len(),  // .mtl and the images
            "gltf" => 1 + TEST1_IMAGES.len(), // .bin and the images
            "3da" | "3ds" => TEST1_IMAGES.len(),
            _ => 0,
        };
        if side < least {
            return Err(format!("{to}: {side} files beside the output, at least {least}").into());
        }
        ok(&run())?;
        let second = lines(&manifest)?;
        if second.len() != 2 || second[1]["outcome"] != "skipped" {
            return Err(format!("{to}: the second run's line: {:?}", second.last()).into());
        }
        if second[1]["outputs"] != first[0]["outputs"] {
            return Err(format!(
                "{to}: skipped, outputs {} (first run {})",
                second[1]["outputs"], first[0]["outputs"]
            )
            .into());
        }
    }
    Ok(())
}

fn main() {
    let args = Arguments::from_args();
    let c = corpus();
    type Check = fn(&Path) -> Result<(), Failed>;
    let checks: [(&str, Check); 8] = [
        ("obj_copies_textures", obj_textures),
        ("three_da_copies_textures", three_da_textures),
        ("three_ds_copies_textures_under_8_3_names", three_ds_textures),
        ("gltf_copies_textures", gltf_textures),
        ("tga_and_bmp_become_png_for_gltf", tga_to_png),
        ("a_second_source_never_replaces_a_script", collision),
        ("batch_fbx_conv_scripts_hold_their_own_materials", batch_scripts),
        ("batch_manifest_lists_every_file_written", manifest_lists_every_output),
    ];
    let trials = checks
        .into_iter()
        .map(|(name, f)| {
            let c = c.clone();
            let ignored = c.is_none();
            Trial::test(name, move || match &c {
                Some(c) => f(c),
                None => Ok(()),
            })
            .with_ignored_flag(ignored)
        })
        .collect();
    libtest_mimic::run(&args, trials).exit();
}

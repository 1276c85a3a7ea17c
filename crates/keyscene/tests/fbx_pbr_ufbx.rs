//! Material PBR values against the `ufbx` crate (issue 33 §1): every corpus FBX material's
//! shading model and [`Pbr`] values equal ufbx's `ufbx_material.shader_type` and
//! `ufbx_material.pbr` maps.
//!
//! - Files: every corpus FBX file ufbx loads (default options but `use_blender_pbr_material`,
//!   the Blender rule keyscene always applies); the file list is the folder.
//!   The trial `models` checks that the corpus files named for each shading model (ufbx's test
//!   names in MANIFEST.md: `maya_arnold_*`, `max_physical_material_*`, `max_openpbr_*`,
//!   `maya_shaderfx_pbs_*`, `maya_osl_*`, `max_pbr_*`, `max_gltf_*`) are among the files whose
//!   materials read as that model, so a change on either side cannot empty the test, and
//!   prints the count per model.
//! - Materials: paired by name (the n-th of a name with the n-th), ufbx's names made valid UTF-8
//!   with U+FFFD skipped.
//! - Values: for each [`PbrProperty`], ufbx's map of the same name: `has_value`, the four
//!   components of `value_vec4` within 1e-6 relative to their magnitude (at least 1); the
//!   map: present where ufbx has an enabled texture (`texture_enabled`), its file name one of
//!   ufbx's raw file names of that texture (a layered texture: of its first file texture),
//!   also in files with 3ds Max shader textures (OSL maps such as `OSLBitmap2` behind an
//!   output selector, Arnold `ai_image`: the file ufbx finds through the shader graph).
//!
//! - Generated cases: every file of `tests/data/pbr/` (one small material per shading model,
//!   hand-built: Arnold through a `BindingTable`, 3ds Max Physical with its map switches and
//!   roughness-as-glossiness, OpenPBR's luminance, Stingray PBS's `TEX_`/`use_` maps, Phong
//!   shininess) is compared the same way, corpus or not.
//!
//! - OBJ: each generated case and each corpus file with a PBR material written as `.obj` +
//!   `.mtl` and read by ufbx (its `.mtl` reader, `ufbxi_obj_pbr_mapping`): `Pr` roughness,
//!   `Pm` metalness, `Ni` IOR and `Ke` emission (colour × factor) equal keyscene's values.
//!
//! - glTF: every `blender_*` corpus file and those named for a PBR model written as glTF:
//!   `metallicFactor` and `roughnessFactor` of each PBR material = ufbx's values (`check_gltf`).
//!
//! - FBX: the same files written as FBX (binary and ASCII) and read by ufbx: every PBR
//!   material has the shading model and values keyscene read from the source (the written
//!   file says the same to ufbx as the source did), its maps the same file names.
//!
//! Without a corpus the corpus trials are reported ignored.

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use keyscene::scene::{Material, PbrProperty, ShadingModel};

const TOLERANCE: f64 = 1e-6;

/// Our shading model for ufbx's shader type (`None`: one keyscene does not read from FBX).
fn model_of(t: ufbx::ShaderType) -> Option<ShadingModel> {
    use ufbx::ShaderType as T;
    Some(match t {
        T::Unknown => ShadingModel::Unknown,
        T::FbxLambert => ShadingModel::Lambert,
        T::FbxPhong => ShadingModel::Phong,
        T::OslStandardSurface => ShadingModel::OslStandardSurface,
        T::ArnoldStandardSurface => ShadingModel::ArnoldStandardSurface,
        T::E3DsMaxPhysicalMaterial => ShadingModel::MaxPhysical,
        T::E3DsMaxPbrMetalRough => ShadingModel::MaxPbrMetalRough,
        T::E3DsMaxPbrSpecGloss => ShadingModel::MaxPbrSpecGloss,
        T::GltfMaterial => ShadingModel::MaxGltf,
        T::OpenpbrMaterial => ShadingModel::OpenPbr,
        T::ShaderfxGraph => ShadingModel::StingrayPbs,
        T::BlenderPhong => ShadingModel::BlenderPhong,
        T::WavefrontMtl => return None,
    })
}

/// ufbx's map for one of our properties.
fn their_map(m: &ufbx::MaterialPbrMaps, p: PbrProperty) -> &ufbx::MaterialMap {
    use PbrProperty as P;
    match p {
        P::BaseFactor => &m.base_factor,
        P::BaseColor => &m.base_color,
        P::Roughness => &m.roughness,
        P::Metalness => &m.metalness,
        P::SpecularFactor => &m.specular_factor,
        P::SpecularColor => &m.specular_color,
        P::SpecularIor => &m.specular_ior,
        P::TransmissionFactor => &m.transmission_factor,
        P::TransmissionColor => &m.transmission_color,
        P::SheenFactor => &m.sheen_factor,
        P::SheenColor => &m.sheen_color,
        P::SheenRoughness => &m.sheen_roughness,
        P::CoatFactor => &m.coat_factor,
        P::CoatColor => &m.coat_color,
        P::CoatRoughness => &m.coat_roughness,
        P::CoatNormal => &m.coat_normal,
        P::EmissionFactor => &m.emission_factor,
        P::EmissionColor => &m.emission_color,
        P::Opacity => &m.opacity,
        P::NormalMap => &m.normal_map,
        P::AmbientOcclusion => &m.ambient_occlusion,
        P::Glossiness => &m.glossiness,
        P::CoatGlossiness => &m.coat_glossiness,
    }
}

/// The raw file names ufbx has for a texture (a layered one: its first file texture's).
fn their_files(t: &ufbx::Texture) -> Vec<Vec<u8>> {
    let t = match t.file_textures.first() {
        Some(f) if t.type_ == ufbx::TextureType::Layered => f,
        _ => t,
    };
    let mut out: Vec<Vec<u8>> =
        [&t.raw_relative_filename, &t.raw_absolute_filename, &t.raw_filename]
            .iter()
            .map(|b| b.to_vec())
            .collect();
    // keyscene makes invalid UTF-8 valid as ufbx's sanitised names do.
    out.extend(
        [&t.relative_filename, &t.absolute_filename, &t.filename].map(|s| s.as_bytes().to_vec()),
    );
    out
}

/// Compares one material; the number of values compared. `maps`: compare the maps too (files
/// without 3ds Max shader textures, module docs).
fn compare(ours: &Material, theirs: &ufbx::Material, maps: bool) -> Result<usize, String> {
    let name = &ours.name;
    let Some(pbr) = &ours.pbr else { return Err(format!("material {name:?}: no PBR values")) };
    let want_model = model_of(theirs.shader_type);
    if want_model != Some(pbr.model) {
        return Err(format!(
            "material {name:?}: shading model {:?}, ufbx {:?}",
            pbr.model, theirs.shader_type
        ));
    }
    let mut compared = 0;
    for p in PbrProperty::ALL {
        let ours_v = pbr.get(p);
        let want = their_map(&theirs.pbr, p);
        let w = want.value_vec4;
        let want_v = [w.x, w.y, w.z, w.w];
        let got = ours_v.value.to_array().map(f64::from);
        let close =
            got.iter().zip(want_v).all(|(g, w)| (g - w).abs() <= TOLERANCE * w.abs().max(1.0));
        if ours_v.has_value != want.has_value || !close {
            return Err(format!(
                "material {name:?} ({:?}) {}: keyscene {got:?} stored {}, ufbx {want_v:?} stored {}",
                pbr.model,
                p.name(),
                ours_v.has_value,
                want.has_value
            ));
        }
        let want_tex = want.texture.as_ref().filter(|_| want.texture_enabled);
        if !maps {
            compared += 1;
            continue;
        }
        match (&ours_v.texture, want_tex) {
            (None, None) => {}
            (Some(t), Some(w)) => {
                let files = their_files(w);
                if !files.iter().any(|f| f[..] == *t.file.as_bytes()) {
                    return Err(format!(
                        "material {name:?} {}: map {:?}, ufbx's {:?}",
                        p.name(),
                        t.file,
                        files.iter().map(|f| String::from_utf8_lossy(f)).collect::<Vec<_>>()
                    ));
                }
            }
            (a, b) => {
                return Err(format!(
                    "material {name:?} {}: map {:?}, ufbx {:?}",
                    p.name(),
                    a.as_ref().map(|t| &t.file),
                    b.map(|t| t.element.name.to_string())
                ))
            }
        }
        compared += 1;
    }
    Ok(compared)
}

/// ufbx's options here: Blender's Principled BSDF read as such (`use_blender_pbr_material`,
/// which keyscene always applies, docs/materials.md).
fn blender_opts() -> ufbx::LoadOpts<'static> {
    ufbx::LoadOpts { use_blender_pbr_material: true, ..Default::default() }
}

/// `path` loaded by keyscene and by ufbx with [`blender_opts`].
fn load_both(path: &Path) -> Result<(keyscene::scene::Scene, ufbx::SceneRoot), String> {
    common::ufbx_corpus::load_both_with(path, blender_opts())
}

/// A Blender Principled BSDF written back (`export/pbr.rs`): Blender's Phong layout under
/// keyscene's `Creator`, so ufbx reads it as Phong. Read so, it must say what ufbx's Blender
/// table says of the source: the same base colour, roughness (both `1 − √ShininessExponent ÷
/// 10`) and emission (colour × factor), transmission factor (`TransparencyFactor`) 1 − the
/// opacity, and `ReflectionFactor` the metalness.
fn compare_blender(path: &Path, ours: &Material, written: &ufbx::Material) -> Result<(), String> {
    let name = &ours.name;
    let bytes = std::fs::read(path).map_err(|e| e.to_string())?;
    let source = ufbx::load_memory(&bytes, blender_opts())
        .map_err(|e| format!("ufbx: {:?}", e.description))?;
    let Some(src) = source.materials.iter().find(|m| m.element.name == name.as_str()) else {
        return Err(format!("ufbx has no source material {name:?}"));
    };
    if written.shader_type != ufbx::ShaderType::FbxPhong {
        return Err(format!("material {name:?} written as {:?}", written.shader_type));
    }
    let (s, w) = (&src.pbr, &written.pbr);
    let emission = |m: &ufbx::MaterialPbrMaps| {
        let c = m.emission_color.value_vec4;
        let f = m.emission_factor.value_vec4.x;
        [c.x * f, c.y * f, c.z * f]
    };
    let rgb = |m: &ufbx::MaterialMap| [m.value_vec4.x, m.value_vec4.y, m.value_vec4.z];
    let reflection = written.element.props.find_prop("ReflectionFactor");
    let pairs: [(&str, Vec<f64>, Vec<f64>); 5] = [
        ("base colour", rgb(&w.base_color).to_vec(), rgb(&s.base_color).to_vec()),
        ("roughness", vec![w.roughness.value_vec4.x], vec![s.roughness.value_vec4.x]),
        ("emission", emission(w).to_vec(), emission(s).to_vec()),
        (
            "1 − TransparencyFactor",
            vec![1.0 - w.transmission_factor.value_vec4.x],
            vec![s.opacity.value_vec4.x],
        ),
        (
            "ReflectionFactor",
            vec![reflection.map_or(0.0, |p| p.value_vec4.x)],
            vec![s.metalness.value_vec4.x],
        ),
    ];
    for (what, got, want) in pairs {
        if got.iter().zip(&want).any(|(g, x)| (g - x).abs() > TOLERANCE * x.abs().max(1.0)) {
            return Err(format!("material {name:?} {what}: written {got:?}, source {want:?}"));
        }
    }
    Ok(())
}

/// Compares every material of `path`; the shading models met.
fn check(path: &Path) -> Result<Vec<ShadingModel>, String> {
    let (scene, theirs) = load_both(path)?;
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut models = Vec::new();
    for m in theirs.materials.iter() {
        let name = m.element.name.to_string();
        if name.contains('\u{FFFD}') {
            continue;
        }
        let k = seen.entry(name.clone()).or_default();
        let Some(ours) = scene.materials.iter().filter(|o| o.name == name).nth(*k) else {
            return Err(format!("no keyscene material {name:?} (#{k})"));
        };
        *k += 1;
        compare(ours, m, true)?;
        models.extend(ours.pbr.as_ref().map(|p| p.model));
    }
    Ok(models)
}

/// Writes `path`'s scene as OBJ and compares ufbx's reading of the `.mtl`'s PBR keys with
/// keyscene's values (module docs); the number of materials compared.
fn check_obj(path: &Path) -> Result<usize, String> {
    use PbrProperty as P;
    let (scene, _) = keyscene::load(path).map_err(|e| e.to_string())?;
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let obj = dir.path().join("out.obj");
    let opts = keyscene::formats::obj::SaveOptions { copy_textures: false, source: None };
    keyscene::formats::obj::save(&scene, None, &obj, &opts).map_err(|e| e.to_string())?;
    let load = ufbx::LoadOpts { load_external_files: true, ..Default::default() };
    let theirs = ufbx::load_file(obj.to_str().unwrap_or_default(), load)
        .map_err(|e| format!("ufbx: {:?}", e.description))?;
    let mut compared = 0;
    for ours in &scene.materials {
        let Some(pbr) = ours.pbr.as_ref().filter(|p| p.model.is_pbr()) else { continue };
        // The OBJ writer makes names safe (spaces to `_`…): compare the letters and digits.
        let key = |n: &str| n.chars().filter(|c| c.is_alphanumeric()).collect::<String>();
        let Some(m) = theirs.materials.iter().find(|m| key(&m.element.name) == key(&ours.name))
        else {
            continue;
        };
        let want = |p: P| their_map(&m.pbr, p);
        let mut pairs = vec![
            ("Pr", pbr.get(P::Roughness).scalar(), want(P::Roughness).value_vec4.x),
            ("Pm", pbr.get(P::Metalness).scalar(), want(P::Metalness).value_vec4.x),
        ];
        if pbr.get(P::SpecularIor).has_value {
            pairs.push(("Ni", pbr.get(P::SpecularIor).scalar(), want(P::SpecularIor).value_vec4.x));
        }
        let e = pbr.emission();
        let ke = want(P::EmissionColor).value_vec4;
        if pbr.get(P::EmissionColor).has_value {
            pairs.extend([("Ke.r", e.x, ke.x), ("Ke.g", e.y, ke.y), ("Ke.b", e.z, ke.z)]);
        }
        for (key, got, want) in pairs {
            let got = f64::from(got);
            if (got - want).abs() > 1e-5 * want.abs().max(1.0) {
                return Err(format!("material {:?} {key}: keyscene {got}, ufbx {want}", ours.name));
            }
        }
        compared += 1;
    }
    Ok(compared)
}

/// Writes `path`'s scene as FBX (ASCII when `ascii`) and compares ufbx's reading of every PBR
/// material with keyscene's values from the source (module docs); the number compared.
fn check_fbx(path: &Path, ascii: bool) -> Result<usize, String> {
    let (scene, _) = keyscene::load(path).map_err(|e| e.to_string())?;
    let mut opts = keyscene::formats::fbx::export::WriteOptions::default();
    opts.ascii = ascii;
    let (bytes, _) =
        keyscene::formats::fbx::export::write(&scene, &opts).map_err(|e| e.to_string())?;
    let theirs = ufbx::load_memory(&bytes, ufbx::LoadOpts::default())
        .map_err(|e| format!("ufbx: {:?}", e.description))?;
    let mut compared = 0;
    for ours in &scene.materials {
        if !ours.pbr.as_ref().is_some_and(|p| p.model.is_pbr()) {
            continue;
        }
        let Some(m) = theirs.materials.iter().find(|m| m.element.name == ours.name.as_str()) else {
            continue;
        };
        if ours.pbr.as_ref().is_some_and(|p| p.model == ShadingModel::BlenderPhong) {
            compare_blender(path, ours, m).map_err(|e| format!("written back: {e}"))?;
        } else {
            compare(ours, m, true).map_err(|e| format!("written back: {e}"))?;
        }
        compared += 1;
    }
    Ok(compared)
}

/// Writes `path`'s scene as glTF (JSON, no animation) and compares each PBR material's
/// `metallicFactor` and `roughnessFactor` with ufbx's metalness and roughness clamped to 0–1
/// (1 where ufbx has an enabled map and the glTF material a `metallicRoughnessTexture`: glTF
/// multiplies map and factor; a map the writer could not carry leaves the value, docs/gltf.md);
/// the number of materials compared.
fn check_gltf(path: &Path) -> Result<usize, String> {
    let (scene, theirs) = load_both(path)?;
    let mut opts = keyscene::formats::gltf::WriteOptions::default();
    opts.container = keyscene::formats::gltf::Container::Gltf { bin_uri: "x.bin".into() };
    opts.animations = false;
    opts.copy_textures = false;
    let file = keyscene::formats::gltf::write(&scene, &opts).map_err(|e| e.to_string())?;
    let json: serde_json::Value = serde_json::from_slice(&file.main).map_err(|e| e.to_string())?;
    let written = json["materials"].as_array().cloned().unwrap_or_default();
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut compared = 0;
    for m in theirs.materials.iter() {
        let name = m.element.name.to_string();
        let k = seen.entry(name.clone()).or_default();
        let nth = *k;
        *k += 1;
        let Some(ours) = scene.materials.iter().filter(|o| o.name == name).nth(nth) else {
            continue;
        };
        if !ours.pbr.as_ref().is_some_and(|p| p.model.is_pbr()) {
            continue;
        }
        let Some(g) = written.iter().filter(|g| g["name"] == name.as_str()).nth(nth) else {
            return Err(format!("glTF has no material {name:?}"));
        };
        let mr = &g["pbrMetallicRoughness"];
        let textured = mr.get("metallicRoughnessTexture").is_some();
        let factor = |map: &ufbx::MaterialMap| {
            let x = map.value_vec4.x;
            if textured && map.texture_enabled && map.texture.is_some() {
                1.0
            } else if x.is_finite() {
                x.clamp(0.0, 1.0)
            } else {
                0.0
            }
        };
        for (key, want) in [
            ("metallicFactor", factor(&m.pbr.metalness)),
            ("roughnessFactor", factor(&m.pbr.roughness)),
        ] {
            let got = mr[key].as_f64().unwrap_or(1.0);
            if (got - want).abs() > 1e-6 {
                return Err(format!("material {name:?} {key}: glTF {got}, ufbx {want}"));
            }
        }
        compared += 1;
    }
    Ok(compared)
}

/// The corpus file name prefixes that must read as each PBR model.
const NAMED: &[(&str, ShadingModel)] = &[
    ("ufbx/maya_arnold_", ShadingModel::ArnoldStandardSurface),
    ("ufbx/maya_osl_", ShadingModel::OslStandardSurface),
    ("ufbx/max_physical_material_", ShadingModel::MaxPhysical),
    ("ufbx/max_openpbr_", ShadingModel::OpenPbr),
    ("ufbx/maya_shaderfx_pbs_", ShadingModel::StingrayPbs),
    ("ufbx/max_pbr_metal_rough", ShadingModel::MaxPbrMetalRough),
    ("ufbx/max_pbr_spec_gloss", ShadingModel::MaxPbrSpecGloss),
    ("ufbx/max_gltf_material", ShadingModel::MaxGltf),
    ("ufbx/blender_402_material_chart", ShadingModel::BlenderPhong),
];

fn main() {
    let args = libtest_mimic::Arguments::from_args();
    let corpus = common::corpus();
    let files: Vec<_> =
        common::ufbx_corpus::fbx_files(&corpus).into_iter().filter(|f| f.ufbx_loads).collect();
    let paths: Vec<(String, std::path::PathBuf)> =
        files.iter().map(|f| (f.rel.clone(), f.path.clone())).collect();
    let mut trials = vec![common::corpus_trial("models", &corpus, move |_| {
        let mut count: BTreeMap<&str, usize> = BTreeMap::new();
        for (rel, path) in &paths {
            let models = check(path).unwrap_or_default();
            for m in &models {
                *count.entry(m.name()).or_default() += 1;
            }
            for (prefix, want) in NAMED {
                if rel.starts_with(prefix) && !models.contains(want) {
                    return Err(format!("{rel}: no material read as {}", want.name()).into());
                }
            }
        }
        eprintln!("materials per shading model: {count:?}");
        Ok(())
    })];
    let generated = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/pbr");
    let mut cases: Vec<_> = std::fs::read_dir(&generated)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    cases.sort();
    for path in cases {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        // The Phong case has no PBR material to write back.
        let phong = name.contains("phong");
        let need = move |n: usize| -> Result<(), libtest_mimic::Failed> {
            match n {
                0 if !phong => Err("no PBR material compared".into()),
                _ => Ok(()),
            }
        };
        for ascii in [false, true] {
            let (p3, n) = (path.clone(), format!("fbx::generated::{name}::ascii={ascii}"));
            trials.push(libtest_mimic::Trial::test(n, move || need(check_fbx(&p3, ascii)?)));
        }
        let p2 = path.clone();
        trials.push(libtest_mimic::Trial::test(format!("obj::generated::{name}"), move || {
            need(check_obj(&p2)?)
        }));
        trials.push(libtest_mimic::Trial::test(format!("generated::{name}"), move || {
            let models = check(&path)?;
            if models.is_empty() {
                return Err(format!("{name}: no material compared").into());
            }
            Ok(())
        }));
    }
    for file in files.iter().filter(|f| NAMED.iter().any(|(p, _)| f.rel.starts_with(p))) {
        let (rel, path) = (file.rel.clone(), file.path.clone());
        trials.push(common::corpus_trial(
            format!("obj::{rel}"),
            &corpus,
            move |_| match check_obj(&path)? {
                0 => Err("no PBR material compared".into()),
                _ => Ok(()),
            },
        ));
    }
    for file in files.iter().filter(|f| {
        f.rel.starts_with("ufbx/blender_") || NAMED.iter().any(|(p, _)| f.rel.starts_with(p))
    }) {
        let (rel, path) = (file.rel.clone(), file.path.clone());
        trials.push(common::corpus_trial(format!("gltf::{rel}"), &corpus, move |_| {
            check_gltf(&path).map(|_| ()).map_err(Into::into)
        }));
    }
    for file in files {
        let rel = file.rel.clone();
        trials.push(common::corpus_trial(format!("pbr::{rel}"), &corpus, move |_| {
            check(&file.path).map(|_| ()).map_err(Into::into)
        }));
    }
    libtest_mimic::run(&args, trials).exit();
}

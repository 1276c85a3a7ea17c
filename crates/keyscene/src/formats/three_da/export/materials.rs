//! The material table and the material scripts beside the `.3da` (docs/3da.md, "Material
//! scripts"): scene materials in first-use order, `default.mat` for polygons without one.

use std::collections::HashMap;

use glam::Vec3;

use super::names::cut;
use super::{ExportReport, MaterialScript};
use crate::formats::three_da::layout::{self, Material as MatRecord, NAME_LEN};
use crate::output::TexturePlan;
use crate::quoting::quoted;
use crate::scene::{Material, Scene, TextureMap};

/// The material table being built: scene materials in first-use order, plus `default.mat`
/// for polygons without one.
pub(super) struct Materials<'a> {
    scene: &'a Scene,
    /// Scene material (or `None` for the default) → table index.
    index: HashMap<Option<usize>, usize>,
    used: Vec<Option<usize>>,
}

impl<'a> Materials<'a> {
    pub(super) fn new(scene: &'a Scene) -> Self {
        Materials { scene, index: HashMap::new(), used: Vec::new() }
    }

    pub(super) fn get(&mut self, m: Option<usize>) -> usize {
        let m = m.filter(|&m| m < self.scene.materials.len());
        *self.index.entry(m).or_insert_with(|| {
            self.used.push(m);
            self.used.len() - 1
        })
    }

    /// The table and one script per entry. Script names ([`script_file_name`]): the model
    /// and material names joined, cut to 27 bytes, `.mat` appended, made unique
    /// case-insensitively (Windows file names) with `~N`. Map names are the texture plan's
    /// (the files copied beside the output); `source` goes into each script's provenance
    /// comment.
    pub(super) fn finish(
        self,
        model: Option<&str>,
        source: Option<&str>,
        textures: &TexturePlan,
        report: &mut ExportReport,
    ) -> (Vec<MatRecord>, Vec<MaterialScript>) {
        let mut taken = std::collections::HashSet::new();
        let mut table = Vec::new();
        let mut scripts = Vec::new();
        for m in self.used {
            let src = m.map(|i| &self.scene.materials[i]);
            let material =
                src.map(|s| s.name.as_str()).filter(|s| !s.is_empty()).unwrap_or("default");
            let file_name = script_file_name(&script_base(model, material), &mut taken);
            let (rec, text) = match src {
                Some(s) => {
                    let mi = m.unwrap_or_default();
                    scene_material(s, mi, &file_name, source, textures, report)
                }
                None => default_material(&file_name, source, report),
            };
            table.push(rec);
            scripts.push(MaterialScript { file_name, text });
        }
        (table, scripts)
    }
}

/// `base` cut to 27 bytes with `.mat` appended, or with `~N` before it when a name in
/// `taken` (lower-case) already has it; the name is added to `taken`.
fn script_file_name(base: &str, taken: &mut std::collections::HashSet<String>) -> String {
    let stem = cut(base, 27).to_string();
    let mut file_name = format!("{stem}.mat");
    let mut k = 1;
    while !taken.insert(file_name.to_ascii_lowercase()) {
        let suffix = format!("~{k}");
        file_name = format!("{}{suffix}.mat", cut(base, 27 - suffix.len()));
        k += 1;
    }
    file_name
}

/// The table record and script text of scene material `s` (scene index `mi`), written as
/// `file_name`: colours ([`colours`]), up to four maps ([`maps`]), two-sidedness.
fn scene_material(
    s: &Material,
    mi: usize,
    file_name: &str,
    source: Option<&str>,
    textures: &TexturePlan,
    report: &mut ExportReport,
) -> (MatRecord, String) {
    let mut rec = MatRecord { name: layout::make_name(file_name), ..MatRecord::default() };
    colours(s, &mut rec, report);
    if let Some(pbr) = &s.pbr {
        let lost = pbr.phong_losses();
        if !lost.is_empty() {
            report.warnings.push(format!(
                "material {} ({}): written as its closest Phong values; not carried: {}",
                quoted(&s.name),
                pbr.model.name(),
                lost.join(", ")
            ));
        }
    }
    let maps = maps(s, mi, textures, &mut rec, report);
    let mut text = String::new();
    text.push_str(&format!("// {file_name}: material {}, written by keyscene\n", quoted(&s.name)));
    if let Some(source) = source {
        text.push_str(&crate::output::provenance_line(source));
    }
    let col = |c: [f32; 4]| format!("{} {} {} {}", c[0], c[1], c[2], c[3]);
    text.push_str(&format!("Ambient( \"{}\" ) // RGBA 0-1\n", col(rec.ambient)));
    text.push_str(&format!("Diffuse( \"{}\" ) // RGBA 0-1\n", col(rec.diffuse)));
    text.push_str(&format!("Specular( \"{}\" ) // RGBA 0-1\n", col(rec.specular)));
    text.push_str(&format!("Emissive( \"{}\" ) // RGBA 0-1\n", col(rec.emissive)));
    text.push_str(&format!("SpecularPower( \"{}\" ) // 0-100\n", rec.specular_pow));
    if s.two_sided {
        text.push_str("TwoSided( \"1\" ) // draw both sides\n");
    }
    for (map, file) in &maps {
        text.push_str(&format!(
            "Texture( \"{}\" ) // {} map, UV channel 0\n",
            file.replace('"', "_"),
            map.slot.name()
        ));
    }
    report.converted.push(format!("material {} → {file_name}", quoted(&s.name)));
    (rec, text)
}

/// The record's colours and specular power from `s`, alpha `1 − transparency`. Colours are
/// 0..1 in 3DA; values outside (a decimal-comma exporter's 588235300000000, inf/NaN) are
/// clamped with a warning, never silently.
fn colours(s: &Material, rec: &mut MatRecord, report: &mut ExportReport) {
    let clamped = std::cell::Cell::new(false);
    let rgba = |c: Vec3, a: f32| {
        [c.x, c.y, c.z, a].map(|x| {
            let y = if x.is_finite() { x.clamp(0.0, 1.0) } else { 0.0 };
            clamped.set(clamped.get() | (y != x));
            y
        })
    };
    let alpha = 1.0 - s.transparency;
    rec.ambient = rgba(s.effective_ambient(), alpha);
    rec.diffuse = rgba(s.effective_diffuse(), alpha);
    rec.specular = rgba(s.specular, alpha);
    rec.emissive = rgba(s.effective_diffuse() * s.self_illumination, alpha);
    rec.specular_pow = s.shininess * 100.0;
    if clamped.get() {
        report.warnings.push(format!(
            "material {}: colours outside 0..1 (ambient {}, diffuse {}, \
             specular {}) clamped to 0..1, non-finite components to 0",
            quoted(&s.name),
            s.effective_ambient(),
            s.effective_diffuse(),
            s.specular
        ));
    }
}

/// The maps of `s` (scene index `mi`) that have a file, at most [`layout::MAP_CHANNELS`],
/// with their names, written into the record (names past 31 bytes cut, warned). An empty
/// file name is no map (3DS materials such as blitz3d/house.3ds's "BEIGE MATTE" carry one):
/// writing it would give `Texture( "" )`. Map names: the files beside the output (the
/// texture plan's names).
fn maps<'a>(
    s: &'a Material,
    mi: usize,
    textures: &'a TexturePlan,
    rec: &mut MatRecord,
    report: &mut ExportReport,
) -> Vec<(&'a TextureMap, &'a str)> {
    let maps: Vec<(&TextureMap, &str)> = s
        .maps
        .iter()
        .enumerate()
        .filter_map(|(k, map)| textures.name(mi, k).map(|n| (map, n)))
        .take(layout::MAP_CHANNELS)
        .collect();
    for (c, (_, file)) in maps.iter().enumerate() {
        if file.len() >= NAME_LEN {
            report.warnings.push(format!(
                "material {}: map name {} cut to 31 bytes in the table (the script keeps it whole)",
                quoted(&s.name),
                quoted(file)
            ));
        }
        rec.map_name[c] = layout::make_name(file);
        rec.map_channel[c] = 0;
    }
    rec.num_maps = maps.len() as i32;
    maps
}

/// The record and script of `default.mat`, for polygons without a material (diffuse 0.8
/// grey), with a warning naming it.
fn default_material(
    file_name: &str,
    source: Option<&str>,
    report: &mut ExportReport,
) -> (MatRecord, String) {
    let mut rec = MatRecord { name: layout::make_name(file_name), ..MatRecord::default() };
    rec.diffuse = [0.8, 0.8, 0.8, 1.0];
    let mut text = format!("// {file_name}: polygons without a material, written by keyscene\n");
    if let Some(source) = source {
        text.push_str(&crate::output::provenance_line(source));
    }
    text.push_str("Diffuse( \"0.8 0.8 0.8 1\" ) // RGBA 0-1\n");
    report.warnings.push(format!("polygons without a material use {file_name}"));
    (rec, text)
}

/// A script's file stem before it is cut to 27 bytes and made unique (docs/3da.md, "Material
/// scripts"): `<model>_<material>`, each with characters outside `[A-Za-z0-9_.-]` replaced by
/// `_`. When that passes 27 bytes and the model part is longer than 11 bytes, the model part
/// becomes its first 6 bytes, `~` and 4 hex digits of a hash of the whole model name
/// ([`crate::output::short_hash`]), so models that share a long prefix still differ. No model
/// (`None`): the material alone.
fn script_base(model: Option<&str>, material: &str) -> String {
    let clean = |s: &str| -> String {
        s.chars()
            .map(|c| if c.is_ascii_alphanumeric() || "_.-".contains(c) { c } else { '_' })
            .collect()
    };
    let material = clean(material);
    let Some(model) = model.filter(|m| !m.is_empty()) else { return material };
    let model = clean(model);
    if model.len() + 1 + material.len() <= 27 || model.len() <= 11 {
        return format!("{model}_{material}");
    }
    format!("{}~{}_{material}", cut(&model, 6), crate::output::short_hash(&model))
}

#[cfg(test)]
mod tests {
    use super::super::tests::triangle_scene;
    use super::super::{export, ExportOptions};
    use super::*;

    #[test]
    fn script_names_carry_the_model_and_shorten_long_models_with_a_hash() {
        assert_eq!(script_base(None, "Stone"), "Stone");
        assert_eq!(script_base(Some("fly"), "default"), "fly_default");
        assert_eq!(script_base(Some("a b"), "02 - Default"), "a_b_02_-_Default");
        // 19 + 1 + 10 bytes > 27: the model becomes 6 bytes, `~` and FNV-1a-32 of
        // "softimage_cube_anim" (0x6a74139e, computed outside keyscene with the FNV reference
        // constants) folded to 16 bits: 0x6a74 ^ 0x139e = 0x79ea.
        assert_eq!(
            script_base(Some("softimage_cube_anim"), "Material_1"),
            "softim~79ea_Material_1"
        );
        // A model of at most 11 bytes is kept whole; the caller cuts the material.
        assert_eq!(
            script_base(Some("short_model"), "a_very_long_material_name"),
            "short_model_a_very_long_material_name"
        );
    }

    #[test]
    fn material_colours_outside_0_1_are_clamped_with_a_warning() {
        let mut s = triangle_scene();
        s.materials[0].diffuse = Vec3::new(588_235_300_000_000.0, 0.5, f32::NAN);
        let (file, _, report) = export(&s, &ExportOptions::default()).unwrap();
        let m = file.materials.iter().find(|m| m.diffuse[1] == 0.5).unwrap();
        assert_eq!(m.diffuse, [1.0, 0.5, 0.0, 1.0]);
        assert!(
            report.warnings.iter().any(|w| w.contains("\"Red Stone\": colours outside 0..1")),
            "{:?}",
            report.warnings
        );
        // Sane colours give no warning.
        let (_, _, report) = export(&triangle_scene(), &ExportOptions::default()).unwrap();
        assert!(!report.warnings.iter().any(|w| w.contains("outside 0..1")));
    }
}

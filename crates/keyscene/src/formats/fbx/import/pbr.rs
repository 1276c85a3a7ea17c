//! A material's [`Pbr`] description, read per shading model as ufbx reads its
//! `ufbx_material.pbr` (ufbx.c `ufbxi_fetch_maps` with the tables of
//! `ufbxi_shader_pbr_mappings`; docs/materials.md lists them).
//!
//! - **Shading model** (ufbx `ufbxi_finalize_scene`): the `ShadingModel` record `lambert`/
//!   `Lambert` or `phong`/`Phong`; an `Implementation` the material is connected to decides
//!   instead, by its `RenderAPI` (`ARNOLD_SHADER_ID` Arnold `aiStandardSurface`, `OSL`
//!   `standardSurface`, `SFX_PBS_SHADER` Stingray PBS, anything else unknown); without one, the
//!   3ds Max class id (`3dsMax|ClassIDa`/`b`) names the Physical, OpenPBR, glTF and PBR
//!   materials, whose properties carry a prefix (`3dsMax|Parameters|`, `3dsMax|`,
//!   `3dsMax|main|`).
//! - **Names**: with an `Implementation`, a table name is the shader's property; the
//!   `BindingTable`s under it (`Entry: "Maya|baseColor", "FbxPropertyEntry", "baseColor",
//!   "FbxSemanticEntry"`) name the material properties holding it (ufbx
//!   `ufbx_find_shader_prop_bindings`: the first table that binds it, all its entries);
//!   unbound names are read as they are.
//! - **Values**: each table entry read in order, a later one found replacing an earlier one:
//!   the property's numbers (up to four), W set to 1 unless four are stored (colours),
//!   widened to RGB from one number (opacity), multiplied into the value (OpenPBR
//!   `emission_luminance`), Phong shininess made roughness `1 − √s ÷ 10` (ufbx
//!   `ufbxi_mat_transform_unknown_shininess`). `Reference` properties hold no value.
//! - **Maps**: the first texture connected to the property (`ufbx_find_prop_texture`); 3ds
//!   Max models look at `<name>_map` first and drop the map when `<name>_map_on` is 0,
//!   ShaderFX at `TEX_<name>_map` and `use_<name>_map`.
//! - Then the factors ufbx derives (`ufbxi_update_factor`) and the roughness/glossiness
//!   switches (`roughness_inv`, `coat_roughness_inv`, `useGlossiness`).
//!
//! Blender's Principled BSDF reaches FBX as a Phong material (`DiffuseColor` base colour,
//! `ReflectionFactor` metalness, `Shininess` from roughness…): in a file Blender's binary
//! exporter wrote (add-on 4.12, Blender 2.80, or later) every material is read by ufbx's Blender
//! table ([`ShadingModel::BlenderPhong`]), whatever its `ShadingModel` record says, as ufbx does
//! with `use_blender_pbr_material` — on by default here, as Blender's own importer reads such
//! files (docs/materials.md says why).

use glam::Vec4;

use super::super::objects::{ConnectionKind, Object};
use super::super::shading::{model, Bindings, INVERT, MAX_CLASSES, MUL, SHININESS, W1, WIDEN};
use super::Importer;
use crate::scene::{MapSlot, Material, Pbr, PbrProperty as P, ShadingModel, TextureChannel};

/// The slot a PBR map has among the Phong maps ([`MapSlot`]), for writers that know only
/// those: base colour → diffuse, specular → specular, roughness and glossiness → shininess,
/// opacity → opacity, normal maps → bump, emission → emissive, the rest (metalness,
/// transmission, sheen, coat, occlusion) → reflection.
fn phong_slot(p: P) -> MapSlot {
    match p {
        P::BaseColor | P::BaseFactor => MapSlot::Diffuse,
        P::SpecularColor | P::SpecularFactor => MapSlot::Specular,
        P::Roughness | P::Glossiness => MapSlot::Shininess,
        P::Opacity => MapSlot::Opacity,
        P::NormalMap | P::CoatNormal => MapSlot::Bump,
        P::EmissionColor | P::EmissionFactor => MapSlot::Emissive,
        _ => MapSlot::Reflection,
    }
}

impl<'g, 'd, 'a> Importer<'g, 'd, 'a> {
    /// The shading model of material `obj` and the bindings of its `Implementation` (`None`
    /// without one), as ufbx's `ufbxi_finalize_scene` finds them.
    fn shading_model(&self, obj: &Object<'d, 'a>) -> (ShadingModel, Option<Vec<Bindings<'d>>>) {
        let g = self.graph;
        let shader = g
            .parents(obj.id)
            .filter_map(|c| g.object(c.parent))
            .find(|o| o.class == "Implementation");
        if let Some(shader) = shader {
            let model = match g.get_str(shader.id, "RenderAPI", "") {
                "ARNOLD_SHADER_ID" => ShadingModel::ArnoldStandardSurface,
                "OSL" => ShadingModel::OslStandardSurface,
                "SFX_PBS_SHADER" => ShadingModel::StingrayPbs,
                _ => ShadingModel::Unknown,
            };
            let tables = g
                .children(shader.id)
                .filter_map(|c| g.object(c.child))
                .filter(|o| o.class == "BindingTable")
                .map(|t| binding_table(t))
                .collect();
            return (model, Some(tables));
        }
        // FBX 5 materials have no shading model for ufbx (`ufbxi_read_legacy_material`).
        let record = (g.doc.version >= 6000)
            .then(|| obj.node.child("ShadingModel").and_then(|n| n.property(0)?.as_str()))
            .flatten();
        if self.blender_principled() {
            return (ShadingModel::BlenderPhong, None);
        }
        match record {
            Some("lambert" | "Lambert") => return (ShadingModel::Lambert, None),
            Some("phong" | "Phong") => return (ShadingModel::Phong, None),
            _ => {}
        }
        let a = g.get_i64(obj.id, "3dsMax|ClassIDa", 0) as u32;
        let b = g.get_i64(obj.id, "3dsMax|ClassIDb", 0) as u32;
        let model = MAX_CLASSES
            .iter()
            .find(|&&(x, y, _)| (x, y) == (a, b))
            .map_or(ShadingModel::Unknown, |&(_, _, m)| m);
        (model, None)
    }

    /// Whether the file's materials are Principled BSDFs as Blender's exporter writes them
    /// ([`ShadingModel::BlenderPhong`]): its `Creator` names Blender's binary exporter at
    /// add-on version 4.12.0 or later, compared as ufbx packs versions
    /// (`ufbx_pack_version`: `(a · 1000 + b) · 1000 + c` in 32 bits).
    fn blender_principled(&self) -> bool {
        let pack = |[a, b, c]: [u32; 3]| {
            a.wrapping_mul(1000).wrapping_add(b).wrapping_mul(1000).wrapping_add(c)
        };
        super::blender_exporter_version(self.creator()).is_some_and(|v| pack(v) >= pack([4, 12, 0]))
    }

    /// The [`Pbr`] of material `obj` (module docs).
    pub(super) fn pbr(&mut self, obj: &Object<'d, 'a>) -> Pbr {
        let (shading, bindings) = self.shading_model(obj);
        let m = model(shading, bindings.is_some());
        let mut pbr = Pbr::new(shading);
        let mut enabled = [true; P::ALL.len()];
        // The material properties a table name stands for (ufbx
        // `ufbxi_fetch_mapping_maps`): its bindings, else the name with the model's prefix.
        let names = |name: String| -> Vec<String> {
            let bound = bindings.as_ref().and_then(|tables| {
                tables.iter().find_map(|t| {
                    let hits: Vec<String> = t
                        .iter()
                        .filter(|(s, _)| *s == name)
                        .map(|(_, mp)| mp.to_string())
                        .collect();
                    (!hits.is_empty()).then_some(hits)
                })
            });
            bound.unwrap_or_else(|| vec![format!("{}{name}", m.prefix)])
        };
        if let Some((pre, suf)) = m.map {
            for &(p, _, name) in m.entries {
                for prop in names(format!("{pre}{name}{suf}")) {
                    self.pbr_texture(obj, &prop, p, &mut pbr);
                }
            }
        }
        for &(p, flags, name) in m.entries {
            for prop in names(name.to_string()) {
                self.pbr_value(obj.id, &prop, p, flags, &mut pbr);
                self.pbr_texture(obj, &prop, p, &mut pbr);
            }
        }
        if let Some((pre, suf)) = m.map_on {
            for &(p, _, name) in m.entries {
                for prop in names(format!("{pre}{name}{suf}")) {
                    if let Some(v) = self.graph.prop(obj.id, &prop) {
                        enabled[p as usize] = v.i64().unwrap_or(0) != 0;
                    }
                }
            }
        }
        for (v, on) in pbr.values.iter_mut().zip(enabled) {
            if !on {
                v.texture = None;
            }
        }
        for (f, c) in [
            (P::BaseFactor, P::BaseColor),
            (P::SpecularFactor, P::SpecularColor),
            (P::EmissionFactor, P::EmissionColor),
            (P::SheenFactor, P::SheenColor),
            (P::TransmissionFactor, P::TransmissionColor),
        ] {
            pbr.update_factor(f, c);
        }
        let mut switched = [false; 2];
        for &(around_1, k, name) in m.switches {
            for prop in names(name.to_string()) {
                let Some(v) = self.graph.prop(obj.id, &prop).filter(|v| !is_reference(v)) else {
                    continue;
                };
                let on = if around_1 {
                    v.f64().is_some_and(|x| (0.5..=1.5).contains(&x))
                } else {
                    v.i64().unwrap_or(0) != 0
                };
                switched[k] = on;
            }
        }
        for (k, (rough, gloss)) in
            [(P::Roughness, P::Glossiness), (P::CoatRoughness, P::CoatGlossiness)]
                .into_iter()
                .enumerate()
        {
            if switched[k] {
                let g = std::mem::take(pbr.get_mut(rough));
                let has = g.has_value;
                let x = g.value.x;
                *pbr.get_mut(gloss) = g;
                if has {
                    pbr.get_mut(rough).value.x = 1.0 - x;
                }
            } else if pbr.get(rough).has_value {
                pbr.get_mut(gloss).value.x = 1.0 - pbr.get(rough).value.x;
            }
        }
        pbr
    }

    /// An FBX 6 layer texture patched onto scene material `mat` on property `prop`
    /// ([`Importer::legacy_textures`]): the map of every table entry of its model named `prop`
    /// that has none yet, as ufbx reads the patched textures (`ufbxi_fetch_maps` runs after
    /// the patch).
    pub(super) fn legacy_pbr_texture(&mut self, mat: usize, prop: &str, tex: &Object<'d, 'a>) {
        let Some(shading) = self.scene.materials[mat].pbr.as_ref().map(|p| p.model) else {
            return;
        };
        for &(p, _, _) in model(shading, false).entries.iter().filter(|e| e.2 == prop) {
            let has =
                self.scene.materials[mat].pbr.as_ref().is_some_and(|b| b.get(p).texture.is_some());
            if has {
                continue;
            }
            let map = self.texture_map(tex, phong_slot(p));
            if let Some(pbr) = self.scene.materials[mat].pbr.as_mut() {
                let out = pbr.get_mut(p);
                out.texture = Some(map);
                out.channel = if p.is_color() { TextureChannel::Rgb } else { TextureChannel::R };
            }
        }
    }

    /// Reads property `prop` of material `id` into `p` per the table flags (module docs).
    fn pbr_value(&self, id: i64, prop: &str, p: P, flags: u8, pbr: &mut Pbr) {
        let Some(v) = self.graph.prop(id, prop).filter(|v| !is_reference(v)) else { return };
        let mut n = [0.0f64; 4];
        let mut count = 0;
        for (slot, value) in n.iter_mut().zip(v.values) {
            match value.as_f64() {
                Some(x) => *slot = x,
                None => break,
            }
            count += 1;
        }
        let out = pbr.get_mut(p);
        let mut x = Vec4::new(n[0] as f32, n[1] as f32, n[2] as f32, n[3] as f32);
        if flags & MUL != 0 {
            x = Vec4::new(out.value.x * n[0] as f32, out.value.y, out.value.z, out.value.w);
        }
        if flags & INVERT != 0 {
            x.x = (1.0 - n[0]) as f32;
        }
        if flags & SHININESS != 0 {
            let s = n[0];
            // Negative, NaN and below-zero results all end at 0, as ufbx's `!(x >= 0)`.
            let r = if s >= 0.0 { (1.0 - s.sqrt() * 0.1) as f32 } else { f32::NAN };
            x.x = if r >= 0.0 { r } else { 0.0 };
        }
        if flags & W1 != 0 && count != 4 {
            x.w = 1.0;
        }
        if flags & WIDEN != 0 && count == 1 {
            x.y = x.x;
            x.z = x.x;
        }
        out.value = x;
        out.has_value = true;
    }

    /// The first texture connected to property `prop` of material `obj`, into `p`'s map when
    /// there is one (ufbx `ufbx_find_prop_texture`; a `LayeredTexture` gives its first
    /// texture's file).
    fn pbr_texture(&mut self, obj: &Object<'d, 'a>, prop: &str, p: P, pbr: &mut Pbr) {
        let g = self.graph;
        let tex = g
            .children(obj.id)
            .filter(|c| c.kind == ConnectionKind::ObjectProperty)
            .filter(|c| c.parent_prop() == Some(prop))
            .filter_map(|c| g.object(c.child))
            .find(|o| o.class == "Texture" || o.class == "LayeredTexture");
        let Some(tex) = tex else { return };
        let file_tex = if tex.class == "LayeredTexture" {
            g.child_objects(tex.id, "Texture").next().unwrap_or(tex)
        } else {
            tex
        };
        let map = self.texture_map(file_tex, phong_slot(p));
        let out = pbr.get_mut(p);
        out.texture = Some(map);
        out.channel = if p.is_color() { TextureChannel::Rgb } else { TextureChannel::R };
    }
}

/// The OSL shaders ufbx reads a file from (`ufbxi_file_shaders`), by `OSLShaderName`.
const FILE_SHADERS: [&str; 5] =
    ["OSLBitmap", "OSLBitmap2", "OSLBitmap3", "UberBitmap", "UberBitmap2"];

/// Arnold's `ai_image` map by its 3ds Max class id (`ClassIDa`, `ClassIDb`), a file shader
/// for ufbx (`0x7e73161fad53b12a`).
const AI_IMAGE: (u32, u32) = (0x7e73_161f, 0xad53_b12a);

/// How many output selectors [`Importer::shader_file`] follows (a cycle ends there).
const SHADER_DEPTH: usize = 16;

impl<'g, 'd, 'a> Importer<'g, 'd, 'a> {
    /// The image file a 3ds Max shader map stands for, as ufbx resolves it
    /// (`ufbxi_finalize_shader_texture`, `ufbxi_file_shaders`,
    /// `ufbxi_propagate_main_textures`): the output selector `MULTIOUTPUT_TO_OSLMap` stands
    /// for the map connected to its `sourceMap` parameter when it selects output 0 (followed
    /// up to [`SHADER_DEPTH`] maps), and a file shader ([`FILE_SHADERS`], [`AI_IMAGE`]) names
    /// its file in its `Filename`/`filename` parameter. `None` for any other texture without
    /// a file (other OSL maps such as `ColorTweak` or `RandomTilingBitmap` are their own
    /// texture for ufbx, with no file).
    pub(super) fn shader_file(&self, tex: &Object<'d, 'a>) -> Option<String> {
        let g = self.graph;
        let mut id = tex.id;
        for _ in 0..SHADER_DEPTH {
            let o = g.object(id)?;
            let own = self.texture_file(o);
            if !own.is_empty() {
                return Some(own);
            }
            let text = |name: &str| g.prop(id, name).and_then(|p| p.str());
            let int = |name: &str| g.prop(id, name).and_then(|p| p.i64()).unwrap_or(0) as u32;
            let input =
                if text("3dsMax|params|OSLShaderName").is_some_and(|n| FILE_SHADERS.contains(&n)) {
                    Some("Filename")
                } else if (int("3dsMax|ClassIDa"), int("3dsMax|ClassIDb")) == AI_IMAGE {
                    Some("filename")
                } else {
                    None
                };
            if let Some(input) = input {
                return g
                    .own_props(o)
                    .find(|p| p.name.rsplit('|').next() == Some(input))
                    .and_then(|p| p.str())
                    .filter(|f| !f.is_empty())
                    .map(str::to_string);
            }
            if text("3dsMax|MaxTexture") != Some("MULTIOUTPUT_TO_OSLMap")
                || int("3dsMax|parameters|outputChannelIndex") != 0
            {
                return None;
            }
            id = g
                .children(id)
                .filter(|c| c.kind == ConnectionKind::ObjectProperty)
                .filter(|c| c.parent_prop() == Some("3dsMax|parameters|sourceMap"))
                .find(|c| g.object(c.child).is_some_and(|t| t.class == "Texture"))?
                .child;
        }
        None
    }
}

/// Whether a property is a `Reference` (3ds Max's map slots), which holds no value (ufbx
/// `UFBX_PROP_REFERENCE`, by its type name or, when that is unknown, its second name).
fn is_reference(p: &super::super::objects::Prop<'_, '_>) -> bool {
    p.ty == "Reference" || p.label == "Reference"
}

/// A `BindingTable`'s entries: `Entry: material, "FbxPropertyEntry", shader,
/// "FbxSemanticEntry"` (or the two swapped), sorted by shader property, stable.
fn binding_table<'d>(t: &Object<'d, '_>) -> Bindings<'d> {
    let mut out: Bindings<'d> = Vec::new();
    for e in t.node.children().filter(|n| n.name() == "Entry") {
        let s = |i: usize| e.property(i).and_then(|p| p.as_str());
        let (Some(a), Some(at), Some(b), Some(bt)) = (s(0), s(1), s(2), s(3)) else { continue };
        match (at, bt) {
            ("FbxPropertyEntry", "FbxSemanticEntry") => out.push((b, a)),
            ("FbxSemanticEntry", "FbxPropertyEntry") => out.push((a, b)),
            _ => {}
        }
    }
    out.sort_by(|x, y| x.0.cmp(y.0));
    out
}

/// The Phong fields of a PBR material that stores none of its own (Maya's and Arnold's
/// standard surfaces, OpenPBR): filled from its PBR values so the writers that know only Phong
/// (3DA, 3DS, OBJ's `Kd`…) show its colours. Diffuse = base colour with the base factor,
/// specular = specular colour with its factor, shininess = 1 − roughness, emissive = emission
/// colour with its factor, opacity.
pub(super) fn phong_from_pbr(m: &mut Material, pbr: &Pbr) {
    m.diffuse = pbr.get(P::BaseColor).rgb();
    m.diffuse_factor = pbr.get(P::BaseFactor).scalar();
    m.specular = pbr.get(P::SpecularColor).rgb();
    m.shininess_strength = pbr.get(P::SpecularFactor).scalar();
    m.shininess = (1.0 - pbr.get(P::Roughness).scalar()).clamp(0.0, 1.0);
    m.emissive = pbr.get(P::EmissionColor).rgb();
    m.emissive_factor = pbr.get(P::EmissionFactor).scalar();
    m.opacity = Some(pbr.opacity());
    m.update_fbx_derived();
}

/// The maps of a PBR material's base colour, normal, emission and opacity, as its diffuse,
/// bump, emissive and opacity maps where it has none of that slot (3ds Max writes Phong
/// colours beside a Physical Material but connects its maps to the PBR properties only): what
/// the writers that know only Phong maps carry. Maps without a file name are not copied.
pub(super) fn phong_maps_from_pbr(m: &mut Material, pbr: &Pbr) {
    for p in [P::BaseColor, P::NormalMap, P::EmissionColor, P::Opacity] {
        let slot = phong_slot(p);
        // A map with no file (a 3ds Max OSL or procedural map whose graph is not followed,
        // docs/materials.md) has nothing a Phong-only writer could show.
        if let Some(t) = pbr.get(p).texture.as_ref().filter(|t| !t.file.is_empty()) {
            if !m.maps.iter().any(|x| x.slot == slot) {
                m.maps.push(t.clone());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::load;
    use super::*;
    use glam::Vec3;

    fn x(pbr: &Pbr, p: P) -> f32 {
        pbr.get(p).scalar()
    }

    #[test]
    fn arnold_values_come_through_the_binding_table() {
        // Hand-built after maya_arnold_textures: the Implementation's RenderAPI names Arnold;
        // the BindingTable maps `baseColor` to `Maya|baseColor`. `specularRoughness` has no
        // binding and is read under its own name; `Maya|base` is bound to `base`.
        let text = include_str!("../../../../tests/data/pbr/arnold_binding_table.fbx");
        let (s, _) = load(text);
        let m = &s.materials[0];
        let pbr = m.pbr.as_ref().unwrap();
        assert_eq!(pbr.model, ShadingModel::ArnoldStandardSurface);
        assert_eq!(pbr.get(P::BaseColor).value, Vec4::new(0.5, 0.25, 0.125, 1.0));
        assert_eq!(pbr.get(P::BaseColor).texture.as_ref().unwrap().file, "base.png");
        assert_eq!((x(pbr, P::BaseFactor), x(pbr, P::Metalness)), (0.8, 1.0));
        assert_eq!((x(pbr, P::Roughness), x(pbr, P::SpecularIor)), (0.3, 1.52));
        // Glossiness is 1 − roughness, not stored.
        assert!((x(pbr, P::Glossiness) - 0.7).abs() < 1e-6 && !pbr.get(P::Glossiness).has_value);
        // No emission colour stored: its factor is 0 (ufbxi_update_factor).
        assert_eq!(x(pbr, P::EmissionFactor), 0.0);
        // The Phong fields show the PBR colour (no DiffuseColor of its own).
        assert_eq!((m.diffuse, m.diffuse_factor), (Vec3::new(0.5, 0.25, 0.125), 0.8));
        assert_eq!(m.maps[0].file, "base.png");
    }

    #[test]
    fn max_physical_reads_its_prefix_map_switches_and_glossiness() {
        // 3ds Max Physical Material by class id; `roughness_inv` 1: the stored 0.25 is
        // glossiness, roughness 0.75; the base colour map is on, the bump map off; `cutout`
        // widens to RGB; `base_color` is ColorAndAlpha (W as stored, 0.5).
        let text = include_str!("../../../../tests/data/pbr/max_physical_switches.fbx");
        let (s, _) = load(text);
        let pbr = s.materials[0].pbr.as_ref().unwrap();
        assert_eq!(pbr.model, ShadingModel::MaxPhysical);
        assert_eq!(pbr.get(P::BaseColor).value, Vec4::splat(0.5));
        assert_eq!(pbr.get(P::BaseColor).texture.as_ref().unwrap().file, "a.png");
        assert!(pbr.get(P::NormalMap).texture.is_none());
        assert_eq!(pbr.get(P::Opacity).value, Vec4::new(0.5, 0.5, 0.5, 0.0));
        assert_eq!((x(pbr, P::Glossiness), x(pbr, P::Roughness)), (0.25, 0.75));
        assert!(pbr.get(P::Glossiness).has_value && !pbr.get(P::Roughness).has_value);
        assert_eq!(x(pbr, P::SpecularIor), 1.33);
    }

    #[test]
    fn openpbr_emission_is_weight_times_luminance() {
        // ufbx multiplies `emission_luminance` into `emission_weight`: 0.5 × 1000 = 500.
        let text = include_str!("../../../../tests/data/pbr/openpbr_luminance.fbx");
        let (s, _) = load(text);
        let pbr = s.materials[0].pbr.as_ref().unwrap();
        assert_eq!(pbr.model, ShadingModel::OpenPbr);
        assert_eq!(x(pbr, P::EmissionFactor), 500.0);
        assert_eq!(pbr.emission(), Vec3::new(500.0, 250.0, 0.0));
        assert_eq!((x(pbr, P::SheenFactor), x(pbr, P::CoatFactor)), (0.25, 0.75));
    }

    #[test]
    fn stingray_pbs_maps_are_tex_and_use_switches() {
        // ShaderFX: `TEX_color_map` holds the base colour map, `use_color_map` 1 keeps it;
        // `TEX_roughness_map` with `use_roughness_map` 0 is dropped.
        let text = include_str!("../../../../tests/data/pbr/stingray_pbs_switches.fbx");
        let (s, _) = load(text);
        let pbr = s.materials[0].pbr.as_ref().unwrap();
        assert_eq!(pbr.model, ShadingModel::StingrayPbs);
        assert_eq!(pbr.get(P::BaseColor).texture.as_ref().unwrap().file, "c.png");
        assert!(pbr.get(P::Roughness).texture.is_none());
        assert_eq!((x(pbr, P::Roughness), x(pbr, P::Metalness)), (0.4, 0.5));
        // No base factor stored, base colour white: 1 (ufbxi_update_factor).
        assert_eq!(x(pbr, P::BaseFactor), 1.0);
    }

    #[test]
    fn blender_principled_bsdf_follows_the_exporter_formulas() {
        // Blender's exporter writes TransparencyFactor = 1 − alpha, Shininess(Exponent) =
        // ((1 − roughness) · 10)², ReflectionFactor = metallic: 0.25 → opacity 0.75, the later
        // ShininessExponent 25 → roughness 1 − 5/10 = 0.5, metalness 0.7, emission 2 × (1,
        // 0.5, 0). A lambert record is Blender's Principled BSDF all the same (ufbx sets
        // BLENDER_PHONG over the record), its values from Blender's template: exponent 20 →
        // roughness 1 − √20/10, ReflectionFactor 1 → metalness 1.
        let text = include_str!("../../../../tests/data/pbr/blender_principled.fbx");
        let (s, _) = load(text);
        let pbr = |i: usize| s.materials[i].pbr.clone().unwrap();
        let metal = pbr(0);
        assert_eq!(metal.model, ShadingModel::BlenderPhong);
        assert_eq!(metal.get(P::BaseColor).value, Vec4::new(0.8, 0.2, 0.1, 1.0));
        assert_eq!(metal.get(P::Opacity).value.truncate(), Vec3::splat(0.75));
        assert_eq!((x(&metal, P::Roughness), x(&metal, P::Metalness)), (0.5, 0.7));
        assert_eq!(metal.emission(), Vec3::new(2.0, 1.0, 0.0));
        assert_eq!(pbr(1).model, ShadingModel::BlenderPhong);
        let rough = (1.0 - 20f64.sqrt() / 10.0) as f32;
        assert_eq!((x(&pbr(1), P::Roughness), x(&pbr(1), P::Metalness)), (rough, 1.0));
        // Blender's add-on before 4.12 (Blender 2.79's 3.7.13) wrote no Principled BSDF.
        let old = text.replace("4.0.2 - 5.8.13", "2.79 (sub 0) - 3.7.13");
        let (s, _) = load(&old);
        assert_eq!(s.materials[0].pbr.as_ref().unwrap().model, ShadingModel::Phong);
    }

    #[test]
    fn phong_roughness_is_one_minus_root_exponent_over_ten() {
        // ufbx `ufbxi_mat_transform_unknown_shininess`: exponent 25 → 1 − 5/10 = 0.5;
        // exponent 400 → 1 − 2 = −1 → 0. A Lambert material has no roughness.
        let text = include_str!("../../../../tests/data/pbr/phong_shininess.fbx");
        let (s, _) = load(text);
        let pbr = |i: usize| s.materials[i].pbr.clone().unwrap();
        assert_eq!((pbr(0).model, x(&pbr(0), P::Roughness)), (ShadingModel::Phong, 0.5));
        assert_eq!(pbr(0).get(P::BaseColor).value, Vec4::new(0.2, 0.4, 0.6, 1.0));
        assert_eq!(x(&pbr(1), P::Roughness), 0.0);
        assert_eq!(pbr(2).model, ShadingModel::Lambert);
        assert!(!pbr(2).get(P::Roughness).has_value);
    }
}

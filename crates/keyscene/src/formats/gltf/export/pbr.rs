//! The glTF material of a scene material whose shading model is physically based
//! ([`ShadingModel::is_pbr`](crate::scene::ShadingModel::is_pbr)): metallic-roughness from its
//! [`Pbr`] values, and the `KHR_materials_*` extensions for what the core model lacks, each
//! written only where its value differs from the extension's default (docs/gltf.md,
//! "Materials").
//!
//! - `baseColorFactor` = base colour × base factor, alpha = opacity (`BLEND` below 1);
//!   `metallicFactor`, `roughnessFactor` as stored (roughness 1 − glossiness where the model
//!   stores glossiness). A connected map replaces its value in the source tools (Maya, 3ds
//!   Max), where glTF multiplies map and factor: a mapped colour's factor is its weight
//!   alone (white × base factor), a mapped metalness or roughness factor 1.
//! - `metallicRoughnessTexture`: one image whose G is roughness and B metalness. Where the
//!   source has one map for both with those channels (a glTF source) it is written as is; an
//!   FBX roughness map alone (a greyscale image) is written when metalness is 0 and not mapped
//!   (B × 0 is 0); other combinations cannot be made without merging images and are reported.
//! - `emissiveFactor` = emission colour × factor divided by its largest component when that
//!   exceeds 1, which `KHR_materials_emissive_strength` `emissiveStrength` then carries.
//! - `KHR_materials_ior` `ior` (default 1.5), `KHR_materials_specular` `specularFactor` and
//!   `specularColorFactor` (1, white), `KHR_materials_transmission` `transmissionFactor` (0),
//!   `KHR_materials_clearcoat` `clearcoatFactor` and `clearcoatRoughnessFactor` (0),
//!   `KHR_materials_sheen` `sheenColorFactor` = sheen colour × sheen factor and
//!   `sheenRoughnessFactor` (black, 0). Each extension used is listed in `extensionsUsed`
//!   (none is required: a viewer without it shows the core material).
//! - `normalTexture`, `occlusionTexture`, `emissiveTexture` from the normal, ambient
//!   occlusion and emission colour maps. What has no glTF place (opacity, glossiness and
//!   transmission maps, the transmission colour) is reported.

use gltf_json as json;
use json::validation::Checked::Valid;
use serde_json::{json as value, Map, Value};

use super::Out;
use crate::formats::gltf::warning;
use crate::scene::{Material, Pbr, PbrProperty as P, TextureChannel, TextureMap};

/// `x` clamped to 0–1, non-finite to 0.
fn unit(x: f32) -> f32 {
    if x.is_finite() {
        x.clamp(0.0, 1.0)
    } else {
        0.0
    }
}

impl Out {
    /// The glTF material of `mat`, described by `pbr` (module docs). `has_uvs`: the primitive
    /// has `TEXCOORD_0` (else no texture is bound, as for Phong materials).
    pub(super) fn pbr_material(
        &mut self,
        mat: &Material,
        pbr: &Pbr,
        has_uvs: bool,
    ) -> json::Material {
        let name = mat.name.as_str();
        let place = format!("material \"{name}\"");
        let mut lost: Vec<&str> = Vec::new();
        let map = |p: P| pbr.get(p).texture.as_ref().filter(|_| has_uvs);
        // FBX tools replace a mapped value by its map; glTF multiplies the two (module docs).
        let replaces = pbr.model != crate::scene::ShadingModel::Gltf;
        let base_color_texture = map(P::BaseColor).and_then(|t| self.map_info(name, t));
        let base = match base_color_texture {
            Some(_) if replaces => glam::Vec3::splat(pbr.get(P::BaseFactor).scalar()),
            _ => pbr.base_color(),
        };
        let alpha = unit(pbr.opacity());
        let (rough_map, metal_map) = (map(P::Roughness), map(P::Metalness));
        let metallic = unit(pbr.get(P::Metalness).scalar());
        let roughness = unit(pbr.get(P::Roughness).scalar());
        let metallic_roughness_texture =
            self.metallic_roughness(name, pbr, rough_map, metal_map, metallic, &mut lost);
        let (metallic, roughness) = match &metallic_roughness_texture {
            Some(_) if replaces => (
                if metal_map.is_some() { 1.0 } else { metallic },
                if rough_map.is_some() { 1.0 } else { roughness },
            ),
            _ => (metallic, roughness),
        };
        let emissive_texture = map(P::EmissionColor).and_then(|t| self.map_info(name, t));
        let e = match emissive_texture {
            Some(_) if replaces => glam::Vec3::splat(pbr.get(P::EmissionFactor).scalar()),
            _ => pbr.emission(),
        };
        let e = if e.is_finite() { e.max(glam::Vec3::ZERO) } else { glam::Vec3::ZERO };
        let strength = e.max_element().max(1.0);
        let normal_texture = map(P::NormalMap).and_then(|t| self.map_info(name, t)).map(|info| {
            json::material::NormalTexture {
                index: info.index,
                scale: 1.0,
                tex_coord: info.tex_coord,
                extensions: info
                    .extensions
                    .map(|x| json::extensions::material::NormalTexture { others: x.others }),
                extras: Default::default(),
            }
        });
        let occlusion_texture =
            map(P::AmbientOcclusion).and_then(|t| self.map_info(name, t)).map(|info| {
                json::material::OcclusionTexture {
                    index: info.index,
                    strength: json::material::StrengthFactor(1.0),
                    tex_coord: info.tex_coord,
                    extensions: info
                        .extensions
                        .map(|x| json::extensions::material::OcclusionTexture { others: x.others }),
                    extras: Default::default(),
                }
            });
        for (p, what) in [
            (P::Opacity, "opacity map"),
            (P::Glossiness, "glossiness map"),
            (P::TransmissionFactor, "transmission map"),
            (P::CoatNormal, "clearcoat normal map"),
            (P::SpecularColor, "specular colour map"),
        ] {
            if map(p).is_some() {
                lost.push(what);
            }
        }
        let others = self.pbr_extensions(pbr, strength, &mut lost);
        if !lost.is_empty() {
            self.warnings.push(warning(
                place,
                format!("{} ({}): no glTF place, left out", lost.join(", "), pbr.model.name()),
            ));
        }
        json::Material {
            alpha_mode: Valid(if alpha < 1.0 {
                json::material::AlphaMode::Blend
            } else {
                json::material::AlphaMode::Opaque
            }),
            double_sided: mat.two_sided,
            name: Some(mat.name.clone()),
            pbr_metallic_roughness: json::material::PbrMetallicRoughness {
                base_color_factor: json::material::PbrBaseColorFactor([
                    unit(base.x),
                    unit(base.y),
                    unit(base.z),
                    alpha,
                ]),
                base_color_texture,
                metallic_factor: json::material::StrengthFactor(metallic),
                roughness_factor: json::material::StrengthFactor(roughness),
                metallic_roughness_texture,
                ..Default::default()
            },
            emissive_factor: json::material::EmissiveFactor((e / strength).to_array().map(unit)),
            emissive_texture,
            normal_texture,
            occlusion_texture,
            extensions: (!others.is_empty())
                .then_some(json::extensions::material::Material { others }),
            ..Default::default()
        }
    }

    /// The `metallicRoughnessTexture` (module docs), reporting the maps it cannot carry.
    fn metallic_roughness(
        &mut self,
        name: &str,
        pbr: &Pbr,
        rough: Option<&TextureMap>,
        metal: Option<&TextureMap>,
        metallic: f32,
        lost: &mut Vec<&str>,
    ) -> Option<json::texture::Info> {
        let channel = |p: P| pbr.get(p).channel;
        let packed = channel(P::Roughness) == TextureChannel::G
            && channel(P::Metalness) == TextureChannel::B;
        match (rough, metal) {
            (None, None) => None,
            (Some(r), Some(m)) if packed && r.file == m.file => self.map_info(name, r),
            (Some(r), None) if packed || metallic == 0.0 => self.map_info(name, r),
            (None, Some(m)) if packed => self.map_info(name, m),
            (r, m) => {
                if r.is_some() {
                    lost.push("roughness map");
                }
                if m.is_some() {
                    lost.push("metalness map");
                }
                None
            }
        }
    }

    /// The `KHR_materials_*` objects of `pbr` that differ from their defaults, each added to
    /// `extensionsUsed` (module docs).
    fn pbr_extensions(
        &mut self,
        pbr: &Pbr,
        strength: f32,
        lost: &mut Vec<&str>,
    ) -> Map<String, Value> {
        let mut out = Map::new();
        let v = |p: P| pbr.get(p);
        if strength > 1.0 && strength.is_finite() {
            out.insert(
                "KHR_materials_emissive_strength".into(),
                value!({ "emissiveStrength": strength }),
            );
        }
        let ior = v(P::SpecularIor);
        if ior.has_value && ior.scalar() != 1.5 {
            let x = ior.scalar();
            if x.is_finite() && (x >= 1.0 || x == 0.0) {
                out.insert("KHR_materials_ior".into(), value!({ "ior": x }));
            } else {
                lost.push("IOR below 1");
            }
        }
        let (sf, sc) = (v(P::SpecularFactor), v(P::SpecularColor));
        let color = sc.rgb();
        let color = if sc.has_value && sc.texture.is_none() && color.is_finite() {
            color.max(glam::Vec3::ZERO)
        } else {
            glam::Vec3::ONE
        };
        let factor = if sf.has_value { unit(sf.scalar()) } else { 1.0 };
        if factor != 1.0 || color != glam::Vec3::ONE {
            out.insert(
                "KHR_materials_specular".into(),
                value!({ "specularFactor": factor, "specularColorFactor": color.to_array() }),
            );
        }
        let t = unit(v(P::TransmissionFactor).scalar());
        if t > 0.0 {
            out.insert("KHR_materials_transmission".into(), value!({ "transmissionFactor": t }));
            if v(P::TransmissionColor).rgb() != glam::Vec3::ONE {
                lost.push("transmission colour");
            }
        }
        let c = unit(v(P::CoatFactor).scalar());
        if c > 0.0 {
            out.insert(
                "KHR_materials_clearcoat".into(),
                value!({
                    "clearcoatFactor": c,
                    "clearcoatRoughnessFactor": unit(v(P::CoatRoughness).scalar()),
                }),
            );
        }
        let sheen = (v(P::SheenColor).rgb() * v(P::SheenFactor).scalar()).to_array().map(unit);
        if sheen != [0.0; 3] {
            out.insert(
                "KHR_materials_sheen".into(),
                value!({
                    "sheenColorFactor": sheen,
                    "sheenRoughnessFactor": unit(v(P::SheenRoughness).scalar()),
                }),
            );
        }
        for name in out.keys() {
            if !self.root.extensions_used.contains(name) {
                self.root.extensions_used.push(name.clone());
            }
        }
        out
    }
}

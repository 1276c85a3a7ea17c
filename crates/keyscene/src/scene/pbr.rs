//! A material's physically based description: its shading model and the PBR values and maps
//! read from it, as ufbx's `ufbx_material_pbr` reports them (docs/materials.md).
//!
//! # Where the values come from
//! Each [`ShadingModel`] names its properties differently (Maya `standardSurface` writes
//! `baseColor`, 3ds Max's Physical Material `3dsMax|Parameters|base_color`, OpenPBR
//! `base_weight`…); the FBX reader reads them through ufbx's per-model tables
//! (`ufbxi_shader_pbr_mappings` in ufbx.c, `ufbxi_fetch_maps`) into one [`Pbr`], one
//! [`PbrValue`] per [`PbrProperty`]. The glTF reader fills the same model from a glTF material
//! and its `KHR_materials_*` extensions. The classic Lambert and Phong models get one too, by
//! ufbx's Lambert and Phong tables (roughness = 1 − √exponent ÷ 10), but writers keep writing
//! those from the Phong fields of [`Material`](super::Material), as before: only a
//! [`ShadingModel::is_pbr`] model's values are written as PBR.

use glam::{Vec3, Vec4};

use super::TextureMap;

/// The shading model a material was authored with, as ufbx's `ufbx_shader_type` tells them
/// apart (`ufbxi_finalize_scene`: the `ShadingModel` record, the `RenderAPI` of a connected
/// `Implementation`, the 3ds Max class id).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ShadingModel {
    /// Neither a known `ShadingModel` nor a shader ufbx knows: read by the Phong table
    /// (ufbx `UFBX_SHADER_UNKNOWN`).
    Unknown,
    /// FBX `ShadingModel: "lambert"` (ufbx `UFBX_SHADER_FBX_LAMBERT`).
    Lambert,
    /// FBX `ShadingModel: "phong"` (ufbx `UFBX_SHADER_FBX_PHONG`).
    Phong,
    /// A Principled BSDF as Blender's FBX exporter writes it: Phong properties from which the
    /// PBR values follow by the exporter's formulas (ufbx `UFBX_SHADER_BLENDER_PHONG`, table
    /// `ufbxi_blender_phong_shader_pbr_mapping`): every material of a file whose `Creator` is
    /// Blender's binary exporter, add-on version 4.12 (Blender 2.80) or later. ufbx reads these
    /// so only with `use_blender_pbr_material`; keyscene always does, as Blender's own FBX
    /// importer reads every Phong material back into a Principled BSDF by the same formulas
    /// (docs/materials.md).
    BlenderPhong,
    /// An OSL `standard_surface` (Maya `standardSurface`: `Implementation` `RenderAPI` "OSL").
    OslStandardSurface,
    /// Arnold `aiStandardSurface` (`RenderAPI` "ARNOLD_SHADER_ID").
    ArnoldStandardSurface,
    /// 3ds Max Physical Material (class id `0x3d6b1cec`, `0xdeadc001`).
    MaxPhysical,
    /// 3ds Max PBR Material (metal/rough) (class id `0xd00f1e00`, `0xbe77e500`).
    MaxPbrMetalRough,
    /// 3ds Max PBR Material (spec/gloss) (class id `0xd00f1e00`, `0x01dbad33`).
    MaxPbrSpecGloss,
    /// 3ds Max glTF Material (class id `0x38420192`, `0x45fe4e1b`).
    MaxGltf,
    /// OpenPBR (3ds Max 2025+, class id `0xf1551e33`, `0x37fb1337`).
    OpenPbr,
    /// Maya ShaderFX graph, its Stingray PBS preset (`RenderAPI` "SFX_PBS_SHADER").
    StingrayPbs,
    /// A glTF metallic-roughness material (glTF sources).
    Gltf,
}

impl ShadingModel {
    /// The name `inspect` prints: ufbx's shader type name without its prefix (`lambert`,
    /// `phong`, `arnold_standard_surface`, `3ds_max_physical_material`, `openpbr_material`…).
    pub fn name(self) -> &'static str {
        match self {
            ShadingModel::Unknown => "unknown",
            ShadingModel::Lambert => "lambert",
            ShadingModel::Phong => "phong",
            ShadingModel::BlenderPhong => "blender_phong",
            ShadingModel::OslStandardSurface => "osl_standard_surface",
            ShadingModel::ArnoldStandardSurface => "arnold_standard_surface",
            ShadingModel::MaxPhysical => "3ds_max_physical_material",
            ShadingModel::MaxPbrMetalRough => "3ds_max_pbr_metal_rough",
            ShadingModel::MaxPbrSpecGloss => "3ds_max_pbr_spec_gloss",
            ShadingModel::MaxGltf => "gltf_material",
            ShadingModel::OpenPbr => "openpbr_material",
            ShadingModel::StingrayPbs => "shaderfx_graph",
            ShadingModel::Gltf => "gltf",
        }
    }

    /// Whether the model is physically based (not Lambert, Phong or unknown): writers then
    /// take the material from its [`Pbr`] values, else from the Phong fields.
    pub fn is_pbr(self) -> bool {
        !matches!(self, ShadingModel::Unknown | ShadingModel::Lambert | ShadingModel::Phong)
    }
}

/// The PBR values a [`Pbr`] keeps, named after `ufbx_material_pbr_maps`' fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PbrProperty {
    /// Scale of the base colour (`base`, `base_weight`; Phong `DiffuseFactor`).
    BaseFactor,
    /// Base colour, linear RGB, A as stored (alpha of 3ds Max `ColorAndAlpha`, else 1).
    BaseColor,
    /// Specular roughness 0–1.
    Roughness,
    /// Metalness 0–1.
    Metalness,
    /// Specular weight (`specular`, `reflectivity`, `specular_weight`).
    SpecularFactor,
    /// Specular colour.
    SpecularColor,
    /// Index of refraction of the specular layer (`specularIOR`, `trans_ior`, `specular_ior`).
    SpecularIor,
    /// Transmission weight (`transmission`, `transparency`; Phong `TransparencyFactor`).
    TransmissionFactor,
    /// Transmission colour.
    TransmissionColor,
    /// Sheen (fuzz) weight.
    SheenFactor,
    /// Sheen colour.
    SheenColor,
    /// Sheen roughness.
    SheenRoughness,
    /// Clearcoat weight.
    CoatFactor,
    /// Clearcoat colour.
    CoatColor,
    /// Clearcoat roughness.
    CoatRoughness,
    /// Clearcoat normal map (value: the map amount where the model stores one).
    CoatNormal,
    /// Emission weight (`emission`, `emission_weight` × `emission_luminance`,
    /// `emissive_intensity`; Phong `EmissiveFactor`).
    EmissionFactor,
    /// Emission colour.
    EmissionColor,
    /// Opacity 0 (invisible) – 1 (opaque), widened to RGB where stored as one number.
    Opacity,
    /// Normal or bump map (value: the map amount where the model stores one).
    NormalMap,
    /// Ambient occlusion map.
    AmbientOcclusion,
    /// Glossiness: 1 − roughness, or the stored value (and map) where the model's
    /// roughness-as-glossiness switch is on (ufbx `ufbxi_glossiness_remaps`).
    Glossiness,
    /// Clearcoat glossiness, as [`PbrProperty::Glossiness`] for the coat.
    CoatGlossiness,
}

impl PbrProperty {
    /// Every property, in declaration order (the index of [`Pbr::values`]).
    pub const ALL: [PbrProperty; 23] = [
        PbrProperty::BaseFactor,
        PbrProperty::BaseColor,
        PbrProperty::Roughness,
        PbrProperty::Metalness,
        PbrProperty::SpecularFactor,
        PbrProperty::SpecularColor,
        PbrProperty::SpecularIor,
        PbrProperty::TransmissionFactor,
        PbrProperty::TransmissionColor,
        PbrProperty::SheenFactor,
        PbrProperty::SheenColor,
        PbrProperty::SheenRoughness,
        PbrProperty::CoatFactor,
        PbrProperty::CoatColor,
        PbrProperty::CoatRoughness,
        PbrProperty::CoatNormal,
        PbrProperty::EmissionFactor,
        PbrProperty::EmissionColor,
        PbrProperty::Opacity,
        PbrProperty::NormalMap,
        PbrProperty::AmbientOcclusion,
        PbrProperty::Glossiness,
        PbrProperty::CoatGlossiness,
    ];

    /// The name `inspect` prints: the `ufbx_material_pbr_maps` field name (`base_color`,
    /// `roughness`, `specular_ior`…).
    pub fn name(self) -> &'static str {
        match self {
            PbrProperty::BaseFactor => "base_factor",
            PbrProperty::BaseColor => "base_color",
            PbrProperty::Roughness => "roughness",
            PbrProperty::Metalness => "metalness",
            PbrProperty::SpecularFactor => "specular_factor",
            PbrProperty::SpecularColor => "specular_color",
            PbrProperty::SpecularIor => "specular_ior",
            PbrProperty::TransmissionFactor => "transmission_factor",
            PbrProperty::TransmissionColor => "transmission_color",
            PbrProperty::SheenFactor => "sheen_factor",
            PbrProperty::SheenColor => "sheen_color",
            PbrProperty::SheenRoughness => "sheen_roughness",
            PbrProperty::CoatFactor => "coat_factor",
            PbrProperty::CoatColor => "coat_color",
            PbrProperty::CoatRoughness => "coat_roughness",
            PbrProperty::CoatNormal => "coat_normal",
            PbrProperty::EmissionFactor => "emission_factor",
            PbrProperty::EmissionColor => "emission_color",
            PbrProperty::Opacity => "opacity",
            PbrProperty::NormalMap => "normal_map",
            PbrProperty::AmbientOcclusion => "ambient_occlusion",
            PbrProperty::Glossiness => "glossiness",
            PbrProperty::CoatGlossiness => "coat_glossiness",
        }
    }

    /// Whether the property is a colour (RGB) rather than a scalar in `x`.
    pub fn is_color(self) -> bool {
        matches!(
            self,
            PbrProperty::BaseColor
                | PbrProperty::SpecularColor
                | PbrProperty::TransmissionColor
                | PbrProperty::SheenColor
                | PbrProperty::CoatColor
                | PbrProperty::EmissionColor
        )
    }
}

/// Which channel of its image a map's value is read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TextureChannel {
    /// Colour maps: RGB (A for base colour alpha where the format says so).
    #[default]
    Rgb,
    /// The red channel: FBX scalar maps (a greyscale image, every channel alike), glTF
    /// `occlusionTexture`.
    R,
    /// The green channel: glTF roughness (`metallicRoughnessTexture`).
    G,
    /// The blue channel: glTF metalness (`metallicRoughnessTexture`).
    B,
    /// The alpha channel: glTF `KHR_materials_specular` `specularTexture`, sheen roughness.
    A,
}

impl TextureChannel {
    /// `rgb`, `r`, `g`, `b` or `a`.
    pub fn name(self) -> &'static str {
        match self {
            TextureChannel::Rgb => "rgb",
            TextureChannel::R => "r",
            TextureChannel::G => "g",
            TextureChannel::B => "b",
            TextureChannel::A => "a",
        }
    }
}

/// One PBR value and its map, as ufbx's `ufbx_material_map`: the value as stored (up to four
/// components; scalars in `x`), whether the file stores it, and the texture connected to it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PbrValue {
    /// The value: colours RGB(A), scalars in `x`; zero when not stored, except the factors ufbx
    /// derives (`ufbxi_update_factor`: a missing factor is 1 where its colour is stored and
    /// not black, else 0).
    pub value: Vec4,
    /// Whether the file stores the value (ufbx `has_value`).
    pub has_value: bool,
    /// The map connected to the value and enabled (3ds Max `…_map_on`, ShaderFX `use_…_map`
    /// off leave it out).
    pub texture: Option<TextureMap>,
    /// The channel of [`texture`](Self::texture) the value is read from.
    pub channel: TextureChannel,
}

impl PbrValue {
    /// A stored value without a map.
    pub fn stored(value: Vec4) -> Self {
        PbrValue { value, has_value: true, texture: None, channel: TextureChannel::Rgb }
    }

    /// The value's first component.
    pub fn scalar(&self) -> f32 {
        self.value.x
    }

    /// The value's first three components.
    pub fn rgb(&self) -> Vec3 {
        self.value.truncate()
    }
}

/// A material's PBR description ([module docs](self)).
#[derive(Debug, Clone, PartialEq)]
pub struct Pbr {
    /// The shading model the values were read by.
    pub model: ShadingModel,
    /// One value per [`PbrProperty`], indexed by its position in [`PbrProperty::ALL`].
    pub values: [PbrValue; 23],
}

impl Pbr {
    /// A description of `model` with nothing stored.
    pub fn new(model: ShadingModel) -> Self {
        Pbr { model, values: Default::default() }
    }

    /// The value of `p`.
    pub fn get(&self, p: PbrProperty) -> &PbrValue {
        &self.values[p as usize]
    }

    /// The value of `p`, to change.
    pub fn get_mut(&mut self, p: PbrProperty) -> &mut PbrValue {
        &mut self.values[p as usize]
    }

    /// The base colour as shown: `base_color` × `base_factor` (RGB).
    pub fn base_color(&self) -> Vec3 {
        self.get(PbrProperty::BaseColor).rgb() * self.get(PbrProperty::BaseFactor).scalar()
    }

    /// Opacity 0–1: the stored `opacity` (its first component), 1 where none is stored.
    pub fn opacity(&self) -> f32 {
        let o = self.get(PbrProperty::Opacity);
        if o.has_value {
            o.scalar()
        } else {
            1.0
        }
    }

    /// The emission as shown: `emission_color` × `emission_factor` (RGB, may exceed 1).
    pub fn emission(&self) -> Vec3 {
        self.get(PbrProperty::EmissionColor).rgb() * self.get(PbrProperty::EmissionFactor).scalar()
    }

    /// What a Phong material (3DA `.mat`, 3DS `MAT_ENTRY`) cannot carry of this description,
    /// for the writers that write a PBR material as its closest Phong values to report:
    /// metalness (not 0, or mapped), the roughness, metalness, glossiness and specular maps,
    /// an IOR other than 1.5, transmission, clearcoat, sheen, emission brighter than 1.
    /// Empty for Lambert and Phong models (nothing is lost).
    pub fn phong_losses(&self) -> Vec<&'static str> {
        if !self.model.is_pbr() {
            return Vec::new();
        }
        let v = |p: PbrProperty| self.get(p);
        let mut out = Vec::new();
        if v(PbrProperty::Metalness).scalar() != 0.0 || v(PbrProperty::Metalness).texture.is_some()
        {
            out.push("metalness");
        }
        for (p, what) in [
            (PbrProperty::Roughness, "roughness map"),
            (PbrProperty::Glossiness, "glossiness map"),
            (PbrProperty::SpecularColor, "specular map"),
        ] {
            if v(p).texture.is_some() {
                out.push(what);
            }
        }
        let ior = v(PbrProperty::SpecularIor);
        if ior.has_value && ior.scalar() != 1.5 {
            out.push("IOR");
        }
        if v(PbrProperty::TransmissionFactor).scalar() > 0.0 {
            out.push("transmission");
        }
        if v(PbrProperty::CoatFactor).scalar() > 0.0 {
            out.push("clearcoat");
        }
        if v(PbrProperty::SheenColor).rgb() * v(PbrProperty::SheenFactor).scalar() != Vec3::ZERO {
            out.push("sheen");
        }
        if self.emission().max_element() > 1.0 {
            out.push("emission above 1");
        }
        out
    }

    /// Sets `factor` as ufbx's `ufbxi_update_factor` does when the file stores none: 1 where
    /// `color` is stored and its RGB is not all zero, else 0.
    pub fn update_factor(&mut self, factor: PbrProperty, color: PbrProperty) {
        if self.get(factor).has_value {
            return;
        }
        let c = self.get(color);
        let on = c.has_value && c.value.truncate() != Vec3::ZERO;
        self.get_mut(factor).value = Vec4::new(if on { 1.0 } else { 0.0 }, 0.0, 0.0, 0.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phong_losses_name_what_phong_has_no_place_for() {
        // A Phong model loses nothing; a PBR one with metalness 1, IOR 1.5 (the default: not
        // lost), clearcoat 0.5 and emission 2 × white loses metalness, clearcoat, emission.
        let mut p = Pbr::new(ShadingModel::Phong);
        *p.get_mut(PbrProperty::Metalness) = PbrValue::stored(Vec4::X);
        assert!(p.phong_losses().is_empty());
        p.model = ShadingModel::OpenPbr;
        *p.get_mut(PbrProperty::SpecularIor) = PbrValue::stored(Vec4::X * 1.5);
        *p.get_mut(PbrProperty::CoatFactor) = PbrValue::stored(Vec4::X * 0.5);
        *p.get_mut(PbrProperty::EmissionColor) = PbrValue::stored(Vec4::ONE);
        *p.get_mut(PbrProperty::EmissionFactor) = PbrValue::stored(Vec4::X * 2.0);
        assert_eq!(p.phong_losses(), ["metalness", "clearcoat", "emission above 1"]);
    }

    #[test]
    fn a_missing_factor_is_one_for_a_coloured_value_and_zero_for_black() {
        // ufbx `ufbxi_update_factor`: only RGB counts (W is 1 for colours).
        let mut p = Pbr::new(ShadingModel::Phong);
        *p.get_mut(PbrProperty::BaseColor) = PbrValue::stored(Vec4::new(0.0, 0.0, 0.0, 1.0));
        *p.get_mut(PbrProperty::EmissionColor) = PbrValue::stored(Vec4::new(0.0, 0.5, 0.0, 1.0));
        p.update_factor(PbrProperty::BaseFactor, PbrProperty::BaseColor);
        p.update_factor(PbrProperty::EmissionFactor, PbrProperty::EmissionColor);
        assert_eq!(p.get(PbrProperty::BaseFactor).scalar(), 0.0);
        assert_eq!(p.get(PbrProperty::EmissionFactor).scalar(), 1.0);
        assert!(!p.get(PbrProperty::EmissionFactor).has_value);
    }
}

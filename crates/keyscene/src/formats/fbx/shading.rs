//! The per-shading-model property tables of FBX materials, as ufbx reads them
//! (`ufbxi_shader_pbr_mappings` in ufbx.c): the reader fills a material's
//! [`Pbr`](crate::scene::Pbr) from them (`import/pbr.rs`), the writer writes a PBR material back
//! under the same names (`export/pbr.rs`).

use crate::scene::{PbrProperty as P, ShadingModel};

/// Table entry flag: W is 1 unless the property stores four numbers
/// (`UFBXI_SHADER_MAPPING_DEFAULT_W_1`).
pub(crate) const W1: u8 = 1;
/// Table entry flag: one stored number is copied to Y and Z
/// (`UFBXI_SHADER_MAPPING_WIDEN_TO_RGB`).
pub(crate) const WIDEN: u8 = 2;
/// Table entry flag: the number multiplies the value read so far
/// (`UFBXI_SHADER_MAPPING_MULTIPLY_VALUE`).
pub(crate) const MUL: u8 = 4;
/// Table entry flag: Phong shininess to roughness, `1 − √x ÷ 10`, negative or NaN to 0
/// (`ufbxi_mat_transform_unknown_shininess`).
pub(crate) const SHININESS: u8 = 8;
/// Table entry flag: the number is replaced by `1 − x` before the W and widening flags apply
/// (`ufbxi_mat_transform_blender_opacity`: Blender's `TransparencyFactor` to opacity).
pub(crate) const INVERT: u8 = 16;

/// One table entry: the PBR value, flags, property name.
pub(crate) type Entry = (P, u8, &'static str);

/// ufbx `ufbxi_fbx_phong_shader_pbr_mapping` (also the unknown model's).
const PHONG: &[Entry] = &[
    (P::BaseColor, W1, "Diffuse"),
    (P::BaseColor, W1, "DiffuseColor"),
    (P::BaseFactor, 0, "DiffuseFactor"),
    (P::SpecularColor, W1, "Specular"),
    (P::SpecularColor, W1, "SpecularColor"),
    (P::SpecularFactor, 0, "SpecularFactor"),
    (P::Roughness, SHININESS, "Shininess"),
    (P::Roughness, SHININESS, "ShininessExponent"),
    (P::TransmissionColor, W1, "Transparent"),
    (P::TransmissionColor, W1, "TransparentColor"),
    (P::TransmissionFactor, 0, "TransparentFactor"),
    (P::TransmissionFactor, 0, "TransparencyFactor"),
    (P::EmissionColor, W1, "Emissive"),
    (P::EmissionColor, W1, "EmissiveColor"),
    (P::EmissionFactor, 0, "EmissiveFactor"),
    (P::NormalMap, 0, "NormalMap"),
];

/// ufbx `ufbxi_fbx_lambert_shader_pbr_mapping`.
const LAMBERT: &[Entry] = &[
    (P::BaseColor, W1, "Diffuse"),
    (P::BaseColor, W1, "DiffuseColor"),
    (P::BaseFactor, 0, "DiffuseFactor"),
    (P::TransmissionColor, W1, "Transparent"),
    (P::TransmissionColor, W1, "TransparentColor"),
    (P::TransmissionFactor, 0, "TransparentFactor"),
    (P::TransmissionFactor, 0, "TransparencyFactor"),
    (P::EmissionColor, W1, "Emissive"),
    (P::EmissionColor, W1, "EmissiveColor"),
    (P::EmissionFactor, 0, "EmissiveFactor"),
    (P::NormalMap, 0, "NormalMap"),
];

/// ufbx `ufbxi_osl_standard_shader_pbr_mapping` (the values the model keeps).
const OSL_STANDARD: &[Entry] = &[
    (P::BaseFactor, 0, "base"),
    (P::BaseColor, W1, "base_color"),
    (P::Roughness, 0, "specular_roughness"),
    (P::Metalness, 0, "metalness"),
    (P::SpecularFactor, 0, "specular"),
    (P::SpecularColor, W1, "specular_color"),
    (P::SpecularIor, 0, "specular_IOR"),
    (P::TransmissionFactor, 0, "transmission"),
    (P::TransmissionColor, W1, "transmission_color"),
    (P::SheenFactor, 0, "sheen"),
    (P::SheenColor, W1, "sheen_color"),
    (P::SheenRoughness, 0, "sheen_roughness"),
    (P::CoatFactor, 0, "coat"),
    (P::CoatColor, W1, "coat_color"),
    (P::CoatRoughness, 0, "coat_roughness"),
    (P::CoatNormal, 0, "coat_normal"),
    (P::EmissionFactor, 0, "emission"),
    (P::EmissionColor, W1, "emission_color"),
    (P::Opacity, WIDEN, "opacity"),
    (P::NormalMap, 0, "NormalMap"),
    (P::NormalMap, 0, "normalCamera"),
];

/// ufbx `ufbxi_arnold_shader_pbr_mapping` (the values the model keeps).
const ARNOLD: &[Entry] = &[
    (P::BaseFactor, 0, "base"),
    (P::BaseColor, W1, "baseColor"),
    (P::Roughness, 0, "specularRoughness"),
    (P::Metalness, 0, "metalness"),
    (P::SpecularFactor, 0, "specular"),
    (P::SpecularColor, W1, "specularColor"),
    (P::SpecularIor, 0, "specularIOR"),
    (P::TransmissionFactor, 0, "transmission"),
    (P::TransmissionColor, W1, "transmissionColor"),
    (P::SheenFactor, 0, "sheen"),
    (P::SheenColor, W1, "sheenColor"),
    (P::SheenRoughness, 0, "sheenRoughness"),
    (P::CoatFactor, 0, "coat"),
    (P::CoatColor, W1, "coatColor"),
    (P::CoatRoughness, 0, "coatRoughness"),
    (P::CoatNormal, 0, "coatNormal"),
    (P::EmissionFactor, 0, "emission"),
    (P::EmissionColor, W1, "emissionColor"),
    (P::Opacity, WIDEN, "opacity"),
    (P::NormalMap, 0, "NormalMap"),
    (P::NormalMap, 0, "normalCamera"),
];

/// ufbx `ufbxi_3ds_max_physical_material_pbr_mapping` (the values the model keeps).
const MAX_PHYSICAL: &[Entry] = &[
    (P::BaseFactor, 0, "base_weight"),
    (P::BaseColor, W1, "base_color"),
    (P::Roughness, 0, "roughness"),
    (P::Metalness, 0, "metalness"),
    (P::SpecularFactor, 0, "reflectivity"),
    (P::SpecularColor, W1, "refl_color"),
    // Not a typo: 3ds Max's Physical Material has one IOR for reflection and refraction.
    (P::SpecularIor, 0, "trans_ior"),
    (P::TransmissionFactor, 0, "transparency"),
    (P::TransmissionColor, W1, "trans_color"),
    (P::CoatFactor, 0, "coat"),
    (P::CoatFactor, 0, "coating"),
    (P::CoatColor, W1, "coat_color"),
    (P::CoatRoughness, 0, "coat_rough"),
    (P::CoatRoughness, 0, "coat_roughness"),
    (P::CoatNormal, 0, "coat_bump"),
    (P::CoatNormal, 0, "clearcoat_bump_map_amt"),
    (P::EmissionFactor, 0, "emission"),
    (P::EmissionColor, W1, "emit_color"),
    (P::Opacity, WIDEN, "cutout"),
    (P::NormalMap, 0, "bump"),
    (P::NormalMap, 0, "bump_map_amt"),
];

/// ufbx `ufbxi_3ds_max_pbr_metal_rough_pbr_mapping` (the values the model keeps).
const MAX_PBR_METAL_ROUGH: &[Entry] = &[
    (P::BaseColor, W1, "base_color"),
    (P::BaseColor, W1, "baseColor"),
    (P::Roughness, 0, "roughness"),
    (P::Roughness, 0, "Roughness_Map"),
    (P::Metalness, 0, "metalness"),
    (P::AmbientOcclusion, 0, "ao"),
    (P::NormalMap, 0, "norm"),
    (P::EmissionColor, W1, "emit_color"),
    (P::Opacity, WIDEN, "opacity"),
];

/// ufbx `ufbxi_3ds_max_pbr_spec_gloss_pbr_mapping` (the values the model keeps): its
/// `glossiness` is read as roughness, then moved by the `useGlossiness` switch.
const MAX_PBR_SPEC_GLOSS: &[Entry] = &[
    (P::BaseColor, W1, "base_color"),
    (P::BaseColor, W1, "baseColor"),
    (P::SpecularColor, W1, "Specular"),
    (P::SpecularColor, W1, "specular"),
    (P::Roughness, 0, "glossiness"),
    (P::AmbientOcclusion, 0, "ao"),
    (P::NormalMap, 0, "norm"),
    (P::EmissionColor, W1, "emit_color"),
    (P::Opacity, WIDEN, "opacity"),
];

/// ufbx `ufbxi_gltf_material_pbr_mapping` (3ds Max glTF Material; the values kept).
const MAX_GLTF: &[Entry] = &[
    (P::BaseColor, W1, "main|baseColor"),
    (P::Roughness, 0, "main|roughness"),
    (P::Metalness, 0, "main|metalness"),
    (P::NormalMap, 0, "main|normal"),
    (P::AmbientOcclusion, 0, "main|ambientOcclusion"),
    (P::EmissionColor, W1, "main|emission"),
    (P::EmissionColor, W1, "main|emissionColor"),
    (P::Opacity, WIDEN, "main|Alpha"),
    (P::CoatFactor, 0, "extension|clearcoat"),
    (P::CoatRoughness, 0, "extension|clearcoatRoughness"),
    (P::CoatNormal, 0, "extension|clearcoatNormal"),
    (P::SheenColor, W1, "extension|sheenColor"),
    (P::SheenRoughness, 0, "extension|sheenRoughness"),
    (P::SpecularFactor, 0, "extension|specular"),
    (P::SpecularFactor, 0, "extension|Specular"),
    (P::SpecularColor, W1, "extension|specularcolor"),
    (P::SpecularColor, W1, "extension|specularColor"),
    (P::TransmissionFactor, 0, "extension|transmission"),
    (P::SpecularIor, 0, "extension|indexOfRefraction"),
];

/// ufbx `ufbxi_openpbr_material_pbr_mapping` (the values the model keeps).
const OPENPBR: &[Entry] = &[
    (P::BaseFactor, 0, "base_weight"),
    (P::BaseColor, W1, "base_color"),
    (P::Roughness, 0, "specular_roughness"),
    (P::Metalness, 0, "base_metalness"),
    (P::SpecularFactor, 0, "specular_weight"),
    (P::SpecularColor, W1, "specular_color"),
    (P::SpecularIor, 0, "specular_ior"),
    (P::TransmissionFactor, 0, "transmission_weight"),
    (P::TransmissionColor, W1, "transmission_color"),
    (P::CoatFactor, 0, "coat_weight"),
    (P::CoatColor, W1, "coat_color"),
    (P::CoatRoughness, 0, "coat_roughness"),
    (P::CoatNormal, 0, "coat_normal_map"),
    (P::SheenFactor, 0, "fuzz_weight"),
    (P::SheenColor, W1, "fuzz_color"),
    (P::SheenRoughness, 0, "fuzz_roughness"),
    (P::EmissionFactor, 0, "emission_weight"),
    (P::EmissionFactor, MUL, "emission_luminance"),
    (P::EmissionColor, W1, "emission_color"),
    (P::NormalMap, 0, "bump"),
    (P::NormalMap, 0, "bump_map_amt"),
    (P::CoatNormal, 0, "coat_bump"),
    (P::CoatNormal, 0, "coat_bump_map_amt"),
    (P::Opacity, WIDEN, "geometry_opacity"),
];

/// ufbx `ufbxi_shaderfx_graph_pbr_mapping`: the names of Maya's Stingray PBS preset.
const STINGRAY_PBS: &[Entry] = &[
    (P::BaseColor, W1, "color"),
    (P::BaseColor, W1, "base_color"),
    (P::Roughness, 0, "roughness"),
    (P::Metalness, 0, "metallic"),
    (P::NormalMap, 0, "normal"),
    (P::EmissionFactor, 0, "emissive_intensity"),
    (P::EmissionColor, W1, "emissive"),
    (P::AmbientOcclusion, 0, "ao"),
];

/// ufbx `ufbxi_blender_phong_shader_pbr_mapping`: the Phong properties Blender's FBX exporter
/// (add-on 4.12 and later) writes from a Principled BSDF — `DiffuseColor` base colour,
/// `TransparencyFactor` = 1 − alpha, `EmissiveFactor` emission strength, `EmissiveColor`,
/// `Shininess`/`ShininessExponent` = ((1 − roughness) · 10)², `ReflectionFactor` metallic,
/// `NormalMap`.
const BLENDER_PHONG: &[Entry] = &[
    (P::BaseColor, W1, "DiffuseColor"),
    (P::Opacity, WIDEN | INVERT, "TransparencyFactor"),
    (P::EmissionFactor, 0, "EmissiveFactor"),
    (P::EmissionColor, W1, "EmissiveColor"),
    (P::Roughness, SHININESS, "Shininess"),
    (P::Roughness, SHININESS, "ShininessExponent"),
    (P::Metalness, 0, "ReflectionFactor"),
    (P::NormalMap, 0, "NormalMap"),
];

/// A roughness-as-glossiness switch: the stored roughness value and map (`.1`: 0 the base
/// layer's, 1 the coat's) are glossiness when property `.2` is on — non-zero, or with `.0`
/// between 0.5 and 1.5 (ufbx `UFBXI_SHADER_FEATURE_IF_AROUND_1`).
pub(crate) type Switch = (bool, usize, &'static str);

/// How one shading model is read: its table, name prefix, the names of its maps and map
/// switches (`prefix`+`name`+`suffix`), its roughness switches.
pub(crate) struct Model {
    /// The table.
    pub entries: &'static [Entry],
    /// The prefix of every name (3ds Max models without an `Implementation`).
    pub prefix: &'static str,
    /// Prefix and suffix of the name of a value's map property, looked at first.
    pub map: Option<(&'static str, &'static str)>,
    /// Prefix and suffix of the name of a value's map switch.
    pub map_on: Option<(&'static str, &'static str)>,
    /// The roughness-as-glossiness switches.
    pub switches: &'static [Switch],
}

/// The reading of `model` (ufbx `ufbxi_shader_pbr_mappings`). `shader`: the material has an
/// `Implementation` (the 3ds Max prefixes apply only without one).
pub(crate) fn model(model: ShadingModel, shader: bool) -> Model {
    let max = |prefix: &'static str| if shader { "" } else { prefix };
    let plain = |entries| Model { entries, prefix: "", map: None, map_on: None, switches: &[] };
    match model {
        ShadingModel::Lambert => plain(LAMBERT),
        ShadingModel::Unknown | ShadingModel::Phong | ShadingModel::Gltf => plain(PHONG),
        ShadingModel::BlenderPhong => plain(BLENDER_PHONG),
        ShadingModel::OslStandardSurface => plain(OSL_STANDARD),
        ShadingModel::ArnoldStandardSurface => plain(ARNOLD),
        ShadingModel::MaxPhysical => Model {
            entries: MAX_PHYSICAL,
            prefix: max("3dsMax|Parameters|"),
            map: Some(("", "_map")),
            map_on: Some(("", "_map_on")),
            switches: &[(false, 0, "roughness_inv"), (false, 1, "coat_roughness_inv")],
        },
        ShadingModel::MaxPbrMetalRough | ShadingModel::MaxPbrSpecGloss => Model {
            entries: if model == ShadingModel::MaxPbrMetalRough {
                MAX_PBR_METAL_ROUGH
            } else {
                MAX_PBR_SPEC_GLOSS
            },
            prefix: max("3dsMax|main|"),
            map: Some(("", "_map")),
            map_on: None,
            switches: &[(true, 0, "useGlossiness")],
        },
        ShadingModel::MaxGltf => Model {
            entries: MAX_GLTF,
            prefix: max("3dsMax|"),
            map: Some(("", "Map")),
            map_on: None,
            switches: &[],
        },
        ShadingModel::OpenPbr => Model {
            entries: OPENPBR,
            prefix: max("3dsMax|Parameters|"),
            map: Some(("", "_map")),
            map_on: Some(("", "_map_on")),
            switches: &[],
        },
        ShadingModel::StingrayPbs => Model {
            entries: STINGRAY_PBS,
            prefix: "",
            map: Some(("TEX_", "_map")),
            map_on: Some(("use_", "_map")),
            switches: &[],
        },
    }
}

/// The 3ds Max class ids (`3dsMax|ClassIDa`, `3dsMax|ClassIDb`) ufbx recognises.
pub(crate) const MAX_CLASSES: &[(u32, u32, ShadingModel)] = &[
    (0x3d6b_1cec, 0xdead_c001, ShadingModel::MaxPhysical),
    (0xf155_1e33, 0x37fb_1337, ShadingModel::OpenPbr),
    (0x3842_0192, 0x45fe_4e1b, ShadingModel::MaxGltf),
    (0xd00f_1e00, 0xbe77_e500, ShadingModel::MaxPbrMetalRough),
    (0xd00f_1e00, 0x01db_ad33, ShadingModel::MaxPbrSpecGloss),
];

/// Name-to-name bindings of one `BindingTable`: (shader property, material property), sorted
/// by shader property, file order among equals (ufbx `ufbxi_read_binding_table`).
pub(crate) type Bindings<'d> = Vec<(&'d str, &'d str)>;

/// The `RenderAPI` of the `Implementation` of a shader model (ufbx `ufbxi_finalize_scene`), or
/// `None` for models that have none.
pub(crate) fn render_api(model: ShadingModel) -> Option<&'static str> {
    match model {
        ShadingModel::ArnoldStandardSurface => Some("ARNOLD_SHADER_ID"),
        ShadingModel::OslStandardSurface => Some("OSL"),
        ShadingModel::StingrayPbs => Some("SFX_PBS_SHADER"),
        _ => None,
    }
}

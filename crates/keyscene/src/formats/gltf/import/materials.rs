//! glTF materials and textures → scene materials and texture maps: the writer's mapping
//! inverted.

use std::path::{Path, PathBuf};

use glam::{Vec2, Vec3, Vec4};

use super::percent_decode;
use crate::scene::{
    MapSlot, Material, Pbr, PbrProperty, PbrValue, ShadingModel, TextureChannel, TextureMap,
    UvTransform, WrapMode,
};

/// The material, with the writer's mapping inverted: baseColor → diffuse and transparency,
/// roughness → shininess (`1 − roughness`), emissive → self-illumination relative to diffuse;
/// the members of its extras as user properties.
pub(super) fn material(m: &gltf::Material, base_dir: Option<&Path>) -> Material {
    let pbr = m.pbr_metallic_roughness();
    let c = pbr.base_color_factor();
    let diffuse = Vec3::new(c[0], c[1], c[2]);
    let emissive = Vec3::from_array(m.emissive_factor());
    let self_illumination = if diffuse.max_element() > 0.0 {
        (emissive.max_element() / diffuse.max_element()).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let mut maps = Vec::new();
    if let Some(info) = pbr.base_color_texture() {
        maps.push(texture_map(MapSlot::Diffuse, &info.texture(), uv_transform(&info), base_dir));
    }
    if let Some(info) = m.emissive_texture() {
        maps.push(texture_map(MapSlot::Emissive, &info.texture(), uv_transform(&info), base_dir));
    }
    if let Some(n) = m.normal_texture() {
        maps.push(texture_map(MapSlot::Bump, &n.texture(), UvTransform::default(), base_dir));
    }
    let physical = physical(m, base_dir);
    Material {
        pbr: physical,
        name: m.name().unwrap_or("").to_string(),
        diffuse,
        transparency: 1.0 - c[3],
        shininess: 1.0 - pbr.roughness_factor(),
        self_illumination,
        two_sided: m.double_sided(),
        maps,
        user_properties: m
            .extras()
            .as_ref()
            .and_then(|e| serde_json::from_str::<serde_json::Value>(e.get()).ok())
            .map(|v| crate::formats::gltf::extras::read_user_properties(&v))
            .unwrap_or_default(),
        ..Material::default()
    }
}

/// The `KHR_materials_*` extensions read back (those the writer writes, `export/pbr.rs`).
const EXTENSIONS: [&str; 6] = [
    "KHR_materials_emissive_strength",
    "KHR_materials_ior",
    "KHR_materials_specular",
    "KHR_materials_transmission",
    "KHR_materials_clearcoat",
    "KHR_materials_sheen",
];

/// The material's [`Pbr`] values (shading model [`ShadingModel::Gltf`]) when it carries what
/// the Phong fields cannot: a `metallicFactor` other than 0, a `metallicRoughnessTexture` or
/// `occlusionTexture`, or one of the [`EXTENSIONS`]; `None` otherwise, so that a plain glTF
/// material is written back as before. Base colour (RGBA) with factor 1, opacity = its
/// alpha, metalness and roughness (their map: the `metallicRoughnessTexture`, channels B and
/// G), emission = `emissiveFactor` × `emissiveStrength`, normal and occlusion maps (R), IOR
/// (1.5 unless `KHR_materials_ior` says otherwise), specular factor and colour, transmission,
/// clearcoat, sheen, each extension's defaults where it is absent.
fn physical(m: &gltf::Material, base_dir: Option<&Path>) -> Option<Pbr> {
    let mr = m.pbr_metallic_roughness();
    let ext = |name: &str, key: &str| m.extension_value(name).and_then(|v| v.get(key));
    let num = |name: &str, key: &str, def: f32| {
        ext(name, key).and_then(|v| v.as_f64()).map_or(def, |x| x as f32)
    };
    let rgb = |name: &str, key: &str, def: Vec3| {
        let c = ext(name, key).and_then(|v| v.as_array()).filter(|a| a.len() == 3);
        c.map_or(def, |a| Vec3::from_array([0, 1, 2].map(|i| a[i].as_f64().unwrap_or(0.0) as f32)))
    };
    let used = mr.metallic_factor() != 0.0
        || mr.metallic_roughness_texture().is_some()
        || m.occlusion_texture().is_some()
        || EXTENSIONS.iter().any(|e| m.extension_value(e).is_some());
    if !used {
        return None;
    }
    let mut pbr = Pbr::new(ShadingModel::Gltf);
    let mut set = |p: PbrProperty, v: Vec4| *pbr.get_mut(p) = PbrValue::stored(v);
    let c = mr.base_color_factor();
    set(PbrProperty::BaseColor, Vec4::from_array(c));
    set(PbrProperty::BaseFactor, Vec4::X);
    set(PbrProperty::Opacity, Vec4::new(c[3], c[3], c[3], 0.0));
    set(PbrProperty::Metalness, Vec4::X * mr.metallic_factor());
    set(PbrProperty::Roughness, Vec4::X * mr.roughness_factor());
    set(PbrProperty::EmissionColor, Vec3::from_array(m.emissive_factor()).extend(1.0));
    let strength = num("KHR_materials_emissive_strength", "emissiveStrength", 1.0);
    set(PbrProperty::EmissionFactor, Vec4::X * strength);
    set(PbrProperty::SpecularIor, Vec4::X * num("KHR_materials_ior", "ior", 1.5));
    set(
        PbrProperty::SpecularFactor,
        Vec4::X * num("KHR_materials_specular", "specularFactor", 1.0),
    );
    let sc = rgb("KHR_materials_specular", "specularColorFactor", Vec3::ONE);
    set(PbrProperty::SpecularColor, sc.extend(1.0));
    let t = num("KHR_materials_transmission", "transmissionFactor", 0.0);
    set(PbrProperty::TransmissionFactor, Vec4::X * t);
    set(PbrProperty::TransmissionColor, Vec4::ONE);
    set(PbrProperty::CoatFactor, Vec4::X * num("KHR_materials_clearcoat", "clearcoatFactor", 0.0));
    let cr = num("KHR_materials_clearcoat", "clearcoatRoughnessFactor", 0.0);
    set(PbrProperty::CoatRoughness, Vec4::X * cr);
    let sheen = rgb("KHR_materials_sheen", "sheenColorFactor", Vec3::ZERO);
    set(PbrProperty::SheenColor, sheen.extend(1.0));
    set(PbrProperty::SheenFactor, Vec4::X * if sheen == Vec3::ZERO { 0.0 } else { 1.0 });
    let sr = num("KHR_materials_sheen", "sheenRoughnessFactor", 0.0);
    set(PbrProperty::SheenRoughness, Vec4::X * sr);
    let mut tex = |p: PbrProperty, t: TextureMap, channel: TextureChannel| {
        let v = pbr.get_mut(p);
        v.texture = Some(t);
        v.channel = channel;
    };
    if let Some(info) = mr.base_color_texture() {
        let t = texture_map(MapSlot::Diffuse, &info.texture(), uv_transform(&info), base_dir);
        tex(PbrProperty::BaseColor, t, TextureChannel::Rgb);
    }
    if let Some(info) = mr.metallic_roughness_texture() {
        let t = texture_map(MapSlot::Shininess, &info.texture(), uv_transform(&info), base_dir);
        tex(PbrProperty::Roughness, t.clone(), TextureChannel::G);
        tex(
            PbrProperty::Metalness,
            TextureMap { slot: MapSlot::Reflection, ..t },
            TextureChannel::B,
        );
    }
    if let Some(info) = m.emissive_texture() {
        let t = texture_map(MapSlot::Emissive, &info.texture(), uv_transform(&info), base_dir);
        tex(PbrProperty::EmissionColor, t, TextureChannel::Rgb);
    }
    if let Some(n) = m.normal_texture() {
        let t = texture_map(MapSlot::Bump, &n.texture(), UvTransform::default(), base_dir);
        tex(PbrProperty::NormalMap, t, TextureChannel::Rgb);
    }
    if let Some(o) = m.occlusion_texture() {
        let t = texture_map(MapSlot::Reflection, &o.texture(), UvTransform::default(), base_dir);
        tex(PbrProperty::AmbientOcclusion, t, TextureChannel::R);
    }
    Some(pbr)
}

/// A map's UV transform from its KHR_texture_transform: the writer's mapping (`export/materials.rs`
/// `texture_info`) inverted.
fn uv_transform(info: &gltf::texture::Info) -> UvTransform {
    info.texture_transform().map_or(UvTransform::default(), |t| {
        let th = -f64::from(t.rotation());
        let [sx, sy] = t.scale();
        let [ox, oy] = t.offset().map(f64::from);
        let sy64 = f64::from(sy);
        UvTransform {
            scale: Vec2::new(sx, sy),
            offset: Vec2::new((ox + sy64 * th.sin()) as f32, (1.0 - oy - sy64 * th.cos()) as f32),
            rotation_degrees: th.to_degrees() as f32,
        }
    })
}

/// A texture map of `slot` for a glTF texture: the image's file (URI, or the image's name when
/// embedded), the sampler's wrapS/wrapT as [`TextureMap::wrap`], and its wrap mode as 3DS
/// tiling bits (`export/materials.rs` `wrap_mode` inverted: CLAMP_TO_EDGE → no tile 0x10,
/// MIRRORED_REPEAT → mirror 0x2; wrapS decides).
fn texture_map(
    slot: MapSlot,
    tex: &gltf::Texture,
    uv_transform: UvTransform,
    base_dir: Option<&Path>,
) -> TextureMap {
    let image = tex.source();
    let (file, resolved) = match image.source() {
        gltf::image::Source::Uri { uri, .. } if !uri.starts_with("data:") => {
            let file = percent_decode(uri);
            let resolved = base_dir.and_then(|d| resolve(d, &file));
            (file, resolved)
        }
        _ => (
            image.name().map(str::to_string).unwrap_or_else(|| format!("image{}", image.index())),
            None,
        ),
    };
    use gltf::texture::WrappingMode as W;
    let sampler = tex.sampler();
    let flags = match sampler.wrap_s() {
        W::ClampToEdge => 0x10,
        W::MirroredRepeat => 0x2,
        W::Repeat => 0,
    };
    let wrap = [sampler.wrap_s(), sampler.wrap_t()].map(|w| match w {
        W::ClampToEdge => WrapMode::Clamp,
        W::MirroredRepeat => WrapMode::Mirror,
        W::Repeat => WrapMode::Repeat,
    });
    TextureMap { slot, file, resolved, embedded: None, strength: 1.0, uv_transform, flags, wrap }
}

/// `dir/file`, or the entry of `dir` whose name matches `file` case-insensitively.
fn resolve(dir: &Path, file: &str) -> Option<PathBuf> {
    let direct = dir.join(file);
    if direct.is_file() {
        return Some(direct);
    }
    let (sub, name) = match file.rsplit_once('/') {
        Some((s, n)) => (dir.join(s), n),
        None => (dir.to_path_buf(), file),
    };
    std::fs::read_dir(sub).ok()?.flatten().map(|e| e.path()).find(|p| {
        p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.eq_ignore_ascii_case(name))
    })
}

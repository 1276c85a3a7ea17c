//! glTF materials and textures → scene materials and texture maps: the writer's mapping
//! inverted.

use std::path::{Path, PathBuf};

use glam::{Vec2, Vec3};

use super::percent_decode;
use crate::scene::{MapSlot, Material, TextureMap, UvTransform, WrapMode};

/// The material, with the writer's mapping inverted: baseColor → diffuse and transparency,
/// roughness → shininess (`1 − roughness`), emissive → self-illumination relative to diffuse.
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
    Material {
        name: m.name().unwrap_or("").to_string(),
        diffuse,
        transparency: 1.0 - c[3],
        shininess: 1.0 - pbr.roughness_factor(),
        self_illumination,
        two_sided: m.double_sided(),
        maps,
        ..Material::default()
    }
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

//! [`Material`](crate::scene::Material)s from `MAT_ENTRY` chunks, and their
//! [`TextureMap`](crate::scene::TextureMap)s, found next to the scene case-insensitively.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use glam::{Vec2, Vec3};

use super::super::chunks::{id, File3ds, MaterialEntry};
use super::Builder;
use crate::scene::{MapSlot, Material, TextureMap, UvTransform};

impl<'f> Builder<'_, 'f> {
    pub(super) fn materials(&mut self, file: &File3ds<'_>, base_dir: Option<&Path>) {
        let needs_files = file.materials.iter().any(|m| m.maps.iter().any(|t| !t.name.is_empty()));
        let files = match base_dir {
            Some(dir) if needs_files => files_by_lower_name(dir),
            _ => HashMap::new(),
        };
        for m in &file.materials {
            let material = convert_material(m, &files);
            self.scene.materials.push(material);
        }
    }
}

/// Files in `dir` by lower-cased name, for case-insensitive texture lookup.
fn files_by_lower_name(dir: &Path) -> HashMap<String, PathBuf> {
    let mut out = HashMap::new();
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            if let Some(name) = e.file_name().to_str() {
                out.insert(name.to_lowercase(), e.path());
            }
        }
    }
    out
}

fn convert_material(m: &MaterialEntry, files: &HashMap<String, PathBuf>) -> Material {
    let d = Material::default();
    let maps = m
        .maps
        .iter()
        .map(|t| TextureMap {
            slot: match t.id {
                id::MAT_OPACMAP => MapSlot::Opacity,
                id::MAT_BUMPMAP => MapSlot::Bump,
                id::MAT_SPECMAP => MapSlot::Specular,
                id::MAT_SHINMAP => MapSlot::Shininess,
                id::MAT_REFLMAP => MapSlot::Reflection,
                id::MAT_SELFIMAP => MapSlot::Emissive,
                _ => MapSlot::Diffuse,
            },
            file: t.name.clone(),
            resolved: (!t.name.is_empty())
                .then(|| files.get(&t.name.to_lowercase()).cloned())
                .flatten(),
            embedded: None,
            strength: t.percent.unwrap_or(1.0),
            uv_transform: UvTransform {
                scale: Vec2::from(t.scale),
                offset: Vec2::from(t.offset),
                rotation_degrees: t.rotation,
            },
            flags: t.tiling,
            wrap: Default::default(),
        })
        .collect();
    Material {
        name: m.name.clone(),
        ambient: m.ambient.map(Vec3::from).unwrap_or(d.ambient),
        diffuse: m.diffuse.map(Vec3::from).unwrap_or(d.diffuse),
        specular: m.specular.map(Vec3::from).unwrap_or(d.specular),
        shininess: m.shininess.unwrap_or(d.shininess),
        shininess_strength: m.shin2pct.unwrap_or(d.shininess_strength),
        transparency: m.transparency.unwrap_or(d.transparency),
        self_illumination: m.self_illum.unwrap_or(d.self_illumination),
        two_sided: m.two_sided,
        wireframe: m.wire,
        maps,
        ..Material::default()
    }
}

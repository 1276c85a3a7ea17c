//! Texture maps → `Texture` and `Video` objects, connected as the FBX SDK connects them
//! (Maya's and Marvelous Designer's files in the corpus, `marvelous_quad_7700_ascii.fbx`):
//!
//! - one `Video` (class `Clip`, `Type: "Clip"`) per image file name: `Path`/`RelPath` in
//!   Properties70, `Filename`, `RelativeFilename`, and `Content` (the image bytes, a raw
//!   value; base64 in ASCII) when the source embedded the image or [`WriteOptions::embed`]
//!   asks for it and the file is found beside the source;
//! - one `Texture` (`Type: "TextureVideoClip"`, Version 202) per image and wrap mode, with
//!   `Media` (the video's name), `FileName` (the image's path where the reader found it, else
//!   the name as stored), `RelativeFilename` (the name as the source stores it: what keyscene's
//!   reader and ufbx's `relative_filename` give back), `WrapModeU`/`WrapModeV` (0 repeat, 1
//!   clamp) and `UVSet` left to the default set;
//! - `C: "OO", video, texture` and `C: "OP", texture, material, "<property>"`, the property
//!   by [`property_of`].
//!
//! Not carried over (reported): UV transforms other than identity (keyscene's FBX reader does
//! not read FBX texture transforms either, so none could be checked) and mirrored wrapping
//! (FBX has no such mode; written as repeat).

use std::collections::HashMap;
use std::sync::Arc;

use super::{name_class, p, p_enum, props70, Builder, WriteOptions};
use crate::formats::fbx::write::{Record, Value};
use crate::scene::{MapSlot, Material, TextureMap, UvTransform, WrapMode};

/// The material property a map of `slot` connects to, as the FBX SDK names them and as
/// keyscene's reader and ufbx's `ufbx_material.fbx` maps read them back: `DiffuseColor`,
/// `TransparentColor`, `NormalMap` (a bump map of a 3DS source is a height map; FBX `Bump`
/// would say so, but the scene model keeps one slot for both and glTF/3DA sources mean normal
/// maps — ufbx and our reader read either back as the same slot), `SpecularColor`,
/// `ShininessExponent`, `ReflectionColor`, `EmissiveColor`.
pub fn property_of(slot: MapSlot) -> &'static str {
    match slot {
        MapSlot::Diffuse => "DiffuseColor",
        MapSlot::Opacity => "TransparentColor",
        MapSlot::Bump => "NormalMap",
        MapSlot::Specular => "SpecularColor",
        MapSlot::Shininess => "ShininessExponent",
        MapSlot::Reflection => "ReflectionColor",
        MapSlot::Emissive => "EmissiveColor",
    }
}

/// The textures and videos written so far (each image once).
#[derive(Default)]
pub(super) struct Textures {
    /// Image file name → `Video` id and whether it holds `Content`.
    videos: HashMap<String, (i64, bool)>,
    /// (image file name, wrap U, wrap V) → `Texture` id.
    textures: HashMap<(String, i32, i32), i64>,
    /// Maps with a UV transform other than identity (not written).
    pub uv_transforms: usize,
    /// Maps with mirrored wrapping (written as repeat).
    pub mirrored: usize,
    /// Images asked to be embedded whose file could not be read (name and reason).
    pub unreadable: Vec<String>,
    /// `Video`s written with `Content`.
    pub embedded: usize,
}

impl Textures {
    /// `Texture`s written.
    pub fn textures(&self) -> usize {
        self.textures.len()
    }

    /// `Video`s written.
    pub fn videos(&self) -> usize {
        self.videos.len()
    }
}

fn wrap_code(w: WrapMode, mirrored: &mut usize) -> i32 {
    match w {
        WrapMode::Repeat => 0,
        WrapMode::Clamp => 1,
        WrapMode::Mirror => {
            *mirrored += 1;
            0
        }
    }
}

/// The image bytes to put in `Content`: the source's embedded bytes, else with `embed` the
/// file the reader found, read now (an unreadable file is noted, not an error).
fn content(map: &TextureMap, embed: bool, unreadable: &mut Vec<String>) -> Option<Arc<[u8]>> {
    if let Some(b) = &map.embedded {
        return Some(b.clone());
    }
    if !embed {
        return None;
    }
    match &map.resolved {
        Some(path) => match std::fs::read(path) {
            Ok(b) => Some(b.into()),
            Err(e) => {
                unreadable.push(format!("{}: {e}", path.display()));
                None
            }
        },
        None => {
            unreadable.push(format!("{}: not found beside the source", map.file));
            None
        }
    }
}

impl Builder {
    /// Writes the maps of `material` (written as object `material_id`): a `Texture` (and its
    /// `Video`) per map unless written already for the same image, connected to the
    /// material's property for the map's slot (module docs).
    pub(super) fn material_textures(
        &mut self,
        material_id: i64,
        material: &Material,
        opts: &WriteOptions,
    ) {
        for map in &material.maps {
            self.material_map(material_id, map, property_of(map.slot), opts);
        }
    }

    /// Writes one map of a material (written as object `material_id`) connected to its
    /// property `prop` ([`Builder::material_textures`]); a map without file or image is
    /// skipped.
    pub(super) fn material_map(
        &mut self,
        material_id: i64,
        map: &TextureMap,
        prop: &str,
        opts: &WriteOptions,
    ) {
        if map.file.is_empty() && map.embedded.is_none() {
            return;
        }
        let mut tx = std::mem::take(&mut self.textures);
        if map.uv_transform != UvTransform::default() {
            tx.uv_transforms += 1;
        }
        let wrap =
            [wrap_code(map.wrap[0], &mut tx.mirrored), wrap_code(map.wrap[1], &mut tx.mirrored)];
        let video_name = map.file.clone();
        let video = match tx.videos.get(&map.file).copied() {
            // The image written already without bytes, and this map has them: they go
            // into that `Video` (each image once, embedded when any of its maps embeds).
            Some((id, false)) if map.embedded.is_some() => {
                let bytes = map.embedded.as_deref().unwrap_or_default().to_vec();
                let v = self
                    .objects
                    .iter_mut()
                    .rev()
                    .find(|r| r.name == "Video" && r.values.first() == Some(&Value::I64(id)));
                if let Some(v) = v {
                    v.push(Record::with("Content", vec![Value::Raw(bytes)]));
                    tx.embedded += 1;
                    tx.videos.insert(map.file.clone(), (id, true));
                }
                id
            }
            Some((id, _)) => id,
            None => {
                let id = self.id();
                let bytes = content(map, opts.embed, &mut tx.unreadable);
                self.objects.push(video_record(id, map, bytes.as_deref()));
                self.count("Video");
                tx.embedded += bytes.is_some() as usize;
                tx.videos.insert(map.file.clone(), (id, bytes.is_some()));
                id
            }
        };
        let key = (map.file.clone(), wrap[0], wrap[1]);
        let texture = match tx.textures.get(&key) {
            Some(&id) => id,
            None => {
                let id = self.id();
                self.objects.push(texture_record(id, map, &video_name, wrap));
                self.count("Texture");
                self.oo(video, id);
                tx.textures.insert(key, id);
                id
            }
        };
        self.op(texture, material_id, prop);
        self.textures = tx;
    }
}

impl Builder {
    /// Sets the report's texture counts and returns what the textures could not carry over,
    /// one line each (for [`super::Report::dropped`]).
    pub(super) fn texture_notes(&mut self) -> Vec<String> {
        let tx = &self.textures;
        self.report.textures = tx.textures();
        self.report.videos = (tx.videos(), tx.embedded);
        let mut notes = Vec::new();
        if tx.uv_transforms > 0 {
            notes.push(format!(
                "{} texture maps' UV transforms (scale, offset, rotation)",
                tx.uv_transforms
            ));
        }
        if tx.mirrored > 0 {
            notes.push(format!(
                "{} mirrored texture wrap modes (FBX has none; written as repeat)",
                tx.mirrored
            ));
        }
        for u in &tx.unreadable {
            notes.push(format!("embedded image bytes of {u}"));
        }
        notes
    }
}

/// The path a map's image was found at, else its name as stored.
fn file_name(map: &TextureMap) -> String {
    match &map.resolved {
        Some(p) => p.to_string_lossy().into_owned(),
        None => map.file.clone(),
    }
}

fn video_record(id: i64, map: &TextureMap, bytes: Option<&[u8]>) -> Record {
    let path = file_name(map);
    let mut v = Record::with(
        "Video",
        vec![Value::I64(id), name_class(&map.file, "Video"), Value::str("Clip")],
    )
    .child(Record::one("Type", "Clip"))
    .child(props70(vec![
        p("Path", "KString", "XRefUrl", "", vec![Value::str(&path)]),
        p("RelPath", "KString", "XRefUrl", "", vec![Value::str(&map.file)]),
    ]))
    .child(Record::one("UseMipMap", 0))
    .child(Record::one("Filename", path.as_str()))
    .child(Record::one("RelativeFilename", map.file.as_str()));
    if let Some(b) = bytes {
        v.push(Record::with("Content", vec![Value::Raw(b.to_vec())]));
    }
    v
}

fn texture_record(id: i64, map: &TextureMap, video_name: &str, wrap: [i32; 2]) -> Record {
    let mut media: Vec<u8> = b"Video::".to_vec();
    media.extend(video_name.bytes().filter(|&b| b != 0));
    let mut props = vec![p_enum("CurrentTextureBlendMode", 0)];
    if wrap[0] != 0 {
        props.push(p_enum("WrapModeU", wrap[0]));
    }
    if wrap[1] != 0 {
        props.push(p_enum("WrapModeV", wrap[1]));
    }
    let mut texture_name: Vec<u8> = b"Texture::".to_vec();
    texture_name.extend(map.file.bytes().filter(|&b| b != 0));
    Record::with("Texture", vec![Value::I64(id), name_class(&map.file, "Texture"), Value::str("")])
        .child(Record::one("Type", "TextureVideoClip"))
        .child(Record::one("Version", 202))
        .child(Record::with("TextureName", vec![Value::String(texture_name)]))
        .child(props70(props))
        .child(Record::with("Media", vec![Value::String(media)]))
        .child(Record::one("FileName", file_name(map)))
        .child(Record::one("RelativeFilename", map.file.as_str()))
        .child(Record::with("ModelUVTranslation", vec![Value::F64(0.0), Value::F64(0.0)]))
        .child(Record::with("ModelUVScaling", vec![Value::F64(1.0), Value::F64(1.0)]))
        .child(Record::one("Texture_Alpha_Source", "None"))
        .child(Record::with(
            "Cropping",
            vec![Value::I32(0), Value::I32(0), Value::I32(0), Value::I32(0)],
        ))
}

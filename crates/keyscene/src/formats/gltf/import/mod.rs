//! glTF document → [`Scene`], on the `gltf` crate (which parses and validates the JSON and the
//! GLB container); buffers are resolved here. One pass per glTF object, as the writer is split:
//! [`materials`] (materials and texture maps), [`cameras`] (cameras and lights), [`meshes`]
//! (primitives merged into one mesh each), [`skins`], [`nodes`] (the hierarchy, with skinned
//! meshes and keyscene's extras) and [`animation`] (channels to tracks).

use glam::DVec3;

use super::{base64, warning, Error, DEFAULT_READ_FPS};
use crate::scene::{AxisSystem, Metadata, Scene, Units, Warning};
use crate::ReadOptions;

mod animation;
mod cameras;
mod decompress;
mod materials;
mod meshes;
mod nodes;
mod skins;
mod visibility;

/// glTF-specific reading choices.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GltfReadOptions {
    /// Frames per second given to every animation: a glTF key at `t` seconds becomes frame
    /// `t · fps`. Default [`DEFAULT_READ_FPS`] (30, 3D Studio's rate).
    pub fps: f64,
}

impl Default for GltfReadOptions {
    fn default() -> Self {
        GltfReadOptions { fps: DEFAULT_READ_FPS }
    }
}

/// Reads a `.glb` or `.gltf` file with [`GltfReadOptions::default`] (30 fps).
pub fn read(bytes: &[u8], opts: &ReadOptions) -> Result<(Scene, Vec<Warning>), Error> {
    read_with(bytes, opts, &GltfReadOptions::default())
}

/// Reads a `.glb` or `.gltf` file into a scene.
///
/// External buffers and images are found relative to `opts.base_dir` (a `.gltf` with external
/// buffers and no `base_dir` is an error); `data:` URIs are decoded. The scene is +Y up,
/// metres, right-handed (`meta.axes`, `meta.units`), `meta.format` = `"gltf"`.
///
/// What becomes what: every glTF node is a scene node (TRS or matrix → translation, rotation,
/// scale), named by `name` unless keyscene's extras restore a source name/instance; a mesh's
/// primitives (triangles, strips and fans) are merged into one [`Mesh`](crate::scene::Mesh) with one material slot
/// per glTF material, POSITION/NORMAL/TEXCOORD_n (V flipped back up)/COLOR_0 per vertex;
/// perspective cameras keep `yfov` as a vertical FOV; KHR_lights_punctual lights become
/// lights (cone half angles → full hotspot/falloff degrees); animation channels become tracks
/// with key frame `t · fps` (snapped to a whole frame within f32 rounding): LINEAR → linear keys (slerp for rotations), STEP → step keys,
/// CUBICSPLINE → Hermite keys with tangents turned from per second to per frame (÷ fps;
/// the evaluator uses them for translation and scale and slerps rotation keys).
/// Skins become [`Skin`](crate::scene::Skin)s on the mesh (a mesh shown with two skins is
/// copied), influences from every `JOINTS_n`/`WEIGHTS_n` pair; morph targets become
/// [`MorphTarget`](crate::scene::MorphTarget)s named by the mesh's `extras.targetNames`, with
/// the mesh's `weights` as defaults; weight channels become `DeformPercent#k` property tracks
/// in percent. The writer's `_KEYSCENE_VERTEX` (written on request,
/// `WriteOptions::source_vertex_ids`) restores the source vertex order of all of them; without
/// it the vertices are glTF's.
///
/// Errors: [`Error::Limit`] past `opts.limits`; [`Error::Invalid`] (with the JSON place) for
/// a document the `gltf` crate refuses, a buffer shorter than it declares, a node with two
/// parents or a cycle, a skin or animation channel whose accessors fail the checks of
/// `docs/gltf.md` ("Reading files from elsewhere"). A primitive or vertex attribute whose
/// accessor fails them is left out with a warning instead.
///
/// A document whose JSON stops early is "truncated at byte N" (N: the file's length for a
/// `.gltf`, the JSON chunk's end for a GLB), with what it was inside; other JSON errors name
/// their line and column.
pub fn read_with(
    bytes: &[u8],
    opts: &ReadOptions,
    gopts: &GltfReadOptions,
) -> Result<(Scene, Vec<Warning>), Error> {
    if bytes.len() as u64 > opts.limits.max_bytes {
        return Err(Error::Limit {
            place: "file".into(),
            message: format!("{} bytes exceed the limit of {}", bytes.len(), opts.limits.max_bytes),
        });
    }
    let fps = if gopts.fps.is_finite() && gopts.fps > 0.0 { gopts.fps } else { DEFAULT_READ_FPS };
    let (mut root, blob, pointers) = document(bytes)?;
    let mut warnings = Vec::new();
    let mut buffers = buffers(&root, blob, opts, &mut warnings)?;
    decompress::decompress(&mut root, &mut buffers, opts.limits.max_bytes)?;
    let invalid_doc =
        |e: gltf::Error| Error::Invalid { place: "document".into(), message: e.to_string() };
    let document = gltf::Document::from_json(root).map_err(invalid_doc)?;
    let doc = &document;
    let max = opts.limits.max_elements;
    let check = |place: &str, n: usize| -> Result<(), Error> {
        if n as u64 > max {
            return Err(Error::Limit {
                place: place.into(),
                message: format!("{n} elements exceed the limit of {max}"),
            });
        }
        Ok(())
    };
    check("nodes", doc.nodes().len())?;
    check("accessors", doc.accessors().len())?;

    let mut scene = empty_scene(doc, fps);
    for m in doc.materials() {
        scene.materials.push(materials::material(&m, opts.base_dir.as_deref()));
    }
    for c in doc.cameras() {
        scene.cameras.push(cameras::camera(&c));
    }
    if let Some(lights) = doc.lights() {
        for l in lights {
            scene.lights.push(cameras::light(&l));
        }
    }
    let meshes = meshes::meshes(doc, &buffers, &mut scene, max, &mut warnings)?;
    nodes::nodes(doc, &buffers, &meshes, &mut scene, &mut warnings)?;
    scene
        .validate()
        .map_err(|e| Error::Invalid { place: "nodes".into(), message: e.to_string() })?;
    animation::animations(doc, &buffers, fps, max, &pointers, &mut scene, &mut warnings)?;
    Ok((scene, warnings))
}

/// The glTF JSON of a `.glb` or `.gltf` file (to be validated by the `gltf` crate once
/// [`decompress`] has made it plain glTF), the GLB's BIN chunk, and the `KHR_animation_pointer`
/// channels taken out of the JSON first ([`visibility::split_pointer_channels`]).
type Document = (gltf_json::Root, Option<Vec<u8>>, Vec<visibility::PointerChannel>);

fn document(bytes: &[u8]) -> Result<Document, Error> {
    let (json, blob) = if bytes.starts_with(b"glTF") {
        let (json, bin) = super::glb::split(bytes)?;
        (json, bin.map(<[u8]>::to_vec))
    } else {
        (bytes, None)
    };
    // Where the JSON starts in the file: after the GLB header and JSON chunk header.
    let json_start = if bytes.starts_with(b"glTF") { 20 } else { 0 };
    let split = visibility::split_pointer_channels(json);
    let (json, pointers) = match &split {
        Some((rest, pointers)) => (rest.as_slice(), pointers.clone()),
        None => (json, Vec::new()),
    };
    let root = gltf::Gltf::from_slice_without_validation(json)
        .map_err(|e| json_error(e, json.len() as u64, json_start))?
        .document
        .into_json();
    // gltf-json 1.4's validation looks up each primitive's POSITION accessor before checking
    // that the index exists (it panicked on such a file, found by fuzzing): check it first.
    for (m, mesh) in root.meshes.iter().enumerate() {
        for (p, prim) in mesh.primitives.iter().enumerate() {
            let pos = gltf_json::validation::Checked::Valid(gltf::Semantic::Positions);
            if let Some(i) = prim.attributes.get(&pos).filter(|i| i.value() >= root.accessors.len())
            {
                return Err(Error::Invalid {
                    place: format!("meshes[{m}] › primitives[{p}]"),
                    message: format!(
                        "POSITION names accessor {} of {}",
                        i.value(),
                        root.accessors.len()
                    ),
                });
            }
        }
    }
    Ok((root, blob, pointers))
}

/// Every buffer's bytes (the BIN chunk, a `data:` URI or a file: [`load_uri`]), each at least
/// as long as it declares; a buffer view past its buffer is a warning. An
/// `EXT_meshopt_compression` fallback buffer has no bytes ([`decompress`] moves its views).
fn buffers(
    root: &gltf_json::Root,
    blob: Option<Vec<u8>>,
    opts: &ReadOptions,
    warnings: &mut Vec<Warning>,
) -> Result<Vec<Vec<u8>>, Error> {
    let mut buffers: Vec<Vec<u8>> = Vec::new();
    for (i, b) in root.buffers.iter().enumerate() {
        let place = format!("buffers[{i}]");
        let data = match &b.uri {
            None if decompress::is_fallback(b) => {
                buffers.push(Vec::new());
                continue;
            }
            None => blob.clone().ok_or_else(|| Error::Invalid {
                place: place.clone(),
                message: "GLB has no BIN chunk".into(),
            })?,
            Some(uri) => load_uri(uri, opts, &place)?,
        };
        if (data.len() as u64) < b.byte_length.0 {
            return Err(Error::Invalid {
                place,
                message: format!("declares {} bytes but has {}", b.byte_length.0, data.len()),
            });
        }
        buffers.push(data);
    }
    // Every buffer view lies inside its buffer (glTF 2.0 §3.6.1), whether or not an accessor
    // this reader uses names it (image views are not read here): one that does not is a
    // warning, and an accessor reading it is refused as before.
    for (i, v) in root.buffer_views.iter().enumerate() {
        let len = buffers.get(v.buffer.value()).map_or(0, Vec::len) as u64;
        let compressed =
            v.extensions.as_ref().is_some_and(|e| e.others.contains_key(decompress::MESHOPT));
        let (offset, length) = (v.byte_offset.map_or(0, |o| o.0), v.byte_length.0);
        if !compressed && offset.checked_add(length).is_none_or(|end| end > len) {
            warnings.push(warning(
                format!("bufferViews[{i}]"),
                format!(
                    "byteOffset {offset} + byteLength {length} is past its buffer's {len} bytes"
                ),
            ));
        }
    }
    Ok(buffers)
}

/// The scene before any object is read: glTF's conventions (+Y up, metres, right-handed) and
/// the asset's generator.
fn empty_scene(doc: &gltf::Document, fps: f64) -> Scene {
    Scene {
        meta: Metadata {
            format: "gltf".into(),
            version: Some(2),
            units: Units::Metres(1.0),
            axes: AxisSystem::Y_UP_RIGHT_HANDED,
            frame_rate: Some(fps),
            frame_range: None,
            properties: doc
                .as_json()
                .asset
                .generator
                .iter()
                .map(|g| ("generator".to_string(), g.clone()))
                .collect(),
        },
        ..Scene::default()
    }
}

/// The bytes of a buffer URI: a `data:` URI decoded, else a file under `opts.base_dir`.
fn load_uri(uri: &str, opts: &ReadOptions, place: &str) -> Result<Vec<u8>, Error> {
    let invalid =
        |message: String| Error::Invalid { place: format!("{place} \"{}\"", short(uri)), message };
    if let Some(data) = base64::decode_data_uri(uri) {
        return data.ok_or_else(|| invalid("data URI is not valid base64".into()));
    }
    let Some(dir) = &opts.base_dir else {
        return Err(invalid("external buffer, but no base folder to resolve it in".into()));
    };
    let path = dir.join(percent_decode(uri));
    let len =
        std::fs::metadata(&path).map_err(|e| invalid(format!("{}: {e}", path.display())))?.len();
    if len > opts.limits.max_bytes {
        return Err(Error::Limit {
            place: place.into(),
            message: format!(
                "{} is {len} bytes, over the limit of {}",
                path.display(),
                opts.limits.max_bytes
            ),
        });
    }
    std::fs::read(&path).map_err(|e| invalid(format!("{}: {e}", path.display())))
}

fn short(uri: &str) -> String {
    if uri.len() > 40 {
        format!("{}…", &uri[..uri.char_indices().nth(40).map(|(i, _)| i).unwrap_or(uri.len())])
    } else {
        uri.to_string()
    }
}

/// Decodes `%XX` escapes (RFC 3986); malformed escapes are kept as they are.
pub(super) fn percent_decode(uri: &str) -> String {
    let b = uri.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            if let Ok(v) = u8::from_str_radix(&uri[i + 1..i + 3], 16) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

pub(super) fn vec3(v: [f32; 3]) -> DVec3 {
    DVec3::from_array(v.map(f64::from))
}

/// A JSON document that could not be read, in words: truncation (serde_json's "EOF while
/// parsing a string") as `the file is truncated at byte N: the JSON ends inside a string (line
/// L, column C)`; `json_start` is the document's offset in the file.
fn json_error(e: gltf::Error, json_len: u64, json_start: u64) -> Error {
    let gltf::Error::Deserialize(se) = &e else {
        return Error::Invalid { place: "document".into(), message: e.to_string() };
    };
    let (line, column) = (se.line(), se.column());
    let text = se.to_string();
    // serde_json words its messages "<what> at line L column C"; keep <what>.
    let what = text.rsplit_once(" at line ").map_or(text.as_str(), |(w, _)| w);
    let message = if se.classify() == serde_json::error::Category::Eof {
        let inside = what.strip_prefix("EOF while parsing ").unwrap_or("a value");
        let end = json_start + json_len;
        if json_start == 0 {
            format!(
                "the file is truncated at byte {end}: the JSON ends inside {inside} (line {line}, \
                 column {column})"
            )
        } else {
            format!(
                "the JSON chunk is truncated at byte {end}: it ends inside {inside} (line {line}, \
                 column {column})"
            )
        }
    } else {
        format!("not valid glTF JSON at line {line}, column {column}: {what}")
    };
    Error::Invalid { place: "document".into(), message }
}

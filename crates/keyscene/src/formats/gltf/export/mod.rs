//! [`Scene`] → glTF document and buffer. The conventions are documented on the module
//! [`super`]; this folder implements them as passes over one document being built ([`Out`]),
//! one file per glTF object, in the shape of Blender's glTF exporter (gather → convert →
//! write) and FBX2glTF (one builder per glTF resource):
//!
//! - [`nodes`]: the rest pose, the axis/joint root, one glTF node per scene node and the aim
//!   helpers of aimed cameras and lights; [`names`]: their names and extras;
//! - [`meshes`]: primitives, skin influences and morph targets; [`materials`] and
//!   [`textures`]: materials, textures, images and samplers ([`pbr`]: the materials of a PBR
//!   shading model, with their `KHR_materials_*` extensions); [`skins`]: joints and inverse
//!   bind matrices; [`cameras`]: cameras and KHR_lights_punctual lights;
//! - [`animation`]: channels and samplers, from the source keys ([`keyed`]) or resampled
//!   ([`sampling`]), by the key-keeping rules shared with the other writers
//!   ([`crate::anim::keep`]);
//! - [`buffers`]: buffer views and accessors; [`compress`]: `KHR_mesh_quantization` and
//!   `EXT_meshopt_compression` over the finished document (`--compress`).

use std::collections::HashMap;
use std::path::Path;

use gltf_json as json;
use json::validation::USize64;

use super::{Container, Error, ExternalImage, GltfFile, WriteOptions};
use crate::scene::{Scene, Warning};

mod ahead;
mod animation;
mod buffers;
mod cameras;
mod channels;
mod compress;
mod keyed;
mod materials;
mod meshes;
mod names;
mod nodes;
mod pbr;
mod refine;
mod sampling;
mod skins;
mod textures;
mod visibility;

#[cfg(test)]
pub(crate) use nodes::axis_rotation;
pub(crate) use textures::uri_encode;

/// Converts `scene` to glTF in memory (see the module docs for every conversion rule).
///
/// Fails only when the result cannot be represented (a GLB over 4 GiB) or serialised, or
/// [`WriteOptions::tolerance`] is not in (0, 1]; what is converted inexactly or left out is
/// reported in [`GltfFile::warnings`].
pub fn write(scene: &Scene, opts: &WriteOptions) -> Result<GltfFile, Error> {
    build(scene, opts, buffers::Bin::default())?.into_file()
}

/// [`write`] stopped before the GLB is packed, so that [`save`] can stream it; the binary
/// buffer goes into `bin` (in memory, or staged on disk by [`save`]).
fn build(scene: &Scene, opts: &WriteOptions, bin: buffers::Bin) -> Result<Built, Error> {
    scene.validate().map_err(|e| Error::Write(format!("inconsistent scene: {e}")))?;
    crate::anim::resample::check_tolerance(opts.tolerance).map_err(Error::Write)?;
    let mut out = Out::new(opts.container.clone());
    out.bin = bin;
    out.influence_sets = opts.max_influences.max(1).div_ceil(4);
    out.embed = opts.embed;
    out.compress = opts.compress;
    out.source_vertex_ids = opts.source_vertex_ids;
    out.root.asset.generator = Some(format!("keyscene {}", env!("CARGO_PKG_VERSION")));
    let base = out.root_node(scene, opts);
    let rest = nodes::Rest::new(scene);
    out.visibility =
        visibility::States::new(scene, &rest.pose.hidden, opts.only_animation, opts.animations);
    let left_out: Vec<bool> = (0..scene.nodes.len())
        .map(|i| opts.visible_only && out.visibility.hidden_throughout(scene, i, &rest.pose.hidden))
        .collect();
    let written = out.nodes(scene, base, &rest, &left_out);
    out.rest_visibility(scene, base, &rest);
    out.scene(scene, base);
    if opts.animations {
        out.animations(scene, opts, base, &rest, &written);
    }
    out.finish()
}

/// Writes `scene` to `path` as `.glb` or `.gltf` (by extension, overriding
/// `opts.container`), atomically: each file goes to a temporary file that is renamed into
/// place. For `.gltf` the buffer `<stem>.bin` and the referenced images are written beside it
/// first, the `.gltf` last. Returns the conversion warnings.
///
/// The binary buffer is staged on disk as it is made, never whole in memory (but with
/// [`WriteOptions::compress`], which rewrites the finished buffer, and a `.gltf` with
/// [`WriteOptions::embed`], which puts it in the JSON): for `.gltf` in the temporary file
/// that becomes `<stem>.bin`, for `.glb` in an unnamed temporary file in `path`'s folder,
/// copied after the JSON chunk at the end (by the kernel, `copy_file_range`, where it can).
/// Neither is left behind on an error.
pub fn save(scene: &Scene, path: &Path, opts: &WriteOptions) -> Result<Vec<Warning>, crate::Error> {
    let mut opts = opts.clone();
    opts.container = super::container_for(path);
    let glb = matches!(opts.container, Container::Glb);
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("scene");
    let bin_path = dir.join(format!("{stem}.bin"));
    let stage = !opts.compress && (glb || !opts.embed);
    // `.gltf`: the staged buffer becomes `<stem>.bin` once whole (`bin_name` is its
    // temporary name, removed when dropped).
    let (bin, bin_name) = match (stage, glb) {
        (false, _) => (buffers::Bin::default(), None),
        (true, true) => (buffers::Bin::staged(crate::io::unnamed_staging_file(path)?), None),
        (true, false) => {
            let (file, name) = crate::io::staging_file(&bin_path)?.into_parts();
            (buffers::Bin::staged(file), Some(name))
        }
    };
    let mut built = build(scene, &opts, bin)?;
    let bin = std::mem::take(&mut built.bin);
    let bin_len = bin.len();
    let (staged, memory) = if bin.is_staged() {
        let at = if glb { path.to_path_buf() } else { bin_path.clone() };
        let file = bin.into_staged().map_err(|source| crate::Error::Io { path: at, source })?;
        (file, buffers::Bin::default())
    } else {
        (None, bin)
    };
    if glb {
        if opts.copy_textures {
            copy_images(&built.images, dir, path, &opts)?;
        }
        save_glb(path, &built.json, staged, &memory)?;
        return Ok(built.warnings);
    }
    if bin_len > 0 {
        match (staged, bin_name) {
            (Some(file), Some(name)) => crate::io::persist_staged(
                tempfile::NamedTempFile::from_parts(file, name),
                &bin_path,
            )?,
            _ => put(&bin_path, &memory.segments())?,
        }
    }
    if opts.copy_textures {
        copy_images(&built.images, dir, path, &opts)?;
    }
    put(path, &[&built.json])?;
    Ok(built.warnings)
}

/// Writes `dest` atomically from `pieces`, in order.
fn put(dest: &Path, pieces: &[&[u8]]) -> Result<(), crate::Error> {
    crate::write_atomically::<crate::Error>(dest, |w| {
        for piece in pieces {
            w.write_all(piece).map_err(|source| crate::Error::Io { path: dest.into(), source })?;
        }
        Ok(())
    })
}

/// Copies the external `images` of a `.gltf` beside it in `dir` (`path` is the `.gltf`),
/// each atomically; an image already in place is left alone.
fn copy_images(
    images: &[ExternalImage],
    dir: &Path,
    path: &Path,
    opts: &WriteOptions,
) -> Result<(), crate::Error> {
    let mut companions = Vec::new();
    for img in images {
        let dest = dir.join(&img.file_name);
        let bytes: std::sync::Arc<[u8]> = match &img.bytes {
            Some(b) => b.clone(),
            None => {
                let same = match (dest.canonicalize(), img.source.canonicalize()) {
                    (Ok(a), Ok(b)) => a == b,
                    _ => false,
                };
                if same {
                    continue;
                }
                std::fs::read(&img.source)
                    .map_err(|source| crate::Error::Io { path: img.source.clone(), source })?
                    .into()
            }
        };
        companions.push(crate::output::Companion {
            path: dest,
            bytes,
            what: format!("the image {}", img.file_name),
        });
    }
    let source = opts.source.clone().unwrap_or_else(|| crate::output::source_name(path));
    crate::output::write_companions(&companions, &source)?;
    Ok(())
}

/// Writes the GLB of `json` and the binary buffer to `path` atomically: the buffer is the
/// `staged` file's bytes (from its start; copied file to file, by the kernel where it can)
/// or else `memory`'s segments. Nothing is gathered in memory: the header and chunk headers
/// are known from the lengths.
fn save_glb(
    path: &Path,
    json: &[u8],
    staged: Option<std::fs::File>,
    memory: &buffers::Bin,
) -> Result<(), crate::Error> {
    let io = |source| crate::Error::Io { path: path.into(), source };
    let err = |e| match e {
        super::glb::GlbWriteError::Glb(e) => e.into(),
        super::glb::GlbWriteError::Io(source) => io(source),
    };
    let Some(mut staged) = staged else {
        return crate::write_atomically::<crate::Error>(path, |w| {
            super::glb::write_glb(w, json, &memory.segments()).map_err(err)
        });
    };
    let len = std::io::Seek::stream_position(&mut staged).map_err(io)?;
    std::io::Seek::rewind(&mut staged).map_err(io)?;
    crate::write_atomically_seekable::<crate::Error>(path, |out| {
        super::glb::write_glb_with(out, json, len as usize, |out| {
            let copied = std::io::copy(&mut staged, out)?;
            if copied != len {
                let message = format!("the staged binary chunk gave {copied} of {len} bytes");
                return Err(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, message));
            }
            Ok(())
        })
        .map_err(err)
    })
}

/// A helper node carrying an aimed camera or light, or the camera or light of an FBX scene:
/// `index` in glTF, for scene node `node`; its local matrix is `unaimed⁻¹ · world · turn`.
struct Helper {
    node: usize,
    index: json::Index<json::Node>,
    /// [`nodes::fbx_axes_turn`] of the node, else the identity.
    turn: glam::DMat4,
}

/// The document being built, its binary buffer and caches.
struct Out {
    root: json::Root,
    bin: buffers::Bin,
    container: Container,
    warnings: Vec<Warning>,
    /// Written materials by (scene material, whether the primitive has `TEXCOORD_0`): a
    /// material's textures are bound only on primitives that carry the UV set they read.
    materials: HashMap<(usize, bool), json::Index<json::Material>>,
    /// Textures by image and wrapS/wrapT (GL enums) (`None`: the image could not be used).
    textures: HashMap<textures::TextureKey, Option<json::Index<json::Texture>>>,
    /// Images by source, shared by textures that differ in sampler only.
    images_by_path: HashMap<textures::ImageKey, json::Index<json::Image>>,
    /// Samplers by wrapS/wrapT (GL enums; REPEAT both ways, glTF's default, needs none).
    samplers: HashMap<[u32; 2], json::Index<json::texture::Sampler>>,
    images: Vec<ExternalImage>,
    /// `JOINTS_n`/`WEIGHTS_n` sets per skinned vertex.
    influence_sets: usize,
    /// Per written glTF mesh (by index).
    mesh_info: HashMap<u32, meshes::MeshInfo>,
    /// `.gltf` only: buffer as a data URI, images inside it.
    embed: bool,
    /// Quantize and meshopt-compress the finished document ([`compress`]).
    compress: bool,
    /// Write `_KEYSCENE_VERTEX` ([`WriteOptions::source_vertex_ids`]).
    source_vertex_ids: bool,
    /// `KHR_animation_pointer` channels, added to the JSON by `finish`
    /// ([`visibility`]: gltf-json cannot hold them).
    pointer_channels: Vec<visibility::PointerChannel>,
    /// The sampled hidden states and the nodes glTF cannot hide ([`visibility::States`]).
    visibility: visibility::States,
}

impl Out {
    fn new(container: Container) -> Out {
        Out {
            root: json::Root::default(),
            bin: buffers::Bin::default(),
            container,
            warnings: Vec::new(),
            materials: HashMap::new(),
            textures: HashMap::new(),
            images_by_path: HashMap::new(),
            samplers: HashMap::new(),
            images: Vec::new(),
            influence_sets: 1,
            mesh_info: HashMap::new(),
            embed: false,
            compress: false,
            source_vertex_ids: false,
            pointer_channels: Vec::new(),
            visibility: visibility::States::default(),
        }
    }

    fn finish(mut self) -> Result<Built, Error> {
        let mut fallback = None;
        if self.compress && !self.root.buffer_views.is_empty() {
            let bin = std::mem::take(&mut self.bin).into_vec();
            let (bin, len) = compress::compress(&mut self.root, &bin)?;
            self.bin = buffers::Bin::from_vec(bin);
            fallback = len;
        }
        if !self.bin.is_empty() {
            self.bin.pad();
            let byte_length = USize64(self.bin.len() as u64);
            let uri = match &self.container {
                Container::Glb => None,
                Container::Gltf { .. } if self.embed => Some(format!(
                    "data:application/octet-stream;base64,{}",
                    super::base64::encode(&std::mem::take(&mut self.bin).into_vec())
                )),
                Container::Gltf { bin_uri } => Some(bin_uri.clone()),
            };
            self.root.buffers.push(json::Buffer {
                byte_length,
                name: None,
                uri,
                extensions: None,
                extras: Default::default(),
            });
        }
        if let Some(len) = fallback {
            self.root.buffers.push(compress::fallback_buffer(len));
        }
        let ser = |e: serde_json::Error| Error::Write(format!("JSON: {e}"));
        let json = if self.pointer_channels.is_empty() {
            match self.container {
                Container::Glb => serde_json::to_vec(&self.root),
                Container::Gltf { .. } => serde_json::to_vec_pretty(&self.root),
            }
        } else {
            let v = visibility::with_pointer_channels(&self.root, &self.pointer_channels)
                .map_err(ser)?;
            match self.container {
                Container::Glb => serde_json::to_vec(&v),
                Container::Gltf { .. } => serde_json::to_vec_pretty(&v),
            }
        }
        .map_err(ser)?;
        Ok(Built {
            container: self.container,
            json,
            bin: self.bin,
            images: self.images,
            warnings: self.warnings,
        })
    }
}

/// A finished document before it is packed: the JSON (compact for GLB, pretty for `.gltf`)
/// and the binary buffer (empty when there is none or it is embedded as base64).
struct Built {
    container: Container,
    json: Vec<u8>,
    bin: buffers::Bin,
    images: Vec<ExternalImage>,
    warnings: Vec<Warning>,
}

impl Built {
    /// The in-memory file [`write`] returns: GLB bytes, or the JSON with its buffer.
    fn into_file(self) -> Result<GltfFile, Error> {
        Ok(match self.container {
            Container::Glb => GltfFile {
                main: super::glb::to_glb_pieces(&self.json, &self.bin.segments())?,
                bin: None,
                images: Vec::new(),
                warnings: self.warnings,
            },
            Container::Gltf { bin_uri } => GltfFile {
                main: self.json,
                bin: (!self.bin.is_empty()).then(|| (bin_uri, self.bin.into_vec())),
                images: self.images,
                warnings: self.warnings,
            },
        })
    }
}

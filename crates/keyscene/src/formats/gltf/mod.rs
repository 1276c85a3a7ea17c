//! glTF 2.0: writer (`.glb`, or `.gltf` + `.bin`) and reader, on the `gltf-json` and `gltf`
//! crates (issue #2 §5; issue #5 extends it).
//!
//! What keyscene adds to glTF (axis root, node extras, `_KEYSCENE_VERTEX`) is written down
//! in `docs/gltf.md`.
//!
//! Layers, each usable alone:
//! - [`geometry`]: a scene [`Mesh`](crate::scene::Mesh) → triangle primitives (triangulation,
//!   smoothing-group normals, deduplicated glTF vertices). Knows no JSON.
//! - [`deform`]: skin influences and morph targets per glTF vertex. Knows no JSON.
//! - [`glb`]: the GLB container (header, JSON and BIN chunks). Knows no scene.
//! - `export`: [`Scene`](crate::scene::Scene) → `gltf_json::Root` + binary buffer ([`write`](fn@write)(fn@write), [`save`]).
//! - `import`: glTF document → [`Scene`](crate::scene::Scene) ([`read`], [`read_with`]).
//!
//! # Conventions of the writer
//! **Axes.** glTF is +Y up, +Z front, right-handed, metres. A scene whose
//! [`Metadata::axes`](crate::scene::Metadata::axes) differ gets one extra root node,
//! [`AXIS_ROOT_NAME`], whose rotation maps the source's up axis to +Y and its front axis to
//! +Z; every source root becomes its child. For 3DS (+Z up, −Y front) that is −90° about X:
//! `(x, y, z) → (x, z, −y)`. All other nodes keep their own local transforms exactly, so
//! animation channels stay in the source's frame. A left-handed source would need a mirror,
//! which glTF cannot put on a root without flipping every winding: it is written unconverted
//! with a warning. The same root scales the scene to metres by
//! [`Metadata::units`](crate::scene::Metadata::units) (FBX centimetres: 0.01; 3DS is unitless
//! and counts as metres: no scale); [`WriteOptions::source_axes`] and
//! [`WriteOptions::source_metres_per_unit`] override what the file says, and
//! [`WriteOptions::convert_axes`] turns the root off.
//!
//! **Geometry transforms and pivots.** A node's
//! [`geometry_transform`](crate::scene::Node::geometry_transform) (3DS `T(−pivot) ·
//! MESH_MATRIX⁻¹`) is baked into the mesh's vertex positions and normals, so the glTF node
//! carrying the mesh is the scene node itself and every vertex lands where
//! [`Pose::world_positions`](crate::anim::Pose::world_positions) puts it. Nodes instancing one
//! mesh with different geometry transforms get one glTF mesh each.
//!
//! **Meshes.** One primitive per material slot, `TRIANGLES`, POSITION (with min/max), NORMAL
//! (from smoothing groups, else the mesh's normals, else flat; see
//! [`corner_normals`](crate::scene::geometry::corner_normals)), TANGENT from the
//! source's tangents when the mesh has them ([`geometry::source_tangent`]: w from the
//! binormal's side; MikkTSpace where one is missing or degenerate), else on normal-mapped
//! primitives, TEXCOORD_n from every UV set n with V flipped
//! (`v' = 1 − v`: glTF's V runs down, 3DS/OBJ/FBX's up), COLOR_0 when the mesh has colours, `u16` indices when a
//! primitive has fewer than 65 535 vertices, else `u32`. With
//! [`WriteOptions::source_vertex_ids`], an application-specific attribute
//! [`SOURCE_VERTEX_ATTRIBUTE`] (FLOAT scalar) gives every glTF vertex its index in the source
//! mesh, so the reader can restore the source's vertex order that glTF's per-corner splitting
//! loses (other clients ignore it, as the glTF spec requires for `_`-prefixed attributes).
//!
//! **Materials.** `baseColorFactor` = diffuse RGB and alpha `1 − transparency`
//! (`alphaMode` BLEND when alpha < 1), `doubleSided` = two-sided, `metallicFactor` 0,
//! `roughnessFactor = 1 − shininess` (3DS shininess percent ÷ 100; a shiny 3DS material is a
//! smooth dielectric), `emissiveFactor` = diffuse × self-illumination. The diffuse map becomes
//! `baseColorTexture` when its file was found
//! ([`TextureMap::resolved`](crate::scene::TextureMap::resolved)) and is PNG or JPEG (by its
//! signature): `.gltf` refers to it by file name (and [`save`] copies it beside the `.gltf`),
//! `.glb` (or `.gltf` with [`WriteOptions::embed`]) embeds it. A self-illumination map becomes
//! `emissiveTexture` (factor 1) the same way, and the bump map `normalTexture`, whose
//! primitives get MikkTSpace `TANGENT`s ([`geometry::add_tangents`]). Samplers come from the
//! map's per-axis wrap modes (FBX `WrapModeU/V`: clamp → CLAMP_TO_EDGE), else from the 3DS
//! tiling bits (no tile: CLAMP_TO_EDGE, mirror: MIRRORED_REPEAT; `docs/gltf.md`). A map's UV transform becomes
//! KHR_texture_transform (rotation `−θ` and an offset re-expressed for V-down UVs; see
//! `texture_info` in export.rs), which the reader inverts. glTF allows only PNG and JPEG:
//! other images the `image` crate decodes (TGA, BMP — 3DS scenes often use them, and `render`
//! reads them) are transcoded to PNG, named `<stem>.png` (a warning says so); images that
//! cannot be decoded are left out with a warning. [`save`] puts the images of a `.gltf`
//! beside it under [`crate::output`]'s rule (never replacing another source's file of the
//! same name), unless [`WriteOptions::copy_textures`] is off.
//!
//! **Cameras.** Perspective; 3DS stores the horizontal FOV, so `yfov = 2·atan(tan(fov/2) /
//! aspect)` with the camera's aspect, else [`ASSUMED_ASPECT`] (4:3, 3D Studio's 640×480
//! output); `znear` is the camera's near distance when positive, else [`DEFAULT_ZNEAR`].
//! An orthographic camera ([`Projection::Orthographic`](crate::scene::Projection)) is written
//! `orthographic` with its `xmag`/`ymag` (half the view's width and height, glTF 2.0 §3.10.3);
//! its `zfar` (required there) is the far distance when beyond `znear`, else `znear` plus
//! 1000 times the larger magnitude, with a warning. The reader takes both forms back.
//!
//! **Lights.** KHR_lights_punctual: point, spot (inner/outer cone = half the hotspot/falloff
//! full angles, in radians, clamped to `0 ≤ inner < outer ≤ π/2`), directional; `intensity` is
//! the source's multiplier unchanged (0 when the light is off), `range` the outer attenuation
//! distance when enabled. Ambient lights have no glTF form and are left out with a warning.
//!
//! **Aimed cameras and spotlights.** The evaluator turns a camera or light with a target to
//! look at it. glTF has no aim constraint, so such a node's camera/light hangs on a helper
//! child node (named `"<node> aim"`) whose local matrix is `unaimed_world⁻¹ · aimed_world`,
//! resampled like the rest of the animation; the node itself keeps its own transform for its
//! children (which the evaluator does not aim either).
//!
//! **Skins** (glTF 2.0 §3.7.3). Every node showing a skinned mesh gets a glTF skin: the
//! scene skin's joints with [`SkinJoint::inverse_bind`](crate::scene::SkinJoint::inverse_bind)
//! as inverse bind matrices (last row forced to `0 0 0 1`, with a warning when it was not),
//! `skeleton` the joints' deepest common ancestor. Because the mesh's geometry transform `G` is
//! baked into the vertices and the model skins as `Σ w · W(bone) · inverse_bind · G · p`,
//! glTF's `Σ w · W(joint) · IBM · p'` with `p' = G·p` gives the evaluator's positions whatever
//! the mesh node's own transform (which glTF ignores). `JOINTS_n`/`WEIGHTS_n`: see
//! [`deform::influences`] (strongest [`WriteOptions::max_influences`], renormalised; vertices
//! without influence bound to the mesh node itself as an extra joint). When the joints and mesh
//! node lie in separate trees and no axis root is written, an identity root
//! [`JOINT_ROOT_NAME`] joins them (glTF requires a common root). Dual-quaternion skins are
//! written as linear skins with a warning.
//!
//! **Morph targets** (§3.7.2.2). POSITION (and NORMAL when the source has normal offsets)
//! offsets per target, through the bake matrix; mesh `weights` = the default weights,
//! `extras.targetNames` the names; in-between shapes become targets of their own
//! ([`deform`]). Morph weight properties (`DeformPercent#k`, percent) are animated as node
//! `weights` channels (÷ 100), sampled with the rest of the animation.
//!
//! **Animation.** One glTF animation per [`Scene::animations`](crate::scene::Scene::animations)
//! entry, every channel from `max(0, first frame)` to its last frame (or last key, when
//! later). Nodes whose glTF local TRS is their own translation/rotation/scale (no FBX pivots or
//! pre/post-rotation; a root or inherit type `RSrs`) are written with those parts, and a part
//! driven by exactly one channel keeps its **source keys** where glTF holds them exactly
//! ([`crate::anim::hermite`](mod@crate::anim::hermite)): translation and scale (whole or per component, merged) as
//! `STEP` when every moving segment steps, `LINEAR` when every one is linear, else (only with
//! [`WriteOptions::cubic_spline`]; by default such a part is resampled)
//! `CUBICSPLINE` with (in-tangent, value, out-tangent) per key, tangents in value units per
//! **second** (slope per frame × fps, glTF 2.0 Appendix C); quaternion tracks that slerp (or
//! step) throughout as `LINEAR` (or `STEP`), keys in one hemisphere. Keep-slope extrapolation
//! becomes a linear end segment, a held end is repeated at the animation's last frame, and
//! keys before frame 0 are cut exactly at 0 (value and slope there). Everything else is
//! *resampled*, per channel — Euler and 3DS relative rotations, weighted Bézier, constant-next
//! keys, jumps, cycles, values FBX animation layers blend
//! ([`ChannelTarget::Layered`](crate::anim::ChannelTarget::Layered)), nodes with pivots or
//! other inherit types, aim helpers, morph weights —
//! as is every channel with [`WriteOptions::resample_fps`]. A resampled part of a node whose
//! glTF TRS is its own is sampled on its own, from the node's channels
//! ([`crate::anim::resample`]): at every source frame (anchored at the animation's first
//! frame, so keys before frame 0 keep their phase), every key and 0.001 frame before every
//! jump, a rotation's seeds first spread by the fastest turn of its keys, then split where the
//! LINEAR (slerp) chord strays more than 1e-4 × the scene size from the source at a quarter,
//! half or three quarters of an interval (seeded every half frame, so the quarters are
//! tested). Every other target and
//! the morph weights (and everything with `resample_fps`) are evaluated on one grid of one
//! sample per half source frame (or at `resample_fps`) with the same anchor, keys and jump leads (3DS
//! files repeat a frame to make a value jump; without the lead the jump would be smeared over a
//! whole step), written as LINEAR. Every LINEAR channel's keys are then reduced to those its
//! chord needs within a tenth of the tolerance (the adaptive sampler splits to the rest), STEP
//! keys that repeat a value dropped, a still channel written as one key, or none when it holds
//! the rest value and no written animation moves that node property (clients differ in what
//! they reset between animations; `export::channels`). An animation in which nothing moves
//! away from the rest pose has no channels and is left out. The rest pose (node TRS) is the first animation at
//! its first frame. Local matrices are `W(parent)⁻¹ · W(node)` for FBX nodes whose inherit
//! type is not `RSrs`, so world matrices are the evaluator's for every inherit type (shear,
//! which TRS cannot hold, is lost), and each node whose local translation/rotation/scale
//! differs from its rest value gets channels for it (resampled quaternions unit and
//! hemisphere-continuous).
//! Times are seconds: `frame / fps`, from frame 0, so glTF time `t` is source frame `t · fps`.
//! Visibility (issue 33 §4): a node hidden at rest gets `KHR_node_visibility` `visible: false`
//! and its hide or FBX `Visibility` animation a `KHR_animation_pointer` channel (STEP, unsigned
//! bytes), both extensions used but not required, where the node has no shown descendant
//! (the extension hides descendants too; warned otherwise); see `export/visibility.rs`. Its
//! extras still record `"hidden": true`. The reader takes both back. 3DS morph (mesh switch),
//! FOV, light-colour and other property tracks are not written; a warning says when a scene
//! has them.
//!
//! **Names.** glTF node names are the source names, except a 3DS `$$$DUMMY` with an instance
//! name, which is named after the instance. Extras `{"keyscene": {"name", "instance"}}` keep
//! the source's name and instance where they differ from the glTF name, and the reader restores
//! them. `asset.generator` is `"keyscene <version>"`.

mod accessors;
pub mod base64;
pub mod deform;
mod export;
pub mod extras;
pub mod geometry;
pub mod glb;
mod import;

use std::path::{Path, PathBuf};

pub use export::{save, write};
pub use import::{read, read_with, GltfReadOptions};

use crate::scene::Warning;

/// The name of the root node the writer adds to turn a Z-up (or other non-Y-up) scene Y-up.
pub const AXIS_ROOT_NAME: &str = "keyscene axis conversion";

/// The name of the identity root node the writer adds (when it adds no axis root) to give the
/// joints of a skin the common root glTF requires, when they lie in separate trees.
pub const JOINT_ROOT_NAME: &str = "keyscene root";

/// The vertex attribute holding each glTF vertex's index in the source mesh (written with
/// [`WriteOptions::source_vertex_ids`] for meshes under 2^24 vertices, exact in f32; read back
/// to restore the source vertex order).
pub const SOURCE_VERTEX_ATTRIBUTE: &str = "_KEYSCENE_VERTEX";

/// Width ÷ height assumed for a camera whose source states no aspect, to turn 3DS's horizontal
/// FOV into glTF's `yfov`: 4:3 (3D Studio's default 640×480 render).
pub const ASSUMED_ASPECT: f64 = 4.0 / 3.0;

/// Near clip distance in scene units for a camera whose source states none (glTF requires
/// `znear > 0`).
pub const DEFAULT_ZNEAR: f64 = 0.1;

/// The frame rate the reader gives glTF animations unless told otherwise: glTF time `t` s is
/// frame `t · 30`, 3D Studio's rate, so a 3DS → glTF → scene round trip keeps frame numbers.
pub const DEFAULT_READ_FPS: f64 = 30.0;

/// A glTF problem: where in the document, and what.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The file is not valid glTF, or refers to something the reader cannot use.
    #[error("gltf: {place}: {message}")]
    Invalid {
        /// Where in the document (`nodes[3]`, `buffers[0] "scene.bin"`, `document`).
        place: String,
        /// What was wrong or expected.
        message: String,
    },
    /// A count or size in the file exceeds [`crate::limits::Limits`].
    #[error("gltf: {place}: {message}")]
    Limit {
        /// Where in the document.
        place: String,
        /// Which limit and the value asked for.
        message: String,
    },
    /// The scene could not be written as glTF.
    #[error("gltf: cannot write: {0}")]
    Write(String),
}

/// Which glTF container [`write`](fn@write) produces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Container {
    /// Binary `.glb`: JSON, buffer and PNG/JPEG images in one file.
    Glb,
    /// JSON `.gltf` whose buffer is a separate file named `bin_uri` (relative to the `.gltf`),
    /// and whose images are referenced by file name beside it.
    Gltf {
        /// The buffer's file name, e.g. `"scene.bin"`.
        bin_uri: String,
    },
}

/// How [`write`](fn@write) converts a scene. Non-exhaustive: start from [`Default`] and set
/// the fields (`let mut o = WriteOptions::default(); o.embed = true;`).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct WriteOptions {
    /// The container. [`save`] sets it from the path's extension.
    pub container: Container,
    /// Resample **every** animation channel at this many samples per second (LINEAR; CLI
    /// `--resample-fps`); `None` (default): keep source keys where glTF holds them exactly and
    /// resample the rest at every source frame and where the curve needs more (see the module
    /// docs, **Animation**).
    pub resample_fps: Option<f64>,
    /// Keep source curves that glTF's `CUBICSPLINE` holds exactly as `CUBICSPLINE` samplers
    /// (CLI `--cubic-spline`); `false` (default): every channel is `LINEAR` or `STEP`, those
    /// curves resampled like the others, what every client plays right (Blender's importer
    /// does not import `CUBICSPLINE` tangents as glTF defines them).
    pub cubic_spline: bool,
    /// The animation error bound, relative to the scene size
    /// ([`crate::anim::resample::scene_size`]; CLI `--tolerance`): resampled channels are
    /// sampled until LINEAR chords stay within it at every frame and between frames, and keys
    /// that LINEAR interpolation reproduces within a tenth of it are dropped, as
    /// gltf-transform's `resample` does with its `tolerance`. Default
    /// [`crate::anim::resample::TOLERANCE`] (1e-4, the corpus checks' bound); larger values
    /// trade exactness for fewer keys (FBX2glTF's knight.fbx is off by 6.2e-2 of the scene
    /// size, docs/gltf.md "Size and exactness"). Must be finite and in (0, 1]: [`write`](fn@write)
    /// refuses other values. Rotations are measured by their effect at the scene size from the
    /// pivot. Source keys glTF holds exactly are kept as they are.
    pub tolerance: f64,
    /// Leave out the mesh of every node hidden throughout: at rest and at every sample of
    /// every written animation (CLI `--visible-only`, as Blender's exporter's "Visible
    /// Objects" and FBX2glTF, which never writes a hidden mesh); the node stays (its children
    /// and animation do), and a warning names the meshes left out. Default `false`: hidden
    /// meshes are written hidden (`KHR_node_visibility`).
    pub visible_only: bool,
    /// Write [`SOURCE_VERTEX_ATTRIBUTE`] (`_KEYSCENE_VERTEX`, 4 bytes a vertex), from which
    /// keyscene's reader restores the source vertex order (CLI `--source-vertex-ids`), for
    /// a GLB that keyscene reads back to compare or convert by vertex index. Default `false`:
    /// no other client uses it (FBX2glTF, gltfpack and Blender write nothing like it), and it
    /// was a tenth of a static mesh's bytes (issue 36 §4). Not written with [`Self::compress`].
    pub source_vertex_ids: bool,
    /// Quantize vertex attributes (`KHR_mesh_quantization`) and compress vertex, index, skin and
    /// animation buffer views with meshopt (`EXT_meshopt_compression`, both required, with a
    /// fallback buffer without data, as gltfpack does; CLI `--compress`). Positions stay within
    /// 1e-4 of the scene size (16-bit grids, docs/gltf.md "Compressed output"). Default `false`.
    pub compress: bool,
    /// Add the axis root node that turns the scene's axes into glTF's +Y up and its unit into
    /// metres (default `true`).
    pub convert_axes: bool,
    /// The source's axes, overriding [`Metadata::axes`](crate::scene::Metadata::axes) (for
    /// files that state them wrongly or not at all; CLI `--up`).
    pub source_axes: Option<crate::scene::AxisSystem>,
    /// Metres per source unit, overriding [`Metadata::units`](crate::scene::Metadata::units)
    /// (CLI `--units`); a unitless scene counts as metres.
    pub source_metres_per_unit: Option<f64>,
    /// Write animations (default `true`).
    pub animations: bool,
    /// Write only this animation (index into
    /// [`Scene::animations`](crate::scene::Scene::animations); CLI `--stack`); `None`: all.
    pub only_animation: Option<usize>,
    /// For [`Container::Gltf`]: embed the buffer as a `data:` URI and the images in it
    /// (bufferView + mimeType), so the `.gltf` stands alone (CLI `--embed`).
    pub embed: bool,
    /// Most joint influences kept per skinned vertex, rounded up to a multiple of 4: one
    /// `JOINTS_n`/`WEIGHTS_n` pair per 4 (default 4, what every glTF viewer supports).
    pub max_influences: usize,
    /// For a `.gltf` with external images: [`save`] copies them beside it (default `true`;
    /// CLI `--no-copy-textures` turns it off and leaves the URIs naming files to be put there).
    pub copy_textures: bool,
    /// The source the scene was read from, for [`crate::output`]'s rule that an image never
    /// replaces another source's file of the same name (`None`: the output's own path).
    pub source: Option<String>,
}

impl Default for WriteOptions {
    fn default() -> Self {
        WriteOptions {
            container: Container::Glb,
            resample_fps: None,
            cubic_spline: false,
            tolerance: crate::anim::resample::TOLERANCE,
            visible_only: false,
            source_vertex_ids: false,
            compress: false,
            convert_axes: true,
            source_axes: None,
            source_metres_per_unit: None,
            animations: true,
            only_animation: None,
            embed: false,
            max_influences: 4,
            copy_textures: true,
            source: None,
        }
    }
}

/// A written glTF file in memory.
#[derive(Debug, Clone)]
pub struct GltfFile {
    /// The `.glb` bytes, or the `.gltf` JSON text.
    pub main: Vec<u8>,
    /// For [`Container::Gltf`]: the buffer's file name and bytes.
    pub bin: Option<(String, Vec<u8>)>,
    /// For [`Container::Gltf`]: image files the JSON refers to, to be placed beside it.
    pub images: Vec<ExternalImage>,
    /// What could not be converted exactly.
    pub warnings: Vec<Warning>,
}

/// An image a `.gltf` refers to by file name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExternalImage {
    /// The URI in the JSON (the file name, percent-encoded).
    pub uri: String,
    /// The file's plain name, as it must be written beside the `.gltf`.
    pub file_name: String,
    /// Where the image is now.
    pub source: PathBuf,
    /// The bytes to write instead of copying `source`: a TGA or BMP image transcoded to PNG.
    pub bytes: Option<std::sync::Arc<[u8]>>,
}

/// The container [`save`] writes for `path`: `.gltf` → JSON with `<stem>.bin`; else GLB.
pub fn container_for(path: &Path) -> Container {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("").to_ascii_lowercase();
    if ext == "gltf" {
        let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("scene");
        Container::Gltf { bin_uri: export::uri_encode(&format!("{stem}.bin")) }
    } else {
        Container::Glb
    }
}

fn warning(place: impl Into<String>, message: impl Into<String>) -> Warning {
    Warning { offset: None, place: place.into(), message: message.into() }
}

#[cfg(test)]
mod tests;

//! [`Scene`] → FBX records → a binary FBX 7.4/7.5 file (the bridge from `scene` to
//! [`super::write`]). What is written, what is approximated and why is in `docs/fbx.md`
//! ("Writing"); in short:
//!
//! - The SDK's document skeleton in its order: `FBXHeaderExtension` (FBXHeaderVersion 1003,
//!   FBXVersion, EncryptionType 0, CreationTimeStamp, Creator, SceneInfo), `FileId`,
//!   `CreationTime`, `Creator`, `GlobalSettings`, `Documents`, `References`, `Definitions`
//!   (counts computed from the objects written), `Objects`, `Connections`, `Takes`.
//! - `GlobalSettings` declares the scene's axes (UpAxis/FrontAxis/CoordAxis with signs, as
//!   the reader reads them back), `UnitScaleFactor`/`OriginalUnitScaleFactor` in cm per unit,
//!   `TimeMode` (or 14 = custom with `CustomFrameRate`; never a drop-frame mode) and
//!   `TimeSpanStart/Stop`. No data is converted: coordinates stay in the source's axes and units.
//! - Every node is a `Model` (`Mesh`, `LimbNode` for bones, `Null` otherwise) with only
//!   `Lcl Translation/Rotation/Scaling`, RotationOrder XYZ (the default), `InheritType` 1
//!   (RSrs, plain matrix products), no pivots, pre/post rotations or geometric transforms:
//!   the local values are taken from keyscene's evaluation, `parent_world⁻¹ · world`,
//!   decomposed, so pivots, inherit types and camera/light targets are baked in. A local
//!   matrix with shear (a rotated child of a non-uniformly scaled parent) has no such form:
//!   its nearest T·R·S is written and the node is counted in [`Report::sheared`]. A node's
//!   geometry transform is baked into the vertices of its `Geometry` (one per mesh and
//!   transform, so instanced nodes share one).
//! - Animation: one `AnimationStack` + `AnimationLayer` per scene animation and its `Takes`
//!   entry, and per node part (T, R, S) one `AnimationCurveNode` with `d|X/d|Y/d|Z` defaults
//!   (the evaluator's rest value of each component) OP-connected to the model's `Lcl …`:
//!   - **Key for key** where the node's written local matrix is its own `T·R·S` (no pivots,
//!     root or inherit type RSrs, neither it nor its parent aimed at a target): a part driven
//!     by one channel whose keys have an FBX form — constant, constant-next, linear, cubic with
//!     slopes and tangent weights (`KeyAttrFlags`/`KeyAttrDataFloat` as ufbx and the SDK read
//!     them), `Pre-/Post-Extrapolation` keep-slope and cycles — or an exact Hermite form (TCB
//!     position/scale keys, glTF/3DA tangents), Euler rotations in XYZ order in degrees;
//!     `KTime = round(frame / fps × 46 186 158 000)`. The rules are in the `export/keys.rs` module docs. Counted in
//!     [`Report::exact_curves`].
//!   - **Resampled** otherwise: linear keys from the shared adaptive sampler
//!     (`anim::resample`): seeds at every integer frame of the animation range, its ends and
//!     every key, split until FBX's linear keys (Euler components lerped) are within
//!     1e-4 × the scene size of the source at every quarter, half and three quarters of an
//!     interval, then thinned to the keys the curve needs; quaternion keys (slerp), 3DS relative rotations, other Euler orders,
//!     blended layers and keys with no exact form take the evaluated part; baked nodes (pivots,
//!     other inherit types, targets) the decomposed `parent_world⁻¹ · world`. Euler angles are
//!     unwrapped so consecutive keys never jump by 360°. Each part is listed in
//!     [`Report::resampled`] with its reason; a range of more than
//!     [`WriteOptions::max_keys`] frames to resample is an error, and a node whose splits
//!     reach that many keys stops there ([`Report::capped`]) (the 10-million-frame Maya
//!     files write because their curves are kept).
//! - Cameras and lights: `Camera` / `Light` models with their `NodeAttribute`
//!   (`export/attributes.rs`); ambient lights stay `Null`s (reported).
//! - Cameras and lights of non-FBX sources are turned onto FBX's attribute axes (cameras look
//!   down +X, lights shine down −Y; `export/transform.rs`, `attribute_axes`), baked into
//!   their nodes' rotation.
//! - Skins: `Deformer` Skin + `SubDeformer` Cluster per joint (`Indexes`, normalised
//!   `Weights`, `Transform`, `TransformLink`), one `Pose` BindPose, joints as `LimbNode`s;
//!   blend shapes: `Deformer` BlendShape → `SubDeformer` BlendShapeChannel → `Geometry` Shape,
//!   `DeformPercent` curves (`export/deformers.rs`).
//! - User properties: `P` records of their `Model` or `Material`, and their curves
//!   (`export/user_props.rs`).
//! - Texture maps: `Texture` + `Video` objects, each image once, `Content` for embedded
//!   images (the `export/textures.rs` module docs).
//! - Encodings: binary 7.4 (7.5 when asked or when the file could pass 2³²−1 bytes) or ASCII
//!   ([`WriteOptions`]); `--triangulate` splits n-gons first.
//!
//! Not written yet (reported in [`Report::dropped`]): geometry caches, 3DS morph swaps,
//! animated material properties.

use std::collections::HashMap;
use std::fmt;
use std::path::Path;

use glam::DVec3;

use super::objects::KTIME_PER_SECOND;
use super::write::{self, BinaryOptions, Record, Value, WriteError};
use crate::anim::Time;
use crate::quoting::quoted;
use crate::scene::{Axis, Mesh, NodeKind, Scene};
use transform::{local_matrices, model_class, rest_parts, written_worlds};

mod animation;
mod attributes;
mod deformers;
mod geometry;
mod keys;
mod pbr;
mod textures;
mod transform;
mod user_props;
mod visibility;

pub use textures::property_of as texture_property;

/// Options for [`write`](fn@write) and [`save`] (the CLI's `--fbx-version`, `--fbx-ascii`,
/// `--triangulate`, `--embed`).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct WriteOptions {
    /// The file version in `binary.version`: 7400 (the default; 32-bit record headers) or
    /// 7500 (64-bit). A 7400 binary file that could pass 2³²−1 bytes
    /// ([`write::upper_bound_32`]) is written as 7500 instead ([`Report::version`] says which);
    /// ASCII files are written with the version asked. `binary.compress_from`: arrays of at
    /// least this many bytes are zlib-compressed (binary only).
    pub binary: BinaryOptions,
    /// Write ASCII FBX ([`write::encode_ascii`]) instead of binary. As the SDK's ASCII files,
    /// they have no `FileId` or `CreationTime` records.
    pub ascii: bool,
    /// Split every polygon into triangles ([`crate::scene::geometry::triangulated`]) instead
    /// of keeping n-gons in `PolygonVertexIndex`.
    pub triangulate: bool,
    /// Put the bytes of every texture image found beside the source into its `Video ›
    /// Content`; images the source embedded are embedded whether or not this is set.
    pub embed: bool,
    /// Write only this animation (index into `Scene::animations`); `None` writes all of them.
    pub animation: Option<usize>,
    /// `FBXHeaderExtension › CreationTimeStamp` as (year, month, day, hour, minute, second,
    /// millisecond); `None` writes 1970-01-01 00:00:00:000, so that writes are reproducible.
    pub timestamp: Option<[i32; 7]>,
    /// Most keys one resampled curve may have (a longer range to resample is an error, not a
    /// huge file; curves kept key for key have no such limit).
    pub max_keys: usize,
    /// Write the source's full FBX transform stack (`--fbx-keep-pivots`, for DCC round
    /// trips) instead of the subset every importer handles: a node's own `Lcl
    /// Translation/Rotation/Scaling` and keys key for key, with its `RotationOffset`,
    /// `RotationPivot`, `ScalingOffset`, `ScalingPivot`, `PreRotation`, `PostRotation`
    /// (`RotationActive` 1) and `InheritType` as the scene holds them ([`crate::scene::Pivots`],
    /// [`crate::scene::InheritType`]); an unskinned, unmorphed mesh's geometry transform as
    /// `GeometricTranslation/Rotation/Scaling` when it is exactly T·R·S (else it is baked, as by
    /// default). Nodes whose pivots are animated, that are aimed at a target, or that inherit
    /// other than `RSrs` under a parent written baked are still baked and resampled.
    pub keep_pivots: bool,
}

impl Default for WriteOptions {
    fn default() -> Self {
        WriteOptions {
            binary: BinaryOptions::default(),
            ascii: false,
            triangulate: false,
            embed: false,
            animation: None,
            timestamp: None,
            max_keys: 1_000_000,
            keep_pivots: false,
        }
    }
}

/// What [`write`](fn@write) carried over, approximated and left out.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Report {
    /// The FBX version written (7400 or 7500; see [`WriteOptions::binary`]).
    pub version: u32,
    /// Written as ASCII.
    pub ascii: bool,
    /// `Texture` objects written (one per image and wrap mode).
    pub textures: usize,
    /// `Video` objects written (one per image), and how many hold the image's bytes.
    pub videos: (usize, usize),
    /// Polygons of more than three corners split into triangles (`--triangulate`).
    pub triangulated: usize,
    /// `Model` objects written (one per scene node).
    pub models: usize,
    /// `Geometry` objects written.
    pub geometries: usize,
    /// `Material` objects written.
    pub materials: usize,
    /// `AnimationStack`s written.
    pub stacks: usize,
    /// Nodes with a part (or the whole local matrix) resampled (per stack).
    pub resampled_nodes: usize,
    /// Resampled nodes (per stack) whose sampler reached [`WriteOptions::max_keys`] keys
    /// before its curves were within the tolerance everywhere: within the budget, not the
    /// tolerance.
    pub capped: usize,
    /// `AnimationCurve`s written from the source's keys, key for key (per stack).
    pub exact_curves: usize,
    /// Every resampled part, per stack, with the reason (the report prints counts by reason).
    pub resampled: Vec<Resampled>,
    /// Nodes whose local matrix has shear FBX's T·R·S cannot hold (nearest written).
    pub sheared: usize,
    /// What the scene has that was not written, one line each.
    pub dropped: Vec<String>,
}

/// One node part whose animation was resampled on integer frames instead of written key for
/// key.
#[derive(Debug, Clone, PartialEq)]
pub struct Resampled {
    /// The animation (index into `Scene::animations`).
    pub animation: usize,
    /// The scene node (`usize::MAX` for a material's user property).
    pub node: usize,
    /// `translation`, `rotation`, `scale`, or `transform` (the whole local matrix, baked);
    /// an attribute property (`FieldOfView`, `Color`…), `user property`, `material user
    /// property`.
    pub part: &'static str,
    /// Why no exact curve was written, in words.
    pub reason: &'static str,
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "fbx: {} models, {} geometries, {} materials, {} animation stacks; {} curves written key for key, {} node animations resampled",
            self.models,
            self.geometries,
            self.materials,
            self.stacks,
            self.exact_curves,
            self.resampled_nodes
        )?;
        let mut reasons: Vec<(&str, usize)> = Vec::new();
        for r in &self.resampled {
            match reasons.iter_mut().find(|x| x.0 == r.reason) {
                Some(x) => x.1 += 1,
                None => reasons.push((r.reason, 1)),
            }
        }
        for (reason, count) in reasons {
            write!(f, "\nresampled: {count} node parts: {reason}")?;
        }
        if self.capped > 0 {
            write!(
                f,
                "\nresampled: {} nodes reached the key limit before the tolerance",
                self.capped
            )?;
        }
        if self.sheared > 0 {
            write!(f, "; {} sheared local matrices written as their nearest T·R·S", self.sheared)?;
        }
        if self.textures > 0 {
            let (videos, embedded) = self.videos;
            write!(
                f,
                "\ntextures: {} Texture, {videos} Video ({embedded} with embedded image bytes)",
                self.textures
            )?;
        }
        if self.triangulated > 0 {
            write!(f, "\ntriangulated: {} polygons of more than 3 corners", self.triangulated)?;
        }
        if self.version >= 7500 && !self.ascii {
            write!(f, "\nwritten as binary FBX {}", self.version)?;
        }
        for d in &self.dropped {
            write!(f, "\nnot written: {d}")?;
        }
        Ok(())
    }
}

/// Key flags of a linear key as the SDK writes them (`KeyAttrFlags`): eInterpolationLinear
/// (0x4) | eTangentUser (0x400), as in Maya's `maya_interpolation_modes_7500_binary.fbx`.
pub const KEY_FLAGS_LINEAR: i32 = 0x404;

/// `KeyAttrDataFloat` weight word of a key with the default tangent weights (1/3 each, packed
/// as two 16-bit 3333s: 0x0D05_0D05), as the SDK writes it.
pub const KEY_DEFAULT_WEIGHTS: u32 = 0x0D05_0D05;

/// The KTime of `seconds`: `round(seconds × 46 186 158 000)`.
pub fn ktime(seconds: f64) -> i64 {
    (seconds * KTIME_PER_SECOND as f64).round() as i64
}

/// The FBX `TimeMode` of a frame rate (`FbxTime::EMode`), `None` when only `CustomFrameRate`
/// (mode 14) names it. Drop-frame modes are never chosen.
pub fn time_mode(fps: f64) -> Option<i32> {
    [
        (120.0, 1),
        (100.0, 2),
        (60.0, 3),
        (50.0, 4),
        (48.0, 5),
        (30.0, 6),
        (25.0, 10),
        (24.0, 11),
        (1000.0, 12),
        (96.0, 15),
        (72.0, 16),
    ]
    .iter()
    .find(|(f, _)| *f == fps)
    .map(|&(_, m)| m)
}

/// Converts `scene` into the record tree of an FBX file.
pub fn to_records(scene: &Scene, opts: &WriteOptions) -> Result<(Vec<Record>, Report), WriteError> {
    scene.validate().map_err(|e| WriteError {
        path: vec!["scene".into()],
        what: format!("inconsistent scene: {e}"),
    })?;
    let mut b = Builder { next_id: 1_000_000, ..Builder::default() };
    b.report.version = opts.binary.version;
    b.report.ascii = opts.ascii;
    b.objects(scene, opts)?;
    Ok((b.document(scene, opts), b.report))
}

/// Converts `scene` to the bytes of a binary FBX file (see the module docs).
///
/// ASCII with [`WriteOptions::ascii`]; binary 7.4 unless 7.5 is asked for or the file could
/// pass 2³²−1 bytes, which 7.4's 32-bit offsets cannot address.
pub fn write(scene: &Scene, opts: &WriteOptions) -> Result<(Vec<u8>, Report), WriteError> {
    let (mut records, mut report) = to_records(scene, opts)?;
    let mut binary = opts.binary;
    if opts.ascii {
        return Ok((write::encode_ascii(&records, binary.version)?, report));
    }
    if binary.version < super::binary::WIDE_RECORDS_FROM
        && write::upper_bound_32(&records, binary.compress_from) > u32::MAX as u64
    {
        binary.version = 7500;
        report.version = 7500;
        for r in records.iter_mut().filter(|r| r.name == "FBXHeaderExtension") {
            for c in r.children.iter_mut().filter(|c| c.name == "FBXVersion") {
                c.values = vec![Value::I32(7500)];
            }
        }
    }
    Ok((write::encode(&records, &binary)?, report))
}

/// Writes `scene` to `path` as FBX ([`write`](fn@write): binary, or ASCII), atomically (a temporary
/// file renamed into place).
pub fn save(scene: &Scene, path: &Path, opts: &WriteOptions) -> Result<Report, crate::Error> {
    let (bytes, report) = write(scene, opts)
        .map_err(|e| crate::Error::Unsupported(format!("{}: {e}", path.display())))?;
    crate::io::write_bytes_atomically(path, &bytes)?;
    Ok(report)
}

#[derive(Default)]
struct Builder {
    next_id: i64,
    objects: Vec<Record>,
    connections: Vec<Record>,
    counts: Vec<(&'static str, usize)>,
    report: Report,
    /// (scene node, `NodeAttribute` id) of every node attribute written.
    attributes: Vec<(usize, i64)>,
    /// `Geometry` ids by (scene mesh, bits of the baked geometry transform).
    geometries: HashMap<(usize, [u64; 16]), i64>,
    /// `Material` ids by scene material.
    material_ids: HashMap<usize, i64>,
    /// The default material's id, once written (slots without a material).
    default_material: Option<i64>,
    /// Written geometries a skin or blend shapes deform.
    deformed: Vec<deformers::Deformed>,
    /// (scene mesh, morph target, `BlendShapeChannel` id, rest `DeformPercent`) per channel.
    channels: Vec<(usize, usize, i64, f64)>,
    /// The `Texture`s and `Video`s written ([`textures`]).
    textures: textures::Textures,
}

fn name_class(name: &str, class: &str) -> Value {
    let mut s: Vec<u8> = name.bytes().filter(|&b| b != 0).collect();
    s.extend_from_slice(b"\x00\x01");
    s.extend_from_slice(class.as_bytes());
    Value::String(s)
}

/// `P: name, type, label, flags, values…` (a Properties70 entry).
fn p(name: &str, ty: &str, label: &str, flags: &str, values: Vec<Value>) -> Record {
    let mut v = vec![Value::str(name), Value::str(ty), Value::str(label), Value::str(flags)];
    v.extend(values);
    Record::with("P", v)
}

fn p_int(name: &str, v: i32) -> Record {
    p(name, "int", "Integer", "", vec![Value::I32(v)])
}

fn p_enum(name: &str, v: i32) -> Record {
    p(name, "enum", "", "", vec![Value::I32(v)])
}

fn p_bool(name: &str, v: bool) -> Record {
    p(name, "bool", "", "", vec![Value::I32(v as i32)])
}

fn p_double(name: &str, v: f64) -> Record {
    p(name, "double", "Number", "", vec![Value::F64(v)])
}

fn p_time(name: &str, v: i64) -> Record {
    p(name, "KTime", "Time", "", vec![Value::I64(v)])
}

fn p_vec(name: &str, ty: &str, label: &str, flags: &str, v: DVec3) -> Record {
    p(name, ty, label, flags, vec![Value::F64(v.x), Value::F64(v.y), Value::F64(v.z)])
}

fn props70(children: Vec<Record>) -> Record {
    Record { name: "Properties70".into(), values: vec![], children }
}

/// (axis index, sign) of an axis.
fn axis_parts(a: Axis) -> (i32, i32) {
    match a {
        Axis::PosX => (0, 1),
        Axis::NegX => (0, -1),
        Axis::PosY => (1, 1),
        Axis::NegY => (1, -1),
        Axis::PosZ => (2, 1),
        Axis::NegZ => (2, -1),
    }
}

fn axis_of(v: DVec3) -> Axis {
    let c = [
        (v.x, Axis::PosX, Axis::NegX),
        (v.y, Axis::PosY, Axis::NegY),
        (v.z, Axis::PosZ, Axis::NegZ),
    ];
    let (x, pos, neg) = c.iter().copied().max_by(|a, b| a.0.abs().total_cmp(&b.0.abs())).unwrap();
    if x >= 0.0 {
        pos
    } else {
        neg
    }
}

impl Builder {
    fn id(&mut self) -> i64 {
        self.next_id += 1;
        self.next_id
    }

    fn count(&mut self, ty: &'static str) {
        match self.counts.iter_mut().find(|(t, _)| *t == ty) {
            Some((_, n)) => *n += 1,
            None => self.counts.push((ty, 1)),
        }
    }

    fn oo(&mut self, child: i64, parent: i64) {
        self.connections
            .push(Record::with("C", vec![Value::str("OO"), Value::I64(child), Value::I64(parent)]));
    }

    fn op(&mut self, child: i64, parent: i64, prop: &str) {
        self.connections.push(Record::with(
            "C",
            vec![Value::str("OP"), Value::I64(child), Value::I64(parent), Value::str(prop)],
        ));
    }

    /// The object pass: per scene node a `Model` (and its `NodeAttribute`, or its
    /// `Geometry` and materials), the parenting connections, the report of what is not
    /// written, then the animation pass.
    fn objects(&mut self, scene: &Scene, opts: &WriteOptions) -> Result<(), WriteError> {
        let rest = scene.evaluate(None, Time::Frame(0.0));
        let direct = transform::direct_nodes(scene, opts.keep_pivots);
        let locals = local_matrices(scene, &rest.world, &rest.local, &direct);
        let mut model_ids = Vec::with_capacity(scene.nodes.len());
        let mut rest_trs = Vec::with_capacity(scene.nodes.len());
        for (i, node) in scene.nodes.iter().enumerate() {
            let class = model_class(scene, i);
            let parts = rest_parts(scene, i, locals[i], direct[i], opts.keep_pivots);
            rest_trs.push((parts.0, parts.1, parts.2));
            let stack = opts.keep_pivots && direct[i];
            let id = self.model(scene, i, class, parts, stack, opts);
            model_ids.push(id);
            match node.mesh {
                Some(m) if class == "Mesh" => self.mesh_node(scene, i, m, id, opts),
                _ => self.node_attribute(scene, i, id, class),
            }
        }
        // Model parenting (OO child → parent, 0 the root), in node order.
        let mut parent_links = Vec::with_capacity(scene.nodes.len());
        for (i, node) in scene.nodes.iter().enumerate() {
            parent_links.push((model_ids[i], node.parent.map_or(0, |p| model_ids[p])));
        }
        let mut conns = std::mem::take(&mut self.connections);
        for (c, p) in parent_links {
            self.oo(c, p);
        }
        self.connections.append(&mut conns);
        let unskinned = self.skins(scene, &model_ids, &written_worlds(scene, &rest.world));
        self.blend_shapes(scene);
        self.report.models = scene.nodes.len();
        self.report.geometries = self.geometries.len();
        self.report.materials = self.material_ids.len() + self.default_material.is_some() as usize;
        // Lines the object pass added (user properties left out) come after the scene's.
        let mut lines = dropped(scene);
        lines.append(&mut self.report.dropped);
        self.report.dropped = lines;
        if unskinned > 0 {
            self.report.dropped.push(format!(
                "{unskinned} skinned meshes whose inverse bind matrices are not affine (FBX \
                 clusters hold 3×4 matrices): written in their rest shape, unskinned"
            ));
        }
        let notes = self.texture_notes();
        self.report.dropped.extend(notes);
        self.animations(scene, opts, &model_ids, &direct, &rest_trs)
    }

    /// Node `i`'s `Model` of class `class` with its rest `Lcl Translation/Rotation/Scaling`
    /// and whether they reproduce its local matrix ([`transform::rest_parts`]); returns its id.
    fn model(
        &mut self,
        scene: &Scene,
        i: usize,
        class: &str,
        (t, r, s, exact): (DVec3, DVec3, DVec3, bool),
        stack: bool,
        opts: &WriteOptions,
    ) -> i64 {
        let node = &scene.nodes[i];
        let id = self.id();
        if !exact {
            self.report.sheared += 1;
        }
        let inherit = match node.inherit {
            _ if !stack => 1,
            crate::scene::InheritType::RrSs => 0,
            crate::scene::InheritType::RSrs => 1,
            crate::scene::InheritType::Rrs => 2,
        };
        let mut props = vec![p_enum("InheritType", inherit)];
        if let Some(pv) = node.pivots.as_deref().filter(|_| stack) {
            // The SDK applies PreRotation/PostRotation/pivots only with RotationActive 1
            // (ufbx reads them regardless); PreRotation and PostRotation are XYZ Euler
            // degrees whatever the RotationOrder.
            let deg = |q: glam::DQuat, stored: DVec3| {
                let to_rad = std::f64::consts::PI / 180.0;
                let e = crate::scene::EulerOrder::Xyz.to_quat(stored * to_rad);
                if e == q || e == -q {
                    stored
                } else {
                    transform::euler_xyz(q)
                }
            };
            props.extend([
                p_bool("RotationActive", true),
                p_vec("RotationOffset", "Vector3D", "Vector", "", pv.rotation_offset),
                p_vec("RotationPivot", "Vector3D", "Vector", "", pv.rotation_pivot),
                p_vec("ScalingOffset", "Vector3D", "Vector", "", pv.scaling_offset),
                p_vec("ScalingPivot", "Vector3D", "Vector", "", pv.scaling_pivot),
                p_vec(
                    "PreRotation",
                    "Vector3D",
                    "Vector",
                    "",
                    deg(pv.pre_rotation, pv.pre_rotation_degrees),
                ),
                p_vec(
                    "PostRotation",
                    "Vector3D",
                    "Vector",
                    "",
                    deg(pv.post_rotation, pv.post_rotation_degrees),
                ),
            ]);
        }
        props.extend([
            p_vec("Lcl Translation", "Lcl Translation", "", "A", t),
            p_vec("Lcl Rotation", "Lcl Rotation", "", "A", r),
            p_vec("Lcl Scaling", "Lcl Scaling", "", "A", s),
        ]);
        if let Some((gt, gr, gs)) = kept_geometry(scene, i, opts) {
            props.extend([
                p_vec("GeometricTranslation", "Vector3D", "Vector", "", gt),
                p_vec("GeometricRotation", "Vector3D", "Vector", "", gr),
                p_vec("GeometricScaling", "Vector3D", "Vector", "", gs),
            ]);
        }
        props.push(p_int(
            "DefaultAttributeIndex",
            if matches!(class, "Mesh" | "Camera" | "Light") { 0 } else { -1 },
        ));
        if node.hidden {
            props.push(p("Visibility", "Visibility", "", "A", vec![Value::F64(0.0)]));
        }
        let mut model = Record::with(
            "Model",
            vec![Value::I64(id), name_class(&node.name, "Model"), Value::str(class)],
        )
        .child(Record::one("Version", 232))
        .child(props70(props))
        .child(Record::with("Shading", vec![Value::Char(b'T')]))
        .child(Record::one("Culling", "CullingOff"));
        let clashes = user_props::append_user_props(&mut model, node.user_properties());
        self.user_prop_clashes(&node.name, clashes);
        self.objects.push(model);
        self.count("Model");
        id
    }

    /// Reports the user properties of `owner` not written because a built-in property of the
    /// record has their name.
    fn user_prop_clashes(&mut self, owner: &str, names: Vec<String>) {
        for n in names {
            self.report.dropped.push(format!(
                "user property {} of {}: the record has a built-in property of that name and \
                 another value",
                quoted(&n),
                quoted(owner)
            ));
        }
    }

    /// Mesh node `i` (mesh `m`, model `id`): its `Geometry` (one per mesh and geometry
    /// transform, shared by instances) and its materials.
    fn mesh_node(&mut self, scene: &Scene, i: usize, m: usize, id: i64, opts: &WriteOptions) {
        let mesh = &scene.meshes[m];
        let g = match kept_geometry(scene, i, opts) {
            Some(_) => glam::DMat4::IDENTITY, // written as the Model's Geometric* properties
            None => scene.nodes[i].geometry_transform(),
        };
        let key = (m, g.to_cols_array().map(f64::to_bits));
        let geo = match self.geometries.get(&key) {
            Some(&geo) => geo,
            None => {
                let geo = self.id();
                let rec = if opts.triangulate {
                    let (t, _) = crate::scene::geometry::triangulated(mesh);
                    self.report.triangulated +=
                        (0..mesh.polygon_count()).filter(|&p| mesh.polygon(p).len() > 3).count();
                    geometry::geometry(geo, &t, g)
                } else {
                    geometry::geometry(geo, mesh, g)
                };
                self.objects.push(rec);
                self.count("Geometry");
                self.geometries.insert(key, geo);
                if mesh.skin.is_some() || !mesh.morph_targets.is_empty() {
                    let d = deformers::Deformed { node: i, mesh: m, geometry: geo, bake: g };
                    self.deformed.push(d);
                }
                geo
            }
        };
        self.oo(geo, id);
        self.materials(scene, mesh, id, opts);
    }

    /// The materials of `mesh` connected to its model `id`, in slot order
    /// (`LayerElementMaterial` indexes this list); each scene material is written once, and
    /// slots without one share a default grey material.
    fn materials(&mut self, scene: &Scene, mesh: &Mesh, id: i64, opts: &WriteOptions) {
        let slots = mesh.material_slots.len().max(1);
        for slot in 0..slots {
            let mat = mesh.material_slots.get(slot).copied().flatten();
            let mid = match mat {
                Some(mi) => match self.material_ids.get(&mi) {
                    Some(&x) => x,
                    None => {
                        let x = self.id();
                        let mat = &scene.materials[mi];
                        let mut rec = material(x, &mat.name, mat);
                        if let Some(pbr) = mat.pbr.as_ref().filter(|p| p.model.is_pbr()) {
                            self.pbr_material(x, &mut rec, mat, pbr, opts);
                        }
                        let clashes = user_props::append_user_props(&mut rec, &mat.user_properties);
                        self.user_prop_clashes(&mat.name, clashes);
                        self.objects.push(rec);
                        self.count("Material");
                        self.material_textures(x, mat, opts);
                        self.material_ids.insert(mi, x);
                        x
                    }
                },
                None => match self.default_material {
                    Some(x) => x,
                    None => {
                        let x = self.id();
                        let mut d = crate::scene::Material::default();
                        d.diffuse = glam::Vec3::splat(0.8);
                        self.objects.push(material(x, "keyscene_default", &d));
                        self.count("Material");
                        self.default_material = Some(x);
                        x
                    }
                },
            };
            self.oo(mid, id);
        }
    }

    fn document(&mut self, scene: &Scene, opts: &WriteOptions) -> Vec<Record> {
        let ts = opts.timestamp.unwrap_or([1970, 1, 1, 0, 0, 0, 0]);
        let creator = format!("keyscene {}", env!("CARGO_PKG_VERSION"));
        let mut stamp = Record::new("CreationTimeStamp").child(Record::one("Version", 1000));
        for (name, v) in
            ["Year", "Month", "Day", "Hour", "Minute", "Second", "Millisecond"].iter().zip(ts)
        {
            stamp.push(Record::one(*name, v));
        }
        let header = Record::new("FBXHeaderExtension")
            .child(Record::one("FBXHeaderVersion", 1003))
            .child(Record::one("FBXVersion", opts.binary.version as i32))
            .child(Record::one("EncryptionType", 0))
            .child(stamp)
            .child(Record::one("Creator", creator.as_str()))
            .child(
                Record::with(
                    "SceneInfo",
                    vec![name_class("GlobalInfo", "SceneInfo"), Value::str("UserData")],
                )
                .child(Record::one("Type", "UserData"))
                .child(Record::one("Version", 100))
                .child(
                    Record::new("MetaData")
                        .child(Record::one("Version", 100))
                        .child(Record::one("Title", ""))
                        .child(Record::one("Subject", ""))
                        .child(Record::one("Author", ""))
                        .child(Record::one("Keywords", ""))
                        .child(Record::one("Revision", ""))
                        .child(Record::one("Comment", "")),
                )
                .child(props70(vec![])),
            );
        let axes = scene.meta.axes;
        let right = axis_of(axes.right());
        let (ua, us) = axis_parts(axes.up);
        let (fa, fs) = axis_parts(axes.front);
        let (ca, cs) = axis_parts(right);
        let cm = scene.meta.units.metres() * 100.0;
        let first =
            opts.animation.and_then(|a| scene.animations.get(a)).or(scene.animations.first());
        let fps = first
            .map(|a| a.fps)
            .or(scene.meta.frame_rate)
            .filter(|f| f.is_finite() && *f > 0.0)
            .unwrap_or(30.0);
        let (f0, f1) =
            first.map(|a| a.frame_range).or(scene.meta.frame_range).unwrap_or((0.0, 0.0));
        let mut gs = vec![
            p_int("UpAxis", ua),
            p_int("UpAxisSign", us),
            p_int("FrontAxis", fa),
            p_int("FrontAxisSign", fs),
            p_int("CoordAxis", ca),
            p_int("CoordAxisSign", cs),
            p_int("OriginalUpAxis", ua),
            p_int("OriginalUpAxisSign", us),
            p_double("UnitScaleFactor", cm),
            p_double("OriginalUnitScaleFactor", cm),
            p(
                "AmbientColor",
                "ColorRGB",
                "Color",
                "",
                vec![Value::F64(0.0), Value::F64(0.0), Value::F64(0.0)],
            ),
            p("DefaultCamera", "KString", "", "", vec![Value::str("Producer Perspective")]),
            p_enum("TimeMode", time_mode(fps).unwrap_or(14)),
            p_time("TimeSpanStart", ktime(f0 / fps)),
            p_time("TimeSpanStop", ktime(f1 / fps)),
            p_double("CustomFrameRate", fps),
        ];
        gs.shrink_to_fit();
        let settings =
            Record::new("GlobalSettings").child(Record::one("Version", 1000)).child(props70(gs));
        let doc_id = self.id();
        let documents = Record::new("Documents").child(Record::one("Count", 1)).child(
            Record::with("Document", vec![Value::I64(doc_id), Value::str(""), Value::str("Scene")])
                .child(props70(vec![]))
                .child(Record::one("RootNode", 0i64)),
        );
        let total: usize = self.counts.iter().map(|c| c.1).sum::<usize>() + 1;
        let mut defs = Record::new("Definitions")
            .child(Record::one("Version", 100))
            .child(Record::one("Count", total as i32))
            .child(Record::one("ObjectType", "GlobalSettings").child(Record::one("Count", 1)));
        for (ty, n) in &self.counts {
            defs.push(Record::one("ObjectType", *ty).child(Record::one("Count", *n as i32)));
        }
        let objects = Record {
            name: "Objects".into(),
            values: vec![],
            children: std::mem::take(&mut self.objects),
        };
        let connections = Record {
            name: "Connections".into(),
            values: vec![],
            children: std::mem::take(&mut self.connections),
        };
        let mut takes = Record::new("Takes");
        let chosen: Vec<usize> = match opts.animation {
            Some(a) => (a < scene.animations.len()).then_some(a).into_iter().collect(),
            None => (0..scene.animations.len()).collect(),
        };
        let names: Vec<String> = chosen
            .iter()
            .map(|&ai| {
                let a = &scene.animations[ai];
                if a.name.is_empty() {
                    format!("Take {:03}", ai + 1)
                } else {
                    a.name.clone()
                }
            })
            .collect();
        takes.push(Record::one("Current", names.first().cloned().unwrap_or_default()));
        for (name, &ai) in names.iter().zip(&chosen) {
            let a = &scene.animations[ai];
            let fps = if a.fps.is_finite() && a.fps > 0.0 { a.fps } else { 30.0 };
            let (k0, k1) = (ktime(a.frame_range.0 / fps), ktime(a.frame_range.1 / fps));
            let clean: String = name.chars().filter(|&c| c != '\0').collect();
            takes.push(
                Record::one("Take", clean.as_str())
                    .child(Record::one("FileName", format!("{}.tak", clean.replace(' ', "_"))))
                    .child(Record::with("LocalTime", vec![Value::I64(k0), Value::I64(k1)]))
                    .child(Record::with("ReferenceTime", vec![Value::I64(k0), Value::I64(k1)])),
            );
        }
        let mut roots = vec![header];
        if !opts.ascii {
            // The SDK's ASCII files have neither (the triple is a binary-file check).
            roots.push(Record::with("FileId", vec![Value::Raw(write::FILE_ID.to_vec())]));
            roots.push(Record::one("CreationTime", write::CREATION_TIME));
        }
        roots.extend([
            Record::one("Creator", creator),
            settings,
            documents,
            Record::new("References"),
            defs,
            objects,
            connections,
            takes,
        ]);
        roots
    }
}

/// With [`WriteOptions::keep_pivots`]: node `i`'s geometry transform as the
/// `GeometricTranslation`, `GeometricRotation` (XYZ Euler degrees) and `GeometricScaling` its
/// `Model` is written with, when it is not the identity, its mesh has neither a skin nor
/// blend shapes (their clusters and shapes are written in the baked geometry's space) and
/// T·R·S reproduces it exactly; `None` when it is baked into the vertices instead.
fn kept_geometry(scene: &Scene, i: usize, opts: &WriteOptions) -> Option<(DVec3, DVec3, DVec3)> {
    let node = &scene.nodes[i];
    let mesh = scene.meshes.get(node.mesh?)?;
    if !opts.keep_pivots || mesh.skin.is_some() || !mesh.morph_targets.is_empty() {
        return None;
    }
    let g = node.geometry_transform();
    if g == glam::DMat4::IDENTITY {
        return None;
    }
    let (t, r, s, exact) = transform::decompose(g);
    exact.then_some((t, r, s))
}

/// What the scene has that the writer does not write, one line each (`Report::dropped`).
fn dropped(scene: &Scene) -> Vec<String> {
    let classes: Vec<&str> = (0..scene.nodes.len()).map(|i| model_class(scene, i)).collect();
    let count = |f: &dyn Fn(usize) -> bool| (0..scene.nodes.len()).filter(|&i| f(i)).count();
    let cameras =
        count(&|i| matches!(scene.nodes[i].kind, NodeKind::Camera(_)) && classes[i] != "Camera");
    let lights = count(&|i| {
        matches!(scene.nodes[i].kind, NodeKind::Light(_) | NodeKind::Ambient)
            && classes[i] != "Light"
    });
    let mut dropped = Vec::new();
    if cameras > 0 {
        dropped.push(format!("{cameras} camera attributes (nodes written as Null)"));
    }
    if lights > 0 {
        dropped.push(format!(
            "{lights} ambient lights (FBX has no ambient light node; written as Null)"
        ));
    }
    if !scene.geometry_caches.is_empty() {
        dropped.push(format!("{} geometry caches", scene.geometry_caches.len()));
    }
    dropped
}

fn material(id: i64, name: &str, m: &crate::scene::Material) -> Record {
    let c = |v: glam::Vec3| v.as_dvec3();
    Record::with("Material", vec![Value::I64(id), name_class(name, "Material"), Value::str("")])
        .child(Record::one("Version", 102))
        .child(Record::one("ShadingModel", "phong"))
        .child(Record::one("MultiLayer", 0))
        .child(props70(vec![
            p_vec("AmbientColor", "Color", "", "A", c(m.ambient)),
            p_double("AmbientFactor", m.ambient_factor as f64),
            p_vec("DiffuseColor", "Color", "", "A", c(m.diffuse)),
            p_double("DiffuseFactor", m.diffuse_factor as f64),
            p_vec("EmissiveColor", "Color", "", "A", c(m.emissive)),
            p_double("EmissiveFactor", m.emissive_factor as f64),
            p_vec("SpecularColor", "Color", "", "A", c(m.specular)),
            p_double("SpecularFactor", m.shininess_strength as f64),
            p_double("ShininessExponent", (m.shininess as f64 * 100.0).max(0.0)),
            // `Opacity` as the reader keeps it (`f32`) and the transparency it derives from it
            // (`1 − Opacity` in `f32`, `Material::update_fbx_derived`), so a file written from
            // this file holds the same two values (docs/fbx.md, "FBX → FBX → FBX").
            p_double("TransparencyFactor", (1.0 - (1.0 - m.transparency)) as f64),
            p_double("Opacity", (1.0 - m.transparency) as f64),
        ]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ktime_is_seconds_times_46186158000_rounded() {
        assert_eq!(ktime(1.0), 46_186_158_000);
        assert_eq!(ktime(1.0 / 30.0), 1_539_538_600);
        assert_eq!(ktime(1.0 / 24.0), 1_924_423_250);
        assert_eq!(time_mode(24.0), Some(11));
        assert_eq!(time_mode(29.97), None);
    }
}

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
//!   - **Resampled** otherwise: a key per integer frame of the animation range (and at its
//!     ends), linear; quaternion keys (slerp), 3DS relative rotations, other Euler orders,
//!     blended layers and keys with no exact form take the evaluated part; baked nodes (pivots,
//!     other inherit types, targets) the decomposed `parent_world⁻¹ · world`. Euler angles are
//!     unwrapped so consecutive keys never jump by 360°. Each part is listed in
//!     [`Report::resampled`] with its reason; a range of more than
//!     [`WriteOptions::max_keys`] frames to resample is an error (the 10-million-frame Maya
//!     files write because their curves are kept).
//! - Cameras and lights: `Camera` / `Light` models with their `NodeAttribute`
//!   (`camera_attribute`, `light_attribute` below); ambient lights stay `Null`s (reported).
//!
//! - Texture maps: `Texture` + `Video` objects, each image once, `Content` for embedded
//!   images (the `export/textures.rs` module docs).
//! - Encodings: binary 7.4 (7.5 when asked or when the file could pass 2³²−1 bytes) or ASCII
//!   ([`WriteOptions`]); `--triangulate` splits n-gons first.
//!
//! Not written yet (reported in [`Report::dropped`]): skins, blend shapes, geometry caches,
//! 3DS morph swaps, animated camera/light properties.

use std::collections::HashMap;
use std::fmt;
use std::path::Path;

use glam::{DMat3, DMat4, DQuat, DVec3, EulerRot};

use super::objects::KTIME_PER_SECOND;
use super::write::{self, BinaryOptions, Record, Value, WriteError};
use crate::anim::{self, ChannelTarget, RotationTrack, Time, Track};
use crate::scene::{Axis, EulerOrder, FovAxis, LightKind, Mesh, NodeKind, Scene};

mod keys;
mod textures;

pub use textures::property_of as texture_property;

/// Options for [`write`] and [`save`] (the CLI's `--fbx-version`, `--fbx-ascii`,
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
        }
    }
}

/// What [`write`] carried over, approximated and left out.
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
    /// Nodes with a part (or the whole local matrix) resampled on integer frames (per stack).
    pub resampled_nodes: usize,
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
    /// The scene node.
    pub node: usize,
    /// `translation`, `rotation`, `scale`, or `transform` (the whole local matrix, baked).
    pub part: &'static str,
    /// Why no exact curve was written, in words.
    pub reason: &'static str,
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "fbx: {} models, {} geometries, {} materials, {} animation stacks; {} curves written key for key, {} node animations resampled on integer frames",
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

/// Writes `scene` to `path` as FBX ([`write`]: binary, or ASCII), atomically (a temporary
/// file renamed into place).
pub fn save(scene: &Scene, path: &Path, opts: &WriteOptions) -> Result<Report, crate::Error> {
    let (bytes, report) = write(scene, opts)
        .map_err(|e| crate::Error::Unsupported(format!("{}: {e}", path.display())))?;
    crate::write_atomically::<crate::Error>(path, |w| {
        w.write_all(&bytes).map_err(|source| crate::Error::Io { path: path.into(), source })
    })?;
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

/// T, XYZ Euler degrees (FBX eEulerXYZ: R = Rz · Ry · Rx), S of a local matrix, and whether
/// T·R·S reproduces it (no shear).
fn decompose(m: DMat4) -> (DVec3, DVec3, DVec3, bool) {
    let (s, q, t) = m.to_scale_rotation_translation();
    let e = euler_xyz(q);
    let back = compose(t, e, s);
    let scale = m.to_cols_array().iter().fold(1.0f64, |a, v| a.max(v.abs()));
    let exact = back.abs_diff_eq(m, 1e-9 * scale);
    (t, e, s, exact)
}

fn euler_xyz(q: DQuat) -> DVec3 {
    let (z, y, x) = q.to_euler(EulerRot::ZYX);
    DVec3::new(x, y, z) * (180.0 / std::f64::consts::PI)
}

fn compose(t: DVec3, euler_deg: DVec3, s: DVec3) -> DMat4 {
    let r = euler_deg * (std::f64::consts::PI / 180.0);
    let q = DQuat::from_euler(EulerRot::ZYX, r.z, r.y, r.x);
    DMat4::from_scale_rotation_translation(s, q, t)
}

/// `e` moved by whole turns per component to lie within 180° of `prev`.
fn unwrap_near(e: DVec3, prev: DVec3) -> DVec3 {
    let f = |a: f64, p: f64| a + ((p - a) / 360.0).round() * 360.0;
    DVec3::new(f(e.x, prev.x), f(e.y, prev.y), f(e.z, prev.z))
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

    fn objects(&mut self, scene: &Scene, opts: &WriteOptions) -> Result<(), WriteError> {
        let rest = scene.evaluate(None, Time::Frame(0.0));
        let locals = local_matrices(scene, &rest.world, &rest.local);
        let mut model_ids = Vec::with_capacity(scene.nodes.len());
        let mut geometries: HashMap<(usize, [u64; 16]), i64> = HashMap::new();
        let mut material_ids: HashMap<usize, i64> = HashMap::new();
        let mut default_material = None;
        let (mut cameras, mut lights, mut skins, mut morphs) = (0, 0, 0, 0);
        for (i, node) in scene.nodes.iter().enumerate() {
            let id = self.id();
            model_ids.push(id);
            let (t, r, s, exact) = decompose(locals[i]);
            if !exact {
                self.report.sheared += 1;
            }
            let class = match node.kind {
                _ if node.mesh.is_some() => "Mesh",
                NodeKind::Bone => "LimbNode",
                NodeKind::Camera(c) if c < scene.cameras.len() => "Camera",
                NodeKind::Light(l)
                    if scene.lights.get(l).is_some_and(|l| l.kind != LightKind::Ambient) =>
                {
                    "Light"
                }
                _ => "Null",
            };
            match node.kind {
                NodeKind::Camera(_) if class != "Camera" => cameras += 1,
                NodeKind::Light(_) | NodeKind::Ambient if class != "Light" => lights += 1,
                _ => {}
            }
            let mut props = vec![
                p_enum("InheritType", 1),
                p_vec("Lcl Translation", "Lcl Translation", "", "A", t),
                p_vec("Lcl Rotation", "Lcl Rotation", "", "A", r),
                p_vec("Lcl Scaling", "Lcl Scaling", "", "A", s),
                p_int(
                    "DefaultAttributeIndex",
                    if matches!(class, "Mesh" | "Camera" | "Light") { 0 } else { -1 },
                ),
            ];
            if node.hidden {
                props.push(p("Visibility", "Visibility", "", "A", vec![Value::F64(0.0)]));
            }
            let model = Record::with(
                "Model",
                vec![Value::I64(id), name_class(&node.name, "Model"), Value::str(class)],
            )
            .child(Record::one("Version", 232))
            .child(props70(props))
            .child(Record::with("Shading", vec![Value::Char(b'T')]))
            .child(Record::one("Culling", "CullingOff"));
            self.objects.push(model);
            self.count("Model");
            if class != "Mesh" {
                let attr = self.id();
                let a = match node.kind {
                    NodeKind::Camera(c) if class == "Camera" => {
                        camera_attribute(attr, &node.name, &scene.cameras[c])
                    }
                    NodeKind::Light(l) if class == "Light" => {
                        light_attribute(attr, &node.name, &scene.lights[l])
                    }
                    _ => {
                        let flags = if class == "LimbNode" { "Skeleton" } else { "Null" };
                        let mut a = Record::with(
                            "NodeAttribute",
                            vec![
                                Value::I64(attr),
                                name_class("", "NodeAttribute"),
                                Value::str(class),
                            ],
                        );
                        if class == "LimbNode" {
                            a.push(props70(vec![p_double("Size", 10.0)]));
                        }
                        a.push(Record::one("TypeFlags", flags));
                        a
                    }
                };
                self.attributes.push((i, attr));
                self.objects.push(a);
                self.count("NodeAttribute");
                self.oo(attr, id);
                continue;
            }
            let m = node.mesh.unwrap();
            let mesh = &scene.meshes[m];
            if mesh.skin.is_some() {
                skins += 1;
            }
            if !mesh.morph_targets.is_empty() {
                morphs += 1;
            }
            let g = node.geometry_transform();
            let key = (m, g.to_cols_array().map(f64::to_bits));
            let geo = match geometries.get(&key) {
                Some(&geo) => geo,
                None => {
                    let geo = self.id();
                    let rec = if opts.triangulate {
                        let (t, _) = crate::scene::geometry::triangulated(mesh);
                        self.report.triangulated += (0..mesh.polygon_count())
                            .filter(|&p| mesh.polygon(p).len() > 3)
                            .count();
                        geometry(geo, &t, g)
                    } else {
                        geometry(geo, mesh, g)
                    };
                    self.objects.push(rec);
                    self.count("Geometry");
                    geometries.insert(key, geo);
                    geo
                }
            };
            self.oo(geo, id);
            // Materials in slot order: LayerElementMaterial indexes this list.
            let slots = mesh.material_slots.len().max(1);
            for slot in 0..slots {
                let mat = mesh.material_slots.get(slot).copied().flatten();
                let mid = match mat {
                    Some(mi) => match material_ids.get(&mi) {
                        Some(&x) => x,
                        None => {
                            let x = self.id();
                            let mat = &scene.materials[mi];
                            self.objects.push(material(x, &mat.name, mat));
                            self.count("Material");
                            self.material_textures(x, mat, opts);
                            material_ids.insert(mi, x);
                            x
                        }
                    },
                    None => match default_material {
                        Some(x) => x,
                        None => {
                            let x = self.id();
                            let mut d = crate::scene::Material::default();
                            d.diffuse = glam::Vec3::splat(0.8);
                            self.objects.push(material(x, "keyscene_default", &d));
                            self.count("Material");
                            default_material = Some(x);
                            x
                        }
                    },
                };
                self.oo(mid, id);
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
        self.report.models = scene.nodes.len();
        self.report.geometries = geometries.len();
        self.report.materials = material_ids.len() + default_material.is_some() as usize;
        let mut dropped = Vec::new();
        if skins > 0 {
            dropped
                .push(format!("{skins} skinned meshes (written as their rest shape, unskinned)"));
        }
        if morphs > 0 {
            dropped.push(format!("{morphs} meshes' blend shapes"));
        }
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
        dropped.extend(self.texture_notes());
        self.report.dropped = dropped;
        self.animations(scene, opts, &model_ids)
    }

    fn animations(
        &mut self,
        scene: &Scene,
        opts: &WriteOptions,
        model_ids: &[i64],
    ) -> Result<(), WriteError> {
        let chosen: Vec<usize> = match opts.animation {
            Some(a) if a < scene.animations.len() => vec![a],
            Some(_) => vec![],
            None => (0..scene.animations.len()).collect(),
        };
        let n = scene.nodes.len();
        let direct = direct_nodes(scene);
        // The values the Model records hold (the rest pose): a baked node whose animation
        // holds other values, even constant ones, needs curves.
        let rest_pose = scene.evaluate(None, Time::Frame(0.0));
        let rest: Vec<(DVec3, DVec3, DVec3)> =
            local_matrices(scene, &rest_pose.world, &rest_pose.local)
                .iter()
                .map(|l| {
                    let (t, r, s, _) = decompose(*l);
                    (t, r, s)
                })
                .collect();
        let order = scene.depth_first();
        let mut dropped_morph = 0;
        for ai in chosen {
            let anim = &scene.animations[ai];
            let fps = if anim.fps.is_finite() && anim.fps > 0.0 { anim.fps } else { 30.0 };
            let (f0, f1) = anim.frame_range;
            let (f0, f1) =
                if f0.is_finite() && f1.is_finite() && f1 >= f0 { (f0, f1) } else { (0.0, 0.0) };
            dropped_morph += anim
                .channels
                .iter()
                .filter(|c| matches!(c.target, crate::anim::ChannelTarget::Morph(_)))
                .count();
            let stack = self.id();
            let layer = self.id();
            let name = if anim.name.is_empty() {
                format!("Take {:03}", ai + 1)
            } else {
                anim.name.clone()
            };
            let (k0, k1) = (ktime(f0 / fps), ktime(f1 / fps));
            self.objects.push(
                Record::with(
                    "AnimationStack",
                    vec![Value::I64(stack), name_class(&name, "AnimStack"), Value::str("")],
                )
                .child(props70(vec![
                    p_time("LocalStart", k0),
                    p_time("LocalStop", k1),
                    p_time("ReferenceStart", k0),
                    p_time("ReferenceStop", k1),
                ])),
            );
            self.objects.push(Record::with(
                "AnimationLayer",
                vec![Value::I64(layer), name_class("BaseLayer", "AnimLayer"), Value::str("")],
            ));
            self.count("AnimationStack");
            self.count("AnimationLayer");
            self.oo(layer, stack);
            self.report.stacks += 1;

            // Per node and part (T, R, S): the source's keys, a resample, or nothing.
            let by_node = anim::channels_by_node(scene, Some(ai));
            let mut moves = vec![false; n];
            for &i in &order {
                let node = &scene.nodes[i];
                let parent_moves = node.parent.is_some_and(|p| moves[p]);
                moves[i] = !by_node[i].is_empty()
                    || aimed(scene, i)
                    || node.parent.is_some_and(|p| aimed(scene, p))
                    || (node.inherit != crate::scene::InheritType::RSrs && parent_moves);
            }
            let plans: Vec<[Plan; 3]> = (0..n)
                .map(|i| {
                    if direct[i] {
                        plan_direct(scene, i, &by_node[i], fps, (f0, f1))
                    } else if moves[i] {
                        std::array::from_fn(|_| Plan::Bake)
                    } else {
                        std::array::from_fn(|_| Plan::Static)
                    }
                })
                .collect();
            let sampled =
                plans.iter().any(|p| p.iter().any(|x| matches!(x, Plan::Bake | Plan::Resample(_))));
            // Samples on integer frames for the parts that need them.
            let mut frames = Vec::new();
            let mut samples: Vec<Vec<(DVec3, DVec3, DVec3)>> = vec![Vec::new(); n];
            if sampled {
                frames.push(f0);
                let mut f = f0.floor() + 1.0;
                while f < f1 {
                    frames.push(f);
                    f += 1.0;
                    if frames.len() > opts.max_keys {
                        return Err(WriteError {
                            path: vec!["Objects".into(), "AnimationCurve".into()],
                            what: format!(
                                "animation {:?} spans {} frames, more keys than the limit {} (a resampled part: {})",
                                anim.name,
                                f1 - f0,
                                opts.max_keys,
                                plans
                                    .iter()
                                    .flatten()
                                    .find_map(|p| match p {
                                        Plan::Resample(r) => Some(*r),
                                        Plan::Bake => Some(BAKED),
                                        _ => None,
                                    })
                                    .unwrap_or("")
                            ),
                        });
                    }
                }
                if f1 > f0 {
                    frames.push(f1);
                }
                let wanted: Vec<usize> = (0..n)
                    .filter(|&i| {
                        plans[i].iter().any(|x| matches!(x, Plan::Bake | Plan::Resample(_)))
                    })
                    .collect();
                for s in &wanted {
                    samples[*s].reserve(frames.len());
                }
                for &fr in &frames {
                    let pose = scene.evaluate(Some(ai), Time::Frame(fr));
                    let locals = local_matrices(scene, &pose.world, &pose.local);
                    for &i in &wanted {
                        let (t, r, s) = if direct[i] {
                            match anim::node_parts(scene, i, &by_node[i], fr) {
                                Some((t, q, s)) => (t, euler_xyz(q), s),
                                None => {
                                    let (t, r, s, _) = decompose(locals[i]);
                                    (t, r, s)
                                }
                            }
                        } else {
                            let (t, r, s, _) = decompose(locals[i]);
                            (t, r, s)
                        };
                        let r = unwrap_near(r, samples[i].last().map_or(rest[i].1, |prev| prev.1));
                        samples[i].push((t, r, s));
                    }
                }
            }
            let times: Vec<i64> = frames.iter().map(|f| ktime(f / fps)).collect();
            for i in 0..n {
                let plan = &plans[i];
                if plan.iter().all(|p| matches!(p, Plan::Bake)) {
                    let s = &samples[i];
                    let first = rest[i];
                    let differs = s.iter().any(|x| {
                        !x.0.abs_diff_eq(first.0, 1e-12 * first.0.abs().max_element().max(1.0))
                            || !x.1.abs_diff_eq(first.1, 1e-9)
                            || !x
                                .2
                                .abs_diff_eq(first.2, 1e-12 * first.2.abs().max_element().max(1.0))
                    });
                    if !differs {
                        continue;
                    }
                    self.report.resampled_nodes += 1;
                    self.report.resampled.push(Resampled {
                        animation: ai,
                        node: i,
                        part: "transform",
                        reason: BAKED,
                    });
                }
                let mut resampled_here = false;
                for (pick, (part, prop)) in
                    [("T", "Lcl Translation"), ("R", "Lcl Rotation"), ("S", "Lcl Scaling")]
                        .into_iter()
                        .enumerate()
                {
                    let (defaults, curves) = match &plan[pick] {
                        Plan::Static => continue,
                        Plan::Exact { defaults, curves } => {
                            self.report.exact_curves += curves.iter().flatten().count();
                            (*defaults, curves.clone())
                        }
                        Plan::Bake | Plan::Resample(_) => {
                            if let Plan::Resample(reason) = &plan[pick] {
                                let reason = *reason;
                                resampled_here = true;
                                self.report.resampled.push(Resampled {
                                    animation: ai,
                                    node: i,
                                    part: ["translation", "rotation", "scale"][pick],
                                    reason,
                                });
                            }
                            let s = &samples[i];
                            if s.is_empty() {
                                continue;
                            }
                            let vals: Vec<DVec3> =
                                s.iter().map(|x| [x.0, x.1, x.2][pick]).collect();
                            let curves = [0, 1, 2].map(|axis| {
                                Some(keys::FbxCurve {
                                    keys: times
                                        .iter()
                                        .zip(&vals)
                                        .map(|(&time, v)| keys::FbxKey {
                                            time,
                                            value: v[axis] as f32,
                                            flags: KEY_FLAGS_LINEAR,
                                            data: [
                                                0.0,
                                                0.0,
                                                f32::from_bits(KEY_DEFAULT_WEIGHTS),
                                                0.0,
                                            ],
                                        })
                                        .collect(),
                                    pre: None,
                                    post: None,
                                })
                            });
                            (vals[0], curves)
                        }
                    };
                    let cn = self.id();
                    self.objects.push(
                        Record::with(
                            "AnimationCurveNode",
                            vec![Value::I64(cn), name_class(part, "AnimCurveNode"), Value::str("")],
                        )
                        .child(props70(vec![
                            p_double_a("d|X", defaults.x),
                            p_double_a("d|Y", defaults.y),
                            p_double_a("d|Z", defaults.z),
                        ])),
                    );
                    self.count("AnimationCurveNode");
                    self.oo(cn, layer);
                    self.op(cn, model_ids[i], prop);
                    for (axis, c) in ["d|X", "d|Y", "d|Z"].into_iter().enumerate() {
                        let Some(curve) = &curves[axis] else { continue };
                        let id = self.id();
                        self.objects.push(curve_record(id, defaults[axis], curve));
                        self.count("AnimationCurve");
                        self.op(id, cn, c);
                    }
                }
                if resampled_here {
                    self.report.resampled_nodes += 1;
                }
            }
            self.attribute_curves(scene, ai, layer, fps, (f0, f1), opts)?;
        }
        if dropped_morph > 0 {
            self.report.dropped.push(format!("{dropped_morph} 3DS morph (mesh swap) tracks"));
        }
        Ok(())
    }

    /// Animated camera and light properties of animation `ai` as curve nodes on their
    /// `NodeAttribute`s: camera `FieldOfView` (3DS FOV tracks, FBX `FieldOfView`) and `Roll`;
    /// light `Color` (3DS colour tracks, FBX `Color|X…`), `Intensity` (percent, as stored),
    /// `InnerAngle` (3DS hotspot, FBX `InnerAngle`/`HotSpot`) and `OuterAngle` (3DS falloff,
    /// FBX `OuterAngle`/`Cone angle`). Key for key where the keys have an FBX form, else the
    /// track sampled on integer frames (reported).
    fn attribute_curves(
        &mut self,
        scene: &Scene,
        ai: usize,
        layer: i64,
        fps: f64,
        (lo, hi): (f64, f64),
        opts: &WriteOptions,
    ) -> Result<(), WriteError> {
        // (node, attribute property, vector?) → per component curve, in first-seen order.
        let mut found: Vec<(usize, &'static str, bool, [Option<keys::FbxCurve>; 3])> = Vec::new();
        let attr_of: HashMap<usize, i64> = self.attributes.iter().copied().collect();
        let anim = &scene.animations[ai];
        for ch in &anim.channels {
            let i = ch.node;
            if !attr_of.contains_key(&i) {
                continue;
            }
            let camera = matches!(scene.nodes[i].kind, NodeKind::Camera(_));
            let light = matches!(scene.nodes[i].kind, NodeKind::Light(_));
            enum Src<'t> {
                Scalar(&'t Track<f64>),
                Vector(&'t Track<DVec3>),
            }
            let (prop, comp, src) = match &ch.target {
                ChannelTarget::Fov(t) if camera => ("FieldOfView", 0, Src::Scalar(t)),
                ChannelTarget::Roll(t) if camera => ("Roll", 0, Src::Scalar(t)),
                ChannelTarget::Color(t) if light => ("Color", 0, Src::Vector(t)),
                ChannelTarget::Hotspot(t) if light => ("InnerAngle", 0, Src::Scalar(t)),
                ChannelTarget::Falloff(t) if light => ("OuterAngle", 0, Src::Scalar(t)),
                ChannelTarget::Property { name, track } => {
                    let hit = match name.as_str() {
                        "FieldOfView" if camera => ("FieldOfView", 0),
                        "Roll" if camera => ("Roll", 0),
                        "Color|X" if light => ("Color", 0),
                        "Color|Y" if light => ("Color", 1),
                        "Color|Z" if light => ("Color", 2),
                        "Intensity" if light => ("Intensity", 0),
                        "InnerAngle" | "HotSpot" if light => ("InnerAngle", 0),
                        "OuterAngle" | "Cone angle" | "ConeAngle" if light => ("OuterAngle", 0),
                        _ => continue,
                    };
                    (hit.0, hit.1, Src::Scalar(track))
                }
                _ => continue,
            };
            let vector = prop == "Color";
            let slot = match found.iter().position(|f| f.0 == i && f.1 == prop) {
                Some(k) => k,
                None => {
                    found.push((i, prop, vector, [None, None, None]));
                    found.len() - 1
                }
            };
            // Integer frames of the range for a resample (the track sampled by itself).
            let frames = || -> Result<Vec<f64>, WriteError> {
                let mut v = vec![lo];
                let mut f = lo.floor() + 1.0;
                while f < hi {
                    v.push(f);
                    f += 1.0;
                    if v.len() > opts.max_keys {
                        return Err(WriteError {
                            path: vec!["Objects".into(), "AnimationCurve".into()],
                            what: format!(
                                "animation {:?}: the {prop} track spans {} frames, more keys than the limit {}",
                                anim.name,
                                hi - lo,
                                opts.max_keys
                            ),
                        });
                    }
                }
                if hi > lo {
                    v.push(hi);
                }
                Ok(v)
            };
            let linear = |frames: &[f64], vals: Vec<f64>| keys::FbxCurve {
                keys: frames
                    .iter()
                    .zip(vals)
                    .map(|(&f, v)| keys::FbxKey {
                        time: ktime(f / fps),
                        value: v as f32,
                        flags: KEY_FLAGS_LINEAR,
                        data: [0.0, 0.0, f32::from_bits(KEY_DEFAULT_WEIGHTS), 0.0],
                    })
                    .collect(),
                pre: None,
                post: None,
            };
            let mut resampled = false;
            match src {
                Src::Scalar(t) if t.keys.is_empty() => continue,
                Src::Scalar(t) => {
                    let c = match keys::scalar_curve(t, 1.0, fps, lo, hi) {
                        Some(c) => {
                            self.report.exact_curves += 1;
                            c
                        }
                        None => {
                            resampled = true;
                            let fr = frames()?;
                            let vals = fr.iter().map(|&f| t.sample(f).unwrap_or(0.0)).collect();
                            linear(&fr, vals)
                        }
                    };
                    found[slot].3[comp] = Some(c);
                }
                Src::Vector(t) if t.keys.is_empty() => continue,
                Src::Vector(t) => match keys::vector_curves(t, fps, lo, hi) {
                    Some(c) => {
                        self.report.exact_curves += 3;
                        found[slot].3 = c.map(Some);
                    }
                    None => {
                        resampled = true;
                        let fr = frames()?;
                        let vals: Vec<DVec3> =
                            fr.iter().map(|&f| t.sample(f).unwrap_or(DVec3::ZERO)).collect();
                        found[slot].3 = [0, 1, 2]
                            .map(|k| Some(linear(&fr, vals.iter().map(|v| v[k]).collect())));
                    }
                },
            }
            if resampled {
                self.report.resampled.push(Resampled {
                    animation: ai,
                    node: i,
                    part: prop,
                    reason: NO_FORM,
                });
            }
        }
        for (i, prop, vector, curves) in found {
            let attr = attr_of[&i];
            let rest: DVec3 = match scene.nodes[i].kind {
                NodeKind::Camera(c) => {
                    let c = &scene.cameras[c];
                    DVec3::splat(if prop == "Roll" { c.roll_degrees } else { c.fov_degrees })
                }
                NodeKind::Light(l) => {
                    let l = &scene.lights[l];
                    match prop {
                        "Color" => l.color.as_dvec3(),
                        "Intensity" => DVec3::splat(l.intensity * 100.0),
                        "InnerAngle" => DVec3::splat(l.hotspot_degrees),
                        _ => DVec3::splat(l.falloff_degrees),
                    }
                }
                _ => DVec3::ZERO,
            };
            let comps: Vec<String> = if vector {
                vec!["d|X".into(), "d|Y".into(), "d|Z".into()]
            } else {
                vec![format!("d|{prop}")]
            };
            let cn = self.id();
            self.objects.push(
                Record::with(
                    "AnimationCurveNode",
                    vec![Value::I64(cn), name_class(prop, "AnimCurveNode"), Value::str("")],
                )
                .child(props70(
                    comps.iter().enumerate().map(|(k, c)| p_double_a(c, rest[k])).collect(),
                )),
            );
            self.count("AnimationCurveNode");
            self.oo(cn, layer);
            self.op(cn, attr, prop);
            for (k, c) in comps.iter().enumerate() {
                let Some(curve) = &curves[k] else { continue };
                let id = self.id();
                self.objects.push(curve_record(id, rest[k], curve));
                self.count("AnimationCurve");
                self.op(id, cn, c);
            }
        }
        Ok(())
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

fn p_double_a(name: &str, v: f64) -> Record {
    p(name, "Number", "", "A", vec![Value::F64(v)])
}

fn curve_record(id: i64, default: f64, curve: &keys::FbxCurve) -> Record {
    let (flags, data, refs) = curve.attributes();
    let mut r = Record::with(
        "AnimationCurve",
        vec![Value::I64(id), name_class("", "AnimCurve"), Value::str("")],
    )
    .child(Record::one("Default", default))
    .child(Record::one("KeyVer", 4009))
    .child(Record::with(
        "KeyTime",
        vec![Value::I64Array(curve.keys.iter().map(|k| k.time).collect())],
    ))
    .child(Record::with(
        "KeyValueFloat",
        vec![Value::F32Array(curve.keys.iter().map(|k| k.value).collect())],
    ))
    .child(Record::with("KeyAttrFlags", vec![Value::I32Array(flags)]))
    .child(Record::with("KeyAttrDataFloat", vec![Value::F32Array(data)]))
    .child(Record::with("KeyAttrRefCount", vec![Value::I32Array(refs)]));
    // As the SDK writes them (MotionBuilder's `motionbuilder_extrapolation_*_7700`): `Type` a
    // character, `Repetition` an int.
    for (name, e) in [("Pre-Extrapolation", curve.pre), ("Post-Extrapolation", curve.post)] {
        if let Some((ty, count)) = e {
            r.push(
                Record::new(name)
                    .child(Record::with("Type", vec![Value::Char(ty)]))
                    .child(Record::one("Repetition", count)),
            );
        }
    }
    r
}

/// Every node's local matrix as FBX composes it with InheritType RSrs:
/// `parent_world⁻¹ · world` (the world matrix itself for roots). Under a parent whose world
/// matrix is singular (a zero scale) no local reproduces the child's world: keyscene's own
/// local matrix (`local`) is written, which gives what any RSrs evaluator gives.
fn local_matrices(scene: &Scene, world: &[DMat4], local: &[DMat4]) -> Vec<DMat4> {
    scene
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| match n.parent {
            Some(p) => {
                let det = world[p].determinant();
                let l = world[p].inverse() * world[i];
                if det.is_finite() && det.abs() > 1e-300 && l.is_finite() {
                    l
                } else {
                    local[i]
                }
            }
            None => world[i],
        })
        .collect()
}

/// Why a baked node's curves are resampled (its written local matrix is not its own T·R·S).
const BAKED: &str = "baked transform (FBX pivots, pre/post rotation, an inherit type other \
                     than RSrs, or a camera/light target); resampled on integer frames";

/// How one part (T, R or S) of a node's local transform is written for one animation.
#[derive(Debug, Clone)]
enum Plan {
    /// Not animated: the Model's `Lcl …` value holds.
    Static,
    /// The source's keys: one curve per component (`None`: the component holds its
    /// `d|X`/`d|Y`/`d|Z` default, the evaluator's rest value for it).
    Exact { defaults: DVec3, curves: [Option<keys::FbxCurve>; 3] },
    /// The part's evaluated values on integer frames, linear (the reason why).
    Resample(&'static str),
    /// The whole local matrix, `parent_world⁻¹ · world`, decomposed on integer frames.
    Bake,
}

/// `true` when node `i`'s world matrix is aimed at a target after composition (a camera or
/// light with a target), so its local matrix is not its parts'.
fn aimed(scene: &Scene, i: usize) -> bool {
    let n = scene.nodes.len();
    match scene.nodes[i].kind {
        NodeKind::Camera(c) => scene.cameras.get(c).and_then(|c| c.target).is_some_and(|t| t < n),
        NodeKind::Light(l) => scene.lights.get(l).and_then(|l| l.target).is_some_and(|t| t < n),
        _ => false,
    }
}

/// Per scene node: is its written local matrix (`parent_world⁻¹ · world`) its own `T·R·S`, so
/// that its channels can be written from the source keys? Yes when it has no FBX pivots or
/// pre/post rotation (none animated either, [`ChannelTarget::drives_pivots`]), it is a root or
/// has inherit type `RSrs`, and neither it nor its parent is aimed at a target.
fn direct_nodes(scene: &Scene) -> Vec<bool> {
    let mut direct: Vec<bool> = (0..scene.nodes.len())
        .map(|i| {
            let n = &scene.nodes[i];
            n.pivots.is_none()
                && (n.parent.is_none() || n.inherit == crate::scene::InheritType::RSrs)
                && !aimed(scene, i)
                && !n.parent.is_some_and(|p| aimed(scene, p))
        })
        .collect();
    for c in scene.animations.iter().flat_map(|a| &a.channels) {
        if c.target.drives_pivots() {
            if let Some(d) = direct.get_mut(c.node) {
                *d = false;
            }
        }
    }
    direct
}

/// The plan of a direct node's T, R and S ([`direct_nodes`]) from its channels.
fn plan_direct(
    scene: &Scene,
    i: usize,
    channels: &[&ChannelTarget],
    fps: f64,
    (lo, hi): (f64, f64),
) -> [Plan; 3] {
    let rest = scene.nodes[i].transform;
    let deg = 180.0 / std::f64::consts::PI;
    let mut out: [Plan; 3] = std::array::from_fn(|_| Plan::Static);
    for pick in 0..3 {
        let mine: Vec<&ChannelTarget> = channels
            .iter()
            .copied()
            .filter(|c| match c {
                ChannelTarget::Translation(_) | ChannelTarget::TranslationXyz(_) => pick == 0,
                ChannelTarget::Rotation(_) => pick == 1,
                ChannelTarget::Scale(_) | ChannelTarget::ScaleXyz(_) => pick == 2,
                ChannelTarget::Layered(b) => b.transform_part() == Some(pick),
                _ => false,
            })
            .collect();
        let rest_part = if pick == 0 { rest.translation } else { rest.scale };
        let xyz = |tracks: &[Option<Track<f64>>; 3], scale: f64, defaults: DVec3| -> Plan {
            let mut curves: [Option<keys::FbxCurve>; 3] = [None, None, None];
            for (c, t) in tracks.iter().enumerate() {
                let Some(t) = t.as_ref().filter(|t| !t.keys.is_empty()) else { continue };
                match keys::scalar_curve(t, scale, fps, lo, hi) {
                    Some(curve) => curves[c] = Some(curve),
                    None => return Plan::Resample(NO_FORM),
                }
            }
            Plan::Exact { defaults: defaults * scale, curves }
        };
        out[pick] = match mine.as_slice() {
            [] => Plan::Static,
            [_, _, ..] => Plan::Resample("several channels drive one part"),
            [c] => match c {
                ChannelTarget::Translation(t) | ChannelTarget::Scale(t) if t.keys.is_empty() => {
                    Plan::Static
                }
                ChannelTarget::Translation(t) | ChannelTarget::Scale(t) => {
                    match keys::vector_curves(t, fps, lo, hi) {
                        Some([x, y, z]) => {
                            Plan::Exact { defaults: rest_part, curves: [Some(x), Some(y), Some(z)] }
                        }
                        None => Plan::Resample(NO_FORM),
                    }
                }
                ChannelTarget::TranslationXyz(x) | ChannelTarget::ScaleXyz(x) => {
                    xyz(x, 1.0, rest_part)
                }
                ChannelTarget::Rotation(RotationTrack::Euler { order, rest, xyz: tracks }) => {
                    if *order == EulerOrder::Xyz {
                        xyz(tracks, deg, *rest)
                    } else {
                        Plan::Resample("Euler rotation in an order other than XYZ")
                    }
                }
                ChannelTarget::Rotation(RotationTrack::Quat(t)) if t.keys.is_empty() => {
                    Plan::Static
                }
                ChannelTarget::Rotation(RotationTrack::Quat(_)) => {
                    Plan::Resample("quaternion keys (slerp has no FBX Euler curve form)")
                }
                ChannelTarget::Rotation(RotationTrack::Relative(_)) => {
                    Plan::Resample("3DS relative axis-angle rotation keys")
                }
                ChannelTarget::Layered(_) => {
                    Plan::Resample("FBX animation layers blended at each time")
                }
                _ => Plan::Static,
            },
        };
    }
    out
}

/// Why a part with keys is resampled when no exact form exists.
const NO_FORM: &str = "keys with no exact FBX curve form (jumps, 3DS repeat/hold-last ends, \
                       glTF/3DA tangents or TCB past what the Hermite form holds)";

/// A camera's `NodeAttribute` (class `Camera`) with the properties ufbx's
/// `ufbxi_update_camera` and our reader take: `ApertureMode` 1 (horizontal) or 2 (vertical)
/// with `FieldOfView` in degrees, `AspectWidth`/`AspectHeight` (the aspect over 1, with
/// `AspectRatioMode` 1, fixed ratio), `NearPlane`/`FarPlane` in scene units, `Roll` in degrees.
/// Orientation is the node's: FBX cameras look down the node's +X with +Y up, and no axis
/// change is applied (a 3DS camera's aim is baked into its node, whose −Z looks at the target).
fn camera_attribute(id: i64, name: &str, c: &crate::scene::Camera) -> Record {
    let mode = match c.fov_axis {
        FovAxis::Horizontal => 1,
        FovAxis::Vertical => 2,
    };
    let mut props = vec![
        p("Roll", "Roll", "", "A", vec![Value::F64(c.roll_degrees)]),
        p("FieldOfView", "FieldOfView", "", "A", vec![Value::F64(c.fov_degrees)]),
        p_enum("ApertureMode", mode),
    ];
    if let Some(a) = c.aspect.filter(|a| a.is_finite() && *a > 0.0) {
        props.push(p_enum("AspectRatioMode", 1));
        props.push(p_double("AspectWidth", a));
        props.push(p_double("AspectHeight", 1.0));
    }
    if let Some(v) = c.near.filter(|v| v.is_finite()) {
        props.push(p_double("NearPlane", v));
    }
    if let Some(v) = c.far.filter(|v| v.is_finite()) {
        props.push(p_double("FarPlane", v));
    }
    Record::with(
        "NodeAttribute",
        vec![Value::I64(id), name_class(name, "NodeAttribute"), Value::str("Camera")],
    )
    .child(props70(props))
    .child(Record::one("TypeFlags", "Camera"))
    .child(Record::one("GeometryVersion", 124))
    .child(Record::with("Position", vec![Value::F64(0.0), Value::F64(0.0), Value::F64(0.0)]))
    .child(Record::with("Up", vec![Value::F64(0.0), Value::F64(1.0), Value::F64(0.0)]))
    .child(Record::with("LookAt", vec![Value::F64(1.0), Value::F64(0.0), Value::F64(0.0)]))
    .child(Record::one("ShowInfoOnMoving", 1))
    .child(Record::one("ShowAudio", 0))
    .child(Record::with("AudioColor", vec![Value::F64(0.0), Value::F64(1.0), Value::F64(0.0)]))
    .child(Record::one("CameraOrthoZoom", 1.0))
}

/// A light's `NodeAttribute` (class `Light`): `LightType` 0 point, 1 directional, 2 spot;
/// `Color` (linear RGB), `Intensity` in percent (keyscene's multiplier × 100, as the reader
/// and ufbx divide it), `InnerAngle`/`OuterAngle` (full cone angles, degrees), `CastLight`,
/// `DecayType` 0 (none). FBX lights shine down the node's −Y as ufbx reads them (its
/// `local_direction` is −Y); no axis change is applied, as for cameras.
fn light_attribute(id: i64, name: &str, l: &crate::scene::Light) -> Record {
    let ty = match l.kind {
        LightKind::Directional => 1,
        LightKind::Spot => 2,
        LightKind::Point | LightKind::Ambient => 0,
    };
    let c = l.color.as_dvec3();
    let props = vec![
        p_enum("LightType", ty),
        p_vec("Color", "Color", "", "A", c),
        p("Intensity", "Number", "", "A", vec![Value::F64(l.intensity * 100.0)]),
        p("InnerAngle", "Number", "", "A", vec![Value::F64(l.hotspot_degrees)]),
        p("OuterAngle", "Number", "", "A", vec![Value::F64(l.falloff_degrees)]),
        p("CastLight", "bool", "", "", vec![Value::I32(l.on as i32)]),
        p_enum("DecayType", 0),
    ];
    Record::with(
        "NodeAttribute",
        vec![Value::I64(id), name_class(name, "NodeAttribute"), Value::str("Light")],
    )
    .child(props70(props))
    .child(Record::one("TypeFlags", "Light"))
    .child(Record::one("GeometryVersion", 124))
}

fn material(id: i64, name: &str, m: &crate::scene::Material) -> Record {
    let c = |v: glam::Vec3| v.as_dvec3();
    Record::with("Material", vec![Value::I64(id), name_class(name, "Material"), Value::str("")])
        .child(Record::one("Version", 102))
        .child(Record::one("ShadingModel", "phong"))
        .child(Record::one("MultiLayer", 0))
        .child(props70(vec![
            p_vec("AmbientColor", "Color", "", "A", c(m.ambient)),
            p_vec("DiffuseColor", "Color", "", "A", c(m.diffuse)),
            p_double("DiffuseFactor", 1.0),
            p_vec("SpecularColor", "Color", "", "A", c(m.specular)),
            p_double("SpecularFactor", m.shininess_strength as f64),
            p_double("ShininessExponent", (m.shininess as f64 * 100.0).max(0.0)),
            p_double("TransparencyFactor", m.transparency as f64),
            p_double("Opacity", 1.0 - m.transparency as f64),
        ]))
}

/// One layer element record with its standard head.
fn layer_element(
    kind: &str,
    index: i32,
    version: i32,
    name: &str,
    mapping: &str,
    reference: &str,
) -> Record {
    Record::one(kind, index)
        .child(Record::one("Version", version))
        .child(Record::one("Name", name))
        .child(Record::one("MappingInformationType", mapping))
        .child(Record::one("ReferenceInformationType", reference))
}

fn geometry(id: i64, mesh: &Mesh, bake: DMat4) -> Record {
    let nm = DMat3::from_mat4(bake).inverse().transpose();
    let mut verts = Vec::with_capacity(mesh.positions.len() * 3);
    for p in &mesh.positions {
        let q = bake.transform_point3(*p);
        verts.extend([q.x, q.y, q.z]);
    }
    let np = mesh.polygon_count();
    let mut pvi = Vec::with_capacity(mesh.corner_vertices.len());
    for poly in 0..np {
        let c = mesh.polygon(poly);
        for (k, &v) in c.iter().enumerate() {
            pvi.push(if k + 1 == c.len() { !(v as i32) } else { v as i32 });
        }
    }
    let mut g = Record::with(
        "Geometry",
        vec![Value::I64(id), name_class(&mesh.name, "Geometry"), Value::str("Mesh")],
    )
    .child(Record::with("Vertices", vec![Value::F64Array(verts)]))
    .child(Record::with("PolygonVertexIndex", vec![Value::I32Array(pvi)]))
    .child(Record::one("GeometryVersion", 124));
    let mut layer0 = vec!["LayerElementMaterial"];
    // Per corner, a value per polygon vertex.
    let per_corner = |f: &mut dyn FnMut(u32, usize, usize)| {
        for poly in 0..np {
            let r = mesh.polygon_corners(poly);
            for corner in r {
                f(mesh.corner_vertices[corner], corner, poly);
            }
        }
    };
    if let Some(n) = &mesh.normals {
        let mut out = Vec::with_capacity(mesh.corner_vertices.len() * 3);
        let mut ok = true;
        per_corner(&mut |v, c, p| match n.get(v, c, p) {
            Some(x) => {
                let y = (nm * x.as_dvec3()).normalize_or_zero();
                out.extend([y.x, y.y, y.z]);
            }
            None => {
                ok = false;
                out.extend([0.0, 0.0, 0.0]);
            }
        });
        if ok {
            g.push(
                layer_element("LayerElementNormal", 0, 102, "", "ByPolygonVertex", "Direct")
                    .child(Record::with("Normals", vec![Value::F64Array(out)])),
            );
            layer0.push("LayerElementNormal");
        }
    }
    if let Some(col) = &mesh.colors {
        let mut out = Vec::with_capacity(mesh.corner_vertices.len() * 4);
        per_corner(&mut |v, c, p| {
            let x = col.get(v, c, p).unwrap_or(glam::Vec4::ONE);
            out.extend([x.x as f64, x.y as f64, x.z as f64, x.w as f64]);
        });
        g.push(
            layer_element("LayerElementColor", 0, 101, "", "ByPolygonVertex", "Direct")
                .child(Record::with("Colors", vec![Value::F64Array(out)])),
        );
        layer0.push("LayerElementColor");
    }
    if let Some(sg) = &mesh.smoothing_groups {
        if sg.len() == np {
            g.push(
                layer_element("LayerElementSmoothing", 0, 102, "", "ByPolygon", "Direct").child(
                    Record::with(
                        "Smoothing",
                        vec![Value::I32Array(sg.iter().map(|&s| s as i32).collect())],
                    ),
                ),
            );
            layer0.push("LayerElementSmoothing");
        }
    }
    let mut uv_layers = 0;
    for (k, set) in mesh.uv_sets.iter().enumerate() {
        let mut out = Vec::with_capacity(mesh.corner_vertices.len() * 2);
        per_corner(&mut |v, c, p| {
            let x = set.uvs.get(v, c, p).unwrap_or(glam::Vec2::ZERO);
            out.extend([x.x as f64, x.y as f64]);
        });
        let name = if set.name.is_empty() { format!("UVSet{k}") } else { set.name.clone() };
        g.push(
            layer_element("LayerElementUV", k as i32, 101, &name, "ByPolygonVertex", "Direct")
                .child(Record::with("UV", vec![Value::F64Array(out)])),
        );
        uv_layers += 1;
    }
    // Materials: index into the model's material list (slot order); polygons without one use
    // the last slot the writer connected for them (see `Builder::objects`).
    let slots = mesh.material_slots.len().max(1) as u32;
    let mats: Vec<i32> = (0..np)
        .map(|p| {
            let m = mesh.polygon_material(p);
            if m >= slots {
                0
            } else {
                m as i32
            }
        })
        .collect();
    let all_same = mats.iter().all(|&m| m == mats.first().copied().unwrap_or(0));
    g.push(if all_same {
        layer_element("LayerElementMaterial", 0, 101, "", "AllSame", "IndexToDirect").child(
            Record::with(
                "Materials",
                vec![Value::I32Array(vec![mats.first().copied().unwrap_or(0)])],
            ),
        )
    } else {
        layer_element("LayerElementMaterial", 0, 101, "", "ByPolygon", "IndexToDirect")
            .child(Record::with("Materials", vec![Value::I32Array(mats)]))
    });
    let layer = |index: i32, elems: &[(&str, i32)]| {
        let mut l = Record::one("Layer", index).child(Record::one("Version", 100));
        for (ty, typed) in elems {
            l.push(
                Record::new("LayerElement")
                    .child(Record::one("Type", *ty))
                    .child(Record::one("TypedIndex", *typed)),
            );
        }
        l
    };
    let mut first: Vec<(&str, i32)> = layer0.iter().map(|t| (*t, 0)).collect();
    if uv_layers > 0 {
        first.push(("LayerElementUV", 0));
    }
    g.push(layer(0, &first));
    for k in 1..uv_layers {
        g.push(layer(k, &[("LayerElementUV", k)]));
    }
    g
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn euler_xyz_is_rz_ry_rx_and_round_trips() {
        // FBX eEulerXYZ: X applied first. Rotating +Y by 90° about X gives +Z; then 90° about
        // Z takes +Z to +Z: hand-computed R = Rz(90)·Rx(90) maps +Y to +Z and +X to +Y.
        let m = compose(DVec3::ZERO, DVec3::new(90.0, 0.0, 90.0), DVec3::ONE);
        assert!(m.transform_vector3(DVec3::Y).abs_diff_eq(DVec3::Z, 1e-12));
        assert!(m.transform_vector3(DVec3::X).abs_diff_eq(DVec3::Y, 1e-12));
        let (t, e, s, exact) = decompose(compose(
            DVec3::new(1.0, 2.0, 3.0),
            DVec3::new(10.0, -20.0, 30.0),
            DVec3::new(2.0, 3.0, 4.0),
        ));
        assert!(exact);
        assert!(t.abs_diff_eq(DVec3::new(1.0, 2.0, 3.0), 1e-12));
        assert!(e.abs_diff_eq(DVec3::new(10.0, -20.0, 30.0), 1e-9), "{e}");
        assert!(s.abs_diff_eq(DVec3::new(2.0, 3.0, 4.0), 1e-12));
    }

    #[test]
    fn unwrapping_keeps_angles_within_half_a_turn_of_the_previous_key() {
        let e = unwrap_near(DVec3::new(-179.0, 10.0, 181.0), DVec3::new(179.0, 370.0, -170.0));
        assert_eq!(e, DVec3::new(181.0, 370.0, -179.0));
    }

    #[test]
    fn ktime_is_seconds_times_46186158000_rounded() {
        assert_eq!(ktime(1.0), 46_186_158_000);
        assert_eq!(ktime(1.0 / 30.0), 1_539_538_600);
        assert_eq!(ktime(1.0 / 24.0), 1_924_423_250);
        assert_eq!(time_mode(24.0), Some(11));
        assert_eq!(time_mode(29.97), None);
    }
}

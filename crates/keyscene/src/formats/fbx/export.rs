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
//!   entry. Every node whose local T, R or S differs from its rest values at some frame gets
//!   T, R and S `AnimationCurveNode`s whose
//!   curves hold a key per integer frame of the animation range (and at its ends), linear,
//!   KTime = round(seconds × 46 186 158 000); Euler angles are unwrapped so consecutive keys
//!   never jump by 360°. Counted in [`Report::resampled_nodes`].
//!
//! Not written yet (reported in [`Report::dropped`]): skins, blend shapes, geometry caches,
//! 3DS morph swaps, camera and light attributes (their nodes are written as `Null`s in place),
//! textures.

use std::collections::HashMap;
use std::fmt;
use std::path::Path;

use glam::{DMat3, DMat4, DQuat, DVec3, EulerRot};

use super::objects::KTIME_PER_SECOND;
use super::write::{self, BinaryOptions, Record, Value, WriteError};
use crate::anim::Time;
use crate::scene::{Axis, Mesh, NodeKind, Scene};

/// Options for [`write`] and [`save`].
#[derive(Debug, Clone)]
pub struct WriteOptions {
    /// Record layout (version 7400 or 7500, array compression).
    pub binary: BinaryOptions,
    /// Write only this animation (index into `Scene::animations`); `None` writes all of them.
    pub animation: Option<usize>,
    /// `FBXHeaderExtension › CreationTimeStamp` as (year, month, day, hour, minute, second,
    /// millisecond); `None` writes 1970-01-01 00:00:00:000, so that writes are reproducible.
    pub timestamp: Option<[i32; 7]>,
    /// Most keys one resampled curve may have (a longer range is an error, not a huge file).
    pub max_keys: usize,
}

impl Default for WriteOptions {
    fn default() -> Self {
        WriteOptions {
            binary: BinaryOptions::default(),
            animation: None,
            timestamp: None,
            max_keys: 1_000_000,
        }
    }
}

/// What [`write`] carried over, approximated and left out.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Report {
    /// `Model` objects written (one per scene node).
    pub models: usize,
    /// `Geometry` objects written.
    pub geometries: usize,
    /// `Material` objects written.
    pub materials: usize,
    /// `AnimationStack`s written.
    pub stacks: usize,
    /// Nodes whose animation was resampled on integer frames (per stack).
    pub resampled_nodes: usize,
    /// Nodes whose local matrix has shear FBX's T·R·S cannot hold (nearest written).
    pub sheared: usize,
    /// What the scene has that was not written, one line each.
    pub dropped: Vec<String>,
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "fbx: {} models, {} geometries, {} materials, {} animation stacks; {} node animations resampled on integer frames",
            self.models, self.geometries, self.materials, self.stacks, self.resampled_nodes
        )?;
        if self.sheared > 0 {
            write!(f, "; {} sheared local matrices written as their nearest T·R·S", self.sheared)?;
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
    b.objects(scene, opts)?;
    Ok((b.document(scene, opts), b.report))
}

/// Converts `scene` to the bytes of a binary FBX file (see the module docs).
pub fn write(scene: &Scene, opts: &WriteOptions) -> Result<(Vec<u8>, Report), WriteError> {
    let (records, report) = to_records(scene, opts)?;
    Ok((write::encode(&records, &opts.binary)?, report))
}

/// Writes `scene` to `path` as binary FBX, atomically (a temporary file renamed into place).
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
                _ => "Null",
            };
            match node.kind {
                NodeKind::Camera(_) => cameras += 1,
                NodeKind::Light(_) | NodeKind::Ambient => lights += 1,
                _ => {}
            }
            let mut props = vec![
                p_enum("InheritType", 1),
                p_vec("Lcl Translation", "Lcl Translation", "", "A", t),
                p_vec("Lcl Rotation", "Lcl Rotation", "", "A", r),
                p_vec("Lcl Scaling", "Lcl Scaling", "", "A", s),
                p_int("DefaultAttributeIndex", if class == "Mesh" { 0 } else { -1 }),
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
                let flags = if class == "LimbNode" { "Skeleton" } else { "Null" };
                let mut a = Record::with(
                    "NodeAttribute",
                    vec![Value::I64(attr), name_class("", "NodeAttribute"), Value::str(class)],
                );
                if class == "LimbNode" {
                    a.push(props70(vec![p_double("Size", 10.0)]));
                }
                a.push(Record::one("TypeFlags", flags));
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
                    let rec = geometry(geo, mesh, g);
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
            dropped.push(format!("{lights} light attributes (nodes written as Null)"));
        }
        if !scene.geometry_caches.is_empty() {
            dropped.push(format!("{} geometry caches", scene.geometry_caches.len()));
        }
        let maps: usize = scene.materials.iter().map(|m| m.maps.len()).sum();
        if maps > 0 {
            dropped.push(format!("{maps} texture maps"));
        }
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
        let mut dropped_morph = 0;
        for ai in chosen {
            let anim = &scene.animations[ai];
            let fps = if anim.fps.is_finite() && anim.fps > 0.0 { anim.fps } else { 30.0 };
            let (f0, f1) = anim.frame_range;
            let (f0, f1) =
                if f0.is_finite() && f1.is_finite() && f1 >= f0 { (f0, f1) } else { (0.0, 0.0) };
            let mut frames = vec![f0];
            let mut f = f0.floor() + 1.0;
            while f < f1 {
                frames.push(f);
                f += 1.0;
                if frames.len() > opts.max_keys {
                    return Err(WriteError {
                        path: vec!["Objects".into(), "AnimationCurve".into()],
                        what: format!(
                            "animation {:?} spans {} frames, more keys than the limit {}",
                            anim.name,
                            f1 - f0,
                            opts.max_keys
                        ),
                    });
                }
            }
            if f1 > f0 {
                frames.push(f1);
            }
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
            // Local T, R, S of every node at every frame, from keyscene's evaluation.
            let n = scene.nodes.len();
            // The values the Model records hold (the rest pose): a node whose animation holds
            // other values, even constant ones, needs curves.
            let rest = scene.evaluate(None, Time::Frame(0.0));
            let rest: Vec<(DVec3, DVec3, DVec3)> = local_matrices(scene, &rest.world, &rest.local)
                .iter()
                .map(|l| {
                    let (t, r, s, _) = decompose(*l);
                    (t, r, s)
                })
                .collect();
            let mut samples: Vec<Vec<(DVec3, DVec3, DVec3)>> =
                vec![Vec::with_capacity(frames.len()); n];
            for &fr in &frames {
                let pose = scene.evaluate(Some(ai), Time::Frame(fr));
                let locals = local_matrices(scene, &pose.world, &pose.local);
                for (i, l) in locals.iter().enumerate() {
                    let (t, mut r, s, _) = decompose(*l);
                    r = unwrap_near(r, samples[i].last().map_or(rest[i].1, |prev| prev.1));
                    samples[i].push((t, r, s));
                }
            }
            let times: Vec<i64> = frames.iter().map(|f| ktime(f / fps)).collect();
            for (i, s) in samples.iter().enumerate() {
                let first = rest[i];
                let moves = s.iter().any(|x| {
                    !x.0.abs_diff_eq(first.0, 1e-12 * first.0.abs().max_element().max(1.0))
                        || !x.1.abs_diff_eq(first.1, 1e-9)
                        || !x.2.abs_diff_eq(first.2, 1e-12 * first.2.abs().max_element().max(1.0))
                });
                if !moves {
                    continue;
                }
                self.report.resampled_nodes += 1;
                for (part, prop, pick) in [
                    ("T", "Lcl Translation", 0usize),
                    ("R", "Lcl Rotation", 1),
                    ("S", "Lcl Scaling", 2),
                ] {
                    let vals: Vec<DVec3> = s.iter().map(|x| [x.0, x.1, x.2][pick]).collect();
                    let cn = self.id();
                    self.objects.push(
                        Record::with(
                            "AnimationCurveNode",
                            vec![Value::I64(cn), name_class(part, "AnimCurveNode"), Value::str("")],
                        )
                        .child(props70(vec![
                            p_double_a("d|X", vals[0].x),
                            p_double_a("d|Y", vals[0].y),
                            p_double_a("d|Z", vals[0].z),
                        ])),
                    );
                    self.count("AnimationCurveNode");
                    self.oo(cn, layer);
                    self.op(cn, model_ids[i], prop);
                    for (axis, c) in ["d|X", "d|Y", "d|Z"].into_iter().enumerate() {
                        let keys: Vec<f32> = vals.iter().map(|v| v[axis] as f32).collect();
                        let curve = self.id();
                        self.objects.push(curve_record(curve, vals[0][axis], &times, keys));
                        self.count("AnimationCurve");
                        self.op(curve, cn, c);
                    }
                }
            }
        }
        if dropped_morph > 0 {
            self.report.dropped.push(format!("{dropped_morph} 3DS morph (mesh swap) tracks"));
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
        vec![
            header,
            Record::with("FileId", vec![Value::Raw(write::FILE_ID.to_vec())]),
            Record::one("CreationTime", write::CREATION_TIME),
            Record::one("Creator", creator),
            settings,
            documents,
            Record::new("References"),
            defs,
            objects,
            connections,
            takes,
        ]
    }
}

fn p_double_a(name: &str, v: f64) -> Record {
    p(name, "Number", "", "A", vec![Value::F64(v)])
}

fn curve_record(id: i64, default: f64, times: &[i64], values: Vec<f32>) -> Record {
    Record::with(
        "AnimationCurve",
        vec![Value::I64(id), name_class("", "AnimCurve"), Value::str("")],
    )
    .child(Record::one("Default", default))
    .child(Record::one("KeyVer", 4009))
    .child(Record::with("KeyTime", vec![Value::I64Array(times.to_vec())]))
    .child(Record::with("KeyValueFloat", vec![Value::F32Array(values)]))
    .child(Record::with("KeyAttrFlags", vec![Value::I32Array(vec![KEY_FLAGS_LINEAR])]))
    .child(Record::with(
        "KeyAttrDataFloat",
        vec![Value::F32Array(vec![0.0, 0.0, f32::from_bits(KEY_DEFAULT_WEIGHTS), 0.0])],
    ))
    .child(Record::with("KeyAttrRefCount", vec![Value::I32Array(vec![times.len() as i32])]))
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

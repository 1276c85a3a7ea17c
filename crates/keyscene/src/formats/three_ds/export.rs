//! [`Scene`] → a 3D Studio `.3ds` file (issue #14 §2): the bridge from `scene` to the chunk
//! writer ([`super::write`]). What is written, what is approximated and why is in
//! `docs/3ds.md` ("Writing"); in short:
//!
//! - **Editor** (`MDATA`): `MESH_VERSION` 3, `MASTER_SCALE` (the source's, else 1), one
//!   `MAT_ENTRY` per scene material (`MAT_NAME`, ambient/diffuse/specular `COLOR_24`,
//!   shininess, shininess strength, transparency, self-illumination as `INT_PERCENTAGE`,
//!   `MAT_TWO_SIDE`, `MAT_WIRE`, texture/opacity/bump/specular/shininess/reflection/self-illum
//!   maps with `MAT_MAPNAME`, tiling, scale, offset, angle) before the objects, then
//!   `NAMED_OBJECT`s: `N_TRI_OBJECT` (`POINT_ARRAY`, `TEX_VERTS`, `MESH_MATRIX`,
//!   `FACE_ARRAY` with face flags 7, `MSH_MAT_GROUP`s and `SMOOTH_GROUP`), `N_CAMERA`,
//!   `N_DIRECT_LIGHT` (+ `DL_SPOTLIGHT`).
//! - **Keyframer** (`KFDATA`): `KFHDR` (revision 5), `KFSEG`, `KFCURTIME`, then one node chunk
//!   per written node in depth-first order (parents before children) with `NODE_ID` (its
//!   number in that order), `NODE_HDR` (name, flags, parent id or 0xFFFF), `INSTANCE_NAME`,
//!   `PIVOT`, `BOUNDBOX` for dummies, and tracks. Every object node has a POS, ROT and SCL
//!   track with a key at the first frame (readers that meet only a position track misplace
//!   the object, open-stage/blender-dmx#193; lib3ds reads a missing track as a zero scale).
//! - **3DS sources** (scene read from 3DS, one 30 fps keyframer, only 3DS track kinds) are
//!   written *exactly*: stored points, `MESH_MATRIX`, pivots, node flags and every track's
//!   keys with their TCB/ease parameters and track flags (hide tracks back to toggles).
//! - **Other sources** are *resampled*: at every integer 3DS frame (30 fps, the source's
//!   seconds kept: 3DS frame `f` is source time `f / 30` s) each node's local matrix
//!   `parent_world⁻¹ · world` is split into T·R·S and keyed with TCB 0/0/0 (exact at the
//!   frames; between frames lib3ds' spline through them); rotation keys are relative turns
//!   `q_k · q_(k−1)⁻¹` (short way). Points are the world-space vertices at the first frame
//!   (skins, blend shapes and caches posed there) and `MESH_MATRIX` the node's world matrix
//!   then, so `node(f) · MESH_MATRIX⁻¹ · point` is the node's movement applied to the posed
//!   mesh. Cameras, lights and their targets are roots keyed in world space.
//!
//! Limits (enforced, reported in [`Report`]): at most 65 535 vertices and faces per object
//! (counted after splitting vertices at UV seams; larger meshes are split into several objects),
//! triangles only (n-gons triangulated), object names of at most 10 ASCII characters and
//! material names of 16, unique after shortening and the same in `MAT_NAME`, `MSH_MAT_GROUP`
//! and the keyframer; 8.3 texture file names.

use std::collections::HashMap;
use std::fmt;
use std::path::Path;

use glam::{DMat4, DQuat, DVec3};

use super::chunks::{id, KeyChunk, KeyValue};
use super::import::{NODE_HIDDEN, NO_PARENT};
use super::write::{ChunkWriter, TooLong};
use crate::anim::{ChannelTarget, Interpolation, RotationTrack, Time, Track, THREE_DS_FPS};
use crate::scene::{FovAxis, LightKind, MapSlot, Mesh, NodeId, NodeKind, Scene};

/// Longest object (and keyframer node) name written, in bytes: 3D Studio's traditional limit.
pub const MAX_OBJECT_NAME: usize = 10;
/// Longest material name written, in bytes (3D Studio's `MAT_NAME` limit).
pub const MAX_MATERIAL_NAME: usize = 16;
/// Most vertices (and faces) one 3DS object holds (`POINT_ARRAY`/`FACE_ARRAY` counts are u16).
pub const MAX_OBJECT_ELEMENTS: usize = 65_535;

/// Options for [`write`] and [`save`].
#[derive(Debug, Clone)]
pub struct WriteOptions {
    /// Write this animation (index into `Scene::animations`); `None`: the first.
    pub animation: Option<usize>,
    /// Most keyframer frames a resampled animation may span (a longer one is an error, not a
    /// huge file).
    pub max_frames: usize,
    /// Write a 3DS source's keys exactly (default); `false` resamples every source.
    pub exact_three_ds: bool,
}

impl Default for WriteOptions {
    fn default() -> Self {
        WriteOptions { animation: None, max_frames: 100_000, exact_three_ds: true }
    }
}

/// What [`write`] carried over, approximated and left out.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Report {
    /// `NAMED_OBJECT`s with a mesh written.
    pub meshes: usize,
    /// Cameras written.
    pub cameras: usize,
    /// Lights written.
    pub lights: usize,
    /// `MAT_ENTRY`s written.
    pub materials: usize,
    /// Keyframer node chunks written.
    pub nodes: usize,
    /// `true` when the source's 3DS keys were written as they are (no resampling).
    pub exact: bool,
    /// First and last keyframer frame written.
    pub frames: (i32, i32),
    /// Keyframer frame `f` shows the source at `(f − frame_shift) / 30` seconds: 0 unless the
    /// source's animation starts before 0 s (3DS frames start at 0).
    pub frame_shift: i32,
    /// Nodes whose animation was resampled on integer frames.
    pub resampled_nodes: usize,
    /// Local matrices with shear that T·R·S cannot hold (nearest written), counted per node.
    pub sheared: usize,
    /// Meshes split into several objects to stay within 65 535 vertices and faces.
    pub split: usize,
    /// Polygons with more than three corners, triangulated.
    pub triangulated: usize,
    /// Names shortened or made unique: (kind, source name, written name).
    pub renamed: Vec<(&'static str, String, String)>,
    /// What the scene has that was not written, one line each.
    pub dropped: Vec<String>,
    /// Per keyframer node written (in `NODE_ID` order): the scene node it stands for; `None`
    /// for a target made up for a camera or light that has none.
    pub node_sources: Vec<Option<usize>>,
    /// Mesh objects whose points are not the source mesh's vertices in order (vertices split
    /// at UV seams, unused ones left out, or the mesh split in parts).
    pub renumbered: Vec<String>,
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "3ds: {} mesh objects, {} cameras, {} lights, {} materials, {} keyframer nodes, frames {}..{}; ",
            self.meshes, self.cameras, self.lights, self.materials, self.nodes, self.frames.0, self.frames.1
        )?;
        if self.exact {
            write!(f, "3DS keys written exactly")?;
        } else {
            write!(
                f,
                "{} node animations resampled on integer frames (TCB 0/0/0, exact at the frames)",
                self.resampled_nodes
            )?;
        }
        if self.sheared > 0 {
            write!(f, "; {} sheared local matrices written as their nearest T·R·S", self.sheared)?;
        }
        if self.split > 0 {
            write!(f, "; {} meshes split at 65535 vertices/faces", self.split)?;
        }
        if self.triangulated > 0 {
            write!(f, "; {} polygons triangulated", self.triangulated)?;
        }
        for (kind, from, to) in &self.renamed {
            write!(f, "\nrenamed {kind} {from:?} to {to:?}")?;
        }
        for d in &self.dropped {
            write!(f, "\nnot written: {d}")?;
        }
        Ok(())
    }
}

/// A scene that cannot be written as 3DS: where (the scene part or chunk) and what.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("3ds write: {place}: {what}")]
pub struct WriteError {
    /// The scene part or chunk concerned (`scene`, `animation "Take 001"`, `chunk 0x4000`).
    pub place: String,
    /// What is wrong, in words.
    pub what: String,
}

impl From<TooLong> for WriteError {
    fn from(e: TooLong) -> Self {
        WriteError { place: format!("chunk {:#06x}", e.id), what: e.to_string() }
    }
}

/// Converts `scene` to the bytes of a `.3ds` file (see the module docs).
pub fn write(scene: &Scene, opts: &WriteOptions) -> Result<(Vec<u8>, Report), WriteError> {
    scene.validate().map_err(|e| WriteError {
        place: "scene".into(),
        what: format!("inconsistent scene: {e}"),
    })?;
    let mut b = Builder::default();
    let anim = match opts.animation {
        Some(a) if a >= scene.animations.len() => {
            return Err(WriteError {
                place: "scene".into(),
                what: format!("no animation {a} (the scene has {})", scene.animations.len()),
            })
        }
        Some(a) => Some(a),
        None => (!scene.animations.is_empty()).then_some(0),
    };
    if scene.animations.len() > 1 {
        b.report.dropped.push(format!(
            "{} other animations (3DS holds one keyframer)",
            scene.animations.len() - 1
        ));
    }
    b.materials(scene);
    if opts.exact_three_ds && is_native(scene, anim) {
        b.report.exact = true;
        b.exact(scene, anim)?;
    } else {
        b.resampled(scene, anim, opts)?;
    }
    let bytes = b.encode(scene)?;
    Ok((bytes, b.report))
}

/// Writes `scene` to `path` as `.3ds`, atomically (a temporary file renamed into place).
pub fn save(scene: &Scene, path: &Path, opts: &WriteOptions) -> Result<Report, crate::Error> {
    let (bytes, report) = write(scene, opts)
        .map_err(|e| crate::Error::Unsupported(format!("{}: {e}", path.display())))?;
    crate::write_atomically::<crate::Error>(path, |w| {
        w.write_all(&bytes).map_err(|source| crate::Error::Io { path: path.into(), source })
    })?;
    Ok(report)
}

/// Whether animation `anim` of `scene` is a 3DS keyframer keyscene read (3DS source, 30 fps,
/// only the track kinds a 3DS file holds, with TCB keys).
fn is_native(scene: &Scene, anim: Option<usize>) -> bool {
    // Nodes made for a file without keyframer nodes (no `ThreeDsNodeSource`) show points
    // stored in world space: the resampled path writes them.
    if scene.meta.format != "3ds"
        || scene.animations.len() > 1
        || scene.nodes.iter().any(|n| n.source.three_ds.is_none())
    {
        return false;
    }
    // A file without a keyframer stores its points in world space with no nodes: the
    // resampled path writes it (nodes at identity) the way lib3ds then shows it.
    let Some(a) = anim.map(|a| &scene.animations[a]) else { return false };
    fn tcb<T>(i: &Interpolation<T>) -> bool {
        matches!(i, Interpolation::Tcb(_))
    }
    a.fps == THREE_DS_FPS
        && a.channels.iter().all(|c| match &c.target {
            ChannelTarget::Translation(t) | ChannelTarget::Scale(t) | ChannelTarget::Color(t) => {
                t.keys.iter().all(|k| tcb(&k.interpolation))
            }
            ChannelTarget::Rotation(RotationTrack::Relative(t)) => {
                t.keys.iter().all(|k| matches!(k.interpolation, Interpolation::Tcb(_)))
            }
            ChannelTarget::Fov(t)
            | ChannelTarget::Roll(t)
            | ChannelTarget::Hotspot(t)
            | ChannelTarget::Falloff(t) => t.keys.iter().all(|k| tcb(&k.interpolation)),
            ChannelTarget::Hidden(_) | ChannelTarget::Morph(_) => true,
            _ => false,
        })
}

/// A triangle mesh as written.
#[derive(Debug, Clone, Default)]
struct TriOut {
    /// The points are the source vertices in order.
    in_order: bool,
    points: Vec<[f32; 3]>,
    uvs: Vec<[f32; 2]>,
    faces: Vec<[u16; 3]>,
    smoothing: Vec<u32>,
    groups: Vec<(String, Vec<u16>)>,
    matrix: [[f32; 3]; 4],
}

#[derive(Debug, Clone)]
enum ObjOut {
    Mesh(TriOut),
    Camera {
        position: [f32; 3],
        target: [f32; 3],
        roll: f32,
        lens: f32,
        ranges: Option<(f32, f32)>,
    },
    Light {
        position: [f32; 3],
        color: [f32; 3],
        off: bool,
        multiplier: f32,
        attenuate: Option<(f32, f32)>,
        spot: Option<([f32; 3], f32, f32, f32)>,
    },
}

#[derive(Debug, Clone)]
struct NodeOut {
    tag: u16,
    name: String,
    instance: Option<String>,
    flags: [u16; 2],
    parent: Option<usize>,
    pivot: Option<[f32; 3]>,
    bound_box: Option<([f32; 3], [f32; 3])>,
    morph_smooth: Option<f32>,
    tracks: Vec<(u16, u16, Vec<KeyChunk>)>,
    source: Option<usize>,
}

impl NodeOut {
    fn new(tag: u16, name: String, parent: Option<usize>) -> NodeOut {
        NodeOut {
            tag,
            name,
            instance: None,
            flags: [0, 0],
            parent,
            pivot: None,
            bound_box: None,
            morph_smooth: None,
            tracks: Vec::new(),
            source: None,
        }
    }
}

#[derive(Default)]
struct Builder {
    materials: Vec<MaterialOut>,
    /// Written material name per scene material.
    material_names: Vec<String>,
    objects: Vec<(String, ObjOut)>,
    nodes: Vec<NodeOut>,
    segment: (i32, i32),
    names: Names,
    report: Report,
}

struct MaterialOut {
    name: String,
    m: crate::scene::Material,
    /// Written file name per map.
    map_names: Vec<String>,
}

/// Unique short names per kind.
#[derive(Default)]
struct Names {
    used: HashMap<&'static str, std::collections::HashSet<String>>,
}

impl Names {
    /// `name` as printable ASCII (others → `_`), at most `max` bytes, unique among the names of
    /// `kind` given so far (a clash ends in `~N` / a number); renames are reported.
    fn unique(
        &mut self,
        kind: &'static str,
        name: &str,
        max: usize,
        report: &mut Report,
    ) -> String {
        let mut clean: String =
            name.chars().map(|c| if c.is_ascii_graphic() || c == ' ' { c } else { '_' }).collect();
        if clean.is_empty() {
            clean = if kind == "material" { "Material".into() } else { "Object".into() };
        }
        let used = self.used.entry(kind).or_default();
        let mut out: String = clean.chars().take(max).collect();
        let mut n = 1usize;
        while used.contains(&out.to_ascii_lowercase()) || (kind == "object" && out == "$$$DUMMY") {
            let suffix = format!("~{n}");
            let keep = max.saturating_sub(suffix.len());
            out = clean.chars().take(keep).collect::<String>() + &suffix;
            n += 1;
        }
        used.insert(out.to_ascii_lowercase());
        if out != name {
            report.renamed.push((kind, name.to_string(), out.clone()));
        }
        out
    }
}

/// A file name in 8.3 form (upper case, at most 8 + 3 ASCII characters), unique per
/// `used`; the folder part is dropped.
fn name_8_3(file: &str, used: &mut HashMap<String, String>) -> String {
    if let Some(n) = used.get(file) {
        return n.clone();
    }
    let base = file.rsplit(['/', '\\']).next().unwrap_or(file);
    let (stem, ext) = match base.rfind('.') {
        Some(i) if i > 0 => (&base[..i], &base[i + 1..]),
        _ => (base, ""),
    };
    let clean = |s: &str, n: usize| -> String {
        s.chars()
            .filter(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
            .map(|c| c.to_ascii_uppercase())
            .take(n)
            .collect()
    };
    let mut st = clean(stem, 8);
    if st.is_empty() {
        st = "MAP".into();
    }
    let ex = clean(ext, 3);
    let join = |s: &str| if ex.is_empty() { s.to_string() } else { format!("{s}.{ex}") };
    let mut out = join(&st);
    let mut k = 1;
    while used.values().any(|v| *v == out) {
        let suffix = format!("~{k}");
        let keep: String = st.chars().take(8 - suffix.len()).collect();
        out = join(&(keep + &suffix));
        k += 1;
    }
    used.insert(file.to_string(), out.clone());
    out
}

fn f3(v: DVec3) -> [f32; 3] {
    [v.x as f32, v.y as f32, v.z as f32]
}

/// A 4×4 matrix as `MESH_MATRIX`'s four columns of three.
fn mesh_matrix(m: DMat4) -> [[f32; 3]; 4] {
    [
        f3(m.x_axis.truncate()),
        f3(m.y_axis.truncate()),
        f3(m.z_axis.truncate()),
        f3(m.w_axis.truncate()),
    ]
}

/// The matrix lib3ds applies to the points of a mesh with a mirroring `MESH_MATRIX`:
/// `M · S(−1, 1, 1) · M⁻¹` when `det M < 0`, else identity.
fn mirror_fix(m: DMat4) -> DMat4 {
    if m.determinant() < 0.0 {
        m * DMat4::from_scale(DVec3::new(-1.0, 1.0, 1.0)) * m.inverse()
    } else {
        DMat4::IDENTITY
    }
}

/// A key at `frame` with all TCB parameters 0.
fn key(frame: i32, value: KeyValue) -> KeyChunk {
    KeyChunk { frame, flags: 0, tcb: [0.0; 5], value }
}

/// A scene key's frame and TCB parameters as a 3DS key.
fn tcb_key<T>(k: &crate::anim::Key<T>, value: KeyValue) -> KeyChunk {
    let tcb = match &k.interpolation {
        Interpolation::Tcb(t) => [t.tension, t.continuity, t.bias, t.ease_to, t.ease_from],
        _ => [0.0; 5],
    };
    let mut flags = 0u16;
    for (bit, v) in tcb.iter().enumerate() {
        if *v != 0.0 {
            flags |= 1 << bit;
        }
    }
    KeyChunk { frame: clamp_frame(k.frame), flags, tcb, value }
}

fn clamp_frame(f: f64) -> i32 {
    if f.is_nan() {
        0
    } else {
        f.round().clamp(i32::MIN as f64, i32::MAX as f64) as i32
    }
}

/// Relative rotation key value (lib3ds: a key of angle `a` about `axis` turns by −a): the
/// turn `r` (a unit quaternion) as (angle, axis).
fn relative_value(r: DQuat) -> KeyValue {
    let r = if r.w < 0.0 { -r } else { r };
    let (axis, angle) = r.to_axis_angle();
    if !angle.is_finite() || angle.abs() < 1e-12 || !axis.is_finite() {
        return KeyValue::AxisAngle(0.0, [0.0, 0.0, 1.0]);
    }
    KeyValue::AxisAngle(-(angle as f32), f3(axis))
}

fn vector_track<T>(t: &Track<T>, value: impl Fn(&T) -> KeyValue) -> (u16, Vec<KeyChunk>) {
    (t.flags, t.keys.iter().map(|k| tcb_key(k, value(&k.value))).collect())
}

impl Builder {
    fn materials(&mut self, scene: &Scene) {
        let mut files: HashMap<String, String> = HashMap::new();
        let mut unsupported = 0usize;
        for m in &scene.materials {
            let name = self.names.unique("material", &m.name, MAX_MATERIAL_NAME, &mut self.report);
            let mut map_names = Vec::new();
            for t in &m.maps {
                let n =
                    if t.file.is_empty() { String::new() } else { name_8_3(&t.file, &mut files) };
                if !t.file.is_empty() && n != t.file {
                    self.report.renamed.push(("texture file", t.file.clone(), n.clone()));
                }
                if t.wrap != [crate::scene::WrapMode::Repeat; 2] {
                    unsupported += 1;
                }
                map_names.push(n);
            }
            self.material_names.push(name.clone());
            self.materials.push(MaterialOut { name, m: m.clone(), map_names });
        }
        if unsupported > 0 {
            self.report.dropped.push(format!(
                "{unsupported} texture maps' clamp/mirror wrap modes (3DS tiling flags written as tile)"
            ));
        }
        self.report.materials = self.materials.len();
    }

    /// The material names of a mesh's slots (`None`: no material).
    fn slot_names(&self, mesh: &Mesh) -> Vec<Option<String>> {
        mesh.material_slots
            .iter()
            .map(|s| s.and_then(|m| self.material_names.get(m).cloned()))
            .collect()
    }

    /// A scene mesh as 3DS objects (several when it passes 65 535 vertices or faces): points
    /// `points` (one per mesh vertex, already in the written frame), `matrix` as
    /// `MESH_MATRIX`.
    fn tri_parts(&mut self, mesh: &Mesh, points: &[DVec3], matrix: DMat4) -> Vec<TriOut> {
        let slots = self.slot_names(mesh);
        let uv = mesh.uv_sets.first().map(|s| &s.uvs);
        if mesh.uv_sets.len() > 1 {
            self.report.dropped.push(format!(
                "mesh {:?}: {} UV sets past the first",
                mesh.name,
                mesh.uv_sets.len() - 1
            ));
        }
        // Triangles as (corner indices, polygon).
        let mut tris: Vec<([usize; 3], usize)> = Vec::with_capacity(mesh.polygon_count());
        for p in 0..mesh.polygon_count() {
            let range = mesh.polygon_corners(p);
            let poly = mesh.polygon(p);
            if poly.len() == 3 {
                tris.push(([range.start, range.start + 1, range.start + 2], p));
            } else if poly.len() > 3 {
                self.report.triangulated += 1;
                for t in crate::scene::geometry::triangulate(&mesh.positions, poly) {
                    tris.push((t.map(|k| range.start + k), p));
                }
            }
        }
        let smoothing = |p: usize| -> u32 {
            if let Some(g) = &mesh.smoothing_groups {
                return g.get(p).copied().unwrap_or(0);
            }
            // From the normals: a polygon whose corner normals all agree is flat (no group),
            // others are smooth (group 1).
            let Some(n) = &mesh.normals else { return 1 };
            let r = mesh.polygon_corners(p);
            let poly = mesh.polygon(p);
            let first = n.get(poly[0], r.start, p);
            let flat =
                poly.iter().enumerate().all(|(k, &v)| match (n.get(v, r.start + k, p), first) {
                    (Some(a), Some(b)) => a.abs_diff_eq(b, 1e-4),
                    _ => false,
                });
            if flat && poly.len() >= 3 && !matches!(n.mapping, crate::scene::Mapping::PerVertex) {
                0
            } else {
                1
            }
        };
        let per_vertex_uv =
            uv.is_none_or(|u| matches!(u.mapping, crate::scene::Mapping::PerVertex));
        let mut parts = Vec::new();
        let mut part = TriOut { matrix: mesh_matrix(matrix), ..TriOut::default() };
        let mut remap: HashMap<(u32, [u32; 2]), u16> = HashMap::new();
        let mut group_faces: Vec<Vec<u16>> = vec![Vec::new(); slots.len()];
        let whole = per_vertex_uv
            && tris
                .iter()
                .all(|(c, _)| c.iter().all(|&k| (mesh.corner_vertices[k] as usize) < points.len()))
            && points.len() <= MAX_OBJECT_ELEMENTS
            && tris.len() <= MAX_OBJECT_ELEMENTS;
        let finish = |part: &mut TriOut, group_faces: &mut Vec<Vec<u16>>| {
            let mut done = std::mem::take(part);
            part.matrix = done.matrix;
            for (s, faces) in group_faces.iter_mut().enumerate() {
                if let Some(Some(name)) = slots.get(s) {
                    if !faces.is_empty() {
                        done.groups.push((name.clone(), std::mem::take(faces)));
                    }
                }
                faces.clear();
            }
            done
        };
        part.in_order = whole;
        if whole {
            part.points = points.iter().map(|&p| f3(p)).collect();
            if let Some(u) = uv {
                part.uvs = (0..points.len())
                    .map(|v| u.get(v as u32, 0, 0).map_or([0.0, 0.0], |t| [t.x, t.y]))
                    .collect();
            }
        }
        for (corners, p) in tris {
            let mut face = [0u16; 3];
            if whole {
                for k in 0..3 {
                    face[k] = mesh.corner_vertices[corners[k]] as u16;
                }
            } else {
                if part.points.len() + 3 > MAX_OBJECT_ELEMENTS
                    || part.faces.len() >= MAX_OBJECT_ELEMENTS
                {
                    parts.push(finish(&mut part, &mut group_faces));
                    remap.clear();
                }
                for k in 0..3 {
                    let c = corners[k];
                    let v = mesh.corner_vertices[c];
                    let t = uv.and_then(|u| u.get(v, c, p)).map_or([0.0, 0.0], |t| [t.x, t.y]);
                    let keyv = (v, t.map(f32::to_bits));
                    face[k] = *remap.entry(keyv).or_insert_with(|| {
                        part.points
                            .push(f3(points.get(v as usize).copied().unwrap_or(DVec3::ZERO)));
                        if uv.is_some() {
                            part.uvs.push(t);
                        }
                        (part.points.len() - 1) as u16
                    });
                }
            }
            let f = part.faces.len() as u16;
            part.faces.push(face);
            part.smoothing.push(smoothing(p));
            let slot =
                if mesh.polygon_materials.is_empty() { 0 } else { mesh.polygon_materials[p] };
            if let Some(g) = group_faces.get_mut(slot as usize) {
                g.push(f);
            }
        }
        parts.push(finish(&mut part, &mut group_faces));
        if parts.len() > 1 {
            self.report.split += 1;
        }
        parts
    }

    /// Adds mesh objects for `mesh`, returns their written names (first is the main one).
    fn add_mesh(
        &mut self,
        name: &str,
        mesh: &Mesh,
        points: &[DVec3],
        matrix: DMat4,
    ) -> Vec<String> {
        let parts = self.tri_parts(mesh, points, matrix);
        let renumbered = parts.len() > 1 || !parts[0].in_order;
        let mut names = Vec::new();
        for (k, part) in parts.into_iter().enumerate() {
            let want = if k == 0 { name.to_string() } else { format!("{name}{}", k + 1) };
            let n = self.names.unique("object", &want, MAX_OBJECT_NAME, &mut self.report);
            self.objects.push((n.clone(), ObjOut::Mesh(part)));
            self.report.meshes += 1;
            if renumbered {
                self.report.renumbered.push(n.clone());
            }
            names.push(n);
        }
        names
    }

    fn camera_object(scene: &Scene, c: usize, pos: DVec3, target: DVec3) -> ObjOut {
        let cam = &scene.cameras[c];
        let fov = horizontal_fov(cam.fov_degrees, cam.fov_axis, cam.aspect);
        ObjOut::Camera {
            position: f3(pos),
            target: f3(target),
            roll: cam.roll_degrees as f32,
            lens: (2400.0 / fov.max(1e-6)) as f32,
            ranges: cam.near.zip(cam.far).map(|(a, b)| (a as f32, b as f32)),
        }
    }

    fn light_object(scene: &Scene, l: usize, pos: DVec3, target: Option<DVec3>) -> ObjOut {
        let light = &scene.lights[l];
        ObjOut::Light {
            position: f3(pos),
            color: light.color.to_array(),
            off: !light.on,
            multiplier: light.intensity as f32,
            attenuate: light.attenuation.map(|(a, b)| (a as f32, b as f32)),
            spot: target.map(|t| {
                (
                    f3(t),
                    light.hotspot_degrees as f32,
                    light.falloff_degrees as f32,
                    light.roll_degrees as f32,
                )
            }),
        }
    }

    /// A 3DS source written as it was read.
    fn exact(&mut self, scene: &Scene, anim: Option<usize>) -> Result<(), WriteError> {
        let a = anim.map(|a| &scene.animations[a]);
        let range = a.map(|a| a.frame_range).or(scene.meta.frame_range).unwrap_or((0.0, 0.0));
        let start = clamp_frame(range.0);
        self.segment = (start, clamp_frame(range.1));
        // Objects: one per scene mesh, stored points and MESH_MATRIX.
        let mut mesh_names: Vec<Vec<String>> = Vec::new();
        for mesh in &scene.meshes {
            let m = mesh.source_matrix.unwrap_or(DMat4::IDENTITY);
            mesh_names.push(self.add_mesh(&mesh.name, mesh, &mesh.positions, m));
        }
        let order = scene.depth_first();
        let mut number = vec![usize::MAX; scene.nodes.len()];
        for (k, &i) in order.iter().enumerate() {
            number[i] = k;
        }
        let rest = scene.evaluate(None, Time::Frame(range.0));
        let mut morph_dropped = 0;
        for &i in &order {
            let node = &scene.nodes[i];
            let parent = node.parent.map(|p| number[p]);
            let src = node.source.three_ds.as_deref();
            let (tag, name) = match node.kind {
                NodeKind::Camera(c) => {
                    let target = scene.cameras[c].target.map(|t| rest.world[t].w_axis.truncate());
                    let pos = rest.world[i].w_axis.truncate();
                    let n =
                        self.names.unique("object", &node.name, MAX_OBJECT_NAME, &mut self.report);
                    self.objects.push((
                        n.clone(),
                        Self::camera_object(scene, c, pos, target.unwrap_or(pos + DVec3::Y)),
                    ));
                    self.report.cameras += 1;
                    (id::CAMERA_NODE_TAG, n)
                }
                NodeKind::Light(l) => {
                    let target = scene.lights[l].target.map(|t| rest.world[t].w_axis.truncate());
                    let pos = rest.world[i].w_axis.truncate();
                    let n =
                        self.names.unique("object", &node.name, MAX_OBJECT_NAME, &mut self.report);
                    let spot = scene.lights[l].kind == LightKind::Spot;
                    self.objects.push((
                        n.clone(),
                        Self::light_object(scene, l, pos, target.filter(|_| spot)),
                    ));
                    self.report.lights += 1;
                    (if spot { id::SPOTLIGHT_NODE_TAG } else { id::LIGHT_NODE_TAG }, n)
                }
                NodeKind::CameraTarget { camera } => (
                    id::TARGET_NODE_TAG,
                    self.target_name(camera.map(|c| &scene.nodes[c].name), &node.name),
                ),
                NodeKind::LightTarget { light } => (
                    id::L_TARGET_NODE_TAG,
                    self.target_name(light.map(|c| &scene.nodes[c].name), &node.name),
                ),
                NodeKind::Ambient => (id::AMBIENT_NODE_TAG, "$AMBIENT$".to_string()),
                _ => match node.mesh {
                    Some(m) => (id::OBJECT_NODE_TAG, mesh_names[m][0].clone()),
                    None => (id::OBJECT_NODE_TAG, "$$$DUMMY".to_string()),
                },
            };
            let mut out = NodeOut::new(tag, name, parent);
            out.source = Some(i);
            out.instance = (!node.instance.is_empty())
                .then(|| node.instance.chars().filter(|c| c.is_ascii() && *c != '\0').collect());
            if out.name == "$$$DUMMY" && out.instance.is_none() {
                out.instance = Some(self.names.unique(
                    "instance",
                    &node.name,
                    MAX_OBJECT_NAME,
                    &mut self.report,
                ));
            }
            if let Some(s) = src {
                out.flags = s.flags;
                if tag == id::OBJECT_NODE_TAG {
                    out.pivot = Some(f3(s.pivot));
                    out.bound_box = s.bound_box.map(|(a, b)| (f3(a), f3(b)));
                    out.morph_smooth = s.morph_smooth;
                }
            }
            if node.hidden {
                out.flags[0] |= NODE_HIDDEN;
            } else {
                out.flags[0] &= !NODE_HIDDEN;
            }
            // Tracks in the order 3D Studio writes them.
            let channels: Vec<&ChannelTarget> = a
                .map(|a| a.channels.iter().filter(|c| c.node == i).map(|c| &c.target).collect())
                .unwrap_or_default();
            let find =
                |pick: fn(&ChannelTarget) -> bool| channels.iter().copied().find(|c| pick(c));
            let t = node.transform;
            let object = tag == id::OBJECT_NODE_TAG;
            let has_pos = matches!(
                tag,
                id::OBJECT_NODE_TAG
                    | id::CAMERA_NODE_TAG
                    | id::TARGET_NODE_TAG
                    | id::LIGHT_NODE_TAG
                    | id::SPOTLIGHT_NODE_TAG
                    | id::L_TARGET_NODE_TAG
            );
            if has_pos {
                let tr = match find(|c| matches!(c, ChannelTarget::Translation(_))) {
                    Some(ChannelTarget::Translation(tr)) => {
                        vector_track(tr, |v| KeyValue::Vector(f3(*v)))
                    }
                    _ => (0, vec![key(start, KeyValue::Vector(f3(t.translation)))]),
                };
                out.tracks.push((id::POS_TRACK_TAG, tr.0, tr.1));
            }
            if object {
                let rt = match find(|c| matches!(c, ChannelTarget::Rotation(_))) {
                    Some(ChannelTarget::Rotation(RotationTrack::Relative(r))) => {
                        vector_track(r, |v| KeyValue::AxisAngle(v.angle as f32, f3(v.axis)))
                    }
                    _ => (0, vec![key(start, relative_value(t.rotation))]),
                };
                out.tracks.push((id::ROT_TRACK_TAG, rt.0, rt.1));
                let st = match find(|c| matches!(c, ChannelTarget::Scale(_))) {
                    Some(ChannelTarget::Scale(s)) => vector_track(s, |v| KeyValue::Vector(f3(*v))),
                    _ => (0, vec![key(start, KeyValue::Vector(f3(t.scale)))]),
                };
                out.tracks.push((id::SCL_TRACK_TAG, st.0, st.1));
            }
            for c in &channels {
                let (tag, tr) = match c {
                    ChannelTarget::Fov(x) => {
                        (id::FOV_TRACK_TAG, vector_track(x, |v| KeyValue::Scalar(*v as f32)))
                    }
                    ChannelTarget::Roll(x) => {
                        (id::ROLL_TRACK_TAG, vector_track(x, |v| KeyValue::Scalar(*v as f32)))
                    }
                    ChannelTarget::Color(x) => {
                        (id::COL_TRACK_TAG, vector_track(x, |v| KeyValue::Vector(f3(*v))))
                    }
                    ChannelTarget::Hotspot(x) => {
                        (id::HOT_TRACK_TAG, vector_track(x, |v| KeyValue::Scalar(*v as f32)))
                    }
                    ChannelTarget::Falloff(x) => {
                        (id::FALL_TRACK_TAG, vector_track(x, |v| KeyValue::Scalar(*v as f32)))
                    }
                    ChannelTarget::Hidden(h) => {
                        // Absolute states back to toggles: a key wherever the state changes.
                        let mut state = node.hidden;
                        let mut keys = Vec::new();
                        for k in &h.keys {
                            if k.value != state {
                                state = k.value;
                                keys.push(key(clamp_frame(k.frame), KeyValue::None));
                            }
                        }
                        (id::HIDE_TRACK_TAG, (h.flags, keys))
                    }
                    ChannelTarget::Morph(m) => {
                        let keys: Vec<KeyChunk> = m
                            .keys
                            .iter()
                            .filter_map(|k| {
                                mesh_names.get(k.value).map(|n| {
                                    key(clamp_frame(k.frame), KeyValue::Name(n[0].clone()))
                                })
                            })
                            .collect();
                        if keys.len() < m.keys.len() {
                            morph_dropped += m.keys.len() - keys.len();
                        }
                        (id::MORPH_TRACK_TAG, (m.flags, keys))
                    }
                    _ => continue,
                };
                if !tr.1.is_empty() {
                    out.tracks.push((tag, tr.0, tr.1));
                }
            }
            self.nodes.push(out);
        }
        if morph_dropped > 0 {
            self.report.dropped.push(format!("{morph_dropped} morph keys naming no mesh"));
        }
        Ok(())
    }

    fn target_name(&mut self, owner: Option<&String>, own: &str) -> String {
        // A target carries its camera's or light's written name.
        let want = owner.map_or(own, |s| s.as_str());
        let clean: String = want
            .chars()
            .map(|c| if c.is_ascii_graphic() || c == ' ' { c } else { '_' })
            .take(MAX_OBJECT_NAME)
            .collect();
        // Same renaming as the owner got.
        self.report
            .renamed
            .iter()
            .find(|(k, from, _)| *k == "object" && from == want)
            .map(|(_, _, to)| to.clone())
            .unwrap_or(clean)
    }

    /// Any source, resampled on integer 3DS frames.
    fn resampled(
        &mut self,
        scene: &Scene,
        anim: Option<usize>,
        opts: &WriteOptions,
    ) -> Result<(), WriteError> {
        let a = anim.map(|a| &scene.animations[a]);
        // The frames: integer 3DS frames covering the animation's range in seconds.
        let (f0, f1) = match a {
            Some(a) => {
                let fps = if a.fps.is_finite() && a.fps > 0.0 { a.fps } else { THREE_DS_FPS };
                let (s0, s1) = (a.frame_range.0 / fps, a.frame_range.1 / fps);
                if !(s0.is_finite() && s1.is_finite()) || s1 < s0 {
                    (0.0, 0.0)
                } else {
                    (
                        (s0 * THREE_DS_FPS - 1e-6).floor(),
                        (s1 * THREE_DS_FPS + 1e-6).ceil().max((s0 * THREE_DS_FPS - 1e-6).floor()),
                    )
                }
            }
            None => (0.0, 0.0),
        };
        let count = f1 - f0 + 1.0;
        if count > opts.max_frames as f64 {
            return Err(WriteError {
                place: format!("animation {:?}", a.map_or("", |a| a.name.as_str())),
                what: format!(
                    "spans {count} keyframer frames at 30 fps, more than the limit {}",
                    opts.max_frames
                ),
            });
        }
        // 3DS frames are stored from 0 (KFSEG is unsigned): an animation starting before
        // 0 s is shifted.
        let shift = if f0 < 0.0 { -f0 } else { 0.0 };
        if shift > 0.0 {
            self.report.dropped.push(format!(
                "the animation starts at {:.4} s: frames shifted by {shift} so that it starts at frame 0",
                f0 / THREE_DS_FPS
            ));
        }
        let frames: Vec<f64> = (0..count as usize).map(|k| f0 + k as f64).collect();
        self.segment = ((f0 + shift) as i32, (f1 + shift) as i32);
        self.report.frame_shift = shift as i32;
        let pose_at = |f: f64| match anim {
            Some(ai) => scene.evaluate(Some(ai), Time::Seconds(f / THREE_DS_FPS)),
            None => scene.evaluate(None, Time::Frame(0.0)),
        };
        let poses: Vec<crate::anim::Pose> = frames.iter().map(|&f| pose_at(f)).collect();
        let first = &poses[0];
        let order = scene.depth_first();
        // The written parent of every node: its nearest ancestor written as an object node.
        let is_object = |i: usize| {
            !matches!(
                scene.nodes[i].kind,
                NodeKind::Camera(_)
                    | NodeKind::CameraTarget { .. }
                    | NodeKind::Light(_)
                    | NodeKind::LightTarget { .. }
                    | NodeKind::Ambient
            )
        };
        let obj_parent = |i: usize| -> Option<usize> {
            let mut p = scene.nodes[i].parent;
            while let Some(q) = p {
                if is_object(q) {
                    return Some(q);
                }
                p = scene.nodes[q].parent;
            }
            None
        };
        let mut number = vec![usize::MAX; scene.nodes.len()];
        let (mut skinned, mut morphed, mut ambient, mut directional, mut fov_keys) =
            (0, 0, 0, 0, 0usize);
        let _ = &mut fov_keys;
        for &i in &order {
            let node = &scene.nodes[i];
            let key_frame = |k: usize| (frames[k] + shift) as i32;
            match node.kind {
                NodeKind::CameraTarget { camera: Some(_) }
                | NodeKind::LightTarget { light: Some(_) } => {
                    // Written with their camera or light.
                    continue;
                }
                NodeKind::Ambient => {
                    ambient += 1;
                    continue;
                }
                _ => {}
            }
            let pos_track = |node_world: &dyn Fn(&crate::anim::Pose) -> DVec3| -> Vec<KeyChunk> {
                let vals: Vec<DVec3> = poses.iter().map(|p| node_world(p)).collect();
                keyed(&vals, |v| KeyValue::Vector(f3(*v)), key_frame)
            };
            match node.kind {
                NodeKind::Camera(c) => {
                    let cam_target = scene.cameras[c].target;
                    let target_of = |p: &crate::anim::Pose| aim_point(p, i, cam_target);
                    let pos0 = first.world[i].w_axis.truncate();
                    let name =
                        self.names.unique("object", &node.name, MAX_OBJECT_NAME, &mut self.report);
                    self.objects.push((
                        name.clone(),
                        Self::camera_object(scene, c, pos0, target_of(first)),
                    ));
                    self.report.cameras += 1;
                    let mut out = NodeOut::new(id::CAMERA_NODE_TAG, name.clone(), None);
                    out.source = Some(i);
                    out.tracks.push((
                        id::POS_TRACK_TAG,
                        0,
                        pos_track(&|p| p.world[i].w_axis.truncate()),
                    ));
                    let cam = &scene.cameras[c];
                    let fovs: Vec<f64> = poses
                        .iter()
                        .map(|p| horizontal_fov(p.camera_fov[c], cam.fov_axis, cam.aspect))
                        .collect();
                    out.tracks.push((
                        id::FOV_TRACK_TAG,
                        0,
                        keyed(&fovs, |v| KeyValue::Scalar(*v as f32), key_frame),
                    ));
                    let rolls: Vec<f64> = poses.iter().map(|p| p.camera_roll[c]).collect();
                    out.tracks.push((
                        id::ROLL_TRACK_TAG,
                        0,
                        keyed(&rolls, |v| KeyValue::Scalar(*v as f32), key_frame),
                    ));
                    number[i] = self.nodes.len();
                    self.nodes.push(out);
                    let mut t = NodeOut::new(id::TARGET_NODE_TAG, name, None);
                    t.source = cam_target;
                    t.tracks.push((id::POS_TRACK_TAG, 0, pos_track(&target_of)));
                    if let Some(ti) = cam_target {
                        number[ti] = self.nodes.len();
                    }
                    self.nodes.push(t);
                    if cam_target.is_none() {
                        self.report.dropped.push(format!(
                            "camera {:?} has no target: one written 100 units along its view axis; its roll about that axis is not carried",
                            node.name
                        ));
                    }
                    self.report.resampled_nodes += 1;
                }
                NodeKind::Light(l) => {
                    let light = &scene.lights[l];
                    let spot = matches!(light.kind, LightKind::Spot | LightKind::Directional);
                    if light.kind == LightKind::Directional {
                        directional += 1;
                    }
                    let lt = light.target;
                    let target_of = |p: &crate::anim::Pose| aim_point(p, i, lt);
                    let pos0 = first.world[i].w_axis.truncate();
                    let name =
                        self.names.unique("object", &node.name, MAX_OBJECT_NAME, &mut self.report);
                    self.objects.push((
                        name.clone(),
                        Self::light_object(scene, l, pos0, spot.then(|| target_of(first))),
                    ));
                    self.report.lights += 1;
                    let tag = if spot { id::SPOTLIGHT_NODE_TAG } else { id::LIGHT_NODE_TAG };
                    let mut out = NodeOut::new(tag, name.clone(), None);
                    out.source = Some(i);
                    out.tracks.push((
                        id::POS_TRACK_TAG,
                        0,
                        pos_track(&|p| p.world[i].w_axis.truncate()),
                    ));
                    number[i] = self.nodes.len();
                    self.nodes.push(out);
                    if spot {
                        let mut t = NodeOut::new(id::L_TARGET_NODE_TAG, name, None);
                        t.source = lt;
                        t.tracks.push((id::POS_TRACK_TAG, 0, pos_track(&target_of)));
                        if let Some(ti) = lt {
                            number[ti] = self.nodes.len();
                        }
                        self.nodes.push(t);
                    }
                    self.report.resampled_nodes += 1;
                }
                _ => {
                    // An object node: mesh or dummy.
                    let parent = obj_parent(i);
                    let mut name = "$$$DUMMY".to_string();
                    let mut extra_parts = Vec::new();
                    if let Some(m) = first.mesh[i].or(node.mesh) {
                        let mesh = &scene.meshes[m];
                        if mesh.skin.is_some() {
                            skinned += 1;
                        }
                        if !mesh.morph_targets.is_empty() || mesh.geometry_cache.is_some() {
                            morphed += 1;
                        }
                        let w0 = first.world[i];
                        let ok = w0.is_finite() && w0.determinant().abs() > 1e-300;
                        let (matrix, points) = if ok {
                            let fix = mirror_fix(w0);
                            let world = first.world_positions(scene, i);
                            (w0, world.iter().map(|&p| fix.transform_point3(p)).collect::<Vec<_>>())
                        } else {
                            let g = node.geometry_transform();
                            (
                                DMat4::IDENTITY,
                                mesh.positions.iter().map(|&p| g.transform_point3(p)).collect(),
                            )
                        };
                        let names = self.add_mesh(&node.name, mesh, &points, matrix);
                        name = names[0].clone();
                        extra_parts = names[1..].to_vec();
                    }
                    let mut out =
                        NodeOut::new(id::OBJECT_NODE_TAG, name.clone(), parent.map(|p| number[p]));
                    out.source = Some(i);
                    if name == "$$$DUMMY" {
                        out.instance = Some(self.names.unique(
                            "instance",
                            &node.name,
                            MAX_OBJECT_NAME,
                            &mut self.report,
                        ));
                        out.bound_box = Some(([-1.0; 3], [1.0; 3]));
                    }
                    if node.hidden {
                        out.flags[0] |= NODE_HIDDEN;
                    }
                    // Local T, R, S per frame.
                    let mut ts = Vec::with_capacity(poses.len());
                    let mut rs: Vec<DQuat> = Vec::with_capacity(poses.len());
                    let mut ss = Vec::with_capacity(poses.len());
                    let mut sheared = false;
                    for p in &poses {
                        let local = match parent {
                            Some(q) => {
                                let pw = p.world[q];
                                if pw.determinant().abs() > 1e-300 && pw.is_finite() {
                                    pw.inverse() * p.world[i]
                                } else {
                                    p.local[i]
                                }
                            }
                            None => p.world[i],
                        };
                        let (s, r, t) = local.to_scale_rotation_translation();
                        let back = DMat4::from_scale_rotation_translation(s, r, t);
                        let scale =
                            local.to_cols_array().iter().fold(1.0f64, |a, v| a.max(v.abs()));
                        if !back.abs_diff_eq(local, 1e-6 * scale) {
                            sheared = true;
                        }
                        let r = match rs.last() {
                            Some(prev) if prev.dot(r) < 0.0 => -r,
                            _ => r,
                        };
                        ts.push(t);
                        rs.push(r);
                        ss.push(s);
                    }
                    if sheared {
                        self.report.sheared += 1;
                    }
                    let moving = poses.len() > 1
                        && (ts.iter().any(|t| !t.abs_diff_eq(ts[0], 0.0))
                            || rs.iter().any(|r| !r.abs_diff_eq(rs[0], 0.0))
                            || ss.iter().any(|s| !s.abs_diff_eq(ss[0], 0.0)));
                    if moving {
                        self.report.resampled_nodes += 1;
                    }
                    out.tracks.push((
                        id::POS_TRACK_TAG,
                        0,
                        keyed(&ts, |v| KeyValue::Vector(f3(*v)), key_frame),
                    ));
                    // Rotation: relative turns between consecutive frames.
                    let all_same = rs.iter().all(|r| r.abs_diff_eq(rs[0], 0.0));
                    let rot_keys = if all_same {
                        vec![key(key_frame(0), relative_value(rs[0]))]
                    } else {
                        let mut prev = DQuat::IDENTITY;
                        rs.iter()
                            .enumerate()
                            .map(|(k, &r)| {
                                let rel = r * prev.inverse();
                                prev = r;
                                key(key_frame(k), relative_value(rel))
                            })
                            .collect()
                    };
                    out.tracks.push((id::ROT_TRACK_TAG, 0, rot_keys));
                    out.tracks.push((
                        id::SCL_TRACK_TAG,
                        0,
                        keyed(&ss, |v| KeyValue::Vector(f3(*v)), key_frame),
                    ));
                    number[i] = self.nodes.len();
                    let tracks = out.tracks.clone();
                    self.nodes.push(out);
                    // The other parts of a split mesh follow the same node.
                    for extra in extra_parts {
                        let mut o =
                            NodeOut::new(id::OBJECT_NODE_TAG, extra, parent.map(|p| number[p]));
                        o.tracks = tracks.clone();
                        o.source = Some(i);
                        self.nodes.push(o);
                    }
                }
            }
        }
        if skinned > 0 {
            self.report.dropped.push(format!(
                "{skinned} skins: meshes written posed at the first frame, moving with their node only"
            ));
        }
        if morphed > 0 {
            self.report.dropped.push(format!(
                "{morphed} meshes' blend shapes or caches: written as posed at the first frame"
            ));
        }
        if ambient > 0 {
            self.report.dropped.push(format!("{ambient} ambient nodes"));
        }
        if directional > 0 {
            self.report.dropped.push(format!(
                "{directional} directional lights written as spotlights (3DS has no parallel light)"
            ));
        }
        Ok(())
    }

    fn encode(&mut self, scene: &Scene) -> Result<Vec<u8>, WriteError> {
        self.report.nodes = self.nodes.len();
        self.report.node_sources = self.nodes.iter().map(|n| n.source).collect();
        self.report.frames = self.segment;
        let master_scale = scene
            .meta
            .properties
            .iter()
            .find(|(k, _)| k == "master_scale")
            .and_then(|(_, v)| v.parse::<f32>().ok())
            .unwrap_or(1.0);
        let mut w = ChunkWriter::new();
        w.begin(id::M3DMAGIC);
        w.chunk(id::M3D_VERSION, |w| {
            w.u32(3);
            Ok(())
        })?;
        w.begin(id::MDATA);
        w.chunk(id::MESH_VERSION, |w| {
            w.u32(3);
            Ok(())
        })?;
        w.chunk(id::MASTER_SCALE, |w| {
            w.f32(master_scale);
            Ok(())
        })?;
        for m in &self.materials {
            write_material(&mut w, m)?;
        }
        for (name, obj) in &self.objects {
            w.begin(id::NAMED_OBJECT);
            w.cstr(name);
            match obj {
                ObjOut::Mesh(t) => write_tri(&mut w, t)?,
                ObjOut::Camera { position, target, roll, lens, ranges } => {
                    w.begin(id::N_CAMERA);
                    w.vec3(*position);
                    w.vec3(*target);
                    w.f32(*roll);
                    w.f32(*lens);
                    if let Some((a, b)) = ranges {
                        w.chunk(id::CAM_RANGES, |w| {
                            w.f32(*a);
                            w.f32(*b);
                            Ok(())
                        })?;
                    }
                    w.end()?;
                }
                ObjOut::Light { position, color, off, multiplier, attenuate, spot } => {
                    w.begin(id::N_DIRECT_LIGHT);
                    w.vec3(*position);
                    w.chunk(id::COLOR_F, |w| {
                        w.vec3(*color);
                        Ok(())
                    })?;
                    if *off {
                        w.chunk(id::DL_OFF, |_| Ok(()))?;
                    }
                    if let Some((hot_target, hot, fall, roll)) = spot {
                        w.begin(id::DL_SPOTLIGHT);
                        w.vec3(*hot_target);
                        w.f32(*hot);
                        w.f32(*fall);
                        w.chunk(id::DL_SPOT_ROLL, |w| {
                            w.f32(*roll);
                            Ok(())
                        })?;
                        w.end()?;
                    }
                    if let Some((a, b)) = attenuate {
                        w.chunk(id::DL_ATTENUATE, |_| Ok(()))?;
                        w.chunk(id::DL_INNER_RANGE, |w| {
                            w.f32(*a);
                            Ok(())
                        })?;
                        w.chunk(id::DL_OUTER_RANGE, |w| {
                            w.f32(*b);
                            Ok(())
                        })?;
                    }
                    w.chunk(id::DL_MULTIPLIER, |w| {
                        w.f32(*multiplier);
                        Ok(())
                    })?;
                    w.end()?;
                }
            }
            w.end()?;
        }
        w.end()?; // MDATA
        w.begin(id::KFDATA);
        let (s0, s1) = self.segment;
        let (s0, s1) = (s0.max(0) as u32, s1.max(s0).max(0) as u32);
        w.chunk(id::KFHDR, |w| {
            w.u16(5);
            w.cstr("");
            w.u32(s1);
            Ok(())
        })?;
        w.chunk(id::KFSEG, |w| {
            w.u32(s0);
            w.u32(s1);
            Ok(())
        })?;
        w.chunk(id::KFCURTIME, |w| {
            w.u32(s0);
            Ok(())
        })?;
        if self.nodes.len() >= NO_PARENT as usize {
            return Err(WriteError {
                place: "KFDATA".into(),
                what: format!(
                    "{} keyframer nodes, more than NODE_ID (u16) can number",
                    self.nodes.len()
                ),
            });
        }
        for (k, n) in self.nodes.iter().enumerate() {
            w.begin(n.tag);
            w.chunk(id::NODE_ID, |w| {
                w.u16(k as u16);
                Ok(())
            })?;
            w.chunk(id::NODE_HDR, |w| {
                w.cstr(&n.name);
                w.u16(n.flags[0]);
                w.u16(n.flags[1]);
                w.u16(n.parent.map_or(NO_PARENT, |p| p as u16));
                Ok(())
            })?;
            if let Some(inst) = &n.instance {
                w.chunk(id::INSTANCE_NAME, |w| {
                    w.cstr(inst);
                    Ok(())
                })?;
            }
            if let Some(p) = n.pivot {
                w.chunk(id::PIVOT, |w| {
                    w.vec3(p);
                    Ok(())
                })?;
            }
            if let Some((a, b)) = n.bound_box {
                w.chunk(id::BOUNDBOX, |w| {
                    w.vec3(a);
                    w.vec3(b);
                    Ok(())
                })?;
            }
            if let Some(s) = n.morph_smooth {
                w.chunk(id::MORPH_SMOOTH, |w| {
                    w.f32(s);
                    Ok(())
                })?;
            }
            for (tag, flags, keys) in &n.tracks {
                write_track(&mut w, *tag, *flags, keys)?;
            }
            w.end()?;
        }
        w.end()?; // KFDATA
        w.end()?; // M3DMAGIC
        Ok(w.finish())
    }
}

/// Keys of a resampled value: one at the first frame when it never changes, else one per
/// frame.
fn keyed<T: PartialEq>(
    vals: &[T],
    value: impl Fn(&T) -> KeyValue,
    frame: impl Fn(usize) -> i32,
) -> Vec<KeyChunk> {
    if vals.iter().all(|v| *v == vals[0]) {
        return vec![key(frame(0), value(&vals[0]))];
    }
    vals.iter().enumerate().map(|(k, v)| key(frame(k), value(v))).collect()
}

/// The horizontal field of view in degrees (3DS stores horizontal), from `fov` along `axis`.
fn horizontal_fov(fov: f64, axis: FovAxis, aspect: Option<f64>) -> f64 {
    match (axis, aspect) {
        (FovAxis::Vertical, Some(a)) if a.is_finite() && a > 0.0 => {
            2.0 * ((fov.to_radians() / 2.0).tan() * a).atan().to_degrees()
        }
        _ => fov,
    }
}

fn write_track(
    w: &mut ChunkWriter,
    tag: u16,
    flags: u16,
    keys: &[KeyChunk],
) -> Result<(), WriteError> {
    w.begin(tag);
    w.u16(flags);
    w.u32(0);
    w.u32(0);
    w.u32(keys.len() as u32);
    for k in keys {
        w.i32(k.frame);
        w.u16(k.flags & 0x1F);
        for bit in 0..5 {
            if k.flags & (1 << bit) != 0 {
                w.f32(k.tcb[bit]);
            }
        }
        match &k.value {
            KeyValue::None => {}
            KeyValue::Scalar(v) => w.f32(*v),
            KeyValue::Vector(v) => w.vec3(*v),
            KeyValue::AxisAngle(a, axis) => {
                w.f32(*a);
                w.vec3(*axis);
            }
            KeyValue::Name(n) => w.cstr(n),
        }
    }
    w.end()?;
    Ok(())
}

fn write_tri(w: &mut ChunkWriter, t: &TriOut) -> Result<(), WriteError> {
    w.begin(id::N_TRI_OBJECT);
    w.begin(id::POINT_ARRAY);
    w.u16(t.points.len() as u16);
    for p in &t.points {
        w.vec3(*p);
    }
    w.end()?;
    if !t.uvs.is_empty() {
        w.begin(id::TEX_VERTS);
        w.u16(t.uvs.len() as u16);
        for uv in &t.uvs {
            w.f32(uv[0]);
            w.f32(uv[1]);
        }
        w.end()?;
    }
    w.begin(id::MESH_MATRIX);
    for c in &t.matrix {
        w.vec3(*c);
    }
    w.end()?;
    w.begin(id::FACE_ARRAY);
    w.u16(t.faces.len() as u16);
    for f in &t.faces {
        w.u16(f[0]);
        w.u16(f[1]);
        w.u16(f[2]);
        w.u16(7);
    }
    for (name, faces) in &t.groups {
        w.begin(id::MSH_MAT_GROUP);
        w.cstr(name);
        w.u16(faces.len() as u16);
        for f in faces {
            w.u16(*f);
        }
        w.end()?;
    }
    w.begin(id::SMOOTH_GROUP);
    for s in &t.smoothing {
        w.u32(*s);
    }
    w.end()?;
    w.end()?; // FACE_ARRAY
    w.end()?; // N_TRI_OBJECT
    Ok(())
}

fn write_material(w: &mut ChunkWriter, m: &MaterialOut) -> Result<(), WriteError> {
    let color = |w: &mut ChunkWriter, tag: u16, c: glam::Vec3| -> Result<(), TooLong> {
        w.chunk(tag, |w| {
            w.chunk(id::COLOR_24, |w| {
                for v in c.to_array() {
                    w.u8((v.clamp(0.0, 1.0) * 255.0).round() as u8);
                }
                Ok(())
            })
        })
    };
    let percent = |w: &mut ChunkWriter, tag: u16, v: f32| -> Result<(), TooLong> {
        w.chunk(tag, |w| {
            w.chunk(id::INT_PERCENTAGE, |w| {
                w.u16(((v * 100.0).round().clamp(-32768.0, 32767.0) as i16) as u16);
                Ok(())
            })
        })
    };
    let mat = &m.m;
    w.begin(id::MAT_ENTRY);
    w.chunk(id::MAT_NAME, |w| {
        w.cstr(&m.name);
        Ok(())
    })?;
    color(w, id::MAT_AMBIENT, mat.effective_ambient())?;
    color(w, id::MAT_DIFFUSE, mat.effective_diffuse())?;
    color(w, id::MAT_SPECULAR, mat.specular)?;
    percent(w, id::MAT_SHININESS, mat.shininess)?;
    percent(w, id::MAT_SHIN2PCT, mat.shininess_strength)?;
    percent(w, id::MAT_TRANSPARENCY, mat.transparency)?;
    percent(w, id::MAT_SELF_ILPCT, mat.self_illumination)?;
    if mat.two_sided {
        w.chunk(id::MAT_TWO_SIDE, |_| Ok(()))?;
    }
    if mat.wireframe {
        w.chunk(id::MAT_WIRE, |_| Ok(()))?;
    }
    for (t, file) in mat.maps.iter().zip(&m.map_names) {
        let tag = match t.slot {
            MapSlot::Diffuse => id::MAT_TEXMAP,
            MapSlot::Opacity => id::MAT_OPACMAP,
            MapSlot::Bump => id::MAT_BUMPMAP,
            MapSlot::Specular => id::MAT_SPECMAP,
            MapSlot::Shininess => id::MAT_SHINMAP,
            MapSlot::Reflection => id::MAT_REFLMAP,
            MapSlot::Emissive => id::MAT_SELFIMAP,
        };
        w.begin(tag);
        w.chunk(id::INT_PERCENTAGE, |w| {
            w.u16(((t.strength * 100.0).round().clamp(-32768.0, 32767.0) as i16) as u16);
            Ok(())
        })?;
        w.chunk(id::MAT_MAPNAME, |w| {
            w.cstr(file);
            Ok(())
        })?;
        w.chunk(id::MAT_MAP_TILING, |w| {
            w.u16(t.flags);
            Ok(())
        })?;
        let uv = t.uv_transform;
        for (tag, v) in [
            (id::MAT_MAP_USCALE, uv.scale.x),
            (id::MAT_MAP_VSCALE, uv.scale.y),
            (id::MAT_MAP_UOFFSET, uv.offset.x),
            (id::MAT_MAP_VOFFSET, uv.offset.y),
            (id::MAT_MAP_ANG, uv.rotation_degrees),
        ] {
            w.chunk(tag, |w| {
                w.f32(v);
                Ok(())
            })?;
        }
        w.end()?;
    }
    w.end()?;
    Ok(())
}

/// The payload bytes before the sub-chunks of `id`, for chunks that hold sub-chunks (`None`
/// for leaf chunks): what the writer's lint test walks.
pub fn container_head(chunk: u16, payload: &[u8]) -> Option<usize> {
    let cstr = |p: &[u8]| p.iter().position(|&b| b == 0).map(|n| n + 1);
    match chunk {
        id::M3DMAGIC | id::MDATA | id::KFDATA | id::MAT_ENTRY | id::N_TRI_OBJECT => Some(0),
        id::MAT_AMBIENT
        | id::MAT_DIFFUSE
        | id::MAT_SPECULAR
        | id::MAT_SHININESS
        | id::MAT_SHIN2PCT
        | id::MAT_TRANSPARENCY
        | id::MAT_SELF_ILPCT => Some(0),
        id::MAT_TEXMAP
        | id::MAT_SPECMAP
        | id::MAT_OPACMAP
        | id::MAT_REFLMAP
        | id::MAT_BUMPMAP
        | id::MAT_SHINMAP
        | id::MAT_SELFIMAP => Some(0),
        id::AMBIENT_NODE_TAG..=id::SPOTLIGHT_NODE_TAG => Some(0),
        id::NAMED_OBJECT => cstr(payload),
        id::N_DIRECT_LIGHT => Some(12),
        id::DL_SPOTLIGHT => Some(20),
        id::N_CAMERA => Some(32),
        id::FACE_ARRAY => {
            let n = u16::from_le_bytes([*payload.first()?, *payload.get(1)?]) as usize;
            Some(2 + 8 * n)
        }
        _ => None,
    }
}

/// Where a camera or spotlight `node` looks in `pose`: its target's world position, or, with
/// no target node, the point 100 units along its view axis (−Z of its world matrix; −Z when
/// that axis is degenerate), since a 3DS camera and spotlight always have a target.
fn aim_point(pose: &crate::anim::Pose, node: NodeId, target: Option<NodeId>) -> DVec3 {
    match target {
        Some(t) => pose.world[t].w_axis.truncate(),
        None => {
            let w = pose.world[node];
            let dir = -w.z_axis.truncate();
            let d = if dir.length() > 0.0 { dir.normalize() } else { -DVec3::Z };
            w.w_axis.truncate() + d * 100.0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scene::{Mesh, Node};

    #[test]
    fn names_are_shortened_to_ten_ascii_characters_and_made_unique() {
        let mut names = Names::default();
        let mut r = Report::default();
        assert_eq!(names.unique("object", "Cylinder.001", 10, &mut r), "Cylinder.0");
        assert_eq!(names.unique("object", "Cylinder.002", 10, &mut r), "Cylinder~1");
        assert_eq!(names.unique("object", "Öl", 10, &mut r), "_l");
        assert_eq!(names.unique("object", "Box", 10, &mut r), "Box");
        assert_eq!(names.unique("object", "BOX", 10, &mut r), "BOX~1");
        assert_eq!(r.renamed.len(), 4);
        let mut used = HashMap::new();
        assert_eq!(name_8_3("textures/brick_wall_diffuse.png", &mut used), "BRICK_WA.PNG");
        assert_eq!(name_8_3("brick_wall_normal.png", &mut used), "BRICK_~1.PNG");
        assert_eq!(name_8_3("textures/brick_wall_diffuse.png", &mut used), "BRICK_WA.PNG");
    }

    #[test]
    fn relative_rotation_key_turns_by_minus_its_angle_as_lib3ds_reads_it() {
        // A quarter turn about +Z: lib3ds' key (a, axis) turns by −a, so a = −π/2 about +Z.
        let q = DQuat::from_rotation_z(std::f64::consts::FRAC_PI_2);
        match relative_value(q) {
            KeyValue::AxisAngle(a, axis) => {
                assert!((a + std::f32::consts::FRAC_PI_2).abs() < 1e-6, "{a}");
                assert!((axis[2] - 1.0).abs() < 1e-6 && axis[0].abs() < 1e-6, "{axis:?}");
            }
            v => panic!("{v:?}"),
        }
    }

    /// A scene of one mesh node with `tris` separate triangles (3 vertices each).
    fn triangles(tris: usize) -> Scene {
        let mut mesh = Mesh { name: "soup".into(), ..Mesh::default() };
        for t in 0..tris {
            let x = t as f64;
            mesh.positions.extend([
                DVec3::new(x, 0.0, 0.0),
                DVec3::new(x, 1.0, 0.0),
                DVec3::new(x, 0.0, 1.0),
            ]);
            let b = (t * 3) as u32;
            mesh.corner_vertices.extend([b, b + 1, b + 2]);
            mesh.polygon_starts.push(b);
        }
        mesh.polygon_starts.push((tris * 3) as u32);
        let mut scene = Scene::default();
        scene.meshes.push(mesh);
        let mut node = Node::new("soup", NodeKind::Mesh);
        node.mesh = Some(0);
        node.transform.translation = DVec3::new(0.0, 0.0, 5.0);
        scene.nodes.push(node);
        scene.attach(0, None);
        scene
    }

    #[test]
    fn a_mesh_past_65535_vertices_is_split_and_reads_back_whole() {
        // 30 000 triangles = 90 000 vertices: 21 845 triangles (65 535 vertices) fit one object.
        let scene = triangles(30_000);
        let (bytes, report) = write(&scene, &WriteOptions::default()).unwrap();
        assert_eq!(report.split, 1);
        assert_eq!(report.meshes, 2);
        let (back, warnings) = super::super::read(&bytes, &Default::default()).unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        let counts: Vec<usize> = back.meshes.iter().map(|m| m.positions.len()).collect();
        assert_eq!(counts, [65_535, 90_000 - 65_535]);
        // Every written node is placed 5 units up, as the source node.
        let pose = back.evaluate(Some(0), Time::Frame(0.0));
        for k in 0..back.nodes.len() {
            let p = pose.world_positions(&back, k);
            assert!(p.iter().all(|v| v.z >= 5.0 && v.z <= 6.0), "node {k}");
        }
        let lint = super::super::write::lint(&bytes, &container_head).unwrap();
        assert!(lint > 10);
    }

    #[test]
    fn nan_positions_and_an_empty_mesh_write_without_panicking() {
        let mut scene = triangles(1);
        scene.meshes[0].positions[0].x = f64::NAN;
        scene.meshes.push(Mesh {
            name: "empty".into(),
            polygon_starts: vec![0],
            ..Mesh::default()
        });
        let mut n = Node::new("empty", NodeKind::Mesh);
        n.mesh = Some(1);
        scene.nodes.push(n);
        scene.attach(1, None);
        let (bytes, report) = write(&scene, &WriteOptions::default()).unwrap();
        assert_eq!(report.meshes, 2);
        let (back, _) = super::super::read(&bytes, &Default::default()).unwrap();
        assert!(back.meshes[0].positions[0].x.is_nan());
        assert!(back.meshes[1].positions.is_empty());
    }
}

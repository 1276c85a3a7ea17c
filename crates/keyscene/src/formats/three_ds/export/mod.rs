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
//! and the keyframer; 8.3 texture file names, the images copied beside the output under them
//! by [`save`] (a map with an empty file name is no map).

use std::fmt;
use std::path::Path;

use glam::DVec3;

use super::chunks::{id, KeyChunk};
use super::write::TooLong;
use crate::anim::{ChannelTarget, Interpolation, RotationTrack, THREE_DS_FPS};
use crate::output::{FileNames, TexturePlan};
use crate::scene::{FovAxis, Projection, Scene};

use crate::quoting::quoted;
use cameras_lights::{CameraOut, LightOut};
use materials::MaterialOut;
use meshes::TriOut;
use names::Names;

mod cameras_lights;
mod encode;
mod exact;
mod materials;
mod meshes;
mod names;
mod resampled;
mod tracks;

/// Longest object (and keyframer node) name written, in bytes: 3D Studio's traditional limit.
pub const MAX_OBJECT_NAME: usize = 10;
/// Longest material name written, in bytes (3D Studio's `MAT_NAME` limit).
pub const MAX_MATERIAL_NAME: usize = 16;
/// Most vertices (and faces) one 3DS object holds (`POINT_ARRAY`/`FACE_ARRAY` counts are u16).
pub const MAX_OBJECT_ELEMENTS: usize = 65_535;

/// Options for [`write`](fn@write) and [`save`].
#[derive(Debug, Clone)]
pub struct WriteOptions {
    /// Write this animation (index into `Scene::animations`); `None`: the first.
    pub animation: Option<usize>,
    /// Most keyframer frames a resampled animation may span (a longer one is an error, not a
    /// huge file).
    pub max_frames: usize,
    /// Write a 3DS source's keys exactly (default); `false` resamples every source.
    pub exact_three_ds: bool,
    /// [`save`]: copy the texture images the materials name beside the output, under their
    /// 8.3 names (default `true`).
    pub copy_textures: bool,
    /// [`save`]: the source the scene was read from, for [`crate::output`]'s collision rule
    /// (`None`: the output's own path).
    pub source: Option<String>,
}

impl Default for WriteOptions {
    fn default() -> Self {
        WriteOptions {
            animation: None,
            max_frames: 100_000,
            exact_three_ds: true,
            copy_textures: true,
            source: None,
        }
    }
}

/// What [`write`](fn@write) carried over, approximated and left out.
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
    /// [`save`]: texture images named but not found beside the source or not readable (so not
    /// copied beside the output), one line each.
    pub warnings: Vec<String>,
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
            write!(f, "\nrenamed {kind} {from} to {to}", from = quoted(&from), to = quoted(&to))?;
        }
        for d in &self.dropped {
            write!(f, "\nnot written: {d}")?;
        }
        for w in &self.warnings {
            write!(f, "\nwarning: {w}")?;
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
    if let Some(w) = crate::scene::user_props::not_written_warning(scene, "3DS") {
        b.report.warnings.push(w);
    }
    for cam in scene.cameras.iter().filter(|c| c.projection != Projection::Perspective) {
        b.report.warnings.push(format!(
            "camera \"{}\": orthographic, written as a perspective camera with its field of view ({}° {}): 3DS cameras are perspective only",
            cam.name,
            cam.fov_degrees,
            if cam.fov_axis == FovAxis::Horizontal { "horizontal" } else { "vertical" },
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

/// Writes `scene` to `path` as `.3ds`, atomically (a temporary file renamed into place), and
/// with [`WriteOptions::copy_textures`] the texture images its materials name beside it under
/// their 8.3 names ([`crate::output::TexturePlan`], [`FileNames::EightDotThree`]); images
/// first, and when the `.3ds` cannot be written the images just created are removed again.
/// Images named but not found are the report's `warnings`.
///
/// Errors: [`crate::Error::Unsupported`] for a scene [`write`](fn@write) refuses;
/// [`crate::Error::OutputCollision`] when an image would replace a different file of the same
/// name ([`crate::output`]); I/O errors.
pub fn save(scene: &Scene, path: &Path, opts: &WriteOptions) -> Result<Report, crate::Error> {
    let (bytes, mut report) = write(scene, opts)
        .map_err(|e| crate::Error::Unsupported(format!("{}: {e}", path.display())))?;
    let mut created = Vec::new();
    if opts.copy_textures {
        let dir = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let plan = TexturePlan::with_names(scene, FileNames::EightDotThree);
        let (images, warnings) = plan.companions(dir);
        // After the writer's own warnings (they were replaced here before).
        report.warnings.extend(warnings);
        let source = opts.source.clone().unwrap_or_else(|| crate::output::source_name(path));
        created = crate::output::write_companions(&images, &source)?;
    }
    if let Err(e) = crate::io::write_bytes_atomically(path, &bytes) {
        for p in created {
            let _ = std::fs::remove_file(p);
        }
        return Err(e);
    }
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

/// An editor object as written.
#[derive(Debug, Clone)]
enum ObjOut {
    Mesh(TriOut),
    Camera(CameraOut),
    Light(LightOut),
}

/// A keyframer node as written: chunk tag, `NODE_HDR` name, flags and parent (index into
/// [`Builder::nodes`]), optional chunks, tracks (tag, track flags, keys), and the scene node it
/// stands for.
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

/// What the passes build: materials, editor objects and keyframer nodes in file order, the
/// keyframer segment, the names given so far and the report.
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

/// A vector in the file's `f32`.
fn f3(v: DVec3) -> [f32; 3] {
    [v.x as f32, v.y as f32, v.z as f32]
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
#[cfg(test)]
mod tests {
    use glam::{DQuat, DVec3};

    use super::super::chunks::KeyValue;
    use super::tracks::relative_value;
    use super::*;
    use crate::anim::Time;
    use crate::scene::{Mesh, Node, NodeKind};

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
    }

    #[test]
    fn clashing_names_take_the_lowest_free_number_also_after_many_clashes() {
        let mut names = Names::default();
        let mut r = Report::default();
        // "Box~2" taken first: the third "Box" skips it.
        assert_eq!(names.unique("object", "Box~2", 10, &mut r), "Box~2");
        let got: Vec<String> = (0..4).map(|_| names.unique("object", "Box", 10, &mut r)).collect();
        assert_eq!(got, ["Box", "Box~1", "Box~3", "Box~4"]);
        // 10,000 clashes of a ten-character name: the number replaces its tail.
        let got: Vec<String> =
            (0..10_000).map(|_| names.unique("object", "Rectangle1", 10, &mut r)).collect();
        assert_eq!(got[0], "Rectangle1");
        assert_eq!(got[1], "Rectangl~1");
        assert_eq!(got[9], "Rectangl~9");
        assert_eq!(got[10], "Rectang~10");
        assert_eq!(got[9_999], "Recta~9999");
        // Another kind keeps its own names.
        assert_eq!(names.unique("material", "Box", 16, &mut r), "Box");
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

    fn map(file: &str, resolved: Option<std::path::PathBuf>) -> crate::scene::TextureMap {
        crate::scene::TextureMap {
            slot: crate::scene::MapSlot::Diffuse,
            file: file.into(),
            resolved,
            embedded: None,
            strength: 1.0,
            uv_transform: Default::default(),
            flags: 0,
            wrap: Default::default(),
        }
    }

    #[test]
    fn textures_travel_under_8_3_names_and_an_empty_name_is_no_map() {
        let src = tempfile::tempdir().unwrap();
        let image = src.path().join("brick_wall_diffuse.png");
        std::fs::write(&image, b"not really a png").unwrap();
        let mut scene = triangles(1);
        let mut m = crate::scene::Material { name: "wall".into(), ..Default::default() };
        m.maps.push(map("textures/brick_wall_diffuse.png", Some(image.clone())));
        m.maps.push(map("", None));
        m.maps.push(map("gone.tga", None));
        scene.materials.push(m);
        scene.meshes[0].material_slots = vec![Some(0)];
        let out = tempfile::tempdir().unwrap();
        let path = out.path().join("wall.3ds");
        let report = save(&scene, &path, &WriteOptions::default()).unwrap();
        // The copy has the source image's bytes under its 8.3 name (upper case, 8 + 3).
        assert_eq!(std::fs::read(out.path().join("BRICK_WA.PNG")).unwrap(), b"not really a png");
        assert!(report
            .renamed
            .iter()
            .any(|(k, _, to)| *k == "texture file" && to == "BRICK_WA.PNG"));
        assert_eq!(report.warnings.len(), 1, "{:?}", report.warnings);
        assert!(report.warnings[0].contains("gone.tga"), "{}", report.warnings[0]);
        let (back, _) =
            super::super::read(&std::fs::read(&path).unwrap(), &Default::default()).unwrap();
        let files: Vec<&str> = back.materials[0].maps.iter().map(|t| t.file.as_str()).collect();
        assert_eq!(files, ["BRICK_WA.PNG", "GONE.TGA"]);
        // Opt-out: nothing copied, the names stay.
        let none = tempfile::tempdir().unwrap();
        let opts = WriteOptions { copy_textures: false, ..Default::default() };
        save(&scene, &none.path().join("wall.3ds"), &opts).unwrap();
        assert_eq!(std::fs::read_dir(none.path()).unwrap().count(), 1);
    }
}

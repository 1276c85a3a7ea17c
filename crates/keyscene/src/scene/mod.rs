//! The format-neutral scene model every reader fills and every writer reads.
//!
//! # Shape
//! A [`Scene`] keeps its objects in flat arenas indexed by `usize`: [`Scene::nodes`],
//! [`Scene::meshes`], [`Scene::materials`], [`Scene::cameras`], [`Scene::lights`],
//! [`Scene::skins`]. A [`Node`] names its parent and children by index into `nodes`, and what
//! it carries (mesh, camera, light) by index into the matching arena. [`Scene::roots`] lists the
//! nodes without a parent, in file order. Readers guarantee that the hierarchy is a forest (no
//! cycles, every index in range); [`Scene::validate`] checks it.
//!
//! # Precision
//! Transforms, animation values and mesh positions are `f64` (glam's `DVec3`, `DQuat`,
//! `DMat4`): FBX stores `f64` positions and centimetre scenes far from the origin lose
//! millimetres in `f32`. Normals, UVs and colours are `f32`, which is all their sources carry.
//! 3DS stores `f32` everywhere; widening it to `f64` is exact.
//!
//! # Conventions
//! Coordinates are the source's own (see [`Metadata::axes`] and [`Metadata::units`]); readers
//! convert nothing. Matrices are column vectors (`world = parent_world * local`), glam's
//! convention. Angles in the model are radians unless a field says degrees (camera FOV and
//! light cones keep the degrees their sources use).

use glam::{DMat3, DMat4, DQuat, DVec3, Vec2, Vec3, Vec4};

use animation::Animation;

pub mod animation;
pub mod geometry;
pub mod pbr;
pub mod user_props;

pub use pbr::{Pbr, PbrProperty, PbrValue, ShadingModel, TextureChannel};
pub use user_props::{UserProperty, UserValue};

/// A node index into [`Scene::nodes`].
pub type NodeId = usize;

/// A loaded scene: hierarchy, geometry, materials, cameras, lights and animation.
#[derive(Debug, Clone, Default)]
pub struct Scene {
    /// Where the scene came from, its units, axes and time settings.
    pub meta: Metadata,
    /// Every node, parents and children by index into this list.
    pub nodes: Vec<Node>,
    /// Nodes without a parent, in file order.
    pub roots: Vec<NodeId>,
    /// Meshes, shared by index: several nodes may instance one mesh (3DS `INSTANCE_NAME`).
    pub meshes: Vec<Mesh>,
    /// Materials, referenced from [`Mesh::material_slots`].
    pub materials: Vec<Material>,
    /// Camera data, referenced from [`NodeKind::Camera`].
    pub cameras: Vec<Camera>,
    /// Light data, referenced from [`NodeKind::Light`].
    pub lights: Vec<Light>,
    /// Skinning deformers, referenced from [`Mesh::skin`].
    pub skins: Vec<Skin>,
    /// Animations (3DS: one keyframer; FBX: one per `AnimationStack`; glTF: one per animation).
    pub animations: Vec<Animation>,
    /// Stored bind poses (FBX `Pose` objects of type `BindPose`), in file order; empty for
    /// formats that store none. [`Pose::apply_bind_pose`](crate::anim::Pose::apply_bind_pose)
    /// poses a scene from one.
    pub bind_poses: Vec<BindPose>,
    /// Geometry caches (FBX `Cache` objects: Maya `.mc`/`.mcx`, 3ds Max `.pc2`), referenced
    /// from [`Mesh::geometry_cache`].
    pub geometry_caches: Vec<GeometryCache>,
    /// Animated material properties of every animation (FBX `AnimationCurveNode`s connected
    /// to a `Material` property), each naming its animation and material by index; evaluated
    /// by [`Scene::material_at`](crate::anim). Kept here rather than in [`Animation`] so the
    /// node channels' code (and every `Animation` a writer builds) stays as it is; empty for
    /// sources without animated materials (3DS, 3DA, glTF).
    pub material_channels: Vec<animation::MaterialChannel>,
}

/// Cached vertex positions over time: one channel of a geometry cache file (Maya `.xml` +
/// `.mc`/`.mcx`, 3ds Max `.pc2`) that an FBX `VertexCacheDeformer` binds to a mesh.
///
/// A mesh with a cache shows, at any time, the cached positions in its own frame, *instead of*
/// its blend-shaped and skinned positions — ufbx's `evaluate_caches` (`ufbxi_evaluate_skinning`:
/// a cached mesh skips its blend shapes and skin and is placed by its node's geometry-to-world
/// matrix). See [`GeometryCache::sample`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GeometryCache {
    /// The channel's name (`CHNM`; empty for `.pc2`).
    pub name: String,
    /// The cache file the FBX named, as found on disk.
    pub file: std::path::PathBuf,
    /// The cached frames, by increasing time.
    pub frames: Vec<CacheFrame>,
}

/// One cached frame of a [`GeometryCache`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CacheFrame {
    /// Time in seconds on the scene's clock (Maya: ticks ÷ 6000; `.pc2`: frame ÷ the FBX
    /// frame rate).
    pub time: f64,
    /// Positions in the mesh's frame, in vertex order (a file may hold more points than the
    /// mesh has vertices; the extra ones are unused).
    pub positions: Vec<DVec3>,
}

impl GeometryCache {
    /// The positions of the first `n` points at `seconds`, as ufbx's
    /// `ufbx_sample_geometry_cache_vec3` gives them: before the first frame the first, after
    /// the last the last; within 1e-8 s of a frame that frame; between two frames the linear
    /// blend `(1 − t)·prev + t·next`, `t = (seconds − prev) / (next − prev)`. `None` when a
    /// frame used holds fewer than `n` points (ufbx then leaves the mesh uncached) or there
    /// are no frames.
    pub fn sample(&self, seconds: f64, n: usize) -> Option<Vec<DVec3>> {
        let take = |f: &CacheFrame| f.positions.get(..n).map(<[DVec3]>::to_vec);
        let next = self.frames.partition_point(|f| f.time < seconds);
        let Some(after) = self.frames.get(next) else { return take(self.frames.last()?) };
        if next == 0 {
            return take(after);
        }
        let before = &self.frames[next - 1];
        const EPS: f64 = 1e-8;
        if (after.time - seconds).abs() < EPS {
            return take(after);
        }
        if (before.time - seconds).abs() < EPS {
            return take(before);
        }
        let t = (seconds - before.time) / (after.time - before.time);
        let (a, b) = (take(before)?, take(after)?);
        Some(a.iter().zip(&b).map(|(a, b)| *a * (1.0 - t) + *b * t).collect())
    }
}

/// A stored bind pose (FBX `Pose` object of type `BindPose`, seed 003 "Deformers"): the world
/// matrix of each listed node when the skin was bound. Maya writes one per skin cluster
/// (`skinCluster1`…); posing a scene from one places every listed node at its matrix.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BindPose {
    /// The pose's name (`BindPose`, `skinCluster1`…).
    pub name: String,
    /// (scene node, world matrix at bind time), in the pose's order; nodes the pose names that
    /// are not scene nodes are left out.
    pub nodes: Vec<(NodeId, DMat4)>,
}

impl BindPose {
    /// The world matrix the pose stores for `node`, if it lists it.
    pub fn matrix(&self, node: NodeId) -> Option<DMat4> {
        self.nodes.iter().find(|(n, _)| *n == node).map(|(_, m)| *m)
    }
}

/// Facts about the source file that do not belong to any object.
#[derive(Debug, Clone, Default)]
pub struct Metadata {
    /// The source format, e.g. `"3ds"`, `"fbx"`, `"3da"`, `"gltf"`.
    pub format: String,
    /// The format's own version as the file states it (3DS `M3D_VERSION`, FBX `FBXVersion`),
    /// `None` when the file does not say.
    pub version: Option<u32>,
    /// The length unit of the coordinates.
    pub units: Units,
    /// The axis system of the coordinates.
    pub axes: AxisSystem,
    /// Frames per second of the source's animation clock. `None` when the format stores no rate
    /// (3DS): callers then choose one, 3D Studio's 30 fps by default.
    pub frame_rate: Option<f64>,
    /// The animation range in the source's frames, first and last frame inclusive
    /// (3DS `KFSEG`, FBX `TimeSpanStart`/`TimeSpanStop` converted to frames).
    pub frame_range: Option<(f64, f64)>,
    /// Other named values a format keeps about the whole file (3DS `KFHDR` name and length,
    /// `MASTER_SCALE`, FBX creator …), as text, in file order.
    pub properties: Vec<(String, String)>,
}

/// The length unit of a scene's coordinates.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum Units {
    /// The file states no unit (3DS "generic units").
    #[default]
    Unitless,
    /// One unit is this many metres (FBX `UnitScaleFactor` cm → 0.01; glTF 1.0).
    Metres(f64),
}

/// One signed axis of a coordinate system.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Axis {
    /// +X
    PosX,
    /// −X
    NegX,
    /// +Y
    #[default]
    PosY,
    /// −Y
    NegY,
    /// +Z
    PosZ,
    /// −Z
    NegZ,
}

/// `+X`, `-X`, `+Y`, `-Y`, `+Z`, `-Z` (the form `inspect` and `--up` use).
impl std::fmt::Display for Axis {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Axis::PosX => "+X",
            Axis::NegX => "-X",
            Axis::PosY => "+Y",
            Axis::NegY => "-Y",
            Axis::PosZ => "+Z",
            Axis::NegZ => "-Z",
        })
    }
}

/// In field terms: `+Y up, +Z front, right-handed`.
impl std::fmt::Display for AxisSystem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let hand = if self.right_handed { "right-handed" } else { "left-handed" };
        write!(f, "{} up, {} front, {hand}", self.up, self.front)
    }
}

impl Axis {
    /// The unit vector of this axis.
    pub fn vector(self) -> DVec3 {
        match self {
            Axis::PosX => DVec3::X,
            Axis::NegX => DVec3::NEG_X,
            Axis::PosY => DVec3::Y,
            Axis::NegY => DVec3::NEG_Y,
            Axis::PosZ => DVec3::Z,
            Axis::NegZ => DVec3::NEG_Z,
        }
    }
}

/// Which way is up and front, and the handedness of the coordinates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AxisSystem {
    /// The axis pointing up.
    pub up: Axis,
    /// The axis a model's front faces along ("front" as FBX `FrontAxis`).
    pub front: Axis,
    /// `true` for right-handed coordinates.
    pub right_handed: bool,
}

impl Default for AxisSystem {
    /// glTF's system: +Y up, +Z front, right-handed.
    fn default() -> Self {
        Self::Y_UP_RIGHT_HANDED
    }
}

impl AxisSystem {
    /// glTF and Maya: +Y up, +Z front, right-handed.
    pub const Y_UP_RIGHT_HANDED: AxisSystem =
        AxisSystem { up: Axis::PosY, front: Axis::PosZ, right_handed: true };
    /// 3D Studio and 3ds Max: +Z up, −Y front, right-handed.
    pub const Z_UP_RIGHT_HANDED: AxisSystem =
        AxisSystem { up: Axis::PosZ, front: Axis::NegY, right_handed: true };

    /// The right-handed axis system with `up` up, as a user naming only the up axis means it
    /// (`keyscene convert --up`): front +Z for an X or Y up axis (Maya, glTF), front −Y for a Z
    /// up axis (3ds Max, Blender).
    pub fn right_handed_with_up(up: Axis) -> AxisSystem {
        let front = match up {
            Axis::PosZ | Axis::NegZ => Axis::NegY,
            _ => Axis::PosZ,
        };
        AxisSystem { up, front, right_handed: true }
    }

    /// The right axis's vector: `up × front` when right-handed, `front × up` when left-handed.
    pub fn right(&self) -> DVec3 {
        let (up, front) = (self.up.vector(), self.front.vector());
        if self.right_handed {
            up.cross(front)
        } else {
            front.cross(up)
        }
    }

    /// The matrix whose columns are the (right, up, front) vectors: it takes coordinates along
    /// right/up/front to this system's x/y/z. `None` when up and front are parallel.
    pub fn basis(&self) -> Option<DMat3> {
        let (up, front) = (self.up.vector(), self.front.vector());
        (up.dot(front) == 0.0).then(|| DMat3::from_cols(self.right(), up, front))
    }
}

impl Units {
    /// Metres per unit; a unitless scene counts as metres (1.0).
    pub fn metres(self) -> f64 {
        match self {
            Units::Metres(m) => m,
            Units::Unitless => 1.0,
        }
    }
}

/// What a node is.
#[derive(Debug, Clone, PartialEq)]
pub enum NodeKind {
    /// A node with a mesh; the mesh is [`Node::mesh`].
    Mesh,
    /// A helper without geometry (3DS `$$$DUMMY`, FBX `Null`).
    Null,
    /// A skeleton bone (FBX `LimbNode`, 3DA `ANIM_BONE_3DA`).
    Bone,
    /// A camera; its data is `Scene::cameras[index]`.
    Camera(usize),
    /// A camera's target (3DS `TARGET_NODE_TAG`); the camera node is named.
    CameraTarget {
        /// The camera node aiming at this target, when known.
        camera: Option<NodeId>,
    },
    /// A light; its data is `Scene::lights[index]`.
    Light(usize),
    /// A spotlight's target (3DS `L_TARGET_NODE_TAG`).
    LightTarget {
        /// The light node aiming at this target, when known.
        light: Option<NodeId>,
    },
    /// The scene's ambient light (3DS `AMBIENT_NODE_TAG`).
    Ambient,
}

impl NodeKind {
    /// A short lower-case name used by the CLI and JSON output: `mesh`, `null`, `bone`,
    /// `camera`, `camera_target`, `light`, `light_target`, `ambient`.
    pub fn name(&self) -> &'static str {
        match self {
            NodeKind::Mesh => "mesh",
            NodeKind::Null => "null",
            NodeKind::Bone => "bone",
            NodeKind::Camera(_) => "camera",
            NodeKind::CameraTarget { .. } => "camera_target",
            NodeKind::Light(_) => "light",
            NodeKind::LightTarget { .. } => "light_target",
            NodeKind::Ambient => "ambient",
        }
    }
}

/// A node of the hierarchy.
///
/// Its local matrix at rest is `T(translation) · R(rotation) · S(scale)` (column vectors);
/// animation channels replace those parts over time (see [`crate::anim`]). The attached mesh
/// is placed by [`Node::geometry_transform`] in the node's frame, which children do not inherit.
///
/// 272 bytes: the parts few nodes have (geometry transform, pivots, 3DS chunk data, FBX
/// `Lcl Rotation` angles, user properties) are boxed
/// and absent when unset, since files with tens of thousands of nodes exist (issue #3 measures
/// peak memory against the file size).
#[derive(Debug, Clone)]
pub struct Node {
    /// The node's name as the source stores it (3DS `NODE_HDR` object name, so `$$$DUMMY` for
    /// dummies; FBX name without the `Model::` prefix).
    pub name: String,
    /// A second name the source gives (3DS `INSTANCE_NAME`), else empty.
    pub instance: String,
    /// What the node is.
    pub kind: NodeKind,
    /// Parent index, `None` for a root.
    pub parent: Option<NodeId>,
    /// Child indices in file order.
    pub children: Vec<NodeId>,
    /// The rest-pose local transform (before animation).
    pub transform: Transform,
    /// See [`Node::geometry_transform`]; `None` is the identity.
    geometry: Option<Box<DMat4>>,
    /// The attached mesh, index into [`Scene::meshes`].
    pub mesh: Option<usize>,
    /// Hidden at rest (3DS NODE_HDR flags 1 bit 11; FBX `Visibility` 0).
    pub hidden: bool,
    /// FBX pivots and pre/post rotation, when the node has any (see [`Pivots`]).
    pub pivots: Option<Box<Pivots>>,
    /// How the node inherits its parent's transform.
    pub inherit: InheritType,
    /// Identity and flags as the source stores them, kept so writers can round-trip them.
    pub source: NodeSource,
    /// See [`Node::user_properties`]; `None` when the node has none. A boxed `Vec` is one
    /// word where a `Vec` is three and a boxed slice two: most nodes have none.
    #[allow(clippy::box_collection)]
    user: Option<Box<Vec<UserProperty>>>,
}

impl Node {
    /// A node with the given name and kind, identity transforms, no parent and no attachments.
    pub fn new(name: impl Into<String>, kind: NodeKind) -> Node {
        Node {
            name: name.into(),
            instance: String::new(),
            kind,
            parent: None,
            children: Vec::new(),
            transform: Transform::IDENTITY,
            geometry: None,
            mesh: None,
            hidden: false,
            pivots: None,
            inherit: InheritType::RSrs,
            source: NodeSource::default(),
            user: None,
        }
    }

    /// The node's user-defined properties in file order ([`user_props`]: FBX `U` properties
    /// of the `Model`, glTF node `extras`); empty when it has none.
    pub fn user_properties(&self) -> &[UserProperty] {
        self.user.as_deref().map_or(&[], Vec::as_slice)
    }

    /// Sets [`Node::user_properties`]; an empty list is stored as nothing.
    pub fn set_user_properties(&mut self, props: Vec<UserProperty>) {
        self.user = (!props.is_empty()).then(|| Box::new(props));
    }

    /// Mesh-to-node matrix applied to the attached mesh only, not inherited by children.
    /// 3DS: `T(−pivot) · MESH_MATRIX⁻¹` (lib3ds `3dsplay` convention); FBX: the geometric
    /// translation/rotation/scaling. Identity when the source has none.
    pub fn geometry_transform(&self) -> DMat4 {
        self.geometry.as_deref().copied().unwrap_or(DMat4::IDENTITY)
    }

    /// Sets [`Node::geometry_transform`]; the identity is stored as nothing.
    pub fn set_geometry_transform(&mut self, m: DMat4) {
        self.geometry = (m != DMat4::IDENTITY).then(|| Box::new(m));
    }
}

/// A node's identity and flags in its source format.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NodeSource {
    /// The source's node id (3DS `NODE_ID`, or the file-order number when absent; FBX object id).
    pub id: Option<i64>,
    /// 3DS node chunk data, for nodes read from 3DS (boxed: other formats have none).
    pub three_ds: Option<Box<ThreeDsNodeSource>>,
    /// FBX `Lcl Rotation` as stored (Euler degrees about X, Y, Z, in the node's
    /// `RotationOrder`), for nodes read from FBX. [`Transform::rotation`] is what the scene
    /// evaluates; this keeps the source's own angles (several angle triples give one
    /// orientation, and quaternion → Euler → quaternion moves them by round-off), so the FBX
    /// writer writes them back unchanged where they still give that rotation in XYZ order
    /// (docs/fbx.md, "FBX → FBX → FBX"). Boxed, as the 3DS data: [`Node`] stays small.
    pub fbx_lcl_rotation: Option<Box<DVec3>>,
}

/// What a 3DS node's chunks store beyond the scene model (3DS spec, "Keyframer": `NODE_HDR`,
/// `PIVOT`, `BOUNDBOX`, `MORPH_SMOOTH`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ThreeDsNodeSource {
    /// 3DS `NODE_HDR` flags 1 and flags 2 as stored.
    pub flags: [u16; 2],
    /// 3DS `PIVOT` in the mesh's frame (also folded into [`Node::geometry_transform`]).
    pub pivot: DVec3,
    /// 3DS `BOUNDBOX` (min, max) when present.
    pub bound_box: Option<(DVec3, DVec3)>,
    /// 3DS `MORPH_SMOOTH` angle in degrees when present.
    pub morph_smooth: Option<f32>,
}

/// Translation, rotation and scale of a node relative to its parent.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Transform {
    /// Translation in scene units.
    pub translation: DVec3,
    /// Rotation as a unit quaternion.
    pub rotation: DQuat,
    /// Scale factors per axis.
    pub scale: DVec3,
}

impl Transform {
    /// No translation, no rotation, unit scale.
    pub const IDENTITY: Transform =
        Transform { translation: DVec3::ZERO, rotation: DQuat::IDENTITY, scale: DVec3::ONE };

    /// `T · R · S` as a matrix (column vectors).
    pub fn matrix(&self) -> DMat4 {
        DMat4::from_scale_rotation_translation(self.scale, self.rotation, self.translation)
    }
}

/// A polygon mesh in its own frame.
///
/// Polygons are stored flat: polygon `p` has the corners
/// `corner_vertices[polygon_starts[p] as usize .. polygon_starts[p + 1] as usize]`
/// (`polygon_starts` has one more entry than there are polygons). 3DS meshes are all
/// triangles; FBX brings n-gons. Winding is counter-clockwise seen from the front.
#[derive(Debug, Clone, Default)]
pub struct Mesh {
    /// The mesh's name (3DS `NAMED_OBJECT`, FBX geometry name).
    pub name: String,
    /// Vertex positions in the mesh's frame.
    pub positions: Vec<DVec3>,
    /// Offsets into `corner_vertices`, one per polygon plus the end.
    pub polygon_starts: Vec<u32>,
    /// Vertex index of every polygon corner.
    pub corner_vertices: Vec<u32>,
    /// Normals, when the source stores them (3DS stores none: derive them from
    /// `smoothing_groups`).
    pub normals: Option<Attribute<Vec3>>,
    /// UV sets in source order; V points up (OpenGL convention, as 3DS and FBX store it).
    pub uv_sets: Vec<UvSet>,
    /// Vertex colours (RGBA, 0–1).
    pub colors: Option<Attribute<Vec4>>,
    /// Tangents as the source stores them (FBX `LayerElementTangent`, first layer), in the
    /// mesh's frame, not necessarily unit length; `None` when the source has none. Writers
    /// that need tangents and find none (or a zero one) derive them from UV set 0.
    pub tangents: Option<Attribute<Vec3>>,
    /// Binormals (bitangents) as the source stores them (FBX `LayerElementBinormal`, first
    /// layer), in the mesh's frame. Only their side of the normal–tangent plane is used: the
    /// handedness `sign(dot(cross(normal, tangent), binormal))` (glTF `TANGENT.w`).
    pub binormals: Option<Attribute<Vec3>>,
    /// Smoothing-group bits per polygon (3DS `SMOOTH_GROUP`); two polygons share a normal at a
    /// vertex only where their bits intersect. `None` when the source has none.
    pub smoothing_groups: Option<Vec<u32>>,
    /// Material slot per polygon, index into `material_slots`, or [`Mesh::NO_MATERIAL`].
    /// Empty when every polygon uses slot 0 (or no material at all when there is no slot).
    pub polygon_materials: Vec<u32>,
    /// Scene material index per slot (`None`: the slot names a material the file lacks).
    pub material_slots: Vec<Option<usize>>,
    /// 3DS `MESH_MATRIX` (the object's frame at modelling time), FBX: none.
    pub source_matrix: Option<DMat4>,
    /// Morph targets (FBX blend shapes, 3DS morph meshes, glTF targets).
    pub morph_targets: Vec<MorphTarget>,
    /// The skin deforming this mesh, index into [`Scene::skins`].
    pub skin: Option<usize>,
    /// The geometry cache animating this mesh's positions, index into
    /// [`Scene::geometry_caches`]; it replaces blend shapes and skin when it has data for the
    /// mesh's vertex count (see [`GeometryCache`]).
    pub geometry_cache: Option<usize>,
}

impl Mesh {
    /// Marks a polygon without a material in [`Mesh::polygon_materials`].
    pub const NO_MATERIAL: u32 = u32::MAX;

    /// Number of polygons.
    pub fn polygon_count(&self) -> usize {
        self.polygon_starts.len().saturating_sub(1)
    }

    /// The vertex indices of polygon `p`. Panics when `p >= polygon_count()`.
    pub fn polygon(&self, p: usize) -> &[u32] {
        let a = self.polygon_starts[p] as usize;
        let b = self.polygon_starts[p + 1] as usize;
        &self.corner_vertices[a..b]
    }

    /// The corner index range of polygon `p` into per-corner attributes.
    pub fn polygon_corners(&self, p: usize) -> std::ops::Range<usize> {
        self.polygon_starts[p] as usize..self.polygon_starts[p + 1] as usize
    }

    /// The material slot of polygon `p` ([`Mesh::NO_MATERIAL`] for none).
    pub fn polygon_material(&self, p: usize) -> u32 {
        match self.polygon_materials.get(p) {
            Some(&m) => m,
            None if self.material_slots.is_empty() => Mesh::NO_MATERIAL,
            None => 0,
        }
    }
}

/// A named set of texture coordinates.
#[derive(Debug, Clone, Default)]
pub struct UvSet {
    /// The set's name (FBX `LayerElementUV` name), empty when unnamed.
    pub name: String,
    /// The coordinates.
    pub uvs: Attribute<Vec2>,
}

/// Per-element mesh data and how it maps onto the mesh.
#[derive(Debug, Clone, PartialEq)]
pub struct Attribute<T> {
    /// The values.
    pub values: Vec<T>,
    /// How `values` map to vertices, corners or polygons.
    pub mapping: Mapping,
}

impl<T> Default for Attribute<T> {
    fn default() -> Self {
        Attribute { values: Vec::new(), mapping: Mapping::PerVertex }
    }
}

impl<T: Copy> Attribute<T> {
    /// The value at polygon corner `corner` (a corner index) of a polygon `polygon` whose vertex
    /// is `vertex`. `None` when the attribute has no value there.
    pub fn get(&self, vertex: u32, corner: usize, polygon: usize) -> Option<T> {
        match &self.mapping {
            Mapping::PerVertex => self.values.get(vertex as usize).copied(),
            Mapping::PerCorner => self.values.get(corner).copied(),
            Mapping::PerPolygon => self.values.get(polygon).copied(),
            Mapping::Indexed(ix) => {
                ix.get(corner).and_then(|&i| self.values.get(i as usize)).copied()
            }
            Mapping::AllSame => self.values.first().copied(),
        }
    }
}

/// How an [`Attribute`]'s values map onto a mesh.
#[derive(Debug, Clone, PartialEq)]
pub enum Mapping {
    /// One value per vertex (`values[vertex]`).
    PerVertex,
    /// One value per polygon corner (`values[corner]`).
    PerCorner,
    /// One value per polygon.
    PerPolygon,
    /// An index into `values` per polygon corner.
    Indexed(Vec<u32>),
    /// One value for the whole mesh.
    AllSame,
}

/// A morph target: positions (and normals) that replace or offset the base mesh.
#[derive(Debug, Clone, Default)]
pub struct MorphTarget {
    /// The target's name (FBX `BlendShapeChannel`, 3DS morph object).
    pub name: String,
    /// Position offsets from the base mesh, one per base vertex.
    pub position_deltas: Vec<DVec3>,
    /// Normal offsets, when the source has them.
    pub normal_deltas: Option<Vec<Vec3>>,
    /// Weight at rest, 0–1.
    pub default_weight: f64,
    /// In-between shapes (FBX `BlendShapeChannel` with several `Shape`s and `FullWeights`):
    /// `(weight, position offsets per base vertex)` sorted by weight, each shape reached in full
    /// at that channel weight (0–1); [`position_deltas`](Self::position_deltas) is reached at
    /// weight 1. Between neighbouring shapes (and 0) the offsets blend linearly; see
    /// [`Pose::world_positions`](crate::anim::Pose::world_positions). Empty for plain targets.
    pub inbetweens: Vec<(f64, Vec<DVec3>)>,
    /// Per-vertex weights of the offsets (0–1, one per base vertex), multiplying every shape's
    /// position and normal offsets at that vertex on top of the channel weight: a vertex of
    /// weight 0 never moves. Empty: every vertex weighs 1. FBX: Blender's binary exporter
    /// writes a shape's vertex-group weights (percent) as the channel's `FullWeights`, one per
    /// `Shape` offset; ufbx reads them so (`ufbx_blend_shape::offset_weights`, applied in
    /// `ufbx_add_blend_shape_vertex_offsets`) and so does keyscene.
    pub vertex_weights: Vec<f64>,
}

impl MorphTarget {
    /// The position offsets of shape `shape` (`None`: the target shape,
    /// [`position_deltas`](Self::position_deltas); `Some(k)`: in-between `k`) with the
    /// [`vertex_weights`](Self::vertex_weights) applied, one per base vertex. Borrowed when
    /// there are no vertex weights. Panics when `k` is not an in-between.
    pub fn weighted_deltas(&self, shape: Option<usize>) -> std::borrow::Cow<'_, [DVec3]> {
        let deltas = match shape {
            None => &self.position_deltas,
            Some(k) => &self.inbetweens[k].1,
        };
        self.weighted(deltas)
    }

    /// [`normal_deltas`](Self::normal_deltas) with the
    /// [`vertex_weights`](Self::vertex_weights) applied; `None` when the target has none.
    pub fn weighted_normal_deltas(&self) -> Option<std::borrow::Cow<'_, [Vec3]>> {
        let nd = self.normal_deltas.as_deref()?;
        if self.vertex_weights.is_empty() {
            return Some(std::borrow::Cow::Borrowed(nd));
        }
        Some(std::borrow::Cow::Owned(
            nd.iter()
                .enumerate()
                .map(|(i, d)| *d * self.vertex_weights.get(i).map_or(1.0, |&w| w as f32))
                .collect(),
        ))
    }

    fn weighted<'a>(&self, deltas: &'a [DVec3]) -> std::borrow::Cow<'a, [DVec3]> {
        if self.vertex_weights.is_empty() {
            return std::borrow::Cow::Borrowed(deltas);
        }
        std::borrow::Cow::Owned(
            deltas
                .iter()
                .enumerate()
                .map(|(i, d)| *d * self.vertex_weights.get(i).copied().unwrap_or(1.0))
                .collect(),
        )
    }
}

/// A skin: the bones that deform a mesh and each vertex's weights.
#[derive(Debug, Clone, Default)]
pub struct Skin {
    /// Joints in order; `influences` name joints by index into this list.
    pub joints: Vec<SkinJoint>,
    /// Per vertex: (joint index, weight), weights as stored (not renormalised).
    pub influences: Vec<Vec<(u32, f32)>>,
    /// Per vertex: how much of the vertex is skinned by dual quaternions (1) rather than by
    /// linear blending (0), FBX `SkinningType` `DualQuaternion` (all 1) or `Blend`
    /// (`BlendWeights`). Empty: linear blend skinning for every vertex.
    pub dq_weights: Vec<f32>,
    /// The skinned mesh node's world matrix at bind time as the skin itself stores it, for
    /// instances of the mesh that no [`BindPose`] lists
    /// ([`Pose::follow_skinned_nodes`](crate::anim::Pose::follow_skinned_nodes)).
    /// FBX: `TransformLink · Transform` of the first cluster storing both (ufbx
    /// `bind_to_world · mesh_node_to_bone`: the bone's world matrix at bind times the mesh
    /// node's frame in the bone's); when none does, a cluster with `Transform` alone takes its
    /// bone's matrix from the first bind pose that lists the bone, as ufbx fills
    /// `bind_to_world`. One matrix for the skin, so every instance of the mesh gets the same
    /// one (Maya's skinCluster `geomMatrix`). `None` when the source stores no such pair
    /// (glTF, 3DA, an FBX cluster without `Transform`).
    pub mesh_bind: Option<DMat4>,
}

/// A bone of a [`Skin`].
#[derive(Debug, Clone)]
pub struct SkinJoint {
    /// The bone's node.
    pub node: NodeId,
    /// Inverse of the bone's world matrix at bind time, times the mesh's world matrix at bind
    /// time: maps mesh-space positions into the bone's frame.
    pub inverse_bind: DMat4,
}

/// A surface material (3DS `MAT_ENTRY`, FBX lambert/phong, glTF material).
///
/// # Colours and factors
/// Colours are kept as the source stores them, each with its factor apart, as FBX stores
/// them (`DiffuseColor` and `DiffuseFactor`, …) and as ufbx's material model reports them
/// (`ufbx_material.fbx.diffuse_color`, `.diffuse_factor`, …). Sources without factors (3DS,
/// 3DA, glTF, OBJ) leave every factor at 1. What a colour shows as is **colour × factor**
/// (ufbx.h, `ufbx_material_map`: "missing factors are set to `1.0` if a color is defined",
/// and `ufbxi_update_factor` sets a missing factor to 0 only where the colour is black, so the
/// product is the colour alone; FBX2glTF's `getSurfaceValues` (`TraditionalMaterials.cpp`) multiplies each
/// colour by its factor for glTF too), [`Material::effective_diffuse`] and its twins: every writer that has one colour per slot (glTF `baseColorFactor`, 3DA, OBJ `Kd`,
/// 3DS `MAT_DIFFUSE`) and the renderer take it from there; the FBX writer writes colour and
/// factor apart. The specular factor is [`Material::shininess_strength`] (3DS's specular
/// level, FBX `SpecularFactor`), which writers keep beside the specular colour as before.
#[derive(Debug, Clone, PartialEq)]
pub struct Material {
    /// The material's name (3DS `MAT_NAME`: the key meshes refer to it by).
    pub name: String,
    /// Ambient colour as stored, linear RGB 0–1 (3DS `MAT_AMBIENT`, FBX `AmbientColor`, FBX
    /// 6.1 `Ambient`), before [`ambient_factor`](Self::ambient_factor).
    pub ambient: Vec3,
    /// Scale of [`ambient`](Self::ambient) (FBX `AmbientFactor`); 1 where the source has none.
    pub ambient_factor: f32,
    /// Diffuse colour as stored, linear RGB 0–1 (3DS `MAT_DIFFUSE`, FBX `DiffuseColor`, FBX
    /// 6.1 `Diffuse`, glTF `baseColorFactor`), before [`diffuse_factor`](Self::diffuse_factor).
    pub diffuse: Vec3,
    /// Scale of [`diffuse`](Self::diffuse) (FBX `DiffuseFactor`); 1 where the source has none.
    pub diffuse_factor: f32,
    /// Specular colour, linear RGB 0–1 (3DS `MAT_SPECULAR`, FBX `SpecularColor`/`Specular`);
    /// its factor is [`shininess_strength`](Self::shininess_strength).
    pub specular: Vec3,
    /// Shininess 0–1 (3DS `MAT_SHININESS` percent ÷ 100; FBX `ShininessExponent`, else
    /// `Shininess`, ÷ 100).
    pub shininess: f32,
    /// Shininess strength, 1 = 100 %: the specular colour's factor (3DS `MAT_SHIN2PCT` ÷ 100,
    /// FBX `SpecularFactor` as stored: 3ds Max writes specular levels up to 2.25 and more).
    pub shininess_strength: f32,
    /// Emissive colour as stored, linear RGB (FBX `EmissiveColor`, FBX 6.1 `Emissive`), before
    /// [`emissive_factor`](Self::emissive_factor); black for sources that describe emission
    /// by [`self_illumination`](Self::self_illumination) only (3DS, 3DA, glTF, OBJ).
    pub emissive: Vec3,
    /// Scale of [`emissive`](Self::emissive) (FBX `EmissiveFactor`); 1 where the source has
    /// none.
    pub emissive_factor: f32,
    /// Transparent colour as stored (FBX `TransparentColor`); black elsewhere.
    pub transparent: Vec3,
    /// Scale of [`transparent`](Self::transparent) (FBX `TransparencyFactor`); 1 where the
    /// source has none.
    pub transparency_factor: f32,
    /// Opacity 0–1 as stored (FBX `Opacity`), `None` where the source stores none.
    pub opacity: Option<f32>,
    /// Transparency 0 (opaque) – 1 (invisible) (3DS `MAT_TRANSPARENCY` ÷ 100; FBX: derived,
    /// [`Material::update_fbx_derived`]).
    pub transparency: f32,
    /// Self-illumination 0–1 (3DS `MAT_SELF_ILPCT` ÷ 100; FBX: derived,
    /// [`Material::update_fbx_derived`]).
    pub self_illumination: f32,
    /// Drawn from both sides (3DS `MAT_TWO_SIDE`).
    pub two_sided: bool,
    /// Drawn as wireframe (3DS `MAT_WIRE`).
    pub wireframe: bool,
    /// Texture maps in source order.
    pub maps: Vec<TextureMap>,
    /// The material's shading model and PBR values with their maps ([`pbr`] module docs):
    /// FBX materials of every shading model, glTF materials; `None` for 3DS, 3DA and OBJ.
    /// Writers take a material from here when its model [`is_pbr`](ShadingModel::is_pbr),
    /// else from the Phong fields above.
    pub pbr: Option<Pbr>,
    /// User-defined properties in file order ([`user_props`]: FBX `U` properties of the
    /// `Material`, glTF material `extras`); their curves are [`Scene::material_channels`]
    /// ([`animation::MaterialProperty::User`]).
    pub user_properties: Vec<UserProperty>,
}

impl Default for Material {
    fn default() -> Self {
        Material {
            name: String::new(),
            ambient: Vec3::splat(0.0),
            ambient_factor: 1.0,
            diffuse: Vec3::splat(0.8),
            diffuse_factor: 1.0,
            specular: Vec3::splat(0.0),
            shininess: 0.0,
            shininess_strength: 0.0,
            emissive: Vec3::ZERO,
            emissive_factor: 1.0,
            transparent: Vec3::ZERO,
            transparency_factor: 1.0,
            opacity: None,
            transparency: 0.0,
            self_illumination: 0.0,
            two_sided: false,
            wireframe: false,
            maps: Vec::new(),
            pbr: None,
            user_properties: Vec::new(),
        }
    }
}

impl Material {
    /// The diffuse colour as shown: [`diffuse`](Self::diffuse) × [`diffuse_factor`](Self::diffuse_factor)
    /// (see "Colours and factors" above).
    pub fn effective_diffuse(&self) -> Vec3 {
        self.diffuse * self.diffuse_factor
    }

    /// The ambient colour as shown: [`ambient`](Self::ambient) × [`ambient_factor`](Self::ambient_factor).
    pub fn effective_ambient(&self) -> Vec3 {
        self.ambient * self.ambient_factor
    }

    /// The emissive colour as stored times its factor: [`emissive`](Self::emissive) ×
    /// [`emissive_factor`](Self::emissive_factor) (black for 3DS-style sources, whose emission
    /// is [`self_illumination`](Self::self_illumination) × the diffuse colour).
    pub fn effective_emissive(&self) -> Vec3 {
        self.emissive * self.emissive_factor
    }

    /// Sets [`transparency`](Self::transparency) and
    /// [`self_illumination`](Self::self_illumination) from the FBX properties they derive from:
    /// transparency = 1 − [`opacity`](Self::opacity) when stored and finite, else the mean of
    /// [`transparent`](Self::transparent) × [`transparency_factor`](Self::transparency_factor)
    /// (the FBX SDK's `Opacity` supersedes `TransparencyFactor`; Maya writes both), and
    /// self-illumination = the brightest channel of
    /// [`effective_emissive`](Self::effective_emissive); both clamped to 0–1. The FBX reader
    /// calls it, and so does [`Scene::material_at`](crate::scene::Scene) after applying
    /// animated FBX properties.
    pub fn update_fbx_derived(&mut self) {
        let t = match self.opacity.filter(|o| o.is_finite()) {
            Some(o) => 1.0 - o,
            None => {
                let c = self.transparent * self.transparency_factor;
                (c.x + c.y + c.z) / 3.0
            }
        };
        self.transparency = t.clamp(0.0, 1.0);
        self.self_illumination = self.effective_emissive().max_element().clamp(0.0, 1.0);
    }

    /// The stored value of `property` as three components (a scalar in x), in the units its
    /// FBX property has: colours 0–1, factors 1 = 100 %, `ShininessExponent` ×100 of
    /// [`shininess`](Self::shininess), `Opacity` 1 − [`transparency`](Self::transparency)
    /// where none is stored. What [`Material::set_property`] takes back.
    pub fn property(&self, property: animation::MaterialProperty) -> DVec3 {
        use animation::MaterialProperty::*;
        let s = |x: f32| DVec3::new(x as f64, 0.0, 0.0);
        match property {
            Ambient => self.ambient.as_dvec3(),
            AmbientFactor => s(self.ambient_factor),
            Diffuse => self.diffuse.as_dvec3(),
            DiffuseFactor => s(self.diffuse_factor),
            Specular => self.specular.as_dvec3(),
            SpecularFactor => s(self.shininess_strength),
            Shininess => s(self.shininess * 100.0),
            Emissive => self.emissive.as_dvec3(),
            EmissiveFactor => s(self.emissive_factor),
            TransparentColor => self.transparent.as_dvec3(),
            TransparencyFactor => s(self.transparency_factor),
            Opacity => s(self.opacity.unwrap_or(1.0 - self.transparency)),
            User(k) => {
                let c = self
                    .user_properties
                    .get(usize::from(k))
                    .map_or_else(Vec::new, |p| p.value.components());
                let at = |i: usize| c.get(i).copied().unwrap_or(0.0);
                DVec3::new(at(0), at(1), at(2))
            }
        }
    }

    /// Sets `property` from `value` (units as [`Material::property`] gives them); a property
    /// that transparency or self-illumination derive from updates them
    /// ([`Material::update_fbx_derived`]). `ShininessExponent` is clamped to 0–100, as the
    /// FBX reader reads the stored value.
    pub fn set_property(&mut self, property: animation::MaterialProperty, value: DVec3) {
        use animation::MaterialProperty::*;
        let c = value.as_vec3();
        let x = c.x;
        match property {
            Ambient => self.ambient = c,
            AmbientFactor => self.ambient_factor = x,
            Diffuse => self.diffuse = c,
            DiffuseFactor => self.diffuse_factor = x,
            Specular => self.specular = c,
            SpecularFactor => self.shininess_strength = x,
            Shininess => self.shininess = (x / 100.0).clamp(0.0, 1.0),
            Emissive => self.emissive = c,
            EmissiveFactor => self.emissive_factor = x,
            TransparentColor => self.transparent = c,
            TransparencyFactor => self.transparency_factor = x,
            Opacity => self.opacity = Some(x),
            User(k) => {
                if let Some(p) = self.user_properties.get_mut(usize::from(k)) {
                    p.value =
                        p.value.with_components(&[Some(value.x), Some(value.y), Some(value.z)]);
                }
            }
        }
        if matches!(
            property,
            Emissive | EmissiveFactor | TransparentColor | TransparencyFactor | Opacity
        ) {
            self.update_fbx_derived();
        }
    }
}

/// What a texture map drives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MapSlot {
    /// Diffuse colour (3DS `MAT_TEXMAP`).
    Diffuse,
    /// Opacity (3DS `MAT_OPACMAP`).
    Opacity,
    /// Bump/normal (3DS `MAT_BUMPMAP`).
    Bump,
    /// Specular colour (3DS `MAT_SPECMAP`).
    Specular,
    /// Shininess (3DS `MAT_SHINMAP`).
    Shininess,
    /// Reflection (3DS `MAT_REFLMAP`).
    Reflection,
    /// Self-illumination / emissive (3DS `MAT_SELFIMAP`).
    Emissive,
}

impl MapSlot {
    /// The slot's name as reports and 3DA material-script comments print it (`Diffuse`,
    /// `Opacity`, `Bump`, `Specular`, `Shininess`, `Reflection`, `Emissive`).
    pub fn name(self) -> &'static str {
        match self {
            MapSlot::Diffuse => "Diffuse",
            MapSlot::Opacity => "Opacity",
            MapSlot::Bump => "Bump",
            MapSlot::Specular => "Specular",
            MapSlot::Shininess => "Shininess",
            MapSlot::Reflection => "Reflection",
            MapSlot::Emissive => "Emissive",
        }
    }
}

/// A texture map of a material.
#[derive(Debug, Clone, PartialEq)]
pub struct TextureMap {
    /// What the map drives.
    pub slot: MapSlot,
    /// The file name as the source stores it (3DS: 8.3 upper case).
    pub file: String,
    /// The file found next to the scene (case-insensitively), when it exists.
    pub resolved: Option<std::path::PathBuf>,
    /// The image's bytes when the source file carries them (FBX `Video` › `Content`), shared
    /// by the maps that use the same image (the glTF reader does not fill this yet). Writers
    /// and the renderer use these bytes before [`resolved`](Self::resolved): they are the
    /// image the file was saved with, whatever lies beside it now.
    pub embedded: Option<std::sync::Arc<[u8]>>,
    /// Map strength 0–1 (3DS `INT_PCT` of the map chunk).
    pub strength: f32,
    /// UV transform of the map.
    pub uv_transform: UvTransform,
    /// The source's map flags as stored (3DS `MAT_MAP_TILING`).
    pub flags: u16,
    /// How the map repeats along U and V, for sources that store it per axis (FBX
    /// `WrapModeU`/`WrapModeV`, glTF sampler `wrapS`/`wrapT`). 3DS sources keep their tiling
    /// in [`flags`](Self::flags) and leave both [`WrapMode::Repeat`]; writers read `flags`
    /// only when both are `Repeat`.
    pub wrap: [WrapMode; 2],
}

/// How a texture map repeats outside 0–1 along one axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WrapMode {
    /// The map tiles (FBX `WrapMode` 0, glTF REPEAT, the default of both).
    #[default]
    Repeat,
    /// The edge texels extend (FBX `WrapMode` 1, glTF CLAMP_TO_EDGE).
    Clamp,
    /// The map tiles mirrored every other repeat (glTF MIRRORED_REPEAT; FBX has no such mode).
    Mirror,
}

/// A texture coordinate transform: `uv' = offset + R(rotation) · (scale · uv)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UvTransform {
    /// U/V scale (3DS `MAT_MAP_USCALE`/`VSCALE`).
    pub scale: Vec2,
    /// U/V offset (3DS `MAT_MAP_UOFFSET`/`VOFFSET`).
    pub offset: Vec2,
    /// Rotation in degrees (3DS `MAT_MAP_ANG`).
    pub rotation_degrees: f32,
}

impl Default for UvTransform {
    fn default() -> Self {
        UvTransform { scale: Vec2::ONE, offset: Vec2::ZERO, rotation_degrees: 0.0 }
    }
}

/// A camera. Its node's world matrix positions it; when `target` is set the camera looks at
/// that node and `roll` turns it about the view axis.
#[derive(Debug, Clone, PartialEq)]
pub struct Camera {
    /// The camera's name.
    pub name: String,
    /// The node the camera looks at (3DS camera target), if any.
    pub target: Option<NodeId>,
    /// Field of view in degrees, measured along `fov_axis` (3DS stores the horizontal FOV).
    pub fov_degrees: f64,
    /// Which dimension `fov_degrees` spans.
    pub fov_axis: FovAxis,
    /// Roll about the view axis in degrees.
    pub roll_degrees: f64,
    /// Near clip distance in scene units (`None`: not stated).
    pub near: Option<f64>,
    /// Far clip distance in scene units (`None`: not stated).
    pub far: Option<f64>,
    /// Width ÷ height of the camera's frustum (the tangents of its half fields of view, or
    /// its orthographic half extents), when the source states it; `fov_degrees` along
    /// `fov_axis` and this give the other axis's field of view. FBX: the film gate fitted to
    /// the render aspect (ufbx `field_of_view_tan.x / .y`).
    pub aspect: Option<f64>,
    /// Perspective or orthographic (FBX `CameraProjectionType`, glTF `camera.type`).
    pub projection: Projection,
}

/// How a [`Camera`] projects the scene onto its image.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum Projection {
    /// Rays through the camera's position; the field of view sets the image's extent.
    #[default]
    Perspective,
    /// Parallel rays along the view axis (FBX `CameraProjectionType` 1, glTF
    /// `orthographic`); the field of view is unused.
    Orthographic {
        /// Half the image's width in scene units (glTF `xmag`; half of ufbx's
        /// `orthographic_size.x`, which is the full width).
        xmag: f64,
        /// Half the image's height in scene units (glTF `ymag`; half of ufbx's
        /// `orthographic_size.y`).
        ymag: f64,
    },
}

impl Camera {
    /// A camera named `name` with a field of view of `fov_degrees` (degrees) along `fov_axis`,
    /// no target, no roll, and no stated clip planes or aspect ratio; set the other fields on
    /// the result (`Camera { target: Some(t), ..Camera::new("Camera01", 45.0, FovAxis::Horizontal) }`).
    pub fn new(name: impl Into<String>, fov_degrees: f64, fov_axis: FovAxis) -> Camera {
        Camera {
            name: name.into(),
            target: None,
            fov_degrees,
            fov_axis,
            roll_degrees: 0.0,
            near: None,
            far: None,
            aspect: None,
            projection: Projection::Perspective,
        }
    }
}

/// The direction a camera's field of view is measured in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FovAxis {
    /// Horizontal (3DS, FBX default).
    Horizontal,
    /// Vertical (glTF `yfov`).
    Vertical,
}

/// A light. Position from its node; direction from `target` (3DS spotlights) or the node's −Z.
#[derive(Debug, Clone, PartialEq)]
pub struct Light {
    /// The light's name.
    pub name: String,
    /// What kind of light.
    pub kind: LightKind,
    /// Colour, linear RGB 0–1.
    pub color: Vec3,
    /// Intensity multiplier (3DS `DL_MULTIPLIER`, FBX `Intensity` ÷ 100), 1 = nominal.
    pub intensity: f64,
    /// Spot hotspot (inner cone) full angle in degrees.
    pub hotspot_degrees: f64,
    /// Spot falloff (outer cone) full angle in degrees.
    pub falloff_degrees: f64,
    /// Attenuation range (inner, outer) in scene units, when enabled.
    pub attenuation: Option<(f64, f64)>,
    /// `false` when the light is switched off (3DS `DL_OFF`).
    pub on: bool,
    /// The node the light aims at (3DS spotlight target), if any.
    pub target: Option<NodeId>,
    /// Spot roll in degrees.
    pub roll_degrees: f64,
}

/// The kind of a [`Light`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LightKind {
    /// Radiates in all directions (3DS omni).
    Point,
    /// A cone (3DS `DL_SPOTLIGHT`).
    Spot,
    /// Parallel rays.
    Directional,
    /// Ambient light.
    Ambient,
}

/// The order in which three Euler rotations apply.
///
/// `Xyz` turns about X first, then Y, then Z, all about the parent's fixed axes — the matrix
/// `Rz · Ry · Rx` for column vectors. This is FBX's `RotationOrder` 0 (`eEulerXYZ`) and 3ds Max's
/// default; the names give the application order, as the FBX SDK's enum does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EulerOrder {
    /// X, then Y, then Z (`Rz·Ry·Rx`). FBX 0.
    #[default]
    Xyz,
    /// X, then Z, then Y (`Ry·Rz·Rx`). FBX 1.
    Xzy,
    /// Y, then Z, then X (`Rx·Rz·Ry`). FBX 2.
    Yzx,
    /// Y, then X, then Z (`Rz·Rx·Ry`). FBX 3.
    Yxz,
    /// Z, then X, then Y (`Ry·Rx·Rz`). FBX 4.
    Zxy,
    /// Z, then Y, then X (`Rx·Ry·Rz`). FBX 5.
    Zyx,
}

impl EulerOrder {
    /// The six orders, in FBX `RotationOrder` order (0–5).
    pub const ALL: [EulerOrder; 6] = [
        EulerOrder::Xyz,
        EulerOrder::Xzy,
        EulerOrder::Yzx,
        EulerOrder::Yxz,
        EulerOrder::Zxy,
        EulerOrder::Zyx,
    ];

    /// The orientation for `angles` (radians about X, Y, Z) applied in this order.
    pub fn to_quat(self, angles: DVec3) -> DQuat {
        let x = DQuat::from_rotation_x(angles.x);
        let y = DQuat::from_rotation_y(angles.y);
        let z = DQuat::from_rotation_z(angles.z);
        match self {
            EulerOrder::Xyz => z * y * x,
            EulerOrder::Xzy => y * z * x,
            EulerOrder::Yzx => x * z * y,
            EulerOrder::Yxz => z * x * y,
            EulerOrder::Zxy => y * x * z,
            EulerOrder::Zyx => x * y * z,
        }
    }

    /// The order for FBX's `RotationOrder` enum value (0–5); 6 (spheric XYZ) and unknown
    /// values read as `Xyz`, as the FBX SDK evaluates them.
    pub fn from_fbx(v: i64) -> EulerOrder {
        usize::try_from(v).ok().and_then(|i| EulerOrder::ALL.get(i)).copied().unwrap_or_default()
    }
}

/// FBX's extra transform parts around rotation and scaling (seed 003, "Model transforms"):
/// the local matrix becomes
/// `T · Roff · Rp · Rpre · R · Rpost⁻¹ · Rp⁻¹ · Soff · Sp · S · Sp⁻¹`.
/// Offsets and pivots are translations in the parent's units; pre/post rotations are
/// orientations (FBX stores them as XYZ Euler degrees, always applied in XYZ order).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pivots {
    /// `RotationOffset`.
    pub rotation_offset: DVec3,
    /// `RotationPivot`.
    pub rotation_pivot: DVec3,
    /// `PreRotation` as a quaternion.
    pub pre_rotation: DQuat,
    /// `PostRotation` as a quaternion (its inverse enters the formula).
    pub post_rotation: DQuat,
    /// `PreRotation` as XYZ Euler degrees, as stored: what animation channels named
    /// `PreRotation|X`, `|Y`, `|Z` replace components of before [`Pivots::pre_rotation`] is
    /// made again from it (see [`crate::anim`]). Zero when the source has no Euler form.
    pub pre_rotation_degrees: DVec3,
    /// `PostRotation` as XYZ Euler degrees, as stored (like `pre_rotation_degrees`).
    pub post_rotation_degrees: DVec3,
    /// `ScalingOffset`.
    pub scaling_offset: DVec3,
    /// `ScalingPivot`.
    pub scaling_pivot: DVec3,
}

impl Default for Pivots {
    fn default() -> Self {
        Pivots {
            rotation_offset: DVec3::ZERO,
            rotation_pivot: DVec3::ZERO,
            pre_rotation: DQuat::IDENTITY,
            post_rotation: DQuat::IDENTITY,
            pre_rotation_degrees: DVec3::ZERO,
            post_rotation_degrees: DVec3::ZERO,
            scaling_offset: DVec3::ZERO,
            scaling_pivot: DVec3::ZERO,
        }
    }
}

impl Pivots {
    /// The local matrix for translation `t`, rotation `r` and scale `s` with these pivots.
    pub fn matrix(&self, t: DVec3, r: DQuat, s: DVec3) -> DMat4 {
        let tr = DMat4::from_translation;
        tr(t + self.rotation_offset + self.rotation_pivot)
            * DMat4::from_quat(self.pre_rotation * r * self.post_rotation.inverse())
            * tr(-self.rotation_pivot + self.scaling_offset + self.scaling_pivot)
            * DMat4::from_scale(s)
            * tr(-self.scaling_pivot)
    }
}

/// How a node inherits its parent's transform (FBX `InheritType`, the FBX SDK's
/// `FbxTransform::EInheritType`; ufbx `ufbxi_read_model` maps them the same way).
///
/// The letters read parent first: upper case is the parent's rotation (R) and scale (S), lower
/// case the child's. FBX stores 0 for `RrSs`, 1 for `RSrs`, 2 for `Rrs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum InheritType {
    /// `eInheritRrSs` (FBX 0): parent rotation, child rotation, then parent scale times child
    /// scale per component, without the shear a plain product would give (ufbx
    /// `UFBX_INHERIT_MODE_COMPONENTWISE_SCALE`).
    RrSs,
    /// `eInheritRSrs` (FBX 1): the parent's full matrix times the child's — the usual case
    /// (Maya's default; 3DS, glTF).
    #[default]
    RSrs,
    /// `eInheritRrs` (FBX 2): the parent's scale is not inherited (Maya's segment scale
    /// compensation).
    Rrs,
}

impl InheritType {
    /// The mode for FBX's `InheritType` value; unknown values read as `RSrs`, the full matrix.
    pub fn from_fbx(v: i64) -> InheritType {
        match v {
            0 => InheritType::RrSs,
            2 => InheritType::Rrs,
            _ => InheritType::RSrs,
        }
    }
}

/// A problem the reader survived. Returned alongside the scene (as ufbx does), never logged.
#[derive(Debug, Clone, PartialEq)]
pub struct Warning {
    /// Byte offset in the file where the problem was found, when it has one.
    pub offset: Option<u64>,
    /// Where in the file's structure (e.g. `MDATA › NAMED_OBJECT "Box01" › FACE_ARRAY`).
    pub place: String,
    /// What was wrong and what the reader did about it.
    pub message: String,
}

impl std::fmt::Display for Warning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.offset {
            Some(o) => write!(f, "{} at byte {:#x}: {}", self.place, o, self.message),
            None => write!(f, "{}: {}", self.place, self.message),
        }
    }
}

/// Why a scene's structure is inconsistent (see [`Scene::validate`]).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SceneError {
    /// An index points past its arena.
    #[error("node {node} ({name}): {what} index {index} is out of range")]
    IndexOutOfRange {
        /// The node holding the index.
        node: NodeId,
        /// The node's name.
        name: String,
        /// Which index.
        what: &'static str,
        /// The bad value.
        index: usize,
    },
    /// Parent and child lists disagree, or the hierarchy has a cycle.
    #[error("node {node} ({name}): {what}")]
    Hierarchy {
        /// The node.
        node: NodeId,
        /// The node's name.
        name: String,
        /// What is inconsistent.
        what: String,
    },
}

impl Scene {
    /// The matrix that re-expresses this scene's world coordinates ([`Metadata::axes`],
    /// [`Metadata::units`]) in the axis system `target` with `metres_per_unit` metres per unit
    /// (`None`: keep the scene's own unit). Pre-multiply world matrices with it
    /// ([`Pose::transform_world`](crate::anim::Pose::transform_world)) to convert a pose's
    /// geometry, as ufbx's `target_axes` / `target_unit_meters` with
    /// `space_conversion = transform-root` do: right, up and front of the scene map to right, up
    /// and front of `target`, and lengths are scaled by `scene metres / target metres` (a
    /// unitless scene counts as metres). A left-/right-handedness change gives a mirroring
    /// matrix (negative determinant). Axis systems whose up and front are parallel (invalid)
    /// are taken as the default Y-up system.
    pub fn axis_unit_conversion(&self, target: AxisSystem, metres_per_unit: Option<f64>) -> DMat4 {
        let from = self.meta.axes.basis().unwrap_or(DMat3::IDENTITY);
        let to = target.basis().unwrap_or(DMat3::IDENTITY);
        let scale = match metres_per_unit {
            Some(m) if m > 0.0 && m.is_finite() => self.meta.units.metres() / m,
            _ => 1.0,
        };
        // from is orthonormal: its inverse is its transpose.
        DMat4::from_mat3(to * from.transpose() * scale)
    }

    /// The stored bind pose named `name` (exact match), if any.
    pub fn bind_pose(&self, name: &str) -> Option<&BindPose> {
        self.bind_poses.iter().find(|p| p.name == name)
    }

    /// Links `child` under `parent` (updating both sides). Does not check for cycles.
    pub fn attach(&mut self, child: NodeId, parent: Option<NodeId>) {
        self.nodes[child].parent = parent;
        match parent {
            Some(p) => self.nodes[p].children.push(child),
            None => self.roots.push(child),
        }
    }

    /// Nodes in depth-first pre-order from the roots (children in stored order).
    pub fn depth_first(&self) -> Vec<NodeId> {
        let mut out = Vec::with_capacity(self.nodes.len());
        let mut stack: Vec<NodeId> = self.roots.iter().rev().copied().collect();
        while let Some(n) = stack.pop() {
            out.push(n);
            stack.extend(self.nodes[n].children.iter().rev().copied());
        }
        out
    }

    /// Checks that every index is in range, parent and child links agree, `roots` holds exactly
    /// the parentless nodes and the hierarchy has no cycle.
    pub fn validate(&self) -> Result<(), SceneError> {
        let n = self.nodes.len();
        let range = |node: NodeId, what: &'static str, index: usize, len: usize| {
            if index >= len {
                Err(SceneError::IndexOutOfRange {
                    node,
                    name: self.nodes[node].name.clone(),
                    what,
                    index,
                })
            } else {
                Ok(())
            }
        };
        let hier = |node: NodeId, what: String| SceneError::Hierarchy {
            node,
            name: self.nodes[node].name.clone(),
            what,
        };
        // How often each node is listed as a child and as a root: one pass over the lists
        // instead of a search of its parent's children (quadratic in a node's child count).
        let mut listed = vec![0u32; n];
        let mut rooted = vec![0u32; n];
        for node in &self.nodes {
            for &c in node.children.iter().filter(|&&c| c < n) {
                listed[c] = listed[c].saturating_add(1);
            }
        }
        for &r in &self.roots {
            if r >= n {
                return Err(SceneError::Hierarchy {
                    node: r,
                    name: "not a node".into(),
                    what: format!("listed as a root, but the scene has {n} nodes"),
                });
            }
            rooted[r] = rooted[r].saturating_add(1);
        }
        for (i, node) in self.nodes.iter().enumerate() {
            if let Some(p) = node.parent {
                range(i, "parent", p, n)?;
                // Every listed child names its parent (checked below), so a child listed
                // anywhere is listed by its parent.
                if listed[i] == 0 {
                    return Err(hier(i, format!("parent {p} does not list it as a child")));
                }
                if rooted[i] > 0 {
                    return Err(hier(i, format!("is a root but has parent {p}")));
                }
            } else if rooted[i] == 0 {
                return Err(hier(i, "has no parent but is not a root".into()));
            }
            if listed[i] > 1 || rooted[i] > 1 {
                return Err(hier(i, "is listed more than once as a child or root".into()));
            }
            for &c in &node.children {
                range(i, "child", c, n)?;
                if self.nodes[c].parent != Some(i) {
                    return Err(hier(i, format!("child {c} names another parent")));
                }
            }
            if let Some(m) = node.mesh {
                range(i, "mesh", m, self.meshes.len())?;
            }
            match node.kind {
                NodeKind::Camera(c) => range(i, "camera", c, self.cameras.len())?,
                NodeKind::Light(l) => range(i, "light", l, self.lights.len())?,
                _ => {}
            }
        }
        if self.depth_first().len() != n {
            return Err(hier(0, "the hierarchy has a cycle or unreachable nodes".into()));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The colour × factor rule of `ufbx_material.fbx` (ufbx.h: "missing factors are set to
    /// `1.0` if a color is defined"; `ufbxi_update_factor`), hand-computed: `DiffuseColor`
    /// (0.5, 0.25, 1) with `DiffuseFactor` 0.8 shows as (0.4, 0.2, 0.8); a source without
    /// factors (3DS, glTF: factor 1) shows its colour; a black colour stays black at any factor.
    #[test]
    fn a_colour_shows_as_colour_times_its_factor() {
        let m = Material {
            diffuse: Vec3::new(0.5, 0.25, 1.0),
            diffuse_factor: 0.8,
            ambient: Vec3::new(0.1, 0.2, 0.3),
            emissive: Vec3::ZERO,
            emissive_factor: 3.0,
            ..Material::default()
        };
        assert!((m.effective_diffuse() - Vec3::new(0.4, 0.2, 0.8)).abs().max_element() < 1e-7);
        assert_eq!(m.effective_ambient(), Vec3::new(0.1, 0.2, 0.3));
        assert_eq!(m.effective_emissive(), Vec3::ZERO);
        assert_eq!(Material::default().effective_diffuse(), Vec3::splat(0.8));
    }
    #[test]
    fn geometry_cache_samples_hold_the_ends_and_blend_between_frames() {
        let frame = |time, x| CacheFrame { time, positions: vec![DVec3::new(x, 0.0, 0.0); 2] };
        let c = GeometryCache {
            frames: vec![frame(1.0, 10.0), frame(2.0, 20.0)],
            ..Default::default()
        };
        assert_eq!(c.sample(0.0, 2).unwrap()[0].x, 10.0);
        assert_eq!(c.sample(3.0, 2).unwrap()[1].x, 20.0);
        // A quarter of the way: 10 + 0.25 · 10 (hand computed).
        assert!((c.sample(1.25, 2).unwrap()[0].x - 12.5).abs() < 1e-12);
        assert_eq!(c.sample(2.0 - 1e-9, 1).unwrap()[0].x, 20.0);
        // Fewer cached points than vertices: no cache at this time.
        assert!(c.sample(1.5, 3).is_none());
        assert!(GeometryCache::default().sample(0.0, 1).is_none());
    }

    #[test]
    fn axis_unit_conversion_maps_up_front_and_units() {
        let mut s = Scene::default();
        s.meta.axes = AxisSystem::Z_UP_RIGHT_HANDED;
        s.meta.units = Units::Metres(0.01);
        let c = s.axis_unit_conversion(AxisSystem::Y_UP_RIGHT_HANDED, Some(1.0));
        assert!(c.transform_point3(DVec3::new(0.0, 0.0, 100.0)).abs_diff_eq(DVec3::Y, 1e-12));
        assert!(c.transform_point3(DVec3::new(0.0, -100.0, 0.0)).abs_diff_eq(DVec3::Z, 1e-12));
        assert!(c.transform_point3(DVec3::new(100.0, 0.0, 0.0)).abs_diff_eq(DVec3::X, 1e-12));
        // Keeping the unit, same axes: identity.
        assert_eq!(s.axis_unit_conversion(AxisSystem::Z_UP_RIGHT_HANDED, None), DMat4::IDENTITY);
        // Handedness change mirrors.
        let left = AxisSystem { right_handed: false, ..AxisSystem::Z_UP_RIGHT_HANDED };
        assert!(s.axis_unit_conversion(left, None).determinant() < 0.0);
    }

    fn chain(len: usize) -> Scene {
        let mut s = Scene::default();
        for i in 0..len {
            s.nodes.push(Node::new(format!("n{i}"), NodeKind::Null));
            s.attach(i, i.checked_sub(1));
        }
        s
    }

    #[test]
    fn depth_first_visits_parent_before_children() {
        let s = chain(4);
        assert_eq!(s.depth_first(), vec![0, 1, 2, 3]);
        assert!(s.validate().is_ok());
    }

    #[test]
    fn validate_rejects_roots_and_children_listed_twice_or_out_of_range() {
        let mut s = chain(3);
        s.nodes[0].children.push(1);
        assert!(s.validate().unwrap_err().to_string().contains("more than once"));
        let mut s = chain(3);
        s.roots.push(1);
        assert!(s.validate().unwrap_err().to_string().contains("is a root but has parent 0"));
        let mut s = chain(3);
        s.roots.push(3);
        let e = s.validate().unwrap_err().to_string();
        assert_eq!(e, "node 3 (not a node): listed as a root, but the scene has 3 nodes");
    }

    #[test]
    fn validate_rejects_a_parent_cycle() {
        let mut s = chain(3);
        // 0 -> 1 -> 2 -> 0: no root reaches anything.
        s.roots.clear();
        s.nodes[0].parent = Some(2);
        s.nodes[2].children.push(0);
        assert!(s.validate().is_err());
    }

    #[test]
    fn euler_xyz_turns_about_x_first_then_z() {
        let q = EulerOrder::Xyz.to_quat(DVec3::new(90f64.to_radians(), 0.0, 90f64.to_radians()));
        // X first: +Y goes to +Z, which the Z turn keeps; +X stays, then Z turns it to +Y.
        assert!((q * DVec3::Y - DVec3::Z).length() < 1e-12);
        assert!((q * DVec3::X - DVec3::Y).length() < 1e-12);
        // Z first (ZYX reversed: Zxy applies Z, X, Y): +X goes to +Y, then X turns it to +Z.
        let q = EulerOrder::Zxy.to_quat(DVec3::new(90f64.to_radians(), 0.0, 90f64.to_radians()));
        assert!((q * DVec3::X - DVec3::Z).length() < 1e-12);
    }

    #[test]
    fn rotation_pivot_turns_about_the_pivot_point() {
        let pv = Pivots { rotation_pivot: DVec3::X, ..Pivots::default() };
        let m = pv.matrix(DVec3::ZERO, DQuat::from_rotation_z(std::f64::consts::PI), DVec3::ONE);
        // The origin, half a turn about (1,0,0), lands at (2,0,0).
        assert!((m.transform_point3(DVec3::ZERO) - DVec3::new(2.0, 0.0, 0.0)).length() < 1e-12);
    }

    #[test]
    fn transform_matrix_is_translate_rotate_scale() {
        let t = Transform {
            translation: DVec3::new(1.0, 2.0, 3.0),
            rotation: DQuat::from_rotation_z(std::f64::consts::FRAC_PI_2),
            scale: DVec3::new(2.0, 2.0, 2.0),
        };
        // (1,0,0) scaled to (2,0,0), turned 90° about Z to (0,2,0), moved to (1,4,3).
        let p = t.matrix().transform_point3(DVec3::X);
        assert!((p - DVec3::new(1.0, 4.0, 3.0)).length() < 1e-12);
    }
}

/// Meshes the unit tests of several modules build on.
#[cfg(test)]
pub(crate) mod test_meshes {
    use super::Mesh;
    use glam::DVec3;

    /// A `k × k` grid of unit quads in the XY plane at height `z`, with a concave L-shaped
    /// hexagon appended (so the ear clipper runs too).
    pub(crate) fn grid_mesh(name: &str, k: u32, z: f64) -> Mesh {
        let mut m = Mesh { name: name.into(), ..Mesh::default() };
        for y in 0..=k {
            for x in 0..=k {
                m.positions.push(DVec3::new(f64::from(x), f64::from(y), z));
            }
        }
        let at = |x: u32, y: u32| y * (k + 1) + x;
        m.polygon_starts.push(0);
        for y in 0..k {
            for x in 0..k {
                m.corner_vertices.extend([at(x, y), at(x + 1, y), at(x + 1, y + 1), at(x, y + 1)]);
                m.polygon_starts.push(m.corner_vertices.len() as u32);
            }
        }
        // L: (0,0) (2,0) (2,1) (1,1) (1,2) (0,2) of the grid.
        m.corner_vertices.extend([at(0, 0), at(2, 0), at(2, 1), at(1, 1), at(1, 2), at(0, 2)]);
        m.polygon_starts.push(m.corner_vertices.len() as u32);
        m
    }
}

#[cfg(test)]
mod size_tests {
    /// The size [`super::Node`]'s docs state.
    #[test]
    fn node_is_272_bytes() {
        assert_eq!(std::mem::size_of::<super::Node>(), 272);
    }
}

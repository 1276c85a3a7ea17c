//! FBX object graph → [`Scene`]: the only part of the FBX reader that knows the scene model.
//!
//! What becomes what (seed 003, "Objects", "Model transforms", "Geometry", "Deformers"):
//!
//! - Every `Model` object is a [`Node`], in file order: `Mesh` models with a geometry become
//!   [`NodeKind::Mesh`], `LimbNode`/`Limb`/`Root` bones, `Camera`/`Light` models cameras and
//!   lights (data from the connected `NodeAttribute`, or the model itself in FBX 6), everything
//!   else (`Null`, `CameraSwitcher`, unknown) a [`NodeKind::Null`]. A node's parent is the
//!   first `Model` it is connected to; a parent chain that loops back is cut at the node that
//!   closes the loop (a [`Warning`]), which becomes a root.
//! - Transforms follow ufbx `ufbxi_get_transform`: `Lcl Translation`, `Lcl Rotation` (Euler
//!   degrees) and `Lcl Scaling` become [`Node::transform`]; offsets, pivots and pre/post
//!   rotation become [`Pivots`]. The rotation order and pre/post rotation apply only when the
//!   node "uses its rotation space": `RotationActive` (default 1) is non-zero and
//!   `RotationSpaceForLimitOnly` (default 0) is zero, as the FBX SDK and ufbx ≥ 0.23 read them;
//!   otherwise the rotation is XYZ and pre/post rotation are ignored ([`rotation_setup`]).
//!   `InheritType` → [`InheritType::from_fbx`]; `GeometricTranslation/Rotation/Scaling` →
//!   [`Node::geometry_transform`] = `T · R(XYZ) · S`; `Visibility` 0 → [`Node::hidden`].
//! - **Instances**: models connected to one `Geometry` with the same materials show one
//!   [`Mesh`] (several nodes with the same [`Node::mesh`], ufbx `ufbx_mesh::instances`); a
//!   model with other materials gets its own copy, as materials live on the mesh
//!   (`Importer::instance`).
//! - Each mesh is built from its `Geometry` (FBX 7) or its model's own record
//!   (FBX 6 and 5; FBX 5 keeps `Normals` there, per vertex or per corner by count, one UV set
//!   as `GeometryUVInfo`, and `MaterialAssignation`/`Materials` in place of the layer
//!   elements, as ufbx `ufbxi_read_legacy_mesh` reads them): `Vertices`, `PolygonVertexIndex` (a negative index `i` ends a polygon at vertex
//!   `-i - 1`; indices past the vertex list are clamped to the last vertex, as ufbx does by
//!   default, with a warning), layer elements with every mapping and reference type
//!   ([`Mapping`]): the first `LayerElementNormal`, every `LayerElementUV`, the first
//!   `LayerElementColor`, the `LayerElementTangent` and `LayerElementBinormal` the `Layer`
//!   records bind to the first UV set (`bound_to_first_uv_set`),
//!   `LayerElementSmoothing` (per polygon only: Maya's per-edge hard/soft
//!   flags have no place in the model) and `LayerElementMaterial`. **UV sets** are in file
//!   order except that the model's `currentUVSet` comes first, so writers that show one set
//!   show the one the authoring tool showed. Material slots are the `Material` objects
//!   connected to the model, in connection order.
//! - Deformers: `Skin` → `Cluster`s → bone models become a [`Skin`] (per-vertex influences
//!   from `Indexes`/`Weights`, [`SkinJoint::inverse_bind`] = `Transform`, which files store as
//!   `TransformLink⁻¹ · mesh world at bind`, as ufbx reads it);
//!   `BlendShape` → `BlendShapeChannel` → `Shape` geometry becomes one [`MorphTarget`] per
//!   channel (position deltas per base vertex from the channel's heaviest shape by
//!   `FullWeights`, the other shapes as [`MorphTarget::inbetweens`]; weight
//!   `DeformPercent / 100`). FBX 6 keeps its shapes as `Shape` records inside the mesh model,
//!   weighted by the model property of the same name.
//! - Materials: colours and factors kept apart as stored ([`Material`], "Colours and
//!   factors": `DiffuseColor` and `DiffuseFactor`, `AmbientColor` and `AmbientFactor`,
//!   `EmissiveColor` and `EmissiveFactor`, `TransparentColor` and `TransparencyFactor`,
//!   `Opacity`; a missing factor is 1), specular = `SpecularColor` with strength
//!   `SpecularFactor`, shininess = `ShininessExponent / 100`; transparency and
//!   self-illumination derived by [`Material::update_fbx_derived`]; FBX 6's
//!   `Diffuse`/`Ambient`/`Specular`/`Emissive` where the newer names are missing. Animated
//!   material properties become [`Scene::material_channels`] (the FBX animation module). Their textures (`Texture` objects connected to a material property,
//!   file names from the texture or its `Video`, `WrapModeU`/`WrapModeV` as
//!   [`TextureMap::wrap`], the image bytes from the first connected `Video` with a
//!   `Content` as [`TextureMap::embedded`], decoded by [`super::media`]; a `Content` that
//!   does not decode is a warning and the map keeps its file name only). FBX 6 textures
//!   named per polygon by the geometry's `LayerElementTexture` / `LayerElement…Textures`
//!   go to the polygons' materials as ufbx patches them (`Importer::legacy_textures`).
//! - Cameras: field of view per `ApertureMode` (ufbx `ufbxi_update_camera`; focal-length
//!   cameras through the film gate as `GateFit` fits it to the render aspect), clip planes,
//!   aspect `AspectWidth / AspectHeight`. Lights: `LightType`, `Color`, `Intensity ÷ 100`,
//!   `InnerAngle`/`OuterAngle` (older `HotSpot`/`Cone angle`) in degrees.
//! - [`Metadata`]: format `fbx`, version, axes and units from `GlobalSettings`, frame rate from
//!   `TimeMode`, frame range from `TimeSpanStart/Stop`.
//!
//! Animation is read by the FBX animation module from the same graph, with the ids in
//! [`ImportIds`].

use glam::{DMat4, DVec3, Vec2, Vec3, Vec4};

use super::objects::{ConnectionKind, IdMap, Object, ObjectGraph, ObjectProps, PropCache};
use super::tree::{NodeRef, Property};
use crate::io::ReadOptions;
use crate::quoting::quoted;
use crate::scene::{
    Attribute, Axis, AxisSystem, CacheFrame, Camera, EulerOrder, FovAxis, GeometryCache,
    InheritType, Light, LightKind, MapSlot, Mapping, Material, Mesh, Metadata, MorphTarget, Node,
    NodeKind, Pivots, Scene, Skin, SkinJoint, TextureMap, Transform, Units, UvSet, UvTransform,
    Warning, WrapMode,
};

/// Reads an FBX file (binary or ASCII) into a scene and the problems survived.
///
/// A file that ends before its `Objects` record is an error, one that ends before its
/// `Connections` a warning ([`super::check_complete`]). A zlib array whose stream is corrupt or
/// inflates to another size than declared is an error ([`super::ErrorKind::Inflate`],
/// [`super::ErrorKind::InflatedSize`]) at the array's byte offset and record path, whether or
/// not the import reads it ([`super::Document::check_arrays`]).
pub fn read(bytes: &[u8], opts: &ReadOptions) -> Result<(Scene, Vec<Warning>), super::Error> {
    let mut doc = super::parse(bytes, &opts.limits)?;
    super::check_complete(&mut doc, bytes.len() as u64)?;
    let graph = ObjectGraph::new(&doc)?;
    let (scene, warnings, _) = import(&graph, opts);
    // Zlib arrays are inflated as the import reads them: a corrupt one fails the load here,
    // the first one read, else the first in the file among those the import did not read.
    doc.check_arrays()?;
    Ok((scene, warnings))
}

use super::shared::rotation_setup_with;
pub use super::shared::{rotation_setup, ImportIds, RotationSetup};

/// A stored bind pose; lives in the scene model ([`Scene::bind_poses`]).
pub use crate::scene::BindPose;

/// What a model's transform properties give its node (`Importer::transform`).
#[derive(Clone, Copy)]
struct NodeTransform {
    lcl_rotation: DVec3,
    transform: Transform,
    pivots: Option<Pivots>,
    inherit: InheritType,
    geometry: DMat4,
    hidden: bool,
}

impl NodeTransform {
    fn apply(&self, node: &mut Node) {
        node.source.fbx_lcl_rotation = Some(Box::new(self.lcl_rotation));
        node.transform = self.transform;
        node.pivots = self.pivots.map(Box::new);
        node.inherit = self.inherit;
        node.set_geometry_transform(self.geometry);
        node.hidden = self.hidden;
    }
}

/// The model properties [`Importer::transform`] reads, in the order of the `T_*` indices.
const TRANSFORM_PROPS: [&str; 17] = [
    "Lcl Translation",
    "Lcl Rotation",
    "Lcl Scaling",
    "RotationOffset",
    "RotationPivot",
    "PreRotation",
    "PostRotation",
    "ScalingOffset",
    "ScalingPivot",
    "InheritType",
    "GeometricTranslation",
    "GeometricRotation",
    "GeometricScaling",
    "Visibility",
    "RotationActive",
    "RotationSpaceForLimitOnly",
    "RotationOrder",
];

/// `TRANSFORM_PROPS` index of `name` (compile time).
const fn t(name: &str) -> usize {
    let mut i = 0;
    while i < TRANSFORM_PROPS.len() {
        let (a, b) = (TRANSFORM_PROPS[i].as_bytes(), name.as_bytes());
        if a.len() == b.len() {
            let mut k = 0;
            while k < a.len() && a[k] == b[k] {
                k += 1;
            }
            if k == a.len() {
                return i;
            }
        }
        i += 1;
    }
    panic!("not a transform property")
}

/// Builds the scene from `graph`. Returns the scene, the warnings (the parser's and the
/// graph's included) and which object became which element.
pub fn import(graph: &ObjectGraph<'_, '_>, opts: &ReadOptions) -> (Scene, Vec<Warning>, ImportIds) {
    let mut im = Importer {
        graph,
        opts,
        scene: Scene::default(),
        warnings: Vec::new(),
        ids: ImportIds::default(),
        budget: opts.limits.max_elements,
        pending: Vec::new(),
        caches: Vec::new(),
        videos: IdMap::default(),
        textured: Vec::new(),
        instances: std::collections::HashMap::new(),
    };
    for w in &graph.doc.warnings {
        im.warnings.push(Warning { offset: None, place: "fbx".into(), message: w.to_string() });
    }
    for w in &graph.warnings {
        im.warnings.push(Warning {
            offset: Some(w.offset),
            place: "Objects".into(),
            message: w.message.clone(),
        });
    }
    im.metadata();
    im.materials();
    im.models();
    im.bind_poses();
    im.hierarchy();
    super::animation::import(graph, &im.ids, &mut im.scene, &mut im.warnings);
    (im.scene, im.warnings, im.ids)
}

struct Importer<'g, 'd, 'a> {
    graph: &'g ObjectGraph<'d, 'a>,
    opts: &'g ReadOptions,
    scene: Scene,
    warnings: Vec<Warning>,
    ids: ImportIds,
    /// Elements left to allocate for data the file can multiply (mesh copies per model,
    /// per-corner layer indices, morph deltas per channel); see [`Importer::charge`].
    budget: u64,
    /// Skin joints whose bone node is resolved once every model is a node:
    /// (skin index, joint index, bone model id).
    pending: Vec<(usize, usize, i64)>,
    /// Geometry cache files loaded so far (several deformers name one file): the file as the
    /// FBX names it (`CacheFileName`) → its channels, `None` when it could not be read.
    caches: Vec<(String, Option<(std::path::PathBuf, super::cache::Cache)>)>,
    /// `Video` object id → its decoded `Content` ([`super::media`]), once per video.
    videos: IdMap<Option<std::sync::Arc<[u8]>>>,
    /// Per scene material: whether it has textures already (connected to it, or patched from
    /// an FBX 6 mesh's texture layers), which keeps later texture layers off it
    /// ([`Importer::legacy_textures`]).
    textured: Vec<bool>,
    /// (`Geometry` object id, material slots) → the scene mesh made of it
    /// ([`Importer::instance`]).
    instances: std::collections::HashMap<(i64, Vec<Option<usize>>), usize>,
}

fn deg(v: [f64; 3]) -> DVec3 {
    DVec3::from(v) * (std::f64::consts::PI / 180.0)
}

fn axis(index: i64, sign: i64) -> Option<Axis> {
    Some(match (index, sign >= 0) {
        (0, true) => Axis::PosX,
        (0, false) => Axis::NegX,
        (1, true) => Axis::PosY,
        (1, false) => Axis::NegY,
        (2, true) => Axis::PosZ,
        (2, false) => Axis::NegZ,
        _ => return None,
    })
}

fn axis_vec(a: Axis) -> DVec3 {
    match a {
        Axis::PosX => DVec3::X,
        Axis::NegX => -DVec3::X,
        Axis::PosY => DVec3::Y,
        Axis::NegY => -DVec3::Y,
        Axis::PosZ => DVec3::Z,
        Axis::NegZ => -DVec3::Z,
    }
}

/// All numbers of a record's values: one array, or (FBX 6 ASCII) a list of scalars. An array
/// that does not inflate reads as empty, its error kept for the end of the load
/// ([`NodeRef::decoded`]).
fn numbers_f64(node: NodeRef<'_, '_>) -> Vec<f64> {
    match node.properties() {
        [Property::Array(a)] => node.decoded(a.to_f64_vec()),
        list => list.iter().filter_map(Property::as_f64).collect(),
    }
}

fn numbers_i64(node: NodeRef<'_, '_>) -> Vec<i64> {
    match node.properties() {
        [Property::Array(a)] => node.decoded(a.to_i64_vec()),
        list => list
            .iter()
            .filter_map(|p| p.as_i64().or_else(|| p.as_f64().map(|f| f as i64)))
            .collect(),
    }
}

/// How many numbers [`numbers_i64`] would read from the first child called `name`, without
/// reading them (a zlib array is not inflated for it).
fn child_count(node: NodeRef<'_, '_>, name: &str) -> usize {
    node.child(name).map_or(0, |c| match c.properties() {
        [Property::Array(a)] => a.len(),
        list => list.iter().filter(|p| p.as_i64().is_some() || p.as_f64().is_some()).count(),
    })
}

fn child_f64(node: NodeRef<'_, '_>, name: &str) -> Vec<f64> {
    node.child(name).map(numbers_f64).unwrap_or_default()
}

fn child_i64(node: NodeRef<'_, '_>, name: &str) -> Vec<i64> {
    node.child(name).map(numbers_i64).unwrap_or_default()
}

fn child_str<'d>(node: NodeRef<'d, '_>, name: &str) -> &'d str {
    node.child(name).and_then(|n| n.property(0)).and_then(Property::as_str).unwrap_or("")
}

/// [`child_str`] for names that need not be UTF-8 (file names written in a legacy code page):
/// each byte that does not start a valid UTF-8 sequence, and each NUL, becomes U+FFFD, as
/// ufbx's default `UFBX_UNICODE_ERROR_HANDLING_REPLACEMENT_CHARACTER` makes them
/// (`ufbxi_push_sanitized_string_entry`), so file names compare equal with ufbx's.
fn child_str_lossy(node: NodeRef<'_, '_>, name: &str) -> String {
    let bytes = node.child(name).and_then(|n| n.property(0)).and_then(|p| p.as_bytes());
    utf8_per_byte(bytes.unwrap_or(&[]))
}

/// `bytes` as UTF-8, every byte that does not start a valid sequence (and every NUL)
/// replaced by U+FFFD, one per byte ([`child_str_lossy`]).
fn utf8_per_byte(mut bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    loop {
        match std::str::from_utf8(bytes) {
            Ok(s) => {
                out.push_str(s);
                break;
            }
            Err(e) => {
                let (good, rest) = bytes.split_at(e.valid_up_to());
                out.push_str(std::str::from_utf8(good).unwrap_or_default());
                out.push('\u{FFFD}');
                bytes = rest.get(1..).unwrap_or(&[]);
            }
        }
    }
    out.replace('\0', "\u{FFFD}")
}

/// A 4×4 matrix record (16 numbers, columns first as FBX stores them).
fn child_matrix(node: NodeRef<'_, '_>, name: &str) -> Option<DMat4> {
    let v = child_f64(node, name);
    let a: [f64; 16] = v.get(..16)?.try_into().ok()?;
    a.iter().all(|x| x.is_finite()).then(|| DMat4::from_cols_array(&a))
}

/// Whether `creator` (the header's `Creator`) names Blender's binary FBX exporter, by ufbx's
/// rule (`ufbxi_match_exporter`): case-insensitive `blender`, then past two `-` a version
/// `a.b.c` (`Blender (stable FBX IO) - 2.79 (sub 0) - 3.7.13`), or past one `-` a version
/// `a.b`. That exporter writes a shape's per-vertex weights (percent) as its channel's
/// `FullWeights` (ufbx `blender_full_weights`).
pub fn blender_binary_exporter(creator: &str) -> bool {
    let b = creator.as_bytes();
    if b.len() < 7 || !b[..7].eq_ignore_ascii_case(b"blender") {
        return false;
    }
    // Past the next `-` from `pos`, or `None` when there is none.
    let past_dash = |pos: usize| b[pos..].iter().position(|&c| c == b'-').map(|k| pos + k + 1);
    // A version of `parts` dot-separated numbers after optional blanks at `pos`.
    let version = |mut pos: usize, parts: usize| {
        while b.get(pos).is_some_and(|&c| c == b' ' || c == b'\t') {
            pos += 1;
        }
        for part in 0..parts {
            if part > 0 {
                if b.get(pos) != Some(&b'.') {
                    return false;
                }
                pos += 1;
            }
            let digits = b[pos.min(b.len())..].iter().take_while(|c| c.is_ascii_digit()).count();
            if digits == 0 {
                return false;
            }
            pos += digits;
        }
        true
    };
    let two = past_dash(7).and_then(past_dash).is_some_and(|p| version(p, 3));
    two || past_dash(7).is_some_and(|p| version(p, 2))
}

/// Per-vertex weights (0–1, one per base vertex of `n`) of shape record `shape` from
/// Blender's `FullWeights` (percent, one per `Indexes` entry); empty when the counts differ,
/// as ufbx then ignores them. Vertices the shape does not list weigh 1 (they have no offset).
fn shape_vertex_weights(shape: NodeRef<'_, '_>, full: &[f64], n: usize) -> Vec<f64> {
    let indexes = child_i64(shape, "Indexes");
    if indexes.len() != full.len() {
        return Vec::new();
    }
    let mut weights = vec![1.0; n];
    for (&i, &w) in indexes.iter().zip(full) {
        if let Some(slot) = usize::try_from(i).ok().and_then(|i| weights.get_mut(i)) {
            *slot = if w.is_finite() { w / 100.0 } else { 0.0 };
        }
    }
    weights
}

/// The tangent or binormal layer element (`kind`) that goes with a mesh's first
/// UV set, as ufbx binds them (`ufbxi_read_mesh`, "Connect bitangents/tangents to UV sets"):
/// the UV set is the `LayerElementUV` of lowest index; a `Layer` whose `LayerElement` entries
/// (`Type`, `TypedIndex`) name that UV set binds it to the `kind` element of the `TypedIndex`
/// it names (the last such entry of the last such `Layer` wins), whatever order the elements
/// are stored in. A geometry with no `Layer` entries at all (hand-written files) takes the
/// `kind` element of lowest index; one whose `Layer`s bind none to the first UV set has none
/// (ufbx: `vertex_tangent.exists` is false). An element without its data is still returned,
/// so that the caller reports it.
fn bound_to_first_uv_set<'d, 'a>(geo: NodeRef<'d, 'a>, kind: &str) -> Option<NodeRef<'d, 'a>> {
    let index = |c: &NodeRef<'_, '_>| c.property(0).and_then(Property::as_i64).unwrap_or(0);
    let of_kind = |k: Option<i64>| {
        geo.children()
            .filter(|c| c.name() == kind)
            .filter(|c| k.is_none_or(|k| index(c) == k))
            .min_by_key(index)
    };
    let layers: Vec<NodeRef<'d, 'a>> = geo.children().filter(|c| c.name() == "Layer").collect();
    if layers.is_empty() {
        return of_kind(None);
    }
    let uv = geo
        .children()
        .filter(|c| c.name() == "LayerElementUV" && c.child("UV").is_some())
        .map(|c| index(&c))
        .min()?;
    let entries = |l: NodeRef<'d, 'a>| {
        l.children().filter(|c| c.name() == "LayerElement").filter_map(|c| {
            let k = c.child("TypedIndex")?.property(0)?.as_i64()?;
            Some((child_str(c, "Type"), k))
        })
    };
    let layer = layers.iter().rev().find(|&&l| entries(l).any(|e| e == ("LayerElementUV", uv)))?;
    let k = entries(*layer).filter(|e| e.0 == kind).last()?.1;
    of_kind(Some(k))
}

/// The texture slot of a material property a texture is connected to (FBX 7 names, and the
/// FBX 6 names of `LayerElement<Property>Textures`); `None` for properties no slot carries.
fn map_slot(prop: &str) -> Option<MapSlot> {
    Some(match prop {
        "DiffuseColor" | "Diffuse" => MapSlot::Diffuse,
        "TransparentColor" | "Transparent" | "TransparencyFactor" | "Opacity" => MapSlot::Opacity,
        "Bump" | "NormalMap" | "BumpFactor" => MapSlot::Bump,
        "SpecularColor" | "Specular" | "SpecularFactor" => MapSlot::Specular,
        "ShininessExponent" | "Shininess" => MapSlot::Shininess,
        "ReflectionColor" | "Reflection" | "ReflectionFactor" => MapSlot::Reflection,
        "EmissiveColor" | "Emissive" | "EmissiveFactor" => MapSlot::Emissive,
        _ => return None,
    })
}

/// Per-corner facts a layer element mapping needs.
struct Topology {
    corner_vertex: Vec<u32>,
    corner_polygon: Vec<u32>,
    polygon_count: usize,
}

impl<'g, 'd, 'a> Importer<'g, 'd, 'a> {
    /// Takes `n` elements from the budget ([`Limits::max_elements`](crate::limits::Limits)
    /// for everything the importer allocates beyond the file's own arrays); `false` when they
    /// are not left.
    fn charge(&mut self, n: u64) -> bool {
        match self.budget.checked_sub(n) {
            Some(left) => {
                self.budget = left;
                true
            }
            None => false,
        }
    }

    fn warn(&mut self, node: Option<NodeRef<'_, '_>>, place: &str, message: impl Into<String>) {
        self.warnings.push(Warning {
            offset: node.map(|n| n.offset()),
            place: place.into(),
            message: message.into(),
        });
    }

    fn metadata(&mut self) {
        let s = &self.graph.settings;
        let doc = self.graph.doc;
        let up = axis(s.up_axis, s.up_axis_sign).unwrap_or(Axis::PosY);
        let front = axis(s.front_axis, s.front_axis_sign).unwrap_or(Axis::PosZ);
        let right = axis(s.coord_axis, s.coord_axis_sign).unwrap_or(Axis::PosX);
        let fps = s.frame_rate();
        let mut properties = Vec::new();
        if let Some(c) =
            doc.find(&["FBXHeaderExtension", "Creator"]).or_else(|| doc.root("Creator"))
        {
            if let Some(t) = c.property(0).and_then(Property::as_str) {
                properties.push(("creator".to_string(), t.to_string()));
            }
        }
        // How the file is stored (issue 17 §3: `inspect` shows encoding and byte order).
        let encoding = match (doc.encoding, doc.big_endian) {
            (super::Encoding::Ascii, _) => "ASCII",
            (super::Encoding::Binary, false) => "binary, little-endian",
            (super::Encoding::Binary, true) => "binary, big-endian",
        };
        properties.push(("encoding".into(), encoding.into()));
        properties.push(("unit_scale_factor".into(), s.unit_scale_factor.to_string()));
        properties
            .push(("original_unit_scale_factor".into(), s.original_unit_scale_factor.to_string()));
        properties.push(("ktime_per_second".into(), s.ktime_per_second.to_string()));
        self.scene.meta = Metadata {
            format: "fbx".into(),
            version: Some(doc.version),
            units: Units::Metres(s.unit_scale_factor / 100.0),
            axes: AxisSystem {
                up,
                front,
                right_handed: axis_vec(right).cross(axis_vec(up)).dot(axis_vec(front)) > 0.0,
            },
            frame_rate: Some(fps),
            frame_range: (s.present && s.time_span_stop >= s.time_span_start).then(|| {
                let k = s.ktime_per_second;
                let f = |t| super::animation::ktime_to_frames(t, k, fps);
                (f(s.time_span_start), f(s.time_span_stop))
            }),
            properties,
        };
    }

    fn materials(&mut self) {
        let g = self.graph;
        for obj in g.objects().iter().filter(|o| o.class == "Material") {
            let id = obj.id;
            // Values that cannot be right (a decimal-comma exporter's 588235300000000 for
            // 0.5882353, inf/NaN): kept, with a warning naming the property.
            let insane = std::cell::RefCell::new(Vec::<String>::new());
            let check = |name: &str, v: &[f64]| {
                if v.iter().any(|x| !(x.abs() <= SANE_COLOR_LIMIT)) {
                    let shown: Vec<String> = v.iter().map(|x| x.to_string()).collect();
                    insane.borrow_mut().push(format!("{name} {}", shown.join(", ")));
                }
            };
            // A colour property, or its FBX 6 legacy name (the newer name wins where both are
            // stored, as in ufbx's material map table, which reads `Diffuse` then
            // `DiffuseColor`).
            let color = |name: &str, legacy: &str, def: [f64; 3]| {
                let (used, v) = match g.prop(id, name).and_then(|p| p.vec3()) {
                    Some(v) => (name, v),
                    None => match g.prop(id, legacy).and_then(|p| p.vec3()) {
                        Some(v) => (legacy, v),
                        None => (name, def),
                    },
                };
                check(used, &v);
                Vec3::new(v[0] as f32, v[1] as f32, v[2] as f32)
            };
            // A factor as stored, or its older name (a non-finite one reads as the default 1,
            // with a warning).
            let factor = |name: &str, legacy: &str| {
                let name = if g.prop(id, name).is_none() && g.prop(id, legacy).is_some() {
                    legacy
                } else {
                    name
                };
                if let Some(raw) = g.prop_values(id, name).and_then(|v| v.first()?.as_f64()) {
                    check(name, &[raw]);
                }
                g.get_f64(id, name, 1.0) as f32
            };
            let opacity = g.prop(id, "Opacity").and_then(|p| p.f64()).filter(|o| o.is_finite());
            let mut m = Material {
                name: obj.name.to_string(),
                ambient: color("AmbientColor", "Ambient", [0.0; 3]),
                ambient_factor: factor("AmbientFactor", "AmbientFactor"),
                diffuse: color("DiffuseColor", "Diffuse", [0.8; 3]),
                diffuse_factor: factor("DiffuseFactor", "DiffuseFactor"),
                specular: color("SpecularColor", "Specular", [0.0; 3]),
                shininess: (g.get_f64(id, "ShininessExponent", g.get_f64(id, "Shininess", 0.0))
                    / 100.0)
                    .clamp(0.0, 1.0) as f32,
                shininess_strength: g.get_f64(id, "SpecularFactor", 0.0) as f32,
                emissive: color("EmissiveColor", "Emissive", [0.0; 3]),
                emissive_factor: factor("EmissiveFactor", "EmissiveFactor"),
                transparent: color("TransparentColor", "Transparent", [0.0; 3]),
                transparency_factor: factor("TransparencyFactor", "TransparentFactor"),
                opacity: opacity.map(|o| o as f32),
                ..Material::default()
            };
            m.update_fbx_derived();
            let place = format!("Objects › Material \"{}\"", obj.name);
            let insane = insane.into_inner();
            if !insane.is_empty() {
                self.warn(
                    Some(obj.node),
                    &place,
                    format!(
                        "{}: outside ±{SANE_COLOR_LIMIT} (decimal commas? inf/NaN?); kept as read, \
                         writers clamp colours to 0..1",
                        insane.join("; ")
                    ),
                );
            }
            let mut diffuse_color_maps = 0;
            for c in g.children(id).filter(|c| c.kind == ConnectionKind::ObjectProperty) {
                let Some(tex) = g.object(c.child).filter(|o| o.class == "Texture") else {
                    continue;
                };
                let prop = c.parent_prop().unwrap_or("");
                let Some(slot) = map_slot(prop) else { continue };
                let map = self.texture_map(tex, slot);
                // ufbx's `ufbx_material.fbx.diffuse_color` looks up `Diffuse`, then
                // `DiffuseColor` (the later one wins): a `DiffuseColor` texture goes before
                // the `Diffuse` ones. Among themselves they keep the connection order, as
                // ufbx's `ufbx_find_prop_texture` (a stable sort by property name, then the
                // first match) makes the first connected one the property's texture.
                let at = if prop == "DiffuseColor" {
                    let first = m.maps.iter().position(|t| t.slot == MapSlot::Diffuse);
                    diffuse_color_maps += 1;
                    first.map_or(m.maps.len(), |f| f + diffuse_color_maps - 1)
                } else {
                    m.maps.len()
                };
                m.maps.insert(at, map);
            }
            // ufbx `ufbxi_fetch_textures`: any texture connected to the material with no
            // source property, on any of its properties or none.
            let textured = g
                .children(id)
                .filter(|c| c.kind != ConnectionKind::PropertyProperty)
                .filter_map(|c| g.object(c.child))
                .any(|o| o.class == "Texture" || o.class == "LayeredTexture");
            self.ids.materials.insert(id, self.scene.materials.len());
            self.scene.materials.push(m);
            self.textured.push(textured);
        }
    }

    /// The texture map `tex` makes in `slot`: its file ([`Importer::texture_file`]), that file
    /// found next to the scene, its embedded image and its wrap modes.
    fn texture_map(&mut self, tex: &Object<'_, '_>, slot: MapSlot) -> TextureMap {
        let g = self.graph;
        let file = self.texture_file(tex);
        let resolved = self.resolve(&file);
        let embedded = self.texture_content(tex);
        // `WrapModeU`/`WrapModeV`: 0 repeat (the default), 1 clamp (ufbx
        // `ufbxi_read_texture`), a property or, in older files, a record of the
        // texture; other values are not defined and read as repeat.
        let wrap = |name: &str| {
            let record = || tex.node.child(name).and_then(|c| c.property(0)?.as_i64());
            match g.prop(tex.id, name).and_then(|p| p.i64()).or_else(record) {
                Some(1) => WrapMode::Clamp,
                _ => WrapMode::Repeat,
            }
        };
        TextureMap {
            slot,
            file,
            resolved,
            embedded,
            strength: 1.0,
            uv_transform: UvTransform::default(),
            flags: 0,
            wrap: [wrap("WrapModeU"), wrap("WrapModeV")],
        }
    }

    /// FBX 6 keeps a mesh's textures in its geometry: `LayerElementTexture` (the diffuse
    /// texture) and `LayerElement<Property>Textures` / `LayerElement<Property>_Textures`
    /// (e.g. `LayerElementEmissive_Textures`) hold a `TextureId` per polygon (or one,
    /// `AllSame`) into the textures connected to the geometry, then to its model, in file
    /// order; the polygon's material gets that texture on `<Property>`. As ufbx does
    /// (`ufbxi_read_mesh`, then "Patch the textures from meshes" in `ufbxi_finalize_scene`):
    /// only materials without textures of their own get them, the first mesh that gives a
    /// material some decides them, and per material they go in texture order.
    fn legacy_textures(&mut self, geo: NodeRef<'_, '_>, geo_id: i64, model_id: i64, mesh: &Mesh) {
        let g = self.graph;
        if mesh.material_slots.is_empty() {
            return;
        }
        let mut layers = Vec::new();
        for e in geo.children() {
            let name = e.name();
            let prop = if name == "LayerElementTexture" {
                "Diffuse"
            } else if let Some(p) = name
                .strip_prefix("LayerElement")
                .and_then(|p| p.strip_suffix("Textures"))
                .filter(|_| name.len() > 20)
            {
                p.strip_suffix('_').unwrap_or(p)
            } else {
                continue;
            };
            let mapping = child_str(e, "MappingInformationType");
            if mapping.is_empty() {
                continue;
            }
            layers.push((prop, mapping == "AllSame", child_i64(e, "TextureId")));
        }
        if layers.is_empty() {
            return;
        }
        let mut textures: Vec<&Object<'_, '_>> = g.child_objects(geo_id, "Texture").collect();
        if model_id != geo_id {
            textures.extend(g.child_objects(model_id, "Texture"));
        }
        // (material slot, texture index, property), sorted and deduplicated as ufbx does.
        let mut picks: Vec<(usize, usize, &str)> = Vec::new();
        let slots = mesh.material_slots.len();
        let faces = mesh.polygon_count();
        for (prop, all_same, ids) in &layers {
            if *all_same {
                let t = ids.first().copied().unwrap_or(0);
                if t >= 0 && (t as usize) < textures.len() {
                    picks.extend((0..slots).map(|s| (s, t as usize, *prop)));
                }
            } else {
                for (p, &t) in ids.iter().take(faces).enumerate() {
                    let s = mesh.polygon_materials.get(p).copied().unwrap_or(0) as usize;
                    if t >= 0 && (t as usize) < textures.len() && s < slots {
                        picks.push((s, t as usize, *prop));
                    }
                }
            }
        }
        picks.sort();
        picks.dedup();
        let mut done: Vec<usize> = Vec::new();
        for (s, t, prop) in picks {
            let Some(mat) = mesh.material_slots[s] else { continue };
            if self.textured.get(mat).copied().unwrap_or(true) && !done.contains(&mat) {
                continue;
            }
            if !done.contains(&mat) {
                done.push(mat);
            }
            let Some(slot) = map_slot(prop) else { continue };
            let map = self.texture_map(textures[t], slot);
            self.scene.materials[mat].maps.push(map);
        }
        for mat in done {
            self.textured[mat] = true;
        }
    }

    /// The texture's file name: `RelativeFilename`, else `FileName`, of the texture or else of
    /// its `Video`.
    fn texture_file(&self, tex: &Object<'_, '_>) -> String {
        let pick = |n: NodeRef<'_, '_>| {
            let rel = child_str_lossy(n, "RelativeFilename");
            let abs = child_str_lossy(n, "FileName");
            let abs = if abs.is_empty() { child_str_lossy(n, "Filename") } else { abs };
            if rel.is_empty() {
                abs
            } else {
                rel
            }
        };
        let own = pick(tex.node);
        if !own.is_empty() {
            return own;
        }
        let prop = self.graph.get_str(tex.id, "FileName", "").to_string();
        if !prop.is_empty() {
            return prop;
        }
        self.graph
            .child_objects(tex.id, "Video")
            .map(|v| pick(v.node))
            .find(|f| !f.is_empty())
            .unwrap_or_default()
    }

    /// The embedded image bytes of a texture: the `Content` of its first `Video` that has
    /// some (ufbx `ufbx_texture::content` is its video's), decoded once per video; a
    /// `Content` that does not decode is reported and left out.
    fn texture_content(&mut self, tex: &Object<'_, '_>) -> Option<std::sync::Arc<[u8]>> {
        let g = self.graph;
        for video in g.child_objects(tex.id, "Video") {
            if let Some(cached) = self.videos.get(&video.id) {
                if cached.is_some() {
                    return cached.clone();
                }
                continue;
            }
            let decoded = match super::media::content(video.node, g.doc.encoding) {
                Ok(bytes) => bytes.map(std::sync::Arc::<[u8]>::from),
                Err(e) => {
                    let place = format!("Video \"{}\"", video.name);
                    self.warn(Some(video.node), &place, e.to_string());
                    None
                }
            };
            self.videos.insert(video.id, decoded.clone());
            if decoded.is_some() {
                return decoded;
            }
        }
        None
    }

    /// The texture file next to the scene: the relative path, then the bare file name.
    fn resolve(&self, file: &str) -> Option<std::path::PathBuf> {
        let base = self.opts.base_dir.as_ref()?;
        if file.is_empty() {
            return None;
        }
        let norm = file.replace('\\', "/");
        let rel = base.join(&norm);
        if rel.is_file() {
            return Some(rel);
        }
        let name = norm.rsplit('/').next()?;
        let bare = base.join(name);
        if bare.is_file() {
            return Some(bare);
        }
        // Case-insensitively (`ReadOptions::base_dir`), as the 3DS reader finds its maps: a
        // file written from a 3DS source names `TEST.PNG` for `test.png`.
        std::fs::read_dir(base)
            .ok()?
            .filter_map(Result::ok)
            .find(|e| e.file_name().to_str().is_some_and(|n| n.eq_ignore_ascii_case(name)))
            .map(|e| e.path())
            .filter(|p| p.is_file())
    }

    fn models(&mut self) {
        let g = self.graph;
        // Exact size: a node is some 460 bytes, and doubling would leave up to half unused
        // (10,000 models in `synthetic_id_collision`).
        let models = g.objects().iter().filter(|o| o.class == "Model").count();
        self.scene.nodes.reserve_exact(models);
        self.ids.nodes.reserve(models);
        let mut cache = PropCache::new(&TRANSFORM_PROPS);
        // The transform of models whose properties are all their template's, by template
        // (`ObjectProps::shared`): computed once (`synthetic_id_collision`: 10,000 models).
        let mut shared: Vec<(u32, NodeTransform)> = Vec::new();
        for obj in g.objects().iter().filter(|o| o.class == "Model") {
            let id = obj.id;
            let attr = g.child_objects(id, "NodeAttribute").next();
            let kind_name = match (obj.sub_class, attr) {
                ("" | "Null", Some(a)) if !a.sub_class.is_empty() => a.sub_class,
                (s, _) => s,
            };
            let mut node = Node::new(obj.name.clone(), NodeKind::Null);
            node.source.id = Some(id);
            let props = cache.of(g, obj);
            let transform = match props.shared() {
                Some(key) => match shared.iter().find(|e| e.0 == key) {
                    Some(e) => e.1,
                    None => {
                        let t = self.transform(&props);
                        shared.push((key, t));
                        t
                    }
                },
                None => self.transform(&props),
            };
            transform.apply(&mut node);
            let data_id = attr.map(|a| a.id).unwrap_or(id);
            match kind_name {
                "Mesh" => {
                    let geometry = if obj.node.child("Vertices").is_some() {
                        // A model whose FBX 6 name an earlier model holds loads without its
                        // inline geometry (`ObjectGraph::holds_name`).
                        g.holds_name(obj).then(|| (obj.node, id, obj.name.clone()))
                    } else {
                        g.child_objects(id, "Geometry")
                            .find(|o| o.sub_class == "Mesh" || o.sub_class.is_empty())
                            .map(|o| (o.node, o.id, o.name.clone()))
                    };
                    if let Some((record, geo_id, geo_name)) = geometry {
                        let place = format!("Objects › Model \"{}\"", obj.name);
                        node.mesh = self.instance(record, geo_id, &geo_name, obj, &place);
                        if node.mesh.is_some() {
                            node.kind = NodeKind::Mesh;
                        }
                    }
                }
                "LimbNode" | "Limb" | "Root" | "Skeleton" => node.kind = NodeKind::Bone,
                "Camera" => {
                    self.ids.cameras.insert(data_id, self.scene.cameras.len());
                    node.kind = NodeKind::Camera(self.scene.cameras.len());
                    self.scene.cameras.push(self.camera(data_id, &obj.name));
                }
                "Light" => {
                    self.ids.lights.insert(data_id, self.scene.lights.len());
                    node.kind = NodeKind::Light(self.scene.lights.len());
                    self.scene.lights.push(self.light(data_id, &obj.name));
                }
                _ => {}
            }
            self.ids.nodes.insert(id, self.scene.nodes.len());
            self.scene.nodes.push(node);
        }
    }

    fn transform(&self, props: &ObjectProps<'_, '_, '_, 17>) -> NodeTransform {
        let setup = rotation_setup_with(
            props.get_i64(const { t("RotationActive") }, 1),
            props.get_i64(const { t("RotationSpaceForLimitOnly") }, 0),
            || {
                let pre = props.get_vec3(const { t("PreRotation") }, [0.0; 3]);
                let post = props.get_vec3(const { t("PostRotation") }, [0.0; 3]);
                (props.get_i64(const { t("RotationOrder") }, 0), pre, post)
            },
        );
        let v = |i: usize, def: f64| DVec3::from(props.get_vec3(i, [def; 3]));
        let lcl_rotation = v(const { t("Lcl Rotation") }, 0.0);
        let transform = Transform {
            translation: v(const { t("Lcl Translation") }, 0.0),
            rotation: setup
                .order
                .to_quat(deg(props.get_vec3(const { t("Lcl Rotation") }, [0.0; 3]))),
            scale: v(const { t("Lcl Scaling") }, 1.0),
        };
        let pivots = Pivots {
            rotation_offset: v(const { t("RotationOffset") }, 0.0),
            rotation_pivot: v(const { t("RotationPivot") }, 0.0),
            pre_rotation: setup.pre,
            post_rotation: setup.post,
            pre_rotation_degrees: if setup.uses_rotation_space {
                v(const { t("PreRotation") }, 0.0)
            } else {
                DVec3::ZERO
            },
            post_rotation_degrees: if setup.uses_rotation_space {
                v(const { t("PostRotation") }, 0.0)
            } else {
                DVec3::ZERO
            },
            scaling_offset: v(const { t("ScalingOffset") }, 0.0),
            scaling_pivot: v(const { t("ScalingPivot") }, 0.0),
        };
        let gt = v(const { t("GeometricTranslation") }, 0.0);
        let gr = EulerOrder::Xyz
            .to_quat(deg(props.get_vec3(const { t("GeometricRotation") }, [0.0; 3])));
        let gs = v(const { t("GeometricScaling") }, 1.0);
        NodeTransform {
            lcl_rotation,
            transform,
            pivots: (pivots != Pivots::default()).then_some(pivots),
            inherit: InheritType::from_fbx(props.get_i64(const { t("InheritType") }, 1)),
            geometry: DMat4::from_scale_rotation_translation(gs, gr, gt),
            hidden: props.get_f64(const { t("Visibility") }, 1.0) == 0.0,
        }
    }

    fn camera(&self, id: i64, name: &str) -> Camera {
        let g = self.graph;
        let f = |n: &str| g.prop(id, n).and_then(|p| p.f64()).filter(|v| v.is_finite());
        let aspect = match (f("AspectWidth").or(f("AspectW")), f("AspectHeight").or(f("AspectH"))) {
            (Some(w), Some(h)) if w > 0.0 && h > 0.0 => Some(w / h),
            _ => match (f("FilmWidth"), f("FilmHeight")) {
                (Some(w), Some(h)) if w > 0.0 && h > 0.0 => Some(w / h),
                _ => None,
            },
        };
        let (fov_degrees, fov_axis) = match g.get_i64(id, "ApertureMode", 2) {
            0 => (f("FieldOfViewX").or(f("FieldOfView")).unwrap_or(40.0), FovAxis::Horizontal),
            1 => (f("FieldOfView").unwrap_or(40.0), FovAxis::Horizontal),
            3 => {
                let focal = f("FocalLength").unwrap_or(0.0);
                let aperture = self.camera_aperture_width(id) * 25.4;
                if focal > 0.0 && aperture > 0.0 {
                    ((aperture / (2.0 * focal)).atan().to_degrees() * 2.0, FovAxis::Horizontal)
                } else {
                    (f("FieldOfView").unwrap_or(40.0), FovAxis::Horizontal)
                }
            }
            _ => (f("FieldOfView").or(f("FieldOfViewY")).unwrap_or(40.0), FovAxis::Vertical),
        };
        Camera {
            name: name.into(),
            target: None,
            fov_degrees,
            fov_axis,
            roll_degrees: f("Roll").unwrap_or(0.0),
            near: f("NearPlane"),
            far: f("FarPlane"),
            aspect,
        }
    }

    /// The width in inches of the film gate a focal-length camera (`ApertureMode` 3) sees
    /// through, as ufbx `ufbxi_update_camera` derives it: the film (`FilmWidth` ×
    /// `FilmHeight` · `FilmSqueezeRatio`, 1 × 1 inch when absent) fitted to the render
    /// aspect by `GateFit` — 1 vertical (the film's height times the aspect), 2 horizontal
    /// (the film's width), 3 fill (vertical when the render is wider than the film, else
    /// horizontal), 4 overscan (the other way round), 0 none and 5 stretch (the film as is).
    /// The render aspect follows `AspectRatioMode`: 0–2 `AspectWidth / AspectHeight`, 3 (fixed
    /// width) `1 / AspectHeight`, 4 (fixed height) `AspectWidth`; a missing width or height is
    /// made from the other by the film's ratio.
    fn camera_aperture_width(&self, id: i64) -> f64 {
        let g = self.graph;
        let f = |n: &str| g.prop(id, n).and_then(|p| p.f64()).filter(|v| v.is_finite());
        let film_x = f("FilmWidth").unwrap_or(1.0);
        let film_y0 = f("FilmHeight").unwrap_or(1.0);
        let film_y = film_y0 * f("FilmSqueezeRatio").unwrap_or(1.0);
        let mut ax = f("AspectWidth").or(f("AspectW")).unwrap_or(0.0);
        let mut ay = f("AspectHeight").or(f("AspectH")).unwrap_or(0.0);
        if ax <= 0.0 && ay <= 0.0 {
            (ax, ay) = (
                if film_x > 0.0 { film_x } else { 1.0 },
                if film_y0 > 0.0 { film_y0 } else { 1.0 },
            );
        } else if ax <= 0.0 {
            ax = if film_x > 0.0 && film_y0 > 0.0 { ay / film_y0 * film_x } else { ay };
        } else if ay <= 0.0 {
            ay = if film_x > 0.0 && film_y0 > 0.0 { ax / film_x * film_y0 } else { ax };
        }
        let aspect = match g.get_i64(id, "AspectRatioMode", 0) {
            3 => 1.0 / ay,
            4 => ax,
            _ => ax / ay,
        };
        let film_ratio = film_x / film_y;
        let fit = match g.get_i64(id, "GateFit", 0) {
            3 if aspect > film_ratio => 2,
            3 => 1,
            4 if aspect < film_ratio => 2,
            4 => 1,
            fit => fit,
        };
        match fit {
            1 => film_y * aspect,
            _ => film_x,
        }
    }

    fn light(&self, id: i64, name: &str) -> Light {
        let g = self.graph;
        let c = g.get_vec3(id, "Color", [1.0; 3]);
        let inner = g.get_f64(id, "InnerAngle", g.get_f64(id, "HotSpot", 0.0));
        let outer = g.get_f64(id, "OuterAngle", g.get_f64(id, "Cone angle", 45.0));
        Light {
            name: name.into(),
            kind: match g.get_i64(id, "LightType", 0) {
                1 => LightKind::Directional,
                2 => LightKind::Spot,
                _ => LightKind::Point,
            },
            color: Vec3::new(c[0] as f32, c[1] as f32, c[2] as f32),
            intensity: g.get_f64(id, "Intensity", 100.0) / 100.0,
            hotspot_degrees: inner,
            falloff_degrees: outer,
            attenuation: None,
            on: g.get_i64(id, "CastLight", 1) != 0,
            target: None,
            roll_degrees: 0.0,
        }
    }

    /// The scene mesh model `model` shows from geometry record `geo` (object id `geo_id`):
    /// the mesh an earlier model made of the same `Geometry` when the two models have the same
    /// materials (an instance, ufbx `ufbx_mesh::instances`), else a new one. Materials are
    /// connected to the model, not the geometry, and the scene model keeps them on the mesh
    /// (as glTF keeps them on a mesh's primitives), so instances with different materials
    /// (3ds Max's per-instance materials) get their own copy of the geometry.
    fn instance(
        &mut self,
        geo: NodeRef<'_, '_>,
        geo_id: i64,
        name: &str,
        model: &Object<'_, '_>,
        place: &str,
    ) -> Option<usize> {
        let slots = self.material_slots(model.id);
        if let Some(&m) = self.instances.get(&(geo_id, slots.clone())) {
            return Some(m);
        }
        let mesh = self.mesh(geo, geo_id, name, model, place)?;
        let m = self.scene.meshes.len();
        self.scene.meshes.push(mesh);
        self.instances.insert((geo_id, slots), m);
        Some(m)
    }

    /// The scene materials connected to model `model`, in connection order (`None`: a
    /// material that did not become a scene material).
    fn material_slots(&self, model: i64) -> Vec<Option<usize>> {
        self.graph
            .child_objects(model, "Material")
            .map(|m| self.ids.materials.get(&m.id).copied())
            .collect()
    }

    /// The mesh of model `model` from geometry record `geo` (object id `geo_id`).
    fn mesh(
        &mut self,
        geo: NodeRef<'_, '_>,
        geo_id: i64,
        name: &str,
        model: &Object<'_, '_>,
        place: &str,
    ) -> Option<Mesh> {
        // Instances with different materials each get a copy of their geometry
        // ([`Importer::instance`]): many such models must not multiply memory past the limit.
        let size = |n: &str| {
            geo.child(n).map_or(0, |c| {
                c.properties()
                    .iter()
                    .map(|p| p.as_array().map_or(1, |a| a.len() as u64))
                    .sum::<u64>()
            })
        };
        if !self.charge(size("Vertices") + 2 * size("PolygonVertexIndex")) {
            self.warn(Some(geo), place, "meshes exceed the element limit; mesh skipped");
            return None;
        }
        let v = child_f64(geo, "Vertices");
        let positions: Vec<DVec3> =
            v.chunks_exact(3).map(|c| DVec3::new(c[0], c[1], c[2])).collect();
        let pvi = child_i64(geo, "PolygonVertexIndex");
        let mut mesh =
            Mesh { name: name.into(), positions, polygon_starts: vec![0], ..Mesh::default() };
        let n = mesh.positions.len();
        let mut clamped = 0usize;
        let mut corner_polygon = Vec::with_capacity(pvi.len());
        for &raw in &pvi {
            let (index, end) = if raw < 0 { (!raw, true) } else { (raw, false) };
            let vtx = if (index as u64) < n as u64 {
                index as u32
            } else {
                clamped += 1;
                n.saturating_sub(1) as u32
            };
            corner_polygon.push((mesh.polygon_starts.len() - 1) as u32);
            mesh.corner_vertices.push(vtx);
            if end {
                mesh.polygon_starts.push(mesh.corner_vertices.len() as u32);
            }
        }
        if *mesh.polygon_starts.last().unwrap_or(&0) as usize != mesh.corner_vertices.len() {
            mesh.polygon_starts.push(mesh.corner_vertices.len() as u32);
        }
        if n == 0 && !mesh.corner_vertices.is_empty() {
            self.warn(Some(geo), place, "polygons but no vertices; polygons dropped");
            mesh.corner_vertices.clear();
            mesh.polygon_starts = vec![0];
            corner_polygon.clear();
        } else if clamped > 0 {
            self.warn(Some(geo), place, format!("{clamped} polygon vertex indices past the {n} vertices, clamped to the last vertex"));
        }
        let topo = Topology {
            corner_vertex: mesh.corner_vertices.clone(),
            corner_polygon,
            polygon_count: mesh.polygon_count(),
        };
        let first = |name: &str| {
            geo.children()
                .filter(|c| c.name() == name)
                .min_by_key(|c| c.property(0).and_then(Property::as_i64).unwrap_or(0))
        };
        let vec3 = |c: &[f64]| Vec3::new(c[0] as f32, c[1] as f32, c[2] as f32);
        if let Some(e) = first("LayerElementNormal") {
            mesh.normals = self.layer(
                geo,
                e,
                "Normals",
                &["NormalsIndex", "NormalIndex"],
                3,
                &topo,
                place,
                vec3,
            );
        } else if geo.child("Normals").is_some() {
            // FBX 5: `Normals` in the model itself, per vertex or per corner by their count;
            // per vertex when both fit only in 5.0 files (ufbx `ufbxi_read_legacy_mesh`).
            let values: Vec<Vec3> = child_f64(geo, "Normals").chunks_exact(3).map(vec3).collect();
            let corners = topo.corner_vertex.len();
            let per_vertex = values.len() == n
                && (values.len() != corners || self.graph.doc.content_version() == 5000);
            if per_vertex {
                mesh.normals = Some(Attribute { values, mapping: Mapping::PerVertex });
            } else if values.len() == corners {
                mesh.normals = Some(Attribute { values, mapping: Mapping::PerCorner });
            }
        }
        let mut uv_layers: Vec<NodeRef<'_, '_>> =
            geo.children().filter(|c| c.name() == "LayerElementUV").collect();
        uv_layers.sort_by_key(|c| c.property(0).and_then(Property::as_i64).unwrap_or(0));
        let vec2 = |c: &[f64]| Vec2::new(c[0] as f32, c[1] as f32);
        for e in uv_layers {
            if let Some(uvs) = self.layer(geo, e, "UV", &["UVIndex"], 2, &topo, place, vec2) {
                mesh.uv_sets.push(UvSet { name: child_str(e, "Name").to_string(), uvs });
            }
        }
        // FBX 5: one unnamed set, `GeometryUVInfo { TextureUV, TextureUVVerticeIndex }`.
        if let Some(e) = geo.child("GeometryUVInfo").filter(|_| mesh.uv_sets.is_empty()) {
            let index = ["TextureUVVerticeIndex"];
            if let Some(uvs) = self.layer(geo, e, "TextureUV", &index, 2, &topo, place, vec2) {
                mesh.uv_sets.push(UvSet { name: String::new(), uvs });
            }
        }
        let current = self.graph.get_str(model.id, "currentUVSet", "");
        if let Some(i) = mesh.uv_sets.iter().position(|s| !current.is_empty() && s.name == current)
        {
            let set = mesh.uv_sets.remove(i);
            mesh.uv_sets.insert(0, set);
        }
        if let Some(e) = first("LayerElementColor") {
            mesh.colors = self.layer(geo, e, "Colors", &["ColorIndex"], 4, &topo, place, |c| {
                Vec4::new(c[0] as f32, c[1] as f32, c[2] as f32, c[3] as f32)
            });
        }
        // Tangent frames as stored, like the normals (ufbx `ufbxi_read_mesh`): the ones the
        // `Layer` entries bind to the first UV set ([`bound_to_first_uv_set`]).
        if let Some(e) = bound_to_first_uv_set(geo, "LayerElementTangent") {
            let index = ["TangentsIndex", "TangentIndex"];
            mesh.tangents = self.layer(geo, e, "Tangents", &index, 3, &topo, place, vec3);
        }
        if let Some(e) = bound_to_first_uv_set(geo, "LayerElementBinormal") {
            let index = ["BinormalsIndex", "BinormalIndex"];
            mesh.binormals = self.layer(geo, e, "Binormals", &index, 3, &topo, place, vec3);
        }
        if let Some(e) = first("LayerElementSmoothing") {
            let mapping = child_str(e, "MappingInformationType");
            let s = child_i64(e, "Smoothing");
            if s.is_empty() || mapping.is_empty() {
                let what =
                    if s.is_empty() { "no Smoothing values" } else { "no MappingInformationType" };
                self.warn(
                    Some(e),
                    place,
                    format!("{} has {what}; layer skipped", describe_layer(e)),
                );
            } else if mapping == "ByPolygon" && s.len() >= topo.polygon_count {
                mesh.smoothing_groups =
                    Some(s[..topo.polygon_count].iter().map(|&b| b as u32).collect());
            }
        }
        mesh.material_slots = self.material_slots(model.id);
        // FBX 5 keeps `MaterialAssignation` and `Materials` in the model itself.
        let material_layer = first("LayerElementMaterial")
            .map(|e| (e, "MappingInformationType"))
            .or_else(|| geo.child("MaterialAssignation").map(|_| (geo, "MaterialAssignation")));
        let material_layer = material_layer.filter(|&(e, mapping_name)| {
            let what = if child_count(e, "Materials") == 0 {
                "no Materials values"
            } else if child_str(e, mapping_name).is_empty() {
                "no MappingInformationType"
            } else {
                return true;
            };
            if e.name() == "LayerElementMaterial" {
                let msg = format!("{} has {what}; layer skipped", describe_layer(e));
                self.warn(Some(e), place, msg);
            }
            false
        });
        if let Some((e, mapping_name)) = material_layer {
            let m = child_i64(e, "Materials");
            let slot = |v: i64| {
                if v < 0 || v > u32::MAX as i64 - 1 {
                    Mesh::NO_MATERIAL
                } else {
                    v as u32
                }
            };
            match child_str(e, mapping_name) {
                "ByPolygon" => {
                    let mut per: Vec<u32> =
                        m.iter().take(topo.polygon_count).map(|&v| slot(v)).collect();
                    per.resize(topo.polygon_count, per.last().copied().unwrap_or(0));
                    if per.iter().any(|&s| s != 0) {
                        mesh.polygon_materials = per;
                    }
                }
                _ => {
                    if let Some(&v) = m.first().filter(|&&v| v != 0) {
                        mesh.polygon_materials = vec![slot(v); topo.polygon_count];
                    }
                }
            }
        }
        self.legacy_textures(geo, geo_id, model.id, &mesh);
        self.deformers(geo_id, &mut mesh, place);
        self.legacy_shapes(geo, geo_id, &mut mesh, place);
        Some(mesh)
    }

    /// One layer element as an [`Attribute`]: `data` holds `comps` numbers per value, `index`
    /// names the index array of `IndexToDirect`/`Index` references.
    #[allow(clippy::too_many_arguments)]
    fn layer<T: Copy>(
        &mut self,
        geo: NodeRef<'_, '_>,
        e: NodeRef<'_, '_>,
        data: &str,
        index: &[&str],
        comps: usize,
        topo: &Topology,
        place: &str,
        make: impl Fn(&[f64]) -> T,
    ) -> Option<Attribute<T>> {
        if !self.charge(topo.corner_vertex.len() as u64) {
            self.warn(
                Some(e),
                place,
                format!("{}: layers exceed the element limit; layer skipped", e.name()),
            );
            return None;
        }
        let raw = child_f64(e, data);
        let values: Vec<T> = raw.chunks_exact(comps).map(&make).collect();
        // A layer without its data, or without its mapping, is skipped with a warning and the
        // mesh loads without it (ufbx `ufbxi_read_vertex_element` leaves the attribute out:
        // silently without data, with a warning without a mapping it knows).
        if values.is_empty() {
            self.warn(
                Some(e),
                place,
                format!("{} has no {data} values; layer skipped", describe_layer(e)),
            );
            return None;
        }
        let mapping = child_str(e, "MappingInformationType");
        if mapping.is_empty() && e.name() != "GeometryUVInfo" {
            self.warn(
                Some(e),
                place,
                format!("{} has no MappingInformationType; layer skipped", describe_layer(e)),
            );
            return None;
        }
        let reference = child_str(e, "ReferenceInformationType");
        // No `ReferenceInformationType` (FBX 5 `GeometryUVInfo`): the index array when
        // present, as ufbx reads every layer.
        let idx: Option<Vec<i64>> = match reference {
            "IndexToDirect" | "Index" | "" => {
                index.iter().find_map(|n| e.child(n)).map(numbers_i64)
            }
            _ => None,
        };
        // `IndexToDirect` without its index array: ufbx reads the values directly (as
        // `Direct`); so does keyscene, with a warning.
        if idx.is_none() && matches!(reference, "IndexToDirect" | "Index") {
            self.warn(
                Some(e),
                place,
                format!(
                    "{} is {reference} but has no {} array; values read as Direct (as ufbx does)",
                    describe_layer(e),
                    index.first().copied().unwrap_or("index")
                ),
            );
        }
        // Old exporters write `ByPolygon` meaning `ByPolygonVertex`: taken so when there is
        // one index (or value) per corner (ufbx `ufbxi_read_vertex_element`).
        let per_corner_count = idx.as_ref().map_or(values.len(), Vec::len);
        let mapping = match mapping {
            "ByPolygon" if per_corner_count == topo.corner_vertex.len() => "ByPolygonVertex",
            m => m,
        };
        let to_u32 = |v: i64| u32::try_from(v).unwrap_or(u32::MAX);
        /// Per corner `c`: `idx[of(c)]`, else `of(c)` itself. Generic, not `&dyn Fn`, so that
        /// `of` is inlined into the loop over every corner.
        fn per_corner(n: usize, of: impl Fn(usize) -> usize, idx: &Option<Vec<i64>>) -> Vec<u32> {
            (0..n)
                .map(|c| {
                    let k = of(c);
                    match idx {
                        Some(ix) => {
                            ix.get(k).map_or(u32::MAX, |&v| u32::try_from(v).unwrap_or(u32::MAX))
                        }
                        None => u32::try_from(k).unwrap_or(u32::MAX),
                    }
                })
                .collect()
        }
        let corners = topo.corner_vertex.len();
        let mapping = match mapping {
            "ByPolygonVertex" => match &idx {
                Some(_) => Mapping::Indexed(per_corner(corners, |c| c, &idx)),
                None => Mapping::PerCorner,
            },
            "ByVertice" | "ByVertex" => match &idx {
                Some(_) => {
                    Mapping::Indexed(per_corner(corners, |c| topo.corner_vertex[c] as usize, &idx))
                }
                None => Mapping::PerVertex,
            },
            "ByPolygon" => match &idx {
                Some(_) => {
                    Mapping::Indexed(per_corner(corners, |c| topo.corner_polygon[c] as usize, &idx))
                }
                None => Mapping::PerPolygon,
            },
            "AllSame" => {
                let k =
                    idx.as_ref().and_then(|i| i.first()).map(|&v| to_u32(v) as usize).unwrap_or(0);
                let &v = values.get(k)?;
                return Some(Attribute { values: vec![v], mapping: Mapping::AllSame });
            }
            "ByEdge" => {
                // `Edges[e]` is the corner an edge starts at; a corner takes its edge's value.
                let edges = child_i64(geo, "Edges");
                let mut corner_edge = vec![usize::MAX; topo.corner_vertex.len()];
                for (k, &c) in edges.iter().enumerate() {
                    if let Some(slot) = usize::try_from(c).ok().and_then(|c| corner_edge.get_mut(c))
                    {
                        *slot = k;
                    }
                }
                Mapping::Indexed(per_corner(corners, |c| corner_edge[c], &idx))
            }
            other => {
                let other = other.to_string();
                self.warn(
                    Some(e),
                    place,
                    format!("{}: mapping \"{other}\" not known; layer ignored", e.name()),
                );
                return None;
            }
        };
        Some(Attribute { values, mapping })
    }

    /// Skin and blend shape deformers connected to geometry `geo_id` (FBX 6: the model).
    fn deformers(&mut self, geo_id: i64, mesh: &mut Mesh, place: &str) {
        let g = self.graph;
        let n = mesh.positions.len();
        let deformers: Vec<&Object<'_, '_>> = g.child_objects(geo_id, "Deformer").collect();
        for d in deformers {
            match d.sub_class {
                "Skin" if mesh.skin.is_none() => {
                    let mut skin = Skin {
                        joints: Vec::new(),
                        influences: vec![Vec::new(); n],
                        dq_weights: Vec::new(),
                    };
                    // `SkinningType` (ufbx `ufbxi_read_skin`): `DualQuaternion` skins every
                    // vertex by dual quaternions, `Blend` mixes per vertex by `BlendWeights`.
                    match child_str(d.node, "SkinningType") {
                        "DualQuaternion" => skin.dq_weights = vec![1.0; n],
                        "Blend" => {
                            skin.dq_weights = vec![0.0; n];
                            for (&i, &w) in child_i64(d.node, "Indexes")
                                .iter()
                                .zip(&child_f64(d.node, "BlendWeights"))
                            {
                                if let Some(slot) =
                                    usize::try_from(i).ok().and_then(|i| skin.dq_weights.get_mut(i))
                                {
                                    *slot = w as f32;
                                }
                            }
                        }
                        _ => {}
                    }
                    let clusters: Vec<&Object<'_, '_>> = g
                        .child_objects(d.id, "Deformer")
                        .filter(|c| c.sub_class == "Cluster")
                        .collect();
                    for cl in clusters {
                        if let Some(bone) = g.child_objects(cl.id, "Model").next() {
                            self.cluster(cl, bone.id, &mut skin, n, place);
                        }
                    }
                    if !skin.joints.is_empty() {
                        mesh.skin = Some(self.scene.skins.len());
                        self.scene.skins.push(skin);
                    }
                }
                "BlendShape" => {
                    let blender = blender_binary_exporter(self.creator());
                    let channels: Vec<&Object<'_, '_>> = g
                        .child_objects(d.id, "Deformer")
                        .filter(|c| c.sub_class == "BlendShapeChannel")
                        .collect();
                    for ch in channels {
                        let shapes: Vec<&Object<'_, '_>> = g
                            .child_objects(ch.id, "Geometry")
                            .filter(|s| s.sub_class == "Shape")
                            .collect();
                        // Shapes reach their full effect at `FullWeights[i] / 100` (1 when
                        // absent), sorted by that weight as ufbx does; the heaviest is the
                        // target, the others are in-betweens.
                        // Blender's binary exporter writes per-vertex shape weights there
                        // instead (see `blender_binary_exporter`): every shape is then reached
                        // at 1, and a shape with as many offsets as `FullWeights` has values
                        // takes them as its per-vertex weights.
                        let full = child_f64(ch.node, "FullWeights");
                        let level = |i: usize| match full.get(i) {
                            Some(w) if !blender => w / 100.0,
                            _ => 1.0,
                        };
                        let mut keyed: Vec<(f64, &Object<'_, '_>)> =
                            shapes.iter().enumerate().map(|(i, s)| (level(i), *s)).collect();
                        keyed.sort_by(|a, b| a.0.total_cmp(&b.0));
                        let Some(&(_, shape)) = keyed.last() else { continue };
                        if !self.charge((n * keyed.len()) as u64) {
                            self.warn(
                                Some(ch.node),
                                place,
                                "blend shape channels exceed the element limit; channel skipped",
                            );
                            continue;
                        }
                        let weight = self.deform_percent(ch) / 100.0;
                        let mut target = self.morph(&ch.name, weight, shape.node, n, place);
                        if blender && !full.is_empty() {
                            target.vertex_weights = shape_vertex_weights(shape.node, &full, n);
                        }
                        for &(w, s) in &keyed[..keyed.len() - 1] {
                            let t = self.morph(&ch.name, weight, s.node, n, place);
                            target.inbetweens.push((w, t.position_deltas));
                        }
                        self.ids
                            .morph_channels
                            .entry(ch.id)
                            .or_default()
                            .push((self.scene.meshes.len(), mesh.morph_targets.len()));
                        mesh.morph_targets.push(target);
                    }
                }
                "VertexCacheDeformer" if mesh.geometry_cache.is_none() => {
                    mesh.geometry_cache = self.cache_deformer(d, n, place);
                }
                _ => {}
            }
        }
    }

    /// The scene geometry cache for `VertexCacheDeformer` `d` on a mesh of `n` vertices, as
    /// ufbx binds it (`ufbxi_load_external_files`): the deformer's `Cache` object names a file,
    /// `CacheFileName` relative to the FBX's folder (leading separators dropped, `\` read as
    /// `/`), else `CacheAbsoluteFileName` as stored; a cache with one channel binds whatever
    /// the deformer's `ChannelName` says (Marvelous Designer writes a wrong one), else the
    /// channel of that name. Only position channels whose frames hold `n` points are kept;
    /// normal channels are not applied. A file that is missing or broken is a warning and the
    /// mesh keeps its other deformers.
    fn cache_deformer(&mut self, d: &Object<'_, '_>, n: usize, place: &str) -> Option<usize> {
        let g = self.graph;
        let file = g.child_objects(d.id, "Cache").next()?;
        let rel = g.get_str(file.id, "CacheFileName", "").to_string();
        let abs = g.get_str(file.id, "CacheAbsoluteFileName", "").to_string();
        let key = if rel.is_empty() { abs.clone() } else { rel.clone() };
        if key.is_empty() {
            return None;
        }
        let loaded = match self.caches.iter().position(|(k, _)| *k == key) {
            Some(i) => i,
            None => {
                let fps = self.scene.meta.frame_rate.unwrap_or(30.0);
                let found = self.cache_candidates(&rel, &abs).into_iter().find(|p| p.is_file());
                let value = match found {
                    None => {
                        self.warn(
                            Some(file.node),
                            place,
                            format!(
                                "geometry cache file {key} not found (also tried {abs}); the \
                                 mesh is not animated by it",
                                key = quoted(&key),
                                abs = quoted(&abs)
                            ),
                        );
                        None
                    }
                    Some(path) => match super::cache::load(&path, fps, &self.opts.limits) {
                        Ok(c) => {
                            for w in &c.warnings {
                                self.warn(Some(file.node), place, format!("geometry cache: {w}"));
                            }
                            Some((path, c))
                        }
                        Err(e) => {
                            self.warn(Some(file.node), place, format!("{e}; cache ignored"));
                            None
                        }
                    },
                };
                self.caches.push((key, value));
                self.caches.len() - 1
            }
        };
        let caches = std::mem::take(&mut self.caches);
        let bound =
            caches[loaded].1.as_ref().and_then(|(p, c)| self.bind_channel(d, p, c, n, place));
        self.caches = caches;
        bound
    }

    /// [`Importer::cache_deformer`]'s channel choice in the loaded cache `cache` (file `path`).
    fn bind_channel(
        &mut self,
        d: &Object<'_, '_>,
        path: &std::path::Path,
        cache: &super::cache::Cache,
        n: usize,
        place: &str,
    ) -> Option<usize> {
        let g = self.graph;
        let wanted = g.get_str(d.id, "ChannelName", "");
        let channel = match cache.channels.as_slice() {
            [one] => one,
            all => all.iter().find(|c| c.name == wanted)?,
        };
        if channel.interpretation != super::cache::Interpretation::Positions {
            return None;
        }
        if channel.frames.iter().any(|f| f.values.len() < n) {
            self.warn(
                Some(d.node),
                place,
                format!(
                    "geometry cache {} channel {} has fewer points than the mesh's {n} \
                     vertices; cache ignored",
                    path.display(),
                    quoted(&channel.name)
                ),
            );
            return None;
        }
        if let Some(i) = self
            .scene
            .geometry_caches
            .iter()
            .position(|c| c.file == *path && c.name == channel.name)
        {
            return Some(i);
        }
        let points = channel.frames.iter().map(|f| f.values.len() as u64).sum::<u64>();
        if !self.charge(points) {
            self.warn(
                Some(d.node),
                place,
                "geometry caches exceed the element limit; cache skipped",
            );
            return None;
        }
        let frames = channel
            .frames
            .iter()
            .map(|f| CacheFrame { time: f.time, positions: f.values.clone() })
            .collect();
        let name = channel.name.clone();
        self.scene.geometry_caches.push(GeometryCache { name, file: path.into(), frames });
        Some(self.scene.geometry_caches.len() - 1)
    }

    /// Where a `Cache` object's file may be, in the order tried: `CacheFileName` under the
    /// FBX's folder (or as is when absolute), then `CacheAbsoluteFileName` as stored and with
    /// `\` read as `/`.
    fn cache_candidates(&self, rel: &str, abs: &str) -> Vec<std::path::PathBuf> {
        let mut out = Vec::new();
        let rel = rel.trim_start_matches(['/', '\\']);
        if !rel.is_empty() {
            let norm = rel.replace('\\', "/");
            let drive = rel.len() > 1 && rel.as_bytes()[1] == b':';
            match &self.opts.base_dir {
                Some(base) if !drive => out.push(base.join(&norm)),
                _ => out.push(norm.into()),
            }
        }
        if !abs.is_empty() {
            out.push(abs.into());
            out.push(abs.replace('\\', "/").into());
        }
        out
    }

    /// In-file blend shapes: `Shape: "Name" { Indexes, Vertices, Normals }` records inside the
    /// object `holder` whose record is `geo` (the FBX 6 mesh model, the FBX 7.1 `Geometry`),
    /// each one channel whose weight is `holder`'s property `Name` (percent), 0 when absent
    /// (ufbx `ufbxi_read_synthetic_blend_shapes`, which reads the holder's properties).
    fn legacy_shapes(&mut self, geo: NodeRef<'_, '_>, holder: i64, mesh: &mut Mesh, place: &str) {
        let n = mesh.positions.len();
        for shape in geo.children().filter(|c| c.name() == "Shape") {
            let name = shape
                .property(0)
                .and_then(Property::as_bytes)
                .map(|b| String::from_utf8_lossy(b).into_owned())
                .unwrap_or_default();
            if !self.charge(n as u64) {
                self.warn(
                    Some(shape),
                    place,
                    "blend shapes exceed the element limit; shape skipped",
                );
                continue;
            }
            let weight = self.graph.get_f64(holder, &name, 0.0) / 100.0;
            let target = self.morph(&name, weight, shape, n, place);
            self.ids.morph_properties.push((
                holder,
                name,
                self.scene.meshes.len(),
                mesh.morph_targets.len(),
            ));
            mesh.morph_targets.push(target);
        }
    }

    /// Adds cluster `cl` (bone model `bone`) as the next joint of `skin`, the skin about to be
    /// pushed to `Scene::skins`.
    fn cluster(&mut self, cl: &Object<'_, '_>, bone: i64, skin: &mut Skin, n: usize, place: &str) {
        let indexes = child_i64(cl.node, "Indexes");
        let weights = child_f64(cl.node, "Weights");
        let transform = child_matrix(cl.node, "Transform").unwrap_or(DMat4::IDENTITY);
        let link = child_matrix(cl.node, "TransformLink").unwrap_or(DMat4::IDENTITY);
        let joint = skin.joints.len() as u32;
        // Bones may come after the mesh in the file: the node is filled in by `hierarchy`.
        // `Transform` already maps the mesh node's frame into the bone's bind frame (it is
        // `TransformLink⁻¹ · mesh world at bind` as exporters write it; ufbx reads it as
        // `mesh_node_to_bone`), so it is the inverse bind matrix as stored. `TransformLink` (the
        // bone's world matrix at bind) is only needed for posing from the bind pose.
        let _ = link;
        skin.joints.push(SkinJoint { node: usize::MAX, inverse_bind: transform });
        self.pending.push((self.scene.skins.len(), joint as usize, bone));
        let mut bad = 0usize;
        for (&i, &w) in indexes.iter().zip(&weights) {
            match usize::try_from(i).ok().and_then(|i| skin.influences.get_mut(i)) {
                Some(list) => list.push((joint, w as f32)),
                None => bad += 1,
            }
        }
        if bad > 0 {
            self.warn(
                Some(cl.node),
                place,
                format!(
                    "cluster \"{}\": {bad} vertex indices past the {n} vertices ignored",
                    cl.name
                ),
            );
        }
    }

    /// A morph target named `name` of weight `weight` (0–1) from `Shape` record `shape`
    /// (`Indexes`, `Vertices` and `Normals` offsets) over a mesh of `n` vertices.
    fn morph(
        &mut self,
        name: &str,
        weight: f64,
        shape: NodeRef<'_, '_>,
        n: usize,
        place: &str,
    ) -> MorphTarget {
        let indexes = child_i64(shape, "Indexes");
        let verts = child_f64(shape, "Vertices");
        let normals = child_f64(shape, "Normals");
        let mut deltas = vec![DVec3::ZERO; n];
        let mut normal_deltas = (!normals.is_empty()).then(|| vec![Vec3::ZERO; n]);
        let mut bad = 0usize;
        for (k, &i) in indexes.iter().enumerate() {
            let Some(slot) = usize::try_from(i).ok().filter(|&i| i < n) else {
                bad += 1;
                continue;
            };
            if let Some(c) = verts.get(3 * k..3 * k + 3) {
                deltas[slot] = DVec3::new(c[0], c[1], c[2]);
            }
            if let (Some(nd), Some(c)) = (normal_deltas.as_mut(), normals.get(3 * k..3 * k + 3)) {
                nd[slot] = Vec3::new(c[0] as f32, c[1] as f32, c[2] as f32);
            }
        }
        if bad > 0 {
            self.warn(
                Some(shape),
                place,
                format!("shape of channel \"{name}\": {bad} indices past the {n} vertices ignored"),
            );
        }
        MorphTarget {
            name: name.into(),
            position_deltas: deltas,
            normal_deltas,
            default_weight: weight,
            inbetweens: Vec::new(),
            vertex_weights: Vec::new(),
        }
    }

    /// The file's `Creator` string as [`Importer::metadata`] recorded it, empty when none.
    fn creator(&self) -> &str {
        self.scene
            .meta
            .properties
            .iter()
            .find(|(k, _)| k == "creator")
            .map_or("", |(_, v)| v.as_str())
    }

    /// `Pose` objects of type `BindPose`: `PoseNode { Node: id, Matrix: *16 }` children.
    fn bind_poses(&mut self) {
        let g = self.graph;
        for pose in g.objects().iter().filter(|o| o.class == "Pose" && o.sub_class == "BindPose") {
            let mut nodes = Vec::new();
            for pn in pose.node.children().filter(|c| c.name() == "PoseNode") {
                let id = pn.child("Node").and_then(|n| n.property(0)).and_then(|p| g.resolve(p));
                let (Some(&node), Some(m)) =
                    (id.and_then(|id| self.ids.nodes.get(&id)), child_matrix(pn, "Matrix"))
                else {
                    continue;
                };
                nodes.push((node, m));
            }
            self.ids
                .bind_poses
                .push(BindPose { name: pose.name.to_string(), nodes: nodes.clone() });
            self.scene.bind_poses.push(BindPose { name: pose.name.to_string(), nodes });
        }
    }

    /// A channel's `DeformPercent` property, else its `DeformPercent` record (Blender writes it
    /// as a record; ufbx `ufbxi_read_blend_channel` reads both), else 0.
    fn deform_percent(&self, ch: &Object<'_, '_>) -> f64 {
        let record = || {
            ch.node.child("DeformPercent").and_then(|n| n.property(0)).and_then(Property::as_f64)
        };
        self.graph
            .prop(ch.id, "DeformPercent")
            .and_then(|p| p.f64())
            .or_else(record)
            .filter(|v| v.is_finite())
            .unwrap_or(0.0)
    }

    /// Links every node under its parent model and resolves skin joints to nodes.
    fn hierarchy(&mut self) {
        let g = self.graph;
        let count = self.scene.nodes.len();
        // Parent of each node, `NONE` for roots: 4 bytes a node (scene nodes are counted in
        // `u32`, as the record tree's), not the 16 of an `Option<usize>`, at the load's peak.
        const NONE: u32 = u32::MAX;
        let mut parent: Vec<u32> = vec![NONE; count];
        for (i, node) in self.scene.nodes.iter().enumerate() {
            let Some(id) = node.source.id else { continue };
            parent[i] = g
                .parents(id)
                .filter(|c| c.kind == ConnectionKind::ObjectObject)
                .find_map(|c| self.ids.nodes.get(&c.parent).copied())
                .filter(|&p| p != i)
                .map_or(NONE, |p| p as u32);
        }
        // Cut loops: walk up from every node not yet known to reach a root, marking the path;
        // meeting the current path again closes a loop, cut at the node that closes it.
        // Each node is walked once: linear in the node count.
        let mut state = vec![0u8; count]; // 0 unseen, 1 on the current path, 2 reaches a root
        let mut path: Vec<u32> = Vec::new();
        for start in 0..count {
            let mut at = start;
            while state[at] == 0 {
                state[at] = 1;
                path.push(at as u32);
                match parent[at] {
                    NONE => break,
                    p if state[p as usize] == 1 => {
                        let name = self.scene.nodes[at].name.clone();
                        parent[at] = NONE;
                        self.warn(
                            None,
                            &format!("Objects › Model \"{name}\""),
                            "its parent chain loops back to it; made a root",
                        );
                        break;
                    }
                    p => at = p as usize,
                }
            }
            for &n in &path {
                state[n as usize] = 2;
            }
            path.clear();
        }
        drop(state);
        drop(path);
        // Each child list allocated once at its size (pushed one by one, a single child took
        // a vector of capacity 4).
        let mut child_count = vec![0u32; count];
        for &p in &parent {
            if p != NONE {
                child_count[p as usize] += 1;
            }
        }
        for (node, &n) in self.scene.nodes.iter_mut().zip(&child_count) {
            node.children.reserve_exact(n as usize);
        }
        drop(child_count);
        for (i, p) in parent.into_iter().enumerate() {
            self.scene.attach(i, (p != NONE).then_some(p as usize));
        }
        for (skin, joint, bone) in std::mem::take(&mut self.pending) {
            if let Some(&node) = self.ids.nodes.get(&bone) {
                self.scene.skins[skin].joints[joint].node = node;
            }
        }
    }
}

/// Largest magnitude a material colour component or factor can sensibly have. Larger ones
/// (a decimal-comma exporter writes 0.5882353 as 588235300000000) and inf/NaN load with a
/// warning naming the property (docs/fbx.md, "Values that cannot be right"). 10⁴ leaves room
/// for HDR emission strengths, which stay in the hundreds.
pub const SANE_COLOR_LIMIT: f64 = 1.0e4;

/// `LayerElementNormal 0`: a layer element's record name and layer index, for warnings.
fn describe_layer(e: NodeRef<'_, '_>) -> String {
    match e.property(0).and_then(Property::as_i64) {
        Some(i) => format!("{} {i}", e.name()),
        None => e.name().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(text: &str) -> (Scene, Vec<Warning>) {
        read(text.as_bytes(), &ReadOptions::default()).unwrap()
    }

    /// A quad (0,0,0) (1,0,0) (1,1,0) (0,1,0) as geometry 20 of model 10, with `layers` added
    /// to the geometry and `model_props` to the model's Properties70.
    fn quad(model_props: &str, layers: &str) -> String {
        format!(
            r#"; FBX 7.4.0 project file
Objects: {{
    Geometry: 20, "Geometry::Quad", "Mesh" {{
        Vertices: *12 {{ a: 0,0,0, 1,0,0, 1,1,0, 0,1,0 }}
        PolygonVertexIndex: *4 {{ a: 0,1,2,-4 }}
        {layers}
    }}
    Model: 10, "Model::Quad", "Mesh" {{ Properties70: {{ {model_props} }} }}
}}
Connections: {{ C: "OO",10,0
    C: "OO",20,10 }}
"#
        )
    }

    #[test]
    fn focal_length_cameras_see_through_the_gate_fitted_film() {
        // Film 1.5 × 1 inch, focal length 35 mm, square render (AspectWidth = AspectHeight).
        // Hand computation (ufbx `ufbxi_update_camera`): fill and vertical fit the film's
        // height (1 inch at aspect 1), horizontal and none its width (1.5 inch);
        // fov = 2·atan(width · 25.4 / (2 · 35)). Overscan at aspect 1 < 1.5: horizontal.
        let fov = |gate: u8| {
            let text = format!(
                r#"; FBX 7.4.0 project file
Objects: {{
    NodeAttribute: 2, "NodeAttribute::Cam", "Camera" {{ Properties70: {{
        P: "ApertureMode", "enum", "", "",3
        P: "GateFit", "enum", "", "",{gate}
        P: "FilmWidth", "Number", "", "A",1.5
        P: "FilmHeight", "Number", "", "A",1
        P: "AspectWidth", "double", "Number", "",300
        P: "AspectHeight", "double", "Number", "",300
        P: "FocalLength", "Number", "", "A",35
    }} }}
    Model: 1, "Model::Cam", "Camera" {{ }}
}}
Connections: {{ C: "OO",1,0
    C: "OO",2,1 }}
"#
            );
            load(&text).0.cameras[0].fov_degrees
        };
        let want = |inches: f64| (inches * 25.4 / 70.0).atan().to_degrees() * 2.0;
        for (gate, inches) in [(0, 1.5), (1, 1.0), (2, 1.5), (3, 1.0), (4, 1.5), (5, 1.5)] {
            assert!((fov(gate) - want(inches)).abs() < 1e-9, "GateFit {gate}: {}", fov(gate));
        }
    }

    #[test]
    fn rotation_order_and_pre_rotation_apply_only_when_rotation_is_active() {
        let props = |active: u8| {
            format!(
                r#"P: "RotationActive", "bool", "", "",{active}
                P: "RotationOrder", "enum", "", "",4
                P: "PreRotation", "Vector3D", "Vector", "",0,0,90
                P: "Lcl Rotation", "Lcl Rotation", "", "A",90,0,90"#
            )
        };
        let deg90 = std::f64::consts::FRAC_PI_2;
        let (s, _) = load(&quad(&props(0), ""));
        let n = &s.nodes[0];
        // Inactive: XYZ order, no pre-rotation (ufbx ≥ 0.23, FBX SDK).
        assert!(n.pivots.is_none());
        assert!(
            n.transform
                .rotation
                .angle_between(EulerOrder::Xyz.to_quat(DVec3::new(deg90, 0.0, deg90)))
                < 1e-12
        );
        let (s, _) = load(&quad(&props(1), ""));
        let n = &s.nodes[0];
        assert!(
            n.transform
                .rotation
                .angle_between(EulerOrder::Zxy.to_quat(DVec3::new(deg90, 0.0, deg90)))
                < 1e-12
        );
        assert!(
            n.pivots
                .as_ref()
                .unwrap()
                .pre_rotation
                .angle_between(glam::DQuat::from_rotation_z(deg90))
                < 1e-12
        );
    }

    /// The quad with a blend shape moving vertices 1 and 2 by +Z (channel 60 at
    /// `DeformPercent` 100, `FullWeights` `full`), written by `creator`.
    fn shaped_quad(creator: &str, full: &str) -> String {
        let text = quad("", "");
        let header =
            format!("; FBX 7.4.0 project file\nFBXHeaderExtension: {{ Creator: \"{creator}\" }}\n");
        text.replacen("; FBX 7.4.0 project file\n", &header, 1)
            .replacen(
                "Objects: {\n",
                &format!(
                    r#"Objects: {{
    Deformer: 50, "Deformer::Key", "BlendShape" {{ }}
    Deformer: 60, "SubDeformer::Lift", "BlendShapeChannel" {{
        DeformPercent: 100
        FullWeights: *2 {{ a: {full} }}
    }}
    Geometry: 70, "Geometry::Lift", "Shape" {{
        Indexes: *2 {{ a: 1,2 }}
        Vertices: *6 {{ a: 0,0,1, 0,0,1 }}
    }}
"#
                ),
                1,
            )
            .replacen(
                "C: \"OO\",20,10 }",
                "C: \"OO\",20,10\n    C: \"OO\",50,20\n    C: \"OO\",60,50\n    C: \"OO\",70,60 }",
                1,
            )
    }

    #[test]
    fn blender_binary_full_weights_are_per_vertex_shape_weights() {
        use crate::anim::Time;
        // Blender's binary exporter: `FullWeights` 0 and 50 (percent) weigh the offsets of
        // vertices 1 and 2 (ufbx `offset_weights`): vertex 1 stays, vertex 2 moves by 0.5.
        let (s, _) = load(&shaped_quad("Blender (stable FBX IO) - 2.79 (sub 0) - 3.7.13", "0,50"));
        let t = &s.meshes[0].morph_targets[0];
        assert_eq!(t.vertex_weights, vec![1.0, 0.0, 0.5, 1.0]);
        let z: Vec<f64> =
            s.evaluate(None, Time::Frame(0.0)).world_positions(&s, 0).iter().map(|p| p.z).collect();
        assert_eq!(z, vec![0.0, 0.0, 0.5, 0.0]);
        // Any other exporter: `FullWeights` are the shape's full-effect channel weights, so
        // the shape (at 50) is reached in full by DeformPercent 100 — an in-between-free
        // target whose heaviest level is 0.5; weights stay per channel.
        let (s, _) = load(&shaped_quad("FBX SDK/FBX Plugins version 2020.2", "0,50"));
        assert!(s.meshes[0].morph_targets[0].vertex_weights.is_empty());
    }

    #[test]
    fn blender_binary_exporter_is_recognised_by_ufbx_rule() {
        assert!(blender_binary_exporter("Blender (stable FBX IO) - 2.93.1 - 4.22.0"));
        assert!(blender_binary_exporter("blender-2.72 - 3.2"));
        assert!(!blender_binary_exporter("Blender version 2.79 (sub 0)"));
        assert!(!blender_binary_exporter("FBX SDK/FBX Plugins version 2020.2"));
        assert!(!blender_binary_exporter("Blender (stable FBX IO)"));
    }

    #[test]
    fn negative_index_ends_a_polygon_and_out_of_range_indices_are_clamped() {
        let text = quad("", "").replace("a: 0,1,2,-4", "a: 0,1,-3,2,3,-10");
        let (s, w) = load(&text);
        let m = &s.meshes[0];
        assert_eq!(m.polygon_starts, vec![0, 3, 6]);
        assert_eq!(m.corner_vertices, vec![0, 1, 2, 2, 3, 3]);
        assert!(w.iter().any(|w| w.message.contains("clamped")), "{w:?}");
    }

    #[test]
    fn layer_elements_without_data_or_mapping_are_skipped_with_a_warning_and_the_mesh_loads() {
        // Hand-built, one broken layer per kind. ufbx 0.23 `ufbxi_read_vertex_element`: no
        // data array → no attribute; no mapping → no attribute; IndexToDirect without its
        // index array → the values read directly.
        let layers = r#"LayerElementNormal: 0 {
            MappingInformationType: "ByPolygonVertex"
            ReferenceInformationType: "Direct"
        }
        LayerElementUV: 0 {
            ReferenceInformationType: "Direct"
            UV: *8 { a: 0,0, 1,0, 1,1, 0,1 }
        }
        LayerElementTangent: 0 {
            MappingInformationType: "ByPolygonVertex"
            ReferenceInformationType: "IndexToDirect"
            TangentsIndex: *4 { a: 0,0,0,0 }
        }
        LayerElementColor: 0 {
            MappingInformationType: "ByVertice"
            ReferenceInformationType: "IndexToDirect"
            Colors: *16 { a: 1,0,0,1, 0,1,0,1, 0,0,1,1, 1,1,1,1 }
        }
        LayerElementSmoothing: 0 {
            ReferenceInformationType: "Direct"
            Smoothing: *1 { a: 1 }
        }
        LayerElementMaterial: 0 {
            MappingInformationType: "AllSame"
            ReferenceInformationType: "IndexToDirect"
        }"#;
        let (s, w) = load(&quad("", layers));
        let m = &s.meshes[0];
        assert_eq!((m.positions.len(), m.polygon_count()), (4, 1));
        assert!(m.normals.is_none() && m.uv_sets.is_empty() && m.tangents.is_none());
        assert!(m.smoothing_groups.is_none());
        let colors = m.colors.as_ref().unwrap();
        assert_eq!(colors.get(2, 2, 0), Some(Vec4::new(0.0, 0.0, 1.0, 1.0)));
        let said =
            |what: &str| w.iter().any(|w| w.message.contains(what) && w.place.contains("Quad"));
        for what in [
            "LayerElementNormal 0 has no Normals values; layer skipped",
            "LayerElementUV 0 has no MappingInformationType; layer skipped",
            "LayerElementTangent 0 has no Tangents values; layer skipped",
            "LayerElementColor 0 is IndexToDirect but has no ColorIndex array",
            "LayerElementSmoothing 0 has no MappingInformationType; layer skipped",
            "LayerElementMaterial 0 has no Materials values; layer skipped",
        ] {
            assert!(said(what), "{what}: {w:?}");
        }
    }

    #[test]
    fn material_colours_and_factors_are_kept_apart_the_newer_name_winning() {
        // Maya writes the 7.x `DiffuseColor` and the premultiplied FBX 6.1 `Diffuse` both;
        // ufbx's material map table reads `Diffuse`, then `DiffuseColor` (the later wins).
        // The second material is FBX 6.1 style: names without `Color`, no factors.
        let text = r#"; FBX 7.4.0 project file
Objects: {
    Material: 30, "Material::maya", "" { Properties70: {
        P: "DiffuseColor", "Color", "", "A",0.5,0.5,0.25
        P: "DiffuseFactor", "Number", "", "A",0.8
        P: "Diffuse", "Vector3D", "Vector", "",0.4,0.4,0.2
        P: "AmbientColor", "Color", "", "A",0.2,0.2,0.2
        P: "AmbientFactor", "Number", "", "A",0.5
        P: "EmissiveColor", "Color", "", "A",0.5,0.25,0
        P: "EmissiveFactor", "Number", "", "A",0.5
        P: "TransparentColor", "Color", "", "A",1,1,1
        P: "TransparencyFactor", "Number", "", "A",0.25
    } }
    Material: 31, "Material::legacy", "" { Properties70: {
        P: "Diffuse", "Vector3D", "Vector", "",1,0,0
        P: "Opacity", "double", "Number", "",0.75
    } }
}
"#;
        let (s, _) = load(text);
        let (m, legacy) = (&s.materials[0], &s.materials[1]);
        assert_eq!((m.diffuse, m.diffuse_factor), (Vec3::new(0.5, 0.5, 0.25), 0.8));
        assert!((m.effective_diffuse() - Vec3::new(0.4, 0.4, 0.2)).abs().max_element() < 1e-6);
        assert_eq!((m.ambient, m.ambient_factor), (Vec3::splat(0.2), 0.5));
        assert_eq!(m.effective_emissive(), Vec3::new(0.25, 0.125, 0.0));
        // Without `Opacity`: transparency = mean(TransparentColor × TransparencyFactor);
        // self-illumination = the brightest emissive channel × factor.
        assert_eq!((m.transparency, m.self_illumination), (0.25, 0.25));
        assert_eq!((legacy.diffuse, legacy.diffuse_factor), (Vec3::X, 1.0));
        assert_eq!((legacy.opacity, legacy.transparency), (Some(0.75), 0.25));
    }

    #[test]
    fn a_curve_on_a_material_factor_animates_the_material() {
        // DiffuseFactor 0.8 stored, keyed linearly 0 → 1 over the first second (KTime
        // 46186158000 ticks per second): at 0.5 s the factor is 0.5, the colour shown 0.5 ×
        // DiffuseColor (hand-computed), and the stored material is unchanged.
        let text = r#"; FBX 7.4.0 project file
Objects: {
    Material: 30, "Material::m", "" { Properties70: {
        P: "DiffuseColor", "Color", "", "A",1,0.5,0
        P: "DiffuseFactor", "Number", "", "A",0.8
    } }
    AnimationStack: 50, "AnimStack::Take 001", "" {
    }
    AnimationLayer: 51, "AnimLayer::BaseLayer", "" {
    }
    AnimationCurveNode: 60, "AnimCurveNode::DiffuseFactor", "" { Properties70: {
        P: "d|DiffuseFactor", "Number", "", "A",0.8
    } }
    AnimationCurve: 70, "AnimCurve::", "" {
        Default: 0
        KeyVer: 4009
        KeyTime: *2 { a: 0,46186158000 }
        KeyValueFloat: *2 { a: 0,1 }
        KeyAttrFlags: *1 { a: 4 }
        KeyAttrDataFloat: *4 { a: 0,0,0,0 }
        KeyAttrRefCount: *1 { a: 2 }
    }
}
Connections: {
    C: "OO",51,50
    C: "OO",60,51
    C: "OP",60,30, "DiffuseFactor"
    C: "OP",70,60, "d|DiffuseFactor"
}
"#;
        let (s, _) = load(text);
        assert_eq!(s.material_channels.len(), 1);
        let ch = &s.material_channels[0];
        assert_eq!((ch.animation, ch.material), (0, 0));
        assert_eq!(ch.property, crate::anim::MaterialProperty::DiffuseFactor);
        let m = s.material_at(Some(0), 0, crate::anim::Time::Seconds(0.5)).unwrap();
        assert!((m.diffuse_factor - 0.5).abs() < 1e-6, "{}", m.diffuse_factor);
        assert!((m.effective_diffuse() - Vec3::new(0.5, 0.25, 0.0)).abs().max_element() < 1e-6);
        assert_eq!(s.materials[0].diffuse_factor, 0.8);
        assert_eq!(
            s.animated_material_properties(Some(0)),
            vec![(0, crate::anim::MaterialProperty::DiffuseFactor)]
        );
    }

    #[test]
    fn decimal_comma_colours_load_with_a_warning_naming_the_property() {
        // A locale-broken exporter's DiffuseColor 0.5882353 written without its decimal
        // point; the factor and the other colours are sane.
        let text = r#"; FBX 7.4.0 project file
Objects: {
    Material: 30, "Material::skin", "" { Properties70: {
        P: "DiffuseColor", "Color", "", "A",588235300000000,0.5,0.25
        P: "DiffuseFactor", "Number", "", "A",1
        P: "SpecularColor", "Color", "", "A",0.5,0.5,0.5
        P: "EmissiveFactor", "Number", "", "A",inf
    } }
}
"#;
        let (s, w) = load(text);
        assert_eq!(s.materials[0].diffuse.x, 588_235_300_000_000.0);
        let w: Vec<_> = w.iter().filter(|w| w.place == "Objects › Material \"skin\"").collect();
        assert_eq!(w.len(), 1, "{w:?}");
        let m = &w[0].message;
        assert!(m.contains("DiffuseColor 588235300000000, 0.5, 0.25"), "{m}");
        assert!(m.contains("EmissiveFactor inf") && m.contains("outside ±10000"), "{m}");
        assert!(!w[0].message.contains("Specular"));
    }

    #[test]
    fn by_vertex_index_to_direct_values_follow_each_corners_vertex() {
        let layer = r#"LayerElementNormal: 0 {
            MappingInformationType: "ByVertice"
            ReferenceInformationType: "IndexToDirect"
            Normals: *6 { a: 0,0,1, 0,0,-1 }
            NormalsIndex: *4 { a: 1,0,0,1 }
        }"#;
        let (s, _) = load(&quad("", layer));
        let n = s.meshes[0].normals.as_ref().unwrap();
        let at = |c: usize| n.get(s.meshes[0].corner_vertices[c], c, 0).unwrap().z;
        assert_eq!([at(0), at(1), at(2), at(3)], [-1.0, 1.0, 1.0, -1.0]);
    }

    #[test]
    fn texture_wrap_modes_come_from_properties_or_records() {
        // Hand-built: WrapModeU 1 (clamp) as a Properties70 entry; WrapModeV 1 as a record of
        // the texture, as older files write it; absent ones default to 0 (repeat).
        let text = r#"; FBX 7.4.0 project file
Objects: {
    Material: 30, "Material::m", "" { }
    Texture: 40, "Texture::a", "" {
        Properties70: { P: "WrapModeU", "enum", "", "",1 }
        RelativeFilename: "a.png"
    }
    Texture: 41, "Texture::b", "" {
        WrapModeV: 1
        RelativeFilename: "b.png"
    }
}
Connections: { C: "OP",40,30, "DiffuseColor"
    C: "OP",41,30, "EmissiveColor" }
"#;
        let (s, _) = load(text);
        let wraps: Vec<_> = s.materials[0].maps.iter().map(|m| (m.file.as_str(), m.wrap)).collect();
        assert_eq!(
            wraps,
            [
                ("a.png", [WrapMode::Clamp, WrapMode::Repeat]),
                ("b.png", [WrapMode::Repeat, WrapMode::Clamp])
            ]
        );
    }

    #[test]
    fn diffuse_color_textures_keep_their_connection_order_before_diffuse_ones() {
        // Hand-built: a `Diffuse` texture, then three on `DiffuseColor`. ufbx's
        // `ufbx_find_prop_texture("DiffuseColor")` gives the first connected (`a.png`), and its
        // diffuse map prefers `DiffuseColor` over `Diffuse`: order a, b, c, then d.
        let text = r#"; FBX 7.4.0 project file
Objects: {
    Material: 30, "Material::m", "" { }
    Texture: 40, "Texture::d", "" { RelativeFilename: "d.png" }
    Texture: 41, "Texture::a", "" { RelativeFilename: "a.png" }
    Texture: 42, "Texture::b", "" { RelativeFilename: "b.png" }
    Texture: 43, "Texture::c", "" { RelativeFilename: "c.png" }
}
Connections: { C: "OP",40,30, "Diffuse"
    C: "OP",41,30, "DiffuseColor"
    C: "OP",42,30, "DiffuseColor"
    C: "OP",43,30, "DiffuseColor" }
"#;
        let (s, _) = load(text);
        let files: Vec<_> = s.materials[0].maps.iter().map(|m| m.file.as_str()).collect();
        assert_eq!(files, ["a.png", "b.png", "c.png", "d.png"]);
    }

    #[test]
    fn tangent_and_binormal_layers_are_read_with_their_own_mapping() {
        // Hand-built: tangents indexed per corner, binormals one per vertex.
        let layers = r#"LayerElementTangent: 0 {
            MappingInformationType: "ByPolygonVertex"
            ReferenceInformationType: "IndexToDirect"
            Tangents: *6 { a: 1,0,0, 0,1,0 }
            TangentsIndex: *4 { a: 0,0,1,1 }
        }
        LayerElementBinormal: 0 {
            MappingInformationType: "ByVertice"
            ReferenceInformationType: "Direct"
            Binormals: *12 { a: 0,1,0, 0,1,0, -1,0,0, -1,0,0 }
        }"#;
        let (s, _) = load(&quad("", layers));
        let m = &s.meshes[0];
        let t = m.tangents.as_ref().unwrap();
        let b = m.binormals.as_ref().unwrap();
        assert_eq!(t.get(1, 1, 0), Some(Vec3::X));
        assert_eq!(t.get(2, 2, 0), Some(Vec3::Y));
        assert_eq!(b.mapping, Mapping::PerVertex);
        assert_eq!(b.get(3, 3, 0), Some(Vec3::NEG_X));
    }

    #[test]
    fn by_polygon_vertex_direct_uvs_are_per_corner_and_the_current_set_comes_first() {
        let layers = r#"LayerElementUV: 0 {
            Name: "first"
            MappingInformationType: "ByPolygonVertex"
            ReferenceInformationType: "Direct"
            UV: *8 { a: 0,0, 1,0, 1,1, 0,1 }
        }
        LayerElementUV: 1 {
            Name: "second"
            MappingInformationType: "AllSame"
            ReferenceInformationType: "Direct"
            UV: *2 { a: 0.5,0.25 }
        }"#;
        let (s, _) = load(&quad(r#"P: "currentUVSet", "KString", "", "U", "second""#, layers));
        let m = &s.meshes[0];
        assert_eq!(
            m.uv_sets.iter().map(|u| u.name.as_str()).collect::<Vec<_>>(),
            ["second", "first"]
        );
        assert_eq!(m.uv_sets[0].uvs.get(0, 3, 0), Some(Vec2::new(0.5, 0.25)));
        assert_eq!(m.uv_sets[1].uvs.mapping, Mapping::PerCorner);
        assert_eq!(m.uv_sets[1].uvs.get(3, 2, 0), Some(Vec2::new(1.0, 1.0)));
    }

    #[test]
    fn a_parent_loop_is_cut_and_reported() {
        let text = r#"; FBX 7.4.0 project file
Objects: {
    Model: 1, "Model::A", "Null" { }
    Model: 2, "Model::B", "Null" { }
}
Connections: { C: "OO",1,2
    C: "OO",2,1 }
"#;
        let (s, w) = load(text);
        assert!(s.validate().is_ok());
        assert_eq!(s.roots.len(), 1);
        assert!(w.iter().any(|w| w.message.contains("loops")), "{w:?}");
    }

    #[test]
    fn cluster_inverse_bind_is_the_stored_transform() {
        let text = quad("", "")
            .replace(
                "Model: 10,",
                r#"Deformer: 30, "Deformer::Skin", "Skin" { }
    Deformer: 31, "SubDeformer::Cluster", "Cluster" {
        Indexes: *2 { a: 0,3 }
        Weights: *2 { a: 1,0.5 }
        Transform: *16 { a: 1,0,0,0, 0,1,0,0, 0,0,1,0, 0,0,5,1 }
        TransformLink: *16 { a: 1,0,0,0, 0,1,0,0, 0,0,1,0, 2,0,0,1 }
    }
    Model: 40, "Model::Bone", "LimbNode" { }
    Model: 10,"#,
            )
            .replace(
                r#"C: "OO",20,10"#,
                "C: \"OO\",20,10\n    C: \"OO\",30,20\n    C: \"OO\",31,30\n    C: \"OO\",40,31",
            );
        let (s, _) = load(&text);
        let skin = &s.skins[s.meshes[0].skin.unwrap()];
        assert_eq!(s.nodes[skin.joints[0].node].name, "Bone");
        let p = skin.joints[0].inverse_bind.transform_point3(DVec3::ZERO);
        assert_eq!(p, DVec3::new(0.0, 0.0, 5.0));
        assert_eq!(skin.influences[3], vec![(0, 0.5)]);
        assert!(skin.influences[1].is_empty());
    }

    #[test]
    fn light_intensity_is_a_hundredth_and_axes_come_from_global_settings() {
        let text = r#"; FBX 7.4.0 project file
GlobalSettings: { Properties70: {
    P: "UpAxis", "int", "Integer", "",2
    P: "FrontAxis", "int", "Integer", "",1
    P: "FrontAxisSign", "int", "Integer", "",-1
    P: "UnitScaleFactor", "double", "Number", "",2.54
} }
Objects: {
    NodeAttribute: 2, "NodeAttribute::Lamp", "Light" { Properties70: {
        P: "LightType", "enum", "", "",2
        P: "Intensity", "Number", "", "A",250
    } }
    Model: 1, "Model::Lamp", "Light" { }
}
Connections: { C: "OO",1,0
    C: "OO",2,1 }
"#;
        let (s, _) = load(text);
        assert_eq!(s.meta.axes, AxisSystem::Z_UP_RIGHT_HANDED);
        assert_eq!(s.meta.units, Units::Metres(0.0254));
        let NodeKind::Light(l) = s.nodes[0].kind else { panic!("{:?}", s.nodes[0].kind) };
        assert_eq!((s.lights[l].kind, s.lights[l].intensity), (LightKind::Spot, 2.5));
    }

    #[test]
    fn bind_poses_list_node_matrices() {
        let text = quad("", "").replace(
            "Model: 10,",
            r#"Pose: 50, "Pose::skinCluster1", "BindPose" {
        Type: "BindPose"
        NbPoseNodes: 1
        PoseNode: { Node: 10
            Matrix: *16 { a: 1,0,0,0, 0,1,0,0, 0,0,1,0, 3,4,5,1 } }
    }
    Model: 10,"#,
        );
        let doc = crate::formats::fbx::parse(text.as_bytes(), &Default::default()).unwrap();
        let graph = ObjectGraph::new(&doc).unwrap();
        let (_, _, ids) = import(&graph, &ReadOptions::default());
        assert_eq!(ids.bind_poses.len(), 1);
        assert_eq!(ids.bind_poses[0].name, "skinCluster1");
        assert_eq!(
            ids.bind_poses[0].nodes,
            vec![(0, DMat4::from_translation(DVec3::new(3.0, 4.0, 5.0)))]
        );
    }

    /// The quad of [`quad`] shown by 50 more models `1000 + k`; with `materials`, model
    /// `1000 + k` has its own material `2000 + k` (the quad's own model has none).
    fn instanced_quads(materials: bool) -> String {
        let mut text = quad("", "");
        for k in 0..50 {
            let mut objects = format!("Model: {}, \"Model::M{k}\", \"Mesh\" {{ }}", 1000 + k);
            let mut links = format!("C: \"OO\",20,{}\n", 1000 + k);
            if materials {
                objects += &format!("\n    Material: {}, \"Material::m{k}\", \"\" {{ }}", 2000 + k);
                links += &format!("    C: \"OO\",{},{}\n", 2000 + k, 1000 + k);
            }
            text = text.replace("Connections: {", &format!("Connections: {{ {links}"));
            text = text.replace("Objects: {", &format!("Objects: {{\n    {objects}"));
        }
        text
    }

    #[test]
    fn models_sharing_one_geometry_and_their_materials_share_one_mesh() {
        let mut opts = ReadOptions::default();
        // One copy costs 12 (vertices) + 2 × 4 (corners) = 20: a budget of 200 (which the
        // file's some 110 records fit in) holds one copy, not 51.
        opts.limits.max_elements = 200;
        let (s, w) = read(instanced_quads(false).as_bytes(), &opts).unwrap();
        assert_eq!(s.meshes.len(), 1);
        assert_eq!(s.nodes.len(), 51);
        assert!(s.nodes.iter().all(|n| n.mesh == Some(0) && n.kind == NodeKind::Mesh));
        assert!(w.is_empty(), "{w:?}");
    }

    #[test]
    fn instances_with_other_materials_get_copies_that_stop_at_the_element_limit() {
        let mut opts = ReadOptions::default();
        opts.limits.max_elements = 300;
        let (s, w) = read(instanced_quads(true).as_bytes(), &opts).unwrap();
        // Each copy costs 12 (vertices) + 2 × 4 (corners): the budget covers 15 copies, and
        // layers are not charged here (none).
        assert_eq!(s.meshes.len(), 15);
        assert!(w.iter().any(|w| w.message.contains("element limit")), "{w:?}");
        for n in s.nodes.iter().filter_map(|n| n.mesh) {
            assert_eq!(s.meshes[n].material_slots.len(), 1, "each copy has its model's material");
        }
    }

    #[test]
    fn fbx6_duplicate_name_keeps_geometry_and_connections_on_the_first_model() {
        // Two models named alike (as 3ds Max's ASCII writer makes of `"` and `&quot;`): the
        // name, and so the connection to the root and the inline geometry, is the first one's
        // (ufbx keeps the first element of a duplicated id), and the load warns.
        let text = r#"; FBX 6.1.0 project file
FBXHeaderExtension:  { FBXVersion: 6100 }
Objects:  {
    Model: "Model::Box", "Mesh" {
        Vertices: 0,0,0,1,0,0,0,1,0
        PolygonVertexIndex: 0,1,-3
    }
    Model: "Model::Box", "Mesh" {
        Vertices: 0,0,0,2,0,0,0,2,0,2,2,0
        PolygonVertexIndex: 0,1,2,-4
    }
}
Connections:  {
    Connect: "OO", "Model::Box", "Model::Scene"
    Connect: "OO", "Model::Box", "Model::Scene"
}
"#;
        let (s, w) = load(text);
        assert_eq!(s.nodes.len(), 2);
        let meshes: Vec<_> = s.nodes.iter().filter_map(|n| n.mesh).collect();
        assert_eq!(meshes.len(), 1, "only the first model has a mesh");
        assert_eq!(s.nodes[0].mesh, Some(meshes[0]));
        assert_eq!(s.meshes[meshes[0]].positions.len(), 3);
        assert!(w.iter().any(|w| w.message.contains("appears again")), "{w:?}");
    }

    #[test]
    fn fbx5_models_hold_geometry_materials_children_and_take_defaults() {
        let text = r#"; FBX 5.8.0 project file
Model: "Model::Box01" {
    Type: "Mesh"
    Material: "Material::Red" { Diffuse: 1,0,0 }
    Material: "Material::Blue" { Diffuse: 0,0,1 }
    Vertices: 0,0,0,1,0,0,0,1,0,1,1,0
    Normals: 0,0,1,0,0,1,0,0,1,0,0,1
    MaterialAssignation: "ByPolygon"
    Materials: 1,0
    PolygonVertexIndex: 0,1,-3,1,3,-3
    GeometryUVInfo: {
        MappingInformationType: "ByPolygon"
        TextureUV: 0,0,1,1
        TextureUVVerticeIndex: 0,1,0,1,1,0
    }
    Children: "Model::Light01"
}
Model: "Model::Light01" { Type: "Light"
    LightType: 2
    Color: 0.5,0.25,1
    Intensity: 50 }
Takes: { Take: "Take 001" { Model: "Model::Box01" { Channel: "Transform" {
    Channel: "T" { Channel: "X" { Default: 5 } Channel: "Y" { Default: 6 } Channel: "Z" { Default: 7 } }
    Channel: "S" { Channel: "X" { Default: 2 } }
} } } }
"#;
        let (s, _) = load(text);
        assert_eq!(s.nodes.len(), 2);
        assert_eq!(s.nodes[0].kind, NodeKind::Mesh);
        assert_eq!(s.nodes[0].transform.translation, DVec3::new(5.0, 6.0, 7.0));
        assert_eq!(s.nodes[0].transform.scale, DVec3::new(2.0, 1.0, 1.0));
        assert_eq!(s.nodes[1].parent, Some(0));
        let m = &s.meshes[0];
        assert_eq!((m.positions.len(), m.polygon_count()), (4, 2));
        assert_eq!(m.normals.as_ref().unwrap().mapping, Mapping::PerVertex);
        // `ByPolygon` with one index per corner is read per corner.
        assert_eq!(m.uv_sets[0].uvs.get(3, 5, 1), Some(Vec2::new(0.0, 0.0)));
        assert_eq!(m.uv_sets[0].uvs.get(1, 1, 0), Some(Vec2::new(1.0, 1.0)));
        assert_eq!(m.polygon_materials, vec![1, 0]);
        let names: Vec<_> =
            m.material_slots.iter().map(|k| &s.materials[k.unwrap()].name).collect();
        assert_eq!(names, ["Red", "Blue"]);
        assert_eq!(s.materials[0].diffuse, Vec3::new(1.0, 0.0, 0.0));
        let NodeKind::Light(l) = s.nodes[1].kind else { panic!("{:?}", s.nodes[1].kind) };
        assert_eq!((s.lights[l].kind, s.lights[l].intensity), (LightKind::Spot, 0.5));
        assert_eq!(s.lights[l].color, Vec3::new(0.5, 0.25, 1.0));
    }

    #[test]
    fn fbx6_models_hold_their_geometry() {
        let text = r#"; FBX 6.1.0 project file
Objects: {
    Model: "Model::Tri", "Mesh" {
        Properties60: { Property: "Lcl Translation", "Lcl Translation", "A+",0,0,7 }
        Vertices: 0,0,0,1,0,0,0,1,0
        PolygonVertexIndex: 0,1,-3
    }
}
Connections: { Connect: "OO", "Model::Tri", "Model::Scene" }
"#;
        let (s, _) = load(text);
        assert_eq!(s.nodes[0].kind, NodeKind::Mesh);
        assert_eq!(s.meshes[0].positions.len(), 3);
        assert_eq!(s.nodes[0].transform.translation, DVec3::new(0.0, 0.0, 7.0));
    }

    #[test]
    fn fbx6_texture_layers_give_each_polygons_material_its_texture() {
        // Two triangles, materials 0 and 1 by polygon; `LayerElementTexture` names textures
        // 1 and 0 of those connected to the model (file order: a, b), and the emissive
        // layer texture 0 for all.
        let text = r#"; FBX 6.1.0 project file
Objects: {
    Model: "Model::M", "Mesh" {
        Vertices: 0,0,0,1,0,0,0,1,0,1,1,0
        PolygonVertexIndex: 0,1,-3,1,3,-3
        LayerElementMaterial: 0 {
            MappingInformationType: "ByPolygon"
            ReferenceInformationType: "IndexToDirect"
            Materials: 0,1
        }
        LayerElementTexture: 0 {
            MappingInformationType: "ByPolygon"
            ReferenceInformationType: "IndexToDirect"
            TextureId: 1,0
        }
        LayerElementEmissive_Textures: 0 {
            MappingInformationType: "AllSame"
            ReferenceInformationType: "IndexToDirect"
            TextureId: 0
        }
    }
    Material: "Material::red", "" { }
    Material: "Material::blue", "" { }
    Texture: "Texture::a", "" {
        RelativeFilename: "a.png"
    }
    Texture: "Texture::b", "" {
        RelativeFilename: "b.png"
    }
}
Connections: {
    Connect: "OO", "Model::M", "Model::Scene"
    Connect: "OO", "Material::red", "Model::M"
    Connect: "OO", "Material::blue", "Model::M"
    Connect: "OO", "Texture::a", "Model::M"
    Connect: "OO", "Texture::b", "Model::M"
}
"#;
        let (s, _) = load(text);
        let maps = |name: &str| -> Vec<(MapSlot, String)> {
            let m = s.materials.iter().find(|m| m.name == name).expect("material");
            m.maps.iter().map(|t| (t.slot, t.file.clone())).collect()
        };
        // Per material in texture order: red has b (diffuse) and a (emissive); blue has a for
        // both.
        assert_eq!(
            maps("red"),
            vec![(MapSlot::Emissive, "a.png".into()), (MapSlot::Diffuse, "b.png".into())]
        );
        assert_eq!(
            maps("blue"),
            vec![(MapSlot::Diffuse, "a.png".into()), (MapSlot::Emissive, "a.png".into())]
        );
    }

    #[test]
    fn file_names_that_are_not_utf8_get_one_replacement_per_bad_byte() {
        // As ufbx's default unicode handling: 0xAA and 0xBB (lone continuation bytes), 0xCC
        // (a lead byte followed by no continuation), NUL.
        assert_eq!(
            utf8_per_byte(b"x\xaa\xbb\xcc_\0.png"),
            "x\u{FFFD}\u{FFFD}\u{FFFD}_\u{FFFD}.png"
        );
        assert_eq!(utf8_per_byte("é.png".as_bytes()), "é.png");
    }

    #[test]
    fn tangents_are_the_ones_the_layer_binds_to_the_first_uv_set() {
        // Tangent 5 (x) is stored first, tangent 2 (y) second; Layer 0 binds UV set 0 to
        // tangent 2.
        let geo = |layers: &str| {
            format!(
                r#"; FBX 7.5.0 project file
Objects: {{
    Geometry: 1, "Geometry::g", "Mesh" {{
        Vertices: *9 {{ a: 0,0,0,1,0,0,0,1,0 }}
        PolygonVertexIndex: *3 {{ a: 0,1,-3 }}
        LayerElementTangent: 5 {{
            MappingInformationType: "AllSame"
            ReferenceInformationType: "Direct"
            Tangents: *3 {{ a: 1,0,0 }}
        }}
        LayerElementTangent: 2 {{
            MappingInformationType: "AllSame"
            ReferenceInformationType: "Direct"
            Tangents: *3 {{ a: 0,1,0 }}
        }}
        LayerElementUV: 0 {{
            MappingInformationType: "AllSame"
            ReferenceInformationType: "Direct"
            UV: *2 {{ a: 0,0 }}
        }}
        {layers}
    }}
    Model: 2, "Model::m", "Mesh" {{ }}
}}
Connections: {{
    C: "OO",2,0
    C: "OO",1,2
}}
"#
            )
        };
        let bound = r#"Layer: 0 {
            LayerElement: {
                Type: "LayerElementTangent"
                TypedIndex: 2
            }
            LayerElement: {
                Type: "LayerElementUV"
                TypedIndex: 0
            }
        }"#;
        let tangent = |text: &str| {
            let (s, _) = load(text);
            s.meshes[0].tangents.as_ref().and_then(|t| t.get(0, 0, 0))
        };
        assert_eq!(tangent(&geo(bound)), Some(Vec3::Y));
        // No Layer records: the element of lowest index.
        assert_eq!(tangent(&geo("")), Some(Vec3::Y));
        // A Layer that binds no tangent to the first UV set: none (ufbx: not `exists`).
        let unbound = r#"Layer: 0 {
            LayerElement: {
                Type: "LayerElementUV"
                TypedIndex: 0
            }
        }"#;
        assert_eq!(tangent(&geo(unbound)), None);
    }
}

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
//!   [`Node::geometry_transform`] = `T · R(XYZ) · S`; `Visibility` below 1 in magnitude (ufbx truncates it to an integer) → [`Node::hidden`].
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
//! - User properties: a model's or material's properties flagged `U` (FBX 7 and 6 alike)
//!   become [`Node::user_properties`] and [`Material::user_properties`] (`user_props.rs`);
//!   their curves are node channels like any animated property.
//! - [`Metadata`]: format `fbx`, version, axes and units from `GlobalSettings`, frame rate from
//!   `TimeMode`, frame range from `TimeSpanStart/Stop`.
//!
//! Animation is read by the FBX animation module from the same graph, with the ids in
//! [`ImportIds`].
//!
//! # The passes
//! [`import`] runs one pass per thing the scene model holds, each in its own file, over the
//! shared state here (the `Importer`: graph, scene so far, warnings, ids, element budget):
//! `metadata.rs` (header and `GlobalSettings`), `materials.rs` (materials and textures),
//! `nodes.rs` (models: transforms, kinds, instances), which calls `cameras_lights.rs` and
//! `geometry.rs` (meshes and layer elements), which calls `deformers.rs` (skins, blend shapes,
//! geometry caches); then `poses.rs` (bind poses) and `hierarchy.rs` (parents, skin joints).
//!
//! [`Node`]: crate::scene::Node
//! [`NodeKind::Mesh`]: crate::scene::NodeKind::Mesh
//! [`NodeKind::Null`]: crate::scene::NodeKind::Null
//! [`Node::transform`]: crate::scene::Node::transform
//! [`Pivots`]: crate::scene::Pivots
//! [`InheritType::from_fbx`]: crate::scene::InheritType::from_fbx
//! [`Node::geometry_transform`]: crate::scene::Node::geometry_transform
//! [`Node::hidden`]: crate::scene::Node::hidden
//! [`Node::user_properties`]: crate::scene::Node::user_properties
//! [`Material::user_properties`]: crate::scene::Material::user_properties
//! [`Mesh`]: crate::scene::Mesh
//! [`Node::mesh`]: crate::scene::Node::mesh
//! [`Mapping`]: crate::scene::Mapping
//! [`Skin`]: crate::scene::Skin
//! [`SkinJoint::inverse_bind`]: crate::scene::SkinJoint::inverse_bind
//! [`MorphTarget`]: crate::scene::MorphTarget
//! [`MorphTarget::inbetweens`]: crate::scene::MorphTarget::inbetweens
//! [`Material`]: crate::scene::Material
//! [`Material::update_fbx_derived`]: crate::scene::Material::update_fbx_derived
//! [`TextureMap::wrap`]: crate::scene::TextureMap::wrap
//! [`TextureMap::embedded`]: crate::scene::TextureMap::embedded
//! [`Metadata`]: crate::scene::Metadata

mod cameras_lights;
mod deformers;
mod geometry;
mod hierarchy;
mod materials;
mod metadata;
mod nodes;
mod pbr;
mod poses;
mod user_props;

use glam::DMat4;

use super::objects::{IdMap, ObjectGraph};
use super::tree::{NodeRef, Property};
use crate::io::ReadOptions;
use crate::scene::{Scene, Warning};

pub use super::shared::{rotation_setup, ImportIds, RotationSetup};
pub use deformers::{blender_binary_exporter, blender_exporter_version};
pub use materials::SANE_COLOR_LIMIT;

/// A stored bind pose; lives in the scene model ([`Scene::bind_poses`]).
pub use crate::scene::BindPose;

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
    im.user_properties();
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
    /// (skin index, joint index, bone model id, whether the cluster stores `Transform` but no
    /// `TransformLink`: its bind-pose matrix may then give [`Skin::mesh_bind`](crate::scene::Skin::mesh_bind)).
    pending: Vec<(usize, usize, i64, bool)>,
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

fn child_f64(node: NodeRef<'_, '_>, name: &str) -> Vec<f64> {
    node.child(name).map(numbers_f64).unwrap_or_default()
}

fn child_i64(node: NodeRef<'_, '_>, name: &str) -> Vec<i64> {
    node.child(name).map(numbers_i64).unwrap_or_default()
}

fn child_str<'d>(node: NodeRef<'d, '_>, name: &str) -> &'d str {
    node.child(name).and_then(|n| n.property(0)).and_then(Property::as_str).unwrap_or("")
}

/// A 4×4 matrix record (16 numbers, columns first as FBX stores them).
fn child_matrix(node: NodeRef<'_, '_>, name: &str) -> Option<DMat4> {
    let v = child_f64(node, name);
    let a: [f64; 16] = v.get(..16)?.try_into().ok()?;
    a.iter().all(|x| x.is_finite()).then(|| DMat4::from_cols_array(&a))
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
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn load(text: &str) -> (Scene, Vec<Warning>) {
        read(text.as_bytes(), &ReadOptions::default()).unwrap()
    }

    /// A quad (0,0,0) (1,0,0) (1,1,0) (0,1,0) as geometry 20 of model 10, with `layers` added
    /// to the geometry and `model_props` to the model's Properties70.
    pub(super) fn quad(model_props: &str, layers: &str) -> String {
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
}

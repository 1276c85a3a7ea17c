//! `keyscene inspect`: what a scene file holds, as a readable summary or as JSON.
//!
//! The JSON document is [`Report`]; its fields and their order are stable (documented in
//! `docs/cli.md`). Fields may be added at the end of an object in later versions; none is
//! renamed or removed without a version note.

use std::fmt::Write as _;
use std::path::Path;

use keyscene::anim::THREE_DS_FPS;
use keyscene::scene::{LightKind, MapSlot, Projection, Scene, Units};
use serde::Serialize;

use crate::{emit, CliError};

/// Numbers in the JSON document: finite ones as JSON numbers, inf and NaN (which JSON
/// cannot hold, and serde_json would print as `null`) as the strings `"inf"`, `"-inf"` and
/// `"nan"` (issue 12 §3, docs/cli.md).
pub mod json_num {
    use serde::{Serialize, Serializer};

    /// A float, or a container of floats, serialized as [`json_num`](self) says.
    pub trait Num {
        /// Serializes `self`.
        fn put<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error>;
    }

    /// `"nan"`, `"inf"` or `"-inf"` for a number that is not finite.
    pub fn special(v: f64) -> &'static str {
        if v.is_nan() {
            "nan"
        } else if v > 0.0 {
            "inf"
        } else {
            "-inf"
        }
    }

    impl Num for f64 {
        fn put<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            if self.is_finite() {
                s.serialize_f64(*self)
            } else {
                s.serialize_str(special(*self))
            }
        }
    }

    impl Num for f32 {
        fn put<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            if self.is_finite() {
                s.serialize_f32(*self)
            } else {
                s.serialize_str(special(f64::from(*self)))
            }
        }
    }

    struct W<'a, T>(&'a T);

    impl<T: Num> Serialize for W<'_, T> {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            self.0.put(s)
        }
    }

    impl<T: Num> Num for Option<T> {
        fn put<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            match self {
                Some(v) => s.serialize_some(&W(v)),
                None => s.serialize_none(),
            }
        }
    }

    impl<T: Num, const N: usize> Num for [T; N] {
        fn put<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.collect_seq(self.iter().map(W))
        }
    }

    impl<T: Num> Num for Vec<T> {
        fn put<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.collect_seq(self.iter().map(W))
        }
    }

    /// For `#[serde(serialize_with = "json_num::ser")]`.
    pub fn ser<T: Num, S: Serializer>(v: &T, s: S) -> Result<S::Ok, S::Error> {
        v.put(s)
    }

    #[cfg(test)]
    mod tests {
        #[derive(serde::Serialize)]
        struct T {
            #[serde(serialize_with = "super::ser")]
            a: [f32; 3],
            #[serde(serialize_with = "super::ser")]
            b: Option<f64>,
            #[serde(serialize_with = "super::ser")]
            c: Option<[f64; 2]>,
        }

        #[test]
        fn inf_and_nan_are_strings_finite_numbers_stay_numbers() {
            let t = T {
                a: [f32::NAN, f32::INFINITY, 0.5],
                b: Some(f64::NEG_INFINITY),
                c: Some([1.0, f64::NAN]),
            };
            assert_eq!(
                serde_json::to_string(&t).unwrap(),
                r#"{"a":["nan","inf",0.5],"b":"-inf","c":[1.0,"nan"]}"#
            );
        }
    }
}

/// The `inspect --json` document.
#[derive(Debug, Serialize)]
pub struct Report {
    /// The file as given on the command line.
    pub file: String,
    /// Source format (`3ds`, `gltf`, …).
    pub format: String,
    /// The format's version as the file states it, or null.
    pub version: Option<u32>,
    /// Metres per scene unit, or null when the file states no unit.
    #[serde(serialize_with = "json_num::ser")]
    pub metres_per_unit: Option<f64>,
    /// The axis system of the coordinates.
    pub axes: Axes,
    /// Frames per second the file stores, or null (3DS stores none; 30 is assumed).
    #[serde(serialize_with = "json_num::ser")]
    pub frame_rate: Option<f64>,
    /// First and last frame of the file's stored timeline (FBX `TimeSpanStart`/`Stop`, the
    /// 3DS keyframer segment), or null. What the animations span is `animation_range`.
    #[serde(serialize_with = "json_num::ser")]
    pub frame_range: Option<[f64; 2]>,
    /// The first frame of any animation and the last frame of any (what a user means by the
    /// file's range), or null without animation.
    #[serde(serialize_with = "json_num::ser")]
    pub animation_range: Option<[f64; 2]>,
    /// Other file-level values the reader kept, in file order.
    pub properties: Vec<Property>,
    /// How many of each thing the scene holds.
    pub counts: Counts,
    /// Every node in scene order.
    pub nodes: Vec<NodeInfo>,
    /// Every mesh.
    pub meshes: Vec<MeshInfo>,
    /// Every material.
    pub materials: Vec<MaterialInfo>,
    /// Every camera.
    pub cameras: Vec<CameraInfo>,
    /// Every light.
    pub lights: Vec<LightInfo>,
    /// Every animation with its tracks.
    pub animations: Vec<AnimationInfo>,
    /// Every stored bind pose (FBX `Pose` of type `BindPose`), in file order; empty for
    /// formats that store none.
    pub bind_poses: Vec<BindPoseInfo>,
}

/// Up and front axes as signed axis names (`+Z`, `-Y`), and the handedness.
#[derive(Debug, Serialize)]
pub struct Axes {
    /// The up axis.
    pub up: String,
    /// The front axis.
    pub front: String,
    /// `true` for right-handed coordinates.
    pub right_handed: bool,
}

/// A named file-level value.
#[derive(Debug, Serialize)]
pub struct Property {
    /// The name.
    pub name: String,
    /// The value as text.
    pub value: String,
}

/// Scene totals.
#[derive(Debug, Serialize)]
pub struct Counts {
    /// Nodes.
    pub nodes: usize,
    /// Meshes.
    pub meshes: usize,
    /// Vertices over all meshes (each mesh once, however many nodes show it).
    pub vertices: usize,
    /// Polygons over all meshes.
    pub faces: usize,
    /// Materials.
    pub materials: usize,
    /// Cameras.
    pub cameras: usize,
    /// Lights.
    pub lights: usize,
    /// Animations.
    pub animations: usize,
}

/// One node.
#[derive(Debug, Serialize)]
pub struct NodeInfo {
    /// Index in the scene's node list (what `parent`/`children` refer to).
    pub index: usize,
    /// The node's name.
    pub name: String,
    /// The instance name (3DS INSTANCE_NAME), else empty.
    pub instance: String,
    /// The node kind (`mesh`, `null`, `bone`, `camera`, `camera_target`, `light`,
    /// `light_target`, `ambient`).
    pub kind: &'static str,
    /// Parent index, or null for a root.
    pub parent: Option<usize>,
    /// Child indices.
    pub children: Vec<usize>,
    /// Mesh index, or null.
    pub mesh: Option<usize>,
    /// Hidden at rest.
    pub hidden: bool,
    /// The source's node id (3DS NODE_ID), or null.
    pub source_id: Option<i64>,
    /// User-defined properties (FBX `U` properties, glTF `extras`) at rest, in file order;
    /// omitted when there are none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub user_properties: Vec<UserPropertyInfo>,
}

/// One user-defined property (`keyscene::scene::UserProperty`).
#[derive(Debug, Serialize)]
pub struct UserPropertyInfo {
    /// The property's name.
    pub name: String,
    /// `bool`, `int`, `enum`, `number`, `vector`, `color`, `color_alpha`, `string` or `time`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// The value: a boolean, an integer (an enum's index), a number (a time in seconds), an
    /// array of 3 or 4 numbers, or a string; numbers that are not finite as `json_num` strings.
    pub value: serde_json::Value,
    /// An enum's choices, in order; omitted for other types.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enum_names: Option<Vec<String>>,
    /// The stored lower bound (FBX `Number`/`Integer`), or null.
    pub min: Option<f64>,
    /// The stored upper bound, or null.
    pub max: Option<f64>,
    /// An animation animates it.
    pub animated: bool,
}

/// [`UserPropertyInfo`] of `p`.
pub fn user_property_info(p: &keyscene::scene::UserProperty, animated: bool) -> UserPropertyInfo {
    use keyscene::scene::UserValue;
    use serde_json::Value;
    let num = |x: f64| {
        serde_json::Number::from_f64(x)
            .map_or_else(|| Value::String(json_num::special(x).into()), Value::Number)
    };
    let value = match &p.value {
        UserValue::Bool(b) => Value::Bool(*b),
        UserValue::Int(i) | UserValue::Enum { index: i, .. } => Value::from(*i),
        UserValue::Number(x) | UserValue::Time(x) => num(*x),
        UserValue::Vector(v) | UserValue::Color(v) => Value::Array(v.to_array().map(num).to_vec()),
        UserValue::ColorAlpha(v) => Value::Array(v.to_array().map(num).to_vec()),
        UserValue::String(s) => Value::String(s.clone()),
    };
    UserPropertyInfo {
        name: p.name.clone(),
        kind: p.value.kind(),
        value,
        enum_names: match &p.value {
            UserValue::Enum { names, .. } => Some(names.clone()),
            _ => None,
        },
        min: p.min,
        max: p.max,
        animated,
    }
}

/// One mesh.
#[derive(Debug, Serialize)]
pub struct MeshInfo {
    /// Index in the scene's mesh list.
    pub index: usize,
    /// The mesh's name.
    pub name: String,
    /// Stored vertices.
    pub vertex_count: usize,
    /// Polygons.
    pub face_count: usize,
    /// Number of UV sets.
    pub uv_sets: usize,
    /// The mesh stores normals.
    pub has_normals: bool,
    /// The mesh stores smoothing groups.
    pub has_smoothing_groups: bool,
    /// Material of every slot: its name, or null when the slot names a missing material.
    pub materials: Vec<Option<String>>,
    /// Number of morph targets.
    pub morph_targets: usize,
    /// The skin deforming the mesh, when there is one.
    pub skin: Option<SkinInfo>,
    /// The blend shapes (morph targets) as channels, targets and in-betweens, when any.
    pub blend_shapes: Option<BlendShapeInfo>,
}

/// A mesh's skin (assimp `info` shows bones the same way).
#[derive(Debug, Serialize)]
pub struct SkinInfo {
    /// Index in the scene's skin list.
    pub index: usize,
    /// Joints (bones) of the skin.
    pub joints: usize,
    /// The most joints any one vertex is weighted to (weights of 0 not counted).
    pub max_influences_per_vertex: usize,
    /// Vertices with at least one non-zero weight.
    pub skinned_vertices: usize,
}

/// A mesh's blend shapes: each morph target is one channel (FBX `BlendShapeChannel`), which
/// holds its target shape and any in-between shapes.
#[derive(Debug, Serialize)]
pub struct BlendShapeInfo {
    /// Channels (morph targets).
    pub channels: usize,
    /// Shapes over all channels: one target per channel plus its in-betweens.
    pub targets: usize,
    /// In-between shapes over all channels.
    pub inbetweens: usize,
}

/// One material.
#[derive(Debug, Serialize)]
pub struct MaterialInfo {
    /// Index in the scene's material list.
    pub index: usize,
    /// The material's name.
    pub name: String,
    /// Ambient colour as shown (colour × factor, `Material::effective_ambient`), linear RGB 0–1.
    #[serde(serialize_with = "json_num::ser")]
    pub ambient: [f32; 3],
    /// Diffuse colour as shown (colour × factor, `Material::effective_diffuse`), linear RGB 0–1.
    #[serde(serialize_with = "json_num::ser")]
    pub diffuse: [f32; 3],
    /// Specular colour, linear RGB 0–1.
    #[serde(serialize_with = "json_num::ser")]
    pub specular: [f32; 3],
    /// Shininess 0–1.
    #[serde(serialize_with = "json_num::ser")]
    pub shininess: f32,
    /// Transparency 0 (opaque) – 1.
    #[serde(serialize_with = "json_num::ser")]
    pub transparency: f32,
    /// Drawn from both sides.
    pub two_sided: bool,
    /// Texture maps.
    pub maps: Vec<MapInfo>,
    /// The shading model (`scene::ShadingModel::name`: `lambert`, `phong`,
    /// `arnold_standard_surface`, `openpbr_material`…), or null for sources without one (3DS,
    /// 3DA, OBJ, plain glTF).
    pub shading_model: Option<&'static str>,
    /// The PBR values of a physically based shading model, each apart (colours and their
    /// factors separately), those the file stores or maps; empty for Lambert, Phong and
    /// sources without a shading model.
    pub pbr: Vec<PbrInfo>,
    /// User-defined properties (FBX `U` properties, glTF `extras`), in file order; omitted
    /// when there are none; `animated`: an animation has curves on it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub user_properties: Vec<UserPropertyInfo>,
}

/// One PBR value of a material (`scene::PbrValue`).
#[derive(Debug, Serialize)]
pub struct PbrInfo {
    /// The value's name, as ufbx's `ufbx_material_pbr_maps` fields (`base_color`,
    /// `base_factor`, `roughness`, `metalness`, `specular_ior`, `emission_factor`…).
    pub name: &'static str,
    /// The value: `[r, g, b]` for colours, `[x]` for scalars.
    #[serde(serialize_with = "json_num::ser")]
    pub value: Vec<f32>,
    /// Whether the file stores the value (else derived, e.g. a factor of a stored colour).
    pub stored: bool,
    /// The map connected to the value: its file, or null.
    pub map: Option<String>,
    /// The channel of the map the value reads (`rgb`, `r`, `g`, `b`, `a`), or null.
    pub channel: Option<&'static str>,
}

/// One texture map.
#[derive(Debug, Serialize)]
pub struct MapInfo {
    /// What the map drives (`diffuse`, `opacity`, `bump`, `specular`, `shininess`,
    /// `reflection`, `emissive`).
    pub slot: &'static str,
    /// The file name as stored.
    pub file: String,
    /// The file found next to the scene, or null when it was not found.
    pub resolved: Option<String>,
    /// Size in bytes of the image the scene file carries (FBX `Video` › `Content`), or null
    /// when it carries none; an embedded image is the one writers and `render` use.
    pub embedded_bytes: Option<usize>,
}

/// One camera.
#[derive(Debug, Serialize)]
pub struct CameraInfo {
    /// Index in the scene's camera list.
    pub index: usize,
    /// The camera's name.
    pub name: String,
    /// Field of view in degrees.
    #[serde(serialize_with = "json_num::ser")]
    pub fov_degrees: f64,
    /// The target node index, or null.
    pub target: Option<usize>,
    /// An orthographic camera's `[xmag, ymag]` (half the view's width and height, scene
    /// units); absent for a perspective camera.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub orthographic: Option<[f64; 2]>,
}

/// One light.
#[derive(Debug, Serialize)]
pub struct LightInfo {
    /// Index in the scene's light list.
    pub index: usize,
    /// The light's name.
    pub name: String,
    /// `point`, `spot`, `directional` or `ambient`.
    pub kind: &'static str,
    /// Colour, linear RGB 0–1.
    #[serde(serialize_with = "json_num::ser")]
    pub color: [f32; 3],
    /// Switched on.
    pub on: bool,
    /// The target node index, or null.
    pub target: Option<usize>,
}

/// One animation.
#[derive(Debug, Serialize)]
pub struct AnimationInfo {
    /// Index in the scene's animation list.
    pub index: usize,
    /// The animation's name (empty for 3DS).
    pub name: String,
    /// Frames per second of its key times.
    #[serde(serialize_with = "json_num::ser")]
    pub fps: f64,
    /// First and last frame.
    #[serde(serialize_with = "json_num::ser")]
    pub frame_range: [f64; 2],
    /// Every track, in the animation's channel order.
    pub tracks: Vec<TrackInfo>,
}

/// One track of one node.
#[derive(Debug, Serialize)]
pub struct TrackInfo {
    /// The node index.
    pub node: usize,
    /// The node's name.
    pub node_name: String,
    /// Which value (`translation`, `rotation`, `scale`, `hidden`, `morph`, `fov`, `roll`,
    /// `color`, `hotspot`, `falloff`).
    pub track: &'static str,
    /// Number of keys.
    pub keys: usize,
}

/// One stored bind pose: the name `convert --bind-pose NAME` takes and the nodes it poses.
#[derive(Debug, Serialize)]
pub struct BindPoseInfo {
    /// The pose's name (FBX: the `Pose` object's name, e.g. `BindPose` or `skinCluster1`).
    pub name: String,
    /// Number of scene nodes the pose stores a bind-time world matrix for (pose entries naming
    /// no scene node are not counted).
    pub node_count: usize,
    /// Those nodes' indices, in the pose's order.
    pub nodes: Vec<usize>,
}

fn slot(s: MapSlot) -> &'static str {
    match s {
        MapSlot::Diffuse => "diffuse",
        MapSlot::Opacity => "opacity",
        MapSlot::Bump => "bump",
        MapSlot::Specular => "specular",
        MapSlot::Shininess => "shininess",
        MapSlot::Reflection => "reflection",
        MapSlot::Emissive => "emissive",
    }
}

fn light_kind(k: LightKind) -> &'static str {
    match k {
        LightKind::Point => "point",
        LightKind::Spot => "spot",
        LightKind::Directional => "directional",
        LightKind::Ambient => "ambient",
    }
}

/// Gathers the report for `scene`, read from `file`: the header from the metadata, then one
/// section per kind of element.
pub fn report(scene: &Scene, file: &Path) -> Report {
    let meta = &scene.meta;
    Report {
        file: file.display().to_string(),
        format: meta.format.clone(),
        version: meta.version,
        metres_per_unit: match meta.units {
            Units::Unitless => None,
            Units::Metres(m) => Some(m),
        },
        axes: Axes {
            up: meta.axes.up.to_string(),
            front: meta.axes.front.to_string(),
            right_handed: meta.axes.right_handed,
        },
        frame_rate: meta.frame_rate,
        frame_range: meta.frame_range.map(|(a, b)| [a, b]),
        animation_range: scene
            .animations
            .iter()
            .map(|a| [a.frame_range.0, a.frame_range.1])
            .reduce(|x, y| [x[0].min(y[0]), x[1].max(y[1])]),
        properties: meta
            .properties
            .iter()
            .map(|(n, v)| Property { name: n.clone(), value: v.clone() })
            .collect(),
        counts: counts_section(scene),
        nodes: nodes_section(scene),
        meshes: meshes_section(scene),
        materials: materials_section(scene),
        cameras: cameras_section(scene),
        lights: lights_section(scene),
        animations: animations_section(scene),
        bind_poses: bind_poses_section(scene),
    }
}

/// The element counts of `scene`.
fn counts_section(scene: &Scene) -> Counts {
    Counts {
        nodes: scene.nodes.len(),
        meshes: scene.meshes.len(),
        vertices: scene.meshes.iter().map(|m| m.positions.len()).sum(),
        faces: scene.meshes.iter().map(|m| m.polygon_count()).sum(),
        materials: scene.materials.len(),
        cameras: scene.cameras.len(),
        lights: scene.lights.len(),
        animations: scene.animations.len(),
    }
}

/// Every node: name, kind, parent, children, mesh, source id.
fn nodes_section(scene: &Scene) -> Vec<NodeInfo> {
    scene
        .nodes
        .iter()
        .enumerate()
        .map(|(index, n)| NodeInfo {
            index,
            name: n.name.clone(),
            instance: n.instance.clone(),
            kind: n.kind.name(),
            parent: n.parent,
            children: n.children.clone(),
            mesh: n.mesh,
            hidden: n.hidden,
            source_id: n.source.id,
            user_properties: n
                .user_properties()
                .iter()
                .map(|p| user_property_info(p, scene.animated_user_property(index, &p.name)))
                .collect(),
        })
        .collect()
}

/// Every mesh: sizes, layers, material names, skin and blend shapes.
fn meshes_section(scene: &Scene) -> Vec<MeshInfo> {
    scene
        .meshes
        .iter()
        .enumerate()
        .map(|(index, m)| MeshInfo {
            index,
            name: m.name.clone(),
            vertex_count: m.positions.len(),
            face_count: m.polygon_count(),
            uv_sets: m.uv_sets.len(),
            has_normals: m.normals.is_some(),
            has_smoothing_groups: m.smoothing_groups.is_some(),
            materials: m
                .material_slots
                .iter()
                .map(|s| s.and_then(|i| scene.materials.get(i)).map(|mat| mat.name.clone()))
                .collect(),
            morph_targets: m.morph_targets.len(),
            skin: m.skin.and_then(|i| scene.skins.get(i).map(|k| (i, k))).map(|(index, k)| {
                let live = |v: &Vec<(u32, f32)>| v.iter().filter(|w| w.1 != 0.0).count();
                SkinInfo {
                    index,
                    joints: k.joints.len(),
                    max_influences_per_vertex: k.influences.iter().map(live).max().unwrap_or(0),
                    skinned_vertices: k.influences.iter().filter(|v| live(v) > 0).count(),
                }
            }),
            blend_shapes: (!m.morph_targets.is_empty()).then(|| {
                let inbetweens: usize = m.morph_targets.iter().map(|t| t.inbetweens.len()).sum();
                BlendShapeInfo {
                    channels: m.morph_targets.len(),
                    targets: m.morph_targets.len() + inbetweens,
                    inbetweens,
                }
            }),
        })
        .collect()
}

/// Every material: colours as shown, factors, maps.
fn materials_section(scene: &Scene) -> Vec<MaterialInfo> {
    scene
        .materials
        .iter()
        .enumerate()
        .map(|(index, m)| MaterialInfo {
            index,
            name: m.name.clone(),
            ambient: m.effective_ambient().to_array(),
            diffuse: m.effective_diffuse().to_array(),
            specular: m.specular.to_array(),
            shininess: m.shininess,
            transparency: m.transparency,
            two_sided: m.two_sided,
            maps: m
                .maps
                .iter()
                .map(|t| MapInfo {
                    slot: slot(t.slot),
                    file: t.file.clone(),
                    resolved: t.resolved.as_ref().map(|p| p.display().to_string()),
                    embedded_bytes: t.embedded.as_ref().map(|b| b.len()),
                })
                .collect(),
            shading_model: m.pbr.as_ref().map(|p| p.model.name()),
            pbr: pbr_values(m),
            user_properties: m
                .user_properties
                .iter()
                .enumerate()
                .map(|(k, p)| {
                    let animated = scene.material_channels.iter().any(|c| {
                        c.material == index
                            && c.property == keyscene::anim::MaterialProperty::User(k as u16)
                    });
                    user_property_info(p, animated)
                })
                .collect(),
        })
        .collect()
}

/// The PBR values `inspect` lists for `m` ([`MaterialInfo::pbr`]).
fn pbr_values(m: &keyscene::scene::Material) -> Vec<PbrInfo> {
    let Some(pbr) = m.pbr.as_ref().filter(|p| p.model.is_pbr()) else { return Vec::new() };
    keyscene::scene::PbrProperty::ALL
        .iter()
        .map(|&p| (p, pbr.get(p)))
        .filter(|(_, v)| v.has_value || v.texture.is_some())
        .map(|(p, v)| PbrInfo {
            name: p.name(),
            value: if p.is_color() { v.rgb().to_array().to_vec() } else { vec![v.scalar()] },
            stored: v.has_value,
            map: v.texture.as_ref().map(|t| t.file.clone()),
            channel: v.texture.as_ref().map(|_| v.channel.name()),
        })
        .collect()
}

/// Every camera: field of view and target node.
fn cameras_section(scene: &Scene) -> Vec<CameraInfo> {
    scene
        .cameras
        .iter()
        .enumerate()
        .map(|(index, c)| CameraInfo {
            index,
            name: c.name.clone(),
            fov_degrees: c.fov_degrees,
            target: c.target,
            orthographic: match c.projection {
                Projection::Perspective => None,
                Projection::Orthographic { xmag, ymag } => Some([xmag, ymag]),
            },
        })
        .collect()
}

/// Every light: kind, colour, on, target node.
fn lights_section(scene: &Scene) -> Vec<LightInfo> {
    scene
        .lights
        .iter()
        .enumerate()
        .map(|(index, l)| LightInfo {
            index,
            name: l.name.clone(),
            kind: light_kind(l.kind),
            color: l.color.to_array(),
            on: l.on,
            target: l.target,
        })
        .collect()
}

/// Every animation: rate, range, and per node and track the key count.
fn animations_section(scene: &Scene) -> Vec<AnimationInfo> {
    scene
        .animations
        .iter()
        .enumerate()
        .map(|(index, a)| AnimationInfo {
            index,
            name: a.name.clone(),
            fps: a.fps,
            frame_range: [a.frame_range.0, a.frame_range.1],
            tracks: a
                .channels
                .iter()
                .map(|ch| TrackInfo {
                    node: ch.node,
                    node_name: scene.nodes.get(ch.node).map(|n| n.name.clone()).unwrap_or_default(),
                    track: ch.target.name(),
                    keys: ch.target.key_count(),
                })
                .collect(),
        })
        .collect()
}

/// The stored bind poses: name and posed nodes.
fn bind_poses_section(scene: &Scene) -> Vec<BindPoseInfo> {
    scene
        .bind_poses
        .iter()
        .map(|b| BindPoseInfo {
            name: b.name.clone(),
            node_count: b.nodes.len(),
            nodes: b.nodes.iter().map(|(n, _)| *n).collect(),
        })
        .collect()
}

/// Prints the report for `scene` to `out`, as JSON or as a readable summary.
pub fn run(
    scene: &Scene,
    file: &Path,
    json: bool,
    out: &mut dyn std::io::Write,
) -> Result<(), CliError> {
    let r = report(scene, file);
    let text = if json {
        let mut t = serde_json::to_string_pretty(&r).map_err(|e| CliError::Msg(e.to_string()))?;
        t.push('\n');
        t
    } else {
        human(&r)
    };
    emit(out, &text)
}

/// The readable lines of every material: colours, maps, and a PBR model's values.
fn materials_text(s: &mut String, materials: &[MaterialInfo]) {
    for m in materials {
        writeln!(
            s,
            "  {}: diffuse {}, ambient {}, specular {}, shininess {}, transparency {}{}",
            m.name,
            rgb(m.diffuse),
            rgb(m.ambient),
            rgb(m.specular),
            m.shininess,
            m.transparency,
            if m.two_sided { ", two-sided" } else { "" }
        )
        .unwrap();
        for t in &m.maps {
            let found = match (t.embedded_bytes, &t.resolved) {
                (Some(n), _) => format!("embedded, {n} bytes"),
                (None, Some(p)) => format!("found: {p}"),
                (None, None) => "not found".into(),
            };
            writeln!(s, "    {} map: {} ({found})", t.slot, t.file).unwrap();
        }
        if !m.pbr.is_empty() {
            writeln!(s, "    shading model {}:", m.shading_model.unwrap_or("unknown")).unwrap();
        }
        for v in &m.pbr {
            let value = match v.value.as_slice() {
                [r, g, b] => rgb([*r, *g, *b]),
                [x] => x.to_string(),
                _ => String::new(),
            };
            let derived = if v.stored { "" } else { " (derived)" };
            let map = match (&v.map, v.channel) {
                (Some(f), Some(c)) => format!(", map {f} ({c})"),
                _ => String::new(),
            };
            writeln!(s, "      {} {value}{derived}{map}", v.name).unwrap();
        }
        user_props_text(s, "    ", &m.user_properties);
    }
}

/// One line per user property, under `indent`: `user Name (type) = value`, an enum's choice
/// and choices, the stored bounds, and whether it is animated.
fn user_props_text(s: &mut String, indent: &str, props: &[UserPropertyInfo]) {
    for p in props {
        let mut line = format!("{indent}user {} ({}) = {}", p.name, p.kind, p.value);
        if p.kind == "time" {
            line.push_str(" s");
        }
        if let Some(names) = &p.enum_names {
            let chosen = p.value.as_u64().and_then(|i| names.get(usize::try_from(i).ok()?));
            write!(
                line,
                " [{}{}]",
                chosen.map_or(String::new(), |c| format!("{c} of ")),
                names.join("~")
            )
            .unwrap();
        }
        if let (Some(lo), Some(hi)) = (p.min, p.max) {
            write!(line, ", min {lo}, max {hi}").unwrap();
        }
        if p.animated {
            line.push_str(" (animated)");
        }
        writeln!(s, "{line}").unwrap();
    }
}

fn rgb(c: [f32; 3]) -> String {
    format!("({}, {}, {})", c[0], c[1], c[2])
}

/// The header's `frames:` line: the range a user means is the animations'; the stored timeline
/// (FBX TimeSpan) is shown apart, labelled, when it differs (knight.fbx stores 0..0 for
/// animations of 0..40).
fn frames_line(r: &Report, rate: &str) -> String {
    let mut s = String::new();
    match (r.animation_range, r.frame_range) {
        (Some(a), Some(t)) if a == t => writeln!(s, "frames: {}..{}, {rate}", a[0], a[1]).unwrap(),
        (Some(a), Some(t)) => writeln!(
            s,
            "frames: {}..{} (the animations'), {rate}; stored timeline: {}..{}",
            a[0], a[1], t[0], t[1]
        )
        .unwrap(),
        (Some(a), None) => {
            writeln!(s, "frames: {}..{} (the animations'), {rate}", a[0], a[1]).unwrap()
        }
        (None, Some(t)) => {
            writeln!(s, "frames: no animation, {rate}; stored timeline: {}..{}", t[0], t[1])
                .unwrap()
        }
        (None, None) => writeln!(s, "frames: no animation, {rate}").unwrap(),
    }
    s
}

/// The readable summary.
pub fn human(r: &Report) -> String {
    let mut s = String::new();
    let version = r.version.map(|v| format!(" version {v}")).unwrap_or_default();
    writeln!(s, "{}: {}{}", r.file, r.format, version).unwrap();
    let units = match r.metres_per_unit {
        Some(m) => format!("{m} m per unit"),
        None => "unitless".into(),
    };
    let hand = if r.axes.right_handed { "right-handed" } else { "left-handed" };
    writeln!(s, "units: {units}; axes: {} up, {} front, {hand}", r.axes.up, r.axes.front).unwrap();
    let rate = match r.frame_rate {
        Some(f) => format!("{f} fps"),
        None => format!("no frame rate stored ({THREE_DS_FPS} fps assumed)"),
    };
    s.push_str(&frames_line(r, &rate));
    let c = &r.counts;
    writeln!(
        s,
        "counts: {} nodes, {} meshes ({} vertices, {} faces), {} materials, {} cameras, \
         {} lights, {} animations",
        c.nodes, c.meshes, c.vertices, c.faces, c.materials, c.cameras, c.lights, c.animations
    )
    .unwrap();
    if !r.properties.is_empty() {
        writeln!(s, "properties:").unwrap();
    }
    for p in &r.properties {
        writeln!(s, "  {} = {}", p.name, p.value).unwrap();
    }

    writeln!(s, "\nnodes:").unwrap();
    let mut stack: Vec<(usize, usize)> =
        r.nodes.iter().filter(|n| n.parent.is_none()).map(|n| (n.index, 1)).rev().collect();
    let mut seen = vec![false; r.nodes.len()];
    while let Some((i, depth)) = stack.pop() {
        if std::mem::replace(&mut seen[i], true) {
            continue;
        }
        let n = &r.nodes[i];
        let mut line = format!("{}{} [{}]", "  ".repeat(depth), n.name, n.kind);
        if !n.instance.is_empty() {
            write!(line, " instance \"{}\"", n.instance).unwrap();
        }
        if let Some(m) = n.mesh.and_then(|m| r.meshes.get(m)) {
            write!(
                line,
                " mesh \"{}\": {} vertices, {} faces",
                m.name, m.vertex_count, m.face_count
            )
            .unwrap();
        }
        if let Some(k) = n.mesh.and_then(|m| r.meshes.get(m)).and_then(|m| m.skin.as_ref()) {
            write!(
                line,
                "; skin {}: {} joints, at most {} influences per vertex",
                k.index, k.joints, k.max_influences_per_vertex
            )
            .unwrap();
        }
        if let Some(b) = n.mesh.and_then(|m| r.meshes.get(m)).and_then(|m| m.blend_shapes.as_ref())
        {
            write!(
                line,
                "; blend shapes: {} channels, {} targets, {} in-betweens",
                b.channels, b.targets, b.inbetweens
            )
            .unwrap();
        }
        if n.hidden {
            line.push_str(" (hidden)");
        }
        writeln!(s, "{line}").unwrap();
        user_props_text(&mut s, &"  ".repeat(depth + 1), &n.user_properties);
        stack.extend(n.children.iter().rev().map(|&c| (c, depth + 1)));
    }

    if !r.materials.is_empty() {
        writeln!(s, "\nmaterials:").unwrap();
    }
    materials_text(&mut s, &r.materials);
    for c in &r.cameras {
        match c.orthographic {
            Some([x, y]) => writeln!(s, "camera {}: orthographic, xmag {x}, ymag {y}", c.name),
            None => writeln!(s, "camera {}: fov {}°", c.name, c.fov_degrees),
        }
        .unwrap();
    }
    for l in &r.lights {
        writeln!(
            s,
            "light {}: {} {}{}",
            l.name,
            l.kind,
            rgb(l.color),
            if l.on { "" } else { " (off)" }
        )
        .unwrap();
    }
    for a in &r.animations {
        writeln!(
            s,
            "\nanimation {} \"{}\": {} fps, frames {}..{}, {} tracks",
            a.index,
            a.name,
            a.fps,
            a.frame_range[0],
            a.frame_range[1],
            a.tracks.len()
        )
        .unwrap();
        let mut i = 0;
        while i < a.tracks.len() {
            let node = a.tracks[i].node;
            let mut parts = Vec::new();
            while i < a.tracks.len() && a.tracks[i].node == node {
                parts.push(format!("{} {}", a.tracks[i].track, a.tracks[i].keys));
                i += 1;
            }
            let name = r.nodes.get(node).map(|n| n.name.as_str()).unwrap_or("?");
            writeln!(s, "  {name} (node {node}) keys: {}", parts.join(", ")).unwrap();
        }
    }
    if !r.bind_poses.is_empty() {
        writeln!(s, "\nbind poses:").unwrap();
    }
    for b in &r.bind_poses {
        writeln!(s, "  \"{}\": {} nodes", b.name, b.node_count).unwrap();
    }
    s
}

/// `inspect --raw`: the low-level structure of the file. FBX files print their node-record
/// tree ([`keyscene::formats::fbx::dump`]); other formats have no raw dump yet and say so.
pub fn raw(file: &std::path::Path, out: &mut dyn std::io::Write) -> Result<(), CliError> {
    let bytes = std::fs::read(file)
        .map_err(|e| CliError::Lib(keyscene::Error::Io { path: file.into(), source: e }))?;
    let is_fbx = bytes.starts_with(b"Kaydara FBX Binary")
        || file.extension().is_some_and(|e| e.eq_ignore_ascii_case("fbx"));
    if !is_fbx {
        return Err(CliError::Msg(format!(
            "{}: not an FBX file; --raw dumps the record tree of FBX files only",
            file.display()
        )));
    }
    // The parser leaves zlib arrays compressed; a corrupt one fails here, as in a load.
    let doc = keyscene::formats::fbx::parse(&bytes, &keyscene::limits::Limits::default())
        .and_then(|doc| doc.check_arrays().map(|()| doc))
        .map_err(|e| CliError::Msg(format!("{}: {e}", file.display())))?;
    crate::emit(out, &keyscene::formats::fbx::dump(&doc))
}

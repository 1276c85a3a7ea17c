//! `keyscene sample`: the scene evaluated at frames or times, as JSON.
//!
//! Output: `{"samples": [{"frame", "time", "nodes": [...]}, …]}`, one sample per requested
//! frame/time in the order given. Nodes are in the scene's node order; each has `name`,
//! `instance`, `kind`, `parent` (node index or null), `world_matrix` (16 numbers, column-major),
//! `hidden` (the node is hidden at that time: 3DS hide tracks, FBX `Visibility` by ufbx's rule,
//! glTF `KHR_node_visibility` and its `KHR_animation_pointer` animation; lib3ds dumps call it
//! `hide`) and, when the node shows a mesh at that time, `mesh` with `vertex_count`, `face_count`,
//! `world_bbox_min`, `world_bbox_max`, `world_centroid` (mean of the world positions; these three
//! are null for a mesh without vertices) and `world_sample_vertices`: `[{index, position}]` for
//! the stored vertices 0, n/2 and n−1, and `world_sample_normals`: `[{corner, vertex, normal}]`
//! for the polygon corners 0, c/2 and c−1 of a mesh that stores normals, deformed like the
//! positions (`Pose::world_corner_normals`). Apart from the normals, the shape matches the lib3ds
//! reference dumps (`shared/corpus/3ds/reference/*.lib3ds.json`) so the two compare directly.
//! A node with user properties (FBX `U` properties, glTF `extras`) lists them as
//! `user_properties`, evaluated at that time, in `inspect`'s form.

use clap::ArgMatches;
use glam::DVec3;
use keyscene::anim::{AnimationChoice, PoseOptions, Time};
use keyscene::scene::Scene;
use serde::Serialize;

use crate::{emit, CliError};

/// A requested sample time, in the unit the user gave.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Requested {
    /// `--frame F`: a frame of the file's clock.
    Frame(f64),
    /// `--time S`: seconds.
    Seconds(f64),
}

/// The `--frame` and `--time` values of the `sample` subcommand, in command-line order.
pub fn requested_times(m: &ArgMatches) -> Vec<Requested> {
    let mut all: Vec<(usize, Requested)> = Vec::new();
    for (id, make) in [
        ("frame", Requested::Frame as fn(f64) -> Requested),
        ("time", Requested::Seconds as fn(f64) -> Requested),
    ] {
        if let (Some(values), Some(indices)) = (m.get_many::<f64>(id), m.indices_of(id)) {
            all.extend(indices.zip(values).map(|(i, &v)| (i, make(v))));
        }
    }
    all.sort_by_key(|&(i, _)| i);
    all.into_iter().map(|(_, r)| r).collect()
}

/// The whole output document.
#[derive(Debug, Serialize)]
pub struct SampleDoc<'a> {
    /// One entry per requested frame/time.
    pub samples: Vec<SampleOut<'a>>,
}

/// The scene at one time.
#[derive(Debug, Serialize)]
pub struct SampleOut<'a> {
    /// The frame evaluated, in the file's frame units.
    pub frame: f64,
    /// The same instant in seconds (`frame / fps`).
    pub time: f64,
    /// Every node, in scene order.
    pub nodes: Vec<NodeOut<'a>>,
}

/// One node at one time.
#[derive(Debug, Serialize)]
pub struct NodeOut<'a> {
    /// The node's name (3DS: NODE_HDR object name, `$$$DUMMY` for dummies).
    pub name: &'a str,
    /// The instance name (3DS INSTANCE_NAME), else empty.
    pub instance: &'a str,
    /// The node kind (`mesh`, `null`, `camera`, …).
    pub kind: &'static str,
    /// The parent's node index, or null.
    pub parent: Option<usize>,
    /// World matrix, column-major.
    pub world_matrix: [f64; 16],
    /// Hidden at this time (`Pose::hidden`).
    pub hidden: bool,
    /// World-space facts about the mesh the node shows, when it shows one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mesh: Option<MeshOut>,
    /// The node's user properties at this time (`Scene::user_properties_at`), as `inspect`
    /// lists them; omitted when the node has none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub user_properties: Vec<crate::inspect::UserPropertyInfo>,
}

/// World-space facts about a node's mesh at one time.
#[derive(Debug, Serialize)]
pub struct MeshOut {
    /// Number of stored vertices.
    pub vertex_count: usize,
    /// Number of polygons.
    pub face_count: usize,
    /// Component-wise minimum of the world positions.
    pub world_bbox_min: Option<[f64; 3]>,
    /// Component-wise maximum of the world positions.
    pub world_bbox_max: Option<[f64; 3]>,
    /// Mean of the world positions.
    pub world_centroid: Option<[f64; 3]>,
    /// Stored vertices 0, n/2 and n−1 in world space.
    pub world_sample_vertices: Vec<SampleVertex>,
    /// Polygon corners 0, c/2 and c−1 with their world-space unit normals, deformed like the
    /// positions for skinned and blend-shaped meshes; empty when the mesh stores no normals.
    pub world_sample_normals: Vec<SampleNormal>,
}

/// One polygon corner's world-space normal.
#[derive(Debug, Serialize)]
pub struct SampleNormal {
    /// Index of the corner ([`keyscene::scene::Mesh::corner_vertices`] order).
    pub corner: usize,
    /// The stored vertex the corner uses.
    pub vertex: usize,
    /// Unit normal in world space (zero when the stored normal is zero).
    pub normal: [f64; 3],
}

/// One vertex in world space.
#[derive(Debug, Serialize)]
pub struct SampleVertex {
    /// Index into the stored vertex array.
    pub index: usize,
    /// World position.
    pub position: [f64; 3],
}

/// Evaluates `scene` at every requested time ([`Scene::pose`]) with the animation `choice`
/// names and writes the JSON document to `out`.
pub fn run(
    scene: &Scene,
    times: &[Requested],
    fps: Option<f64>,
    choice: &AnimationChoice,
    out: &mut dyn std::io::Write,
) -> Result<(), CliError> {
    let animation = scene.choose_animation(choice)?;
    let fps = match fps {
        Some(f) if f.is_finite() && f > 0.0 => f,
        Some(f) => return Err(CliError::Msg(format!("--fps {f}: must be a positive number"))),
        None => scene.frame_rate(animation),
    };
    let samples = times.iter().map(|&t| sample(scene, animation, t, fps));
    let doc = SampleDoc { samples: samples.collect::<Result<_, _>>()? };
    let mut text = serde_json::to_string(&doc).map_err(|e| CliError::Msg(e.to_string()))?;
    text.push('\n');
    emit(out, &text)
}

/// The scene at one requested time, animation `animation` (an index
/// [`Scene::choose_animation`] gave, or `None`: the rest pose).
pub fn sample<'a>(
    scene: &'a Scene,
    animation: Option<usize>,
    t: Requested,
    fps: f64,
) -> Result<SampleOut<'a>, CliError> {
    let frame = match t {
        Requested::Frame(f) => f,
        Requested::Seconds(s) => s * fps,
    };
    let opts = PoseOptions::default().animation(animation.into()).at(Time::Frame(frame));
    let (pose, _) = scene.pose(&opts)?;
    let nodes = scene
        .nodes
        .iter()
        .enumerate()
        .map(|(id, node)| NodeOut {
            name: &node.name,
            instance: &node.instance,
            kind: node.kind.name(),
            parent: node.parent,
            world_matrix: pose.world[id].to_cols_array(),
            hidden: pose.hidden.get(id).copied().unwrap_or(false),
            mesh: pose.mesh[id].map(|m| {
                let mesh = &scene.meshes[m];
                let mut out = mesh_out(&pose.world_positions(scene, id), mesh.polygon_count());
                if let Some(normals) = pose.world_corner_normals(scene, id) {
                    out.world_sample_normals = sample_normals(&normals, &mesh.corner_vertices);
                }
                out
            }),
            user_properties: scene
                .user_properties_at(animation, id, Time::Frame(frame))
                .iter()
                .map(|p| {
                    let animated = scene.animated_user_property(id, &p.name);
                    crate::inspect::user_property_info(p, animated)
                })
                .collect(),
        })
        .collect();
    Ok(SampleOut { frame, time: frame / fps, nodes })
}

fn mesh_out(world: &[DVec3], face_count: usize) -> MeshOut {
    let n = world.len();
    let (mut min, mut max, mut sum) = (DVec3::INFINITY, DVec3::NEG_INFINITY, DVec3::ZERO);
    for &p in world {
        min = min.min(p);
        max = max.max(p);
        sum += p;
    }
    let indices = if n > 0 { vec![0, n / 2, n - 1] } else { Vec::new() };
    MeshOut {
        vertex_count: n,
        face_count,
        world_bbox_min: (n > 0).then(|| min.to_array()),
        world_bbox_max: (n > 0).then(|| max.to_array()),
        world_centroid: (n > 0).then(|| (sum / n as f64).to_array()),
        world_sample_vertices: indices
            .into_iter()
            .map(|index| SampleVertex { index, position: world[index].to_array() })
            .collect(),
        world_sample_normals: Vec::new(),
    }
}

/// Corners 0, c/2 and c−1 of per-corner `normals`, with the vertex `corner_vertices` gives each.
fn sample_normals(normals: &[DVec3], corner_vertices: &[u32]) -> Vec<SampleNormal> {
    let c = normals.len().min(corner_vertices.len());
    let corners = if c > 0 { vec![0, c / 2, c - 1] } else { Vec::new() };
    corners
        .into_iter()
        .map(|corner| SampleNormal {
            corner,
            vertex: corner_vertices[corner] as usize,
            normal: normals[corner].to_array(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sample_vertices_are_first_middle_last() {
        let world: Vec<DVec3> = (0..5).map(|i| DVec3::splat(i as f64)).collect();
        let m = mesh_out(&world, 2);
        let idx: Vec<usize> = m.world_sample_vertices.iter().map(|v| v.index).collect();
        assert_eq!(idx, vec![0, 2, 4]);
        assert_eq!(m.world_centroid, Some([2.0; 3]));
        assert_eq!(m.world_bbox_min, Some([0.0; 3]));
        assert_eq!(m.world_bbox_max, Some([4.0; 3]));
    }

    #[test]
    fn sample_normals_are_first_middle_last_corner_with_their_vertex() {
        let normals: Vec<DVec3> = (0..4).map(|i| DVec3::new(0.0, 0.0, i as f64)).collect();
        let s = sample_normals(&normals, &[7, 8, 9, 7]);
        let got: Vec<(usize, usize, f64)> =
            s.iter().map(|n| (n.corner, n.vertex, n.normal[2])).collect();
        assert_eq!(got, vec![(0, 7, 0.0), (2, 9, 2.0), (3, 7, 3.0)]);
        assert!(sample_normals(&[], &[]).is_empty());
    }

    #[test]
    fn an_empty_mesh_has_no_bbox() {
        let m = mesh_out(&[], 0);
        assert_eq!(m.world_bbox_min, None);
        assert!(m.world_sample_vertices.is_empty());
    }
}

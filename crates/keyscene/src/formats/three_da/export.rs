//! [`Scene`] → [`File`] and material scripts (issue #4 §2; decisions in `docs/3da.md`,
//! "Exporter").
//!
//! - **Entities**: mesh, null (helper) and bone nodes, in the seed's traverse() order of their
//!   (shortened) names. Cameras, lights, their targets and the ambient node are dropped and
//!   reported; a kept node under a dropped one hangs from its nearest kept ancestor, with the
//!   dropped transforms baked into its track. Names longer than 31 bytes are shortened uniquely.
//! - **Geometry**: [`Node::geometry_transform`] (3DS pivot and mesh matrix, FBX geometric
//!   transform) is baked into the positions and normals (3DA has no pivot); a mirroring one
//!   reverses the winding so front faces stay front. One surface per material per entity; a
//!   surface is split before its stream would pass 65,535 vertices. Vertices are the distinct
//!   (position, normal, UV 0, UV 1, colour) corners; n-gons are split by
//!   `scene::geometry::triangulate`. Normals from `scene::geometry::corner_normals` (smoothing
//!   groups, else the source's normals, else flat), computed in the baked frame. UV set 0 → texcoord 0 (and tangents from it where the source has none), UV set 1 → the lightmap stream,
//!   further sets dropped.
//! - **Index tables**: the list reordered by `meshopt::optimize_vertex_cache` (kept in source
//!   order when that has the lower ACMR); the strip made from it by `meshopt::stripify` (no
//!   restart index: stitched with degenerate triangles). ACMR is measured by
//!   `meshopt::analyze_vertex_cache` for a 24-entry FIFO cache (GeForce3) before and after.
//! - **Skinning**: a mesh whose skin's joints are all entities below index 256 is written
//!   `ANIM_MESH_SKINNED_3DA` with a blend stream ([`blend_weights`]; unweighted vertices
//!   bound to the mesh's own entity); vertices stay in the mesh's frame, and `bone_init_tm`
//!   of the mesh and its joints holds their bind-time world matrices (docs/3da.md, "Skin
//!   bind pose").
//! - **Animation**: every entity gets position, rotation and scale tracks with ≥ 1 key. A node
//!   whose 3DA local is its own T·R·S (no FBX pivots or pre/post rotation, inherit type RSrs
//!   or unscaled ancestors, a written parent) keeps the source's keys where 3DA holds them
//!   exactly: 3DS TCB → TCB 3D with the tangents the evaluator uses (lib3ds `ds`/`dd`, ease
//!   carried, not applied), 3DS relative rotation → TCB 4D of absolute quaternions with lib3ds'
//!   squad controls; FBX per-component translation / scale curves and other vector tracks →
//!   LINEAR 3D when every segment is linear, else BEZIER 3D; FBX Euler rotation curves → an
//!   EULER track of LINEAR / BEZIER 1D sub-tracks with the `m_aRotOrder` and signs that make
//!   the seed's composition reproduce the order (`keys.rs`, through
//!   [`crate::anim::hermite`](mod@crate::anim::hermite)). Key times scaled to the output rate must be integer frames;
//!   keys outside the range are cut exactly. A root under the axis conversion keeps its keys
//!   turned when the conversion is a rotation (translation and quaternion keys turned; an
//!   EULER track only when the turn is about its outermost axis). Parts that FBX animation
//!   layers blend ([`ChannelTarget::Layered`]) have no key form and are resampled ("animation
//!   layers blended"). Everything else is
//!   **resampled** into LINEAR tracks — at every integer frame, or, past
//!   [`RESAMPLE_BUDGET`] samples, at the source's key frames and an even grid (warned) — and
//!   only those entities' local transforms are sampled per frame. [`ExportReport::tracks`]
//!   says per entity what was kept and what was resampled and why.
//! - **Bounds**: entity bounds over its baked positions (local space); the file's over every
//!   entity's vertices at the first frame of the range.

use std::collections::HashMap;

use glam::{DMat3, DMat4, DQuat, DVec3, Vec2, Vec3, Vec4};

use super::keys;
pub use super::keys::RESAMPLE_BUDGET;
use super::layout::{
    entity_type, Extents, LinearKey, Material as MatRecord, TcbKey, VBlend, NAME_LEN,
    VERTEX_WEIGHT_SCALE,
};
use super::model::{Entity, File, KeyTrack, RotTrack, Surface, VecTrack};
use super::Error;
use crate::anim::tcb::{relative_key_quats, vector_key_tangents};
use crate::anim::{
    ChannelTarget, Extrapolation, Interpolation, PartialPose, RotationTrack, Tcb, Track,
};
use crate::scene::{geometry, AxisSystem, Mesh, Node, NodeId, NodeKind, Scene, Transform};

/// Largest stream a surface may have: indices are `u16`.
pub const MAX_SURFACE_VERTICES: usize = 65_535;

/// The vertex cache size the ACMR figures assume (GeForce3, the seed's target).
pub const CACHE_SIZE: u32 = 24;

/// What the exporter is asked to do. Non-exhaustive: start from [`Default`] and set the
/// fields (`let mut o = ExportOptions::default(); o.fps = Some(30.0);`).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ExportOptions {
    /// Which of [`Scene::animations`] to write (default 0; `None`: the rest pose only).
    pub animation: Option<usize>,
    /// Build the AABB-tree collision maps (default `true`).
    pub collision_map: bool,
    /// The frame rate of the written key frames (3DA frames are integers and the file stores
    /// no rate). `None`: the animation's own rate. Source key times are scaled by
    /// `fps / Animation::fps`; keys that do not land on integer frames are resampled.
    pub fps: Option<f64>,
    /// The axes the file is written in (default [`Axes::Max`]; docs/3da.md, "Axes").
    pub axes: Axes,
    /// The model name the material scripts are prefixed with (docs/3da.md, "Material
    /// scripts"): [`save`] uses the `.3da`'s file stem when this is `None`; [`export`] alone
    /// writes unprefixed names when it is `None`.
    pub model: Option<String>,
    /// The source the scene was read from, recorded in each script's provenance comment so a
    /// later run can tell its own scripts from another source's ([`crate::output`]).
    /// `None`: [`save`] records the `.3da`'s own path.
    pub source: Option<String>,
    /// [`save`] copies the texture images the scripts name beside the `.3da` (and writes
    /// embedded ones out as files); default `true`.
    pub copy_textures: bool,
}

impl Default for ExportOptions {
    fn default() -> Self {
        ExportOptions {
            animation: Some(0),
            collision_map: true,
            fps: None,
            axes: Axes::Max,
            model: None,
            source: None,
            copy_textures: true,
        }
    }
}

/// The coordinate system of a written 3DA file (docs/3da.md, "Axes").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Axes {
    /// 3ds Max's: right-handed, +Z up, −Y front ([`AxisSystem::Z_UP_RIGHT_HANDED`]), the
    /// system the seed's Max exporter wrote. A source in other axes is rotated into it at the
    /// root (root entities' tracks; the geometry stays in its nodes' frames). Lengths keep the
    /// source's unit.
    #[default]
    Max,
    /// The source's own axes, unconverted.
    Source,
}

/// What the exporter did, for the caller (the CLI prints it).
#[derive(Debug, Clone, Default)]
pub struct ExportReport {
    /// What went into the file as it was (nodes → entities, materials).
    pub converted: Vec<String>,
    /// What was folded into something else (geometry transforms into vertices, dropped
    /// parents into a child's track).
    pub baked: Vec<String>,
    /// Entities whose tracks hold the source's keys, one line each: which tracks, as which
    /// 3DA kind (LINEAR, BEZIER, TCB, EULER) and how many keys.
    pub kept: Vec<String>,
    /// Tracks resampled, one line per entity: which, why, and at which frames.
    pub resampled: Vec<String>,
    /// Entities (file order) with a resampled track that changes: they match the source at
    /// the resampled frames only (every integer frame, unless [`RESAMPLE_BUDGET`] was passed,
    /// which `warnings` says); every other entity's tracks hold the source's keys and match at
    /// any time.
    pub resampled_entities: Vec<usize>,
    /// How each entity's position, rotation and scale were written, in file order.
    pub tracks: Vec<EntityTracks>,
    /// What 3DA cannot hold and was left out (cameras, lights, morphs, extra UV sets …).
    pub dropped: Vec<String>,
    /// Other remarks (shortened names, surfaces split …).
    pub warnings: Vec<String>,
    /// The source node of every entity, in file order.
    pub entity_nodes: Vec<NodeId>,
    /// Triangles in all lists.
    pub triangles: usize,
    /// Average cache miss ratio (transformed vertices per triangle, 24-entry FIFO) of the
    /// lists before and after `optimize_vertex_cache`, over all surfaces.
    pub acmr_before: f64,
    /// See [`ExportReport::acmr_before`].
    pub acmr_after: f64,
}

impl std::fmt::Display for ExportReport {
    /// One line per item, grouped under `converted:`, `baked:`, `kept:`, `resampled:`, `dropped:` and
    /// `warnings:` (empty groups left out), then the triangle count and ACMR figures — what
    /// `keyscene convert … out.3da` prints.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (title, items) in [
            ("converted", &self.converted),
            ("baked", &self.baked),
            ("kept", &self.kept),
            ("resampled", &self.resampled),
            ("dropped", &self.dropped),
            ("warnings", &self.warnings),
        ] {
            if !items.is_empty() {
                writeln!(f, "{title}:")?;
                for i in items {
                    writeln!(f, "  {i}")?;
                }
            }
        }
        write!(
            f,
            "{} triangles; ACMR (24-entry FIFO) {:.3} before, {:.3} after optimize_vertex_cache",
            self.triangles, self.acmr_before, self.acmr_after
        )
    }
}

/// How one entity's tracks were written ([`ExportReport::tracks`]).
#[derive(Debug, Clone, PartialEq)]
pub struct EntityTracks {
    /// The entity's name as written.
    pub name: String,
    /// The source node.
    pub node: NodeId,
    /// The position track.
    pub position: TrackSource,
    /// The rotation track.
    pub rotation: TrackSource,
    /// The scale track.
    pub scale: TrackSource,
}

/// Where a written track's keys came from.
#[derive(Debug, Clone, PartialEq)]
pub enum TrackSource {
    /// The node has no curve for this part: one key of its rest value (turned into the file's
    /// axes for a root).
    Rest,
    /// The source's keys, as the 3DA track described (kind and keys, e.g. `BEZIER 3D, 12
    /// keys` or `EULER m_aRotOrder [0, 1, 2] (Z LINEAR 2, Y LINEAR 1, X BEZIER 5)`): the
    /// file's curve is the source's at any time within the range.
    Kept(String),
    /// Sampled from the evaluated scene into a LINEAR track.
    Resampled {
        /// Why the source's keys could not be kept.
        why: String,
        /// Sampled at every integer frame of the range; `false`: at the source's key frames
        /// and an even grid ([`RESAMPLE_BUDGET`]).
        every_frame: bool,
    },
}

impl TrackSource {
    /// Whether the source's keys were kept.
    pub fn is_kept(&self) -> bool {
        matches!(self, TrackSource::Kept(_))
    }
}

/// A material script written beside the `.3da` (syntax in `docs/3da.md`, "Material scripts").
#[derive(Debug, Clone, PartialEq)]
pub struct MaterialScript {
    /// The file name, also the material table's `name` (e.g. `stone.mat`).
    pub file_name: String,
    /// The script text.
    pub text: String,
}

/// Converts `scene` to a 3DA file and its material scripts. Fails only when the result cannot
/// be written (more than 255 entities referenced as bones, counts past the format's fields).
pub fn export(
    scene: &Scene,
    opts: &ExportOptions,
) -> Result<(File, Vec<MaterialScript>, ExportReport), Error> {
    let mut report = ExportReport::default();
    // --- which nodes become entities, and their names.
    let keep = |n: &Node| matches!(n.kind, NodeKind::Mesh | NodeKind::Null | NodeKind::Bone);
    let kept: Vec<NodeId> = (0..scene.nodes.len()).filter(|&i| keep(&scene.nodes[i])).collect();
    for (i, n) in scene.nodes.iter().enumerate() {
        if !keep(n) {
            report.dropped.push(format!(
                "node {i} {:?} ({}): 3DA has no {}",
                n.name,
                n.kind.name(),
                n.kind.name()
            ));
        }
    }
    let mut slot_of: HashMap<NodeId, usize> = HashMap::new();
    for (k, &i) in kept.iter().enumerate() {
        slot_of.insert(i, k);
    }
    let kept_parent = |i: NodeId| -> Option<usize> {
        let mut p = scene.nodes[i].parent;
        let mut guard = 0;
        while let Some(q) = p {
            if let Some(&k) = slot_of.get(&q) {
                return Some(k);
            }
            p = scene.nodes[q].parent;
            guard += 1;
            if guard > scene.nodes.len() {
                return None;
            }
        }
        None
    };
    let parents: Vec<Option<usize>> = kept.iter().map(|&i| kept_parent(i)).collect();
    let names =
        unique_names(kept.iter().map(|&i| display_name(&scene.nodes[i])).collect(), &mut report);
    let name_refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let order = super::traverse_order(&parents, &name_refs);
    let mut file_index = vec![0usize; kept.len()];
    for (f, &k) in order.iter().enumerate() {
        file_index[k] = f;
    }
    if kept.len() > usize::from(u16::MAX) {
        return Err(Error::Invalid(format!(
            "{} entities do not fit a u16 parent index",
            kept.len()
        )));
    }

    // --- materials.
    let mut mats = Materials::new(scene);

    // --- animation frames.
    let anim = opts.animation.and_then(|a| scene.animations.get(a));
    // Output frames per source frame.
    let rate = match (anim, opts.fps) {
        (Some(a), Some(fps)) if a.fps > 0.0 && fps > 0.0 && fps.is_finite() => fps / a.fps,
        _ => 1.0,
    };
    // Key frames are `int`: the last written frame stays below i32::MAX.
    let last_frame = i64::from(i32::MAX) - 1;
    let (lo, hi) = match anim {
        Some(a) => {
            let (a0, a1) = (a.frame_range.0 * rate, a.frame_range.1 * rate);
            let lo = if a0.is_finite() { (a0.floor().max(0.0) as i64).min(last_frame) } else { 0 };
            let hi = if a1.is_nan() { lo } else { (a1.ceil() as i64).clamp(lo, last_frame) };
            if a1.ceil() > last_frame as f64 {
                report.warnings.push(format!(
                    "animation ends at frame {a1}; frames after {last_frame} are not written"
                ));
            }
            (lo, hi)
        }
        None => (0, 0),
    };
    if let Some(a) = anim.filter(|a| !a.channels.is_empty()) {
        // A 3DA file stores no rate: its readers (the seed's engine, Play3da) play key frames
        // at 30 per second, so keys written at any other rate play too fast or too slow.
        let written = opts.fps.filter(|f| *f > 0.0 && f.is_finite()).unwrap_or(a.fps);
        if (written - 30.0).abs() > 1e-9 {
            report.warnings.push(format!(
                "key frames are written at {written} fps, but 3DA readers play 30 fps \
                 ({}× the source speed): convert with --fps 30 (ExportOptions::fps) to keep \
                 the timing",
                30.0 / written
            ));
        }
    }
    if let Some(a) = anim {
        if a.frame_range.0 < 0.0 {
            report.warnings.push(format!(
                "animation starts at frame {}; frames before 0 are not written",
                a.frame_range.0
            ));
        }
    }
    let range = keys::Range { rate, lo: lo as f64, hi: hi as f64 };
    let anim_index = anim.and(opts.animation);
    // The file's root space: the source's world re-expressed in the written axes.
    let to_file = match opts.axes {
        Axes::Max => scene.axis_unit_conversion(AxisSystem::Z_UP_RIGHT_HANDED, None),
        Axes::Source => DMat4::IDENTITY,
    };
    let convert_axes = !to_file.abs_diff_eq(DMat4::IDENTITY, 1e-12);
    // The conversion as a turn when it is one (no mirror, scale or shift): root entities then
    // keep their keys, turned.
    let turn = convert_axes.then(|| pure_rotation(to_file)).flatten();
    if convert_axes {
        report.baked.push(format!(
            "axes: {} → 3ds Max's (+Z up, -Y front, right-handed), into the root entities' tracks",
            scene.meta.axes
        ));
        if to_file.determinant() < 0.0 {
            report.warnings.push(
                "the source is left-handed: the axis conversion mirrors, so root entities get a negative scale".into(),
            );
        }
    }
    // Geometry caches are left out (docs/3da.md, "Geometry caches").
    for mesh in scene.meshes.iter().filter(|m| m.geometry_cache.is_some()) {
        report.warnings.push(format!(
            "mesh \"{}\": its geometry cache is not written (3DA has no per-vertex animation); \
             the mesh is written undeformed by it",
            mesh.name
        ));
    }
    // World matrices in the file's root space at an output frame.
    let world_at = |f: i64| -> Vec<DMat4> {
        let mut w = scene.evaluate(anim_index, crate::anim::Time::Frame(f as f64 / rate)).world;
        if convert_axes {
            w.iter_mut().for_each(|m| *m = to_file * *m);
        }
        w
    };
    let first_world = world_at(lo);

    // --- skins and their bind pose in `bone_init_tm`.
    let bind = bind_poses(scene, &kept, &slot_of, &file_index, &first_world, &names, &mut report);

    // --- entities.
    let mut entities: Vec<Option<Entity>> = vec![None; kept.len()];
    let mut tracks: Vec<Option<EntityTracks>> = vec![None; kept.len()];
    let mut needs: Vec<Need> = Vec::new();
    let mut acmr = (0.0f64, 0.0f64, 0usize);
    let mut first_frame_vertices: Vec<(usize, Vec<DVec3>)> = Vec::new();
    // Nodes whose pivots or pre/post rotation are animated: baked like static pivots.
    let mut pivots_animated = vec![false; scene.nodes.len()];
    for c in anim.iter().flat_map(|a| &a.channels).filter(|c| c.target.drives_pivots()) {
        if let Some(p) = pivots_animated.get_mut(c.node) {
            *p = true;
        }
    }
    // Children per kept node, counted once (a count per node over every node was quadratic).
    let mut child_counts = vec![0usize; kept.len()];
    for &p in parents.iter().flatten() {
        child_counts[p] += 1;
    }
    for (k, &id) in kept.iter().enumerate() {
        let node = &scene.nodes[id];
        let type_id = match node.kind {
            NodeKind::Mesh => entity_type::MESH,
            NodeKind::Bone => entity_type::BONE,
            _ => entity_type::HELPER,
        };
        let mut e = Entity::new(type_id, &names[k]);
        if let Some(tm) = bind.init_tm.get(&k) {
            e.bone_init_tm = tm.to_cols_array().map(|x| x as f32);
        }
        e.parent_idx = parents[k].map_or(super::layout::NO_PARENT, |p| file_index[p] as u16);
        e.num_children = child_counts[k] as u16;
        if let (NodeKind::Mesh, Some(m)) = (&node.kind, node.mesh) {
            let mesh = &scene.meshes[m];
            let joints = bind.joints.get(&k);
            if let (Some(_), Some(j)) = (&mesh.skin, joints) {
                e.type_id = entity_type::MESH_SKINNED;
                report.converted.push(format!(
                    "{:?}: skin with {} joints → blend stream (4 largest weights per vertex), bind pose in bone_init_tm",
                    names[k],
                    j.len()
                ));
            }
            if !mesh.morph_targets.is_empty() {
                report.dropped.push(format!(
                    "{:?}: {} morph targets",
                    names[k],
                    mesh.morph_targets.len()
                ));
            }
            if mesh.uv_sets.len() > 2 {
                report.dropped.push(format!(
                    "{:?}: UV sets 2..{}",
                    names[k],
                    mesh.uv_sets.len() - 1
                ));
            }
            let g = node.geometry_transform();
            if g != DMat4::IDENTITY {
                report.baked.push(format!(
                    "{:?}: geometry transform (pivot / mesh matrix) baked into the vertices",
                    names[k]
                ));
            }
            let skin = mesh
                .skin
                .and_then(|si| scene.skins.get(si))
                .zip(joints.map(|j| (j.as_slice(), bind.unweighted(k, &file_index, j))));
            let built = surfaces(mesh, g, skin, &mut mats, &names[k], &mut report);
            for s in &built {
                acmr.0 += s.acmr_before * s.triangles as f64;
                acmr.1 += s.acmr_after * s.triangles as f64;
                acmr.2 += s.triangles;
            }
            e.surfaces = built.into_iter().map(|s| s.surface).collect();
            e.bounds = bounds(
                e.surfaces.iter().flat_map(|s| s.xyz.iter().flatten()).map(|p| p.map(f64::from)),
            );
            report.converted.push(format!(
                "node {id} {:?} → mesh entity {:?}: {} surfaces, {} triangles",
                node.name,
                names[k],
                e.surfaces.len(),
                e.surfaces.iter().map(|s| s.tri_list.len() / 3).sum::<usize>()
            ));
            let pts: Vec<DVec3> = e
                .surfaces
                .iter()
                .flat_map(|s| s.xyz.iter().flatten())
                .map(|p| DVec3::from(p.map(f64::from)))
                .collect();
            first_frame_vertices.push((k, pts));
        } else {
            if matches!(node.kind, NodeKind::Mesh) {
                report
                    .warnings
                    .push(format!("{:?}: mesh node without a mesh, written as a helper", names[k]));
                e.type_id = entity_type::HELPER;
            }
            report.converted.push(format!(
                "node {id} {:?} → {} entity {:?}",
                node.name,
                node.kind.name(),
                names[k]
            ));
        }
        // Tracks: the local T/R/S relative to the kept parent. "direct": the node's local matrix
        // is its own T·R·S under its written parent (turned by the axis conversion for a root),
        // so its curves can be written as they are; else the local matrix is taken from the
        // posed world matrices and decomposed, at resampled frames.
        let node_ref = &scene.nodes[id];
        let parent_kept = node_ref.parent.map(|p| slot_of.contains_key(&p)).unwrap_or(true);
        // The inherit types other than RSrs apply the parent's scale component-wise; with
        // every ancestor's scale 1 at all times they are the plain product too.
        let plain = node_ref.pivots.is_none()
            && !pivots_animated[id]
            && (node_ref.parent.is_none()
                || node_ref.inherit == crate::scene::InheritType::RSrs
                || ancestors_unscaled(scene, anim, id));
        // A root under an axis conversion takes `to_file · local`.
        let converted_root = convert_axes && parents[k].is_none();
        if !parent_kept {
            report.baked.push(format!(
                "{:?}: transforms of dropped ancestors baked into its tracks",
                names[k]
            ));
        }
        if !plain {
            report
                .baked
                .push(format!("{:?}: pivots / inherit type baked into its tracks", names[k]));
        }
        let why_not = if !parent_kept {
            Some("a dropped ancestor's transform is baked into it")
        } else if !plain {
            Some("FBX pivots, pre/post rotation or inherit type are baked into it")
        } else if converted_root && turn.is_none() {
            Some("the root's axis conversion mirrors or scales")
        } else {
            None
        };
        let root_turn = if converted_root { turn } else { None };
        let planned: [Planned; 3] = match why_not {
            Some(why) => [0, 1, 2].map(|_| Err(why.to_string())),
            None => keep_tracks(scene, anim, id, range, root_turn, &names[k], &mut report),
        };
        let mut sources = [TrackSource::Rest, TrackSource::Rest, TrackSource::Rest];
        let mut need =
            Need { k, id, world: why_not.is_some(), turn: root_turn, why: [None, None, None] };
        for (part, p) in planned.into_iter().enumerate() {
            match p {
                Ok((Written::Vec(t), src)) if part == 0 => {
                    (e.position, sources[0]) = (Some(t), src)
                }
                Ok((Written::Vec(t), src)) => (e.scale, sources[2]) = (Some(t), src),
                Ok((Written::Rot(t), src)) => (e.rotation, sources[1]) = (Some(t), src),
                Err(why) => need.why[part] = Some(why),
            }
        }
        if need.why.iter().any(Option::is_some) {
            needs.push(need);
        }
        tracks[file_index[k]] = Some(EntityTracks {
            name: names[k].clone(),
            node: id,
            position: sources[0].clone(),
            rotation: sources[1].clone(),
            scale: sources[2].clone(),
        });
        entities[file_index[k]] = Some(e);
    }

    // --- resampled tracks: the local T, R or S sampled from the evaluated scene.
    resample(
        scene,
        anim,
        &needs,
        Frames { lo, hi, range },
        &kept,
        &parents,
        &file_index,
        (anim_index, convert_axes.then_some(to_file)),
        &mut entities,
        &mut tracks,
        &mut report,
    );
    for (f, t) in tracks.iter().enumerate() {
        let Some(t) = t else { continue };
        let kept: Vec<String> =
            [("position", &t.position), ("rotation", &t.rotation), ("scale", &t.scale)]
                .iter()
                .filter_map(|(part, s)| match s {
                    TrackSource::Kept(d) => Some(format!("{part} {d}")),
                    _ => None,
                })
                .collect();
        if !kept.is_empty() {
            report.kept.push(format!("{:?} (entity {f}): {}", t.name, kept.join("; ")));
        }
    }
    report.tracks = tracks.into_iter().map(|t| t.expect("every slot filled")).collect();
    let entities: Vec<Entity> =
        entities.into_iter().map(|e| e.expect("every slot filled")).collect();
    report.entity_nodes = order.iter().map(|&k| kept[k]).collect();

    // --- file bounds at the first frame: the entities' exported local matrices composed.
    let mut world_k = vec![DMat4::IDENTITY; kept.len()];
    for &k in &order {
        let t = entities[file_index[k]]
            .position
            .as_ref()
            .and_then(|t| t.sample(lo as f64))
            .unwrap_or(DVec3::ZERO);
        let r = entities[file_index[k]]
            .rotation
            .as_ref()
            .and_then(|t| t.sample(lo as f64))
            .unwrap_or(DQuat::IDENTITY);
        let s = entities[file_index[k]]
            .scale
            .as_ref()
            .and_then(|t| t.sample(lo as f64))
            .unwrap_or(DVec3::ONE);
        let l = DMat4::from_scale_rotation_translation(s, r, t);
        world_k[k] = parents[k].map_or(l, |p| world_k[p] * l);
    }
    let file_bounds = bounds(
        first_frame_vertices
            .iter()
            .flat_map(|(k, pts)| pts.iter().map(|&p| world_k[*k].transform_point3(p).to_array())),
    );

    let textures = crate::output::TexturePlan::new(scene);
    let (materials, scripts) =
        mats.finish(opts.model.as_deref(), opts.source.as_deref(), &textures, &mut report);
    let num_faces: usize =
        entities.iter().flat_map(|e| &e.surfaces).map(|s| s.tri_list.len() / 3).sum();
    let num_vertices: usize =
        entities.iter().flat_map(|e| &e.surfaces).map(|s| s.s_size as usize).sum();
    report.triangles = acmr.2;
    if acmr.2 > 0 {
        report.acmr_before = acmr.0 / acmr.2 as f64;
        report.acmr_after = acmr.1 / acmr.2 as f64;
    }
    let mut file = File {
        frames: (hi + 1) as u32,
        num_faces: i32::try_from(num_faces).map_err(|_| Error::Invalid("too many faces".into()))?,
        num_vertices: i32::try_from(num_vertices)
            .map_err(|_| Error::Invalid("too many vertices".into()))?,
        bounds: file_bounds,
        colmap_id: super::layout::colmap_type::AABBTREE,
        materials,
        entities,
        ..File::default()
    };
    if opts.collision_map {
        file.colmap = Some(super::colmap::build_for_file(&file, lo as f64, &mut report.warnings));
    } else {
        file.colmap_id = super::layout::colmap_type::UNKNOWN;
    }
    Ok((file, scripts, report))
}

/// Writes `scene` as `path` (a `.3da`), one `<model>_<material>.mat` script per material
/// beside it (names in docs/3da.md, "Material scripts") and, with
/// [`ExportOptions::copy_textures`], the texture images the scripts name. Everything is encoded
/// in memory first; each file is then written atomically ([`crate::write_atomically`]), the
/// scripts and images before the model, and if any write fails the files this call created are
/// removed again, so a failure leaves no partial output. Images that could not be found are
/// the report's warnings.
///
/// Errors: [`crate::Error::OutputCollision`] when a script or image would replace a different
/// file written from another source ([`crate::output`]); nothing is written then.
pub fn save(
    scene: &Scene,
    path: &std::path::Path,
    opts: &ExportOptions,
) -> Result<ExportReport, crate::Error> {
    let mut opts = opts.clone();
    if opts.model.is_none() {
        opts.model = path.file_stem().map(|s| s.to_string_lossy().into_owned());
    }
    let source = opts.source.clone().unwrap_or_else(|| crate::output::source_name(path));
    opts.source = Some(source.clone());
    let (file, scripts, mut report) = export(scene, &opts)?;
    let bytes = super::write(&file)?;
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    let mut companions: Vec<crate::output::Companion> = scripts
        .iter()
        .map(|s| crate::output::Companion {
            path: dir.join(&s.file_name),
            bytes: s.text.as_bytes().into(),
            what: format!("the material script {}", s.file_name),
        })
        .collect();
    if opts.copy_textures {
        let (images, warnings) = crate::output::TexturePlan::new(scene).companions(&dir);
        companions.extend(images);
        report.warnings.extend(warnings);
    }
    let created = crate::output::write_companions(&companions, &source)?;
    let r = crate::write_atomically(path, |w| {
        w.write_all(&bytes).map_err(|source| crate::Error::Io { path: path.into(), source })
    });
    if let Err(e) = r {
        for p in created {
            let _ = std::fs::remove_file(p);
        }
        return Err(e);
    }
    Ok(report)
}

/// The name a node is written under: its own, or for a 3DS dummy (`$$$DUMMY`) its instance name.
fn display_name(n: &Node) -> String {
    if n.name == "$$$DUMMY" && !n.instance.is_empty() {
        n.instance.clone()
    } else {
        n.name.clone()
    }
}

/// Cuts `s` to at most `max` bytes at a character boundary.
fn cut(s: &str, max: usize) -> &str {
    let mut end = s.len().min(max);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// Names of at most 31 bytes: longer ones are cut, and a cut name that collides with another
/// name gets `~N` appended (within the 31 bytes). Each shortening is a warning.
fn unique_names(names: Vec<String>, report: &mut ExportReport) -> Vec<String> {
    let max = NAME_LEN - 1;
    let mut taken: std::collections::HashSet<String> =
        names.iter().filter(|n| n.len() <= max).cloned().collect();
    names
        .into_iter()
        .map(|n| {
            if n.len() <= max {
                return n;
            }
            let mut short = cut(&n, max).to_string();
            let mut k = 1;
            while taken.contains(&short) {
                let suffix = format!("~{k}");
                short = format!("{}{suffix}", cut(&n, max - suffix.len()));
                k += 1;
            }
            taken.insert(short.clone());
            report
                .warnings
                .push(format!("name {n:?} is longer than 31 bytes: written as {short:?}"));
            short
        })
        .collect()
}

/// A track the exporter wrote, with where its keys came from.
enum Written {
    Vec(VecTrack),
    Rot(RotTrack),
}

/// Why a part driven by a [`ChannelTarget::Layered`] channel is resampled: 3DA has no layers,
/// and the blend of several curves (or of one with a partial or animated weight) has no key
/// form.
const LAYERS_BLENDED: &str =
    "animation layers blended (FBX AnimationLayer weights or several layers)";

/// One of an entity's position, rotation and scale: kept (the track and its source), or why
/// it is resampled.
type Planned = Result<(Written, TrackSource), String>;

/// An entity with tracks to resample.
struct Need {
    /// Its kept slot.
    k: usize,
    /// Its node.
    id: NodeId,
    /// Local matrix from the posed world matrices (`world(parent)⁻¹ · world`, decomposed);
    /// else the node's own T, R, S (turned by `turn` for a root under an axis conversion).
    world: bool,
    /// The root's axis conversion as a turn.
    turn: Option<DQuat>,
    /// Position, rotation, scale: why each is resampled (`None`: kept).
    why: [Option<String>; 3],
}

/// The written frames: `lo..=hi` output frames and the scale from source frames.
struct Frames {
    lo: i64,
    hi: i64,
    range: keys::Range,
}

/// Whether every ancestor of `id` has scale 1 at every time: rest scale exactly 1 and any
/// scale curve constant 1 (every key 1 with zero slopes).
fn ancestors_unscaled(scene: &Scene, anim: Option<&crate::anim::Animation>, id: NodeId) -> bool {
    let one = |t: &Track<f64>| {
        crate::anim::hermite::hermite_keys(t).is_some_and(|k| {
            k.iter().all(|k| k.value == 1.0 && k.in_slope == 0.0 && k.out_slope == 0.0)
        })
    };
    let mut p = scene.nodes[id].parent;
    let mut guard = 0;
    while let Some(q) = p {
        guard += 1;
        if guard > scene.nodes.len() || scene.nodes[q].transform.scale != DVec3::ONE {
            return false;
        }
        for ch in anim.iter().flat_map(|a| &a.channels).filter(|c| c.node == q) {
            let unit = match &ch.target {
                ChannelTarget::Scale(t) => {
                    t.keys.iter().all(|k| k.value == DVec3::ONE)
                        && t.keys.iter().all(|k| {
                            matches!(k.interpolation, Interpolation::Linear | Interpolation::Step)
                        })
                }
                ChannelTarget::ScaleXyz(c) => c.iter().flatten().all(one),
                ChannelTarget::Layered(b) => b.transform_part() != Some(2),
                _ => true,
            };
            if !unit {
                return false;
            }
        }
        p = scene.nodes[q].parent;
    }
    true
}

/// The node's rotation matrix when `m` is a pure rotation (orthonormal, determinant +1, no
/// translation).
fn pure_rotation(m: DMat4) -> Option<DQuat> {
    let r = DMat3::from_mat4(m);
    let ok = m.w_axis.abs_diff_eq(glam::DVec4::W, 1e-12)
        && (r * r.transpose()).abs_diff_eq(DMat3::IDENTITY, 1e-12)
        && r.determinant() > 0.0;
    ok.then(|| DQuat::from_mat3(&r).normalize())
}

/// `VecTrack` kind and key count for the report.
fn describe_vec(t: &VecTrack) -> String {
    match t {
        VecTrack::Tcb(k) => format!("TCB 3D, {} keys", k.keys.len()),
        VecTrack::Linear(k) => format!("LINEAR 3D, {} keys", k.keys.len()),
        VecTrack::Bezier(k) => format!("BEZIER 3D, {} keys", k.keys.len()),
    }
}

/// A 3D track with every value and tangent multiplied by `m` (exact: the curves are linear
/// in their values and tangents).
fn turn_vec(t: VecTrack, m: DMat3) -> VecTrack {
    let f = |v: [f32; 3]| f3(m * DVec3::from(v.map(f64::from)));
    match t {
        VecTrack::Tcb(mut k) => {
            for x in &mut k.keys {
                (x.value, x.in_tan, x.out_tan) = (f(x.value), f(x.in_tan), f(x.out_tan));
            }
            k.current = f(k.current);
            VecTrack::Tcb(k)
        }
        VecTrack::Linear(mut k) => {
            k.keys.iter_mut().for_each(|x| x.value = f(x.value));
            k.current = f(k.current);
            VecTrack::Linear(k)
        }
        VecTrack::Bezier(mut k) => {
            for x in &mut k.keys {
                (x.value, x.in_tan, x.out_tan) = (f(x.value), f(x.in_tan), f(x.out_tan));
            }
            k.current = f(k.current);
            VecTrack::Bezier(k)
        }
    }
}

/// A quaternion track with every key and control quaternion multiplied by `q` on the left
/// (exact: slerp and lib3ds' squad depend only on the quaternions' dot products and linear
/// combinations, which a left turn keeps).
fn turn_rot(t: RotTrack, q: DQuat) -> Option<RotTrack> {
    let f = |v: [f32; 4]| (q * DQuat::from_array(v.map(f64::from))).as_quat().to_array();
    Some(match t {
        RotTrack::Tcb(mut k) => {
            for x in &mut k.keys {
                (x.value, x.in_tan, x.out_tan) = (f(x.value), f(x.in_tan), f(x.out_tan));
            }
            k.current = f(k.current);
            RotTrack::Tcb(k)
        }
        RotTrack::Linear(mut k) => {
            k.keys.iter_mut().for_each(|x| x.value = f(x.value));
            k.current = f(k.current);
            RotTrack::Linear(k)
        }
        RotTrack::Euler(_) => return None,
    })
}

/// The position, rotation and scale tracks of a node whose 3DA local is its own T·R·S
/// (turned by `turn` when it is a root under an axis conversion), keeping the source's keys
/// where 3DA can hold them exactly (docs/3da.md, "Exporter", Tracks):
/// - 3DS TCB vector keys → TCB 3D ([`keyed_vec_track`]), relative rotations → TCB 4D and
///   quaternion keys → LINEAR / TCB 4D ([`keyed_rot_track`]);
/// - other vector tracks and FBX per-component curves → LINEAR or BEZIER 3D, FBX Euler curves
///   → EULER (`keys.rs`, through [`crate::anim::hermite`]).
///
/// A part without a curve is one key of the rest value. `Err` says why a part is resampled.
fn keep_tracks(
    scene: &Scene,
    anim: Option<&crate::anim::Animation>,
    id: NodeId,
    r: keys::Range,
    turn: Option<DQuat>,
    name: &str,
    report: &mut ExportReport,
) -> [Planned; 3] {
    let m = turn.map(DMat3::from_quat);
    let rest = scene.nodes[id].transform;
    let rest_vec =
        |v: DVec3| Ok((Written::Vec(VecTrack::Linear(one_key(f3(v)))), TrackSource::Rest));
    let rest_rot = (turn.unwrap_or(DQuat::IDENTITY) * rest.rotation).normalize();
    let mut out: [Planned; 3] = [
        rest_vec(m.unwrap_or(DMat3::IDENTITY) * rest.translation),
        Ok((
            Written::Rot(RotTrack::Linear(one_key(rest_rot.as_quat().to_array()))),
            TrackSource::Rest,
        )),
        rest_vec(rest.scale),
    ];
    let kept_vec = |t: Result<(VecTrack, String), keys::Why>| -> Planned {
        t.map(|(t, d)| (Written::Vec(t), TrackSource::Kept(d))).map_err(String::from)
    };
    // A whole-vector track: TCB keys as TCB 3D, anything else through the Hermite form.
    let vector = |t: &Track<DVec3>, m: Option<DMat3>| -> Option<Planned> {
        if t.keys.is_empty() {
            return None;
        }
        if t.keys.iter().any(|k| matches!(k.interpolation, Interpolation::Tcb(_))) {
            return Some(match keyed_vec_track(t, r.rate, r.lo, r.hi) {
                Some(v) => {
                    let v = match m {
                        Some(m) => turn_vec(v, m),
                        None => v,
                    };
                    let d = describe_vec(&v);
                    Ok((Written::Vec(v), TrackSource::Kept(d)))
                }
                None => Err("TCB keys with step or Bézier keys, jumps, end rules or key frames 3DA cannot hold".into()),
            });
        }
        Some(kept_vec(keys::vector(t, r, m)))
    };
    for ch in anim.iter().flat_map(|a| &a.channels).filter(|c| c.node == id) {
        match &ch.target {
            ChannelTarget::Translation(t) => {
                if let Some(p) = vector(t, m) {
                    out[0] = p;
                }
            }
            ChannelTarget::Scale(t) => {
                if let Some(p) = vector(t, None) {
                    out[2] = p;
                }
            }
            ChannelTarget::TranslationXyz(c) => {
                out[0] = kept_vec(keys::vector_xyz(c, rest.translation, r, m));
            }
            ChannelTarget::ScaleXyz(c) => {
                out[2] = kept_vec(keys::vector_xyz(c, rest.scale, r, None))
            }
            ChannelTarget::Rotation(RotationTrack::Euler { order, rest, xyz }) => {
                out[1] = keys::euler(*order, *rest, xyz, r, turn)
                    .map(|(t, d)| (Written::Rot(t), TrackSource::Kept(d)))
                    .map_err(String::from);
            }
            ChannelTarget::Rotation(rt) if rt.key_count() > 0 => {
                out[1] = keyed_rot_track(rt, r.rate, r.lo, r.hi)
                    .and_then(|t| match turn {
                        Some(q) => turn_rot(t, q),
                        None => Some(t),
                    })
                    .map(|t| {
                        let d = match &t {
                            RotTrack::Tcb(k) => format!("TCB 4D, {} keys", k.keys.len()),
                            RotTrack::Linear(k) => format!("LINEAR 4D, {} keys", k.keys.len()),
                            RotTrack::Euler(_) => "EULER".into(),
                        };
                        (Written::Rot(t), TrackSource::Kept(d))
                    })
                    .ok_or_else(|| {
                        "rotation keys 3DA cannot hold (step or Bézier keys, jumps, end rules or key frames off integers)".into()
                    });
            }
            ChannelTarget::Rotation(_) => {}
            ChannelTarget::Layered(b) => match b.transform_part() {
                Some(part) => out[part] = Err(LAYERS_BLENDED.into()),
                None => report.dropped.push(format!("{name:?}: {} track", ch.target.name())),
            },
            other => report.dropped.push(format!("{name:?}: {} track", other.name())),
        }
    }
    out
}

/// Resamples the parts `needs` lists (docs/3da.md, "Exporter"): at every integer frame of the
/// range, or, when that would pass [`RESAMPLE_BUDGET`] samples, at the source's key frames
/// and an even grid (warned). Only the resampled entities' local transforms are kept per
/// frame. Fills in the entities' tracks and the report.
#[allow(clippy::too_many_arguments)]
fn resample(
    scene: &Scene,
    anim: Option<&crate::anim::Animation>,
    needs: &[Need],
    fr: Frames,
    kept: &[NodeId],
    parents: &[Option<usize>],
    file_index: &[usize],
    (anim_index, to_file): (Option<usize>, Option<DMat4>),
    entities: &mut [Option<Entity>],
    tracks: &mut [Option<EntityTracks>],
    report: &mut ExportReport,
) {
    if needs.is_empty() {
        return;
    }
    let rate = fr.range.rate;
    let key_frames = anim
        .iter()
        .flat_map(|a| &a.channels)
        .flat_map(|c| channel_key_frames(&c.target))
        .map(|f| f * rate);
    let (frames, every) = keys::resample_frames(fr.lo, fr.hi, needs.len(), key_frames);
    if !every {
        report.warnings.push(format!(
            "{} frames × {} resampled entities pass the budget of {RESAMPLE_BUDGET} samples: resampled at {} frames (the source's keys and an even grid), exact there only",
            fr.hi - fr.lo + 1,
            needs.len(),
            frames.len()
        ));
    }
    // An entity no channel can move (none on its node or an ancestor: [`Scene::motion`])
    // holds one value: it is sampled once, at the first frame. Per frame only the moving
    // entities and what they depend on (their nodes, kept parents and ancestors) are posed
    // ([`PartialPose`]), with the values `Scene::evaluate` gives them.
    let moves = scene.motion(anim_index).unaimed;
    let mut pose = PartialPose::new(scene, anim_index);
    // World matrices in the file's root space.
    let world = |pose: &mut PartialPose, id: NodeId| {
        let w = pose.world(id);
        to_file.map_or(w, |m| m * w)
    };
    let local_of = |n: &Need, pose: &mut PartialPose| {
        if !n.world {
            let mut t = pose.parts(n.id);
            if let Some(q) = n.turn {
                t.translation = q * t.translation;
                t.rotation = q * t.rotation;
            }
            t
        } else {
            let pw = parents[n.k].map_or(DMat4::IDENTITY, |p| world(pose, kept[p]));
            let (s, r, t) = (pw.inverse() * world(pose, n.id)).to_scale_rotation_translation();
            Transform { translation: t, rotation: r, scale: s }
        }
    };
    let mut locals: Vec<Vec<Transform>> =
        needs.iter().map(|_| Vec::with_capacity(frames.len())).collect();
    let moving = |n: &Need| moves.get(n.id).copied().unwrap_or(true);
    if let Some(&f) = frames.first().filter(|_| needs.iter().any(|n| !moving(n))) {
        pose.set_frame(f as f64 / rate);
        for (n, l) in needs.iter().zip(&mut locals).filter(|(n, _)| !moving(n)) {
            l.resize(frames.len(), local_of(n, &mut pose));
        }
    }
    if needs.iter().any(moving) {
        for &f in &frames {
            pose.set_frame(f as f64 / rate);
            for (n, l) in needs.iter().zip(&mut locals).filter(|(n, _)| moving(n)) {
                l.push(local_of(n, &mut pose));
            }
        }
    }
    for (n, l) in needs.iter().zip(locals) {
        let fi = file_index[n.k];
        let (Some(e), Some(t)) = (entities[fi].as_mut(), tracks[fi].as_mut()) else { continue };
        let mut changing = false;
        let mut lines = Vec::new();
        let source =
            |why: &str| TrackSource::Resampled { why: why.to_string(), every_frame: every };
        if let Some(why) = &n.why[0] {
            let v = vec_track(&frames, l.iter().map(|t| t.translation));
            changing |= v.frames().len() > 1;
            e.position = Some(v);
            t.position = source(why);
            lines.push(("position", why.as_str()));
        }
        if let Some(why) = &n.why[1] {
            let v = rot_track(&frames, l.iter().map(|t| t.rotation));
            changing |= v.frames().is_some_and(|f| f.len() > 1);
            e.rotation = Some(v);
            t.rotation = source(why);
            lines.push(("rotation", why.as_str()));
        }
        if let Some(why) = &n.why[2] {
            let v = vec_track(&frames, l.iter().map(|t| t.scale));
            changing |= v.frames().len() > 1;
            e.scale = Some(v);
            t.scale = source(why);
            lines.push(("scale", why.as_str()));
        }
        if frames.len() > 1 && (changing || animated_node(anim, n.id)) {
            report.resampled_entities.push(fi);
            let at = if every {
                format!("every frame {}..={} (exact at integer frames)", fr.lo, fr.hi)
            } else {
                format!("{} frames of {}..={} (exact at those frames)", frames.len(), fr.lo, fr.hi)
            };
            report.resampled.push(format!(
                "{:?}: {} resampled as LINEAR tracks at {at}",
                t.name,
                group_reasons(&lines)
            ));
        }
    }
}

/// `position, rotation (why)`: parts listed with their reason, parts sharing one reason
/// together.
fn group_reasons(parts: &[(&str, &str)]) -> String {
    let mut groups: Vec<(Vec<&str>, &str)> = Vec::new();
    for &(part, why) in parts {
        match groups.iter_mut().find(|g| g.1 == why) {
            Some(g) => g.0.push(part),
            None => groups.push((vec![part], why)),
        }
    }
    groups.iter().map(|(p, why)| format!("{} ({why})", p.join(", "))).collect::<Vec<_>>().join(", ")
}

/// The key frames (source frames) of a channel's tracks.
fn channel_key_frames(t: &ChannelTarget) -> Vec<f64> {
    let frames = |k: &[crate::anim::Key<f64>]| k.iter().map(|k| k.frame).collect::<Vec<_>>();
    match t {
        ChannelTarget::Translation(t) | ChannelTarget::Scale(t) => {
            t.keys.iter().map(|k| k.frame).collect()
        }
        ChannelTarget::TranslationXyz(c)
        | ChannelTarget::ScaleXyz(c)
        | ChannelTarget::Rotation(RotationTrack::Euler { xyz: c, .. }) => {
            c.iter().flatten().flat_map(|t| frames(&t.keys)).collect()
        }
        ChannelTarget::Rotation(RotationTrack::Quat(t)) => t.keys.iter().map(|k| k.frame).collect(),
        ChannelTarget::Rotation(RotationTrack::Relative(t)) => {
            t.keys.iter().map(|k| k.frame).collect()
        }
        ChannelTarget::Layered(b) if b.transform_part().is_some() => b.key_frames(),
        _ => Vec::new(),
    }
}

fn f3(v: DVec3) -> [f32; 3] {
    v.as_vec3().to_array()
}

/// LINEAR 3D keys at `frames` (one key when every value is the same in `f32`).
fn vec_track(frames: &[i64], values: impl Iterator<Item = DVec3>) -> VecTrack {
    let mut keys: Vec<LinearKey<[f32; 3]>> = frames
        .iter()
        .zip(values)
        .map(|(&f, v)| LinearKey { frame: f as i32, value: f3(v) })
        .collect();
    if keys.iter().all(|k| k.value == keys[0].value) {
        keys.truncate(1);
    }
    VecTrack::Linear(KeyTrack { current: keys[0].value, keys })
}

/// LINEAR 4D keys (x, y, z, w) at `frames`, each on the same hemisphere as the one before.
fn rot_track(frames: &[i64], values: impl Iterator<Item = DQuat>) -> RotTrack {
    let mut prev: Option<DQuat> = None;
    let mut keys: Vec<LinearKey<[f32; 4]>> = frames
        .iter()
        .zip(values)
        .map(|(&f, q)| {
            let mut q = q.normalize();
            if prev.is_some_and(|p| p.dot(q) < 0.0) {
                q = -q;
            }
            prev = Some(q);
            LinearKey { frame: f as i32, value: q.as_quat().to_array() }
        })
        .collect();
    if keys.iter().all(|k| k.value == keys[0].value) {
        keys.truncate(1);
    }
    RotTrack::Linear(KeyTrack { current: keys[0].value, keys })
}

fn one_key<V: super::layout::Value>(value: V) -> KeyTrack<LinearKey<V>> {
    KeyTrack { current: value, keys: vec![LinearKey { frame: 0, value }] }
}

fn animated_node(anim: Option<&crate::anim::Animation>, id: NodeId) -> bool {
    anim.is_some_and(|a| a.channels.iter().any(|c| c.node == id))
}

/// Groups of keys at the same frame, as `(first, last)` key indices. The scene evaluator
/// enters such a group through its first key and leaves through its last (see
/// `anim::tcb`, "Outside the keys"), so a group whose keys hold the same value is one key
/// (first's incoming tangent, last's outgoing); `None` when a group's values differ (a jump,
/// which 3DA's strictly increasing keys cannot hold).
fn merge_groups(
    frames: &[u32],
    same: impl Fn(usize, usize) -> bool,
) -> Option<Vec<(usize, usize)>> {
    let mut out: Vec<(usize, usize)> = Vec::new();
    for (i, &f) in frames.iter().enumerate() {
        match out.last_mut() {
            Some(g) if frames[g.1] == f => {
                if !same(g.0, i) {
                    return None;
                }
                g.1 = i;
            }
            _ => out.push((i, i)),
        }
    }
    Some(out)
}

/// TCB keys with each same-frame group merged: the first key of the group with the last
/// one's outgoing tangent.
fn merged<V: Copy>(keys: Vec<TcbKey<V>>, groups: &[(usize, usize)]) -> Vec<TcbKey<V>> {
    groups.iter().map(|&(a, b)| TcbKey { out_tan: keys[b].out_tan, ..keys[a] }).collect()
}

/// The key frames of `t` as 3DA frames when 3DA's rules sample it exactly as the scene does
/// within `lo..=hi` (output frames; source frames × `rate`): integer frames ≥ 0 (within 1e-6), non-decreasing (equal ones are merged by
/// [`merge_groups`]), and the ends behave alike (a
/// lib3ds hold-last before the first key only when that key is at or before `lo`; a repeat
/// after the last key only when that key is after `hi`).
fn exact_frames<T>(t: &Track<T>, rate: f64, lo: f64, hi: f64) -> Option<Vec<u32>> {
    let keys = &t.keys;
    let (first, last) = (keys.first()?.frame * rate, keys.last()?.frame * rate);
    if keys.len() > 1 {
        if t.before == Extrapolation::HoldLast && first > lo {
            return None;
        }
        if t.after == Extrapolation::Repeat && last <= hi {
            return None;
        }
    }
    let frames: Vec<u32> = keys
        .iter()
        .map(|k| {
            let f = k.frame * rate;
            let r = f.round();
            ((f - r).abs() <= 1e-6 && (0.0..=f64::from(u32::MAX)).contains(&r)).then_some(r as u32)
        })
        .collect::<Option<_>>()?;
    frames.windows(2).all(|w| w[0] <= w[1]).then_some(frames)
}

/// A 3D track with the scene track's keys: all linear → LINEAR 3D; else TCB 3D whose
/// `m_in_tan`/`m_out_tan` are the tangents (per unit of `u`) the scene's evaluator uses on
/// each segment (TCB: lib3ds' `ds`/`dd`; Hermite: stored × segment length; linear segment:
/// the chord, which makes the Hermite a straight line). `None` (resample) for step keys or
/// frames 3DA cannot hold.
fn keyed_vec_track(t: &Track<DVec3>, rate: f64, lo: f64, hi: f64) -> Option<VecTrack> {
    let frames = exact_frames(t, rate, lo, hi)?;
    let keys = &t.keys;
    if keys.len() > 1
        && keys
            .iter()
            .any(|k| matches!(k.interpolation, Interpolation::Step | Interpolation::Bezier { .. }))
    {
        return None;
    }
    let groups = merge_groups(&frames, |a, b| keys[a].value == keys[b].value)?;
    if keys.iter().all(|k| matches!(k.interpolation, Interpolation::Linear)) || keys.len() == 1 {
        let keys: Vec<LinearKey<[f32; 3]>> = groups
            .iter()
            .map(|&(a, _)| LinearKey { frame: frames[a] as i32, value: f3(keys[a].value) })
            .collect();
        return Some(VecTrack::Linear(KeyTrack { current: keys[0].value, keys }));
    }
    let mut out: Vec<TcbKey<[f32; 3]>> = keys
        .iter()
        .zip(&frames)
        .map(|(k, &f)| {
            let tcb = match &k.interpolation {
                Interpolation::Tcb(c) => *c,
                _ => Tcb::default(),
            };
            TcbKey {
                frame: f,
                tension: tcb.tension,
                continuity: tcb.continuity,
                bias: tcb.bias,
                ease_in: tcb.ease_to,
                ease_out: tcb.ease_from,
                value: f3(k.value),
                in_tan: [0.0; 3],
                out_tan: [0.0; 3],
            }
        })
        .collect();
    for i in 0..keys.len().saturating_sub(1) {
        let (a, b) = (&keys[i], &keys[i + 1]);
        let span = b.frame - a.frame;
        let (ta, tb) = match &a.interpolation {
            Interpolation::Tcb(_) => (vector_key_tangents(t, i).1, vector_key_tangents(t, i + 1).0),
            Interpolation::Hermite { out_tangent, .. } => {
                let tb = match &b.interpolation {
                    Interpolation::Hermite { in_tangent, .. } => *in_tangent,
                    _ => vector_key_tangents(t, i + 1).0,
                };
                (*out_tangent * span, tb * span)
            }
            Interpolation::Linear => (b.value - a.value, b.value - a.value),
            Interpolation::Step
            | Interpolation::StepNext
            | Interpolation::Bezier { .. }
            | Interpolation::Squad { .. } => return None,
        };
        out[i].out_tan = f3(ta);
        out[i + 1].in_tan = f3(tb);
    }
    let out = merged(out, &groups);
    Some(VecTrack::Tcb(KeyTrack { current: out[0].value, keys: out }))
}

/// A rotation track with the scene track's keys: 3DS relative keys → TCB 4D of absolute
/// quaternions with lib3ds' squad controls ([`relative_key_quats`]; a linear segment's
/// controls are its end keys, which makes squad a slerp); absolute quaternion keys → LINEAR
/// 4D when all linear, TCB 4D when all are [`Interpolation::Squad`]. `None` (resample)
/// otherwise.
fn keyed_rot_track(r: &RotationTrack, rate: f64, lo: f64, hi: f64) -> Option<RotTrack> {
    let q = |q: DQuat| q.as_quat().to_array();
    let tcb_key = |frame: u32, value, in_tan, out_tan| TcbKey {
        frame,
        value,
        in_tan,
        out_tan,
        ..TcbKey::default()
    };
    match r {
        RotationTrack::Relative(t) => {
            let frames = exact_frames(t, rate, lo, hi)?;
            if t.keys.len() > 1
                && t.keys.iter().any(|k| {
                    matches!(k.interpolation, Interpolation::Step | Interpolation::Bezier { .. })
                })
            {
                return None;
            }
            let abs = relative_key_quats(t);
            let groups = merge_groups(&frames, |a, b| abs[a][0].abs_diff_eq(abs[b][0], 1e-12))?;
            let mut keys: Vec<TcbKey<[f32; 4]>> = abs
                .iter()
                .zip(&frames)
                .map(|(a, &f)| tcb_key(f, q(a[0]), q(a[0]), q(a[0])))
                .collect();
            for i in 0..keys.len().saturating_sub(1) {
                if !matches!(t.keys[i].interpolation, Interpolation::Linear) {
                    keys[i].out_tan = q(abs[i][2]);
                    keys[i + 1].in_tan = q(abs[i + 1][1]);
                }
            }
            for (k, src) in keys.iter_mut().zip(&t.keys) {
                if let Interpolation::Tcb(c) = src.interpolation {
                    (k.tension, k.continuity, k.bias, k.ease_in, k.ease_out) =
                        (c.tension, c.continuity, c.bias, c.ease_to, c.ease_from);
                }
            }
            let keys = merged(keys, &groups);
            Some(RotTrack::Tcb(KeyTrack { current: keys[0].value, keys }))
        }
        RotationTrack::Quat(t) => {
            let frames = exact_frames(t, rate, lo, hi)?;
            let groups = merge_groups(&frames, |a, b| t.keys[a].value == t.keys[b].value)?;
            if t.keys.iter().all(|k| matches!(k.interpolation, Interpolation::Linear))
                || t.keys.len() == 1
            {
                let keys: Vec<LinearKey<[f32; 4]>> = groups
                    .iter()
                    .map(|&(a, _)| LinearKey { frame: frames[a] as i32, value: q(t.keys[a].value) })
                    .collect();
                return Some(RotTrack::Linear(KeyTrack { current: keys[0].value, keys }));
            }
            let n = t.keys.len();
            let mut keys = Vec::with_capacity(n);
            for (i, (k, &f)) in t.keys.iter().zip(&frames).enumerate() {
                let Interpolation::Squad { in_control, out_control } = k.interpolation else {
                    if i + 1 == n {
                        keys.push(tcb_key(f, q(k.value), q(k.value), q(k.value)));
                        continue;
                    }
                    return None;
                };
                keys.push(tcb_key(f, q(k.value), q(in_control), q(out_control)));
            }
            let keys = merged(keys, &groups);
            Some(RotTrack::Tcb(KeyTrack { current: keys[0].value, keys }))
        }
        RotationTrack::Euler { .. } => None,
    }
}

fn bounds(points: impl Iterator<Item = [f64; 3]>) -> Extents {
    let (mut lo, mut hi) = (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY));
    for p in points {
        let p = DVec3::from(p);
        lo = lo.min(p);
        hi = hi.max(p);
    }
    if lo.x > hi.x {
        return Extents::default();
    }
    Extents { min: f3(lo), max: f3(hi) }
}

/// The material table being built: scene materials in first-use order, plus `default.mat`
/// for polygons without one.
struct Materials<'a> {
    scene: &'a Scene,
    /// Scene material (or `None` for the default) → table index.
    index: HashMap<Option<usize>, usize>,
    used: Vec<Option<usize>>,
}

impl<'a> Materials<'a> {
    fn new(scene: &'a Scene) -> Self {
        Materials { scene, index: HashMap::new(), used: Vec::new() }
    }

    fn get(&mut self, m: Option<usize>) -> usize {
        let m = m.filter(|&m| m < self.scene.materials.len());
        *self.index.entry(m).or_insert_with(|| {
            self.used.push(m);
            self.used.len() - 1
        })
    }

    /// The table and one script per entry. Script names ([`script_base`]): the model and
    /// material names joined, cut to 27 bytes, `.mat` appended, made unique case-insensitively
    /// (Windows file names) with `~N`. Map names are the texture plan's (the files copied
    /// beside the output); `source` goes into each script's provenance comment.
    fn finish(
        self,
        model: Option<&str>,
        source: Option<&str>,
        textures: &crate::output::TexturePlan,
        report: &mut ExportReport,
    ) -> (Vec<MatRecord>, Vec<MaterialScript>) {
        let mut taken = std::collections::HashSet::new();
        let mut table = Vec::new();
        let mut scripts = Vec::new();
        for m in self.used {
            let src = m.map(|i| &self.scene.materials[i]);
            let material =
                src.map(|s| s.name.as_str()).filter(|s| !s.is_empty()).unwrap_or("default");
            let base = script_base(model, material);
            let stem = cut(&base, 27).to_string();
            let mut file_name = format!("{stem}.mat");
            let mut k = 1;
            while !taken.insert(file_name.to_ascii_lowercase()) {
                let suffix = format!("~{k}");
                file_name = format!("{}{suffix}.mat", cut(&base, 27 - suffix.len()));
                k += 1;
            }
            let mut rec =
                MatRecord { name: super::layout::make_name(&file_name), ..MatRecord::default() };
            // Colours are 0..1 in 3DA; values outside (a decimal-comma exporter's
            // 588235300000000, inf/NaN) are clamped with a warning, never silently.
            let clamped = std::cell::Cell::new(false);
            let rgba = |c: Vec3, a: f32| {
                [c.x, c.y, c.z, a].map(|x| {
                    let y = if x.is_finite() { x.clamp(0.0, 1.0) } else { 0.0 };
                    clamped.set(clamped.get() | (y != x));
                    y
                })
            };
            let mut text = String::new();
            match src {
                Some(s) => {
                    let alpha = 1.0 - s.transparency;
                    rec.ambient = rgba(s.ambient, alpha);
                    rec.diffuse = rgba(s.diffuse, alpha);
                    rec.specular = rgba(s.specular, alpha);
                    rec.emissive = rgba(s.diffuse * s.self_illumination, alpha);
                    rec.specular_pow = s.shininess * 100.0;
                    if clamped.get() {
                        report.warnings.push(format!(
                            "material {:?}: colours outside 0..1 (ambient {}, diffuse {}, \
                             specular {}) clamped to 0..1, non-finite components to 0",
                            s.name, s.ambient, s.diffuse, s.specular
                        ));
                    }
                    // An empty file name is no map (3DS materials such as blitz3d/house.3ds's "BEIGE
                    // MATTE" carry one): writing it would give `Texture( "" )`.
                    // Map names: the files beside the output (the texture plan's names).
                    let mi = m.unwrap_or_default();
                    let maps: Vec<(&crate::scene::TextureMap, &str)> = s
                        .maps
                        .iter()
                        .enumerate()
                        .filter_map(|(k, map)| textures.name(mi, k).map(|n| (map, n)))
                        .take(super::layout::MAP_CHANNELS)
                        .collect();
                    for (c, (_, file)) in maps.iter().enumerate() {
                        if file.len() >= NAME_LEN {
                            report.warnings.push(format!(
                                "material {:?}: map name {:?} cut to 31 bytes in the table (the script keeps it whole)",
                                s.name, file
                            ));
                        }
                        rec.map_name[c] = super::layout::make_name(file);
                        rec.map_channel[c] = 0;
                    }
                    rec.num_maps = maps.len() as i32;
                    text.push_str(&format!(
                        "// {file_name}: material {:?}, written by keyscene\n",
                        s.name
                    ));
                    if let Some(source) = source {
                        text.push_str(&crate::output::provenance_line(source));
                    }
                    let col = |c: [f32; 4]| format!("{} {} {} {}", c[0], c[1], c[2], c[3]);
                    text.push_str(&format!("Ambient( \"{}\" ) // RGBA 0-1\n", col(rec.ambient)));
                    text.push_str(&format!("Diffuse( \"{}\" ) // RGBA 0-1\n", col(rec.diffuse)));
                    text.push_str(&format!("Specular( \"{}\" ) // RGBA 0-1\n", col(rec.specular)));
                    text.push_str(&format!("Emissive( \"{}\" ) // RGBA 0-1\n", col(rec.emissive)));
                    text.push_str(&format!("SpecularPower( \"{}\" ) // 0-100\n", rec.specular_pow));
                    if s.two_sided {
                        text.push_str("TwoSided( \"1\" ) // draw both sides\n");
                    }
                    for (map, file) in &maps {
                        text.push_str(&format!(
                            "Texture( \"{}\" ) // {:?} map, UV channel 0\n",
                            file.replace('"', "_"),
                            map.slot
                        ));
                    }
                    report.converted.push(format!("material {:?} → {file_name}", s.name));
                }
                None => {
                    rec.diffuse = [0.8, 0.8, 0.8, 1.0];
                    text.push_str(&format!(
                        "// {file_name}: polygons without a material, written by keyscene\n"
                    ));
                    if let Some(source) = source {
                        text.push_str(&crate::output::provenance_line(source));
                    }
                    text.push_str("Diffuse( \"0.8 0.8 0.8 1\" ) // RGBA 0-1\n");
                    report.warnings.push(format!("polygons without a material use {file_name}"));
                }
            }
            table.push(rec);
            scripts.push(MaterialScript { file_name, text });
        }
        (table, scripts)
    }
}

/// A script's file stem before it is cut to 27 bytes and made unique (docs/3da.md, "Material
/// scripts"): `<model>_<material>`, each with characters outside `[A-Za-z0-9_.-]` replaced by
/// `_`. When that passes 27 bytes and the model part is longer than 11 bytes, the model part
/// becomes its first 6 bytes, `~` and 4 hex digits of a hash of the whole model name
/// ([`crate::output::short_hash`]), so models that share a long prefix still differ. No model
/// (`None`): the material alone.
fn script_base(model: Option<&str>, material: &str) -> String {
    let clean = |s: &str| -> String {
        s.chars()
            .map(|c| if c.is_ascii_alphanumeric() || "_.-".contains(c) { c } else { '_' })
            .collect()
    };
    let material = clean(material);
    let Some(model) = model.filter(|m| !m.is_empty()) else { return material };
    let model = clean(model);
    if model.len() + 1 + material.len() <= 27 || model.len() <= 11 {
        return format!("{model}_{material}");
    }
    format!("{}~{}_{material}", cut(&model, 6), crate::output::short_hash(&model))
}

/// A surface with its ACMR figures.
struct Built {
    surface: Surface,
    triangles: usize,
    acmr_before: f64,
    acmr_after: f64,
}

/// One exported vertex: the bit patterns of its attributes (for de-duplication).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct VKey {
    pos: [u32; 3],
    normal: [u32; 3],
    uv0: [u32; 2],
    uv1: [u32; 2],
    color: u32,
    blend: VBlend,
    /// The source's unit tangent in the baked frame; zero when it has none here.
    tangent: [u32; 3],
}

/// The skins the exporter writes as blend streams and the `bone_init_tm` of every entity
/// they involve (docs/3da.md, "Skinning").
struct BindPoses {
    /// Per kept slot of a skinned mesh written with a blend stream: its joints' file indices.
    joints: HashMap<usize, Vec<u8>>,
    /// Per kept slot: `bone_init_tm`, the entity's world matrix at bind time (root space,
    /// column-vector convention; stored as `to_cols_array`, i.e. row-major row-vector, the
    /// translation at elements 12..15). Entities of no skin are absent (identity).
    init_tm: HashMap<usize, DMat4>,
}

impl BindPoses {
    /// The entity an unweighted vertex of the skinned mesh in slot `k` is bound to: the mesh
    /// itself when its file index fits a `u8`, else its skin's first joint.
    fn unweighted(&self, k: usize, file_index: &[usize], joints: &[u8]) -> u8 {
        u8::try_from(file_index[k]).unwrap_or_else(|_| joints.first().copied().unwrap_or(0))
    }
}

/// Whether two bind matrices are the same within `f32` storage precision.
fn same_matrix(a: &DMat4, b: &DMat4) -> bool {
    let scale = a.to_cols_array().iter().fold(1.0f64, |m, x| m.max(x.abs()));
    a.to_cols_array().iter().zip(b.to_cols_array()).all(|(x, y)| (x - y).abs() <= 1e-6 * scale)
}

/// Chooses the bind matrices (`bone_init_tm`) of skinned meshes and their joints.
///
/// The scene gives per joint `inverse_bind = B_joint⁻¹ · B_mesh` only; the file stores `B`
/// per entity, so the skinned mesh's `B_mesh` is chosen — its world matrix at the first
/// written frame, or, when one of its joints already has a `B` from another skin, the `B_mesh`
/// that agrees with it — and `B_joint = B_mesh · inverse_bind⁻¹`. A skin whose joints cannot
/// all agree with the bind matrices already chosen (a bone bound differently by two meshes),
/// whose inverse bind matrices are singular, or with a joint that is not an entity below 256
/// is written rigid, reported as dropped.
fn bind_poses(
    scene: &Scene,
    kept: &[NodeId],
    slot_of: &HashMap<NodeId, usize>,
    file_index: &[usize],
    first_world: &[DMat4],
    names: &[String],
    report: &mut ExportReport,
) -> BindPoses {
    let mut out = BindPoses { joints: HashMap::new(), init_tm: HashMap::new() };
    for (k, &id) in kept.iter().enumerate() {
        let node = &scene.nodes[id];
        let Some(skin) = node
            .mesh
            .filter(|_| matches!(node.kind, NodeKind::Mesh))
            .and_then(|m| scene.meshes.get(m))
            .and_then(|m| m.skin)
            .and_then(|s| scene.skins.get(s))
        else {
            continue;
        };
        let rigid = |why: &str, report: &mut ExportReport| {
            report.dropped.push(format!(
                "{:?}: skinning ({why}; written as a rigid mesh in its bind pose)",
                names[k]
            ))
        };
        let Some(joints) = skin
            .joints
            .iter()
            .map(|j| slot_of.get(&j.node).and_then(|&s| u8::try_from(file_index[s]).ok()))
            .collect::<Option<Vec<u8>>>()
        else {
            rigid("a joint is not an entity or past entity 255", report);
            continue;
        };
        let inverses: Option<Vec<(usize, DMat4)>> = skin
            .joints
            .iter()
            .map(|j| {
                let ok = j.inverse_bind.is_finite() && j.inverse_bind.determinant().abs() > 1e-300;
                ok.then(|| (slot_of[&j.node], j.inverse_bind.inverse()))
            })
            .collect();
        let Some(inverses) = inverses else {
            rigid("a singular or non-finite inverse bind matrix", report);
            continue;
        };
        // B_mesh: from a joint (or the mesh) already bound, else the first frame's world.
        let mesh_bind = inverses
            .iter()
            .find_map(|(s, inv_ib)| out.init_tm.get(s).map(|b| *b * inv_ib.inverse()))
            .or_else(|| out.init_tm.get(&k).copied())
            .unwrap_or_else(|| first_world.get(id).copied().unwrap_or(DMat4::IDENTITY));
        let mut chosen: Vec<(usize, DMat4)> = vec![(k, mesh_bind)];
        chosen.extend(inverses.iter().map(|(s, inv_ib)| (*s, mesh_bind * *inv_ib)));
        let agrees = chosen.iter().enumerate().all(|(i, (s, b))| {
            out.init_tm.get(s).is_none_or(|x| same_matrix(x, b))
                && chosen[..i].iter().all(|(t, c)| t != s || same_matrix(c, b))
        });
        if !agrees {
            rigid("a joint's bind matrix differs from the one another skin gives it", report);
            continue;
        }
        out.init_tm.extend(chosen);
        out.joints.insert(k, joints);
    }
    out
}

/// A vertex's blend record: the four largest influences (ties: the lower joint first), weights
/// scaled to [`VERTEX_WEIGHT_SCALE`] and rounded so they sum to it **exactly** (largest
/// remainder); `joints` maps the skin's joint numbers to entity indices. Unused slots repeat
/// the first bone with weight 0. A vertex without a positive finite weight is bound fully to
/// entity `unweighted` — the exporter passes the skinned mesh's own entity, whose
/// `bone_init_tm` is its bind matrix, so such a vertex follows the mesh as it does in FBX
/// (docs/3da.md, "Skinning").
pub fn blend_weights(influences: &[(u32, f32)], joints: &[u8], unweighted: u8) -> VBlend {
    let mut inf: Vec<(u8, f64)> = influences
        .iter()
        .filter(|(j, w)| w.is_finite() && *w > 0.0 && (*j as usize) < joints.len())
        .map(|&(j, w)| (joints[j as usize], f64::from(w)))
        .collect();
    inf.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    inf.truncate(4);
    let sum: f64 = inf.iter().map(|x| x.1).sum();
    if inf.is_empty() || sum <= 0.0 {
        return VBlend { bone_idx: [unweighted; 4], weight: [VERTEX_WEIGHT_SCALE as u16, 0, 0, 0] };
    }
    let scale = f64::from(VERTEX_WEIGHT_SCALE);
    let exact: Vec<f64> = inf.iter().map(|x| x.1 / sum * scale).collect();
    let mut w: Vec<u32> = exact.iter().map(|x| x.floor() as u32).collect();
    let mut left = VERTEX_WEIGHT_SCALE - w.iter().sum::<u32>();
    let mut by_remainder: Vec<usize> = (0..w.len()).collect();
    by_remainder.sort_by(|&a, &b| {
        (exact[b] - exact[b].floor()).total_cmp(&(exact[a] - exact[a].floor())).then(a.cmp(&b))
    });
    for &i in by_remainder.iter().cycle() {
        if left == 0 {
            break;
        }
        w[i] += 1;
        left -= 1;
    }
    let mut out = VBlend { bone_idx: [inf[0].0; 4], weight: [0; 4] };
    for (i, (&(b, _), &x)) in inf.iter().zip(&w).enumerate() {
        out.bone_idx[i] = b;
        // A single influence has weight 32768, which a u16 holds.
        out.weight[i] = x as u16;
    }
    out
}

/// The surfaces of one mesh: triangles grouped by material, vertices de-duplicated, split at
/// [`MAX_SURFACE_VERTICES`], indices optimised and stripified.
fn surfaces(
    mesh: &Mesh,
    g: DMat4,
    skin: Option<(&crate::scene::Skin, (&[u8], u8))>,
    mats: &mut Materials,
    name: &str,
    report: &mut ExportReport,
) -> Vec<Built> {
    // Non-finite numbers (inf/NaN an ASCII file spelled out, or values past f32's range)
    // become 0, counted for one warning per mesh: 3DA has no way to say "no value", and one
    // NaN position poisons the collision map's boxes (issue 12 §3, docs/3da.md). Positions
    // are cleaned first, so triangulation and derived normals see finite numbers.
    let bad = std::cell::Cell::new(0usize);
    let fin = |v: &mut [f32]| {
        for x in v.iter_mut().filter(|x| !x.is_finite()) {
            *x = 0.0;
            bad.set(bad.get() + 1);
        }
    };
    let pos: Vec<DVec3> = mesh
        .positions
        .iter()
        .map(|&p| {
            let mut p = g.transform_point3(p).to_array();
            for x in p.iter_mut().filter(|x| !(**x as f32).is_finite()) {
                *x = 0.0;
                bad.set(bad.get() + 1);
            }
            DVec3::from_array(p)
        })
        .collect();
    let mirrored = g.determinant() < 0.0;
    // Normals from the shared helper (smoothing groups, else stored normals through the
    // normal matrix, else flat). Face normals follow the source winding, which is written
    // reversed when `g` mirrors, so those turn with it; stored normals carried by the inverse
    // transpose already face the mirrored front.
    let stored = mesh.smoothing_groups.is_none() && mesh.normals.is_some();
    let corner_normals: Vec<Vec3> =
        geometry::corner_normals(mesh, &pos, geometry::normal_matrix(g))
            .into_iter()
            .map(|n| if mirrored && !stored { -n } else { n })
            .collect();
    let uv = |set: usize, v: u32, c: usize, p: usize| -> Option<Vec2> {
        mesh.uv_sets.get(set).and_then(|s| s.uvs.get(v, c, p))
    };
    // Triangles (fans of the polygons), each as three corner indices, grouped by table index.
    let mut by_material: Vec<(usize, Vec<[usize; 3]>)> = Vec::new();
    for p in 0..mesh.polygon_count() {
        let slot = mesh.polygon_material(p);
        let mat = (slot != Mesh::NO_MATERIAL)
            .then(|| mesh.material_slots.get(slot as usize).copied().flatten())
            .flatten();
        let t = mats.get(mat);
        let list = match by_material.iter_mut().find(|(m, _)| *m == t) {
            Some((_, l)) => l,
            None => {
                by_material.push((t, Vec::new()));
                &mut by_material.last_mut().unwrap().1
            }
        };
        let cs: Vec<usize> = mesh.polygon_corners(p).collect();
        for t in geometry::triangulate(&pos, mesh.polygon(p)) {
            let tri = t.map(|k| cs[k]);
            list.push(if mirrored { [tri[0], tri[2], tri[1]] } else { tri });
        }
    }
    by_material.sort_by_key(|(m, _)| *m);
    // Polygon of each corner (for per-polygon attributes).
    let mut poly_of = vec![0usize; mesh.corner_vertices.len()];
    for p in 0..mesh.polygon_count() {
        for c in mesh.polygon_corners(p) {
            poly_of[c] = p;
        }
    }
    let mut out = Vec::new();
    let has_uv0 = !mesh.uv_sets.is_empty();
    let has_uv1 = mesh.uv_sets.len() > 1;
    let has_color = mesh.colors.is_some();
    let has_tangents = mesh.tangents.is_some();
    let source_tangent = |v: u32, c: usize, p: usize| -> Vec3 {
        let t = mesh.tangents.as_ref().and_then(|a| a.get(v, c, p)).unwrap_or(Vec3::ZERO);
        let t = g.transform_vector3(t.as_dvec3()).as_vec3();
        if t.is_finite() && t.length() > 1e-6 {
            t.normalize()
        } else {
            Vec3::ZERO
        }
    };
    for (material, tris) in by_material {
        let mut start = 0;
        while start < tris.len() {
            let mut map: HashMap<VKey, u16> = HashMap::new();
            let mut s = Surface { material_idx: material as i32, ..Surface::default() };
            let (mut xyz, mut nrm, mut t0, mut t1, mut col, mut tan) =
                (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
            let mut blends = Vec::new();
            let mut list: Vec<u32> = Vec::new();
            let mut end = start;
            while end < tris.len() {
                let tri = tris[end];
                let keys: Vec<VKey> = tri
                    .iter()
                    .map(|&c| {
                        let v = mesh.corner_vertices[c];
                        let p = poly_of[c];
                        let position = pos.get(v as usize).copied().unwrap_or(DVec3::ZERO);
                        let position = f3(position);
                        let mut n = corner_normals[c].to_array();
                        fin(&mut n);
                        let mut a = uv(0, v, c, p).unwrap_or(Vec2::ZERO).to_array();
                        fin(&mut a);
                        let mut b = uv(1, v, c, p).unwrap_or(Vec2::ZERO).to_array();
                        fin(&mut b);
                        let mut color = mesh
                            .colors
                            .as_ref()
                            .and_then(|a| a.get(v, c, p))
                            .unwrap_or(Vec4::ONE)
                            .to_array();
                        fin(&mut color);
                        let color = Vec4::from_array(color);
                        let byte = |x: f32| (x.clamp(0.0, 1.0) * 255.0).round() as u8;
                        VKey {
                            pos: position.map(f32::to_bits),
                            normal: n.map(f32::to_bits),
                            uv0: a.map(f32::to_bits),
                            uv1: b.map(f32::to_bits),
                            blend: skin.map_or(VBlend::default(), |(s, (j, unweighted))| {
                                blend_weights(
                                    s.influences.get(v as usize).map_or(&[], Vec::as_slice),
                                    j,
                                    unweighted,
                                )
                            }),
                            color: u32::from_le_bytes([
                                byte(color.x),
                                byte(color.y),
                                byte(color.z),
                                byte(color.w),
                            ]),
                            tangent: source_tangent(v, c, p).to_array().map(f32::to_bits),
                        }
                    })
                    .collect();
                let new = keys
                    .iter()
                    .filter(|k| !map.contains_key(k))
                    .collect::<std::collections::HashSet<_>>()
                    .len();
                if map.len() + new > MAX_SURFACE_VERTICES {
                    break;
                }
                for k in keys {
                    let next = map.len() as u16;
                    let i = *map.entry(k).or_insert_with(|| {
                        xyz.push(k.pos.map(f32::from_bits));
                        nrm.push(k.normal.map(f32::from_bits));
                        t0.push(k.uv0.map(f32::from_bits));
                        t1.push(k.uv1.map(f32::from_bits));
                        col.push(k.color);
                        blends.push(k.blend);
                        tan.push(Vec3::from_array(k.tangent.map(f32::from_bits)));
                        next
                    });
                    list.push(u32::from(i));
                }
                end += 1;
            }
            if end < tris.len() {
                report.warnings.push(format!(
                    "{name:?}: surface split at {} vertices (u16 indices)",
                    map.len()
                ));
            }
            let n = xyz.len();
            let before = meshopt::analyze_vertex_cache(&list, n, CACHE_SIZE, 0, 0).acmr as f64;
            let mut optimized = meshopt::optimize_vertex_cache(&list, n);
            let mut after =
                meshopt::analyze_vertex_cache(&optimized, n, CACHE_SIZE, 0, 0).acmr as f64;
            if after > before {
                // meshopt's model is not a 24-entry FIFO; keep the source order when it is better.
                optimized = list.clone();
                after = before;
            }
            let strip = meshopt::stripify(&optimized, n, 0).unwrap_or_default();
            s.tri_list = optimized.iter().map(|&i| i as u16).collect();
            s.tri_strip = strip.iter().map(|&i| i as u16).collect();
            s.s_size = n as u32;
            if has_uv0 || has_tangents {
                // The source's tangents where it has them, derived ones elsewhere.
                let derived = if tan.contains(&Vec3::ZERO) {
                    tangents(&list, &xyz, &nrm, &t0)
                } else {
                    Vec::new()
                };
                let merged = tan
                    .iter()
                    .enumerate()
                    .map(|(i, t)| if *t == Vec3::ZERO { derived[i] } else { t.to_array() })
                    .collect();
                s.tangent = Some(merged);
            }
            s.xyz = Some(xyz);
            s.normal = Some(nrm);
            if has_uv0 {
                s.texcoord[0] = Some(t0);
            }
            if has_uv1 {
                s.lightmap = Some(t1);
            }
            if has_color {
                s.color = Some(col);
            }
            if skin.is_some() {
                s.blending = Some(blends);
            }
            out.push(Built {
                surface: s,
                triangles: list.len() / 3,
                acmr_before: before,
                acmr_after: after,
            });
            start = end.max(start + 1);
        }
    }
    if bad.get() > 0 {
        report.warnings.push(format!(
            "{name:?}: {} non-finite numbers (inf or NaN positions, normals, UVs or colours) \
             written as 0",
            bad.get()
        ));
    }
    out
}

/// Per-vertex tangents (the direction of increasing U) from UV set 0: each triangle's
/// `dP/dU` (Lengyel's method) summed at its vertices, made perpendicular to the vertex normal
/// (Gram–Schmidt) and normalised. A vertex whose triangles have no usable UV gradient gets
/// any unit vector perpendicular to its normal. 3DA's tangent stream has no handedness sign;
/// the bitangent is `normal × tangent` when the UVs are not mirrored.
fn tangents(list: &[u32], xyz: &[[f32; 3]], nrm: &[[f32; 3]], uv: &[[f32; 2]]) -> Vec<[f32; 3]> {
    let mut acc = vec![Vec3::ZERO; xyz.len()];
    for t in list.chunks_exact(3) {
        let [a, b, c] = [t[0], t[1], t[2]].map(|i| i as usize);
        let (p0, p1, p2) = (Vec3::from(xyz[a]), Vec3::from(xyz[b]), Vec3::from(xyz[c]));
        let (w0, w1, w2) = (Vec2::from(uv[a]), Vec2::from(uv[b]), Vec2::from(uv[c]));
        let (e1, e2) = (p1 - p0, p2 - p0);
        let (d1, d2) = (w1 - w0, w2 - w0);
        let det = d1.x * d2.y - d2.x * d1.y;
        if det.abs() < 1e-20 || !det.is_finite() {
            continue;
        }
        let tangent = (e1 * d2.y - e2 * d1.y) / det;
        if tangent.is_finite() {
            for i in [a, b, c] {
                acc[i] += tangent;
            }
        }
    }
    acc.iter()
        .zip(nrm)
        .map(|(&t, n)| {
            let n = Vec3::from(*n);
            let t = (t - n * n.dot(t)).normalize_or_zero();
            if t != Vec3::ZERO {
                return t.to_array();
            }
            let any = if n.x.abs() < 0.9 { Vec3::X } else { Vec3::Y };
            let t = (any - n * n.dot(any)).normalize_or_zero();
            (if t == Vec3::ZERO { Vec3::X } else { t }).to_array()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_names_carry_the_model_and_shorten_long_models_with_a_hash() {
        assert_eq!(script_base(None, "Stone"), "Stone");
        assert_eq!(script_base(Some("fly"), "default"), "fly_default");
        assert_eq!(script_base(Some("a b"), "02 - Default"), "a_b_02_-_Default");
        // 19 + 1 + 10 bytes > 27: the model becomes 6 bytes, `~` and FNV-1a-32 of
        // "softimage_cube_anim" (0x6a74139e, computed outside keyscene with the FNV reference
        // constants) folded to 16 bits: 0x6a74 ^ 0x139e = 0x79ea.
        assert_eq!(
            script_base(Some("softimage_cube_anim"), "Material_1"),
            "softim~79ea_Material_1"
        );
        // A model of at most 11 bytes is kept whole; the caller cuts the material.
        assert_eq!(
            script_base(Some("short_model"), "a_very_long_material_name"),
            "short_model_a_very_long_material_name"
        );
    }

    #[test]
    fn long_names_are_shortened_uniquely() {
        let long = "a".repeat(40);
        let mut r = ExportReport::default();
        let names = unique_names(vec![long.clone(), long.clone(), "b".into()], &mut r);
        assert_eq!(names[0], "a".repeat(31));
        assert_eq!(names[1], format!("{}~1", "a".repeat(29)));
        assert_eq!(names[2], "b");
        assert_eq!(r.warnings.len(), 2);
    }

    fn triangle_scene() -> Scene {
        use crate::scene::{Camera, FovAxis, Material};
        let mut s = Scene::default();
        s.meta.axes = AxisSystem::Z_UP_RIGHT_HANDED;
        s.materials.push(Material { name: "Red Stone".into(), ..Material::default() });
        s.meshes.push(Mesh {
            name: "tri".into(),
            positions: vec![DVec3::ZERO, DVec3::X, DVec3::Y],
            polygon_starts: vec![0, 3],
            corner_vertices: vec![0, 1, 2],
            material_slots: vec![Some(0)],
            ..Mesh::default()
        });
        let mut n = Node::new("tri", NodeKind::Mesh);
        n.mesh = Some(0);
        n.set_geometry_transform(DMat4::from_translation(DVec3::new(0.0, 0.0, 5.0)));
        s.nodes.push(n);
        s.attach(0, None);
        s.cameras.push(Camera {
            name: "cam".into(),
            target: None,
            fov_degrees: 45.0,
            fov_axis: FovAxis::Horizontal,
            roll_degrees: 0.0,
            near: None,
            far: None,
            aspect: None,
        });
        s.nodes.push(Node::new("cam", NodeKind::Camera(0)));
        s.attach(1, None);
        s
    }

    #[test]
    fn save_writes_the_model_and_its_material_scripts() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("x.3da");
        let report = save(&triangle_scene(), &out, &ExportOptions::default()).unwrap();
        assert_eq!(report.dropped.len(), 1, "{:?}", report.dropped);
        let text = report.to_string();
        assert!(text.contains("dropped:\n  node 1 \"cam\" (camera)"), "{text}");
        assert!(report.baked.iter().any(|b| b.contains("geometry transform")));
        let bytes = std::fs::read(&out).unwrap();
        assert!(!super::super::check(&bytes).has_errors());
        let script = std::fs::read_to_string(dir.path().join("x_Red_Stone.mat")).unwrap();
        assert!(script.contains("Diffuse( \"0.8 0.8 0.8 1\" ) // RGBA 0-1"), "{script}");
        let (scene, _) = crate::load(&out).unwrap();
        assert_eq!(scene.nodes.len(), 1);
        let pose = scene.evaluate(Some(0), crate::anim::Time::Frame(0.0));
        let z: Vec<f64> = pose.world_positions(&scene, 0).iter().map(|p| p.z).collect();
        assert_eq!(z, vec![5.0; 3]);
    }

    #[test]
    fn collision_hull_gets_its_own_tree_and_stays_out_of_the_first() {
        let mut s = triangle_scene();
        s.meshes.push(Mesh {
            name: "hull".into(),
            positions: vec![DVec3::ZERO, DVec3::X, DVec3::Z],
            polygon_starts: vec![0, 3],
            corner_vertices: vec![0, 1, 2],
            ..Mesh::default()
        });
        let mut n = Node::new(super::super::layout::COLLISION_HULL, NodeKind::Mesh);
        n.mesh = Some(1);
        s.nodes.push(n);
        s.attach(2, None);
        let (file, _, _) = export(&s, &ExportOptions::default()).unwrap();
        let map = super::super::colmap::Colmap::parse(file.colmap.as_ref().unwrap()).unwrap();
        assert_eq!(map.trees.len(), 2);
        let hull = file
            .entities
            .iter()
            .position(|e| super::super::layout::name_str(&e.name) == "CollisionHull_0")
            .unwrap();
        assert_eq!(map.trees[0].kind, super::super::colmap::KIND_ALL);
        assert!(map.trees[0].triangles.iter().all(|t| t[3] as usize != hull));
        assert_eq!(map.trees[1].kind, super::super::colmap::KIND_HULL);
        assert_eq!(map.trees[1].triangles.len(), 1);
        assert_eq!(map.trees[1].triangles[0][3] as usize, hull);
        // A ray down the hull's plane normal (−Y) hits it at y = 0 from y = 3.
        let hit =
            map.trees[1].ray(glam::Vec3::new(0.2, 3.0, 0.2), glam::Vec3::NEG_Y, f32::INFINITY);
        assert_eq!(hit.map(|h| h.0), Some(3.0));
    }

    #[test]
    fn failed_save_leaves_no_partial_output() {
        let dir = tempfile::tempdir().unwrap();
        // The model's path is a non-empty folder: renaming over it fails after the script
        // was written, and the script must be removed again.
        let out = dir.path().join("x.3da");
        std::fs::create_dir(&out).unwrap();
        std::fs::write(out.join("keep"), b"").unwrap();
        assert!(save(&triangle_scene(), &out, &ExportOptions::default()).is_err());
        let names: Vec<_> =
            std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, vec![std::ffi::OsString::from("x.3da")]);
    }

    #[test]
    fn tangents_follow_increasing_u_and_are_perpendicular_to_the_normal() {
        // A quad in z = 0 with U along +X: the tangent is +X.
        let xyz = [[0.0, 0.0, 0.0], [2.0, 0.0, 0.0], [2.0, 1.0, 0.0], [0.0, 1.0, 0.0]];
        let nrm = [[0.0, 0.0, 1.0]; 4];
        let uv = [[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]];
        let t = tangents(&[0, 1, 2, 0, 2, 3], &xyz, &nrm, &uv);
        assert!(t.iter().all(|t| *t == [1.0, 0.0, 0.0]), "{t:?}");
        // Degenerate UVs: still a unit vector perpendicular to the normal.
        let t = tangents(&[0, 1, 2], &xyz, &nrm, &[[0.5, 0.5]; 4]);
        assert!(
            t.iter().take(3).all(|t| (Vec3::from(*t).length() - 1.0).abs() < 1e-6 && t[2] == 0.0),
            "{t:?}"
        );
    }

    #[test]
    fn fps_option_rescales_key_frames_and_keeps_the_curve() {
        use crate::anim::{Animation, Channel, Key};
        let mut s = Scene::default();
        s.meta.axes = AxisSystem::Z_UP_RIGHT_HANDED;
        s.nodes.push(Node::new("n", NodeKind::Null));
        s.attach(0, None);
        let key = |frame: f64, x: f64| Key {
            frame,
            value: DVec3::new(x, 0.0, 0.0),
            interpolation: Interpolation::Tcb(Tcb::default()),
        };
        let track = Track::new(vec![key(0.0, 0.0), key(10.0, 4.0), key(30.0, 1.0)]);
        s.animations.push(Animation {
            name: String::new(),
            fps: 30.0,
            frame_range: (0.0, 30.0),
            channels: vec![Channel { node: 0, target: ChannelTarget::Translation(track.clone()) }],
        });
        let opts = ExportOptions { fps: Some(60.0), ..ExportOptions::default() };
        let (file, _, report) = export(&s, &opts).unwrap();
        assert!(report.resampled.is_empty(), "{:?}", report.resampled);
        let pos = file.entities[0].position.as_ref().unwrap();
        assert_eq!(pos.frames(), vec![0, 20, 60]);
        assert_eq!(file.frames, 61);
        for f in [3.0, 10.0, 17.5, 29.0] {
            let ours = pos.sample(f * 2.0).unwrap();
            assert!((ours - track.sample(f).unwrap()).length() < 1e-5, "frame {f}");
        }
    }

    fn mesh_scene(mesh: Mesh, g: DMat4) -> Scene {
        let mut s = Scene::default();
        s.meshes.push(mesh);
        let mut n = Node::new("m", NodeKind::Mesh);
        n.mesh = Some(0);
        n.set_geometry_transform(g);
        s.nodes.push(n);
        s.attach(0, None);
        s
    }

    #[test]
    fn non_finite_positions_are_written_as_zero_with_a_warning_and_the_file_checks_clean() {
        // The first vertex of ufbx's synthetic_cube_nan files: NaN, -inf, +inf; 1e300 does
        // not fit f32. A quad and a triangle sharing vertex 0.
        let mesh = Mesh {
            name: "nan".into(),
            positions: vec![
                DVec3::new(f64::NAN, f64::NEG_INFINITY, f64::INFINITY),
                DVec3::X,
                DVec3::new(1.0, 1.0, 0.0),
                DVec3::new(0.0, 1e300, 0.0),
            ],
            polygon_starts: vec![0, 4, 7],
            corner_vertices: vec![0, 1, 2, 3, 0, 2, 1],
            ..Mesh::default()
        };
        let (file, _, report) =
            export(&mesh_scene(mesh, DMat4::IDENTITY), &ExportOptions::default()).unwrap();
        let xyz = file.entities[0].surfaces[0].xyz.as_ref().unwrap();
        assert!(xyz.iter().flatten().all(|x| x.is_finite()), "{xyz:?}");
        assert!(xyz.contains(&[0.0, 0.0, 0.0]), "{xyz:?}");
        assert!(
            report.warnings.iter().any(|w| w.contains("4 non-finite numbers")),
            "{:?}",
            report.warnings
        );
        let bytes = super::super::write(&file).unwrap();
        let errors: Vec<_> = super::super::check(&bytes).errors().map(|i| i.to_string()).collect();
        assert!(errors.is_empty(), "{errors:?}");
    }

    #[test]
    fn material_colours_outside_0_1_are_clamped_with_a_warning() {
        let mut s = triangle_scene();
        s.materials[0].diffuse = Vec3::new(588_235_300_000_000.0, 0.5, f32::NAN);
        let (file, _, report) = export(&s, &ExportOptions::default()).unwrap();
        let m = file.materials.iter().find(|m| m.diffuse[1] == 0.5).unwrap();
        assert_eq!(m.diffuse, [1.0, 0.5, 0.0, 1.0]);
        assert!(
            report.warnings.iter().any(|w| w.contains("\"Red Stone\": colours outside 0..1")),
            "{:?}",
            report.warnings
        );
        // Sane colours give no warning.
        let (_, _, report) = export(&triangle_scene(), &ExportOptions::default()).unwrap();
        assert!(!report.warnings.iter().any(|w| w.contains("outside 0..1")));
    }

    #[test]
    fn surfaces_split_below_65536_vertices_and_keep_every_triangle() {
        // 23,334 triangles with unshared corners: 70,002 vertices.
        let t = 23_334u32;
        let positions = (0..3 * t)
            .map(|i| DVec3::new(f64::from(i), f64::from(i % 7), f64::from(i % 3)))
            .collect();
        let mesh = Mesh {
            positions,
            polygon_starts: (0..=t).map(|p| 3 * p).collect(),
            corner_vertices: (0..3 * t).collect(),
            ..Mesh::default()
        };
        let (file, _, report) =
            export(&mesh_scene(mesh, DMat4::IDENTITY), &ExportOptions::default()).unwrap();
        let surfaces = &file.entities[0].surfaces;
        assert_eq!(surfaces.len(), 2);
        assert!(surfaces.iter().all(|s| s.s_size as usize <= MAX_SURFACE_VERTICES));
        assert_eq!(surfaces.iter().map(|s| s.tri_list.len() / 3).sum::<usize>(), t as usize);
        assert!(report.warnings.iter().any(|w| w.contains("split")));
        let bytes = super::super::write(&file).unwrap();
        let errors: Vec<_> = super::super::check(&bytes).errors().map(|i| i.to_string()).collect();
        assert!(errors.is_empty(), "{errors:?}");
    }

    #[test]
    fn ngons_become_fans_and_a_mirroring_transform_keeps_front_faces_front() {
        // A unit square in z = 0, counter-clockwise seen from +Z, mirrored by x → −x.
        let mesh = Mesh {
            positions: vec![DVec3::ZERO, DVec3::X, DVec3::new(1.0, 1.0, 0.0), DVec3::Y],
            polygon_starts: vec![0, 4],
            corner_vertices: vec![0, 1, 2, 3],
            ..Mesh::default()
        };
        let g = DMat4::from_scale(DVec3::new(-1.0, 1.0, 1.0));
        let (file, _, _) = export(&mesh_scene(mesh, g), &ExportOptions::default()).unwrap();
        let s = &file.entities[0].surfaces[0];
        assert_eq!(s.tri_list.len(), 6);
        let xyz = s.xyz.as_ref().unwrap();
        for t in s.tri_list.chunks_exact(3) {
            let [a, b, c] = [t[0], t[1], t[2]].map(|i| Vec3::from(xyz[usize::from(i)]));
            // The mirrored square still faces +Z: its written winding is counter-clockwise.
            assert!((b - a).cross(c - a).z > 0.0);
        }
        assert!(s.normal.as_ref().unwrap().iter().all(|n| *n == [0.0, 0.0, 1.0]));
        // Stored normals go through the inverse transpose and face the mirrored front too.
        let mut mesh = mesh_scene(Mesh::default(), g).meshes.pop().unwrap();
        mesh.positions = vec![DVec3::ZERO, DVec3::X, DVec3::new(1.0, 1.0, 0.0)];
        mesh.polygon_starts = vec![0, 3];
        mesh.corner_vertices = vec![0, 1, 2];
        mesh.normals = Some(crate::scene::Attribute {
            values: vec![Vec3::Z; 3],
            mapping: crate::scene::Mapping::PerVertex,
        });
        let (file, _, _) = export(&mesh_scene(mesh, g), &ExportOptions::default()).unwrap();
        assert!(file.entities[0].surfaces[0]
            .normal
            .as_ref()
            .unwrap()
            .iter()
            .all(|n| *n == [0.0, 0.0, 1.0]));
    }

    #[test]
    fn blend_weights_keep_the_four_largest_and_sum_to_exactly_32768() {
        let joints = [10u8, 11, 12, 13, 14];
        let b = blend_weights(&[(0, 0.1), (1, 0.3), (2, 0.05), (3, 0.25), (4, 0.3)], &joints, 7);
        assert_eq!(b.bone_idx, [11, 14, 13, 10]);
        assert_eq!(b.weight.iter().map(|&w| u32::from(w)).sum::<u32>(), 32768);
        // 0.3 / 0.95 · 32768 = 10347.79 … the largest remainders get the spare units.
        assert_eq!(b.weight, [10348, 10348, 8623, 3449]);
        let third = blend_weights(&[(0, 1.0), (1, 1.0), (2, 1.0)], &joints, 7);
        assert_eq!(third.weight, [10923, 10923, 10922, 0]);
        // No usable weight: bound fully to the entity the caller names (the mesh itself).
        let none = blend_weights(&[(0, 0.0), (1, f32::NAN)], &joints, 7);
        assert_eq!((none.bone_idx, none.weight), ([7; 4], [32768, 0, 0, 0]));
    }

    #[test]
    fn skinned_meshes_get_blend_streams_that_check_accepts() {
        use crate::scene::{Skin, SkinJoint};
        let mut s = triangle_scene();
        for name in ["b0", "b1"] {
            let id = s.nodes.len();
            s.nodes.push(Node::new(name, NodeKind::Bone));
            s.attach(id, None);
        }
        let joint = |node| SkinJoint { node, inverse_bind: DMat4::IDENTITY };
        s.skins.push(Skin {
            joints: vec![joint(2), joint(3)],
            influences: vec![vec![(0, 1.0)], vec![(0, 0.5), (1, 0.5)], vec![(1, 2.0)]],
            dq_weights: Vec::new(),
        });
        s.meshes[0].skin = Some(0);
        let (file, _, _) = export(&s, &ExportOptions::default()).unwrap();
        let e = file.entities.iter().find(|e| e.type_id == entity_type::MESH_SKINNED).unwrap();
        let blend = e.surfaces[0].blending.as_ref().unwrap();
        let b0 = file
            .entities
            .iter()
            .position(|e| super::super::layout::name_str(&e.name) == "b0")
            .unwrap() as u8;
        assert!(blend.iter().any(|b| b.bone_idx[0] == b0 && b.weight[0] == 32768));
        let bytes = super::super::write(&file).unwrap();
        let errors: Vec<_> = super::super::check(&bytes).errors().map(|i| i.to_string()).collect();
        assert!(errors.is_empty(), "{errors:?}");
        // Read back: one skin over the two bones, the weights as written.
        let (back, _) = crate::load_bytes(&bytes, None, &Default::default()).unwrap();
        let skin = &back.skins[0];
        let joint_names: Vec<&str> =
            skin.joints.iter().map(|j| back.nodes[j.node].name.as_str()).collect();
        assert_eq!(joint_names, ["b0", "b1"]);
        let mut w: Vec<Vec<f32>> =
            skin.influences.iter().map(|i| i.iter().map(|x| x.1).collect()).collect();
        w.sort_by_key(Vec::len);
        assert_eq!(w, vec![vec![1.0], vec![1.0], vec![0.5, 0.5]]);
    }

    #[test]
    fn y_up_sources_are_turned_into_max_axes_at_the_root() {
        // A Y-up, +Z-front scene (glTF's): up (0, 1, 0) becomes Max's up (0, 0, 1) and the
        // front (0, 0, 1) Max's front (0, −1, 0); the child's local track is unchanged.
        let mut s = Scene::default();
        s.meta.axes = AxisSystem::Y_UP_RIGHT_HANDED;
        for name in ["root", "child"] {
            let id = s.nodes.len();
            s.nodes.push(Node::new(name, NodeKind::Null));
            s.attach(id, (id == 1).then_some(0));
        }
        s.nodes[0].transform.translation = DVec3::new(0.0, 2.0, 3.0);
        s.nodes[1].transform.translation = DVec3::new(0.0, 1.0, 0.0);
        let pos =
            |f: &File, i: usize| f.entities[i].position.as_ref().unwrap().sample(0.0).unwrap();
        let (max, _, report) = export(&s, &ExportOptions::default()).unwrap();
        assert!(pos(&max, 0).abs_diff_eq(DVec3::new(0.0, -3.0, 2.0), 1e-12), "{:?}", pos(&max, 0));
        assert!(pos(&max, 1).abs_diff_eq(DVec3::new(0.0, 1.0, 0.0), 1e-12));
        assert!(report.baked.iter().any(|b| b.starts_with("axes:")));
        let opts = ExportOptions { axes: Axes::Source, ..ExportOptions::default() };
        let (src, _, _) = export(&s, &opts).unwrap();
        assert!(pos(&src, 0).abs_diff_eq(DVec3::new(0.0, 2.0, 3.0), 1e-12));
    }

    #[test]
    fn unweighted_vertices_follow_the_mesh_and_bind_matrices_fill_bone_init_tm() {
        use crate::scene::{Skin, SkinJoint};
        let mut s = triangle_scene();
        let b = s.nodes.len();
        s.nodes.push(Node::new("b0", NodeKind::Bone));
        s.attach(b, None);
        s.nodes[b].transform.translation = DVec3::new(0.0, 0.0, 2.0);
        // Bound when the bone stood at z = 1 and the mesh at its place: B_bone⁻¹ · B_mesh.
        let mesh_world = s.evaluate(None, crate::anim::Time::Frame(0.0)).world[0];
        let bone_bind = DMat4::from_translation(DVec3::new(0.0, 0.0, 1.0));
        s.skins.push(Skin {
            joints: vec![SkinJoint { node: b, inverse_bind: bone_bind.inverse() * mesh_world }],
            influences: vec![vec![(0, 1.0)], vec![(0, 1.0)], vec![]],
            dq_weights: Vec::new(),
        });
        s.meshes[0].skin = Some(0);
        let (file, _, _) = export(&s, &ExportOptions::default()).unwrap();
        let bytes = super::super::write(&file).unwrap();
        let (back, _) = crate::load_bytes(&bytes, None, &Default::default()).unwrap();
        let (pa, pb) = (
            s.evaluate(None, crate::anim::Time::Frame(0.0)),
            back.evaluate(Some(0), crate::anim::Time::Frame(0.0)),
        );
        let m = back.nodes.iter().position(|n| n.mesh.is_some()).unwrap();
        let mut theirs = pa.world_positions(&s, 0);
        let mut ours = pb.world_positions(&back, m);
        let key = |p: &DVec3| (p.x * 1e6).round() as i64 * 1_000_000 + (p.y * 1e6).round() as i64;
        theirs.sort_by_key(key);
        ours.sort_by_key(key);
        // The bone moved up by 1 since binding: two vertices follow it, the unweighted one
        // stays with the mesh.
        assert_eq!(theirs.iter().filter(|p| (p.z - 6.0).abs() < 1e-9).count(), 2);
        for (a, b) in theirs.iter().zip(&ours) {
            assert!(a.abs_diff_eq(*b, 1e-5), "{a:?} vs {b:?}");
        }
        let be = file.entities.iter().position(|e| super::super::layout::name_str(&e.name) == "b0");
        let tm = file.entities[be.unwrap()].bone_init_tm;
        assert_eq!(&tm[12..16], &[0.0, 0.0, 1.0, 1.0], "translation in elements 12..15");
    }

    /// A null node with the given channels over `frame_range`, in `axes`.
    fn animated_null(
        axes: AxisSystem,
        frame_range: (f64, f64),
        channels: Vec<ChannelTarget>,
    ) -> Scene {
        use crate::anim::{Animation, Channel};
        let mut s = Scene::default();
        s.meta.axes = axes;
        s.nodes.push(Node::new("n", NodeKind::Null));
        s.attach(0, None);
        s.animations.push(Animation {
            name: String::new(),
            fps: 30.0,
            frame_range,
            channels: channels.into_iter().map(|target| Channel { node: 0, target }).collect(),
        });
        s
    }

    fn scalar(keys: &[(f64, f64)], interpolation: Interpolation<f64>) -> Track<f64> {
        use crate::anim::Key;
        Track::new(
            keys.iter()
                .map(|&(frame, value)| Key { frame, value, interpolation: interpolation.clone() })
                .collect(),
        )
    }

    #[test]
    fn fbx_curves_keep_their_keys_and_the_report_says_which() {
        use crate::scene::EulerOrder;
        let cubic = Interpolation::Bezier {
            in_slope: 0.0,
            in_weight: 1.0 / 3.0,
            out_slope: 0.0,
            out_weight: 1.0 / 3.0,
        };
        let x = scalar(&[(0.0, 0.0), (10.0, 4.0)], cubic);
        let z = scalar(&[(0.0, 0.0), (10.0, 1.0)], Interpolation::Linear);
        let channels = || {
            vec![
                ChannelTarget::TranslationXyz([Some(x.clone()), None, None]),
                ChannelTarget::Rotation(RotationTrack::Euler {
                    order: EulerOrder::Xyz,
                    rest: DVec3::ZERO,
                    xyz: [None, None, Some(z.clone())],
                }),
            ]
        };
        let s = animated_null(AxisSystem::Z_UP_RIGHT_HANDED, (0.0, 10.0), channels());
        let (file, _, report) = export(&s, &ExportOptions::default()).unwrap();
        let t = &report.tracks[0];
        assert!(matches!(&t.position, TrackSource::Kept(d) if d.starts_with("BEZIER 3D")));
        assert!(matches!(&t.rotation, TrackSource::Kept(d) if d.starts_with("EULER")));
        assert_eq!(t.scale, TrackSource::Rest);
        assert!(report.resampled_entities.is_empty());
        // Between keys: the Hermite with zero end slopes at u = 1/4 is 4·(3u² − 2u³) = 0.625;
        // the linear Z angle at frame 2.5 is 0.25 rad.
        let e = &file.entities[0];
        let p = e.position.as_ref().unwrap().sample(2.5).unwrap();
        assert!((p.x - 0.625).abs() < 1e-6, "{p}");
        let q = e.rotation.as_ref().unwrap().sample(2.5).unwrap();
        assert!(q.dot(DQuat::from_rotation_z(0.25)).abs() > 1.0 - 1e-12, "{q:?}");
        // A Y-up root: the turn (+90° about X) is not about XYZ's outermost axis (Z), so its
        // rotation is resampled and says why; the translation keys are turned and kept.
        let s = animated_null(AxisSystem::Y_UP_RIGHT_HANDED, (0.0, 10.0), channels());
        let (_, _, report) = export(&s, &ExportOptions::default()).unwrap();
        let t = &report.tracks[0];
        assert!(t.position.is_kept());
        assert!(
            matches!(&t.rotation, TrackSource::Resampled { why, every_frame: true } if why.contains("outermost")),
            "{:?}",
            t.rotation
        );
        assert_eq!(report.resampled_entities, vec![0]);
    }

    #[test]
    fn resampling_a_long_range_stays_within_the_budget() {
        // A step key (no 3DA form) over ten million frames: resampled at its keys and a grid,
        // not at every frame, and exact at the keys.
        let step = scalar(&[(0.0, 1.0), (5_000_001.0, 2.0)], Interpolation::Step);
        let s = animated_null(
            AxisSystem::Z_UP_RIGHT_HANDED,
            (0.0, 10_000_000.0),
            vec![ChannelTarget::TranslationXyz([Some(step), None, None])],
        );
        let (file, _, report) = export(&s, &ExportOptions::default()).unwrap();
        let pos = file.entities[0].position.as_ref().unwrap();
        let frames = pos.frames();
        assert!(frames.len() <= RESAMPLE_BUDGET, "{}", frames.len());
        assert!(frames.contains(&5_000_001));
        assert_eq!(pos.sample(5_000_001.0).unwrap().x, 2.0);
        assert_eq!(pos.sample(0.0).unwrap().x, 1.0);
        assert!(matches!(
            &report.tracks[0].position,
            TrackSource::Resampled { every_frame: false, why } if why.contains("step")
        ));
        assert!(report.warnings.iter().any(|w| w.contains("budget")), "{:?}", report.warnings);
    }

    #[test]
    fn constant_tracks_get_one_key() {
        let t = vec_track(&[0, 1, 2], [DVec3::ONE; 3].into_iter());
        assert_eq!(t.frames(), vec![0]);
        let t = vec_track(&[0, 1, 2], [DVec3::ONE, DVec3::ZERO, DVec3::ONE].into_iter());
        assert_eq!(t.frames(), vec![0, 1, 2]);
    }
}

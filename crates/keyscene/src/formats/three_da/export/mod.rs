//! [`Scene`] → [`File`] and material scripts (issue #4 §2; decisions in `docs/3da.md`,
//! "Exporter").
//!
//! - **Entities**: mesh, null (helper) and bone nodes, in the seed's traverse() order of their
//!   (shortened) names. Cameras, lights, their targets and the ambient node are dropped and
//!   reported; a kept node under a dropped one hangs from its nearest kept ancestor, with the
//!   dropped transforms baked into its track. Names longer than 31 bytes are shortened uniquely.
//! - **Geometry**: [`crate::scene::Node::geometry_transform`] (3DS pivot and mesh matrix, FBX geometric
//!   transform) is baked into the positions and normals (3DA has no pivot); a mirroring one
//!   reverses the winding so front faces stay front. One surface per material per entity; a
//!   surface is split before its stream would pass 65,535 vertices. Vertices are the distinct
//!   (position, normal, UV 0, UV 1, colour) corners; n-gons are split by
//!   `scene::geometry::triangulate`. Normals from `scene::geometry::corner_normals` (smoothing
//!   groups, else the source's normals, else flat), computed in the baked frame. UV set 0 → texcoord 0 (and tangents from it where the source has none), UV set 1 → the lightmap stream,
//!   further sets dropped.
//! - **Index tables**: the list reordered by `meshopt::optimize_vertex_cache` (kept in source
//!   order when that has the lower ACMR or a vertex is in more than
//!   1,024 triangles: the optimizer is quadratic in valence); the strip made from it by `meshopt::stripify` (no
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
//!   layers blend ([`ChannelTarget::Layered`](crate::anim::ChannelTarget::Layered)) have no key form and are resampled ("animation
//!   layers blended"). Everything else is
//!   **resampled** into LINEAR tracks — at every integer frame, or, past
//!   [`RESAMPLE_BUDGET`] samples, at the source's key frames and an even grid (warned) — and
//!   only those entities' local transforms are sampled per frame. [`ExportReport::tracks`]
//!   says per entity what was kept and what was resampled and why.
//! - **Bounds**: entity bounds over its baked positions (local space); the file's over every
//!   entity's vertices at the first frame of the range.

use glam::{DMat3, DMat4, DQuat, DVec3};

use self::materials::Materials;
use self::names::Entities;
pub use self::skin::blend_weights;
use self::skin::BindPoses;
use self::tracks::Frames;
use super::colmap::{Colmap, Gather};
use super::layout::entity_type;
use super::model::{Entity, File};
use super::write::Streamer;
use super::{layout, Error};
pub use crate::anim::keep::RESAMPLE_BUDGET;
use crate::quoting::quoted;
use crate::scene::{AxisSystem, NodeId, NodeKind, Scene};

mod geometry;
mod keyed;
mod materials;
mod names;
mod resample;
mod skin;
mod tracks;

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
///
/// The passes, in order (each a module of `three_da/export/`): entities and names
/// (`names`), the written frames (`tracks`), the axes of the file's root, the entities and
/// their tracks (`tracks`, `keyed`, `resample`, `skin`), the material table and scripts
/// (`materials`), then entity by entity in file order the surfaces (`geometry`), with the
/// file's bounds and the collision map gathered from them.
pub fn export(
    scene: &Scene,
    opts: &ExportOptions,
) -> Result<(File, Vec<MaterialScript>, ExportReport), Error> {
    let plan = plan(scene, opts)?;
    let (mut file, colmap, scripts, report) = plan.stream(None)?;
    file.colmap = colmap.map(|c| c.encode());
    Ok((file, scripts, report))
}

/// Everything of the file but its surfaces, which [`Plan::stream`] builds entity by entity:
/// the entities with their tracks (file order), the material table and scripts, and the
/// mesh entities' jobs.
struct Plan<'a> {
    cx: Context<'a>,
    bind: BindPoses,
    /// Mesh entities in file order: slot, scene mesh, [`geometry::slot_materials`].
    jobs: Vec<(usize, usize, geometry::SlotMaterials)>,
    /// Per slot: where a mesh entity's surface lines go in the report.
    late: Vec<Option<geometry::Late>>,
    /// The file without surfaces, counts and bounds.
    file: File,
    scripts: Vec<MaterialScript>,
    report: ExportReport,
    collision_map: bool,
}

/// The passes of [`export`] before the surfaces ([`Plan`]).
fn plan<'a>(scene: &'a Scene, opts: &ExportOptions) -> Result<Plan<'a>, Error> {
    let mut report = ExportReport::default();
    let ents = names::entities(scene, &mut report)?;
    let mut mats = Materials::new(scene);
    let anim = opts.animation.and_then(|a| scene.animations.get(a));
    let frames = tracks::frames(anim, opts.fps, &mut report);
    let space = root_space(scene, opts.axes, &mut report);
    geometry::report_geometry_caches(scene, &mut report);
    report.warnings.extend(crate::scene::user_props::not_written_warning(scene, "3DA"));
    let anim_index = anim.and(opts.animation);
    let channels_of = crate::anim::channels_by_node(scene, anim_index);
    let cx = Context { scene, anim, anim_index, channels_of, ents, frames, space };
    let (entities, bind, mut jobs, late) = entities(&cx, &mut mats, &mut report);
    let textures = crate::output::TexturePlan::new(scene);
    let (materials, scripts) =
        mats.finish(opts.model.as_deref(), opts.source.as_deref(), &textures, &mut report);
    jobs.sort_by_key(|j| cx.ents.file_index[j.0]);
    let colmap_id = match opts.collision_map {
        true => layout::colmap_type::AABBTREE,
        false => layout::colmap_type::UNKNOWN,
    };
    let frames = (cx.frames.hi + 1) as u32;
    let file = File { frames, colmap_id, materials, entities, ..File::default() };
    Ok(Plan { cx, bind, jobs, late, file, scripts, report, collision_map: opts.collision_map })
}

impl Plan<'_> {
    /// Builds each entity's surfaces in file order (a batch ahead,
    /// [`geometry::SurfacesAhead`]), gathers from them the file's counts and bounds and the
    /// collision map, and, with `out`, writes the file there entity by entity
    /// ([`super::write::Streamer`]), dropping each entity's surfaces once written (issue 37
    /// goal 6: the surfaces of the whole file are never in memory at once). Returns the file
    /// (without surfaces when written to `out`) and the collision map as trees.
    ///
    /// Errors: counts past the format's fields, and those of [`super::write_to`].
    fn stream(
        self,
        out: Option<&mut std::fs::File>,
    ) -> Result<(File, Option<Colmap>, Vec<MaterialScript>, ExportReport), Error> {
        let Plan { cx, bind, jobs, late, mut file, scripts, mut report, collision_map } = self;
        let ents = &cx.ents;
        let world_k = first_frame_worlds(&cx, &file.entities);
        let mut gather = collision_map.then(|| Gather::new(&file, cx.frames.lo as f64));
        let mut job_of = vec![None; ents.nodes.len()];
        for (j, job) in jobs.iter().enumerate() {
            job_of[job.0] = Some(j);
        }
        let mut ahead = geometry::SurfacesAhead::new(cx.scene, ents, &bind, jobs);
        let mut lines = geometry::LateLines::new(ents.nodes.len());
        let mut boxes = vec![geometry::EMPTY; ents.nodes.len()];
        let (mut faces, mut vertices) = (0usize, 0usize);
        let mut streamer = match out {
            Some(out) => Some(Streamer::new(&file, out)?),
            None => None,
        };
        for (i, &k) in ents.order.iter().enumerate() {
            let e = &mut file.entities[i];
            if let (Some(j), Some(late)) = (job_of[k], late[k]) {
                geometry::mesh_surfaces(cx.scene, ents, (k, late), ahead.take(j), e, &mut lines);
            }
            faces += e.surfaces.iter().map(|s| s.tri_list.len() / 3).sum::<usize>();
            vertices += e.surfaces.iter().map(|s| s.s_size as usize).sum::<usize>();
            let world = world_k[k];
            boxes[k] = geometry::grow(
                geometry::EMPTY,
                e.surfaces
                    .iter()
                    .flat_map(|s| s.xyz.iter().flatten())
                    .map(|p| world.transform_point3(DVec3::from(p.map(f64::from))).to_array()),
            );
            if let Some(g) = &mut gather {
                g.add(i, e);
            }
            if let Some(w) = &mut streamer {
                w.entity(e)?;
                e.surfaces = Vec::new();
            }
        }
        let totals = lines.apply(&mut report);
        report.triangles = totals.triangles;
        if totals.triangles > 0 {
            report.acmr_before = totals.acmr_before / totals.triangles as f64;
            report.acmr_after = totals.acmr_after / totals.triangles as f64;
        }
        file.bounds = geometry::extents(boxes.into_iter().fold(geometry::EMPTY, geometry::union));
        file.num_faces =
            i32::try_from(faces).map_err(|_| Error::Invalid("too many faces".into()))?;
        file.num_vertices =
            i32::try_from(vertices).map_err(|_| Error::Invalid("too many vertices".into()))?;
        let colmap = gather.map(|g| g.build(&mut report.warnings));
        if let Some(w) = streamer {
            w.finish(&file, colmap.as_ref())?;
        }
        Ok((file, colmap, scripts, report))
    }
}

/// What the passes after the first few read: the scene, the written animation, the
/// entities, the written frames and the file's root space.
struct Context<'a> {
    scene: &'a Scene,
    /// The animation written (`None`: the rest pose only).
    anim: Option<&'a crate::anim::Animation>,
    /// Its index in [`Scene::animations`].
    anim_index: Option<usize>,
    /// `anim`'s channels on each scene node, in channel order
    /// ([`crate::anim::channels_by_node`]): looked up per entity, where a scan of all channels
    /// made the export quadratic in the animated nodes.
    channels_of: Vec<Vec<&'a crate::anim::ChannelTarget>>,
    ents: Entities,
    frames: Frames,
    space: RootSpace,
}

impl<'a> Context<'a> {
    /// The channel targets of the written animation on scene node `id`, in channel order.
    fn node_channels(&self, id: NodeId) -> &[&'a crate::anim::ChannelTarget] {
        self.channels_of.get(id).map_or(&[], Vec::as_slice)
    }

    /// World matrices of every scene node in the file's root space at output frame `f`.
    fn world_at(&self, f: i64) -> Vec<DMat4> {
        let time = crate::anim::Time::Frame(f as f64 / self.frames.range.rate);
        let mut w = self.scene.evaluate(self.anim_index, time).world;
        if self.space.convert {
            w.iter_mut().for_each(|m| *m = self.space.to_file * *m);
        }
        w
    }
}

/// The file's root space: the source's world re-expressed in the written axes
/// ([`ExportOptions::axes`]).
struct RootSpace {
    /// Source world → file root space.
    to_file: DMat4,
    /// Whether `to_file` is not the identity: root entities then take `to_file · local`.
    convert: bool,
    /// The conversion as a turn when it is one (no mirror, scale or shift): root entities
    /// then keep their keys, turned.
    turn: Option<DQuat>,
}

/// The root space for `axes`, reporting the conversion (and a mirroring one).
fn root_space(scene: &Scene, axes: Axes, report: &mut ExportReport) -> RootSpace {
    let to_file = match axes {
        Axes::Max => scene.axis_unit_conversion(AxisSystem::Z_UP_RIGHT_HANDED, None),
        Axes::Source => DMat4::IDENTITY,
    };
    let convert = !to_file.abs_diff_eq(DMat4::IDENTITY, 1e-12);
    let turn = convert.then(|| pure_rotation(to_file)).flatten();
    if convert {
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
    RootSpace { to_file, convert, turn }
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

/// Every entity, in file order, with its tracks but not its surfaces; the bind poses of skins
/// go into `bone_init_tm` ([`skin::bind_poses`], chosen at the first written frame). Fills in
/// the report's per-entity lists ([`ExportReport::tracks`], `entity_nodes`). Returns besides
/// the bind poses, the mesh entities' jobs (slot order: their [`geometry::slot_materials`]
/// grow the material table in first use) and where each one's surface lines go in the
/// report.
#[allow(clippy::type_complexity)]
fn entities(
    cx: &Context,
    mats: &mut Materials,
    report: &mut ExportReport,
) -> (
    Vec<Entity>,
    BindPoses,
    Vec<(usize, usize, geometry::SlotMaterials)>,
    Vec<Option<geometry::Late>>,
) {
    let ents = &cx.ents;
    let first_world = cx.world_at(cx.frames.lo);
    let bind = skin::bind_poses(
        cx.scene,
        &ents.nodes,
        &ents.slot_of,
        &ents.file_index,
        &first_world,
        &ents.names,
        report,
    );
    let n = ents.nodes.len();
    let mut entities: Vec<Option<Entity>> = vec![None; n];
    let mut sources: Vec<Option<EntityTracks>> = vec![None; n];
    let mut needs = Vec::new();
    let pivots_animated = tracks::pivots_animated(cx.scene, cx.anim);
    let ancestors_unscaled = tracks::ancestors_unscaled(cx.scene, cx.anim);
    // Children per entity, counted once (a count per entity over every entity was quadratic).
    let mut children = vec![0usize; n];
    for &p in ents.parents.iter().flatten() {
        children[p] += 1;
    }
    // Material table indices in scene order (the surfaces are built later, in file order:
    // `Plan::stream`).
    let mut jobs = Vec::new();
    for k in 0..n {
        if let Some(m) = mesh_of(cx, k) {
            jobs.push((k, m, geometry::slot_materials(&cx.scene.meshes[m], mats)));
        }
    }
    let mut late = vec![None; n];
    for k in 0..n {
        let mut e;
        (e, late[k]) = entity(cx, (k, children[k]), &bind, report);
        let (t, need) = tracks::plan(cx, k, &pivots_animated, &ancestors_unscaled, &mut e, report);
        needs.extend(need);
        sources[ents.file_index[k]] = Some(t);
        entities[ents.file_index[k]] = Some(e);
    }
    resample::resample(cx, &needs, &mut entities, &mut sources, report);
    tracks::report_kept(&sources, report);
    report.tracks = sources.into_iter().map(|t| t.expect("every slot filled")).collect();
    let entities: Vec<Entity> =
        entities.into_iter().map(|e| e.expect("every slot filled")).collect();
    report.entity_nodes = ents.order.iter().map(|&k| ents.nodes[k]).collect();
    (entities, bind, jobs, late)
}

/// The scene mesh of entity slot `k` when it is written as a mesh entity (a mesh node with a
/// mesh).
fn mesh_of(cx: &Context, k: usize) -> Option<usize> {
    let node = &cx.scene.nodes[cx.ents.nodes[k]];
    node.mesh.filter(|_| matches!(node.kind, NodeKind::Mesh))
}

/// The entity of slot `k` (with `children` child entities) without its tracks and surfaces:
/// type, name, `bone_init_tm`, parent and child count, and for a mesh its report lines
/// ([`geometry::mesh_entity`], which also says where the surfaces' lines go).
fn entity(
    cx: &Context,
    (k, children): (usize, usize),
    bind: &BindPoses,
    report: &mut ExportReport,
) -> (Entity, Option<geometry::Late>) {
    let (scene, ents) = (cx.scene, &cx.ents);
    let id = ents.nodes[k];
    let node = &scene.nodes[id];
    let type_id = match node.kind {
        NodeKind::Mesh => entity_type::MESH,
        NodeKind::Bone => entity_type::BONE,
        _ => entity_type::HELPER,
    };
    let mut e = Entity::new(type_id, &ents.names[k]);
    if let Some(tm) = bind.init_tm.get(&k) {
        e.bone_init_tm = tm.to_cols_array().map(|x| x as f32);
    }
    e.parent_idx = ents.parents[k].map_or(layout::NO_PARENT, |p| ents.file_index[p] as u16);
    e.num_children = children as u16;
    let mut late = None;
    if let Some(m) = mesh_of(cx, k) {
        late = Some(geometry::mesh_entity(scene, ents, (k, m), bind, &mut e, report));
    } else {
        if matches!(node.kind, NodeKind::Mesh) {
            report.warnings.push(format!(
                "{}: mesh node without a mesh, written as a helper",
                quoted(&ents.names[k])
            ));
            e.type_id = entity_type::HELPER;
        }
        report.converted.push(format!(
            "node {id} {} → {} entity {}",
            quoted(&node.name),
            node.kind.name(),
            quoted(&ents.names[k])
        ));
    }
    (e, late)
}

/// Per slot: the entity's world matrix at the first frame, its exported local matrices
/// composed (the file's bounds are its baked vertices through these).
fn first_frame_worlds(cx: &Context, entities: &[Entity]) -> Vec<DMat4> {
    let (ents, lo) = (&cx.ents, cx.frames.lo as f64);
    let mut world_k = vec![DMat4::IDENTITY; ents.nodes.len()];
    for &k in &ents.order {
        let e = &entities[ents.file_index[k]];
        let t = e.position.as_ref().and_then(|t| t.sample(lo)).unwrap_or(DVec3::ZERO);
        let r = e.rotation.as_ref().and_then(|t| t.sample(lo)).unwrap_or(DQuat::IDENTITY);
        let s = e.scale.as_ref().and_then(|t| t.sample(lo)).unwrap_or(DVec3::ONE);
        let l = DMat4::from_scale_rotation_translation(s, r, t);
        world_k[k] = ents.parents[k].map_or(l, |p| world_k[p] * l);
    }
    world_k
}

fn f3(v: DVec3) -> [f32; 3] {
    v.as_vec3().to_array()
}

/// Writes `scene` as `path` (a `.3da`), one `<model>_<material>.mat` script per material
/// beside it (names in docs/3da.md, "Material scripts") and, with
/// [`ExportOptions::copy_textures`], the texture images the scripts name. Each file is written
/// atomically ([`crate::write_atomically`]), the scripts and images before the model, which
/// is built and written entity by entity (one batch of surfaces and about 1 MiB of its bytes
/// in memory at a time; [`super::write_to`]), and if any
/// write fails the files this call created are removed again, so a failure leaves no partial
/// output. Images that could not be found are
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
    // The model is written entity by entity (`Plan::stream`) after its companions: the
    // scripts are known before any surface is built.
    let plan = plan(scene, &opts)?;
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    let mut companions: Vec<crate::output::Companion> = plan
        .scripts
        .iter()
        .map(|s| crate::output::Companion {
            path: dir.join(&s.file_name),
            bytes: s.text.as_bytes().into(),
            what: format!("the material script {}", s.file_name),
        })
        .collect();
    let mut texture_warnings = Vec::new();
    if opts.copy_textures {
        let (images, warnings) = crate::output::TexturePlan::new(scene).companions(&dir);
        companions.extend(images);
        texture_warnings = warnings;
    }
    let created = crate::output::write_companions(&companions, &source)?;
    let mut report = None;
    let r = crate::write_atomically_seekable(path, |w| {
        let (.., r) = plan.stream(Some(w)).map_err(|e| match e {
            super::Error::Io(source) => crate::Error::Io { path: path.into(), source },
            e => e.into(),
        })?;
        report = Some(r);
        Ok(())
    });
    match r {
        Ok(()) => {
            let mut report = report.expect("set by the write that succeeded");
            report.warnings.extend(texture_warnings);
            Ok(report)
        }
        Err(e) => {
            for p in created {
                let _ = std::fs::remove_file(p);
            }
            Err(e)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anim::{ChannelTarget, Interpolation, Track};
    use crate::scene::{Mesh, Node};

    pub(super) fn triangle_scene() -> Scene {
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
        s.cameras.push(Camera::new("cam", 45.0, FovAxis::Horizontal));
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
    fn a_model_written_entity_by_entity_is_the_exported_file() {
        // `save` builds, writes and drops surfaces entity by entity, a batch ahead; `export`
        // keeps the whole file. Eight grids of 40,006 corners make two batches; the last
        // node is an instance of the first grid (its surfaces copied across the batches, at
        // another height), one grid is the collision hull (its own tree), one mirrored
        // grid reverses its winding.
        let mut s = Scene::default();
        for i in 0..8u32 {
            let name = format!("g{i}");
            s.meshes.push(crate::scene::test_meshes::grid_mesh(&name, 100, f64::from(i)));
            let node_name = match i {
                5 => super::super::layout::COLLISION_HULL.to_string(),
                _ => format!("Grid{i}"),
            };
            let mut n = Node::new(node_name, NodeKind::Mesh);
            n.mesh = Some(i as usize);
            if i == 3 {
                n.set_geometry_transform(DMat4::from_scale(DVec3::new(-1.0, 1.0, 1.0)));
            }
            s.nodes.push(n);
            s.attach(i as usize, None);
        }
        let mut copy = Node::new("Copy", NodeKind::Mesh);
        copy.mesh = Some(0);
        copy.transform.translation = DVec3::new(0.0, 0.0, 20.0);
        s.nodes.push(copy);
        s.attach(8, None);
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("m.3da");
        let saved = save(&s, &out, &ExportOptions::default()).unwrap();
        // `save` names the material table after the model's stem; so must `export`.
        let opts = ExportOptions { model: Some("m".into()), ..ExportOptions::default() };
        let (file, _, exported) = export(&s, &opts).unwrap();
        let bytes = std::fs::read(&out).unwrap();
        assert!(bytes == super::super::write(&file).unwrap(), "streamed bytes differ");
        assert_eq!(saved.to_string(), exported.to_string());
        assert_eq!(saved.triangles, 9 * 20_004);
        // The reader, an independent path, finds each grid whole at its height.
        let (back, _) = super::super::read(&bytes, &crate::limits::Limits::default()).unwrap();
        assert_eq!(back.entities.len(), 9);
        for e in &back.entities {
            let tris: usize = e.surfaces.iter().map(|s| s.tri_list.len() / 3).sum();
            assert_eq!(tris, 20_004, "{}", layout::name_str(&e.name));
        }
        assert_eq!(back.num_faces, 9 * 20_004);
        // No temporary file left beside the model.
        for f in std::fs::read_dir(dir.path()).unwrap() {
            let name = f.unwrap().file_name().into_string().unwrap();
            assert!(name == "m.3da" || name.ends_with(".mat"), "{name}");
        }
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
    fn surfaces_built_on_several_threads_give_the_bytes_of_one_thread_and_stay_in_place() {
        // Three meshes of 40,006 corners each pass the parallel threshold together. Each lies
        // at its own height, so surfaces handed to the wrong entity show.
        let mut s = Scene::default();
        for i in 0..3u32 {
            s.meshes.push(crate::scene::test_meshes::grid_mesh(
                &format!("g{i}"),
                100,
                f64::from(i),
            ));
            let mut n = Node::new(format!("Grid{i}"), NodeKind::Mesh);
            n.mesh = Some(i as usize);
            s.nodes.push(n);
            s.attach(i as usize, None);
        }
        let on = |threads: usize| {
            rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap().install(|| {
                let (file, _, _) = export(&s, &ExportOptions::default()).unwrap();
                (crate::formats::three_da::write::write(&file).unwrap(), file)
            })
        };
        let (one, file) = on(1);
        assert!(one == on(2).0, "two threads wrote other bytes than one");
        for i in 0..3 {
            let name = format!("Grid{i}");
            let e = file.entities.iter().find(|e| layout::name_str(&e.name) == name).unwrap();
            let pts: Vec<[f32; 3]> =
                e.surfaces.iter().flat_map(|s| s.xyz.iter().flatten()).copied().collect();
            // 101 × 101 grid vertices; 100 × 100 quads and the L hexagon: 2 × 10,000 + 4
            // triangles.
            assert_eq!(pts.len(), 101 * 101, "Grid{i}");
            let tris: usize = e.surfaces.iter().map(|s| s.tri_list.len() / 3).sum();
            assert_eq!(tris, 20_004, "Grid{i}");
            // On the plane of its height, whichever axis the file's space makes of z.
            let flat = (0..3).any(|a| pts.iter().all(|p| p[a].abs() == i as f32));
            assert!(flat, "Grid{i} left its plane");
        }
    }

    /// Three nodes show one mesh whose first vertex is NaN: `A` and `B` with no geometry
    /// transform, `C` moved by one. `A` and `B` share their surfaces (built once), `C` gets its
    /// own; each entity's warning names it, and each keeps the mesh's 12 triangles.
    #[test]
    fn instances_of_a_mesh_share_their_surfaces_and_keep_their_own_warnings() {
        let mut mesh = crate::scene::geometry::unit_cube(None);
        mesh.positions[0] = glam::DVec3::splat(f64::NAN);
        let mut s = Scene::default();
        s.meshes.push(mesh);
        for (i, name) in ["A", "B", "C"].into_iter().enumerate() {
            let mut n = Node::new(name, NodeKind::Mesh);
            n.mesh = Some(0);
            if name == "C" {
                n.set_geometry_transform(DMat4::from_translation(glam::DVec3::X * 5.0));
            }
            s.nodes.push(n);
            s.attach(i, None);
        }
        let (file, _, report) = export(&s, &ExportOptions::default()).unwrap();
        let entity =
            |name: &str| file.entities.iter().find(|e| layout::name_str(&e.name) == name).unwrap();
        let (a, b, c) = (entity("A"), entity("B"), entity("C"));
        assert_eq!(a.surfaces, b.surfaces);
        assert_ne!(a.surfaces, c.surfaces);
        for e in [a, b, c] {
            assert_eq!(e.surfaces.iter().map(|s| s.tri_list.len() / 3).sum::<usize>(), 12);
        }
        for name in ["A", "B", "C"] {
            let want = format!("\"{name}\": 3 non-finite numbers");
            assert!(report.warnings.iter().any(|w| w.starts_with(&want)), "{:?}", report.warnings);
        }
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

    pub(super) fn mesh_scene(mesh: Mesh, g: DMat4) -> Scene {
        let mut s = Scene::default();
        s.meshes.push(mesh);
        let mut n = Node::new("m", NodeKind::Mesh);
        n.mesh = Some(0);
        n.set_geometry_transform(g);
        s.nodes.push(n);
        s.attach(0, None);
        s
    }

    /// A null node with the given channels over `frame_range`, in `axes`.
    pub(super) fn animated_null(
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

    pub(super) fn scalar(keys: &[(f64, f64)], interpolation: Interpolation<f64>) -> Track<f64> {
        use crate::anim::Key;
        Track::new(
            keys.iter()
                .map(|&(frame, value)| Key { frame, value, interpolation: interpolation.clone() })
                .collect(),
        )
    }
}

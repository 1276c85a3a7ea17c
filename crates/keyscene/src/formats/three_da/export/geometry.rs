//! Mesh entities (docs/3da.md, "Exporter", Geometry): the geometry transform baked into the
//! vertices, triangles grouped by material into surfaces of at most
//! [`MAX_SURFACE_VERTICES`] distinct corners, the index list cache-optimised and stripified,
//! tangents from UV set 0 where the source has none.

use std::cell::Cell;

use glam::{DMat4, DVec3, Vec2, Vec3, Vec4};

use super::materials::Materials;
use super::names::Entities;
use super::skin::{blend_weights, BindPoses};
use super::{f3, ExportReport, CACHE_SIZE, MAX_SURFACE_VERTICES};
use crate::formats::three_da::layout::{entity_type, Extents, VBlend};
use crate::formats::three_da::model::{Entity, Surface};
use crate::quoting::quoted;
use crate::scene::{geometry, Mesh, Scene, Skin};

/// A mesh's skin as the blend stream needs it: the skin, its joints' file indices and the
/// entity unweighted vertices are bound to.
type SkinUse<'a> = (&'a Skin, (&'a [u8], u8));

/// Sums over every surface written: ACMR weighted by triangles. (The file's bounds are taken
/// from the entities' `xyz` streams themselves: a copy of every vertex as `DVec3` was kept
/// here before stop 29, 75 MB beside the 3DA model of `mesh_heavy_7400_binary.fbx`.)
#[derive(Default)]
pub(super) struct Totals {
    pub acmr_before: f64,
    pub acmr_after: f64,
    pub triangles: usize,
}

/// Warns for each mesh with a geometry cache: it is left out (docs/3da.md, "Geometry
/// caches").
pub(super) fn report_geometry_caches(scene: &Scene, report: &mut ExportReport) {
    for mesh in scene.meshes.iter().filter(|m| m.geometry_cache.is_some()) {
        report.warnings.push(format!(
            "mesh \"{}\": its geometry cache is not written (3DA has no per-vertex animation); \
             the mesh is written undeformed by it",
            mesh.name
        ));
    }
}

/// The report lines of mesh entity `e` (slot `k`, scene mesh `m`) that its surfaces do not
/// decide: skinned when [`BindPoses`] binds it, morph targets and UV sets past 1 reported
/// dropped, the geometry transform baked. What the surfaces decide ([`mesh_surfaces`]) comes
/// later, when they are built; its places in the report are kept in the returned [`Late`].
pub(super) fn mesh_entity(
    scene: &Scene,
    ents: &Entities,
    (k, m): (usize, usize),
    bind: &BindPoses,
    e: &mut Entity,
    report: &mut ExportReport,
) -> Late {
    let (id, name) = (ents.nodes[k], &ents.names[k]);
    let node = &scene.nodes[id];
    let mesh = &scene.meshes[m];
    let joints = bind.joints.get(&k);
    if let (Some(_), Some(j)) = (&mesh.skin, joints) {
        e.type_id = entity_type::MESH_SKINNED;
        report.converted.push(format!(
            "{}: skin with {} joints → blend stream (4 largest weights per vertex), bind pose in bone_init_tm",
            quoted(name),
            j.len()
        ));
    }
    if !mesh.morph_targets.is_empty() {
        report.dropped.push(format!(
            "{}: {} morph targets",
            quoted(name),
            mesh.morph_targets.len()
        ));
    }
    if mesh.uv_sets.len() > 2 {
        report.dropped.push(format!("{}: UV sets 2..{}", quoted(name), mesh.uv_sets.len() - 1));
    }
    if node.geometry_transform() != DMat4::IDENTITY {
        report.baked.push(format!(
            "{}: geometry transform (pivot / mesh matrix) baked into the vertices",
            quoted(name)
        ));
    }
    let late = Late { warnings_at: report.warnings.len(), converted_at: report.converted.len() };
    report.converted.push(String::new());
    late
}

/// Where a mesh entity's surface warnings and its `converted` line go in the report
/// ([`mesh_entity`] keeps the places; [`LateLines`] fills them).
#[derive(Clone, Copy)]
pub(super) struct Late {
    warnings_at: usize,
    converted_at: usize,
}

/// What the surfaces of mesh entities add to the report, gathered as they are built (in file
/// order) and put at their places by [`LateLines::apply`]: the report reads as if every
/// entity's surfaces had been built in slot order.
#[derive(Default)]
pub(super) struct LateLines {
    /// Per slot: its place, warnings and `converted` line.
    lines: Vec<Option<(Late, Vec<String>, String)>>,
    /// Per slot: each surface's ACMR before and after, and triangles (summed in slot order).
    figures: Vec<Vec<(f64, f64, usize)>>,
}

impl LateLines {
    pub(super) fn new(slots: usize) -> LateLines {
        LateLines { lines: vec![None; slots], figures: vec![Vec::new(); slots] }
    }

    /// Inserts the lines at their places (in reverse slot order, so the earlier places hold)
    /// and returns the totals over every surface, summed in slot order.
    pub(super) fn apply(self, report: &mut ExportReport) -> Totals {
        for (late, warnings, converted) in self.lines.into_iter().rev().flatten() {
            report.converted[late.converted_at] = converted;
            report.warnings.splice(late.warnings_at..late.warnings_at, warnings);
        }
        let mut totals = Totals::default();
        for (before, after, triangles) in self.figures.into_iter().flatten() {
            totals.acmr_before += before * triangles as f64;
            totals.acmr_after += after * triangles as f64;
            totals.triangles += triangles;
        }
        totals
    }
}

/// Fills in the surfaces and bounds of mesh entity `e` (slot `k`) and keeps what they add
/// to the report in `lines` at the places `late` holds ([`mesh_entity`]).
pub(super) fn mesh_surfaces(
    scene: &Scene,
    ents: &Entities,
    (k, late): (usize, Late),
    surfaces: MeshSurfaces,
    e: &mut Entity,
    lines: &mut LateLines,
) {
    let (id, name) = (ents.nodes[k], &ents.names[k]);
    let node = &scene.nodes[id];
    let MeshSurfaces { built, warnings } = surfaces;
    let warnings = warnings.into_iter().map(|w| format!("{}: {w}", quoted(name))).collect();
    lines.figures[k] = built.iter().map(|s| (s.acmr_before, s.acmr_after, s.triangles)).collect();
    e.surfaces = built.into_iter().map(|s| s.surface).collect();
    e.bounds =
        bounds(e.surfaces.iter().flat_map(|s| s.xyz.iter().flatten()).map(|p| p.map(f64::from)));
    let converted = format!(
        "node {id} {} → mesh entity {}: {} surfaces, {} triangles",
        quoted(&node.name),
        quoted(name),
        e.surfaces.len(),
        e.surfaces.iter().map(|s| s.tri_list.len() / 3).sum::<usize>()
    );
    lines.lines[k] = Some((late, warnings, converted));
}

/// The box around `points` (the default, empty box when there are none).
pub(super) fn bounds(points: impl Iterator<Item = [f64; 3]>) -> Extents {
    extents(grow(EMPTY, points))
}

/// A box as its lowest and highest corner; [`EMPTY`] holds no point.
pub(super) type Box3 = (DVec3, DVec3);

/// The box of no point (its minimum above its maximum).
pub(super) const EMPTY: Box3 = (DVec3::INFINITY, DVec3::NEG_INFINITY);

/// `b` grown over `points`, one after the other. Growing box by box ([`union`]) in the
/// points' order gives the same box: `min` and `max` pick the same point among equals.
pub(super) fn grow(b: Box3, points: impl Iterator<Item = [f64; 3]>) -> Box3 {
    let (mut lo, mut hi) = b;
    for p in points {
        let p = DVec3::from(p);
        lo = lo.min(p);
        hi = hi.max(p);
    }
    (lo, hi)
}

/// The box around `a` and `b`.
pub(super) fn union(a: Box3, b: Box3) -> Box3 {
    (a.0.min(b.0), a.1.max(b.1))
}

/// `b` as a file's extents (the default, empty extents for [`EMPTY`]).
pub(super) fn extents((lo, hi): Box3) -> Extents {
    if lo.x > hi.x {
        return Extents::default();
    }
    Extents { min: f3(lo), max: f3(hi) }
}

/// A surface with its ACMR figures.
#[derive(Clone)]
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

/// A mesh's corners as they are written: positions and normals in the baked frame (`g`
/// applied), the polygon of each corner, the skin. Non-finite numbers (inf/NaN an ASCII file
/// spelled out, or values past f32's range) become 0, counted in `bad` for one warning per
/// mesh: 3DA has no way to say "no value", and one NaN position poisons the collision map's
/// boxes (issue 12 §3, docs/3da.md).
struct Corners<'a> {
    mesh: &'a Mesh,
    g: DMat4,
    skin: Option<SkinUse<'a>>,
    /// Baked positions per vertex, cleaned first so triangulation and derived normals see
    /// finite numbers.
    pos: Vec<DVec3>,
    /// Per corner.
    normals: Vec<Vec3>,
    /// Polygon of each corner (for per-polygon attributes).
    poly_of: Vec<usize>,
    bad: Cell<usize>,
}

impl<'a> Corners<'a> {
    fn new(mesh: &'a Mesh, g: DMat4, skin: Option<SkinUse<'a>>) -> Self {
        let bad = Cell::new(0usize);
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
        // reversed when `g` mirrors, so those turn with it; stored normals carried by the
        // inverse transpose already face the mirrored front.
        let stored = mesh.smoothing_groups.is_none() && mesh.normals.is_some();
        let normals: Vec<Vec3> = geometry::corner_normals(mesh, &pos, geometry::normal_matrix(g))
            .into_iter()
            .map(|n| if mirrored && !stored { -n } else { n })
            .collect();
        let mut poly_of = vec![0usize; mesh.corner_vertices.len()];
        for p in 0..mesh.polygon_count() {
            for c in mesh.polygon_corners(p) {
                poly_of[c] = p;
            }
        }
        Corners { mesh, g, skin, pos, normals, poly_of, bad }
    }

    /// Non-finite components of `v` set to 0 and counted.
    fn fin(&self, v: &mut [f32]) {
        for x in v.iter_mut().filter(|x| !x.is_finite()) {
            *x = 0.0;
            self.bad.set(self.bad.get() + 1);
        }
    }

    fn uv(&self, set: usize, v: u32, c: usize, p: usize) -> Option<Vec2> {
        self.mesh.uv_sets.get(set).and_then(|s| s.uvs.get(v, c, p))
    }

    /// The source's tangent in the baked frame, normalised; zero when it has none (or a
    /// degenerate one).
    fn source_tangent(&self, v: u32, c: usize, p: usize) -> Vec3 {
        let t = self.mesh.tangents.as_ref().and_then(|a| a.get(v, c, p)).unwrap_or(Vec3::ZERO);
        let t = self.g.transform_vector3(t.as_dvec3()).as_vec3();
        if t.is_finite() && t.length() > 1e-6 {
            t.normalize()
        } else {
            Vec3::ZERO
        }
    }

    /// The written attributes of corner `c`.
    fn key(&self, c: usize) -> VKey {
        let mesh = self.mesh;
        let v = mesh.corner_vertices[c];
        let p = self.poly_of[c];
        let position = self.pos.get(v as usize).copied().unwrap_or(DVec3::ZERO);
        let position = f3(position);
        let mut n = self.normals[c].to_array();
        self.fin(&mut n);
        let mut a = self.uv(0, v, c, p).unwrap_or(Vec2::ZERO).to_array();
        self.fin(&mut a);
        let mut b = self.uv(1, v, c, p).unwrap_or(Vec2::ZERO).to_array();
        self.fin(&mut b);
        let mut color =
            mesh.colors.as_ref().and_then(|a| a.get(v, c, p)).unwrap_or(Vec4::ONE).to_array();
        self.fin(&mut color);
        let color = Vec4::from_array(color);
        let byte = |x: f32| (x.clamp(0.0, 1.0) * 255.0).round() as u8;
        VKey {
            pos: position.map(f32::to_bits),
            normal: n.map(f32::to_bits),
            uv0: a.map(f32::to_bits),
            uv1: b.map(f32::to_bits),
            blend: self.skin.map_or(VBlend::default(), |(s, (j, unweighted))| {
                blend_weights(
                    s.influences.get(v as usize).map_or(&[], Vec::as_slice),
                    j,
                    unweighted,
                )
            }),
            color: u32::from_le_bytes([byte(color.x), byte(color.y), byte(color.z), byte(color.w)]),
            tangent: self.source_tangent(v, c, p).to_array().map(f32::to_bits),
        }
    }
}

/// Corners of mesh entities from which [`SurfacesAhead`] builds a batch on rayon's pool (with
/// two or more mesh entities): below it, as in every corpus file, the pool's start costs
/// more than it saves (the glTF writer's threshold, `gltf/export/ahead.rs`).
const PARALLEL_CORNERS: usize = 1 << 16;

/// A mesh's material table index per material slot its polygons use.
pub(super) type SlotMaterials = foldhash::HashMap<u32, usize>;

/// The material table index of every material slot `mesh`'s polygons use, asked of `mats` in
/// first-use polygon order (the table grows in first-use order, so this is the one part of a
/// mesh entity that must run in scene order; the surfaces are then built from it on any
/// thread, [`SurfacesAhead`]).
pub(super) fn slot_materials(mesh: &Mesh, mats: &mut Materials) -> SlotMaterials {
    let mut table = SlotMaterials::default();
    for p in 0..mesh.polygon_count() {
        let slot = mesh.polygon_material(p);
        table.entry(slot).or_insert_with(|| {
            let mat = (slot != Mesh::NO_MATERIAL)
                .then(|| mesh.material_slots.get(slot as usize).copied().flatten())
                .flatten();
            mats.get(mat)
        });
    }
    table
}

/// The surfaces of one mesh entity and the warnings building them gave (without the entity's
/// name, which [`mesh_entity`] puts before each).
#[derive(Clone)]
pub(super) struct MeshSurfaces {
    built: Vec<Built>,
    warnings: Vec<String>,
}

/// What decides a mesh entity's surfaces besides its name (which only its warnings carry): the
/// scene mesh, the bits of its geometry transform and its [`SlotMaterials`] (FBX binds
/// materials to the node, so instances of one mesh can differ there). Skinned entities have
/// none: their blend streams name their own joints.
type SurfaceKey = (usize, [u64; 16], Vec<(u32, usize)>);

/// Corners one batch of [`SurfacesAhead`] may hold beyond its first mesh entity (the glTF
/// writer's batch, `gltf/export/ahead.rs`).
const BATCH_CORNERS: usize = 1 << 18;

/// [`MeshSurfaces`] of the mesh entities `jobs` (slot `k`, mesh `m`, its
/// [`slot_materials`]), handed out in the order of `jobs` and built a batch ahead (at most
/// [`BATCH_CORNERS`] corners beyond its first entity), so that a writer holds one batch of
/// surfaces, not the whole file's. Entities with one [`SurfaceKey`] (instances of a mesh:
/// Blender's linked duplicates, 3ds Max instances) are built once and copied; the first is
/// kept until its last copy is handed out. They read nothing but the scene, so a batch with
/// [`PARALLEL_CORNERS`] or more corners among two or more distinct entities is built on
/// rayon's pool (issue #16 goal 6); the result is the same whatever the number of threads.
pub(super) struct SurfacesAhead<'a> {
    scene: &'a Scene,
    ents: &'a Entities,
    bind: &'a BindPoses,
    jobs: Vec<(usize, usize, SlotMaterials)>,
    /// Each job's first job with the same key (itself when it is the first).
    source: Vec<usize>,
    /// Per first job: the later jobs still to copy it.
    copies: Vec<usize>,
    /// The first job not built yet (copies count as built).
    next: usize,
    /// Built and not handed out yet (first jobs kept for their copies included), by job.
    ready: foldhash::HashMap<usize, MeshSurfaces>,
}

impl<'a> SurfacesAhead<'a> {
    pub(super) fn new(
        scene: &'a Scene,
        ents: &'a Entities,
        bind: &'a BindPoses,
        jobs: Vec<(usize, usize, SlotMaterials)>,
    ) -> SurfacesAhead<'a> {
        let mut ahead = SurfacesAhead {
            scene,
            ents,
            bind,
            source: Vec::new(),
            copies: vec![0; jobs.len()],
            jobs,
            next: 0,
            ready: foldhash::HashMap::default(),
        };
        let mut first: foldhash::HashMap<SurfaceKey, usize> = foldhash::HashMap::default();
        let source: Vec<usize> = (0..ahead.jobs.len())
            .map(|j| {
                let (k, m, table) = &ahead.jobs[j];
                if ahead.skin_of(*k, *m).is_some() {
                    return j;
                }
                let g = scene.nodes[ents.nodes[*k]].geometry_transform().to_cols_array();
                let mut slots: Vec<(u32, usize)> = table.iter().map(|(&s, &t)| (s, t)).collect();
                slots.sort_unstable();
                *first.entry((*m, g.map(f64::to_bits), slots)).or_insert(j)
            })
            .collect();
        for (j, &f) in source.iter().enumerate() {
            if f != j {
                ahead.copies[f] += 1;
            }
        }
        ahead.source = source;
        ahead
    }

    fn skin_of(&self, k: usize, m: usize) -> Option<SkinUse<'a>> {
        let (scene, bind) = (self.scene, self.bind);
        scene.meshes[m].skin.and_then(|si| scene.skins.get(si)).zip(
            bind.joints
                .get(&k)
                .map(|j| (j.as_slice(), bind.unweighted(k, &self.ents.file_index, j))),
        )
    }

    /// The surfaces of job `j`; jobs are taken in order, each once.
    pub(super) fn take(&mut self, j: usize) -> MeshSurfaces {
        if j >= self.next {
            self.build_batch(j);
        }
        let f = self.source[j];
        if f != j {
            self.copies[f] -= 1;
            if self.copies[f] == 0 {
                return self.ready.remove(&f).expect("kept for its copies");
            }
            return self.ready[&f].clone();
        }
        if self.copies[j] > 0 {
            return self.ready[&j].clone();
        }
        self.ready.remove(&j).expect("built ahead")
    }

    /// Builds the first jobs from `next` on (at least up to `j`) that fit a batch.
    fn build_batch(&mut self, j: usize) {
        let mut corners = 0;
        let mut end = self.next;
        while end < self.jobs.len() {
            let c = self.scene.meshes[self.jobs[end].1].corner_vertices.len();
            let firsts = self.source[end] == end;
            if end > j && firsts && corners + c > BATCH_CORNERS {
                break;
            }
            if firsts {
                corners += c;
            }
            end += 1;
        }
        let unique: Vec<usize> = (self.next..end).filter(|&i| self.source[i] == i).collect();
        let one = |&i: &usize| {
            let (k, m, table) = &self.jobs[i];
            let g = self.scene.nodes[self.ents.nodes[*k]].geometry_transform();
            (i, surfaces(&self.scene.meshes[*m], g, self.skin_of(*k, *m), table))
        };
        let made: Vec<(usize, MeshSurfaces)> = if unique.len() >= 2 && corners >= PARALLEL_CORNERS {
            use rayon::prelude::*;
            unique.par_iter().map(one).collect()
        } else {
            unique.iter().map(one).collect()
        };
        self.ready.extend(made);
        self.next = end;
    }
}

/// The surfaces of one mesh: triangles grouped by material, vertices de-duplicated, split at
/// [`MAX_SURFACE_VERTICES`], indices optimised and stripified.
fn surfaces(mesh: &Mesh, g: DMat4, skin: Option<SkinUse>, table: &SlotMaterials) -> MeshSurfaces {
    let corners = Corners::new(mesh, g, skin);
    let by_material = triangles_by_material(mesh, &corners.pos, g.determinant() < 0.0, table);
    // Each corner's key is built once, however many triangles (and surfaces) use it.
    let mut keys: Vec<Option<VKey>> = vec![None; mesh.corner_vertices.len()];
    // Per corner: (stream number, index in that stream); stream numbers start at 1.
    let mut memo: Vec<(u32, u16)> = vec![(0, 0); mesh.corner_vertices.len()];
    let mut streams = 0u32;
    let mut built = Vec::new();
    let mut warnings = Vec::new();
    for (material, tris) in by_material {
        let mut start = 0;
        while start < tris.len() {
            streams += 1;
            let (stream, end) = Stream::fill(&corners, &mut keys, &mut memo, streams, &tris, start);
            if end < tris.len() {
                warnings
                    .push(format!("surface split at {} vertices (u16 indices)", stream.map.len()));
            }
            built.push(stream.surface(material, mesh, skin.is_some()));
            start = end.max(start + 1);
        }
    }
    let bad = corners.bad.get();
    if bad > 0 {
        warnings.push(format!(
            "{bad} non-finite numbers (inf or NaN positions, normals, UVs or colours) written as 0"
        ));
    }
    MeshSurfaces { built, warnings }
}

/// Triangles (fans of the polygons by `scene::geometry::triangulate`, reversed when the
/// baked transform mirrors), each as three corner indices, grouped by material table index
/// (`table`, [`slot_materials`]; in table order).
fn triangles_by_material(
    mesh: &Mesh,
    pos: &[DVec3],
    mirrored: bool,
    table: &SlotMaterials,
) -> Vec<(usize, Vec<[usize; 3]>)> {
    let mut by_material: Vec<(usize, Vec<[usize; 3]>)> = Vec::new();
    for p in 0..mesh.polygon_count() {
        let t = table[&mesh.polygon_material(p)];
        let list = match by_material.iter_mut().find(|(m, _)| *m == t) {
            Some((_, l)) => l,
            None => {
                by_material.push((t, Vec::new()));
                &mut by_material.last_mut().unwrap().1
            }
        };
        let cs: Vec<usize> = mesh.polygon_corners(p).collect();
        for t in geometry::triangulate(pos, mesh.polygon(p)) {
            let tri = t.map(|k| cs[k]);
            list.push(if mirrored { [tri[0], tri[2], tri[1]] } else { tri });
        }
    }
    by_material.sort_by_key(|(m, _)| *m);
    by_material
}

/// One surface's vertex streams being filled: the distinct corners in first-use order and
/// the triangle list indexing them.
#[derive(Default)]
struct Stream {
    map: foldhash::HashMap<VKey, u16>,
    xyz: Vec<[f32; 3]>,
    nrm: Vec<[f32; 3]>,
    t0: Vec<[f32; 2]>,
    t1: Vec<[f32; 2]>,
    col: Vec<u32>,
    tan: Vec<Vec3>,
    blends: Vec<VBlend>,
    list: Vec<u32>,
}

impl Stream {
    /// The triangles `tris[start..]` that fit one surface (its stream stays within
    /// [`MAX_SURFACE_VERTICES`]), and the index of the first one left out. `keys` caches
    /// [`Corners::key`] per corner; `memo` caches per corner its index in the stream being
    /// filled, stamped with `stream` (a number of its own per stream), so a corner that
    /// several triangles of its polygon use is looked up once.
    fn fill(
        corners: &Corners,
        keys: &mut [Option<VKey>],
        memo: &mut [(u32, u16)],
        stream: u32,
        tris: &[[usize; 3]],
        start: usize,
    ) -> (Stream, usize) {
        let mut s = Stream::default();
        let mut end = start;
        while end < tris.len() {
            let tri = tris[end];
            // Each corner's stream index where it is known: from the memo, else by its key.
            let mut at: [Option<u16>; 3] = [None; 3];
            let mut new = 0;
            for i in 0..3 {
                let c = tri[i];
                if memo[c].0 == stream {
                    at[i] = Some(memo[c].1);
                    continue;
                }
                let k = *keys[c].get_or_insert_with(|| corners.key(c));
                at[i] = s.map.get(&k).copied();
                // A distinct key not in the stream yet (two corners of a triangle may share one).
                let repeated = (0..i).any(|j| at[j].is_none() && keys[tri[j]] == Some(k));
                if at[i].is_none() && !repeated {
                    new += 1;
                }
            }
            if s.map.len() + new > MAX_SURFACE_VERTICES {
                break;
            }
            for i in 0..3 {
                let c = tri[i];
                let ix = match at[i] {
                    Some(ix) => ix,
                    None => s.index(keys[c].expect("the key was made above")),
                };
                memo[c] = (stream, ix);
                s.list.push(u32::from(ix));
            }
            end += 1;
        }
        (s, end)
    }

    /// The stream index of vertex `k`, appended when it is new.
    fn index(&mut self, k: VKey) -> u16 {
        let next = self.map.len() as u16;
        *self.map.entry(k).or_insert_with(|| {
            self.xyz.push(k.pos.map(f32::from_bits));
            self.nrm.push(k.normal.map(f32::from_bits));
            self.t0.push(k.uv0.map(f32::from_bits));
            self.t1.push(k.uv1.map(f32::from_bits));
            self.col.push(k.color);
            self.blends.push(k.blend);
            self.tan.push(Vec3::from_array(k.tangent.map(f32::from_bits)));
            next
        })
    }

    /// The surface: the list reordered for the vertex cache, its strip, and the streams the
    /// mesh has (texcoord 0 and tangents with UV set 0 or source tangents, the lightmap with
    /// UV set 1, colours, blend records when skinned).
    fn surface(self, material: usize, mesh: &Mesh, skinned: bool) -> Built {
        let Stream { xyz, nrm, t0, t1, col, tan, blends, list, .. } = self;
        let mut s = Surface { material_idx: material as i32, ..Surface::default() };
        let n = xyz.len();
        let (optimized, before, after) = optimize(&list, n);
        let strip = meshopt::stripify(&optimized, n, 0).unwrap_or_default();
        s.tri_list = optimized.iter().map(|&i| i as u16).collect();
        s.tri_strip = strip.iter().map(|&i| i as u16).collect();
        s.s_size = n as u32;
        if !mesh.uv_sets.is_empty() || mesh.tangents.is_some() {
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
        if !mesh.uv_sets.is_empty() {
            s.texcoord[0] = Some(t0);
        }
        if mesh.uv_sets.len() > 1 {
            s.lightmap = Some(t1);
        }
        if mesh.colors.is_some() {
            s.color = Some(col);
        }
        if skinned {
            s.blending = Some(blends);
        }
        Built { surface: s, triangles: list.len() / 3, acmr_before: before, acmr_after: after }
    }
}

/// Most triangles one vertex of a surface may be in for [`optimize`] to reorder it.
/// `meshopt::optimize_vertex_cache` walks every cached vertex's remaining triangles after each
/// triangle it emits, so its cost grows with the square of a vertex's valence: the fan of a
/// 10,000-corner n-gon took 80 % of converting `blender_300_ngon_big` (70 ms, a hundred times
/// its load). Past this valence the source order is kept, a fan's order being already one new
/// vertex per triangle.
pub(super) const MAX_OPTIMIZED_VALENCE: u32 = 1024;

/// `list` reordered by `meshopt::optimize_vertex_cache`, with the ACMR (24-entry FIFO)
/// before and after; the source order when that is better (meshopt's model is not a
/// 24-entry FIFO) or when a vertex is in more than [`MAX_OPTIMIZED_VALENCE`] triangles.
fn optimize(list: &[u32], n: usize) -> (Vec<u32>, f64, f64) {
    let before = meshopt::analyze_vertex_cache(list, n, CACHE_SIZE, 0, 0).acmr as f64;
    let mut valence = vec![0u32; n];
    for &v in list {
        if let Some(c) = valence.get_mut(v as usize) {
            *c += 1;
        }
    }
    if valence.iter().any(|&c| c > MAX_OPTIMIZED_VALENCE) {
        return (list.to_vec(), before, before);
    }
    let optimized = meshopt::optimize_vertex_cache(list, n);
    let after = meshopt::analyze_vertex_cache(&optimized, n, CACHE_SIZE, 0, 0).acmr as f64;
    if after > before {
        return (list.to_vec(), before, before);
    }
    (optimized, before, after)
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
    use super::super::tests::mesh_scene;
    use super::super::{export, ExportOptions};
    use super::*;

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
        let bytes = crate::formats::three_da::write(&file).unwrap();
        let errors: Vec<_> =
            crate::formats::three_da::check(&bytes).errors().map(|i| i.to_string()).collect();
        assert!(errors.is_empty(), "{errors:?}");
    }

    /// A fan of 1,100 triangles around vertex 0 (valence 1,100 > 1,024) keeps its source
    /// order, whose ACMR is the 1,102 vertices plus vertex 0 again each time the 24-entry
    /// FIFO has pushed it out (45 times, counted by hand-simulating the FIFO), over 1,100
    /// triangles; a fan of
    /// 100 triangles goes through meshopt, and its order never loads more vertices than the
    /// source.
    #[test]
    fn a_vertex_past_the_valence_bound_keeps_the_source_order() {
        let fan = |n: u32| -> Vec<u32> { (1..=n).flat_map(|k| [0, k, k + 1]).collect() };
        let big = fan(1100);
        let (list, before, after) = optimize(&big, 1102);
        assert_eq!(list, big);
        assert!((before - 1147.0 / 1100.0).abs() < 1e-6, "{before}");
        assert_eq!(before, after);
        let small = fan(100);
        let (list, before, after) = optimize(&small, 102);
        assert_eq!(list.len(), small.len());
        assert!(after <= before + 1e-9, "{before} {after}");
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
        let bytes = crate::formats::three_da::write(&file).unwrap();
        let errors: Vec<_> =
            crate::formats::three_da::check(&bytes).errors().map(|i| i.to_string()).collect();
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
}

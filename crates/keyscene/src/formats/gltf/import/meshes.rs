//! glTF meshes → scene meshes: a mesh's triangle primitives (triangles, strips and fans) merged
//! into one [`Mesh`] with one material slot per glTF material, POSITION/NORMAL/TANGENT/
//! TEXCOORD_n (V flipped back up)/COLOR_0 per vertex, morph targets and the vertices' raw skin
//! influences; every accessor checked ([`accessors::check`]) before the `gltf` crate reads it.

use glam::{DVec3, Vec2, Vec3, Vec4};
use gltf::mesh::{Mode, Reader};
use gltf::Semantic as Sem;

use super::skins::Influences;
use super::vec3;
use crate::formats::gltf::{accessors, warning, Error, SOURCE_VERTEX_ATTRIBUTE};
use crate::scene::{Attribute, Mapping, Material, Mesh, MorphTarget, Scene, UvSet, Warning};

/// What the mesh pass leaves for the node pass, per glTF mesh: its scene mesh (`None`: it has
/// no triangles) and its vertices' raw influences (joint slot, weight) when it is skinned.
pub(super) struct Meshes {
    pub(super) mesh_of: Vec<Option<usize>>,
    pub(super) influences_of: Vec<Option<Influences>>,
}

/// Reads every glTF mesh into `scene.meshes` ([`mesh`]).
pub(super) fn meshes(
    doc: &gltf::Document,
    buffers: &[Vec<u8>],
    scene: &mut Scene,
    max: u64,
    warnings: &mut Vec<Warning>,
) -> Result<Meshes, Error> {
    let mut out = Meshes { mesh_of: Vec::new(), influences_of: Vec::new() };
    for m in doc.meshes() {
        let mesh = mesh(&m, buffers, &scene.materials, max, warnings)?;
        let (mesh, influences) = match mesh {
            Some((mesh, inf)) => (Some(mesh), inf),
            None => (None, None),
        };
        out.influences_of.push(influences);
        out.mesh_of.push(mesh.map(|mesh| {
            scene.meshes.push(mesh);
            scene.meshes.len() - 1
        }));
    }
    Ok(out)
}

/// Merges a glTF mesh's triangle primitives into one [`Mesh`] (with its morph targets) and
/// the vertices' skin influences (`JOINTS_n`/`WEIGHTS_n`, zero weights left out) when it has
/// them; `None` when it has no triangles. A primitive that is not triangles or whose POSITION
/// or indices cannot be read is left out with a warning; so is a vertex attribute that cannot
/// be read. Errors: more elements than `max`, an index past the vertices.
fn mesh(
    m: &gltf::Mesh,
    buffers: &[Vec<u8>],
    materials: &[Material],
    max: u64,
    warnings: &mut Vec<Warning>,
) -> Result<Option<(Mesh, Option<Influences>)>, Error> {
    let mut merged = Merged::new(m);
    for prim in m.primitives() {
        let place = format!("meshes[{}] › primitives[{}]", m.index(), prim.index());
        let mode = prim.mode();
        if !matches!(mode, Mode::Triangles | Mode::TriangleStrip | Mode::TriangleFan) {
            warnings.push(warning(
                &place,
                format!("{} primitive left out: only triangles are read", mode_name(mode)),
            ));
            continue;
        }
        // Every accessor is checked before the `gltf` crate reads it (see `accessors`):
        // POSITION and indices must be readable, other attributes are left out when not.
        let Some(pos_acc) = prim.get(&Sem::Positions) else {
            warnings.push(warning(&place, "primitive without POSITION left out"));
            continue;
        };
        if let Err(e) = accessors::check(&pos_acc, buffers, &accessors::VEC3_FLOAT) {
            warnings.push(warning(&place, format!("POSITION {e}: primitive left out")));
            continue;
        }
        if let Some(Err(e)) =
            prim.indices().map(|a| accessors::check(&a, buffers, &accessors::INDICES))
        {
            warnings.push(warning(&place, format!("indices {e}: primitive left out")));
            continue;
        }
        let usable = Usable::of(&prim, buffers, pos_acc.count(), &place, warnings);
        let p = Prim { prim: &prim, usable: &usable, place: &place, max };
        merged.add(&p, buffers, materials, warnings)?;
    }
    Ok(merged.finish(m))
}

/// A glTF mesh's primitives being merged into one [`Mesh`].
struct Merged {
    out: Mesh,
    normals: Vec<Vec3>,
    all_normals: bool,
    /// TANGENT (xyz, w = handedness) while every primitive has it.
    tangents: Vec<[f32; 4]>,
    all_tangents: bool,
    uv_sets: Vec<Vec<Vec2>>,
    colors: Option<Vec<Vec4>>,
    polygon_materials: Vec<u32>,
    /// Source vertex index per merged vertex, while every primitive has them.
    source_ids: Option<Vec<u32>>,
    influences: Option<Influences>,
    /// Per morph target: position deltas, normal deltas.
    targets: Vec<(Vec<DVec3>, Option<Vec<Vec3>>)>,
}

/// Which of a primitive's vertex attributes may be read ([`usable`]).
struct Usable {
    normals: Option<()>,
    tangents: Option<()>,
    /// `TEXCOORD_0` … `TEXCOORD_{uv_count − 1}`.
    uv_count: u32,
    colors: Option<()>,
    /// `JOINTS_n`/`WEIGHTS_n` pairs.
    joint_sets: u32,
    /// The writer's `_KEYSCENE_VERTEX`.
    ids: Option<()>,
    /// Per morph target: its POSITION and NORMAL deltas.
    targets: Vec<(bool, bool)>,
}

/// One primitive being merged.
struct Prim<'p, 'a> {
    prim: &'p gltf::Primitive<'a>,
    usable: &'p Usable,
    place: &'p str,
    /// The element limit.
    max: u64,
}

impl Prim<'_, '_> {
    fn too_many(&self, n: usize) -> Error {
        Error::Limit {
            place: self.place.to_string(),
            message: format!("{n} elements exceed the limit of {}", self.max),
        }
    }
}

/// The attribute that carries the writer's source vertex indices.
fn source_vertex_semantic() -> Sem {
    Sem::Extras(SOURCE_VERTEX_ATTRIBUTE[1..].to_string())
}

/// Whether a vertex attribute may be read: its type and bounds, and one element per vertex
/// (glTF 2.0 §3.7.2.1); a warning when not.
fn usable(
    acc: Option<gltf::Accessor>,
    allowed: &accessors::Allowed,
    what: &str,
    (buffers, vertex_count): (&[Vec<u8>], usize),
    place: &str,
    warnings: &mut Vec<Warning>,
) -> Option<()> {
    let acc = acc?;
    let r = accessors::check(&acc, buffers, allowed).and_then(|()| {
        if acc.count() == vertex_count {
            Ok(())
        } else {
            Err(format!(
                "accessors[{}]: {} elements for {vertex_count} vertices",
                acc.index(),
                acc.count()
            ))
        }
    });
    match r {
        Ok(()) => Some(()),
        Err(e) => {
            warnings.push(warning(place, format!("{what} {e}: left out")));
            None
        }
    }
}

impl Usable {
    /// Checks `prim`'s vertex attributes, in attribute order (warnings in that order).
    fn of(
        prim: &gltf::Primitive,
        buffers: &[Vec<u8>],
        vertex_count: usize,
        place: &str,
        warnings: &mut Vec<Warning>,
    ) -> Usable {
        let b = (buffers, vertex_count);
        let mut ok = |acc: Option<gltf::Accessor>, allowed: &accessors::Allowed, what: &str| {
            usable(acc, allowed, what, b, place, warnings)
        };
        let normals = ok(prim.get(&Sem::Normals), &accessors::VEC3_FLOAT, "NORMAL");
        let tangents = ok(prim.get(&Sem::Tangents), &accessors::VEC4_FLOAT, "TANGENT");
        let mut uv_count = 0;
        while prim.get(&Sem::TexCoords(uv_count)).is_some() {
            let a = prim.get(&Sem::TexCoords(uv_count));
            if ok(a, &accessors::TEXCOORD, &format!("TEXCOORD_{uv_count}")).is_none() {
                break;
            }
            uv_count += 1;
        }
        let colors = ok(prim.get(&Sem::Colors(0)), &accessors::COLOR, "COLOR_0");
        let mut joint_sets = 0;
        while let (Some(j), Some(w)) =
            (prim.get(&Sem::Joints(joint_sets)), prim.get(&Sem::Weights(joint_sets)))
        {
            let set = joint_sets;
            if ok(Some(j), &accessors::JOINTS, &format!("JOINTS_{set}")).is_none()
                || ok(Some(w), &accessors::WEIGHTS, &format!("WEIGHTS_{set}")).is_none()
            {
                break;
            }
            joint_sets += 1;
        }
        let ids =
            ok(prim.get(&source_vertex_semantic()), &accessors::SCALAR_FLOAT, "_KEYSCENE_VERTEX");
        let targets = prim
            .morph_targets()
            .enumerate()
            .map(|(t, mt)| {
                let p =
                    ok(mt.positions(), &accessors::VEC3_FLOAT, &format!("targets[{t}] POSITION"));
                let n = ok(mt.normals(), &accessors::VEC3_FLOAT, &format!("targets[{t}] NORMAL"));
                (p.is_some(), n.is_some())
            })
            .collect();
        Usable { normals, tangents, uv_count, colors, joint_sets, ids, targets }
    }
}

impl Merged {
    fn new(m: &gltf::Mesh) -> Merged {
        Merged {
            out: Mesh {
                name: m.name().unwrap_or("").to_string(),
                polygon_starts: vec![0],
                ..Mesh::default()
            },
            normals: Vec::new(),
            all_normals: true,
            tangents: Vec::new(),
            all_tangents: true,
            uv_sets: Vec::new(),
            colors: None,
            polygon_materials: Vec::new(),
            source_ids: Some(Vec::new()),
            influences: None,
            targets: Vec::new(),
        }
    }

    /// Appends primitive `p`: its vertices, triangles (one material slot per glTF material)
    /// and every usable attribute.
    fn add(
        &mut self,
        p: &Prim,
        buffers: &[Vec<u8>],
        materials: &[Material],
        warnings: &mut Vec<Warning>,
    ) -> Result<(), Error> {
        let get = |b: gltf::Buffer| buffers.get(b.index()).map(Vec::as_slice);
        let reader = p.prim.reader(get);
        let Some(pos) = reader.read_positions() else {
            warnings.push(warning(p.place, "primitive without POSITION left out"));
            return Ok(());
        };
        if pos.len() as u64 > p.max {
            return Err(p.too_many(pos.len()));
        }
        let base = self.out.positions.len() as u32;
        let count = pos.len();
        let ids = p
            .prim
            .get(&source_vertex_semantic())
            .filter(|_| p.usable.ids.is_some())
            .and_then(|a| gltf::accessor::Iter::<f32>::new(a, get))
            .map(|it| {
                it.map(|f| if f >= 0.0 && f.fract() == 0.0 { f as u32 } else { u32::MAX })
                    .collect::<Vec<_>>()
            });
        self.source_ids = match (self.source_ids.take(), ids) {
            (Some(mut all), Some(ids)) => {
                all.extend(ids);
                Some(all)
            }
            _ => None,
        };
        self.out.positions.extend(pos.map(|p| DVec3::from_array(p.map(f64::from))));
        let tris = triangles(p, &reader, count)?;
        let slot = self.material_slot(p.prim, materials);
        for t in &tris {
            self.out.corner_vertices.extend(t.iter().map(|&v| base + v));
            self.out.polygon_starts.push(self.out.corner_vertices.len() as u32);
            self.polygon_materials.push(slot);
        }
        self.add_attributes(p.usable, &reader, base, count);
        self.add_influences(p.usable.joint_sets, &reader, base, count);
        self.add_targets(p, get, base, count)
    }

    /// The mesh's material slot for the primitive's material (a slot per glTF material, in
    /// first-use order); [`Mesh::NO_MATERIAL`] without one.
    fn material_slot(&mut self, prim: &gltf::Primitive, materials: &[Material]) -> u32 {
        match prim.material().index() {
            Some(mi) if mi < materials.len() => {
                let slot = match self.out.material_slots.iter().position(|&s| s == Some(mi)) {
                    Some(s) => s,
                    None => {
                        self.out.material_slots.push(Some(mi));
                        self.out.material_slots.len() - 1
                    }
                };
                slot as u32
            }
            _ => Mesh::NO_MATERIAL,
        }
    }

    /// Appends the `count` new vertices' (from `base`) normals and tangents (while every
    /// primitive has them), UV sets and colours (earlier vertices padded).
    fn add_attributes<'a, 's, F>(
        &mut self,
        usable: &Usable,
        reader: &Reader<'a, 's, F>,
        base: u32,
        count: usize,
    ) where
        F: Clone + Fn(gltf::Buffer<'a>) -> Option<&'s [u8]>,
    {
        match usable.normals.and_then(|()| reader.read_normals()) {
            Some(n) if self.all_normals => self.normals.extend(n.take(count).map(Vec3::from_array)),
            _ => self.all_normals = false,
        }
        match usable.tangents.and_then(|()| reader.read_tangents()) {
            Some(t) if self.all_tangents => self.tangents.extend(t.take(count)),
            _ => self.all_tangents = false,
        }
        let mut set = 0;
        while let Some(uv) = (set < usable.uv_count).then(|| reader.read_tex_coords(set)).flatten()
        {
            let uv: Vec<Vec2> =
                uv.into_f32().take(count).map(|[u, v]| Vec2::new(u, 1.0 - v)).collect();
            if self.uv_sets.len() <= set as usize {
                self.uv_sets.push(vec![Vec2::ZERO; base as usize]);
            }
            let s = &mut self.uv_sets[set as usize];
            s.resize(base as usize, Vec2::ZERO);
            s.extend(uv);
            set += 1;
        }
        if let Some(c) = usable.colors.and_then(|()| reader.read_colors(0)) {
            let dst = self.colors.get_or_insert_with(|| vec![Vec4::ONE; base as usize]);
            dst.resize(base as usize, Vec4::ONE);
            dst.extend(c.into_rgba_f32().take(count).map(Vec4::from_array));
        }
    }

    /// Appends the new vertices' joint influences from `joint_sets` `JOINTS_n`/`WEIGHTS_n`
    /// pairs, zero and non-finite weights left out.
    fn add_influences<'a, 's, F>(
        &mut self,
        joint_sets: u32,
        reader: &Reader<'a, 's, F>,
        base: u32,
        count: usize,
    ) where
        F: Clone + Fn(gltf::Buffer<'a>) -> Option<&'s [u8]>,
    {
        let mut set = 0;
        while set < joint_sets {
            let (Some(j), Some(w)) = (reader.read_joints(set), reader.read_weights(set)) else {
                break;
            };
            let dst = self.influences.get_or_insert_with(Vec::new);
            dst.resize(base as usize + count, Vec::new());
            for (k, (j, w)) in j.into_u16().zip(w.into_f32()).take(count).enumerate() {
                for (j, w) in j.into_iter().zip(w) {
                    if w > 0.0 && w.is_finite() {
                        dst[base as usize + k].push((u32::from(j), w));
                    }
                }
            }
            set += 1;
        }
    }

    /// Appends the new vertices' morph target deltas, target by target (not with the crate's
    /// `read_morph_targets`, which builds every target's readers, checked or not).
    fn add_targets<'a, 's, F>(
        &mut self,
        p: &Prim<'_, 'a>,
        get: F,
        base: u32,
        count: usize,
    ) -> Result<(), Error>
    where
        F: Clone + Fn(gltf::Buffer<'a>) -> Option<&'s [u8]>,
    {
        for (t, mt) in p.prim.morph_targets().enumerate() {
            let (p_ok, n_ok) = p.usable.targets.get(t).copied().unwrap_or((false, false));
            let read = |a: Option<gltf::Accessor<'a>>, ok: bool| {
                a.filter(|_| ok).and_then(|a| gltf::accessor::Iter::<[f32; 3]>::new(a, get.clone()))
            };
            let (dp_in, dn_in) = (read(mt.positions(), p_ok), read(mt.normals(), n_ok));
            if (t as u64 + 1).saturating_mul(self.out.positions.len() as u64) > p.max {
                return Err(p.too_many((t + 1) * self.out.positions.len()));
            }
            if self.targets.len() <= t {
                self.targets.push((Vec::new(), None));
            }
            let (dp, dn) = &mut self.targets[t];
            dp.resize(base as usize, DVec3::ZERO);
            if let Some(d) = dp_in {
                dp.extend(d.take(count).map(vec3));
            }
            if let Some(d) = dn_in {
                let dn = dn.get_or_insert_with(Vec::new);
                dn.resize(base as usize, Vec3::ZERO);
                dn.extend(d.take(count).map(Vec3::from_array));
            }
        }
        Ok(())
    }

    /// The merged mesh (`None` without triangles) and its influences: attributes every vertex
    /// has become per-vertex attributes (glTF TANGENT.w the binormal's side), morph targets
    /// are named by the mesh's `extras.targetNames` with its `weights` as defaults, and the
    /// writer's source vertex order is restored ([`restore_source_vertices`]).
    fn finish(self, m: &gltf::Mesh) -> Option<(Mesh, Option<Influences>)> {
        let Merged { mut out, normals, all_normals, tangents, all_tangents, .. } = self;
        if out.polygon_count() == 0 {
            return None;
        }
        let n = out.positions.len();
        if all_normals && normals.len() == n {
            // glTF TANGENT.w is the bitangent's side: B = cross(N, T) · w (glTF 2.0 §3.7.2.1).
            if all_tangents && tangents.len() == n {
                let t: Vec<Vec3> =
                    tangents.iter().map(|&[x, y, z, _]| Vec3::new(x, y, z)).collect();
                let b =
                    tangents.iter().zip(&normals).zip(&t).map(|((&[.., w], n), t)| n.cross(*t) * w);
                out.binormals =
                    Some(Attribute { values: b.collect(), mapping: Mapping::PerVertex });
                out.tangents = Some(Attribute { values: t, mapping: Mapping::PerVertex });
            }
            out.normals = Some(Attribute { values: normals, mapping: Mapping::PerVertex });
        }
        out.uv_sets = self
            .uv_sets
            .into_iter()
            .map(|mut values| {
                values.resize(n, Vec2::ZERO);
                UvSet {
                    name: String::new(),
                    uvs: Attribute { values, mapping: Mapping::PerVertex },
                }
            })
            .collect();
        out.colors = self.colors.map(|mut values| {
            values.resize(n, Vec4::ONE);
            Attribute { values, mapping: Mapping::PerVertex }
        });
        out.polygon_materials = self.polygon_materials;
        out.morph_targets = morph_targets(m, self.targets, n);
        let mut influences = self.influences;
        if let Some(inf) = &mut influences {
            inf.resize(n, Vec::new());
        }
        if let Some(ids) = self.source_ids.filter(|ids| ids.len() == n) {
            restore_source_vertices(&mut out, &mut influences, &ids);
        }
        Some((out, influences))
    }
}

/// The triangles of primitive `p` (`count` vertices): its indices (or `0..count`) as
/// triangles, strips or fans. Errors: more indices than the limit, an index past the
/// vertices.
fn triangles<'a, 's, F>(
    p: &Prim,
    reader: &Reader<'a, 's, F>,
    count: usize,
) -> Result<Vec<[u32; 3]>, Error>
where
    F: Clone + Fn(gltf::Buffer<'a>) -> Option<&'s [u8]>,
{
    let indices: Vec<u32> = match reader.read_indices() {
        Some(ix) => {
            let ix = ix.into_u32();
            if ix.len() as u64 > p.max {
                return Err(p.too_many(ix.len()));
            }
            ix.collect()
        }
        None => (0..count as u32).collect(),
    };
    if let Some(&bad) = indices.iter().find(|&&i| i as usize >= count) {
        return Err(Error::Invalid {
            place: p.place.to_string(),
            message: format!("index {bad} past the {count} vertices"),
        });
    }
    Ok(match p.prim.mode() {
        Mode::Triangles => indices.chunks_exact(3).map(|t| [t[0], t[1], t[2]]).collect(),
        Mode::TriangleStrip => (2..indices.len())
            .map(|k| {
                if k % 2 == 0 {
                    [indices[k - 2], indices[k - 1], indices[k]]
                } else {
                    [indices[k - 1], indices[k - 2], indices[k]]
                }
            })
            .collect(),
        _ => (2..indices.len()).map(|k| [indices[0], indices[k - 1], indices[k]]).collect(),
    })
}

/// The merged targets' deltas as morph targets of an `n`-vertex mesh, named by the mesh's
/// `extras.targetNames` (else `target k`), with the mesh's `weights` as defaults.
fn morph_targets(
    m: &gltf::Mesh,
    targets: Vec<(Vec<DVec3>, Option<Vec<Vec3>>)>,
    n: usize,
) -> Vec<MorphTarget> {
    let defaults = m.weights().unwrap_or(&[]);
    let names: Vec<String> = m
        .extras()
        .as_ref()
        .and_then(|e| serde_json::from_str::<serde_json::Value>(e.get()).ok())
        .and_then(|v| {
            let names = v["targetNames"].as_array()?.clone();
            Some(names.iter().map(|n| n.as_str().unwrap_or("").to_string()).collect())
        })
        .unwrap_or_default();
    targets
        .into_iter()
        .enumerate()
        .map(|(k, (mut dp, dn))| {
            dp.resize(n, DVec3::ZERO);
            MorphTarget {
                name: names.get(k).cloned().unwrap_or_else(|| format!("target {k}")),
                position_deltas: dp,
                normal_deltas: dn.map(|mut d| {
                    d.resize(n, Vec3::ZERO);
                    d
                }),
                default_weight: defaults.get(k).map_or(0.0, |&w| f64::from(w)),
                inbetweens: Vec::new(),
                vertex_weights: Vec::new(),
            }
        })
        .collect()
}

/// Renumbers the merged glTF vertices of `mesh` by their source indices `ids` (the writer's
/// [`SOURCE_VERTEX_ATTRIBUTE`]), so positions come back in the source's vertex order;
/// normals, tangents, binormals, UVs and colours become per-corner, as glTF's split vertices
/// carried them. Leaves
/// the mesh alone when an id is invalid or the ids would ask for more than twice the vertices
/// present (a hostile file must not make it allocate).
fn restore_source_vertices(mesh: &mut Mesh, influences: &mut Option<Influences>, ids: &[u32]) {
    let Some(&max_id) = ids.iter().max() else { return };
    if max_id == u32::MAX || max_id as usize >= 2 * ids.len() + 16 {
        return;
    }
    fn renumber<T: Clone + Default>(values: &[T], ids: &[u32], len: usize) -> Vec<T> {
        let mut out = vec![T::default(); len];
        for (v, &id) in ids.iter().enumerate() {
            if let Some(x) = values.get(v) {
                out[id as usize] = x.clone();
            }
        }
        out
    }
    let len = max_id as usize + 1;
    let positions = renumber(&mesh.positions, ids, len);
    if let Some(inf) = influences {
        *inf = renumber(inf, ids, len);
    }
    for t in &mut mesh.morph_targets {
        t.position_deltas = renumber(&t.position_deltas, ids, len);
        if let Some(n) = &mut t.normal_deltas {
            *n = renumber(n, ids, len);
        }
    }
    let corners: Vec<usize> = mesh.corner_vertices.iter().map(|&v| v as usize).collect();
    fn per_corner<T: Copy>(a: &mut Attribute<T>, corners: &[usize]) {
        a.values = corners.iter().map(|&v| a.values[v]).collect();
        a.mapping = Mapping::PerCorner;
    }
    for a in [&mut mesh.normals, &mut mesh.tangents, &mut mesh.binormals].into_iter().flatten() {
        per_corner(a, &corners);
    }
    for set in &mut mesh.uv_sets {
        per_corner(&mut set.uvs, &corners);
    }
    if let Some(a) = &mut mesh.colors {
        per_corner(a, &corners);
    }
    mesh.corner_vertices = corners.iter().map(|&v| ids[v]).collect();
    mesh.positions = positions;
}

/// A primitive `mode` as glTF 2.0 §5.24.3 spells it, with its code (`LINE_STRIP (3)`).
fn mode_name(mode: gltf::mesh::Mode) -> &'static str {
    use gltf::mesh::Mode;
    match mode {
        Mode::Points => "POINTS (0)",
        Mode::Lines => "LINES (1)",
        Mode::LineLoop => "LINE_LOOP (2)",
        Mode::LineStrip => "LINE_STRIP (3)",
        Mode::Triangles => "TRIANGLES (4)",
        Mode::TriangleStrip => "TRIANGLE_STRIP (5)",
        Mode::TriangleFan => "TRIANGLE_FAN (6)",
    }
}

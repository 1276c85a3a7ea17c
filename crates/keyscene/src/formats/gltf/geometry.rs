//! Mesh → glTF triangle primitives: triangulation, normals from smoothing groups, corner
//! attributes deduplicated into glTF vertices.
//!
//! This level knows the scene's [`Mesh`] but nothing of glTF's JSON: it produces flat `f32`
//! arrays and `u32` indices per material slot that the writer ([`super::write`](fn@super::write)) stores in accessors.

use glam::{DMat4, DVec3};

use crate::scene::geometry::{corner_normals, normal_matrix, triangulate, FALLBACK_NORMAL};
use crate::scene::Mesh;

/// One glTF primitive's data: the triangles of one material slot.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Primitive {
    /// The mesh's material slot ([`Mesh::NO_MATERIAL`] for polygons without one).
    pub material_slot: u32,
    /// Vertex positions (baked: mesh frame → node frame).
    pub positions: Vec<[f32; 3]>,
    /// Unit vertex normals.
    pub normals: Vec<[f32; 3]>,
    /// Every UV set of the mesh in order (`TEXCOORD_n`), V flipped to glTF's downward V
    /// (`v' = 1 − v`); a corner without a value in a set gets (0, 0).
    pub uvs: Vec<Vec<[f32; 2]>>,
    /// Vertex colours RGBA, when the mesh has them.
    pub colors: Option<Vec<[f32; 4]>>,
    /// Tangents with the bitangent sign in w (±1): from the source's tangents when the mesh
    /// has them (see [`source_tangent`]; all zero at a vertex whose source tangent is missing
    /// or degenerate), then completed by [`add_tangents`] to unit length everywhere.
    pub tangents: Option<Vec<[f32; 4]>>,
    /// Three vertex indices per triangle, counter-clockwise.
    pub indices: Vec<u32>,
    /// The source mesh's vertex index of every glTF vertex (written as `_KEYSCENE_VERTEX`).
    pub source_vertices: Vec<u32>,
}

/// Replaces NaN and infinities by 0 (glTF forbids them in accessors); returns how many were
/// replaced.
fn finite<const N: usize>(v: &mut [f32; N]) -> usize {
    let mut bad = 0;
    for x in v.iter_mut() {
        if !x.is_finite() {
            *x = 0.0;
            bad += 1;
        }
    }
    bad
}

/// The triangles of `mesh` with positions baked through `bake` (mesh frame → the frame the
/// glTF node gives), one [`Primitive`] per material slot in order of first use. Also returns
/// how many non-finite numbers were replaced by 0.
///
/// glTF vertices are the distinct (vertex, normal, UV, colour) combinations of the corners, so
/// a 3DS vertex shared by faces of different smoothing groups is split as glTF requires.
/// Vertices no polygon uses are appended to the first primitive (normal [`FALLBACK_NORMAL`]),
/// unreferenced by its indices, so the mesh keeps every vertex.
pub fn primitives(mesh: &Mesh, bake: DMat4) -> (Vec<Primitive>, usize) {
    let positions: Vec<DVec3> = mesh.positions.iter().map(|&p| bake.transform_point3(p)).collect();
    let normals = corner_normals(mesh, &positions, normal_matrix(bake));
    let colors = mesh.colors.as_ref();
    let tangent_of = |v: u32, c: usize, p: usize, n: [f32; 3]| -> [f32; 4] {
        let t = mesh.tangents.as_ref().and_then(|a| a.get(v, c, p));
        let b = mesh.binormals.as_ref().and_then(|a| a.get(v, c, p));
        source_tangent(t, b, n, bake).unwrap_or([0.0; 4])
    };
    // A corner's glTF vertex is the one of its primitive with the same source vertex and the
    // same normal, UVs, colour and tangent bits (as written: non-finite values zeroed). The
    // glTF vertices made so far of each source vertex are chained through `links` from
    // `head` (prim, glTF index, next link), and a corner compares its values with the few
    // on its vertex's chain: no key built or hashed per corner (hashing 100-byte keys was a
    // third of converting a large mesh).
    const NONE: u32 = u32::MAX;
    let mut head: Vec<u32> = vec![NONE; positions.len()];
    let mut links: Vec<(u32, u32, u32)> = Vec::new();
    let mut prims: Vec<Primitive> = Vec::new();
    let mut bad = 0;
    // The UVs of the current corner, one per set, as written (V flipped, non-finite zeroed).
    let mut uv: Vec<[f32; 2]> = Vec::with_capacity(mesh.uv_sets.len());
    // The glTF vertex of each corner of the current polygon, filled in triangle order (the
    // order vertices are numbered in) the first time a triangle uses the corner.
    let mut memo: Vec<u32> = Vec::new();
    for p in 0..mesh.polygon_count() {
        let slot = mesh.polygon_material(p);
        let poly = mesh.polygon(p);
        if poly.iter().any(|&v| v as usize >= positions.len()) {
            continue;
        }
        let k = match prims.iter().position(|pr| pr.material_slot == slot) {
            Some(k) => k,
            None => {
                prims.push(Primitive {
                    material_slot: slot,
                    uvs: vec![Vec::new(); mesh.uv_sets.len()],
                    colors: colors.map(|_| Vec::new()),
                    tangents: mesh.tangents.as_ref().map(|_| Vec::new()),
                    ..Primitive::default()
                });
                prims.len() - 1
            }
        };
        let prim = &mut prims[k];
        let corners = mesh.polygon_corners(p);
        let mut vertex_of = |c: usize| -> u32 {
            let v = mesh.corner_vertices[c];
            let mut n = normals[c].to_array();
            uv.clear();
            for set in &mesh.uv_sets {
                let mut t = set.uvs.get(v, c, p).map(|t| [t.x, 1.0 - t.y]).unwrap_or([0.0, 0.0]);
                bad += finite(&mut t);
                uv.push(t);
            }
            let mut col =
                colors.and_then(|a| a.get(v, c, p)).map(|c| c.to_array()).unwrap_or([1.0; 4]);
            // Counted per corner, as every value of the corner is.
            let mut pos = positions[v as usize].as_vec3().to_array();
            bad += finite(&mut pos) + finite(&mut col);
            if finite(&mut n) > 0 {
                n = FALLBACK_NORMAL.to_array();
            }
            let tan = tangent_of(v, c, p, n);
            let same =
                |a: &[f32], b: &[f32]| a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits());
            let mut at = head[v as usize];
            while at != NONE {
                let (pk, i, next) = links[at as usize];
                let i_ = i as usize;
                if pk as usize == k
                    && same(&prim.normals[i_], &n)
                    && prim.uvs.iter().zip(&uv).all(|(set, t)| same(&set[i_], t))
                    && prim.colors.as_ref().is_none_or(|cl| same(&cl[i_], &col))
                    && prim.tangents.as_ref().is_none_or(|ts| same(&ts[i_], &tan))
                {
                    return i;
                }
                at = next;
            }
            prim.positions.push(pos);
            prim.source_vertices.push(v);
            prim.normals.push(n);
            for (set, &t) in prim.uvs.iter_mut().zip(&uv) {
                set.push(t);
            }
            if let Some(cl) = &mut prim.colors {
                cl.push(col);
            }
            if let Some(ts) = &mut prim.tangents {
                ts.push(tan);
            }
            let i = (prim.positions.len() - 1) as u32;
            links.push((k as u32, i, head[v as usize]));
            head[v as usize] = (links.len() - 1) as u32;
            i
        };
        memo.clear();
        memo.resize(poly.len(), u32::MAX);
        for corner in triangulate(&positions, poly).into_iter().flatten() {
            if memo[corner] == u32::MAX {
                memo[corner] = vertex_of(corners.start + corner);
            }
            prim.indices.push(memo[corner]);
        }
    }
    let mut out: Vec<Primitive> = prims.into_iter().filter(|p| !p.indices.is_empty()).collect();
    // Vertices no triangle uses still belong to the mesh (lib3ds's bounding box and centroid
    // count them): they ride along in the first primitive, unreferenced by its indices.
    if let Some(first) = out.first_mut() {
        let mut used = vec![false; positions.len()];
        for p in &mesh.corner_vertices {
            if let Some(u) = used.get_mut(*p as usize) {
                *u = true;
            }
        }
        for (v, _) in used.iter().enumerate().filter(|(_, &u)| !u) {
            let mut pos = positions[v].as_vec3().to_array();
            bad += finite(&mut pos);
            first.positions.push(pos);
            first.source_vertices.push(v as u32);
            first.normals.push(FALLBACK_NORMAL.to_array());
            for set in &mut first.uvs {
                set.push([0.0, 0.0]);
            }
            if let Some(c) = &mut first.colors {
                c.push([1.0; 4]);
            }
            if let Some(ts) = &mut first.tangents {
                ts.push([0.0; 4]);
            }
        }
    }
    (out, bad)
}

/// Per-corner MikkTSpace input and output for one primitive's triangles.
struct Corners<'p> {
    prim: &'p Primitive,
    tangents: Vec<Option<[f32; 4]>>,
}

impl Corners<'_> {
    fn vertex(&self, face: usize, vert: usize) -> usize {
        self.prim.indices[3 * face + vert] as usize
    }
}

impl bevy_mikktspace::Geometry for Corners<'_> {
    fn num_faces(&self) -> usize {
        self.prim.indices.len() / 3
    }
    fn num_vertices_of_face(&self, _face: usize) -> usize {
        3
    }
    fn position(&self, face: usize, vert: usize) -> [f32; 3] {
        self.prim.positions[self.vertex(face, vert)]
    }
    fn normal(&self, face: usize, vert: usize) -> [f32; 3] {
        self.prim.normals[self.vertex(face, vert)]
    }
    fn tex_coord(&self, face: usize, vert: usize) -> [f32; 2] {
        // Back to V up: glTF's normal-map +Y is image up, i.e. −v in its V-down UVs, so the
        // bitangent MikkTSpace derives from V-up coordinates carries glTF's sign (three.js's
        // `computeMikkTSpaceTangents` negates w instead when it works on glTF UVs).
        let [u, v] = self.prim.uvs[0][self.vertex(face, vert)];
        [u, 1.0 - v]
    }
    fn set_tangent(
        &mut self,
        tangent_space: Option<bevy_mikktspace::TangentSpace>,
        face: usize,
        vert: usize,
    ) {
        self.tangents[3 * face + vert] = tangent_space.map(|t| t.tangent_encoded());
    }
}

/// A unit tangent for `normal`: `t` normalised with w = ±1, or, when `t` is missing,
/// degenerate or not finite, a unit vector perpendicular to `normal` with w = 1.
fn unit_tangent(t: Option<[f32; 4]>, normal: [f32; 3]) -> [f32; 4] {
    if let Some([x, y, z, w]) = t {
        let v = glam::Vec3::new(x, y, z);
        if v.is_finite() && v.length() > 1e-6 {
            let v = v.normalize();
            return [v.x, v.y, v.z, if w < 0.0 { -1.0 } else { 1.0 }];
        }
    }
    let n = glam::Vec3::from(normal);
    let v = n.any_orthonormal_vector();
    let v = if v.is_finite() { v } else { glam::Vec3::X };
    [v.x, v.y, v.z, 1.0]
}

/// A source tangent as glTF's `TANGENT` (glTF 2.0 §3.7.2.1): `tangent` carried through `bake`
/// (a direction on the surface, so by its linear part) and normalised, with
/// w = `sign(dot(cross(normal, tangent), binormal))`, the binormal also carried through `bake`;
/// w = 1 when there is no binormal or it lies in the normal–tangent plane. `normal` is the
/// unit normal written at the same corner (already in the baked frame). `None` when the
/// tangent is missing, not finite or (nearly) zero.
pub fn source_tangent(
    tangent: Option<glam::Vec3>,
    binormal: Option<glam::Vec3>,
    normal: [f32; 3],
    bake: DMat4,
) -> Option<[f32; 4]> {
    let t = bake.transform_vector3(tangent?.as_dvec3()).as_vec3();
    if !t.is_finite() || t.length() <= 1e-6 {
        return None;
    }
    let t = t.normalize();
    let handedness = binormal
        .map(|b| {
            glam::Vec3::from(normal).cross(t).dot(bake.transform_vector3(b.as_dvec3()).as_vec3())
        })
        .filter(|d| d.is_finite());
    let w = if handedness.is_some_and(|d| d < 0.0) { -1.0 } else { 1.0 };
    Some([t.x, t.y, t.z, w])
}

/// Whether `t` is a usable tangent from [`primitives`] (zero marks a missing one).
fn present(t: [f32; 4]) -> bool {
    t[..3].iter().any(|&x| x != 0.0)
}

/// Adds MikkTSpace tangents (glTF `TANGENT`) computed from the positions, normals and
/// `TEXCOORD_0` of `prim`, as glTF 2.0 §3.7.2.1 tells clients to when a primitive with a
/// normal map has none. Tangents the primitive already has (the source's, from
/// [`primitives`]) are kept; MikkTSpace fills only the vertices where they are missing.
/// Returns `false` (and changes nothing) when the primitive has neither a UV set nor source
/// tangents.
///
/// MikkTSpace gives a tangent per triangle corner; glTF vertices whose corners got different
/// tangents (UV seams, mirrored UVs) are split, so every other attribute is copied along.
/// Vertex order is kept: vertices in order of first use, then the unreferenced ones.
/// Corners MikkTSpace leaves without a tangent (degenerate triangles with no neighbour) and
/// the unreferenced vertices get a unit vector perpendicular to the normal, w = 1, so every
/// tangent is unit length with w = ±1 as the spec requires.
pub fn add_tangents(prim: &mut Primitive) -> bool {
    if let Some(ts) = &mut prim.tangents {
        if prim.uvs.is_empty() || ts.iter().all(|&t| present(t)) {
            for (t, n) in ts.iter_mut().zip(&prim.normals) {
                *t = unit_tangent(Some(*t), *n);
            }
            return true;
        }
    } else if prim.uvs.is_empty() {
        return false;
    }
    let mut corners = Corners { prim, tangents: vec![None; prim.indices.len()] };
    // An error only means no triangle could be processed: every corner then falls back.
    let _ = bevy_mikktspace::generate_tangents(&mut corners);
    let mut tangents = corners.tangents;
    if let Some(source) = &prim.tangents {
        for (t, &v) in tangents.iter_mut().zip(&prim.indices) {
            let s = source[v as usize];
            if present(s) {
                *t = Some(s);
            }
        }
    }
    let old = std::mem::take(prim);
    let mut out = Primitive {
        material_slot: old.material_slot,
        uvs: vec![Vec::new(); old.uvs.len()],
        colors: old.colors.as_ref().map(|_| Vec::new()),
        tangents: Some(Vec::new()),
        ..Primitive::default()
    };
    let mut used = vec![false; old.positions.len()];
    let mut seen: foldhash::HashMap<(u32, [u32; 4]), u32> = foldhash::HashMap::default();
    let copy = |out: &mut Primitive, v: usize, t: [f32; 4]| -> u32 {
        out.positions.push(old.positions[v]);
        out.normals.push(old.normals[v]);
        for (set, from) in out.uvs.iter_mut().zip(&old.uvs) {
            set.push(from[v]);
        }
        if let (Some(c), Some(from)) = (&mut out.colors, &old.colors) {
            c.push(from[v]);
        }
        out.source_vertices.push(old.source_vertices[v]);
        if let Some(ts) = &mut out.tangents {
            ts.push(t);
        }
        (out.positions.len() - 1) as u32
    };
    for (c, &v) in old.indices.iter().enumerate() {
        let t = unit_tangent(tangents[c], old.normals[v as usize]);
        used[v as usize] = true;
        let ix =
            *seen.entry((v, t.map(f32::to_bits))).or_insert_with(|| copy(&mut out, v as usize, t));
        out.indices.push(ix);
    }
    for v in (0..old.positions.len()).filter(|&v| !used[v]) {
        let source = old.tangents.as_ref().map(|ts| ts[v]).filter(|&t| present(t));
        copy(&mut out, v, unit_tangent(source, old.normals[v]));
    }
    *prim = out;
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scene::geometry::unit_cube;
    use crate::scene::{Attribute, Mapping, UvSet};
    use glam::Vec2;

    #[test]
    fn uv_v_is_flipped_and_materials_split_primitives() {
        let mut m = unit_cube(None);
        m.material_slots = vec![Some(0), Some(1)];
        m.polygon_materials = (0..12).map(|p| (p / 6) as u32).collect();
        m.uv_sets = vec![UvSet {
            name: String::new(),
            uvs: Attribute { values: vec![Vec2::new(0.25, 0.75); 8], mapping: Mapping::PerVertex },
        }];
        let (prims, bad) = primitives(&m, DMat4::IDENTITY);
        assert_eq!(bad, 0);
        assert_eq!(prims.len(), 2);
        assert_eq!(prims[1].material_slot, 1);
        assert_eq!(prims[0].indices.len(), 18);
        assert_eq!(prims[0].uvs[0][0], [0.25, 0.25]);
    }

    /// A `width` × 1 quad in the XY plane facing +Z, UVs (0, 0) to (1, 1) with U along +X
    /// and (V-up) V along +Y.
    fn quad(width: f64) -> Mesh {
        let corners = [(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0)];
        Mesh {
            positions: corners.iter().map(|&(x, y)| DVec3::new(width * x, y, 0.0)).collect(),
            polygon_starts: vec![0, 4],
            corner_vertices: vec![0, 1, 2, 3],
            uv_sets: vec![UvSet {
                name: String::new(),
                uvs: Attribute {
                    values: corners.iter().map(|&(u, v)| Vec2::new(u as f32, v as f32)).collect(),
                    mapping: Mapping::PerVertex,
                },
            }],
            ..Mesh::default()
        }
    }

    /// The quad's tangent is +U = +X, and its bitangent N × T = Z × X = +Y is the +V
    /// direction, so w = +1 (glTF 2.0 §3.7.2.1: bitangent = cross(normal, tangent.xyz) · w).
    #[test]
    fn quad_tangent_is_plus_u_with_positive_handedness() {
        let (mut prims, _) = primitives(&quad(2.0), DMat4::IDENTITY);
        assert!(add_tangents(&mut prims[0]));
        let p = &prims[0];
        assert_eq!(p.positions.len(), 4, "no seam: no vertex split");
        for t in p.tangents.as_ref().unwrap() {
            assert!((t[0] - 1.0).abs() < 1e-6 && t[1].abs() < 1e-6 && t[2].abs() < 1e-6, "{t:?}");
            assert_eq!(t[3], 1.0);
        }
    }

    /// Mirrored UVs (U running along −X) flip the handedness: tangent −X, w = −1 so that
    /// N × T · w = Z × (−X) · (−1) = +Y is still +V.
    #[test]
    fn mirrored_uvs_give_negative_handedness() {
        let mut m = Mesh {
            positions: vec![
                DVec3::new(0.0, 0.0, 0.0),
                DVec3::new(1.0, 0.0, 0.0),
                DVec3::new(1.0, 1.0, 0.0),
            ],
            polygon_starts: vec![0, 3],
            corner_vertices: vec![0, 1, 2],
            ..Mesh::default()
        };
        m.uv_sets = vec![UvSet {
            name: String::new(),
            uvs: Attribute {
                values: vec![Vec2::new(1.0, 0.0), Vec2::new(0.0, 0.0), Vec2::new(0.0, 1.0)],
                mapping: Mapping::PerVertex,
            },
        }];
        let (mut prims, _) = primitives(&m, DMat4::IDENTITY);
        assert!(add_tangents(&mut prims[0]));
        for t in prims[0].tangents.as_ref().unwrap() {
            assert!((t[0] + 1.0).abs() < 1e-6 && t[1].abs() < 1e-6 && t[2].abs() < 1e-6, "{t:?}");
            assert_eq!(t[3], -1.0);
        }
    }

    /// Source tangents win over MikkTSpace: the quad (normal +Z, UVs giving +X) stores tangent (0, 3, 0) (→ unit +Y) and binormal (+1, 0, 0): N × T = Z × Y = −X, so
    /// the binormal is on the negative side, w = −1 (glTF 2.0 §3.7.2.1). One corner's tangent
    /// is zero: that corner gets MikkTSpace's +X, w = +1.
    #[test]
    fn source_tangents_are_kept_with_the_binormals_handedness() {
        let mut m = quad(1.0);
        let t = glam::Vec3::new(0.0, 3.0, 0.0);
        m.tangents = Some(Attribute {
            values: vec![t, t, t, glam::Vec3::ZERO],
            mapping: Mapping::PerCorner,
        });
        m.binormals = Some(Attribute { values: vec![glam::Vec3::X], mapping: Mapping::AllSame });
        let (mut prims, _) = primitives(&m, DMat4::IDENTITY);
        assert!(add_tangents(&mut prims[0]));
        let p = &prims[0];
        let ts = p.tangents.as_ref().unwrap();
        for (t, &v) in ts.iter().zip(&p.source_vertices) {
            let want = if v == 3 { [1.0, 0.0, 0.0, 1.0] } else { [0.0, 1.0, 0.0, -1.0] };
            let close = t.iter().zip(want).all(|(a, b)| (a - b).abs() < 1e-6);
            assert!(close, "vertex {v}: {t:?}, want {want:?}");
        }
    }

    /// A mirroring bake (x → −x) turns the tangent with the surface and flips the
    /// handedness: T = +X → −X; N = +Z stays (the normal matrix of a mirror in x keeps z);
    /// B = +Y stays, and N × T = Z × (−X) = −Y, so w = −1.
    #[test]
    fn a_mirroring_bake_flips_the_source_handedness() {
        let bake = DMat4::from_scale(DVec3::new(-1.0, 1.0, 1.0));
        let t = source_tangent(Some(glam::Vec3::X), Some(glam::Vec3::Y), [0.0, 0.0, 1.0], bake);
        assert_eq!(t, Some([-1.0, 0.0, 0.0, -1.0]));
        assert_eq!(source_tangent(Some(glam::Vec3::ZERO), None, [0.0, 0.0, 1.0], bake), None);
    }
}

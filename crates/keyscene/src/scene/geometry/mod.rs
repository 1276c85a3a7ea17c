//! Geometry every writer and renderer needs: polygon normals, triangulation of n-gons, and
//! per-corner normals from smoothing groups or stored normals.
//!
//! Positions are `f64` in whatever frame the caller passes (a mesh's own, or baked into world
//! space); normals come out as unit `f32` vectors.

use glam::{DMat3, DMat4, DVec2, DVec3, Vec3};

use super::Mesh;

mod triangulate;

/// The normal used where a polygon has no area (and its neighbours give none): glTF requires
/// unit normals, so a degenerate face gets +Y rather than a zero vector.
pub const FALLBACK_NORMAL: Vec3 = Vec3::Y;

/// The unnormalised normal of a polygon by Newell's method (twice its area for a triangle);
/// works for non-planar and concave n-gons.
pub fn newell_normal(positions: &[DVec3], polygon: &[u32]) -> DVec3 {
    let mut n = DVec3::ZERO;
    let point = |i: u32| positions.get(i as usize).copied().unwrap_or(DVec3::ZERO);
    for (k, &a) in polygon.iter().enumerate() {
        let p = point(a);
        let q = point(polygon[(k + 1) % polygon.len()]);
        n += DVec3::new(
            (p.y - q.y) * (p.z + q.z),
            (p.z - q.z) * (p.x + q.x),
            (p.x - q.x) * (p.y + q.y),
        );
    }
    n
}

/// Splits a polygon into triangles, as triples of positions *within* the polygon (0-based
/// corner numbers): every polygon of `n ≥ 3` corners gives `n − 2` triangles using every
/// corner, as ufbx's `ufbx_triangulate_face` does; fewer than three corners give nothing.
///
/// The polygon is projected on the plane of its Newell normal (its best-fit plane; for a
/// non-planar polygon the projection is what the triangles are checked in). Triangles pass
/// through; a polygon convex in that plane is fanned from corner 0; a concave one is ear
/// clipped (ufbx's rule: an ear is a convex corner whose triangle
/// holds no reflex corner, corners at the same place as the triangle's own do not count).
/// For every polygon whose projection does not cross itself — concave, spiral, comb-shaped,
/// with repeated or collinear corners — no triangle faces against the polygon's normal and
/// the triangles' areas sum to the polygon's. A self-crossing outline has no such
/// triangulation; there, corners that keep the polygon's side are clipped first. A polygon
/// with no area (zero Newell normal) is fanned.
///
/// Cost: `O(n)` ear tests for typical polygons, each looking only at the reflex corners in
/// the grid cells the candidate triangle covers (the 25,122-corner maze polygon of
/// `maya_ngon_maze_7700_binary.fbx` in milliseconds); `O(n²)` at worst.
pub fn triangulate(positions: &[DVec3], polygon: &[u32]) -> Vec<[usize; 3]> {
    let n = polygon.len();
    if n < 3 {
        return Vec::new();
    }
    let fan = || (1..n - 1).map(|k| [0, k, k + 1]).collect::<Vec<_>>();
    if n == 3 {
        return fan();
    }
    let normal = newell_normal(positions, polygon);
    if normal.length_squared() == 0.0 {
        return fan();
    }
    // Project onto the plane: u, v span it with u × v = normal, so CCW stays CCW.
    let w = normal.normalize();
    let u = w.any_orthonormal_vector();
    let v = w.cross(u);
    let pts: Vec<DVec2> = polygon
        .iter()
        .map(|&i| {
            let p = positions.get(i as usize).copied().unwrap_or(DVec3::ZERO);
            DVec2::new(p.dot(u), p.dot(v))
        })
        .collect();
    if is_convex(&pts) {
        return fan();
    }
    triangulate::ear_clip(&pts)
}

/// Whether the outline `pts` (counter-clockwise when simple) is convex, so a fan from any
/// corner tiles it: every corner turns left or goes straight on, once round. Repeated
/// corners are looked through (a reflex corner repeated is still reflex), a corner where the
/// outline turns back on itself (a spike) is not convex, and an outline that turns left all
/// the way but winds round twice (a pentagram) is not either.
fn is_convex(pts: &[DVec2]) -> bool {
    let n = pts.len();
    // The edges between distinct consecutive places, in order.
    let edges: Vec<DVec2> =
        (0..n).map(|k| pts[(k + 1) % n] - pts[k]).filter(|e| *e != DVec2::ZERO).collect();
    if edges.len() < 3 {
        return false;
    }
    let mut winding = 0.0;
    for (k, &e) in edges.iter().enumerate() {
        let f = edges[(k + 1) % edges.len()];
        let (turn, ahead) = (e.perp_dot(f), e.dot(f));
        if turn < 0.0 || (turn == 0.0 && ahead < 0.0) {
            return false;
        }
        winding += turn.atan2(ahead);
    }
    // One turn is 2π; rounding moves it by far less than the π a second turn would add.
    winding < 3.0 * std::f64::consts::PI
}

/// One unit normal per polygon corner (indexed like [`Mesh::corner_vertices`]) for a mesh
/// whose positions are `positions` (the mesh's own, or baked into another frame).
///
/// The mesh's own normals win when it stores them (FBX stores both normals and smoothing
/// groups; the normals are what the authoring tool showed), turned by `normal_matrix`.
/// Otherwise, with smoothing groups (3DS): a corner of polygon `p` at vertex `v` gets the sum of
/// the unit face normals of every polygon at `v` whose smoothing bits intersect `p`'s (so `p`
/// itself counts), normalised — lib3ds `lib3ds_mesh_calculate_normals`' rule; a polygon with
/// smoothing 0 is flat. Without either every polygon is flat. Faces are weighted equally, not
/// by area, as lib3ds does.
pub fn corner_normals(mesh: &Mesh, positions: &[DVec3], normal_matrix: DMat3) -> Vec<Vec3> {
    let polys = mesh.polygon_count();
    let face: Vec<DVec3> =
        (0..polys).map(|p| newell_normal(positions, mesh.polygon(p)).normalize_or_zero()).collect();
    let unit = |n: DVec3, flat: DVec3| {
        let n = if n.length_squared() > 1e-24 { n } else { flat };
        if n.length_squared() > 1e-24 {
            n.normalize().as_vec3()
        } else {
            FALLBACK_NORMAL
        }
    };
    let mut out = vec![FALLBACK_NORMAL; mesh.corner_vertices.len()];
    if let Some(normals) = &mesh.normals {
        for (p, &flat) in face.iter().enumerate() {
            for c in mesh.polygon_corners(p) {
                let v = mesh.corner_vertices[c];
                let n = normals.get(v, c, p).map(|n| normal_matrix * n.as_dvec3());
                out[c] = unit(n.unwrap_or(DVec3::ZERO), flat);
            }
        }
    } else if let Some(groups) = &mesh.smoothing_groups {
        let mut at_vertex: Vec<Vec<u32>> = vec![Vec::new(); positions.len()];
        for p in 0..polys {
            for &v in mesh.polygon(p) {
                if let Some(list) = at_vertex.get_mut(v as usize) {
                    list.push(p as u32);
                }
            }
        }
        for p in 0..polys {
            let bits = groups.get(p).copied().unwrap_or(0);
            for c in mesh.polygon_corners(p) {
                let v = mesh.corner_vertices[c] as usize;
                let mut sum = face[p];
                if bits != 0 {
                    sum = DVec3::ZERO;
                    for &q in at_vertex.get(v).map(Vec::as_slice).unwrap_or(&[]) {
                        if groups.get(q as usize).copied().unwrap_or(0) & bits != 0 {
                            sum += face[q as usize];
                        }
                    }
                }
                out[c] = unit(sum, face[p]);
            }
        }
    } else {
        for (p, &flat) in face.iter().enumerate() {
            for c in mesh.polygon_corners(p) {
                out[c] = unit(flat, flat);
            }
        }
    }
    out
}

/// The matrix that carries normals through `m`: the inverse transpose of its 3×3 part
/// (identity when `m` is singular).
pub fn normal_matrix(m: DMat4) -> DMat3 {
    let m3 = DMat3::from_mat4(m);
    if m3.determinant().abs() < 1e-300 {
        DMat3::IDENTITY
    } else {
        m3.inverse().transpose()
    }
}

impl Mesh {
    /// Every polygon split into triangles by [`triangulate`] (its own best-fit plane, the
    /// polygon's winding kept), as triples of **corner** indices into
    /// [`Mesh::corner_vertices`] (so per-corner normals and UVs index the same way), polygons
    /// in order. A polygon of `n ≥ 3` corners gives `n − 2` triangles; fewer give none. The
    /// same triangles the glTF, 3DA and OBJ writers and the renderer use.
    pub fn triangle_corners(&self) -> Vec<[u32; 3]> {
        let mut out = Vec::with_capacity(self.corner_vertices.len().saturating_sub(2));
        for p in 0..self.polygon_count() {
            let start = self.polygon_corners(p).start as u32;
            for [a, b, c] in triangulate(&self.positions, self.polygon(p)) {
                out.push([start + a as u32, start + b as u32, start + c as u32]);
            }
        }
        out
    }
}

/// `mesh` with every polygon split into triangles by [`triangulate`] (in the mesh's own
/// frame), each triangle keeping its polygon's material slot and smoothing groups, and every
/// per-corner value (normals, UVs, colours, tangents, binormals, stored per corner or by index)
/// carried to the triangles' corners; per-vertex data (positions, skin, morph targets) stays as
/// it is. Polygons of fewer than three corners are dropped, as [`triangulate`] gives them no
/// triangle; the count dropped is returned with the mesh.
pub fn triangulated(mesh: &Mesh) -> (Mesh, usize) {
    use super::{Attribute, Mapping};
    let np = mesh.polygon_count();
    // Per new triangle: its source polygon; per new corner: its source corner.
    let mut from_poly = Vec::with_capacity(np);
    let mut from_corner = Vec::with_capacity(mesh.corner_vertices.len());
    let mut dropped = 0;
    for p in 0..np {
        let corners = mesh.polygon_corners(p);
        let tris = triangulate(&mesh.positions, mesh.polygon(p));
        if tris.is_empty() {
            dropped += 1;
        }
        for t in tris {
            from_poly.push(p);
            from_corner.extend(t.iter().map(|&k| corners.start + k));
        }
    }
    fn remap<T: Copy>(a: &Attribute<T>, poly: &[usize], corner: &[usize]) -> Attribute<T> {
        let pick = |map: &[usize]| map.iter().filter_map(|&i| a.values.get(i).copied()).collect();
        let (values, mapping) = match &a.mapping {
            Mapping::PerVertex => (a.values.clone(), Mapping::PerVertex),
            Mapping::AllSame => (a.values.clone(), Mapping::AllSame),
            Mapping::PerCorner if a.values.len() >= corner.len().max(1) => {
                (pick(corner), Mapping::PerCorner)
            }
            Mapping::PerPolygon => (pick(poly), Mapping::PerPolygon),
            Mapping::Indexed(ix) => (
                a.values.clone(),
                Mapping::Indexed(
                    corner.iter().map(|&c| ix.get(c).copied().unwrap_or(u32::MAX)).collect(),
                ),
            ),
            // Too few per-corner values: index them, a missing one stays missing.
            Mapping::PerCorner => {
                (a.values.clone(), Mapping::Indexed(corner.iter().map(|&c| c as u32).collect()))
            }
        };
        Attribute { values, mapping }
    }
    let mut out = mesh.clone();
    out.corner_vertices = from_corner.iter().map(|&c| mesh.corner_vertices[c]).collect();
    out.polygon_starts = (0..=from_poly.len()).map(|t| (3 * t) as u32).collect();
    out.normals = mesh.normals.as_ref().map(|a| remap(a, &from_poly, &from_corner));
    out.colors = mesh.colors.as_ref().map(|a| remap(a, &from_poly, &from_corner));
    out.tangents = mesh.tangents.as_ref().map(|a| remap(a, &from_poly, &from_corner));
    out.binormals = mesh.binormals.as_ref().map(|a| remap(a, &from_poly, &from_corner));
    for (set, src) in out.uv_sets.iter_mut().zip(&mesh.uv_sets) {
        set.uvs = remap(&src.uvs, &from_poly, &from_corner);
    }
    out.smoothing_groups = mesh
        .smoothing_groups
        .as_ref()
        .map(|sg| from_poly.iter().map(|&p| sg.get(p).copied().unwrap_or(0)).collect());
    if !mesh.polygon_materials.is_empty() {
        out.polygon_materials = from_poly.iter().map(|&p| mesh.polygon_material(p)).collect();
    }
    (out, dropped)
}

#[cfg(test)]
/// A unit cube [0,1]³ with 8 shared vertices and 12 triangles, outward CCW winding.
pub(crate) fn unit_cube(groups: Option<Vec<u32>>) -> Mesh {
    let positions = (0..8)
        .map(|i| DVec3::new((i & 1) as f64, ((i >> 1) & 1) as f64, ((i >> 2) & 1) as f64))
        .collect();
    #[rustfmt::skip]
    let tris: [[u32; 3]; 12] = [
        [0, 2, 3], [0, 3, 1], // z = 0, normal −Z
        [4, 5, 7], [4, 7, 6], // z = 1, +Z
        [0, 1, 5], [0, 5, 4], // y = 0, −Y
        [2, 6, 7], [2, 7, 3], // y = 1, +Y
        [0, 4, 6], [0, 6, 2], // x = 0, −X
        [1, 3, 7], [1, 7, 5], // x = 1, +X
    ];
    Mesh {
        positions,
        polygon_starts: (0..=12).map(|i| i * 3).collect(),
        corner_vertices: tris.iter().flatten().copied().collect(),
        smoothing_groups: groups,
        ..Mesh::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn triangle_corners_cover_every_polygon_with_n_minus_2_triangles_of_its_winding() {
        // A quad and a concave L-hexagon in the z = 0 plane, counter-clockwise seen from +z.
        let positions = vec![
            DVec3::new(0., 0., 0.),
            DVec3::new(1., 0., 0.),
            DVec3::new(1., 1., 0.),
            DVec3::new(0., 1., 0.),
            DVec3::new(2., 0., 0.),
            DVec3::new(4., 0., 0.),
            DVec3::new(4., 1., 0.),
            DVec3::new(3., 1., 0.),
            DVec3::new(3., 3., 0.),
            DVec3::new(2., 3., 0.),
        ];
        let mesh = Mesh {
            positions,
            polygon_starts: vec![0, 4, 10],
            corner_vertices: vec![0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
            ..Mesh::default()
        };
        let tris = mesh.triangle_corners();
        assert_eq!(tris.len(), 2 + 4);
        let area = |t: &[u32; 3]| {
            let p = |c: u32| mesh.positions[mesh.corner_vertices[c as usize] as usize];
            (p(t[1]) - p(t[0])).cross(p(t[2]) - p(t[0])).z / 2.0
        };
        // Corners stay inside their polygon; every triangle faces +z; areas sum to the
        // polygons' (1 and 2·1 + 1·2 = 4).
        assert!(tris[..2].iter().all(|t| t.iter().all(|&c| c < 4)));
        assert!(tris[2..].iter().all(|t| t.iter().all(|&c| (4..10).contains(&c))));
        assert!(tris.iter().all(|t| area(t) > 0.0));
        assert!((tris[..2].iter().map(area).sum::<f64>() - 1.0).abs() < 1e-12);
        assert!((tris[2..].iter().map(area).sum::<f64>() - 4.0).abs() < 1e-12);
    }

    fn normal_at(mesh: &Mesh, normals: &[Vec3], polygon: usize, vertex: u32) -> Vec3 {
        let c = mesh.polygon_corners(polygon).find(|&c| mesh.corner_vertices[c] == vertex).unwrap();
        normals[c]
    }

    #[test]
    fn cube_with_one_smoothing_group_shares_the_diagonal_normal() {
        // Vertex 7 = (1,1,1) touches 6 triangles: two per face +Z, +Y, +X. Unit face normals
        // summed: 2·(0,0,1) + 2·(0,1,0) + 2·(1,0,0) → (1,1,1)/√3.
        let m = unit_cube(Some(vec![1; 12]));
        let n = corner_normals(&m, &m.positions, DMat3::IDENTITY);
        let d = 1.0 / 3f32.sqrt();
        for p in [2, 6, 10] {
            assert!((normal_at(&m, &n, p, 7) - Vec3::splat(d)).length() < 1e-6);
        }
    }

    #[test]
    fn cube_with_a_group_per_side_is_flat() {
        let m = unit_cube(Some(vec![1, 1, 2, 2, 4, 4, 8, 8, 16, 16, 32, 32]));
        let n = corner_normals(&m, &m.positions, DMat3::IDENTITY);
        assert_eq!(normal_at(&m, &n, 2, 7), Vec3::Z);
        assert_eq!(normal_at(&m, &n, 6, 7), Vec3::Y);
        assert_eq!(normal_at(&m, &n, 10, 7), Vec3::X);
    }

    #[test]
    fn smoothing_zero_is_flat_and_bits_must_intersect() {
        // Top (+Z) triangles in group 1|2, side +Y in group 2, side +X in group 0 (flat).
        let mut g = vec![4; 12];
        g[2] = 3;
        g[3] = 3;
        g[6] = 2;
        g[7] = 2;
        g[10] = 0;
        g[11] = 0;
        let m = unit_cube(Some(g));
        let n = corner_normals(&m, &m.positions, DMat3::IDENTITY);
        // At vertex 7 the +Z face meets +Y (bits 2 intersect) but not +X (flat, 0).
        let zy = Vec3::new(0.0, 1.0, 1.0).normalize();
        assert!((normal_at(&m, &n, 2, 7) - zy).length() < 1e-6);
        assert!((normal_at(&m, &n, 6, 7) - zy).length() < 1e-6);
        assert_eq!(normal_at(&m, &n, 10, 7), Vec3::X);
    }

    #[test]
    fn stored_normals_win_over_smoothing_groups() {
        let mut m = unit_cube(Some(vec![1; 12]));
        m.normals = Some(crate::scene::Attribute {
            values: vec![Vec3::X],
            mapping: crate::scene::Mapping::AllSame,
        });
        let n =
            corner_normals(&m, &m.positions, DMat3::from_diagonal(glam::DVec3::new(2.0, 1.0, 1.0)));
        assert!(n.iter().all(|&v| v == Vec3::X), "the stored +X, turned and renormalised");
    }

    #[test]
    fn no_smoothing_groups_and_no_normals_is_flat() {
        let m = unit_cube(None);
        let n = corner_normals(&m, &m.positions, DMat3::IDENTITY);
        assert_eq!(normal_at(&m, &n, 0, 0), -Vec3::Z);
    }

    #[test]
    fn concave_pentagon_is_ear_clipped_inside_its_outline() {
        // An arrow-head: corner 3 (2,1) is reflex; a fan from 0 would leave the outline.
        let p = vec![
            DVec3::new(0.0, 0.0, 0.0),
            DVec3::new(4.0, 0.0, 0.0),
            DVec3::new(4.0, 4.0, 0.0),
            DVec3::new(2.0, 1.0, 0.0),
            DVec3::new(0.0, 4.0, 0.0),
        ];
        let tris = triangulate(&p, &[0, 1, 2, 3, 4]);
        assert_eq!(tris.len(), 3);
        let area: f64 =
            tris.iter().map(|t| (p[t[1]] - p[t[0]]).cross(p[t[2]] - p[t[0]]).z / 2.0).sum();
        // Outline area by the shoelace formula: 16 − triangle (0,4)-(4,4)-(2,1) of area 6 = 10.
        assert!((area - 10.0).abs() < 1e-12);
        assert!(tris.iter().all(|t| (p[t[1]] - p[t[0]]).cross(p[t[2]] - p[t[0]]).z > 0.0));
    }

    #[test]
    fn repeated_and_collinear_corners_of_a_concave_polygon_stay_in_n_minus_2_triangles() {
        // The arrow-head with corner 1 repeated and a collinear midpoint (2, 0) on its bottom
        // edge: 7 corners, so 5 triangles using every corner, of total area 10 (as before:
        // the extra corners add no area).
        let p = vec![
            DVec3::new(0.0, 0.0, 0.0),
            DVec3::new(2.0, 0.0, 0.0),
            DVec3::new(4.0, 0.0, 0.0),
            DVec3::new(4.0, 0.0, 0.0),
            DVec3::new(4.0, 4.0, 0.0),
            DVec3::new(2.0, 1.0, 0.0),
            DVec3::new(0.0, 4.0, 0.0),
        ];
        let tris = triangulate(&p, &[0, 1, 2, 3, 4, 5, 6]);
        assert_eq!(tris.len(), 5);
        let mut used: Vec<usize> = tris.iter().flatten().copied().collect();
        used.sort();
        used.dedup();
        assert_eq!(used, (0..7).collect::<Vec<_>>());
        let area: f64 =
            tris.iter().map(|t| (p[t[1]] - p[t[0]]).cross(p[t[2]] - p[t[0]]).z / 2.0).sum();
        assert!((area - 10.0).abs() < 1e-12);
        assert!(tris.iter().all(|t| (p[t[1]] - p[t[0]]).cross(p[t[2]] - p[t[0]]).z >= 0.0));
    }

    #[test]
    fn a_comb_of_twenty_thousand_corners_is_clipped_whole_and_inside_its_outline() {
        // A comb: teeth of width 1 and height 10 on a base strip 0 ≤ y ≤ 1, so every tooth's
        // inner corners are reflex. Its area is the base (teeth·2 − 1) plus teeth·10 — by
        // construction, independent of any triangulation.
        let teeth = 5_000;
        let mut p = Vec::new();
        for t in 0..teeth {
            let x = 2.0 * t as f64;
            p.push(DVec3::new(x, 1.0, 0.0));
            p.push(DVec3::new(x, 11.0, 0.0));
            p.push(DVec3::new(x + 1.0, 11.0, 0.0));
            p.push(DVec3::new(x + 1.0, 1.0, 0.0));
        }
        // Back along the bottom edge (x decreasing) closes the outline counter-clockwise…
        let end = 2.0 * teeth as f64 - 1.0;
        p.push(DVec3::new(end, 0.0, 0.0));
        p.push(DVec3::new(0.0, 0.0, 0.0));
        // …but the teeth above were listed left to right along the top, which is clockwise;
        // reverse so the ring is one consistent loop and the normal is −Z or +Z either way.
        p.reverse();
        let poly: Vec<u32> = (0..p.len() as u32).collect();
        let tris = triangulate(&p, &poly);
        assert_eq!(tris.len(), p.len() - 2);
        let normal = newell_normal(&p, &poly).normalize();
        let areas: Vec<f64> = tris
            .iter()
            .map(|t| (p[t[1]] - p[t[0]]).cross(p[t[2]] - p[t[0]]).dot(normal) / 2.0)
            .collect();
        assert!(areas.iter().all(|&a| a > 0.0), "every triangle keeps the polygon's winding");
        let expected = (2.0 * teeth as f64 - 1.0) + 10.0 * teeth as f64;
        assert!((areas.iter().sum::<f64>() - expected).abs() < 1e-6 * expected);
    }

    #[test]
    fn triangulated_meshes_keep_corner_data_materials_and_groups_per_triangle() {
        use crate::scene::{Attribute, Mapping, UvSet};
        // A unit square (one quad, 4 UVs per corner) and a triangle; hand-computed: the quad
        // fans into (0,1,2), (0,2,3), the triangle passes through.
        let uv = |k: u32| glam::Vec2::new(k as f32, 0.0);
        let m = Mesh {
            positions: vec![
                DVec3::new(0.0, 0.0, 0.0),
                DVec3::new(1.0, 0.0, 0.0),
                DVec3::new(1.0, 1.0, 0.0),
                DVec3::new(0.0, 1.0, 0.0),
                DVec3::new(2.0, 0.0, 0.0),
            ],
            polygon_starts: vec![0, 4, 7],
            corner_vertices: vec![0, 1, 2, 3, 1, 4, 2],
            uv_sets: vec![UvSet {
                name: "map".into(),
                uvs: Attribute { values: (0..7).map(uv).collect(), mapping: Mapping::PerCorner },
            }],
            smoothing_groups: Some(vec![1, 2]),
            polygon_materials: vec![1, 0],
            material_slots: vec![Some(0), Some(1)],
            ..Mesh::default()
        };
        let (t, dropped) = triangulated(&m);
        assert_eq!(dropped, 0);
        assert_eq!(t.polygon_count(), 3);
        assert_eq!(t.corner_vertices, vec![0, 1, 2, 0, 2, 3, 1, 4, 2]);
        let uvs: Vec<f32> = (0..9).map(|c| t.uv_sets[0].uvs.get(0, c, 0).unwrap().x).collect();
        assert_eq!(uvs, vec![0.0, 1.0, 2.0, 0.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        assert_eq!(t.smoothing_groups, Some(vec![1, 1, 2]));
        assert_eq!(t.polygon_materials, vec![1, 1, 0]);
    }
}

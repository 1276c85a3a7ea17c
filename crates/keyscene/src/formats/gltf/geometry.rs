//! Mesh → glTF triangle primitives: triangulation, normals from smoothing groups, corner
//! attributes deduplicated into glTF vertices.
//!
//! This level knows the scene's [`Mesh`] but nothing of glTF's JSON: it produces flat `f32`
//! arrays and `u32` indices per material slot that the writer ([`super::write`](fn@super::write)) stores in accessors.

use std::collections::HashMap;

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
    type Key = (u32, [u32; 3], Vec<[u32; 2]>, [u32; 4]);
    let mut prims: Vec<(Primitive, HashMap<Key, u32>)> = Vec::new();
    let mut bad = 0;
    for p in 0..mesh.polygon_count() {
        let slot = mesh.polygon_material(p);
        let poly = mesh.polygon(p);
        if poly.iter().any(|&v| v as usize >= positions.len()) {
            continue;
        }
        let k = match prims.iter().position(|(pr, _)| pr.material_slot == slot) {
            Some(k) => k,
            None => {
                let prim = Primitive {
                    material_slot: slot,
                    uvs: vec![Vec::new(); mesh.uv_sets.len()],
                    colors: colors.map(|_| Vec::new()),
                    ..Primitive::default()
                };
                prims.push((prim, HashMap::new()));
                prims.len() - 1
            }
        };
        let (prim, seen) = &mut prims[k];
        let corners = mesh.polygon_corners(p);
        let mut vertex_of = |c: usize| -> u32 {
            let v = mesh.corner_vertices[c];
            let mut pos = positions[v as usize].as_vec3().to_array();
            let mut n = normals[c].to_array();
            let mut uv: Vec<[f32; 2]> = mesh
                .uv_sets
                .iter()
                .map(|s| s.uvs.get(v, c, p).map(|t| [t.x, 1.0 - t.y]).unwrap_or([0.0, 0.0]))
                .collect();
            let mut col =
                colors.and_then(|a| a.get(v, c, p)).map(|c| c.to_array()).unwrap_or([1.0; 4]);
            bad += finite(&mut pos) + uv.iter_mut().map(finite).sum::<usize>() + finite(&mut col);
            if finite(&mut n) > 0 {
                n = FALLBACK_NORMAL.to_array();
            }
            let uv_bits = uv.iter().map(|t| t.map(f32::to_bits)).collect();
            let key = (v, n.map(f32::to_bits), uv_bits, col.map(f32::to_bits));
            *seen.entry(key).or_insert_with(|| {
                prim.positions.push(pos);
                prim.source_vertices.push(v);
                prim.normals.push(n);
                for (set, t) in prim.uvs.iter_mut().zip(&uv) {
                    set.push(*t);
                }
                if let Some(cl) = &mut prim.colors {
                    cl.push(col);
                }
                (prim.positions.len() - 1) as u32
            })
        };
        let tris: Vec<u32> = triangulate(&positions, poly)
            .into_iter()
            .flatten()
            .map(|corner| vertex_of(corners.start + corner))
            .collect();
        prim.indices.extend(tris);
    }
    let mut out: Vec<Primitive> =
        prims.into_iter().map(|(p, _)| p).filter(|p| !p.indices.is_empty()).collect();
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
        }
    }
    (out, bad)
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
}

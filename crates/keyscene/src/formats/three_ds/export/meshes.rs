//! Meshes as 3DS objects: triangles only, at most 65 535 vertices and faces per object (split
//! at UV seams and into parts), material groups, smoothing groups, and their `N_TRI_OBJECT`
//! chunks.

use glam::{DMat4, DVec3};

use super::super::chunks::id;
use super::super::write::ChunkWriter;
use super::{f3, Builder, ObjOut, WriteError, MAX_OBJECT_ELEMENTS, MAX_OBJECT_NAME};
use crate::quoting::quoted;
use crate::scene::Mesh;

/// A triangle mesh as written.
#[derive(Debug, Clone, Default)]
pub(super) struct TriOut {
    /// The points are the source vertices in order.
    in_order: bool,
    points: Vec<[f32; 3]>,
    uvs: Vec<[f32; 2]>,
    faces: Vec<[u16; 3]>,
    smoothing: Vec<u32>,
    groups: Vec<(String, Vec<u16>)>,
    matrix: [[f32; 3]; 4],
}

/// A 4×4 matrix as `MESH_MATRIX`'s four columns of three.
fn mesh_matrix(m: DMat4) -> [[f32; 3]; 4] {
    [
        f3(m.x_axis.truncate()),
        f3(m.y_axis.truncate()),
        f3(m.z_axis.truncate()),
        f3(m.w_axis.truncate()),
    ]
}

/// The matrix lib3ds applies to the points of a mesh with a mirroring `MESH_MATRIX`:
/// `M · S(−1, 1, 1) · M⁻¹` when `det M < 0`, else identity.
pub(super) fn mirror_fix(m: DMat4) -> DMat4 {
    if m.determinant() < 0.0 {
        m * DMat4::from_scale(DVec3::new(-1.0, 1.0, 1.0)) * m.inverse()
    } else {
        DMat4::IDENTITY
    }
}

impl Builder {
    /// A scene mesh as 3DS objects (several when it passes 65 535 vertices or faces): points
    /// `points` (one per mesh vertex, already in the written frame), `matrix` as
    /// `MESH_MATRIX`.
    fn tri_parts(&mut self, mesh: &Mesh, points: &[DVec3], matrix: DMat4) -> Vec<TriOut> {
        let slots = self.slot_names(mesh);
        let uv = mesh.uv_sets.first().map(|s| &s.uvs);
        if mesh.uv_sets.len() > 1 {
            self.report.dropped.push(format!(
                "mesh {}: {} UV sets past the first",
                quoted(&mesh.name),
                mesh.uv_sets.len() - 1
            ));
        }
        // Triangles as (corner indices, polygon).
        let mut tris: Vec<([usize; 3], usize)> = Vec::with_capacity(mesh.polygon_count());
        for p in 0..mesh.polygon_count() {
            let range = mesh.polygon_corners(p);
            let poly = mesh.polygon(p);
            if poly.len() == 3 {
                tris.push(([range.start, range.start + 1, range.start + 2], p));
            } else if poly.len() > 3 {
                self.report.triangulated += 1;
                for t in crate::scene::geometry::triangulate(&mesh.positions, poly) {
                    tris.push((t.map(|k| range.start + k), p));
                }
            }
        }
        let smoothing = |p: usize| -> u32 {
            if let Some(g) = &mesh.smoothing_groups {
                return g.get(p).copied().unwrap_or(0);
            }
            // From the normals: a polygon whose corner normals all agree is flat (no group),
            // others are smooth (group 1).
            let Some(n) = &mesh.normals else { return 1 };
            let r = mesh.polygon_corners(p);
            let poly = mesh.polygon(p);
            let first = n.get(poly[0], r.start, p);
            let flat =
                poly.iter().enumerate().all(|(k, &v)| match (n.get(v, r.start + k, p), first) {
                    (Some(a), Some(b)) => a.abs_diff_eq(b, 1e-4),
                    _ => false,
                });
            if flat && poly.len() >= 3 && !matches!(n.mapping, crate::scene::Mapping::PerVertex) {
                0
            } else {
                1
            }
        };
        let per_vertex_uv =
            uv.is_none_or(|u| matches!(u.mapping, crate::scene::Mapping::PerVertex));
        let mut parts = Vec::new();
        let mut part = TriOut { matrix: mesh_matrix(matrix), ..TriOut::default() };
        // Looked up only, never iterated: the hasher does not reach the output.
        let mut remap: foldhash::HashMap<(u32, [u32; 2]), u16> = foldhash::HashMap::default();
        let mut group_faces: Vec<Vec<u16>> = vec![Vec::new(); slots.len()];
        let whole = per_vertex_uv
            && tris
                .iter()
                .all(|(c, _)| c.iter().all(|&k| (mesh.corner_vertices[k] as usize) < points.len()))
            && points.len() <= MAX_OBJECT_ELEMENTS
            && tris.len() <= MAX_OBJECT_ELEMENTS;
        let finish = |part: &mut TriOut, group_faces: &mut Vec<Vec<u16>>| {
            let mut done = std::mem::take(part);
            part.matrix = done.matrix;
            for (s, faces) in group_faces.iter_mut().enumerate() {
                if let Some(Some(name)) = slots.get(s) {
                    if !faces.is_empty() {
                        done.groups.push((name.clone(), std::mem::take(faces)));
                    }
                }
                faces.clear();
            }
            done
        };
        part.in_order = whole;
        if whole {
            part.points = points.iter().map(|&p| f3(p)).collect();
            if let Some(u) = uv {
                part.uvs = (0..points.len())
                    .map(|v| u.get(v as u32, 0, 0).map_or([0.0, 0.0], |t| [t.x, t.y]))
                    .collect();
            }
        }
        let mut smoothed: Option<(usize, u32)> = None;
        for (corners, p) in tris {
            let mut face = [0u16; 3];
            if whole {
                for k in 0..3 {
                    face[k] = mesh.corner_vertices[corners[k]] as u16;
                }
            } else {
                if part.points.len() + 3 > MAX_OBJECT_ELEMENTS
                    || part.faces.len() >= MAX_OBJECT_ELEMENTS
                {
                    parts.push(finish(&mut part, &mut group_faces));
                    remap.clear();
                }
                for k in 0..3 {
                    let c = corners[k];
                    let v = mesh.corner_vertices[c];
                    let t = uv.and_then(|u| u.get(v, c, p)).map_or([0.0, 0.0], |t| [t.x, t.y]);
                    let keyv = (v, t.map(f32::to_bits));
                    face[k] = *remap.entry(keyv).or_insert_with(|| {
                        part.points
                            .push(f3(points.get(v as usize).copied().unwrap_or(DVec3::ZERO)));
                        if uv.is_some() {
                            part.uvs.push(t);
                        }
                        (part.points.len() - 1) as u16
                    });
                }
            }
            let f = part.faces.len() as u16;
            part.faces.push(face);
            // A polygon's triangles come one after another: its group is worked out once (per
            // triangle it cost the polygon's corners again, quadratic in an n-gon's size).
            let group = match smoothed {
                Some((q, g)) if q == p => g,
                _ => smoothing(p),
            };
            smoothed = Some((p, group));
            part.smoothing.push(group);
            let slot =
                if mesh.polygon_materials.is_empty() { 0 } else { mesh.polygon_materials[p] };
            if let Some(g) = group_faces.get_mut(slot as usize) {
                g.push(f);
            }
        }
        parts.push(finish(&mut part, &mut group_faces));
        if parts.len() > 1 {
            self.report.split += 1;
        }
        parts
    }

    /// Adds mesh objects for `mesh`, returns their written names (first is the main one).
    pub(super) fn add_mesh(
        &mut self,
        name: &str,
        mesh: &Mesh,
        points: &[DVec3],
        matrix: DMat4,
    ) -> Vec<String> {
        let parts = self.tri_parts(mesh, points, matrix);
        let renumbered = parts.len() > 1 || !parts[0].in_order;
        let mut names = Vec::new();
        for (k, part) in parts.into_iter().enumerate() {
            let want = if k == 0 { name.to_string() } else { format!("{name}{}", k + 1) };
            let n = self.names.unique("object", &want, MAX_OBJECT_NAME, &mut self.report);
            self.objects.push((n.clone(), ObjOut::Mesh(part)));
            self.report.meshes += 1;
            if renumbered {
                self.report.renumbered.push(n.clone());
            }
            names.push(n);
        }
        names
    }
}

/// Writes `t` as an `N_TRI_OBJECT` chunk.
pub(super) fn write_tri(w: &mut ChunkWriter, t: &TriOut) -> Result<(), WriteError> {
    w.begin(id::N_TRI_OBJECT);
    w.begin(id::POINT_ARRAY);
    w.u16(t.points.len() as u16);
    for p in &t.points {
        w.vec3(*p);
    }
    w.end()?;
    if !t.uvs.is_empty() {
        w.begin(id::TEX_VERTS);
        w.u16(t.uvs.len() as u16);
        for uv in &t.uvs {
            w.f32(uv[0]);
            w.f32(uv[1]);
        }
        w.end()?;
    }
    w.begin(id::MESH_MATRIX);
    for c in &t.matrix {
        w.vec3(*c);
    }
    w.end()?;
    w.begin(id::FACE_ARRAY);
    w.u16(t.faces.len() as u16);
    for f in &t.faces {
        w.u16(f[0]);
        w.u16(f[1]);
        w.u16(f[2]);
        w.u16(7);
    }
    for (name, faces) in &t.groups {
        w.begin(id::MSH_MAT_GROUP);
        w.cstr(name);
        w.u16(faces.len() as u16);
        for f in faces {
            w.u16(*f);
        }
        w.end()?;
    }
    w.begin(id::SMOOTH_GROUP);
    for s in &t.smoothing {
        w.u32(*s);
    }
    w.end()?;
    w.end()?; // FACE_ARRAY
    w.end()?; // N_TRI_OBJECT
    Ok(())
}

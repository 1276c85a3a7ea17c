//! [`Mesh`](crate::scene::Mesh)es from `N_TRI_OBJECT` chunks: points, faces past the points
//! dropped, smoothing groups, material groups, texture coordinates and `MESH_MATRIX`.

use glam::{DMat4, Vec2};

use super::super::chunks::{File3ds, ObjectKind, TriMesh};
use super::{v3, Builder};
use crate::quoting::quoted;
use crate::scene::{Mesh, UvSet};

/// Where a mesh's problems are reported.
fn mesh_place(name: &str) -> String {
    format!("MDATA › NAMED_OBJECT {name} › N_TRI_OBJECT", name = quoted(&name))
}

/// `MESH_MATRIX` (four columns of three floats) as a 4×4 matrix.
fn mesh_matrix(m: &[[f32; 3]; 4]) -> DMat4 {
    DMat4::from_cols(
        v3(m[0]).extend(0.0),
        v3(m[1]).extend(0.0),
        v3(m[2]).extend(0.0),
        v3(m[3]).extend(1.0),
    )
}

impl<'f> Builder<'_, 'f> {
    pub(super) fn meshes(&mut self, file: &'f File3ds<'_>) {
        let count = file.objects.iter().filter(|o| matches!(o.kind, ObjectKind::Mesh(_))).count();
        self.scene.meshes.reserve(count);
        self.mesh_by_name.reserve(count);
        // Names in use, for making a repeated name unique (`NAME.2`, `NAME.3`, …, skipping
        // names another object has).
        let mut taken: std::collections::HashSet<String> =
            file.objects.iter().map(|o| o.name.clone()).collect();
        for o in &file.objects {
            if let ObjectKind::Mesh(tri) = &o.kind {
                let mut mesh = self.convert_mesh(file, &o.name, tri, o.offset);
                let index = self.scene.meshes.len();
                let same = self.mesh_by_name.entry(&o.name).or_default();
                same.push(index);
                let k = same.len();
                if k > 1 {
                    let mut n = k;
                    let unique = loop {
                        let candidate = format!("{}.{n}", o.name);
                        if taken.insert(candidate.clone()) {
                            break candidate;
                        }
                        n += 1;
                    };
                    self.warn(
                        Some(o.offset),
                        mesh_place(&o.name),
                        format!(
                            "object {k} of this name (objects are told apart by their chunk); \
                             named {} here",
                            quoted(&unique)
                        ),
                    );
                    mesh.name = unique;
                }
                self.scene.meshes.push(mesh);
            }
        }
    }

    fn convert_mesh(
        &mut self,
        file: &'f File3ds<'_>,
        name: &str,
        tri: &TriMesh<'_>,
        offset: u64,
    ) -> Mesh {
        let n_points = tri.points.len();
        let faces = tri.faces;
        let valid = |f: &[u16; 4]| usize::from(f[0].max(f[1]).max(f[2])) < n_points;
        // Faces naming a vertex past the points are dropped. `kept` (new face index per old
        // face, u32::MAX when dropped) is only built when some face is dropped.
        let mut kept: Option<Vec<u32>> = None;
        // One pass converts the corners and finds the largest index; only when that index is
        // past the points is the face list walked again, face by face.
        let mut cv = vec![0u32; faces.len() * 3];
        let mut max = 0u16;
        for (c, f) in cv.chunks_exact_mut(3).zip(faces.iter()) {
            max = max.max(f[0]).max(f[1]).max(f[2]);
            c.copy_from_slice(&[f[0].into(), f[1].into(), f[2].into()]);
        }
        let corner_vertices: Vec<u32> = if faces.is_empty() || usize::from(max) < n_points {
            cv
        } else {
            let mut map = Vec::with_capacity(faces.len());
            cv.clear();
            for f in faces.iter() {
                if valid(&f) {
                    map.push((cv.len() / 3) as u32);
                    cv.extend_from_slice(&[f[0].into(), f[1].into(), f[2].into()]);
                } else {
                    map.push(u32::MAX);
                }
            }
            let dropped = faces.len() - cv.len() / 3;
            self.warn(
                Some(offset),
                mesh_place(name),
                format!("{dropped} faces name vertices past the {n_points} points; dropped"),
            );
            kept = Some(map);
            cv
        };
        // The new index of old face `f`, `None` when it was dropped or does not exist.
        let new_face = |f: usize| -> Option<usize> {
            match &kept {
                None => (f < faces.len()).then_some(f),
                Some(map) => map.get(f).filter(|&&k| k != u32::MAX).map(|&k| k as usize),
            }
        };
        let face_count = corner_vertices.len() / 3;
        let polygon_starts = (0..=face_count).map(|i| (i * 3) as u32).collect();
        let mut mesh = Mesh {
            name: name.to_string(),
            positions: tri.points.iter().map(v3).collect(),
            polygon_starts,
            corner_vertices,
            source_matrix: tri.matrix.as_ref().map(mesh_matrix),
            ..Mesh::default()
        };
        if !tri.tex_verts.is_empty() {
            if tri.tex_verts.len() == n_points {
                let uvs = tri.tex_verts.iter().map(|[u, v]| Vec2::new(u, v)).collect();
                mesh.uv_sets.push(UvSet {
                    name: String::new(),
                    uvs: crate::scene::Attribute {
                        values: uvs,
                        mapping: crate::scene::Mapping::PerVertex,
                    },
                });
            } else {
                self.warn(
                    Some(offset),
                    mesh_place(name),
                    format!(
                        "{} texture vertices for {n_points} points; UVs ignored",
                        tri.tex_verts.len()
                    ),
                );
            }
        }
        if !tri.smoothing.is_empty() && tri.smoothing.len() == faces.len() {
            mesh.smoothing_groups = Some(match &kept {
                None => tri.smoothing.to_vec(),
                Some(map) => tri
                    .smoothing
                    .iter()
                    .zip(map)
                    .filter(|(_, &k)| k != u32::MAX)
                    .map(|(s, _)| s)
                    .collect(),
            });
        }
        if !tri.material_groups.is_empty() {
            let by_name = self.material_by_name.get_or_insert_with(|| {
                file.materials.iter().enumerate().rev().map(|(i, m)| (m.name.as_str(), i)).collect()
            });
            let mut per_face = vec![Mesh::NO_MATERIAL; face_count];
            let mut bad = 0usize;
            for (slot, (mat, faces)) in tri.material_groups.iter().enumerate() {
                mesh.material_slots.push(by_name.get(mat.as_str()).copied());
                if kept.is_none() {
                    for f in faces.iter() {
                        match per_face.get_mut(usize::from(f)) {
                            Some(p) => *p = slot as u32,
                            None => bad += 1,
                        }
                    }
                    continue;
                }
                for f in faces.iter() {
                    match new_face(usize::from(f)) {
                        Some(k) => per_face[k] = slot as u32,
                        None => bad += 1,
                    }
                }
            }
            if bad > 0 {
                self.warn(
                    Some(offset),
                    mesh_place(name),
                    format!("{bad} material-group face indices out of range; ignored"),
                );
            }
            mesh.polygon_materials = per_face;
        }
        mesh
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::chunks::id;
    use super::super::tests::{chunk, f32s, read};
    use crate::scene::Mesh;

    #[test]
    fn faces_past_the_points_are_dropped_with_their_smoothing_and_material_entries() {
        let mut pts = 3u16.to_le_bytes().to_vec();
        pts.extend(f32s(&[0., 0., 0., 1., 0., 0., 0., 1., 0.]));
        // Faces 0 and 2 are fine, face 1 names vertex 7 of 3.
        let mut faces = 3u16.to_le_bytes().to_vec();
        for v in [0u16, 1, 2, 0, 0, 7, 2, 0, 2, 1, 0, 0] {
            faces.extend(v.to_le_bytes());
        }
        let mut group = b"Red\0".to_vec();
        group.extend(2u16.to_le_bytes());
        group.extend(1u16.to_le_bytes());
        group.extend(2u16.to_le_bytes());
        let smooth: Vec<u8> = [1u32, 2, 4].iter().flat_map(|x| x.to_le_bytes()).collect();
        faces.extend(chunk(id::MSH_MAT_GROUP, &[&group]));
        faces.extend(chunk(id::SMOOTH_GROUP, &[&smooth]));
        let tri = chunk(
            id::N_TRI_OBJECT,
            &[&chunk(id::POINT_ARRAY, &[&pts]), &chunk(id::FACE_ARRAY, &[&faces])],
        );
        let obj = chunk(id::NAMED_OBJECT, &[b"M\0", &tri]);
        let mat = chunk(id::MAT_ENTRY, &[&chunk(id::MAT_NAME, &[b"Red\0"])]);
        let bytes = chunk(id::M3DMAGIC, &[&chunk(id::MDATA, &[&mat, &obj])]);
        let (scene, warnings) = read(&bytes);
        let m = &scene.meshes[0];
        assert_eq!(m.corner_vertices, [0, 1, 2, 2, 1, 0]);
        assert_eq!(m.polygon_starts, [0, 3, 6]);
        assert_eq!(m.smoothing_groups.as_deref(), Some(&[1u32, 4][..]));
        assert_eq!(m.material_slots, [Some(0)]);
        assert_eq!(m.polygon_materials, [Mesh::NO_MATERIAL, 0]);
        assert_eq!(warnings.len(), 2, "{warnings:?}"); // the dropped face, its group entry
    }
}

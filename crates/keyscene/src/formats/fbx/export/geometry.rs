//! The FBX writer's `Geometry` objects: `Vertices` (with the node's geometry transform
//! baked in), `PolygonVertexIndex` (n-gons kept), and the layer elements (normals, colours,
//! smoothing, UV sets, materials) with their `Layer`s.

use glam::{DMat3, DMat4};

use super::name_class;
use crate::formats::fbx::write::{Record, Value};
use crate::scene::Mesh;

/// One layer element record with its standard head.
fn layer_element(
    kind: &str,
    index: i32,
    version: i32,
    name: &str,
    mapping: &str,
    reference: &str,
) -> Record {
    Record::one(kind, index)
        .child(Record::one("Version", version))
        .child(Record::one("Name", name))
        .child(Record::one("MappingInformationType", mapping))
        .child(Record::one("ReferenceInformationType", reference))
}

pub(super) fn geometry(id: i64, mesh: &Mesh, bake: DMat4) -> Record {
    let nm = DMat3::from_mat4(bake).inverse().transpose();
    let mut verts = Vec::with_capacity(mesh.positions.len() * 3);
    for p in &mesh.positions {
        let q = bake.transform_point3(*p);
        verts.extend([q.x, q.y, q.z]);
    }
    let np = mesh.polygon_count();
    let mut pvi = Vec::with_capacity(mesh.corner_vertices.len());
    for poly in 0..np {
        let c = mesh.polygon(poly);
        for (k, &v) in c.iter().enumerate() {
            pvi.push(if k + 1 == c.len() { !(v as i32) } else { v as i32 });
        }
    }
    let mut g = Record::with(
        "Geometry",
        vec![Value::I64(id), name_class(&mesh.name, "Geometry"), Value::str("Mesh")],
    )
    .child(Record::with("Vertices", vec![Value::F64Array(verts)]))
    .child(Record::with("PolygonVertexIndex", vec![Value::I32Array(pvi)]))
    .child(Record::one("GeometryVersion", 124));
    let mut layer0 = vec!["LayerElementMaterial"];
    // Per corner, a value per polygon vertex.
    let per_corner = |f: &mut dyn FnMut(u32, usize, usize)| {
        for poly in 0..np {
            let r = mesh.polygon_corners(poly);
            for corner in r {
                f(mesh.corner_vertices[corner], corner, poly);
            }
        }
    };
    if let Some(n) = &mesh.normals {
        let mut out = Vec::with_capacity(mesh.corner_vertices.len() * 3);
        let mut ok = true;
        // The scene's normals (`f32`) as they are when no geometry transform is baked in;
        // baked ones renormalised and rounded to `f32`, what a reader of the written file
        // keeps, so that a file written from the written file holds the same normals
        // (docs/fbx.md, "FBX → FBX → FBX").
        let baked = nm != DMat3::IDENTITY;
        per_corner(&mut |v, c, p| match n.get(v, c, p) {
            Some(x) => {
                let y = if baked {
                    (nm * x.as_dvec3()).normalize_or_zero().as_vec3().as_dvec3()
                } else {
                    x.as_dvec3()
                };
                out.extend([y.x, y.y, y.z]);
            }
            None => {
                ok = false;
                out.extend([0.0, 0.0, 0.0]);
            }
        });
        if ok {
            g.push(
                layer_element("LayerElementNormal", 0, 102, "", "ByPolygonVertex", "Direct")
                    .child(Record::with("Normals", vec![Value::F64Array(out)])),
            );
            layer0.push("LayerElementNormal");
        }
    }
    if let Some(col) = &mesh.colors {
        let mut out = Vec::with_capacity(mesh.corner_vertices.len() * 4);
        per_corner(&mut |v, c, p| {
            let x = col.get(v, c, p).unwrap_or(glam::Vec4::ONE);
            out.extend([x.x as f64, x.y as f64, x.z as f64, x.w as f64]);
        });
        g.push(
            layer_element("LayerElementColor", 0, 101, "", "ByPolygonVertex", "Direct")
                .child(Record::with("Colors", vec![Value::F64Array(out)])),
        );
        layer0.push("LayerElementColor");
    }
    if let Some(sg) = &mesh.smoothing_groups {
        if sg.len() == np {
            g.push(
                layer_element("LayerElementSmoothing", 0, 102, "", "ByPolygon", "Direct").child(
                    Record::with(
                        "Smoothing",
                        vec![Value::I32Array(sg.iter().map(|&s| s as i32).collect())],
                    ),
                ),
            );
            layer0.push("LayerElementSmoothing");
        }
    }
    let mut uv_layers = 0;
    for (k, set) in mesh.uv_sets.iter().enumerate() {
        let mut out = Vec::with_capacity(mesh.corner_vertices.len() * 2);
        per_corner(&mut |v, c, p| {
            let x = set.uvs.get(v, c, p).unwrap_or(glam::Vec2::ZERO);
            out.extend([x.x as f64, x.y as f64]);
        });
        let name = if set.name.is_empty() { format!("UVSet{k}") } else { set.name.clone() };
        g.push(
            layer_element("LayerElementUV", k as i32, 101, &name, "ByPolygonVertex", "Direct")
                .child(Record::with("UV", vec![Value::F64Array(out)])),
        );
        uv_layers += 1;
    }
    // Materials: index into the model's material list (slot order); polygons without one use
    // the last slot the writer connected for them (see `Builder::objects`).
    let slots = mesh.material_slots.len().max(1) as u32;
    let mats: Vec<i32> = (0..np)
        .map(|p| {
            let m = mesh.polygon_material(p);
            if m >= slots {
                0
            } else {
                m as i32
            }
        })
        .collect();
    let all_same = mats.iter().all(|&m| m == mats.first().copied().unwrap_or(0));
    g.push(if all_same {
        layer_element("LayerElementMaterial", 0, 101, "", "AllSame", "IndexToDirect").child(
            Record::with(
                "Materials",
                vec![Value::I32Array(vec![mats.first().copied().unwrap_or(0)])],
            ),
        )
    } else {
        layer_element("LayerElementMaterial", 0, 101, "", "ByPolygon", "IndexToDirect")
            .child(Record::with("Materials", vec![Value::I32Array(mats)]))
    });
    let layer = |index: i32, elems: &[(&str, i32)]| {
        let mut l = Record::one("Layer", index).child(Record::one("Version", 100));
        for (ty, typed) in elems {
            l.push(
                Record::new("LayerElement")
                    .child(Record::one("Type", *ty))
                    .child(Record::one("TypedIndex", *typed)),
            );
        }
        l
    };
    let mut first: Vec<(&str, i32)> = layer0.iter().map(|t| (*t, 0)).collect();
    if uv_layers > 0 {
        first.push(("LayerElementUV", 0));
    }
    g.push(layer(0, &first));
    for k in 1..uv_layers {
        g.push(layer(k, &[("LayerElementUV", k)]));
    }
    g
}

//! `UsdGeom.Mesh` prims: the topology as stored (n-gons kept, or split into triangles with
//! [`super::WriteOptions::triangulate`]; polygons of fewer than three corners left out), points in the node prim's frame with the node's geometric transform
//! baked in, face-varying normals, UV sets (`primvars:st`, `primvars:st1`, …) and vertex
//! colours (`primvars:displayColor`/`displayOpacity`), `extent`, `orientation`
//! (`rightHanded`: counter-clockwise corners face the viewer, keyscene's convention), no
//! subdivision, and the material binding: on the mesh when all its polygons share one
//! material, else one `GeomSubset` of family `materialBind` per material.

use glam::{DMat3, DMat4, DVec3, Vec3};

use super::text::Text;
use super::Ctx;
use crate::scene::Mesh;

/// A mesh prim's points: one set, or time samples (deformed meshes, [`super::deform`]).
#[derive(Debug, Clone)]
pub enum Points {
    /// Points that do not change.
    Static(Vec<DVec3>),
    /// Points at each frame (node frame).
    Sampled {
        /// Sample frames (time codes).
        frames: Vec<f64>,
        /// The points at each frame.
        values: Vec<Vec<Vec3>>,
    },
}

/// The rest points of mesh `mesh` on node `k`: through the node's geometric transform.
pub fn rest_points(ctx: &Ctx, k: usize, mesh: &Mesh) -> Points {
    let g = ctx.scene.nodes[k].geometry_transform();
    Points::Static(mesh.positions.iter().map(|&p| g.transform_point3(p)).collect())
}

/// Writes the mesh prim `name` of node `k` showing mesh `m` with `points`; `deformed`: the
/// stored normals do not follow the points and are left out; `rig`: the mesh is bound to
/// that UsdSkel rig, with its `Skeleton` prim's target path and its blend shapes' target
/// prefix (`SkelBindingAPI`, [`super::skel::write_binding`]).
pub fn write(
    t: &mut Text,
    ctx: &mut Ctx,
    (k, m): (usize, usize),
    name: &str,
    points: &Points,
    deformed: bool,
    rig: Option<(&super::skel::Rig, &str, &str)>,
) {
    let scene = ctx.scene;
    let split;
    let mesh = if ctx.triangulate {
        split = crate::scene::geometry::triangulated(&scene.meshes[m]).0;
        &split
    } else {
        &scene.meshes[m]
    };
    let faces: Vec<usize> =
        (0..mesh.polygon_count()).filter(|&p| mesh.polygon_corners(p).len() >= 3).collect();
    if faces.len() < mesh.polygon_count() {
        ctx.warn(format!(
            "mesh \"{}\": {} polygon(s) of fewer than 3 corners not written",
            mesh.name,
            mesh.polygon_count() - faces.len()
        ));
    }
    let binding = bindings(ctx, mesh, &faces);
    let mut apis = Vec::new();
    if binding.direct.is_some() {
        apis.push("\"MaterialBindingAPI\"");
    }
    if rig.is_some() {
        apis.push("\"SkelBindingAPI\"");
    }
    let mut meta = Vec::new();
    if !apis.is_empty() {
        meta.push(format!("prepend apiSchemas = [{}]", apis.join(", ")));
    }
    t.open(&format!("def Mesh \"{name}\""), &meta);
    if binding.double_sided {
        t.line("uniform bool doubleSided = 1");
    }
    match points {
        Points::Static(p) => {
            let (lo, hi) = bounds(p.iter().copied());
            let e = format!("[{}, {}]", t.vec3_f(lo), t.vec3_f(hi));
            t.line(&format!("float3[] extent = {e}"));
            let arr = t.array_with(p, |t, s, v| t.put_tuple_f(s, &v.to_array()));
            t.line_parts(&["point3f[] points = ", &arr]);
        }
        Points::Sampled { frames, values } => {
            let boxes: Vec<(DVec3, DVec3)> =
                values.iter().map(|v| bounds(v.iter().map(|p| p.as_dvec3()))).collect();
            t.time_samples("float3[] extent", frames, &boxes, |t, &(lo, hi)| {
                format!("[{}, {}]", t.vec3_f(lo), t.vec3_f(hi))
            });
            t.time_samples("point3f[] points", frames, values, |t, v| {
                t.array_with(v, |t, s, p| t.put_tuple_f(s, &p.as_dvec3().to_array()))
            });
        }
    }
    let counts = t.array(&faces, |_, &p| mesh.polygon_corners(p).len().to_string());
    t.line(&format!("int[] faceVertexCounts = {counts}"));
    let corners: Vec<usize> = faces.iter().flat_map(|&p| mesh.polygon_corners(p)).collect();
    let indices = t.array(&corners, |_, &c| mesh.corner_vertices[c].to_string());
    t.line(&format!("int[] faceVertexIndices = {indices}"));
    t.line("uniform token orientation = \"rightHanded\"");
    t.line("uniform token subdivisionScheme = \"none\"");
    if !deformed {
        normals(t, ctx, k, mesh, &faces);
    }
    primvars(t, mesh, &faces);
    if let Some((rig, skeleton, shapes)) = rig {
        super::skel::write_binding(t, rig, skeleton, shapes);
    }
    if let Some(path) = &binding.direct {
        t.line(&format!("rel material:binding = <{path}>"));
    }
    if !binding.subsets.is_empty() {
        t.line("uniform token subsetFamily:materialBind:familyType = \"nonOverlapping\"");
    }
    for (sub, path, indices) in &binding.subsets {
        t.open(
            &format!("def GeomSubset \"{sub}\""),
            &["prepend apiSchemas = [\"MaterialBindingAPI\"]".to_string()],
        );
        t.line("uniform token elementType = \"face\"");
        t.line("uniform token familyName = \"materialBind\"");
        let arr = t.array(indices, |_, i| i.to_string());
        t.line(&format!("int[] indices = {arr}"));
        t.line(&format!("rel material:binding = <{path}>"));
        t.close();
    }
    if let Some((rig, _, _)) = rig {
        super::skel::write_shapes(t, rig);
    }
    t.close();
}

/// The smallest box holding `points` (zero for none).
fn bounds(points: impl Iterator<Item = DVec3>) -> (DVec3, DVec3) {
    let (mut lo, mut hi) = (DVec3::INFINITY, DVec3::NEG_INFINITY);
    for p in points.filter(|p| p.is_finite()) {
        lo = lo.min(p);
        hi = hi.max(p);
    }
    if lo.x > hi.x {
        (DVec3::ZERO, DVec3::ZERO)
    } else {
        (lo, hi)
    }
}

/// Face-varying normals through the node's geometric transform (inverse transpose), when
/// every corner of the written polygons has one.
fn normals(t: &mut Text, ctx: &Ctx, k: usize, mesh: &Mesh, faces: &[usize]) {
    let Some(attr) = &mesh.normals else { return };
    let g: DMat4 = ctx.scene.nodes[k].geometry_transform();
    let nm = DMat3::from_mat4(g).inverse().transpose();
    let mut out = Vec::new();
    for &p in faces {
        for c in mesh.polygon_corners(p) {
            let Some(n) = attr.get(mesh.corner_vertices[c], c, p) else { return };
            out.push((nm * n.as_dvec3()).normalize_or_zero());
        }
    }
    let arr = t.array(&out, |t, &n| t.vec3_f(n));
    t.line(&format!("normal3f[] normals = {arr} ("));
    t.line("    interpolation = \"faceVarying\"");
    t.line(")");
}

/// UV sets and vertex colours as face-varying primvars.
fn primvars(t: &mut Text, mesh: &Mesh, faces: &[usize]) {
    let corners = || faces.iter().flat_map(|&p| mesh.polygon_corners(p).map(move |c| (p, c)));
    for (i, set) in mesh.uv_sets.iter().enumerate() {
        let uvs: Option<Vec<glam::Vec2>> =
            corners().map(|(p, c)| set.uvs.get(mesh.corner_vertices[c], c, p)).collect();
        let Some(uvs) = uvs else { continue };
        let name = if i == 0 { "st".to_string() } else { format!("st{i}") };
        let arr = t.array_with(&uvs, |t, s, uv| t.put_tuple_f(s, &uv.as_dvec2().to_array()));
        t.line_parts(&[&format!("texCoord2f[] primvars:{name} = "), &arr, " ("]);
        t.line("    interpolation = \"faceVarying\"");
        t.line(")");
    }
    let Some(colors) = &mesh.colors else { return };
    let values: Option<Vec<_>> =
        corners().map(|(p, c)| colors.get(mesh.corner_vertices[c], c, p)).collect();
    let Some(values) = values else { return };
    let rgb = t.array(&values, |t, c| t.vec3_f(c.truncate().as_dvec3()));
    t.line(&format!("color3f[] primvars:displayColor = {rgb} ("));
    t.line("    interpolation = \"faceVarying\"");
    t.line(")");
    if values.iter().any(|c| c.w != 1.0) {
        let a = t.array(&values, |t, c| t.num_f(f64::from(c.w)));
        t.line(&format!("float[] primvars:displayOpacity = {a} ("));
        t.line("    interpolation = \"faceVarying\"");
        t.line(")");
    }
}

/// Where a mesh's materials bind.
struct Binding {
    /// All written polygons share this material (prim path).
    direct: Option<String>,
    /// Otherwise one subset per material: prim name, material path, polygon indices (among
    /// the written polygons).
    subsets: Vec<(String, String, Vec<usize>)>,
    /// Every material the mesh uses is two-sided.
    double_sided: bool,
}

fn bindings(ctx: &Ctx, mesh: &Mesh, faces: &[usize]) -> Binding {
    let mut groups: Vec<(Option<usize>, Vec<usize>)> = Vec::new();
    for (i, &p) in faces.iter().enumerate() {
        let slot = mesh.polygon_material(p);
        let mat = mesh.material_slots.get(slot as usize).copied().flatten();
        let mat = mat.filter(|&m| ctx.material_paths.get(m).is_some_and(Option::is_some));
        match groups.iter_mut().find(|g| g.0 == mat) {
            Some(g) => g.1.push(i),
            None => groups.push((mat, vec![i])),
        }
    }
    let used: Vec<usize> = groups.iter().filter_map(|g| g.0).collect();
    let double_sided = !used.is_empty() && used.iter().all(|&m| ctx.scene.materials[m].two_sided);
    let path = |m: usize| ctx.material_paths[m].clone().unwrap_or_default();
    if let [(Some(m), _)] = groups.as_slice() {
        return Binding { direct: Some(path(*m)), subsets: Vec::new(), double_sided };
    }
    let mut names = super::names::Siblings::default();
    let subsets = groups
        .into_iter()
        .filter_map(|(m, faces)| {
            let m = m?;
            let name = names.claim(&ctx.scene.materials[m].name);
            Some((name, path(m), faces))
        })
        .collect();
    Binding { direct: None, subsets, double_sided }
}

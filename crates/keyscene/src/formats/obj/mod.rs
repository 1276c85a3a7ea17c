//! Wavefront OBJ + MTL writer.
//!
//! [`write`](fn@write) turns a scene into the text of an `.obj` file and its `.mtl` file;
//! [`save`] writes both atomically. OBJ holds static geometry only, so the scene is written in
//! one pose:
//!
//! - **Placement.** With a [`Pose`] every mesh node's vertices are the pose's
//!   [`Pose::world_positions`] (placed by [`Pose::mesh_to_world`], and deformed where the
//!   evaluator deforms meshes) and the node shows the mesh the pose
//!   names (3DS morph tracks switch it). Without a pose the geometry is written *as stored*, no
//!   animation evaluated: a mesh whose source keeps its points in world coordinates
//!   ([`Mesh::source_matrix`] is set — 3DS point arrays are world-space at modelling time) is
//!   written verbatim; any other mesh is placed by its node's rest transforms
//!   (`Scene::evaluate(None, …)`). A placement that mirrors (negative determinant) reverses each
//!   polygon's corner order so front faces stay front faces.
//! - **Objects.** One `o` per node with a mesh, in node order, named after the node
//!   ([`Node::name`](crate::scene::Node::name); 3DS: the object name). Names are made unique
//!   only when two written nodes share one: the later ones become `NAME.INSTANCE` when the node
//!   has an instance name, then `NAME.2`, `NAME.3`… Hidden nodes are written too. Bytes of
//!   the name outside `[A-Za-z0-9_.:-]` (spaces included, which would split the `o` line) are
//!   written as `FBXASCnnn` with `nnn` the byte in three decimal digits — the escape Maya's
//!   OBJ exporter and ufbx's reference files use (oracles README, "Candidate OBJ contract").
//! - **Vertices.** Every stored vertex is written (`v`), in stored order, so OBJ vertex
//!   `offset + i` is mesh vertex `i`. `vt` is UV set 0 and `vn` the normals: the mesh's own
//!   when it stores them — turned by the inverse transpose of the node's world matrix times
//!   only the *rotation* of [`Node::geometry_transform`](crate::scene::Node::geometry_transform)
//!   (ufbx's "compatible" normal matrix, which its `synthetic_geometric_squish`/`_transform`
//!   references expect; with no geometric transform this is the usual inverse transpose of
//!   the placement) — else derived from smoothing groups (a polygon corner averages the unit
//!   normals of the polygons around its vertex whose smoothing bits intersect the polygon's
//!   own, as lib3ds `lib3ds_mesh_calculate_normals` does; a polygon with no bits is flat).
//!   `vt` and `vn` values are de-duplicated by exact value, in first-use order.
//! - **Faces.** Polygons in stored order, kept as n-gons, with `usemtl` before the first face
//!   and at every change of material. Faces without a material use `default`, which the MTL
//!   defines only when it is used.
//! - **Materials.** `newmtl` per scene material with `Ka`/`Kd`/`Ks`, `Ns` = shininess × 1000
//!   (MTL's 0–1000 exponent range), `d` = 1 − transparency, `illum 2`, and `map_Kd`/`map_Ks`/
//!   `map_d`/`map_bump` naming the texture by the file name it has beside the output
//!   ([`crate::output::TexturePlan`]: the file found next to the source, its name on disk; else
//!   the last path component of the name the source stores; an empty name is no map). [`save`]
//!   copies the found images there and writes embedded ones (FBX `Video` › `Content`) out as
//!   files. UV transforms are not written. Whitespace in names becomes
//!   `_`; duplicate names get `.2`, `.3`…
//! - **Numbers.** A value that is exactly an `f32` (all unposed 3DS data) is written as the
//!   shortest decimal that reads back as that `f32`; any other value as the shortest decimal
//!   that reads back as the same `f64`. No exponents (some OBJ readers reject them); `-0` is `0`.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

use glam::{DMat4, DVec3, Vec2, Vec3};

use crate::anim::{Pose, Time};
use crate::scene::{geometry, MapSlot, Mesh, Scene};

/// An OBJ problem.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The scene cannot be written as OBJ.
    #[error("obj: {0}")]
    Write(String),
}

/// The two texts [`write`](fn@write) produces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjText {
    /// The `.obj` file.
    pub obj: String,
    /// The `.mtl` file the `.obj` names in its `mtllib` line.
    pub mtl: String,
}

/// Renders `scene` as OBJ and MTL text (see the module docs for every rule). `pose`: the pose to
/// write, `None` for the geometry as stored. `mtl_file_name` is written in the `mtllib` line
/// (a file name relative to the `.obj`, such as `"scene.mtl"`).
pub fn write(scene: &Scene, pose: Option<&Pose>, mtl_file_name: &str) -> Result<ObjText, Error> {
    let rest;
    let pose_for_rest = match pose {
        Some(p) => p,
        None => {
            rest = scene.evaluate(None, Time::Frame(0.0));
            &rest
        }
    };
    let mut mat_names = UniqueNames::default();
    let material_names: Vec<String> =
        scene.materials.iter().map(|m| mat_names.add(&sanitize(&m.name), "")).collect();
    let default_material = mat_names.add("default", "");
    let mut used_default = false;

    let mut obj = String::new();
    obj.push_str("# written by keyscene\n");
    writeln!(obj, "mtllib {mtl_file_name}").unwrap();

    let mut object_names = UniqueNames::default();
    let (mut v_base, mut vt_base, mut vn_base) = (1usize, 1usize, 1usize);
    for (id, node) in scene.nodes.iter().enumerate() {
        let mesh_index = match pose {
            Some(p) => p.mesh.get(id).copied().flatten(),
            None => node.mesh,
        };
        let Some(mesh) = mesh_index.and_then(|m| scene.meshes.get(m)) else { continue };
        let to_world = match (pose, mesh.source_matrix) {
            (None, Some(_)) => DMat4::IDENTITY,
            _ => pose_for_rest.mesh_to_world(scene, id),
        };
        let name = if node.name.is_empty() { format!("node{id}") } else { node.name.clone() };
        writeln!(obj, "o {}", escape_name(&object_names.add(&name, &node.instance))).unwrap();
        let normal_to_world = match (pose, mesh.source_matrix) {
            (None, Some(_)) => DMat4::IDENTITY,
            _ => {
                let (_, geometric_rotation, _) =
                    node.geometry_transform().to_scale_rotation_translation();
                pose_for_rest.world[id] * DMat4::from_quat(geometric_rotation)
            }
        };

        let positions: Vec<DVec3> = match (pose, mesh.source_matrix) {
            (None, Some(_)) => mesh.positions.clone(),
            _ => pose_for_rest.world_positions(scene, id),
        };
        for p in &positions {
            writeln!(obj, "v {} {} {}", num(p.x), num(p.y), num(p.z)).unwrap();
        }
        // Posed, stored normals come from the one library function every posed output uses
        // ([`Pose::world_corner_normals`]): skinned and blend-shaped meshes deformed like their
        // positions, rigid ones by ufbx's compatible normal matrix (the same numbers as
        // `normal_to_world` gives them below).
        let deformed = pose.and_then(|p| p.world_corner_normals(scene, id));
        let mut corners = corner_attributes(mesh, &positions, to_world, normal_to_world);
        if let Some(deformed) = deformed {
            for (n, d) in corners.normals.iter_mut().zip(deformed) {
                if d != DVec3::ZERO {
                    *n = Some(d.as_vec3());
                }
            }
        }
        let mut uv_index: Dedup<[u32; 2]> = Dedup::default();
        let mut n_index: Dedup<[u32; 3]> = Dedup::default();
        let mut faces = String::new();
        let mut current: Option<String> = None;
        let mirrored = to_world.determinant() < 0.0;
        for p in 0..mesh.polygon_count() {
            let slot = mesh.polygon_material(p);
            let material = mesh
                .material_slots
                .get(slot as usize)
                .copied()
                .flatten()
                .and_then(|m| material_names.get(m));
            let material = match material {
                Some(m) => m,
                None => {
                    used_default = true;
                    &default_material
                }
            };
            if current.as_deref() != Some(material.as_str()) {
                writeln!(faces, "usemtl {material}").unwrap();
                current = Some(material.clone());
            }
            faces.push('f');
            let range = mesh.polygon_corners(p);
            let order: Box<dyn Iterator<Item = usize>> =
                if mirrored { Box::new(range.rev()) } else { Box::new(range) };
            for c in order {
                let v = mesh.corner_vertices[c] as usize + v_base;
                let vt = corners.uvs[c].map(|uv| uv_index.index([uv.x.to_bits(), uv.y.to_bits()]));
                let vn = corners.normals[c]
                    .map(|n| n_index.index([n.x.to_bits(), n.y.to_bits(), n.z.to_bits()]));
                match (vt, vn) {
                    (None, None) => write!(faces, " {v}").unwrap(),
                    (Some(t), None) => write!(faces, " {v}/{}", t + vt_base).unwrap(),
                    (None, Some(n)) => write!(faces, " {v}//{}", n + vn_base).unwrap(),
                    (Some(t), Some(n)) => {
                        write!(faces, " {v}/{}/{}", t + vt_base, n + vn_base).unwrap()
                    }
                }
            }
            faces.push('\n');
        }
        for [u, v] in &uv_index.values {
            writeln!(obj, "vt {} {}", num32(f32::from_bits(*u)), num32(f32::from_bits(*v)))
                .unwrap();
        }
        for [x, y, z] in &n_index.values {
            let n = Vec3::new(f32::from_bits(*x), f32::from_bits(*y), f32::from_bits(*z));
            writeln!(obj, "vn {} {} {}", num32(n.x), num32(n.y), num32(n.z)).unwrap();
        }
        obj.push_str(&faces);
        v_base += positions.len();
        vt_base += uv_index.values.len();
        vn_base += n_index.values.len();
    }

    let mtl = mtl_text(scene, &material_names, used_default.then_some(default_material.as_str()));
    Ok(ObjText { obj, mtl })
}

/// The MTL text for `scene`'s materials, named `material_names` (one per material), and the
/// grey default material named `default_material` when a polygon had no material.
fn mtl_text(scene: &Scene, material_names: &[String], default_material: Option<&str>) -> String {
    let mut mtl = String::new();
    mtl.push_str("# written by keyscene\n");
    let textures = crate::output::TexturePlan::with_pbr(scene);
    for (mi, (m, name)) in scene.materials.iter().zip(material_names).enumerate() {
        mtl.push('\n');
        writeln!(mtl, "newmtl {name}").unwrap();
        writeln!(mtl, "Ka {}", rgb(m.effective_ambient())).unwrap();
        writeln!(mtl, "Kd {}", rgb(m.effective_diffuse())).unwrap();
        writeln!(mtl, "Ks {}", rgb(m.specular)).unwrap();
        writeln!(mtl, "Ns {}", num32(m.shininess * 1000.0)).unwrap();
        writeln!(mtl, "d {}", num32(1.0 - m.transparency)).unwrap();
        mtl.push_str("illum 2\n");
        if let Some(pbr) = m.pbr.as_ref().filter(|p| p.model.is_pbr()) {
            pbr_keys(&mut mtl, scene, mi, pbr, &textures);
        }
        for (k, map) in m.maps.iter().enumerate() {
            let key = match map.slot {
                MapSlot::Diffuse => "map_Kd",
                MapSlot::Specular => "map_Ks",
                MapSlot::Opacity => "map_d",
                MapSlot::Bump => "map_bump",
                _ => continue,
            };
            if let Some(file) = textures.name(mi, k) {
                writeln!(mtl, "{key} {file}").unwrap();
            }
        }
    }
    if let Some(default_material) = default_material {
        mtl.push('\n');
        writeln!(mtl, "newmtl {default_material}").unwrap();
        mtl.push_str("Kd 0.8 0.8 0.8\nillum 1\n");
    }
    mtl
}

/// The PBR extension of MTL (the keys Blender, three.js and ufbx's `ufbxi_obj_pbr_mapping`
/// read) for a material with PBR values, after its Phong keys: `Pr` roughness, `Pm`
/// metalness, `Ke` emission colour × factor, `Ni` IOR, `Ps` sheen colour × factor, `Pc`
/// clearcoat and `Pcr` its roughness (each where stored, sheen and clearcoat where not zero),
/// and the maps `map_Pr`, `map_Pm`, `map_Ke`, `norm` (normal map), `map_Ps` beside them.
fn pbr_keys(
    mtl: &mut String,
    scene: &Scene,
    mi: usize,
    pbr: &crate::scene::Pbr,
    textures: &crate::output::TexturePlan,
) {
    use crate::scene::PbrProperty as P;
    let v = |p: P| pbr.get(p);
    if v(P::Roughness).has_value || v(P::Glossiness).has_value {
        writeln!(mtl, "Pr {}", num32(v(P::Roughness).scalar())).unwrap();
    }
    if v(P::Metalness).has_value {
        writeln!(mtl, "Pm {}", num32(v(P::Metalness).scalar())).unwrap();
    }
    if v(P::EmissionColor).has_value {
        writeln!(mtl, "Ke {}", rgb(pbr.emission())).unwrap();
    }
    if v(P::SpecularIor).has_value {
        writeln!(mtl, "Ni {}", num32(v(P::SpecularIor).scalar())).unwrap();
    }
    let sheen = v(P::SheenColor).rgb() * v(P::SheenFactor).scalar();
    if sheen != Vec3::ZERO {
        writeln!(mtl, "Ps {}", rgb(sheen)).unwrap();
    }
    if v(P::CoatFactor).scalar() != 0.0 {
        writeln!(mtl, "Pc {}", num32(v(P::CoatFactor).scalar())).unwrap();
        writeln!(mtl, "Pcr {}", num32(v(P::CoatRoughness).scalar())).unwrap();
    }
    for (p, key) in [
        (P::Roughness, "map_Pr"),
        (P::Metalness, "map_Pm"),
        (P::EmissionColor, "map_Ke"),
        (P::NormalMap, "norm"),
        (P::SheenColor, "map_Ps"),
    ] {
        if let Some(file) = textures.pbr_name(scene, mi, p) {
            writeln!(mtl, "{key} {file}").unwrap();
        }
    }
}

/// What [`save`] writes besides the `.obj` and `.mtl`.
#[derive(Debug, Clone)]
pub struct SaveOptions {
    /// Copy the texture images the `.mtl` names beside it (and write embedded ones out as
    /// files); default `true`.
    pub copy_textures: bool,
    /// The source the scene was read from, for [`crate::output`]'s collision rule (`None`:
    /// the `.obj`'s own path).
    pub source: Option<String>,
}

impl Default for SaveOptions {
    fn default() -> Self {
        SaveOptions { copy_textures: true, source: None }
    }
}

/// Writes `scene` (see [`write`](fn@write)) to `obj_path`, the materials next to it at the
/// same path with the extension `.mtl`, and (with [`SaveOptions::copy_textures`]) the
/// texture images the `.mtl` names. Each file is written atomically
/// ([`crate::write_atomically`]); images first, and when the `.obj` cannot be written the
/// `.mtl` and images just created are removed again. Returns warnings: images that were
/// named but could not be found or read, and user properties OBJ cannot hold.
///
/// Errors: [`crate::Error::OutputCollision`] when an image would replace a different file of
/// the same name (see [`crate::output`]); I/O errors.
pub fn save(
    scene: &Scene,
    pose: Option<&Pose>,
    obj_path: &Path,
    opts: &SaveOptions,
) -> Result<Vec<String>, crate::Error> {
    let mtl_path = obj_path.with_extension("mtl");
    let mtl_name = mtl_path
        .file_name()
        .and_then(|f| f.to_str())
        .ok_or_else(|| Error::Write(format!("{}: not a usable file name", obj_path.display())))?
        .to_owned();
    let text = write(scene, pose, &mtl_name)?;
    let mut warnings = Vec::new();
    let unwritten = crate::scene::user_props::not_written_warning(scene, "OBJ");
    let mut created = Vec::new();
    if opts.copy_textures {
        let dir = match obj_path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let (images, w) = crate::output::TexturePlan::with_pbr(scene).companions(dir);
        warnings = w;
        let source = opts.source.clone().unwrap_or_else(|| crate::output::source_name(obj_path));
        created = crate::output::write_companions(&images, &source)?;
    }
    let put = |path: &Path, s: &str| {
        crate::write_atomically(path, |w| {
            w.write_all(s.as_bytes())
                .map_err(|source| crate::Error::Io { path: path.into(), source })
        })
    };
    let mtl_existed = mtl_path.exists();
    let r = put(&mtl_path, &text.mtl).and_then(|()| put(obj_path, &text.obj));
    if let Err(e) = r {
        if !mtl_existed {
            created.push(mtl_path);
        }
        for p in created {
            let _ = std::fs::remove_file(p);
        }
        return Err(e);
    }
    warnings.extend(unwritten);
    Ok(warnings)
}

/// UV (set 0) and normal of every polygon corner, in corner order.
struct Corners {
    uvs: Vec<Option<Vec2>>,
    normals: Vec<Option<Vec3>>,
}

fn corner_attributes(
    mesh: &Mesh,
    world: &[DVec3],
    to_world: DMat4,
    normal_to_world: DMat4,
) -> Corners {
    let uv_set = mesh.uv_sets.first();
    let mut uvs = vec![None; mesh.corner_vertices.len()];
    for p in 0..mesh.polygon_count() {
        for c in mesh.polygon_corners(p) {
            uvs[c] = uv_set.and_then(|s| s.uvs.get(mesh.corner_vertices[c], c, p));
        }
    }
    // Smoothing-group and flat normals come from the world positions in stored winding; when
    // the placement mirrors, the written winding is reversed and the normals turn with it.
    // Stored normals are carried through the inverse transpose of `normal_to_world`.
    let sign = if mesh.normals.is_none() && to_world.determinant() < 0.0 { -1.0 } else { 1.0 };
    let normals = geometry::corner_normals(mesh, world, geometry::normal_matrix(normal_to_world))
        .into_iter()
        .map(|n| Some(n * sign))
        .collect();
    Corners { uvs, normals }
}

/// Values de-duplicated by bit pattern, indices in first-use order.
struct Dedup<K> {
    map: HashMap<K, usize>,
    values: Vec<K>,
}

impl<K> Default for Dedup<K> {
    fn default() -> Self {
        Dedup { map: HashMap::new(), values: Vec::new() }
    }
}

impl<K: std::hash::Hash + Eq + Copy> Dedup<K> {
    fn index(&mut self, k: K) -> usize {
        *self.map.entry(k).or_insert_with(|| {
            self.values.push(k);
            self.values.len() - 1
        })
    }
}

/// Hands out unique names (see the module docs for the rule).
#[derive(Default)]
struct UniqueNames {
    used: std::collections::HashSet<String>,
}

impl UniqueNames {
    fn add(&mut self, name: &str, instance: &str) -> String {
        let mut candidates = vec![name.to_owned()];
        if !instance.is_empty() {
            candidates.push(format!("{name}.{instance}"));
        }
        for c in candidates {
            if self.used.insert(c.clone()) {
                return c;
            }
        }
        (2..)
            .map(|i| format!("{name}.{i}"))
            .find(|c| self.used.insert(c.clone()))
            .expect("an unused suffix exists")
    }
}

/// `name` with every byte outside `[A-Za-z0-9_.:-]` written as `FBXASCnnn` (see the module
/// docs).
fn escape_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for &b in name.as_bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b':' | b'-') {
            out.push(b as char);
        } else {
            write!(out, "FBXASC{b:03}").unwrap();
        }
    }
    out
}

fn sanitize(name: &str) -> String {
    let s: String = name.chars().map(|c| if c.is_whitespace() { '_' } else { c }).collect();
    if s.is_empty() {
        "material".into()
    } else {
        s
    }
}

fn rgb(c: Vec3) -> String {
    format!("{} {} {}", num32(c.x), num32(c.y), num32(c.z))
}

/// Formats an `f64` compactly and exactly (see the module docs).
fn num(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    let f = v as f32;
    if f64::from(f) == v {
        num32(f)
    } else {
        format!("{v}")
    }
}

/// Formats an `f32` as the shortest decimal that reads back as it.
fn num32(v: f32) -> String {
    if v == 0.0 {
        "0".into()
    } else {
        format!("{v}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scene::{Attribute, Mapping, Material, Node, NodeKind, UvSet};

    /// One triangle (0,0,0) (1,0,0) (0,1,0) with UVs, smoothing group 1 and one material.
    fn triangle_scene() -> Scene {
        let mut s = Scene::default();
        s.materials.push(Material {
            name: "Red Paint".into(),
            ambient: Vec3::new(0.1, 0.0, 0.0),
            diffuse: Vec3::new(1.0, 0.0, 0.0),
            specular: Vec3::new(0.5, 0.5, 0.5),
            shininess: 0.25,
            transparency: 0.5,
            ..Material::default()
        });
        s.meshes.push(Mesh {
            name: "tri".into(),
            positions: vec![DVec3::ZERO, DVec3::X, DVec3::Y],
            polygon_starts: vec![0, 3],
            corner_vertices: vec![0, 1, 2],
            uv_sets: vec![UvSet {
                name: String::new(),
                uvs: Attribute {
                    values: vec![Vec2::new(0.0, 0.0), Vec2::new(1.0, 0.0), Vec2::new(0.0, 1.0)],
                    mapping: Mapping::PerVertex,
                },
            }],
            smoothing_groups: Some(vec![1]),
            material_slots: vec![Some(0)],
            ..Mesh::default()
        });
        let mut n = Node::new("Tri", NodeKind::Mesh);
        n.mesh = Some(0);
        s.nodes.push(n);
        s.attach(0, None);
        s
    }

    #[test]
    fn one_triangle_gives_the_hand_written_obj_and_mtl() {
        let s = triangle_scene();
        let t = write(&s, None, "tri.mtl").unwrap();
        assert_eq!(
            t.obj,
            "# written by keyscene\nmtllib tri.mtl\no Tri\n\
             v 0 0 0\nv 1 0 0\nv 0 1 0\n\
             vt 0 0\nvt 1 0\nvt 0 1\n\
             vn 0 0 1\n\
             usemtl Red_Paint\nf 1/1/1 2/2/1 3/3/1\n"
        );
        assert_eq!(
            t.mtl,
            "# written by keyscene\n\nnewmtl Red_Paint\nKa 0.1 0 0\nKd 1 0 0\nKs 0.5 0.5 0.5\n\
             Ns 250\nd 0.5\nillum 2\n"
        );
    }

    #[test]
    fn a_pose_moves_the_vertices_into_world_space() {
        let mut s = triangle_scene();
        s.nodes[0].transform.translation = DVec3::new(10.0, 0.0, 0.5);
        let pose = s.evaluate(None, Time::Frame(0.0));
        let t = write(&s, Some(&pose), "x.mtl").unwrap();
        assert!(t.obj.contains("v 10 0 0.5\nv 11 0 0.5\nv 10 1 0.5\n"), "{}", t.obj);
    }

    #[test]
    fn stored_world_geometry_is_written_verbatim_without_a_pose() {
        let mut s = triangle_scene();
        s.meshes[0].source_matrix = Some(DMat4::from_translation(DVec3::new(5.0, 5.0, 5.0)));
        s.nodes[0].transform.translation = DVec3::new(10.0, 0.0, 0.0);
        let t = write(&s, None, "x.mtl").unwrap();
        assert!(t.obj.contains("v 0 0 0\nv 1 0 0\nv 0 1 0\n"), "{}", t.obj);
    }

    #[test]
    fn a_mirroring_placement_reverses_the_winding() {
        let mut s = triangle_scene();
        s.nodes[0].transform.scale = DVec3::new(-1.0, 1.0, 1.0);
        let pose = s.evaluate(None, Time::Frame(0.0));
        let t = write(&s, Some(&pose), "x.mtl").unwrap();
        // Mirrored in x the stored winding faces −Z; reversed, the face and its normal face +Z.
        // UVs are numbered in the order the reversed corners use them.
        assert!(t.obj.contains("vt 0 1\nvt 1 0\nvt 0 0\nvn 0 0 1\n"), "{}", t.obj);
        assert!(t.obj.contains("f 3/1/1 2/2/1 1/3/1\n"), "{}", t.obj);
    }

    /// Two triangles folded 90° along their shared edge (0,0,0)–(1,0,0): the first in the z=0
    /// plane (normal +Z), the second (0,0,0) (0,0,1) (1,0,0) in the y=0 plane, normal
    /// (0,0,1)×(1,0,0) = +Y. `bits`: their smoothing groups.
    fn folded(bits: [u32; 2]) -> Scene {
        let mut s = triangle_scene();
        let m = &mut s.meshes[0];
        m.positions.push(DVec3::new(0.0, 0.0, 1.0));
        m.corner_vertices.extend([0, 3, 1]);
        m.polygon_starts.push(6);
        m.uv_sets.clear();
        m.smoothing_groups = Some(bits.to_vec());
        s
    }

    #[test]
    fn faces_share_a_normal_only_where_smoothing_bits_intersect() {
        let t = write(&folded([1, 1]), None, "x.mtl").unwrap();
        let h = std::f32::consts::FRAC_1_SQRT_2;
        // Shared vertices 0 and 1 average +Z and +Y; vertex 2 (+Z only) and 3 (+Y only) don't.
        // Normals are numbered in first use: the average, +Z, +Y.
        assert!(t.obj.contains(&format!("vn 0 {h} {h}\nvn 0 0 1\nvn 0 1 0\n")), "{}", t.obj);
        assert!(t.obj.contains("f 1//1 2//1 3//2\nf 1//1 4//3 2//1\n"), "{}", t.obj);

        let t = write(&folded([1, 2]), None, "x.mtl").unwrap();
        assert!(t.obj.contains("vn 0 0 1\nvn 0 1 0\n"), "{}", t.obj);
        assert!(t.obj.contains("f 1//1 2//1 3//1\nf 1//2 4//2 2//2\n"), "{}", t.obj);

        let t = write(&folded([0, 0]), None, "x.mtl").unwrap();
        assert!(t.obj.contains("f 1//1 2//1 3//1\nf 1//2 4//2 2//2\n"), "{}", t.obj);
    }

    #[test]
    fn duplicate_node_names_take_the_instance_name_then_a_number() {
        let mut s = triangle_scene();
        for inst in ["left", ""] {
            let mut n = Node::new("Tri", NodeKind::Mesh);
            n.instance = inst.into();
            n.mesh = Some(0);
            s.nodes.push(n);
            let id = s.nodes.len() - 1;
            s.attach(id, None);
        }
        let t = write(&s, None, "x.mtl").unwrap();
        assert!(t.obj.contains("o Tri\n") && t.obj.contains("o Tri.left\n"));
        assert!(t.obj.contains("o Tri.2\n"));
        // The second object's vertices follow the first's: its face uses 4 5 6.
        assert!(t.obj.contains("f 4/4/2 5/5/2 6/6/2\n"), "{}", t.obj);
    }

    #[test]
    fn object_names_escape_spaces_and_symbols_as_fbxasc() {
        let mut s = triangle_scene();
        s.nodes[0].name = "Tri 1(a)".into();
        let t = write(&s, None, "x.mtl").unwrap();
        assert!(t.obj.contains("o TriFBXASC0321FBXASC040aFBXASC041\n"), "{}", t.obj);
    }

    #[test]
    fn normals_ignore_the_scale_of_the_geometric_transform() {
        let mut s = triangle_scene();
        s.meshes[0].normals = Some(Attribute {
            values: vec![Vec3::new(1.0, 0.0, 1.0).normalize()],
            mapping: Mapping::AllSame,
        });
        s.nodes[0].set_geometry_transform(DMat4::from_scale(DVec3::new(1.0, 1.0, 4.0)));
        let pose = s.evaluate(None, Time::Frame(0.0));
        let t = write(&s, Some(&pose), "x.mtl").unwrap();
        let h = std::f32::consts::FRAC_1_SQRT_2;
        assert!(t.obj.contains(&format!("vn {h} 0 {h}\n")), "{}", t.obj);
    }

    #[test]
    fn faces_without_material_use_a_default_material() {
        let mut s = triangle_scene();
        s.meshes[0].material_slots.clear();
        let t = write(&s, None, "x.mtl").unwrap();
        assert!(t.obj.contains("usemtl default\n"));
        assert!(t.mtl.contains("newmtl default\nKd 0.8 0.8 0.8\n"));
    }

    #[test]
    fn numbers_are_short_and_exact() {
        assert_eq!(num(0.1f32 as f64), "0.1");
        assert_eq!(num(0.1), "0.1");
        assert_eq!(num(-0.0), "0");
        assert_eq!(num(1.0 / 3.0), "0.3333333333333333");
        assert_eq!(num(1e-7f32 as f64), "0.0000001");
    }

    #[test]
    fn save_writes_obj_and_mtl_side_by_side() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tri.obj");
        save(&triangle_scene(), None, &path, &SaveOptions::default()).unwrap();
        let obj = std::fs::read_to_string(&path).unwrap();
        assert!(obj.contains("mtllib tri.mtl\n"));
        assert!(std::fs::read_to_string(dir.path().join("tri.mtl")).unwrap().contains("newmtl"));
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
    }
}

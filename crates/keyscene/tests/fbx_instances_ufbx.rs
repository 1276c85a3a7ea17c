//! Instanced FBX geometry against the `ufbx` crate (issue 12 §3, "Instanced geometry"): one
//! `Geometry` connected to several `Model`s is one mesh shown by several nodes.
//!
//! The files: every corpus FBX file ufbx loads (not a negative case) in which ufbx finds a mesh
//! with more than one instance (`ufbx_mesh::instances`, the models connected to one
//! `Geometry`) — found by that scan, not listed — and `tests/data/
//! synthetic_skinned_instances_7400_ascii.fbx` (hand-written: a skinned geometry shown by two
//! models placed differently, which the corpus lacks). For each such mesh:
//!
//! - **Sharing**: keyscene's instance nodes (paired with ufbx's by name) show one scene mesh
//!   per distinct list of instance materials (ufbx `ufbx_node::materials`): instances with the
//!   same materials share one [`Node::mesh`](keyscene::scene::Node::mesh), ones with other
//!   materials have their own.
//! - **World vertices**: at the stored pose and at the middle of every animation stack, every
//!   instance's `Pose::world_positions` equals ufbx's — `geometry_to_world · p`, or for a skinned
//!   mesh `ufbx_get_skin_vertex_matrix(vertex, geometry_to_world) · p` — within 1e-4 × scene
//!   size (meshes with blend shapes are compared on their counts only).
//! - **glTF**: the GLB keyscene writes gives the instance nodes that share a scene mesh (and
//!   its geometry transform) one glTF mesh.
//!
//! `tests/data/synthetic_skinned_instances_one_bound_7400_ascii.fbx` is the same geometry
//! with only one instance in its `BindPose` (as Maya writes one per skin cluster), bound away
//! from the origin, with an animated bone and animated instance nodes.
//!
//! The synthetic files also check `transform_skin` (`PoseOptions::skin_follows_node`): each
//! instance's skinned positions are mapped once more by its own node's `geometry_to_world ·
//! bind⁻¹` (the ufbx reference definition, MANIFEST.md), with ufbx's bind matrices (the
//! bind-pose entry ufbx gives the node, else its skin cluster's `bind_to_world ·
//! mesh_node_to_bone`), at the stored pose and, for the animated file, at several times — the
//! instance at its bind matrix stays, the moved one moves — and each instance's deformed
//! normals (`Pose::world_corner_normals`, `render::world_corner_normals`) equal ufbx's skinning
//! matrices' normal matrices applied to its stored normals.

mod common;

use common::ufbx_corpus::to_dmat4;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use glam::{DMat4, DVec3};
use keyscene::anim::{PoseOptions, Time};
use keyscene::scene::Scene;
use libtest_mimic::{Failed, Trial};

fn synthetic() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/synthetic_skinned_instances_7400_ascii.fbx")
}

/// The same skinned geometry bound with one instance in the bind pose, animated.
fn one_bound() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/synthetic_skinned_instances_one_bound_7400_ascii.fbx")
}

/// keyscene's node of each name that names exactly one node.
fn unique_names(scene: &Scene) -> HashMap<&str, usize> {
    let mut count: HashMap<&str, usize> = HashMap::new();
    for n in &scene.nodes {
        *count.entry(n.name.as_str()).or_default() += 1;
    }
    let mut out = HashMap::new();
    for (i, n) in scene.nodes.iter().enumerate() {
        if count[n.name.as_str()] == 1 {
            out.insert(n.name.as_str(), i);
        }
    }
    out
}

/// ufbx's world position of vertex `v` of `mesh` shown by `node` (skinned by its first skin).
fn ufbx_world(mesh: &ufbx::Mesh, node: &ufbx::Node, v: usize) -> DVec3 {
    let p = mesh.vertices[v];
    let m = match mesh.skin_deformers.first() {
        Some(skin) => ufbx::get_skin_vertex_matrix(skin, v, &node.geometry_to_world),
        None => node.geometry_to_world,
    };
    to_dmat4(&m).transform_point3(DVec3::new(p.x, p.y, p.z))
}

/// An instanced ufbx mesh with its instance nodes, each with keyscene's node of that name.
type Instanced<'a> = (&'a ufbx::Mesh, Vec<(&'a ufbx::Node, usize)>);

/// The instanced meshes of `theirs` with their instance nodes, paired with keyscene's.
fn instanced<'a>(
    theirs: &'a ufbx::Scene,
    names: &HashMap<&str, usize>,
) -> Result<Vec<Instanced<'a>>, String> {
    let mut out = Vec::new();
    for mesh in theirs.meshes.iter().filter(|m| m.element.instances.len() > 1) {
        let mut nodes = Vec::new();
        for node in mesh.element.instances.iter() {
            let name: &str = &node.element.name;
            let Some(&i) = names.get(name) else {
                return Err(format!("instance {name:?}: no keyscene node of that (unique) name"));
            };
            nodes.push((&**node, i));
        }
        out.push((&**mesh, nodes));
    }
    Ok(out)
}

/// Instance nodes with the same ufbx materials share one keyscene mesh, others do not.
fn check_sharing(scene: &Scene, nodes: &[(&ufbx::Node, usize)]) -> Result<(), String> {
    let mut by_materials: HashMap<Vec<String>, usize> = HashMap::new();
    let mut meshes: HashMap<usize, Vec<String>> = HashMap::new();
    for &(node, i) in nodes {
        let materials: Vec<String> =
            node.materials.iter().map(|m| m.element.name.to_string()).collect();
        let name = &scene.nodes[i].name;
        let Some(m) = scene.nodes[i].mesh else {
            return Err(format!("instance {name:?}: keyscene shows no mesh"));
        };
        if let Some(&first) = by_materials.get(&materials) {
            if first != m {
                return Err(format!(
                    "instance {name:?}: mesh {m}, but an instance with the same materials \
                     {materials:?} shows mesh {first}"
                ));
            }
        }
        if let Some(other) = meshes.get(&m).filter(|o| **o != materials) {
            return Err(format!(
                "instance {name:?} (materials {materials:?}) shares mesh {m} with an instance \
                 of materials {other:?}"
            ));
        }
        by_materials.insert(materials.clone(), m);
        meshes.insert(m, materials);
    }
    Ok(())
}

/// Every instance's world vertices at `pose` against ufbx's scene `theirs` at the same time.
fn check_positions(
    scene: &Scene,
    pose: &keyscene::anim::Pose,
    theirs: &ufbx::Scene,
    what: &str,
) -> Result<usize, String> {
    let names = unique_names(scene);
    let size = common::ufbx_corpus::scene_size(pose.world.iter());
    let mut compared = 0;
    for (mesh, nodes) in instanced(theirs, &names)? {
        if !mesh.blend_deformers.is_empty() {
            continue;
        }
        for (node, i) in nodes {
            let got = pose.world_positions(scene, i);
            if got.len() != mesh.num_vertices {
                return Err(format!(
                    "{what}: instance {:?}: {} vertices in keyscene, {} in ufbx",
                    scene.nodes[i].name,
                    got.len(),
                    mesh.num_vertices
                ));
            }
            for (v, g) in got.iter().enumerate() {
                let want = ufbx_world(mesh, node, v);
                let err = (*g - want).abs().max_element();
                if err.is_nan() || err > 1e-4 * size {
                    return Err(format!(
                        "{what}: instance {:?} vertex {v}: keyscene {g}, ufbx {want}",
                        scene.nodes[i].name
                    ));
                }
            }
            compared += 1;
        }
    }
    Ok(compared)
}

/// The GLB's JSON chunk.
fn glb_json(glb: &[u8]) -> Result<serde_json::Value, String> {
    let len = glb.get(12..16).ok_or("GLB shorter than its header")?;
    let len = u32::from_le_bytes(len.try_into().unwrap()) as usize;
    let text = glb.get(20..20 + len).ok_or("GLB JSON chunk cut short")?;
    serde_json::from_slice(text).map_err(|e| e.to_string())
}

/// Instance nodes sharing a scene mesh and geometry transform share one glTF mesh.
fn check_gltf(scene: &Scene, nodes: &[(&ufbx::Node, usize)]) -> Result<(), String> {
    let file =
        keyscene::formats::gltf::write(scene, &Default::default()).map_err(|e| e.to_string())?;
    let json = glb_json(&file.main)?;
    let gnodes = json["nodes"].as_array().ok_or("no nodes")?;
    let gltf_mesh = |i: usize| {
        let name = &scene.nodes[i].name;
        gnodes.iter().find(|n| n["name"] == name.as_str()).and_then(|n| n["mesh"].as_u64())
    };
    let mut seen: HashMap<(usize, [u64; 16]), u64> = HashMap::new();
    for &(_, i) in nodes {
        let node = &scene.nodes[i];
        let Some(m) = node.mesh else { continue };
        let Some(g) = gltf_mesh(i) else {
            return Err(format!("glTF node {:?} has no mesh", node.name));
        };
        let key = (m, node.geometry_transform().to_cols_array().map(f64::to_bits));
        if let Some(&first) = seen.get(&key) {
            if first != g {
                return Err(format!(
                    "glTF: instance {:?} has mesh {g}, another instance of scene mesh {m} has {first}",
                    node.name
                ));
            }
        }
        seen.insert(key, g);
    }
    Ok(())
}

/// The corpus/synthetic check of one file.
fn check(path: &Path) -> Result<(), Failed> {
    let (scene, theirs) = common::ufbx_corpus::load_both(path)?;
    let names = unique_names(&scene);
    let groups = instanced(&theirs, &names)?;
    if groups.is_empty() {
        return Err("ufbx finds no instanced mesh".into());
    }
    for (_, nodes) in &groups {
        check_sharing(&scene, nodes)?;
        check_gltf(&scene, nodes)?;
    }
    let pose = scene.evaluate(None, Time::Frame(0.0));
    let mut compared = check_positions(&scene, &pose, &theirs, "stored pose")?;
    for (k, stack) in theirs.anim_stacks.iter().enumerate() {
        let t = 0.5 * (stack.time_begin + stack.time_end);
        let name: &str = &stack.element.name;
        let ours = common::ufbx_corpus::matching_animation(&scene, k, name).unwrap_or(k);
        let s = ufbx::evaluate_scene(&theirs, &stack.anim, t, ufbx::EvaluateOpts::default())
            .map_err(|e| format!("ufbx evaluate: {:?}", e.description))?;
        let pose = scene.evaluate(Some(ours), Time::Seconds(t));
        compared += check_positions(&scene, &pose, &s, &format!("stack {name:?} at {t} s"))?;
    }
    if compared == 0 && groups.iter().all(|(m, _)| m.blend_deformers.is_empty()) {
        return Err("no instance compared".into());
    }
    Ok(())
}

/// ufbx's bind matrix of skinned mesh node `node`: its entry in the bind pose ufbx gives it
/// (`ufbx_node::bind_pose`, the first bind pose listing it), else — an instance no bind pose
/// lists — its skin's first cluster's `bind_to_world · mesh_node_to_bone` (the mesh node's
/// world matrix at bind as ufbx resolves the cluster's `TransformLink` and `Transform`).
fn ufbx_bind(mesh: &ufbx::Mesh, node: &ufbx::Node) -> Option<DMat4> {
    let listed = node.bind_pose.as_ref().and_then(|p| ufbx::get_bone_pose(p, node));
    if let Some(b) = listed {
        return Some(to_dmat4(&b.bone_to_world));
    }
    let cluster = mesh.skin_deformers.first()?.clusters.first()?;
    Some(to_dmat4(&cluster.bind_to_world) * to_dmat4(&cluster.mesh_node_to_bone))
}

/// `transform_skin` on a synthetic file at `times` (seconds; `None`: the stored pose): every
/// instance's positions equal ufbx's skinned positions mapped once more by its node's
/// `geometry_to_world · bind⁻¹` ([`ufbx_bind`]), with no [`keyscene::anim::PoseWarning`], and
/// its deformed normals (with and without `transform_skin`) equal ufbx's. Returns, per time,
/// which instances moved more than 1 unit from their plain skinned positions.
fn check_transform_skin(path: &Path, times: &[Option<f64>]) -> Result<Vec<Vec<bool>>, Failed> {
    let (scene, loaded) = common::ufbx_corpus::load_both(path)?;
    let names = unique_names(&scene);
    let mut moved_at = Vec::new();
    for &time in times {
        let evaluated = match (time, loaded.anim_stacks.first()) {
            (Some(t), Some(stack)) => Some(
                ufbx::evaluate_scene(&loaded, &stack.anim, t, ufbx::EvaluateOpts::default())
                    .map_err(|e| format!("ufbx evaluate: {:?}", e.description))?,
            ),
            _ => None,
        };
        let theirs: &ufbx::Scene = evaluated.as_deref().unwrap_or(&loaded);
        let groups = instanced(theirs, &names)?;
        let [(mesh, nodes)] = groups.as_slice() else {
            return Err(format!("{} instanced meshes, the file has one", groups.len()).into());
        };
        let at = |o: PoseOptions| match time {
            Some(t) => o.at(Time::Seconds(t)),
            None => o,
        };
        let (followed, warnings) =
            scene.pose(&at(PoseOptions::default().skin_follows_node(true)))?;
        if !warnings.is_empty() {
            return Err(format!("at {time:?}: transform_skin warned {warnings:?}").into());
        }
        let (plain, _) = scene.pose(&at(PoseOptions::default()))?;
        let mut moved = Vec::new();
        for &(node, i) in nodes {
            let name = &scene.nodes[i].name;
            let b =
                ufbx_bind(mesh, node).ok_or_else(|| format!("ufbx: no bind matrix for {name}"))?;
            let follow = to_dmat4(&node.geometry_to_world) * b.inverse();
            let got = followed.world_positions(&scene, i);
            let mut far = 0.0f64;
            for (v, g) in got.iter().enumerate() {
                let skinned = ufbx_world(mesh, node, v);
                let want = follow.transform_point3(skinned);
                let err = (*g - want).abs().max_element();
                if err.is_nan() || err > 1e-9 {
                    return Err(format!(
                        "transform_skin at {time:?}: {name} vertex {v}: keyscene {g}, want {want}"
                    )
                    .into());
                }
                far = far.max((*g - skinned).length());
            }
            moved.push(far > 1.0);
            check_normals(&scene, &followed, mesh, node, i, follow)?;
            check_normals(&scene, &plain, mesh, node, i, DMat4::IDENTITY)?;
        }
        moved_at.push(moved);
    }
    Ok(moved_at)
}

/// `transform_skin` and deformed normals on the synthetic skinned instances.
fn check_synthetic_transform_skin() -> Result<(), Failed> {
    let moved = check_transform_skin(&synthetic(), &[None])?;
    // Hand facts of the file: InstanceA sits at its bind matrix, InstanceB moved 5 units.
    if moved != [[false, true]] {
        return Err(
            format!("instances moved by transform_skin: {moved:?}, want [[false, true]]").into()
        );
    }
    Ok(())
}

/// `transform_skin` when the bind pose lists one instance only (issue 33 §8), at the stored
/// pose and at 0, ¼, ½, ¾ and 1 s of the file's animation.
fn check_one_bound_transform_skin() -> Result<(), Failed> {
    let times = [None, Some(0.0), Some(0.25), Some(0.5), Some(0.75), Some(1.0)];
    let moved = check_transform_skin(&one_bound(), &times)?;
    // Hand facts of the file: InstanceA is at its bind matrix at rest and at 0 s, then moves
    // 3 units along X by 1 s (0.75 at ¼ s); InstanceB stands 5 units away, turned, throughout.
    let want =
        [[false, true], [false, true], [false, true], [true, true], [true, true], [true, true]];
    if moved != want {
        return Err(format!("instances moved by transform_skin: {moved:?}, want {want:?}").into());
    }
    Ok(())
}

/// Both deformed-normal calls for instance node `i` at `pose` against ufbx's skinning
/// matrices (mapped once more by `follow`) applied to the stored normals.
fn check_normals(
    scene: &Scene,
    pose: &keyscene::anim::Pose,
    mesh: &ufbx::Mesh,
    node: &ufbx::Node,
    i: usize,
    follow: DMat4,
) -> Result<(), String> {
    let name = &scene.nodes[i].name;
    let ours = pose.world_corner_normals(scene, i).ok_or("keyscene: no normals")?;
    let m = pose.mesh[i].map(|m| &scene.meshes[m]).ok_or("keyscene: no mesh")?;
    let positions = pose.world_positions(scene, i);
    let shaded = keyscene::render::world_corner_normals(scene, m, &positions, pose, i);
    let skin = mesh.skin_deformers.first().ok_or("ufbx: no skin")?;
    for c in 0..mesh.num_indices {
        let v = mesh.vertex_indices[c] as usize;
        let n = mesh.vertex_normal.values[mesh.vertex_normal.indices[c] as usize];
        let sm = follow * to_dmat4(&ufbx::get_skin_vertex_matrix(skin, v, &node.geometry_to_world));
        let nm = glam::DMat3::from_mat4(sm).inverse().transpose();
        let want = (nm * DVec3::new(n.x, n.y, n.z)).normalize();
        let got = ours.get(c).copied().unwrap_or_default();
        let drawn = shaded.get(c).map(|n| n.as_dvec3()).unwrap_or_default();
        for (what, g, tol) in [("Pose::world_corner_normals", got, 1e-6), ("render", drawn, 1e-5)] {
            let err = (g - want).abs().max_element();
            if err.is_nan() || err > tol {
                return Err(format!("{what}: {name} corner {c}: keyscene {g}, ufbx {want}"));
            }
        }
    }
    Ok(())
}

/// The one-bound file without its bind pose and with `InstanceA` moved from its bind
/// placement, written as FBX and read back by keyscene: `transform_skin` places both
/// instances where it places them in the source (within 1e-9 × scene size), so the writer's
/// `BindPose` and `TransformLink` carry the skin's own bind placement (`Skin::mesh_bind`)
/// rather than a rest world.
fn check_one_bound_written() -> Result<(), Failed> {
    let (mut src, _) = keyscene::load(&one_bound()).map_err(|e| e.to_string())?;
    src.bind_poses.clear();
    let a = src.nodes.iter().position(|n| n.name == "InstanceA").ok_or("no InstanceA")?;
    src.nodes[a].transform.translation += DVec3::new(0.0, 2.0, 0.0);
    let (bytes, _) = keyscene::formats::fbx::export::write(&src, &Default::default())
        .map_err(|e| e.to_string())?;
    let (back, _) =
        keyscene::load_bytes(&bytes, Some(Path::new("written.fbx")), &Default::default())
            .map_err(|e| e.to_string())?;
    let opts = PoseOptions::default().skin_follows_node(true);
    let ((want, _), (got, _)) = (src.pose(&opts)?, back.pose(&opts)?);
    let size = common::ufbx_corpus::scene_size(want.world.iter());
    for (i, n) in src.nodes.iter().enumerate().filter(|(_, n)| n.mesh.is_some()) {
        let j = back.nodes.iter().position(|b| b.name == n.name).ok_or("node not read back")?;
        let (w, g) = (want.world_positions(&src, i), got.world_positions(&back, j));
        if w.len() != g.len() {
            return Err(
                format!("{}: {} vertices back, {} written", n.name, g.len(), w.len()).into()
            );
        }
        for (v, (p, q)) in w.iter().zip(&g).enumerate() {
            let err = (*p - *q).abs().max_element();
            if err.is_nan() || err > 1e-9 * size {
                return Err(format!("{} vertex {v}: source {p}, written {q}", n.name).into());
            }
        }
    }
    Ok(())
}

fn main() {
    let corpus = common::corpus();
    let mut trials = vec![
        Trial::test(
            "instances::synthetic_skinned_instances_7400_ascii.fbx",
            || check(&synthetic()),
        ),
        Trial::test("transform_skin::synthetic_skinned_instances_7400_ascii.fbx", || {
            check_synthetic_transform_skin()
        }),
        Trial::test("instances::synthetic_skinned_instances_one_bound_7400_ascii.fbx", || {
            check(&one_bound())
        }),
        Trial::test(
            "transform_skin::synthetic_skinned_instances_one_bound_7400_ascii.fbx",
            check_one_bound_transform_skin,
        ),
        Trial::test(
            "transform_skin_written::synthetic_skinned_instances_one_bound_7400_ascii.fbx",
            check_one_bound_written,
        ),
    ];
    let mut found = 0;
    for f in common::ufbx_corpus::fbx_files(&corpus) {
        if !f.ufbx_loads || common::is_negative_fbx(&f.rel) {
            continue;
        }
        let Ok(bytes) = std::fs::read(&f.path) else { continue };
        let Ok(s) = ufbx::load_memory(&bytes, ufbx::LoadOpts::default()) else { continue };
        if !s.meshes.iter().any(|m| m.element.instances.len() > 1) {
            continue;
        }
        found += 1;
        let path = f.path.clone();
        trials.push(common::corpus_trial(format!("instances::{}", f.rel), &corpus, move |_| {
            check(&path)
        }));
    }
    if found == 0 {
        trials.push(common::corpus_trial("instances::corpus", &corpus, |_| {
            Err("no corpus file with instanced geometry".into())
        }));
    }
    common::run(trials);
}

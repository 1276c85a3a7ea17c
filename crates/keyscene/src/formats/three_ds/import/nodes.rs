//! [`Node`](crate::scene::Node)s: one per keyframer node (kind, instance name, hidden flag,
//! pivot and `MESH_MATRIX` geometry transform with lib3ds' mirror correction, parents by
//! `NODE_ID` or file order, cycles cut), camera and light targets linked by name; or, in a file
//! without keyframer nodes, one identity node per named object.

use std::collections::HashMap;

use glam::{DMat4, DVec3};

use super::super::chunks::{id, CameraChunk, File3ds, LightChunk, NodeChunk, ObjectKind};
use super::{node_place, v3, Builder, NODE_HIDDEN, NO_PARENT};
use crate::scene::{Node, NodeKind, ThreeDsNodeSource};

impl<'f> Builder<'_, 'f> {
    /// One node per named object, at identity (no keyframer nodes in the file).
    pub(super) fn object_nodes(&mut self, file: &File3ds<'_>) {
        // Meshes were made in object order: the k-th mesh object is mesh k, whatever its name.
        let mut next_mesh = 0;
        for o in &file.objects {
            match &o.kind {
                ObjectKind::Mesh(_) => {
                    let m = next_mesh;
                    next_mesh += 1;
                    let name = self.scene.meshes.get(m).map_or(o.name.clone(), |x| x.name.clone());
                    let mut node = Node::new(name, NodeKind::Mesh);
                    node.mesh = Some(m).filter(|&m| m < self.scene.meshes.len());
                    if let Some(m) = node.mesh.and_then(|m| self.scene.meshes[m].source_matrix) {
                        if m.is_finite() && m.determinant().abs() > 1e-12 {
                            node.set_geometry_transform(mirror_fix(&m));
                        }
                    }
                    node.hidden = o.hidden;
                    self.push_root(node);
                }
                ObjectKind::Camera(c) => {
                    let cam = self.camera_data(&o.name, Some(c));
                    let mut node = Node::new(o.name.clone(), NodeKind::Camera(cam));
                    node.transform.translation = v3(c.position);
                    let at = self.push_root(node);
                    let mut t =
                        Node::new(o.name.clone(), NodeKind::CameraTarget { camera: Some(at) });
                    t.transform.translation = v3(c.target);
                    let target = self.push_root(t);
                    self.scene.cameras[cam].target = Some(target);
                }
                ObjectKind::Light(l) => {
                    let light = self.light_data(&o.name, Some(l));
                    let mut node = Node::new(o.name.clone(), NodeKind::Light(light));
                    node.transform.translation = v3(l.position);
                    let at = self.push_root(node);
                    if let Some(s) = &l.spot {
                        let mut t =
                            Node::new(o.name.clone(), NodeKind::LightTarget { light: Some(at) });
                        t.transform.translation = v3(s.target);
                        let target = self.push_root(t);
                        self.scene.lights[light].target = Some(target);
                    }
                }
                ObjectKind::Other => {}
            }
        }
    }

    fn push_root(&mut self, node: Node) -> usize {
        let i = self.scene.nodes.len();
        self.scene.nodes.push(node);
        self.scene.attach(i, None);
        i
    }

    pub(super) fn keyframer_nodes(&mut self, file: &File3ds<'_>, nodes: &[NodeChunk<'_>]) {
        let cameras: HashMap<&str, &CameraChunk> = file
            .objects
            .iter()
            .filter_map(|o| match &o.kind {
                ObjectKind::Camera(c) => Some((o.name.as_str(), c)),
                _ => None,
            })
            .collect();
        let lights: HashMap<&str, &LightChunk> = file
            .objects
            .iter()
            .filter_map(|o| match &o.kind {
                ObjectKind::Light(l) => Some((o.name.as_str(), l)),
                _ => None,
            })
            .collect();
        self.scene.nodes.reserve(nodes.len());
        for (i, nc) in nodes.iter().enumerate() {
            let kind = match nc.tag {
                id::AMBIENT_NODE_TAG => NodeKind::Ambient,
                id::CAMERA_NODE_TAG => {
                    let c = cameras.get(nc.name.as_str()).copied();
                    if c.is_none() {
                        self.warn(
                            Some(nc.offset),
                            node_place(i, nc),
                            "no camera of this name in MDATA; default camera used",
                        );
                    }
                    NodeKind::Camera(self.camera_data(&nc.name, c))
                }
                id::TARGET_NODE_TAG => NodeKind::CameraTarget { camera: None },
                id::LIGHT_NODE_TAG | id::SPOTLIGHT_NODE_TAG => {
                    let l = lights.get(nc.name.as_str()).copied();
                    if l.is_none() {
                        self.warn(
                            Some(nc.offset),
                            node_place(i, nc),
                            "no light of this name in MDATA; default light used",
                        );
                    }
                    NodeKind::Light(self.light_data(&nc.name, l))
                }
                id::L_TARGET_NODE_TAG => NodeKind::LightTarget { light: None },
                _ => {
                    if self.first_mesh(&nc.name).is_some() {
                        NodeKind::Mesh
                    } else {
                        NodeKind::Null
                    }
                }
            };
            let mut node = Node::new(nc.name.clone(), kind);
            node.instance = nc.instance.clone().unwrap_or_default();
            node.hidden = nc.flags[0] & NODE_HIDDEN != 0;
            node.source.id = Some(i64::from(nc.id.unwrap_or(i as u16)));
            let pivot = nc.pivot.map(v3).unwrap_or(DVec3::ZERO);
            node.source.three_ds = Some(Box::new(ThreeDsNodeSource {
                flags: nc.flags,
                pivot,
                bound_box: nc.bound_box.map(|(a, b)| (v3(a), v3(b))),
                morph_smooth: nc.morph_smooth,
            }));
            if node.kind == NodeKind::Mesh {
                node.mesh = self.bind_mesh(&nc.name);
                // A repeated object's node carries its object's unique name.
                if let Some(m) = node.mesh {
                    if self.scene.meshes[m].name != nc.name {
                        node.name = self.scene.meshes[m].name.clone();
                    }
                }
                let matrix = node.mesh.and_then(|m| self.scene.meshes[m].source_matrix);
                let inv = match matrix {
                    Some(m) if m.determinant().abs() > 1e-12 && m.is_finite() => {
                        m.inverse() * mirror_fix(&m)
                    }
                    Some(_) => {
                        self.warn(
                            Some(nc.offset),
                            node_place(i, nc),
                            "MESH_MATRIX is singular; identity used",
                        );
                        DMat4::IDENTITY
                    }
                    None => DMat4::IDENTITY,
                };
                node.set_geometry_transform(DMat4::from_translation(-pivot) * inv);
            }
            self.scene.nodes.push(node);
        }
        let parents = self.parents(nodes);
        for (i, p) in parents.into_iter().enumerate() {
            self.scene.attach(i, p);
        }
        self.link_targets();
    }

    /// Parent index of every keyframer node: by `NODE_ID` (or file-order number when a node
    /// has none, as lib3ds numbers them); missing parents, self-parents and cycles → root.
    fn parents(&mut self, nodes: &[NodeChunk<'_>]) -> Vec<Option<usize>> {
        let mut by_id: HashMap<u16, usize> = HashMap::new();
        for (i, nc) in nodes.iter().enumerate() {
            by_id.entry(nc.id.unwrap_or(i as u16)).or_insert(i);
        }
        let mut parents: Vec<Option<usize>> = Vec::with_capacity(nodes.len());
        for (i, nc) in nodes.iter().enumerate() {
            let place = || format!("{} › NODE_HDR", node_place(i, nc));
            let p = if nc.parent == NO_PARENT {
                None
            } else {
                match by_id.get(&nc.parent) {
                    Some(&p) if p == i => {
                        self.warn(
                            Some(nc.offset),
                            place(),
                            "the node names itself as parent; made a root",
                        );
                        None
                    }
                    Some(&p) => Some(p),
                    None => {
                        self.warn(
                            Some(nc.offset),
                            place(),
                            format!("parent {} names no node; made a root", nc.parent),
                        );
                        None
                    }
                }
            };
            parents.push(p);
        }
        // Break cycles in O(n): walk up from every node not yet known to reach a root, marking
        // the path; meeting the current path again is a cycle, cut at the node that closes it.
        const UNSEEN: u8 = 0;
        const ON_PATH: u8 = 1;
        const DONE: u8 = 2;
        let mut state = vec![UNSEEN; parents.len()];
        let mut path = Vec::new();
        for start in 0..parents.len() {
            path.clear();
            let mut at = start;
            while state[at] == UNSEEN {
                state[at] = ON_PATH;
                path.push(at);
                match parents[at] {
                    Some(p) if state[p] == ON_PATH => {
                        let nc = &nodes[at];
                        self.warn(
                            Some(nc.offset),
                            node_place(at, nc),
                            "the node's parent chain loops back to it; made a root",
                        );
                        parents[at] = None;
                        break;
                    }
                    Some(p) => at = p,
                    None => break,
                }
            }
            for &n in &path {
                state[n] = DONE;
            }
        }
        parents
    }

    /// Links camera/spot targets to their camera/light by name (a target node carries its
    /// camera's or light's name).
    fn link_targets(&mut self) {
        let mut cameras: HashMap<String, usize> = HashMap::new();
        let mut lights: HashMap<String, usize> = HashMap::new();
        for (i, node) in self.scene.nodes.iter().enumerate() {
            match node.kind {
                NodeKind::Camera(_) => cameras.entry(node.name.clone()).or_insert(i),
                NodeKind::Light(_) => lights.entry(node.name.clone()).or_insert(i),
                _ => continue,
            };
        }
        for t in 0..self.scene.nodes.len() {
            let name = &self.scene.nodes[t].name;
            match self.scene.nodes[t].kind {
                NodeKind::CameraTarget { .. } => {
                    let cam = cameras.get(name).copied();
                    self.scene.nodes[t].kind = NodeKind::CameraTarget { camera: cam };
                    if let Some(NodeKind::Camera(ci)) = cam.map(|c| &self.scene.nodes[c].kind) {
                        self.scene.cameras[*ci].target = Some(t);
                    }
                }
                NodeKind::LightTarget { .. } => {
                    let light = lights.get(name).copied();
                    self.scene.nodes[t].kind = NodeKind::LightTarget { light };
                    if let Some(NodeKind::Light(li)) = light.map(|l| &self.scene.nodes[l].kind) {
                        self.scene.lights[*li].target = Some(t);
                    }
                }
                _ => {}
            }
        }
    }
}

/// The mirror correction lib3ds applies to the points of a mesh whose `MESH_MATRIX` has a
/// negative determinant (a mirrored object, `mesh.c`): `M · S(−1, 1, 1) · M⁻¹`, identity
/// otherwise. 3D Studio stores a mirrored object's points mirrored back through its frame.
fn mirror_fix(m: &DMat4) -> DMat4 {
    if m.determinant() < 0.0 {
        *m * DMat4::from_scale(DVec3::new(-1.0, 1.0, 1.0)) * m.inverse()
    } else {
        DMat4::IDENTITY
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{chunk, file, mesh_object, node, pos_track, read, IDENTITY};
    use super::*;
    use crate::anim::Time;

    #[test]
    fn world_vertex_is_node_times_minus_pivot_times_inverse_mesh_matrix() {
        // MESH_MATRIX: the object's frame at (10, 0, 0); stored point (11, 0, 0) is (1, 0, 0) in
        // it. Pivot (1, 0, 0) moves it to the origin; the node at (0, 5, 0) puts it at (0, 5, 0).
        let m = [1., 0., 0., 0., 1., 0., 0., 0., 1., 10., 0., 0.];
        let obj = mesh_object("Box", &[[11., 0., 0.], [10., 1., 0.], [10., 0., 1.]], m);
        let n = node(None, "Box", 0xFFFF, Some([1., 0., 0.]), &[pos_track(&[(0, [0., 5., 0.])])]);
        let (scene, warnings) = read(&file(&[obj], &[n]));
        assert!(warnings.is_empty(), "{warnings:?}");
        let pose = scene.evaluate(Some(0), Time::Frame(0.0));
        let w = pose.world_positions(&scene, 0);
        assert!((w[0] - DVec3::new(0., 5., 0.)).length() < 1e-6, "{w:?}");
    }

    #[test]
    fn mirrored_mesh_matrix_gets_lib3ds_x_flip() {
        // det(MESH_MATRIX) = −1: lib3ds replaces points by M·S(−1,1,1)·M⁻¹·p, so with an identity
        // node the world point is M⁻¹·M·S·M⁻¹·p = S·M⁻¹·p = (1, 0, 0) for p = (1, 0, 0) and
        // M = S(−1, 1, 1); without the flip it would be (−1, 0, 0).
        let m = [-1., 0., 0., 0., 1., 0., 0., 0., 1., 0., 0., 0.];
        let obj = mesh_object("M", &[[1., 0., 0.], [0., 1., 0.], [0., 0., 1.]], m);
        let n = node(None, "M", 0xFFFF, None, &[]);
        let (scene, _) = read(&file(&[obj], &[n]));
        let w = scene.evaluate(Some(0), Time::Frame(0.0)).world_positions(&scene, 0);
        assert!((w[0] - DVec3::X).length() < 1e-9, "{w:?}");
    }

    #[test]
    fn without_node_id_parents_are_file_order_numbers_and_instances_share_a_mesh() {
        let obj = mesh_object("Car", &[[0.; 3], [1., 0., 0.], [0., 1., 0.]], IDENTITY);
        let a = node(None, "$$$DUMMY", 0xFFFF, None, &[pos_track(&[(0, [1., 0., 0.])])]);
        let b = node(None, "Car", 0, None, &[pos_track(&[(0, [0., 2., 0.])])]);
        let c = node(None, "Car", 0, None, &[chunk(id::INSTANCE_NAME, &[b"copy01\0"])]);
        let (scene, _) = read(&file(&[obj], &[a, b, c]));
        assert_eq!(scene.nodes[0].kind, NodeKind::Null);
        assert_eq!(scene.nodes[1].parent, Some(0));
        assert_eq!(scene.nodes[2].parent, Some(0));
        assert_eq!(scene.nodes[1].mesh, scene.nodes[2].mesh);
        assert_eq!(scene.nodes[2].instance, "copy01");
        let pose = scene.evaluate(Some(0), Time::Frame(0.0));
        assert_eq!(pose.world[1].w_axis.truncate(), DVec3::new(1., 2., 0.));
    }

    #[test]
    fn self_parent_and_parent_cycle_are_re_rooted_with_warnings() {
        let a = node(Some(1), "A", 2, None, &[]);
        let b = node(Some(2), "B", 1, None, &[]);
        let c = node(Some(3), "C", 3, None, &[]);
        let (scene, warnings) = read(&file(&[], &[a, b, c]));
        scene.validate().unwrap();
        // A → B → A: the walk from A closes the loop at B, which becomes the root.
        assert_eq!(scene.nodes[0].parent, Some(1));
        assert_eq!(scene.nodes[1].parent, None);
        assert_eq!(scene.nodes[2].parent, None);
        assert_eq!(warnings.len(), 2, "{warnings:?}");
    }

    #[test]
    fn long_parent_chain_and_many_targets_load_in_linear_time() {
        // 40 000 nodes, each the parent of the next, then 40 000 camera targets: quadratic
        // hierarchy or target matching would take minutes here.
        let mut nodes: Vec<Vec<u8>> =
            (0..40_000u16).map(|i| node(None, "$$$DUMMY", i.wrapping_sub(1), None, &[])).collect();
        let mut hdr = b"Camera01\0".to_vec();
        hdr.extend([0u8, 0, 0, 0, 0xFF, 0xFF]);
        let target = chunk(id::TARGET_NODE_TAG, &[&chunk(id::NODE_HDR, &[&hdr])]);
        nodes.extend(std::iter::repeat_n(target, 40_000));
        let t = std::time::Instant::now();
        let (scene, _) = read(&file(&[], &nodes));
        assert_eq!(scene.nodes.len(), 80_000);
        assert_eq!(scene.nodes[39_999].parent, Some(39_998));
        assert!(t.elapsed().as_secs() < 20, "{:?}", t.elapsed());
    }

    #[test]
    fn repeated_object_names_stay_separate_meshes_without_a_keyframer() {
        // Three NAMED_OBJECT chunks, two named "Box" (and one already named "Box.2", so the
        // repeat skips that name): every object keeps its own mesh and node, the repeat is
        // renamed deterministically with a warning naming the object.
        let tri = |x: f32| [[x, 0., 0.], [x + 1., 0., 0.], [x, 1., 0.]];
        let a = mesh_object("Box", &tri(0.), IDENTITY);
        let b = mesh_object("Box.2", &tri(10.), IDENTITY);
        let c = mesh_object("Box", &tri(20.), IDENTITY);
        let bytes = chunk(id::M3DMAGIC, &[&chunk(id::MDATA, &[&a, &b, &c])]);
        let (scene, warnings) = read(&bytes);
        let names: Vec<&str> = scene.meshes.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["Box", "Box.2", "Box.3"]);
        let shown: Vec<(String, Option<usize>)> =
            scene.nodes.iter().map(|n| (n.name.clone(), n.mesh)).collect();
        assert_eq!(
            shown,
            [("Box".into(), Some(0)), ("Box.2".into(), Some(1)), ("Box.3".into(), Some(2))]
        );
        // Each node shows its own object's points (x = 0, 10, 20).
        assert_eq!(scene.meshes[2].positions[0].x, 20.0);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].to_string().contains("\"Box.3\""), "{}", warnings[0]);
    }

    #[test]
    fn keyframer_nodes_naming_a_repeated_object_bind_in_file_order() {
        // Two objects named "Box" and three keyframer nodes naming "Box": the first node
        // shows the first object, the second the second, the third (an instance) the last.
        let tri = |x: f32| [[x, 0., 0.], [x + 1., 0., 0.], [x, 1., 0.]];
        let a = mesh_object("Box", &tri(0.), IDENTITY);
        let b = mesh_object("Box", &tri(10.), IDENTITY);
        let n0 = node(Some(0), "Box", 0xFFFF, None, &[]);
        let n1 = node(Some(1), "Box", 0xFFFF, None, &[]);
        let n2 = node(Some(2), "Box", 0xFFFF, None, &[chunk(id::INSTANCE_NAME, &[b"copy\0"])]);
        let (scene, _) = read(&file(&[a, b], &[n0, n1, n2]));
        let meshes: Vec<Option<usize>> = scene.nodes.iter().map(|n| n.mesh).collect();
        assert_eq!(meshes, [Some(0), Some(1), Some(1)]);
        let names: Vec<&str> = scene.nodes.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(names, ["Box", "Box.2", "Box.2"]);
        let pose = scene.evaluate(Some(0), Time::Frame(0.0));
        assert_eq!(pose.world_positions(&scene, 1)[0].x, 10.0);
    }

    #[test]
    fn file_without_keyframer_gets_one_identity_node_per_mesh() {
        let obj = mesh_object("Rock", &[[0.; 3], [1., 0., 0.], [0., 1., 0.]], IDENTITY);
        let bytes = chunk(id::M3DMAGIC, &[&chunk(id::MDATA, &[&obj])]);
        let (scene, _) = read(&bytes);
        assert_eq!(scene.nodes.len(), 1);
        assert_eq!(scene.nodes[0].mesh, Some(0));
        assert!(scene.animations.is_empty());
    }
}

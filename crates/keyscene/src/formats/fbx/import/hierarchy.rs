//! The node hierarchy: every node linked under its parent model (parent loops cut, with a
//! warning) and skin joints resolved to their bone nodes.

use super::super::objects::ConnectionKind;
use super::Importer;

impl<'g, 'd, 'a> Importer<'g, 'd, 'a> {
    /// Links every node under its parent model and resolves skin joints to nodes.
    pub(super) fn hierarchy(&mut self) {
        let g = self.graph;
        let count = self.scene.nodes.len();
        // Parent of each node, `NONE` for roots: 4 bytes a node (scene nodes are counted in
        // `u32`, as the record tree's), not the 16 of an `Option<usize>`, at the load's peak.
        const NONE: u32 = u32::MAX;
        let mut parent: Vec<u32> = vec![NONE; count];
        for (i, node) in self.scene.nodes.iter().enumerate() {
            let Some(id) = node.source.id else { continue };
            parent[i] = g
                .parents(id)
                .filter(|c| c.kind == ConnectionKind::ObjectObject)
                .find_map(|c| self.ids.nodes.get(&c.parent).copied())
                .filter(|&p| p != i)
                .map_or(NONE, |p| p as u32);
        }
        // Cut loops: walk up from every node not yet known to reach a root, marking the path;
        // meeting the current path again closes a loop, cut at the node that closes it.
        // Each node is walked once: linear in the node count.
        let mut state = vec![0u8; count]; // 0 unseen, 1 on the current path, 2 reaches a root
        let mut path: Vec<u32> = Vec::new();
        for start in 0..count {
            let mut at = start;
            while state[at] == 0 {
                state[at] = 1;
                path.push(at as u32);
                match parent[at] {
                    NONE => break,
                    p if state[p as usize] == 1 => {
                        let name = self.scene.nodes[at].name.clone();
                        parent[at] = NONE;
                        self.warn(
                            None,
                            &format!("Objects › Model \"{name}\""),
                            "its parent chain loops back to it; made a root",
                        );
                        break;
                    }
                    p => at = p as usize,
                }
            }
            for &n in &path {
                state[n as usize] = 2;
            }
            path.clear();
        }
        drop(state);
        drop(path);
        // Each child list allocated once at its size (pushed one by one, a single child took
        // a vector of capacity 4).
        let mut child_count = vec![0u32; count];
        for &p in &parent {
            if p != NONE {
                child_count[p as usize] += 1;
            }
        }
        for (node, &n) in self.scene.nodes.iter_mut().zip(&child_count) {
            node.children.reserve_exact(n as usize);
        }
        drop(child_count);
        for (i, p) in parent.into_iter().enumerate() {
            self.scene.attach(i, (p != NONE).then_some(p as usize));
        }
        for (skin, joint, bone, unlinked) in std::mem::take(&mut self.pending) {
            let Some(&node) = self.ids.nodes.get(&bone) else { continue };
            let skin = &mut self.scene.skins[skin];
            skin.joints[joint].node = node;
            // A cluster without `TransformLink`: the bone's world matrix at bind from the
            // first bind pose that lists it, as ufbx fills `bind_to_world`.
            if unlinked && skin.mesh_bind.is_none() {
                let link = self.scene.bind_poses.iter().find_map(|p| p.matrix(node));
                skin.mesh_bind = link.map(|l| l * skin.joints[joint].inverse_bind);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::load;

    #[test]
    fn a_parent_loop_is_cut_and_reported() {
        let text = r#"; FBX 7.4.0 project file
Objects: {
    Model: 1, "Model::A", "Null" { }
    Model: 2, "Model::B", "Null" { }
}
Connections: { C: "OO",1,2
    C: "OO",2,1 }
"#;
        let (s, w) = load(text);
        assert!(s.validate().is_ok());
        assert_eq!(s.roots.len(), 1);
        assert!(w.iter().any(|w| w.message.contains("loops")), "{w:?}");
    }
}

//! The stored [`BindPose`](crate::scene::BindPose)s: `Pose` objects of type `BindPose`, one
//! matrix per posed node.

use super::{child_matrix, Importer};
use crate::scene::BindPose;

impl<'g, 'd, 'a> Importer<'g, 'd, 'a> {
    /// `Pose` objects of type `BindPose`: `PoseNode { Node: id, Matrix: *16 }` children.
    pub(super) fn bind_poses(&mut self) {
        let g = self.graph;
        for pose in g.objects().iter().filter(|o| o.class == "Pose" && o.sub_class == "BindPose") {
            let mut nodes = Vec::new();
            for pn in pose.node.children().filter(|c| c.name() == "PoseNode") {
                let id = pn.child("Node").and_then(|n| n.property(0)).and_then(|p| g.resolve(p));
                let (Some(&node), Some(m)) =
                    (id.and_then(|id| self.ids.nodes.get(&id)), child_matrix(pn, "Matrix"))
                else {
                    continue;
                };
                nodes.push((node, m));
            }
            self.ids
                .bind_poses
                .push(BindPose { name: pose.name.to_string(), nodes: nodes.clone() });
            self.scene.bind_poses.push(BindPose { name: pose.name.to_string(), nodes });
        }
    }
}

#[cfg(test)]
mod tests {
    use glam::{DMat4, DVec3};

    use super::super::super::objects::ObjectGraph;
    use super::super::import;
    use super::super::tests::quad;
    use crate::io::ReadOptions;

    #[test]
    fn bind_poses_list_node_matrices() {
        let text = quad("", "").replace(
            "Model: 10,",
            r#"Pose: 50, "Pose::skinCluster1", "BindPose" {
        Type: "BindPose"
        NbPoseNodes: 1
        PoseNode: { Node: 10
            Matrix: *16 { a: 1,0,0,0, 0,1,0,0, 0,0,1,0, 3,4,5,1 } }
    }
    Model: 10,"#,
        );
        let doc = crate::formats::fbx::parse(text.as_bytes(), &Default::default()).unwrap();
        let graph = ObjectGraph::new(&doc).unwrap();
        let (_, _, ids) = import(&graph, &ReadOptions::default());
        assert_eq!(ids.bind_poses.len(), 1);
        assert_eq!(ids.bind_poses[0].name, "skinCluster1");
        assert_eq!(
            ids.bind_poses[0].nodes,
            vec![(0, DMat4::from_translation(DVec3::new(3.0, 4.0, 5.0)))]
        );
    }
}

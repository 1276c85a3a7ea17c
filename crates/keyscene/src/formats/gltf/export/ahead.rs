//! Mesh geometry built ahead of the node pass, several meshes at once on rayon's thread pool
//! (issue #16 goal 6: per-mesh geometry in the writers uses every core).
//!
//! [`geometry::primitives`] (triangulation, corner normals, vertex de-duplication) depends on
//! nothing but the scene mesh and its bake matrix, so the meshes the node pass will ask for
//! are built in batches in parallel and handed out in the order the node pass asks. What the
//! writer does with them (materials, tangents, accessors, buffer bytes) stays on one thread in
//! scene order, so the file is the same bytes whatever the number of threads. A batch holds
//! at most [`BATCH_CORNERS`] corners beyond its first mesh, so peak memory grows by a batch's
//! primitives, not by the whole scene's. A batch of fewer than [`PARALLEL_CORNERS`] corners
//! (every corpus file: their meshes build in a few milliseconds) is built on the calling
//! thread: starting the pool costs more than it saves there (measured, docs/benchmarks.md).

use std::collections::HashMap;

use glam::DMat4;
use rayon::prelude::*;

use crate::formats::gltf::geometry::{self, Primitive};
use crate::scene::Scene;

/// One glTF mesh's identity: the scene mesh and the bits of its bake matrix.
pub(super) type MeshKey = (usize, [u64; 16]);

/// The glTF mesh `node` shows — its key and its bake matrix (the node's geometry transform)
/// — or `None` for a node without a mesh. The node pass and [`Ahead::new`] both key meshes
/// with it, so they agree on which meshes are one.
pub(super) fn mesh_key(node: &crate::scene::Node) -> Option<(MeshKey, DMat4)> {
    let m = node.mesh?;
    let bake = node.geometry_transform();
    Some(((m, bake.to_cols_array().map(f64::to_bits)), bake))
}

/// Corners one batch may hold beyond its first mesh (about 15 MB of primitives).
const BATCH_CORNERS: usize = 1 << 18;

/// Corners from which a batch of two or more meshes is built in parallel.
const PARALLEL_CORNERS: usize = 1 << 16;

/// [`geometry::primitives`] of the meshes the node pass will write, built a batch ahead.
pub(super) struct Ahead {
    /// Every distinct (mesh, bake matrix), in the order of first use by scene node.
    order: Vec<(MeshKey, DMat4)>,
    /// The first entry of `order` not built yet.
    next: usize,
    /// Built and not handed out yet.
    ready: HashMap<MeshKey, (Vec<Primitive>, usize)>,
}

impl Ahead {
    /// The meshes of `scene`'s nodes in node order (but those of nodes `left_out` marks),
    /// none built yet.
    pub(super) fn new(scene: &Scene, left_out: &[bool]) -> Ahead {
        let mut seen = std::collections::HashSet::new();
        let order = scene
            .nodes
            .iter()
            .zip(left_out)
            .filter(|(_, out)| !**out)
            .filter_map(|(node, _)| {
                let (key, bake) = mesh_key(node)?;
                seen.insert(key).then_some((key, bake))
            })
            .filter(|((m, _), _)| *m < scene.meshes.len())
            .collect();
        Ahead { order, next: 0, ready: HashMap::new() }
    }

    /// The primitives (and count of non-finite numbers replaced) of `key`, baked through
    /// `bake`: from the batch built ahead, building the next batch when it is not there.
    pub(super) fn take(
        &mut self,
        scene: &Scene,
        key: MeshKey,
        bake: DMat4,
    ) -> (Vec<Primitive>, usize) {
        if let Some(built) = self.ready.remove(&key) {
            return built;
        }
        if self.order.get(self.next).is_some_and(|(k, _)| *k == key) {
            let (end, corners) = self.batch_end(scene);
            let batch = &self.order[self.next..end];
            let build =
                |((m, _), bake): &(MeshKey, DMat4)| geometry::primitives(&scene.meshes[*m], *bake);
            let built: Vec<(Vec<Primitive>, usize)> =
                if batch.len() > 1 && corners >= PARALLEL_CORNERS {
                    batch.par_iter().map(build).collect()
                } else {
                    batch.iter().map(build).collect()
                };
            self.ready.extend(batch.iter().map(|(k, _)| *k).zip(built));
            self.next = end;
            if let Some(built) = self.ready.remove(&key) {
                return built;
            }
        }
        // Asked out of order (not the node pass's own order): built here, alone.
        geometry::primitives(&scene.meshes[key.0], bake)
    }

    /// The end of the batch starting at `next` (at most [`BATCH_CORNERS`] corners beyond
    /// the first mesh) and its corners.
    fn batch_end(&self, scene: &Scene) -> (usize, usize) {
        let mut corners = 0;
        let mut end = self.next;
        for ((m, _), _) in &self.order[self.next..] {
            let c = scene.meshes[*m].corner_vertices.len();
            if end > self.next && corners + c > BATCH_CORNERS {
                break;
            }
            corners += c;
            end += 1;
        }
        (end, corners)
    }
}

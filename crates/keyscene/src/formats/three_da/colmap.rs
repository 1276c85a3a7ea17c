//! The `ANIM_COLMAP_AABBTREE` collision map: keyscene's byte layout (the seed leaves it open;
//! documented byte by byte in `docs/3da.md`, "Collision map"), its builder and a ray query.
//!
//! The block at `m_offsetColmap` holds one or two AABB trees: tree 0 over all geometry (ray
//! tests), tree 1 over the node `CollisionHull_0` when the file has one (movement). Each tree
//! carries its own triangles in the file's root space at the first animation frame, so the
//! engine can use it without touching the entities.
//!
//! ```text
//! block:  magic "KSAB" | u16 version = 1 | u16 tree count | u32 block size | u32 0
//!         tree directory: per tree u32 kind (0 all, 1 hull), u32 offset (from block start)
//! tree:   u32 vertices | u32 triangles | u32 nodes | u32 0
//!         f32[3] × vertices | (u32 a, b, c, u32 entity) × triangles | node (32 bytes) × nodes
//! node:   f32 min[3], f32 max[3], u32 first, u32 second
//!         inner: second < 0x8000_0000: children `first` and `second` (both > this node)
//!         leaf:  second = 0x8000_0000 | count: triangles first .. first + count
//! ```

use glam::{DMat4, DQuat, DVec3, Vec3};

use super::layout::{name_str, COLLISION_HULL, NO_PARENT};
use super::model::{Entity, File};

/// The block's first four bytes.
pub const MAGIC: [u8; 4] = *b"KSAB";
/// The layout version this module writes and reads.
pub const VERSION: u16 = 1;
/// Tree kind: all geometry (ray queries).
pub const KIND_ALL: u32 = 0;
/// Tree kind: the `CollisionHull_0` node (movement).
pub const KIND_HULL: u32 = 1;
/// Leaf marker in a node's `second` field.
pub const LEAF: u32 = 0x8000_0000;
/// Most triangles in a leaf the builder makes.
pub const LEAF_SIZE: usize = 4;
/// Bytes of a node record.
pub const NODE_SIZE: usize = 32;

/// One node of an AABB tree.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Node {
    /// Box minimum corner.
    pub min: [f32; 3],
    /// Box maximum corner.
    pub max: [f32; 3],
    /// Inner: the first child; leaf: the first triangle.
    pub first: u32,
    /// Inner: the second child; leaf: [`LEAF`] | triangle count.
    pub second: u32,
}

/// One AABB tree with its geometry.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Tree {
    /// [`KIND_ALL`] or [`KIND_HULL`].
    pub kind: u32,
    /// Vertices, file root space at the first frame.
    pub vertices: Vec<[f32; 3]>,
    /// Triangles: three vertex indices and the entity (file order) it came from.
    pub triangles: Vec<[u32; 4]>,
    /// Nodes; node 0 is the root (absent when there are no triangles).
    pub nodes: Vec<Node>,
}

/// A decoded collision map block.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Colmap {
    /// The trees in directory order.
    pub trees: Vec<Tree>,
}

fn u32_at(b: &[u8], o: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(o..o + 4)?.try_into().ok()?))
}

fn f32_at(b: &[u8], o: usize) -> Option<f32> {
    u32_at(b, o).map(f32::from_bits)
}

impl Tree {
    /// Builds a tree over `triangles` (vertex indices + entity) of `vertices`: top-down,
    /// splitting at the median of the triangle centroids along the longest axis of their box,
    /// until a node has at most [`LEAF_SIZE`] triangles. Triangles are reordered so each
    /// leaf's are contiguous.
    pub fn build(kind: u32, vertices: Vec<[f32; 3]>, triangles: Vec<[u32; 4]>) -> Tree {
        let v = |i: u32| Vec3::from(vertices[i as usize]);
        let centroid = |t: &[u32; 4]| (v(t[0]) + v(t[1]) + v(t[2])) / 3.0;
        let mut nodes: Vec<Node> = Vec::new();
        if triangles.is_empty() {
            return Tree { kind, vertices, triangles, nodes };
        }
        // Each triangle with its centroid, worked out once: the median splits compare
        // centroids O(n log n) times (computed per comparison, they were a seventh of
        // converting a 2-million-triangle scene to 3DA).
        let mut tris: Vec<(Vec3, [u32; 4])> =
            triangles.into_iter().map(|t| (centroid(&t), t)).collect();
        // Allocated once at its final size (grown by doubling it was copied and held twice).
        nodes.reserve_exact(node_count(tris.len()));
        // (node index, range) still to split; explicit stack, no recursion.
        nodes.push(Node { min: [0.0; 3], max: [0.0; 3], first: 0, second: 0 });
        let mut stack = vec![(0usize, 0usize, tris.len())];
        while let Some((ni, a, b)) = stack.pop() {
            let (mut lo, mut hi) = (Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY));
            let (mut clo, mut chi) = (lo, hi);
            for (c, t) in &tris[a..b] {
                for &i in &t[..3] {
                    lo = lo.min(v(i));
                    hi = hi.max(v(i));
                }
                clo = clo.min(*c);
                chi = chi.max(*c);
            }
            nodes[ni].min = lo.to_array();
            nodes[ni].max = hi.to_array();
            if b - a <= LEAF_SIZE {
                nodes[ni].first = a as u32;
                nodes[ni].second = LEAF | (b - a) as u32;
                continue;
            }
            let ext = chi - clo;
            let axis = if ext.x >= ext.y && ext.x >= ext.z {
                0
            } else if ext.y >= ext.z {
                1
            } else {
                2
            };
            let mid = (a + b) / 2;
            tris[a..b].select_nth_unstable_by(mid - a, |p, q| p.0[axis].total_cmp(&q.0[axis]));
            let (l, r) = (nodes.len(), nodes.len() + 1);
            nodes.push(Node { min: [0.0; 3], max: [0.0; 3], first: 0, second: 0 });
            nodes.push(Node { min: [0.0; 3], max: [0.0; 3], first: 0, second: 0 });
            nodes[ni].first = l as u32;
            nodes[ni].second = r as u32;
            stack.push((r, mid, b));
            stack.push((l, a, mid));
        }
        debug_assert_eq!(nodes.len(), node_count(tris.len()));
        let triangles = tris.into_iter().map(|(_, t)| t).collect();
        Tree { kind, vertices, triangles, nodes }
    }

    /// The nearest hit of the ray `origin + t·dir`, `t` in `[0, t_max]`: `(t, triangle
    /// index)`. Both faces of a triangle count.
    pub fn ray(&self, origin: Vec3, dir: Vec3, t_max: f32) -> Option<(f32, usize)> {
        let mut best: Option<(f32, usize)> = None;
        if self.nodes.is_empty() {
            return None;
        }
        let inv = dir.recip();
        let mut stack = vec![0usize];
        while let Some(ni) = stack.pop() {
            let n = &self.nodes[ni];
            let limit = best.map_or(t_max, |b| b.0);
            if !slab(origin, inv, Vec3::from(n.min), Vec3::from(n.max), limit) {
                continue;
            }
            if n.second & LEAF != 0 {
                let first = n.first as usize;
                for k in first..first + (n.second & !LEAF) as usize {
                    if let Some(t) = self.triangle_hit(k, origin, dir) {
                        if t <= best.map_or(t_max, |b| b.0) {
                            best = Some((t, k));
                        }
                    }
                }
            } else {
                stack.push(n.second as usize);
                stack.push(n.first as usize);
            }
        }
        best
    }

    /// Möller–Trumbore intersection of the ray with triangle `k`: `t ≥ 0`, or `None`.
    pub fn triangle_hit(&self, k: usize, origin: Vec3, dir: Vec3) -> Option<f32> {
        let t = self.triangles[k];
        let [a, b, c] = [t[0], t[1], t[2]].map(|i| Vec3::from(self.vertices[i as usize]));
        ray_triangle(origin, dir, a, b, c)
    }
}

/// Möller–Trumbore: the `t ≥ 0` where `origin + t·dir` crosses triangle `a b c` (either face),
/// `None` when it misses or is parallel.
pub fn ray_triangle(origin: Vec3, dir: Vec3, a: Vec3, b: Vec3, c: Vec3) -> Option<f32> {
    let (e1, e2) = (b - a, c - a);
    let p = dir.cross(e2);
    let det = e1.dot(p);
    if det.abs() < 1e-12 {
        return None;
    }
    let inv = 1.0 / det;
    let s = origin - a;
    let u = s.dot(p) * inv;
    if !(0.0..=1.0).contains(&u) {
        return None;
    }
    let q = s.cross(e1);
    let v = dir.dot(q) * inv;
    if v < 0.0 || u + v > 1.0 {
        return None;
    }
    let t = e2.dot(q) * inv;
    (t >= 0.0).then_some(t)
}

/// Ray against box (slab test), conservative: a hit at `t` in `[0, t_max]` (with a small
/// tolerance so boundary hits are never culled).
fn slab(o: Vec3, inv: Vec3, lo: Vec3, hi: Vec3, t_max: f32) -> bool {
    let eps = 1e-4 * (1.0 + lo.abs().max(hi.abs()).max_element());
    let (lo, hi) = (lo - Vec3::splat(eps), hi + Vec3::splat(eps));
    let mut t0 = 0.0f32;
    let mut t1 = t_max * (1.0 + 1e-5) + eps;
    for i in 0..3 {
        let (a, b) = ((lo[i] - o[i]) * inv[i], (hi[i] - o[i]) * inv[i]);
        let (a, b) = if a.is_nan() || b.is_nan() {
            // Ray parallel to the slab and starting on its plane: inside iff within.
            if o[i] >= lo[i] && o[i] <= hi[i] {
                continue;
            }
            return false;
        } else {
            (a.min(b), a.max(b))
        };
        t0 = t0.max(a);
        t1 = t1.min(b);
        if t0 > t1 {
            return false;
        }
    }
    true
}

/// How many nodes [`Tree::build`] makes for `n` triangles: a leaf for at most
/// [`LEAF_SIZE`], else a node over the trees of the lower and upper halves (`n / 2` and the
/// rest, as its median split cuts them).
fn node_count(n: usize) -> usize {
    // Two sizes at most per level (`m` and `m + 1`): walk the levels with their counts.
    let mut level: Vec<(usize, usize)> = vec![(n, 1)];
    let mut total = 0;
    while !level.is_empty() {
        let mut next: Vec<(usize, usize)> = Vec::new();
        for (size, count) in level {
            total += count;
            if size > LEAF_SIZE {
                for half in [size / 2, size - size / 2] {
                    match next.iter_mut().find(|(s, _)| *s == half) {
                        Some(e) => e.1 += count,
                        None => next.push((half, count)),
                    }
                }
            }
        }
        level = next;
    }
    total
}

impl Colmap {
    /// The block's size in bytes once encoded.
    pub fn encoded_len(&self) -> usize {
        16 + self
            .trees
            .iter()
            .map(|t| 8 + 16 + 12 * t.vertices.len() + 16 * t.triangles.len() + 32 * t.nodes.len())
            .sum::<usize>()
    }

    /// Encodes the block (layout in the module docs).
    pub fn encode(&self) -> Vec<u8> {
        // The exact size up front: growing by doubling would copy the block and hold two
        // copies at once (the collision map of a 2-million-triangle scene is about 60 MB).
        let mut w = Vec::with_capacity(self.encoded_len());
        self.write_to(&mut w).expect("writing to a Vec does not fail");
        debug_assert_eq!(w.len(), self.encoded_len(), "the block's size was worked out in advance");
        w
    }

    /// Writes the block [`Colmap::encode`] makes to `out`, through a buffer of about 64 KiB,
    /// without making the whole block first ([`super::save`] streams the collision map of a
    /// large model so, next to its trees rather than in a second copy of them).
    ///
    /// Errors: those of `out`.
    pub fn write_to(&self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        const CHUNK: usize = 64 << 10;
        let mut w: Vec<u8> = Vec::with_capacity(CHUNK + 64);
        let size = u32::try_from(self.encoded_len()).unwrap_or(u32::MAX);
        w.extend_from_slice(&MAGIC);
        w.extend_from_slice(&VERSION.to_le_bytes());
        w.extend_from_slice(&(self.trees.len() as u16).to_le_bytes());
        w.extend_from_slice(&size.to_le_bytes());
        w.extend_from_slice(&0u32.to_le_bytes());
        // The directory: each tree's offset from the block start, worked out from the counts.
        let mut at = 16 + 8 * self.trees.len();
        for t in &self.trees {
            w.extend_from_slice(&t.kind.to_le_bytes());
            w.extend_from_slice(&(at as u32).to_le_bytes());
            at += 16 + 12 * t.vertices.len() + 16 * t.triangles.len() + 32 * t.nodes.len();
        }
        let flush = |w: &mut Vec<u8>, out: &mut dyn std::io::Write| -> std::io::Result<()> {
            if w.len() >= CHUNK {
                out.write_all(w)?;
                w.clear();
            }
            Ok(())
        };
        for t in &self.trees {
            for x in [t.vertices.len() as u32, t.triangles.len() as u32, t.nodes.len() as u32, 0] {
                w.extend_from_slice(&x.to_le_bytes());
            }
            for v in &t.vertices {
                v.iter().for_each(|x| w.extend_from_slice(&x.to_le_bytes()));
                flush(&mut w, out)?;
            }
            for tr in &t.triangles {
                tr.iter().for_each(|x| w.extend_from_slice(&x.to_le_bytes()));
                flush(&mut w, out)?;
            }
            for n in &t.nodes {
                n.min.iter().chain(&n.max).for_each(|x| w.extend_from_slice(&x.to_le_bytes()));
                w.extend_from_slice(&n.first.to_le_bytes());
                w.extend_from_slice(&n.second.to_le_bytes());
                flush(&mut w, out)?;
            }
        }
        out.write_all(&w)
    }

    /// Decodes and validates a block: every count against the bytes present, every index in
    /// range, children after their parent (so no cycles), each triangle in exactly one leaf,
    /// every box containing its children's boxes and its leaf triangles. Errors are
    /// `(offset from the block start, message)`; the first one found is returned.
    pub fn parse(b: &[u8]) -> Result<Colmap, (usize, String)> {
        let err = |o: usize, m: String| Err((o, m));
        if b.len() < 16 {
            return err(0, format!("collision map: {} bytes, the header needs 16", b.len()));
        }
        if b[..4] != MAGIC {
            return err(0, format!("collision map: magic {:02x?}, expected \"KSAB\"", &b[..4]));
        }
        let version = u16::from_le_bytes([b[4], b[5]]);
        if version != VERSION {
            return err(4, format!("collision map: version {version}, only {VERSION} is known"));
        }
        let count = usize::from(u16::from_le_bytes([b[6], b[7]]));
        let size = u32_at(b, 8).unwrap_or(0) as usize;
        if size < 16 || size > b.len() {
            return err(
                8,
                format!(
                    "collision map: block size {size} does not fit the {} bytes present",
                    b.len()
                ),
            );
        }
        let b = &b[..size];
        if 16 + 8 * count > size {
            return err(6, format!("collision map: {count} trees do not fit the block"));
        }
        let trees = (0..count).map(|i| Tree::parse(b, i, count)).collect::<Result<_, _>>()?;
        Ok(Colmap { trees })
    }
}

impl Tree {
    /// Decodes and validates tree `i` of the `count` in block `b` (cut to its size): its
    /// directory entry, counts against the bytes present, triangle indices, then the nodes
    /// ([`Tree::check_nodes`]). Errors as [`Colmap::parse`]'s.
    fn parse(b: &[u8], i: usize, count: usize) -> Result<Tree, (usize, String)> {
        let err = |o: usize, m: String| Err((o, m));
        let size = b.len();
        let kind = u32_at(b, 16 + 8 * i).unwrap_or(0);
        if kind > KIND_HULL {
            return err(16 + 8 * i, format!("collision map: tree {i} has unknown kind {kind}"));
        }
        let at = u32_at(b, 20 + 8 * i).unwrap_or(0) as usize;
        if at % 4 != 0 || at < 16 + 8 * count || at + 16 > size {
            return err(
                20 + 8 * i,
                format!("collision map: tree {i} offset {at} is out of range or misaligned"),
            );
        }
        let nv = u32_at(b, at).unwrap_or(0) as usize;
        let nt = u32_at(b, at + 4).unwrap_or(0) as usize;
        let nn = u32_at(b, at + 8).unwrap_or(0) as usize;
        let need = (nv as u64) * 12 + (nt as u64) * 16 + (nn as u64) * NODE_SIZE as u64;
        if (at + 16) as u64 + need > size as u64 {
            return err(at, format!("collision map: tree {i} declares {nv} vertices, {nt} triangles, {nn} nodes: more than the block holds"));
        }
        let vo = at + 16;
        let to = vo + nv * 12;
        let no = to + nt * 16;
        let vertices: Vec<[f32; 3]> = (0..nv)
            .map(|k| [0, 1, 2].map(|c| f32_at(b, vo + 12 * k + 4 * c).unwrap_or(0.0)))
            .collect();
        let triangles: Vec<[u32; 4]> = (0..nt)
            .map(|k| [0, 1, 2, 3].map(|c| u32_at(b, to + 16 * k + 4 * c).unwrap_or(0)))
            .collect();
        for (k, t) in triangles.iter().enumerate() {
            if t[..3].iter().any(|&x| x as usize >= nv) {
                return err(
                    to + 16 * k,
                    format!("collision map: tree {i} triangle {k} has a vertex index ≥ {nv}"),
                );
            }
        }
        let nodes: Vec<Node> = (0..nn)
            .map(|k| {
                let o = no + NODE_SIZE * k;
                Node {
                    min: [0, 1, 2].map(|c| f32_at(b, o + 4 * c).unwrap_or(0.0)),
                    max: [3, 4, 5].map(|c| f32_at(b, o + 4 * c).unwrap_or(0.0)),
                    first: u32_at(b, o + 24).unwrap_or(0),
                    second: u32_at(b, o + 28).unwrap_or(0),
                }
            })
            .collect();
        if nn == 0 && nt > 0 {
            return err(at + 8, format!("collision map: tree {i} has {nt} triangles but no nodes"));
        }
        let tree = Tree { kind, vertices, triangles, nodes };
        tree.check_nodes(i, no, to)?;
        Ok(tree)
    }

    /// The node rules of tree `i` (`no`, `to`: block offsets of its nodes and triangles):
    /// every node reached from the root, children after their parent with one parent each
    /// (so no cycles), each triangle in exactly one leaf, every box holding its children's
    /// boxes and its leaf triangles.
    fn check_nodes(&self, i: usize, no: usize, to: usize) -> Result<(), (usize, String)> {
        let err = |o: usize, m: String| Err((o, m));
        let (nt, nn) = (self.triangles.len(), self.nodes.len());
        let mut covered = vec![false; nt];
        let mut reached = vec![false; nn];
        if nn > 0 {
            reached[0] = true;
        }
        for (k, n) in self.nodes.iter().enumerate() {
            let o = no + NODE_SIZE * k;
            if !reached[k] {
                return err(
                    o,
                    format!("collision map: tree {i} node {k} is not reached from the root"),
                );
            }
            if n.second & LEAF != 0 {
                self.check_leaf(i, k, o, &mut covered)?;
            } else {
                self.check_inner(i, k, o, &mut reached)?;
            }
        }
        if let Some(t) = covered.iter().position(|&c| !c) {
            return err(to + 16 * t, format!("collision map: tree {i} triangle {t} is in no leaf"));
        }
        Ok(())
    }

    /// Leaf `k` (at block offset `o`) of tree `i`: its triangles exist, are in no other leaf
    /// (`covered`) and lie in its box.
    fn check_leaf(
        &self,
        i: usize,
        k: usize,
        o: usize,
        covered: &mut [bool],
    ) -> Result<(), (usize, String)> {
        let err = |o: usize, m: String| Err((o, m));
        let (n, nt) = (&self.nodes[k], self.triangles.len());
        let (first, cnt) = (n.first as usize, (n.second & !LEAF) as usize);
        if first + cnt > nt {
            return err(
                o + 24,
                format!(
                    "collision map: tree {i} leaf {k} triangles {first}..{} pass {nt}",
                    first + cnt
                ),
            );
        }
        for (t, seen) in covered.iter_mut().enumerate().skip(first).take(cnt) {
            if std::mem::replace(seen, true) {
                return err(
                    o + 24,
                    format!("collision map: tree {i} triangle {t} is in two leaves"),
                );
            }
            let p = self.triangles[t];
            for &x in &p[..3] {
                let v = self.vertices[x as usize];
                if !n.holds(v, v) {
                    return err(
                        o,
                        format!("collision map: tree {i} leaf {k} box does not hold triangle {t}"),
                    );
                }
            }
        }
        Ok(())
    }

    /// Inner node `k` (at block offset `o`) of tree `i`: both children after it, in range,
    /// with no other parent (`reached`), their boxes inside its box.
    fn check_inner(
        &self,
        i: usize,
        k: usize,
        o: usize,
        reached: &mut [bool],
    ) -> Result<(), (usize, String)> {
        let err = |o: usize, m: String| Err((o, m));
        let (n, nn) = (&self.nodes[k], self.nodes.len());
        for c in [n.first as usize, n.second as usize] {
            if c <= k || c >= nn {
                return err(
                    o + 24,
                    format!(
                        "collision map: tree {i} node {k} child {c} is not after it or past {nn}"
                    ),
                );
            }
            if std::mem::replace(&mut reached[c], true) {
                return err(o + 24, format!("collision map: tree {i} node {c} has two parents"));
            }
            if !n.holds(self.nodes[c].min, self.nodes[c].max) {
                return err(
                    o,
                    format!("collision map: tree {i} node {k} box does not hold child {c}"),
                );
            }
        }
        Ok(())
    }
}

impl Node {
    /// Whether the box `lo..hi` lies inside this node's box.
    fn holds(&self, lo: [f32; 3], hi: [f32; 3]) -> bool {
        (0..3).all(|c| lo[c] >= self.min[c] && hi[c] <= self.max[c])
    }
}

/// Builds the collision map block of `file` ([`build_trees_for_file`], encoded).
pub fn build_for_file(file: &File, frame: f64, warnings: &mut Vec<String>) -> Vec<u8> {
    build_trees_for_file(file, frame, warnings).encode()
}

/// Builds the collision map of `file`: its entities posed by their own tracks at `frame`,
/// tree 0 over every entity except `CollisionHull_0`, tree 1 over `CollisionHull_0` (and its
/// surfaces only) when the file has it.
pub fn build_trees_for_file(file: &File, frame: f64, warnings: &mut Vec<String>) -> Colmap {
    let mut gather = Gather::new(file, frame);
    for (i, e) in file.entities.iter().enumerate() {
        gather.add(i, e);
    }
    gather.build(warnings)
}

/// The collision map's triangles gathered entity by entity, in file order, so that a writer
/// can drop each entity's surfaces once it is written ([`build_trees_for_file`] of the whole
/// file is this, one entity after the other).
pub(crate) struct Gather {
    /// Each entity's world matrix at the frame (file order).
    world: Vec<DMat4>,
    /// The file index of `CollisionHull_0`.
    hull: Option<usize>,
    /// Tree 0's vertices and triangles, and tree 1's (the hull's).
    all: Soup,
    hull_soup: Soup,
}

/// Distinct world-space vertices (by bits) and the triangles over them.
#[derive(Default)]
struct Soup {
    vertices: Vec<[f32; 3]>,
    index: foldhash::HashMap<[u32; 3], u32>,
    triangles: Vec<[u32; 4]>,
}

impl Gather {
    /// Ready for `file`'s entities, posed by their tracks at `frame` (their surfaces are not
    /// read here; only names, parents and tracks).
    pub(crate) fn new(file: &File, frame: f64) -> Gather {
        let n = file.entities.len();
        let mut world = vec![DMat4::IDENTITY; n];
        for (i, e) in file.entities.iter().enumerate() {
            let t = e.position.as_ref().and_then(|t| t.sample(frame)).unwrap_or(DVec3::ZERO);
            let r = e.rotation.as_ref().and_then(|t| t.sample(frame)).unwrap_or(DQuat::IDENTITY);
            let s = e.scale.as_ref().and_then(|t| t.sample(frame)).unwrap_or(DVec3::ONE);
            let l = DMat4::from_scale_rotation_translation(s, r, t);
            let p = usize::from(e.parent_idx);
            world[i] = if e.parent_idx != NO_PARENT && p < i { world[p] * l } else { l };
        }
        let hull = file.entities.iter().position(|e| name_str(&e.name) == COLLISION_HULL);
        Gather { world, hull, all: Soup::default(), hull_soup: Soup::default() }
    }

    /// Adds the triangles of entity `i` (file order; each entity once, in order) with its
    /// surfaces.
    pub(crate) fn add(&mut self, i: usize, e: &Entity) {
        let soup = if Some(i) == self.hull { &mut self.hull_soup } else { &mut self.all };
        let world = self.world[i];
        for s in &e.surfaces {
            let Some(xyz) = &s.xyz else { continue };
            let ids: Vec<u32> = xyz
                .iter()
                .map(|p| {
                    let w =
                        world.transform_point3(DVec3::from(p.map(f64::from))).as_vec3().to_array();
                    *soup.index.entry(w.map(f32::to_bits)).or_insert_with(|| {
                        soup.vertices.push(w);
                        soup.vertices.len() as u32 - 1
                    })
                })
                .collect();
            for t in s.tri_list.chunks_exact(3) {
                let [a, b, c] =
                    [t[0], t[1], t[2]].map(|x| ids.get(usize::from(x)).copied().unwrap_or(0));
                if a != b && b != c && a != c {
                    soup.triangles.push([a, b, c, i as u32]);
                }
            }
        }
    }

    /// The trees over what was added (the vertex index is dropped first).
    pub(crate) fn build(self, warnings: &mut Vec<String>) -> Colmap {
        let Gather { hull, all, hull_soup, .. } = self;
        let mut map = Colmap::default();
        let Soup { vertices, index, triangles } = all;
        drop(index);
        map.trees.push(Tree::build(KIND_ALL, vertices, triangles));
        if hull.is_some() {
            let Soup { vertices, index, triangles } = hull_soup;
            drop(index);
            if triangles.is_empty() {
                warnings.push(format!(
                    "{COLLISION_HULL} has no triangles: its collision tree is empty"
                ));
            }
            map.trees.push(Tree::build(KIND_HULL, vertices, triangles));
        }
        map
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 10×10 grid of unit squares (200 triangles) in z = 0, with a bump.
    fn grid() -> Tree {
        let mut v = Vec::new();
        for y in 0..=10 {
            for x in 0..=10 {
                v.push([x as f32, y as f32, ((x * 7 + y * 3) % 5) as f32 * 0.1]);
            }
        }
        let mut t = Vec::new();
        for y in 0..10u32 {
            for x in 0..10u32 {
                let i = y * 11 + x;
                t.push([i, i + 1, i + 12, 0]);
                t.push([i, i + 12, i + 11, 0]);
            }
        }
        Tree::build(KIND_ALL, v, t)
    }

    #[test]
    fn tree_rays_agree_with_brute_force() {
        let tree = grid();
        let mut seed = 12345u32;
        let mut rnd = || {
            seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12345);
            (seed >> 8) as f32 / (1u32 << 24) as f32
        };
        for _ in 0..500 {
            let o = Vec3::new(rnd() * 12.0 - 1.0, rnd() * 12.0 - 1.0, 2.0 + rnd());
            let d = Vec3::new(rnd() - 0.5, rnd() - 0.5, -1.0).normalize();
            let brute = (0..tree.triangles.len())
                .filter_map(|k| tree.triangle_hit(k, o, d))
                .fold(None, |m: Option<f32>, t| Some(m.map_or(t, |m| m.min(t))));
            let fast = tree.ray(o, d, f32::INFINITY).map(|h| h.0);
            assert_eq!(brute, fast, "ray {o:?} {d:?}");
        }
    }

    #[test]
    fn node_count_is_what_the_build_makes() {
        for n in (1..200).chain([1000, 4097, 65_537]) {
            let v: Vec<[f32; 3]> =
                (0..n + 2).map(|i| [i as f32, (i * i % 7) as f32, 0.0]).collect();
            let t: Vec<[u32; 4]> = (0..n as u32).map(|i| [i, i + 1, i + 2, 0]).collect();
            let tree = Tree::build(KIND_ALL, v, t);
            assert_eq!(tree.nodes.len(), node_count(n), "{n} triangles");
            assert_eq!(tree.nodes.capacity(), tree.nodes.len(), "{n} triangles");
        }
    }

    #[test]
    fn encode_parse_round_trip_and_validation() {
        let map = Colmap { trees: vec![grid()] };
        let bytes = map.encode();
        assert_eq!(Colmap::parse(&bytes).unwrap(), map);
        assert_eq!(bytes.len(), map.encoded_len());
        // Streamed in chunks: the same bytes, for a block larger than one chunk too.
        let big = Colmap { trees: (0..200).map(|i| Tree { kind: i % 2, ..grid() }).collect() };
        let mut streamed = Vec::new();
        big.write_to(&mut streamed).unwrap();
        assert!(streamed.len() > 64 << 10);
        assert_eq!(streamed, big.encode());
        assert_eq!(Colmap::parse(&streamed).unwrap(), big);
        let mut bad = bytes.clone();
        // Point the root's first child at the root itself.
        let nodes_at = 24 + 16 + 121 * 12 + 200 * 16;
        bad[nodes_at + 24..nodes_at + 28].copy_from_slice(&0u32.to_le_bytes());
        assert!(Colmap::parse(&bad).is_err());
        assert!(Colmap::parse(&bytes[..bytes.len() - 4]).is_err());
    }
}

//! `--compress` ([`WriteOptions::compress`](super::super::WriteOptions::compress), issue 36 §4):
//! the finished document made web-ready in one step, the way gltfpack does by default —
//! `KHR_mesh_quantization` for the vertex attributes, then `EXT_meshopt_compression` on the
//! buffer views of vertex, index, skin and animation data (docs/gltf.md, "Compressed output").
//!
//! Quantization (every choice keeps positions within 1e-4 of the scene size, the writers' bound):
//! - `POSITION`: unnormalized `u16` in one [`Volume`] per group of meshes that share a skin
//!   (`p = offset + step · q`, `step` = the group's largest extent / 65535: half a step is
//!   1/131,070 of the extent, under 7.7e-6 of the scene size for any mesh no larger than the
//!   scene). The dequantization is a child node carrying the mesh with `translation = offset`,
//!   `scale = step` (gltfpack's mesh nodes); a skinned mesh's node transform is ignored by glTF,
//!   so there it is folded into the skin's inverse bind matrices (`IBM · D`). Morph target
//!   position deltas: in the same steps (`D`'s linear part applies to them), `i16` when they
//!   all fit, else float.
//! - `NORMAL`, `TANGENT`: normalized `i8` (gltfpack's default; within 0.23° per component).
//! - `TEXCOORD_n`: normalized `u16` when every value lies in [0, 1] (core glTF), else float
//!   (no `KHR_texture_transform`: keeps every client's texture lookup the core one).
//! - `COLOR_n`: normalized `u16` when in [0, 1]; `WEIGHTS_n`: normalized `u16` whose sum over
//!   every set is exactly 65535 per vertex ([`unit_weights`]; `u8` would move a vertex up to
//!   1/510 of its distance to the joint).
//! - Morph normal/tangent deltas, `JOINTS_n`, `_KEYSCENE_VERTEX`, animation data: unchanged.
//!
//! meshopt: vertex views (stride 4–16) and the other float views (as 4-byte elements) are
//! `ATTRIBUTES` streams (vertex codec version 0, as the extension specifies), index views
//! `INDICES` (gltfpack uses `TRIANGLES`, whose codec may rotate a triangle's corners: the
//! sequence codec keeps the corner order the reader rebuilds polygons from), images stay plain. The compressed bytes are buffer 0 (the GLB's
//! BIN chunk); the views keep their uncompressed layout in buffer 1, a fallback buffer without
//! data (`extensions.EXT_meshopt_compression.fallback: true`), and both extensions are
//! required — gltfpack's default.

use std::collections::HashMap;

use glam::{DMat4, DVec3};
use gltf_json as json;
use json::accessor::{ComponentType, GenericComponentType, Type};
use json::mesh::Semantic;
use json::validation::{Checked::Valid, USize64};
use serde_json::json as value;

use super::Error;

/// The mesh quantization extension's name.
pub(crate) const QUANTIZATION: &str = "KHR_mesh_quantization";
/// The meshopt compression extension's name.
pub(crate) const MESHOPT: &str = "EXT_meshopt_compression";

/// The quantization grid of one group of meshes: `p = offset + step · q`, `q` in `0..=65535`
/// per axis (one step for all three axes, so the dequantization is a uniform scale).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Volume {
    /// The grid's corner: the smallest coordinate of the group's positions per axis.
    pub offset: [f64; 3],
    /// The grid spacing: the largest extent of the positions over 65535 (1 when they are all one
    /// point).
    pub step: f64,
}

impl Volume {
    /// The volume of positions spanning `lo..=hi` per axis.
    pub(crate) fn of(lo: [f64; 3], hi: [f64; 3]) -> Volume {
        let extent = (0..3).map(|k| hi[k] - lo[k]).fold(0.0, f64::max);
        let extent = if extent > 0.0 && extent.is_finite() { extent } else { 65535.0 };
        Volume { offset: lo, step: extent / 65535.0 }
    }

    /// `p`'s nearest grid point (rounded half away from zero, clamped to the grid).
    pub(crate) fn quantize(&self, p: [f64; 3]) -> [u16; 3] {
        std::array::from_fn(|k| {
            ((p[k] - self.offset[k]) / self.step).round().clamp(0.0, 65535.0) as u16
        })
    }

    /// The dequantization `D` (scale by `step`, then translate by `offset`), as the node and the
    /// inverse bind matrices carry it (in f32, as written).
    fn matrix(&self) -> DMat4 {
        let o = self.offset.map(|x| f64::from(x as f32));
        let s = f64::from(self.step as f32);
        DMat4::from_translation(DVec3::from(o)) * DMat4::from_scale(DVec3::splat(s))
    }
}

/// `weights` (one vertex's influences over every set, each ≥ 0) as integers summing exactly to
/// `total`: each weight's share of the sum, rounded down, and the remainder given one unit at a
/// time to the largest fractional parts (ties: the earlier weight). All zero when the sum is not
/// positive.
pub(crate) fn unit_weights(weights: &[f32], total: u32) -> Vec<u32> {
    let sum: f64 = weights.iter().map(|&w| f64::from(w.max(0.0))).sum();
    if sum.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) || !sum.is_finite() {
        return vec![0; weights.len()];
    }
    let exact: Vec<f64> =
        weights.iter().map(|&w| f64::from(w.max(0.0)) / sum * f64::from(total)).collect();
    let mut out: Vec<u32> = exact.iter().map(|x| x.floor() as u32).collect();
    let mut left = total.saturating_sub(out.iter().sum());
    let mut order: Vec<usize> = (0..out.len()).collect();
    order.sort_by(|&a, &b| (exact[b] - exact[b].floor()).total_cmp(&(exact[a] - exact[a].floor())));
    for &i in order.iter().cycle().take(out.len() * 2) {
        if left == 0 {
            break;
        }
        out[i] += 1;
        left -= 1;
    }
    out
}

/// Smallest and largest coordinates per axis.
type Bounds = ([f64; 3], [f64; 3]);

/// The document being compressed: its JSON and each buffer view's bytes (by view index).
struct Doc<'a> {
    root: &'a mut json::Root,
    views: Vec<Vec<u8>>,
    /// Whether an attribute type only `KHR_mesh_quantization` allows was written.
    quantized: bool,
}

/// Quantizes and compresses `root` over `bin` (its single buffer, not yet in `root.buffers`).
/// Returns the new buffer 0 and the fallback buffer's length (`None`: no view was worth
/// compressing, and `EXT_meshopt_compression` is not used); the caller pushes buffer 0 and
/// then [`fallback_buffer`].
pub(super) fn compress(
    root: &mut json::Root,
    bin: &[u8],
) -> Result<(Vec<u8>, Option<usize>), Error> {
    let views = root
        .buffer_views
        .iter()
        .map(|v| {
            let start = v.byte_offset.map_or(0, |o| o.0 as usize);
            bin.get(start..start + v.byte_length.0 as usize).map(<[u8]>::to_vec)
        })
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| Error::Write("compress: a buffer view past the buffer".into()))?;
    let mut doc = Doc { root, views, quantized: false };
    doc.quantize_positions();
    doc.quantize_attributes();
    doc.drop_unused_views();
    let quantized = doc.quantized;
    let (bin, fallback) = encode(doc.root, doc.views)?;
    let used = &mut doc.root.extensions_used;
    let required = &mut doc.root.extensions_required;
    let mut names = Vec::new();
    if fallback.is_some() {
        names.push(MESHOPT);
    }
    if quantized {
        names.push(QUANTIZATION);
    }
    for name in names {
        for list in [&mut *used, &mut *required] {
            if !list.iter().any(|n| n == name) {
                list.push(name.to_string());
            }
        }
    }
    Ok((bin, fallback))
}

/// The fallback buffer (index 1) of a compressed document: `byte_length` bytes that are never
/// stored (EXT_meshopt_compression, "Fallback buffers").
pub(super) fn fallback_buffer(byte_length: usize) -> json::Buffer {
    let mut others = serde_json::Map::new();
    others.insert(MESHOPT.into(), value!({ "fallback": true }));
    json::Buffer {
        byte_length: USize64(byte_length as u64),
        name: None,
        uri: None,
        extensions: Some(json::extensions::buffer::Buffer { others }),
        extras: Default::default(),
    }
}

/// Union–find over meshes and skins: the groups that must share one [`Volume`].
fn find(parent: &mut [usize], mut i: usize) -> usize {
    while parent[i] != i {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    i
}

impl Doc<'_> {
    /// An accessor's float components (`F32`) and its components per element; a sparse one
    /// over zeros (no buffer view: the writer's morph deltas) as its dense elements.
    fn floats(&self, a: json::Index<json::Accessor>) -> Option<(Vec<f32>, usize)> {
        let acc = self.root.accessors.get(a.value())?;
        let float = matches!(acc.component_type, Valid(GenericComponentType(ComponentType::F32)));
        if !float {
            return None;
        }
        let Valid(t) = acc.type_ else { return None };
        let n = t.multiplicity();
        if let Some(sparse) = &acc.sparse {
            return self.sparse_floats(acc, sparse, n).map(|v| (v, n));
        }
        let view = acc.buffer_view?.value();
        let stride = self.root.buffer_views[view].byte_stride.map_or(n * 4, |s| s.0);
        let bytes = self.views.get(view)?;
        let start = acc.byte_offset.map_or(0, |o| o.0 as usize);
        let mut out = Vec::with_capacity(acc.count.0 as usize * n);
        for i in 0..acc.count.0 as usize {
            for k in 0..n {
                let at = start + i * stride + k * 4;
                let b = bytes.get(at..at + 4)?;
                out.push(f32::from_le_bytes([b[0], b[1], b[2], b[3]]));
            }
        }
        Some((out, n))
    }

    /// The dense elements of a sparse float accessor `acc` over zeros (`n` components each);
    /// `None` for one over a buffer view or with data out of bounds.
    fn sparse_floats(
        &self,
        acc: &json::Accessor,
        sparse: &json::accessor::sparse::Sparse,
        n: usize,
    ) -> Option<Vec<f32>> {
        if acc.buffer_view.is_some() {
            return None;
        }
        let mut out = vec![0.0f32; acc.count.0 as usize * n];
        let Valid(json::accessor::IndexComponentType(ct)) = sparse.indices.component_type else {
            return None;
        };
        let size = ct.size();
        let idx = self.views.get(sparse.indices.buffer_view.value())?;
        let vals = self.views.get(sparse.values.buffer_view.value())?;
        let (i0, v0) =
            (sparse.indices.byte_offset.0 as usize, sparse.values.byte_offset.0 as usize);
        for j in 0..sparse.count.0 as usize {
            let b = idx.get(i0 + j * size..i0 + (j + 1) * size)?;
            let mut word = [0u8; 4];
            word[..size].copy_from_slice(b);
            let i = u32::from_le_bytes(word) as usize;
            for k in 0..n {
                let at = v0 + (j * n + k) * 4;
                let b = vals.get(at..at + 4)?;
                *out.get_mut(i * n + k)? = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            }
        }
        Some(out)
    }

    /// Points accessor `a` at a new vertex buffer view holding `data` (elements `stride` bytes
    /// apart) with component type `ct`.
    fn replace(
        &mut self,
        a: json::Index<json::Accessor>,
        data: Vec<u8>,
        stride: Option<usize>,
        ct: ComponentType,
        normalized: bool,
        min_max: Option<(Vec<i64>, Vec<i64>)>,
    ) {
        let target = stride.map(|_| Valid(json::buffer::Target::ArrayBuffer));
        let view = json::Index::push(
            &mut self.root.buffer_views,
            json::buffer::View {
                buffer: json::Index::new(0),
                byte_length: USize64(data.len() as u64),
                byte_offset: None,
                byte_stride: stride.map(json::buffer::Stride),
                name: None,
                target,
                extensions: None,
                extras: Default::default(),
            },
        );
        self.views.push(data);
        let acc = &mut self.root.accessors[a.value()];
        acc.buffer_view = Some(view);
        acc.sparse = None;
        acc.byte_offset = None;
        acc.component_type = Valid(GenericComponentType(ct));
        acc.normalized = normalized;
        if let Some((min, max)) = min_max {
            acc.min = Some(json::Value::from(min));
            acc.max = Some(json::Value::from(max));
        }
    }

    /// The groups of meshes sharing a skin (or an inverse-bind-matrix or POSITION accessor),
    /// by mesh: the group's key per mesh and per skin.
    fn groups(&self) -> (Vec<usize>, Vec<usize>) {
        let (m, s) = (self.root.meshes.len(), self.root.skins.len());
        let mut parent: Vec<usize> = (0..m + s).collect();
        let union = |parent: &mut Vec<usize>, a: usize, b: usize| {
            let (ra, rb) = (find(parent, a), find(parent, b));
            parent[ra] = rb;
        };
        for node in &self.root.nodes {
            if let (Some(mesh), Some(skin)) = (node.mesh, node.skin) {
                union(&mut parent, mesh.value(), m + skin.value());
            }
        }
        let mut owner: HashMap<usize, usize> = HashMap::new();
        for (i, skin) in self.root.skins.iter().enumerate() {
            if let Some(a) = skin.inverse_bind_matrices {
                let first = *owner.entry(a.value()).or_insert(m + i);
                union(&mut parent, first, m + i);
            }
        }
        owner.clear();
        for (i, mesh) in self.root.meshes.iter().enumerate() {
            for p in &mesh.primitives {
                if let Some(a) = p.attributes.get(&Valid(Semantic::Positions)) {
                    let first = *owner.entry(a.value()).or_insert(i);
                    union(&mut parent, first, i);
                }
            }
        }
        let key: Vec<usize> = (0..m + s).map(|i| find(&mut parent, i)).collect();
        (key[..m].to_vec(), key[m..].to_vec())
    }

    /// The [`Volume`] of each group whose positions are all float `VEC3`.
    fn volumes(&self, mesh_group: &[usize]) -> HashMap<usize, Volume> {
        let mut bounds: HashMap<usize, Option<Bounds>> = HashMap::new();
        for (i, mesh) in self.root.meshes.iter().enumerate() {
            let entry = bounds.entry(mesh_group[i]).or_insert(Some(([f64::MAX; 3], [f64::MIN; 3])));
            for p in &mesh.primitives {
                let Some(&a) = p.attributes.get(&Valid(Semantic::Positions)) else { continue };
                let data = match self.floats(a) {
                    Some((data, 3)) => data,
                    _ => {
                        *entry = None;
                        break;
                    }
                };
                let Some((lo, hi)) = entry.as_mut() else { break };
                for v in data.chunks_exact(3) {
                    for k in 0..3 {
                        lo[k] = lo[k].min(f64::from(v[k]));
                        hi[k] = hi[k].max(f64::from(v[k]));
                    }
                }
            }
        }
        bounds
            .into_iter()
            .filter_map(|(g, b)| {
                b.filter(|(lo, hi)| lo[0] <= hi[0]).map(|(lo, hi)| (g, Volume::of(lo, hi)))
            })
            .collect()
    }

    /// Quantizes every mesh's positions (and morph position deltas) in its group's volume, and
    /// puts the dequantization in a child node or the skin's inverse bind matrices.
    fn quantize_positions(&mut self) {
        let (mesh_group, skin_group) = self.groups();
        let volumes = self.volumes(&mesh_group);
        let mut done: HashMap<usize, ()> = HashMap::new();
        for (i, group) in mesh_group.iter().enumerate() {
            let Some(vol) = volumes.get(group).copied() else { continue };
            for p in 0..self.root.meshes[i].primitives.len() {
                let prim = &self.root.meshes[i].primitives[p];
                let pos = prim.attributes.get(&Valid(Semantic::Positions)).copied();
                let deltas: Vec<_> =
                    prim.targets.iter().flatten().filter_map(|t| t.positions).collect();
                if let Some(a) = pos.filter(|a| done.insert(a.value(), ()).is_none()) {
                    self.quantize_position(a, vol);
                }
                for a in deltas {
                    if done.insert(a.value(), ()).is_none() {
                        self.quantize_delta(a, vol);
                    }
                }
            }
        }
        for (s, group) in skin_group.iter().enumerate() {
            if let Some(vol) = volumes.get(group).copied() {
                self.fold_into_skin(s, vol);
            }
        }
        self.mesh_nodes(&mesh_group, &volumes);
    }

    fn quantize_position(&mut self, a: json::Index<json::Accessor>, vol: Volume) {
        let Some((data, 3)) = self.floats(a) else { return };
        let mut bytes = Vec::with_capacity(data.len() / 3 * 8);
        let (mut lo, mut hi) = ([i64::MAX; 3], [i64::MIN; 3]);
        for v in data.chunks_exact(3) {
            let q = vol.quantize([v[0], v[1], v[2]].map(f64::from));
            for k in 0..3 {
                lo[k] = lo[k].min(i64::from(q[k]));
                hi[k] = hi[k].max(i64::from(q[k]));
                bytes.extend_from_slice(&q[k].to_le_bytes());
            }
            bytes.extend_from_slice(&[0, 0]);
        }
        let min_max = (lo[0] <= hi[0]).then(|| (lo.to_vec(), hi.to_vec()));
        self.replace(a, bytes, Some(8), ComponentType::U16, false, min_max);
        self.quantized = true;
    }

    /// A morph target's position deltas in steps of `vol` (the dequantization's linear part
    /// applies to them too): `i16` when every delta fits, else floats in steps.
    fn quantize_delta(&mut self, a: json::Index<json::Accessor>, vol: Volume) {
        let Some((data, 3)) = self.floats(a) else { return };
        let steps: Vec<f64> = data.iter().map(|&d| f64::from(d) / vol.step).collect();
        let fits = steps.iter().all(|x| (-32767.0..=32767.0).contains(&x.round()));
        let mut bytes = Vec::with_capacity(data.len() / 3 * if fits { 8 } else { 12 });
        let (mut lo, mut hi) = ([f64::MAX; 3], [f64::MIN; 3]);
        for v in steps.chunks_exact(3) {
            for k in 0..3 {
                let x = if fits { v[k].round() } else { f64::from(v[k] as f32) };
                lo[k] = lo[k].min(x);
                hi[k] = hi[k].max(x);
                if fits {
                    bytes.extend_from_slice(&(x as i16).to_le_bytes());
                } else {
                    bytes.extend_from_slice(&(x as f32).to_le_bytes());
                }
            }
            if fits {
                bytes.extend_from_slice(&[0, 0]);
            }
        }
        let acc = &self.root.accessors[a.value()];
        let (min, max) = (acc.min.is_some(), acc.max.is_some());
        if fits {
            let min_max = (lo[0] <= hi[0])
                .then(|| (lo.map(|x| x as i64).to_vec(), hi.map(|x| x as i64).to_vec()));
            self.replace(a, bytes, Some(8), ComponentType::I16, false, min_max);
        } else {
            self.replace(a, bytes, Some(12), ComponentType::F32, false, None);
            let acc = &mut self.root.accessors[a.value()];
            if min && max && lo[0] <= hi[0] {
                acc.min = Some(json::Value::from(lo.map(|x| x as f32).to_vec()));
                acc.max = Some(json::Value::from(hi.map(|x| x as f32).to_vec()));
            }
        }
        self.quantized = true;
    }

    /// Skin `s`'s inverse bind matrices times `vol`'s dequantization (identity ones when it
    /// has none).
    fn fold_into_skin(&mut self, s: usize, vol: Volume) {
        let d = vol.matrix();
        let joints = self.root.skins[s].joints.len();
        let matrices: Vec<DMat4> = match self.root.skins[s].inverse_bind_matrices {
            Some(a) => match self.floats(a) {
                Some((data, 16)) => data
                    .chunks_exact(16)
                    .map(|m| DMat4::from_cols_array(&std::array::from_fn(|k| f64::from(m[k]))))
                    .collect(),
                _ => return,
            },
            None => vec![DMat4::IDENTITY; joints],
        };
        let mut bytes = Vec::with_capacity(matrices.len() * 64);
        for m in &matrices {
            for x in (*m * d).to_cols_array() {
                bytes.extend_from_slice(&(x as f32).to_le_bytes());
            }
        }
        let a = match self.root.skins[s].inverse_bind_matrices {
            Some(a) => a,
            None => {
                let a = json::Index::push(
                    &mut self.root.accessors,
                    json::Accessor {
                        buffer_view: None,
                        byte_offset: None,
                        count: USize64(matrices.len() as u64),
                        component_type: Valid(GenericComponentType(ComponentType::F32)),
                        extensions: None,
                        extras: Default::default(),
                        type_: Valid(Type::Mat4),
                        min: None,
                        max: None,
                        name: None,
                        normalized: false,
                        sparse: None,
                    },
                );
                self.root.skins[s].inverse_bind_matrices = Some(a);
                a
            }
        };
        self.replace(a, bytes, None, ComponentType::F32, false, None);
        let view = self.root.accessors[a.value()].buffer_view.expect("just set").value();
        self.root.buffer_views[view].target = None;
    }

    /// Moves each unskinned quantized mesh from its node to a new child node carrying the
    /// dequantization (with the node's morph weights, and the animation channels of them).
    fn mesh_nodes(&mut self, mesh_group: &[usize], volumes: &HashMap<usize, Volume>) {
        let mut moved: HashMap<usize, json::Index<json::Node>> = HashMap::new();
        for n in 0..self.root.nodes.len() {
            let node = &self.root.nodes[n];
            let (Some(mesh), None) = (node.mesh, node.skin) else { continue };
            let Some(vol) = volumes.get(&mesh_group[mesh.value()]) else { continue };
            let child = json::Node {
                mesh: Some(mesh),
                translation: Some(vol.offset.map(|x| x as f32)),
                scale: Some([vol.step as f32; 3]),
                weights: self.root.nodes[n].weights.take(),
                ..Default::default()
            };
            let c = json::Index::push(&mut self.root.nodes, child);
            let node = &mut self.root.nodes[n];
            node.mesh = None;
            node.children.get_or_insert_with(Vec::new).push(c);
            moved.insert(n, c);
        }
        for anim in &mut self.root.animations {
            for ch in &mut anim.channels {
                let weights =
                    ch.target.path == Valid(json::animation::Property::MorphTargetWeights);
                if let Some(&c) = moved.get(&ch.target.node.value()).filter(|_| weights) {
                    ch.target.node = c;
                }
            }
        }
    }

    /// Normals, tangents, UVs, colours and weights of every primitive (see the module docs).
    fn quantize_attributes(&mut self) {
        let mut done: HashMap<usize, ()> = HashMap::new();
        for m in 0..self.root.meshes.len() {
            for p in 0..self.root.meshes[m].primitives.len() {
                let attrs: Vec<(Semantic, json::Index<json::Accessor>)> = self.root.meshes[m]
                    .primitives[p]
                    .attributes
                    .iter()
                    .filter_map(|(s, a)| match s {
                        Valid(s) => Some((s.clone(), *a)),
                        _ => None,
                    })
                    .collect();
                let mut weights = Vec::new();
                for (s, a) in attrs {
                    if done.insert(a.value(), ()).is_some() {
                        continue;
                    }
                    match s {
                        Semantic::Normals | Semantic::Tangents => self.snorm8(a),
                        Semantic::TexCoords(_) | Semantic::Colors(_) => self.unorm16(a),
                        Semantic::Weights(set) => weights.push((set, a)),
                        _ => {}
                    }
                }
                weights.sort_by_key(|w| w.0);
                self.weights(&weights.into_iter().map(|w| w.1).collect::<Vec<_>>());
            }
        }
    }

    /// A float `VEC3`/`VEC4` unit vector as normalized `i8` (4-byte elements).
    fn snorm8(&mut self, a: json::Index<json::Accessor>) {
        let Some((data, n @ 3..=4)) = self.floats(a) else { return };
        let mut bytes = Vec::with_capacity(data.len() / n * 4);
        for v in data.chunks_exact(n) {
            for k in 0..4 {
                let x = v.get(k).map_or(0.0, |&x| (x.clamp(-1.0, 1.0) * 127.0).round());
                bytes.push(x as i8 as u8);
            }
        }
        self.replace(a, bytes, Some(4), ComponentType::I8, true, None);
        self.quantized = true;
    }

    /// A float accessor whose values all lie in [0, 1] as normalized `u16` (elements padded to
    /// 4 bytes); left as it is otherwise.
    fn unorm16(&mut self, a: json::Index<json::Accessor>) {
        let Some((data, n)) = self.floats(a) else { return };
        if n < 2 || data.iter().any(|x| !(0.0..=1.0).contains(x)) {
            return;
        }
        let stride = (n * 2).next_multiple_of(4);
        let mut bytes = Vec::with_capacity(data.len() / n * stride);
        for v in data.chunks_exact(n) {
            for &x in v {
                bytes.extend_from_slice(&((f64::from(x) * 65535.0).round() as u16).to_le_bytes());
            }
            bytes.resize(bytes.len().next_multiple_of(4), 0);
        }
        self.replace(a, bytes, Some(stride), ComponentType::U16, true, None);
    }

    /// One primitive's `WEIGHTS_n` accessors (in set order) as normalized `u16` summing to
    /// 65535 per vertex over every set ([`unit_weights`]).
    fn weights(&mut self, sets: &[json::Index<json::Accessor>]) {
        let Some(data) = sets.iter().map(|&a| self.floats(a)).collect::<Option<Vec<_>>>() else {
            return;
        };
        let count = data.first().map_or(0, |d| d.0.len() / 4);
        if data.iter().any(|(d, n)| *n != 4 || d.len() != count * 4) {
            return;
        }
        let mut out: Vec<Vec<u8>> = vec![Vec::with_capacity(count * 8); sets.len()];
        let mut vertex = Vec::with_capacity(sets.len() * 4);
        for i in 0..count {
            vertex.clear();
            for (d, _) in &data {
                vertex.extend_from_slice(&d[i * 4..i * 4 + 4]);
            }
            for (k, w) in unit_weights(&vertex, 65535).into_iter().enumerate() {
                out[k / 4].extend_from_slice(&(w as u16).to_le_bytes());
            }
        }
        for (&a, bytes) in sets.iter().zip(out) {
            self.replace(a, bytes, Some(8), ComponentType::U16, true, None);
        }
    }

    /// Removes the buffer views nothing refers to any more (the float data a quantized
    /// accessor replaced) and renumbers the rest.
    fn drop_unused_views(&mut self) {
        let mut used = vec![false; self.root.buffer_views.len()];
        for a in &self.root.accessors {
            if let Some(v) = a.buffer_view {
                used[v.value()] = true;
            }
            if let Some(s) = &a.sparse {
                used[s.indices.buffer_view.value()] = true;
                used[s.values.buffer_view.value()] = true;
            }
        }
        for i in &self.root.images {
            if let Some(v) = i.buffer_view {
                used[v.value()] = true;
            }
        }
        let mut new_index = vec![0u32; used.len()];
        let mut next = 0u32;
        for (i, &u) in used.iter().enumerate() {
            new_index[i] = next;
            next += u32::from(u);
        }
        let remap =
            |v: &mut json::Index<json::buffer::View>| *v = json::Index::new(new_index[v.value()]);
        for a in &mut self.root.accessors {
            a.buffer_view.as_mut().map(remap);
            if let Some(s) = &mut a.sparse {
                remap(&mut s.indices.buffer_view);
                remap(&mut s.values.buffer_view);
            }
        }
        for i in &mut self.root.images {
            i.buffer_view.as_mut().map(remap);
        }
        let mut keep = used.iter();
        self.root.buffer_views.retain(|_| *keep.next().unwrap_or(&false));
        let mut keep = used.iter();
        self.views.retain(|_| *keep.next().unwrap_or(&false));
    }
}

/// How one buffer view is stored.
enum Plan {
    /// As it is, in buffer 0 (images, sparse data, odd sizes).
    Plain,
    /// meshopt `ATTRIBUTES` in elements of this many bytes.
    Attributes(usize),
    /// meshopt `INDICES` of this many bytes per index (not `TRIANGLES`, whose codec may start
    /// a triangle at another corner: keyscene's reader rebuilds polygons from corner order).
    Indices(usize),
}

/// Each view's [`Plan`] from what refers to it.
fn plans(root: &json::Root, views: &[Vec<u8>]) -> Vec<Plan> {
    let mut plans: Vec<Plan> = root
        .buffer_views
        .iter()
        .zip(views)
        .map(|(v, bytes)| {
            let stride = v.byte_stride.map_or(4, |s| s.0);
            if stride % 4 == 0 && stride <= 256 && bytes.len() % stride == 0 && !bytes.is_empty() {
                Plan::Attributes(if matches!(stride, 4 | 8 | 12 | 16) { stride } else { 4 })
            } else {
                Plan::Plain
            }
        })
        .collect();
    for i in &root.images {
        if let Some(v) = i.buffer_view {
            plans[v.value()] = Plan::Plain;
        }
    }
    for a in &root.accessors {
        if let Some(s) = &a.sparse {
            plans[s.indices.buffer_view.value()] = Plan::Plain;
            plans[s.values.buffer_view.value()] = Plan::Plain;
        }
    }
    for p in root.meshes.iter().flat_map(|m| &m.primitives) {
        let Some(acc) = p.indices.and_then(|a| root.accessors.get(a.value())) else { continue };
        let Some(v) = acc.buffer_view else { continue };
        let size = match acc.component_type {
            Valid(GenericComponentType(ComponentType::U16)) => 2,
            Valid(GenericComponentType(ComponentType::U32)) => 4,
            _ => 0,
        };
        let whole = size > 0 && root.buffer_views[v.value()].byte_length.0 as usize % size == 0;
        plans[v.value()] = if whole { Plan::Indices(size) } else { Plan::Plain };
    }
    plans
}

/// About what a view's `EXT_meshopt_compression` object adds to the JSON: a stream must save
/// more than this to be used.
const VIEW_JSON: usize = 128;

/// meshopt's vertex codec (version 0) over `bytes` in elements of `N` bytes.
fn encode_vertices<const N: usize>(bytes: &[u8]) -> Result<Vec<u8>, Error> {
    let elements: Vec<[u8; N]> =
        bytes.chunks_exact(N).map(|c| c.try_into().expect("chunks of N bytes")).collect();
    meshopt::encode_vertex_buffer_level(&elements, 2, Some(0))
        .map_err(|e| Error::Write(format!("meshopt vertex encoding: {e:?}")))
}

/// Lays out the views: plain ones in buffer 0, compressed ones in buffer 0 with their
/// uncompressed place in the fallback buffer 1. Returns buffer 0 and buffer 1's length
/// (`None` when no view is compressed). A view stays plain when its stream would not save
/// [`VIEW_JSON`] bytes.
fn encode(root: &mut json::Root, views: Vec<Vec<u8>>) -> Result<(Vec<u8>, Option<usize>), Error> {
    let plans = plans(root, &views);
    let mut bin = Vec::new();
    let mut fallback = 0usize;
    let mut compressed = 0usize;
    for ((view, bytes), plan) in root.buffer_views.iter_mut().zip(views).zip(plans) {
        bin.resize(bin.len().next_multiple_of(4), 0);
        let plain = |view: &mut json::buffer::View, bin: &mut Vec<u8>, bytes: &[u8]| {
            view.buffer = json::Index::new(0);
            view.byte_offset = Some(USize64(bin.len() as u64));
            bin.extend_from_slice(bytes);
        };
        let (data, mode, stride) = match plan {
            Plan::Plain => {
                plain(view, &mut bin, &bytes);
                continue;
            }
            Plan::Attributes(n) => {
                let data = match n {
                    8 => encode_vertices::<8>(&bytes)?,
                    12 => encode_vertices::<12>(&bytes)?,
                    16 => encode_vertices::<16>(&bytes)?,
                    _ => encode_vertices::<4>(&bytes)?,
                };
                (data, "ATTRIBUTES", n)
            }
            Plan::Indices(size) => {
                let indices: Vec<u32> = bytes
                    .chunks_exact(size)
                    .map(|c| {
                        if size == 2 {
                            u32::from(u16::from_le_bytes([c[0], c[1]]))
                        } else {
                            u32::from_le_bytes([c[0], c[1], c[2], c[3]])
                        }
                    })
                    .collect();
                let vertices = indices.iter().max().map_or(0, |&m| m as usize + 1);
                let data = meshopt::encode_index_sequence(&indices, vertices)
                    .map_err(|e| Error::Write(format!("meshopt index encoding: {e:?}")))?;
                (data, "INDICES", size)
            }
        };
        if data.len() + VIEW_JSON >= bytes.len() {
            plain(view, &mut bin, &bytes);
            continue;
        }
        compressed += 1;
        let at = bin.len();
        bin.extend_from_slice(&data);
        fallback = fallback.next_multiple_of(4);
        view.buffer = json::Index::new(1);
        view.byte_offset = Some(USize64(fallback as u64));
        fallback += bytes.len();
        let mut others = serde_json::Map::new();
        others.insert(
            MESHOPT.into(),
            value!({
                "buffer": 0,
                "byteOffset": at,
                "byteLength": data.len(),
                "byteStride": stride,
                "count": bytes.len() / stride,
                "mode": mode,
            }),
        );
        view.extensions = Some(json::extensions::buffer::View { others });
    }
    Ok((bin, (compressed > 0).then_some(fallback)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A known position range → known grid: x spans [-1, 3], the largest extent (4), so the
    /// step is 4 / 65535; (1, 1, 1.25) lies 2, 1 and 0.25 above the corner (-1, 0, 1):
    /// 2 / 4 · 65535 = 32767.5 → 32768, 1 / 4 · 65535 = 16383.75 → 16384,
    /// 0.25 / 4 · 65535 = 4095.9375 → 4096.
    #[test]
    fn positions_quantize_on_the_largest_extent() {
        let vol = Volume::of([-1.0, 0.0, 1.0], [3.0, 2.0, 1.5]);
        assert_eq!(vol.offset, [-1.0, 0.0, 1.0]);
        assert_eq!(vol.step, 4.0 / 65535.0);
        assert_eq!(vol.quantize([1.0, 1.0, 1.25]), [32768, 16384, 4096]);
        assert_eq!(vol.quantize([-1.0, 0.0, 1.0]), [0, 0, 0]);
        assert_eq!(vol.quantize([3.0, 2.0, 1.5]), [65535, 32768, 8192]);
        // Dequantized back within half a step (2 / 65535) of the input, i.e. 1/131,070 of the
        // extent: far inside 1e-4 of it.
        let d = vol.matrix();
        let q = vol.quantize([0.123, 1.777, 1.4]);
        let p = d.transform_point3(DVec3::new(q[0] as f64, q[1] as f64, q[2] as f64));
        assert!((p - DVec3::new(0.123, 1.777, 1.4)).abs().max_element() <= 2.0 / 65535.0 + 1e-6);
    }

    /// A flat mesh (all one point) gets step 1: every position is the grid's corner.
    #[test]
    fn a_point_volume_has_unit_step() {
        let vol = Volume::of([2.0; 3], [2.0; 3]);
        assert_eq!(vol.step, 1.0);
        assert_eq!(vol.quantize([2.0; 3]), [0, 0, 0]);
    }

    /// 0.5/0.25/0.25 of 255: 127.5, 63.75, 63.75 → floors 127, 63, 63 (sum 253), the two left
    /// over to the largest fractions (0.75, 0.75) → 127, 64, 64. Unnormalized input is
    /// normalized first (2/2 of 255: 127.5 each, the tie to the first); zero weights stay zero.
    #[test]
    fn weights_sum_exactly_to_the_total() {
        assert_eq!(unit_weights(&[0.5, 0.25, 0.25, 0.0], 255), [127, 64, 64, 0]);
        assert_eq!(unit_weights(&[1.0, 1.0, 1.0, 0.0], 65535), [21845, 21845, 21845, 0]);
        assert_eq!(unit_weights(&[2.0, 2.0, 0.0, 0.0], 255), [128, 127, 0, 0]);
        assert_eq!(unit_weights(&[0.0; 4], 65535), [0, 0, 0, 0]);
        let w = unit_weights(&[0.1, 0.2, 0.3, 0.15, 0.05, 0.2, 0.0, 0.0], 65535);
        assert_eq!(w.iter().sum::<u32>(), 65535);
    }
}

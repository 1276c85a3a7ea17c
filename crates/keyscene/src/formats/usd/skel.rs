//! UsdSkel rigs (docs/usd.md, "Skinned meshes as UsdSkel rigs"): a linearly skinned mesh as a
//! `Skeleton` with its `SkelAnimation`, bound to the mesh prim by `SkelBindingAPI`, so that
//! USD readers get the rig (joints, bind matrices, weights, joint motion), not only its posed
//! points.
//!
//! # The mapping
//! keyscene skins a vertex `p` of mesh node `k` as `world = Σⱼ wⱼ · W(boneⱼ) · IBⱼ · G · p`
//! ([`crate::anim::Pose::world_positions`]; `IBⱼ` the joint's
//! [`inverse_bind`](crate::scene::SkinJoint::inverse_bind), `G` the node's geometric
//! transform, weights divided by their sum). UsdSkel skins a mesh prim's `points` `q` in
//! skeleton space as `Σⱼ wⱼ · Jⱼ(t) · Bⱼ⁻¹ · geomBind · q` and ignores the mesh prim's own
//! transform (UsdSkel "Schemas In-Depth", skinning). The mesh prim's points are `G · p` (as for
//! every mesh, [`super::meshes`]), so the rig is written with
//!
//! - the joints in the bones' **hierarchy** (`Rig::with_tree`): a joint's parent is the
//!   nearest ancestor node of its bone that is a joint of the skin, its path that parent's
//!   path and its own name (an identifier, unique among its siblings), parents listed before
//!   children; ancestors that are not joints of the skin fold into the joint's local
//!   transform;
//! - the `Skeleton` prim beside the mesh prim, under the mesh node's prim, so that skeleton
//!   space is the node's frame `M(t)` (the root prim is a `SkelRoot`, above both); the joints
//!   in skeleton space are `Sⱼ(t) = M(t)⁻¹ · W(t) · Cⱼ⁻¹` and `bindTransforms`
//!   `Bⱼ = IBⱼ⁻¹ · Cⱼ⁻¹`, no `geomBindTransform` (identity): `M · Sⱼ · Bⱼ⁻¹ = W · IBⱼ` for any
//!   `Cⱼ`; `SkelAnimation` and `restTransforms` hold each joint relative to its parent as
//!   written, `Lⱼ = TRS(S̃ₚ⁻¹ · Sⱼ)` with `S̃ₚ` the parent's composed written matrix (so the
//!   rounding of a parent does not carry into its children), a root joint's `TRS(Sⱼ)`;
//! - `Cⱼ` the scale of `IBⱼ⁻¹` (a diagonal matrix), so that every bind matrix is rigid (a
//!   bone's rest matrix holds no scale in Blender, which reads `bindTransforms` as rest
//!   matrices) and a joint at its bind pose has scale exactly 1 (`SkelAnimation` scales are
//!   `half`s: a bone scaled 0.01, an FBX rig in centimetres, would be rounded by 2e-4 of its
//!   size);
//! - the mesh prim keeps its node's frame too (the skinned prim's own transform is ignored by
//!   UsdSkel, and equal to the skeleton's here, so readers that apply it agree);
//! - weights divided by their sum, `elementSize` = the most influences of a vertex (shorter
//!   lists padded with joint 0 at weight 0), joint indices in the written joint order;
//! - the mesh's normals, when every corner of a vertex has the same one, as `vertex` normals
//!   (UsdSkel skins those; face-varying ones it leaves alone), and blend-shape `normalOffsets`
//!   with them.
//!
//! A rig whose local transforms TRS cannot hold (a shear between a joint and its parent that
//! their skeleton-space matrices do not have) is written with every joint a root, with a
//! warning.
//!
//! # Samples
//! `SkelAnimation` holds `translations` (`float3`), `rotations` (`quatf`) and `scales`
//! (**`half3`**: 11 significant bits) per joint; USD interpolates translations and scales
//! linearly and rotations by slerp. The joints are sampled at the timeline's grid (every frame
//! and key) and between two samples at a quarter, half and three quarters of the interval;
//! where the interpolated joint matrix, placed by `M`, strays more than the tolerance from the
//! evaluated one
//! the interval is split (down to [`resample::min_span`]), as the points sampler
//! ([`super::deform`]) does. The error of a joint matrix `M` against `W` is bounded by
//! `‖M₃ − W₃‖_F · rⱼ + |t_M − t_W|`, `rⱼ` the largest distance from the joint of a vertex it
//! moves (in its bind frame).
//!
//! # When a mesh is not rigged
//! A skinned mesh stays posed `points` time samples ([`super::deform`]) when the rig could
//! not reproduce keyscene's pose: in-between levels UsdSkel does not blend as keyscene does
//! (`inbetweens_agree`), a geometry cache or a morph track on it; dual
//! quaternion skinning; a vertex without positive weight (keyscene leaves it with its node);
//! a joint whose node is missing or whose inverse bind matrix has no inverse; or a bone world
//! matrix at some sample that TRS with a `half` scale cannot hold within the tolerance (shear
//! from a non-uniformly scaled parent, a scale `half` rounds too far). Each is a warning.

use glam::{DMat3, DMat4, DQuat, DVec3, Vec3};

use super::text::Text;
use super::xform::Timeline;
use crate::anim::{resample, ChannelTarget, PartialPose};
use crate::scene::Scene;

/// Most joint samples (frames × joints, over every rig) the adaptive sampler adds.
pub const JOINT_BUDGET: usize = 1 << 22;

/// A joint's local transform as `SkelAnimation` stores it: translation, rotation and a scale
/// rounded to `half`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Trs {
    /// Translation (`float3`).
    pub t: DVec3,
    /// Rotation (`quatf`; written `(w, x, y, z)`).
    pub r: DQuat,
    /// Scale, each component rounded to the nearest `half` ([`to_half`]).
    pub s: DVec3,
}

impl Trs {
    /// The matrix USD composes: translate · rotate · scale (column vectors).
    pub fn matrix(&self) -> DMat4 {
        DMat4::from_scale_rotation_translation(self.s, self.r, self.t)
    }

    /// USD's interpolation at `u` in 0..=1: translations and scales linear, rotations slerp.
    fn lerp(&self, b: &Trs, u: f64) -> Trs {
        Trs { t: self.t.lerp(b.t, u), r: self.r.slerp(b.r, u), s: self.s.lerp(b.s, u) }
    }
}

/// `x` rounded to the nearest IEEE 754 half-precision value (ties to even), infinite past
/// the largest half (65504); NaN stays NaN.
pub fn to_half(x: f64) -> f64 {
    if !x.is_finite() || x == 0.0 {
        return x;
    }
    let a = x.abs();
    if a >= 65520.0 {
        return f64::INFINITY.copysign(x);
    }
    // Normal halves have 11 significant bits; below 2⁻¹⁴ the step is 2⁻²⁴ (subnormals).
    let e = a.log2().floor().max(-14.0);
    let step = (e - 10.0).exp2();
    let q = a / step;
    let r = q.round();
    let r = if (q - q.floor() - 0.5).abs() < f64::EPSILON && r % 2.0 != 0.0 { r - 1.0 } else { r };
    (r * step).copysign(x)
}

/// One skinned mesh node written as a rig.
#[derive(Debug, Clone)]
pub struct Rig {
    /// The skinned mesh node.
    pub node: usize,
    /// The joints' nodes, in the written order: parents before their children
    /// (`Rig::with_tree`).
    pub joints: Vec<usize>,
    /// Per joint: its parent joint (index into [`Rig::joints`]), the nearest ancestor node of
    /// its node that is a joint of the skin; `None`: a root joint.
    pub parent: Vec<Option<usize>>,
    /// `bindTransforms`: each joint's `inverse_bind⁻¹ · C⁻¹`.
    pub bind: Vec<DMat4>,
    /// Per joint: `C⁻¹`'s diagonal, the inverse of the bone's scale at the first frame (1
    /// where that scale is 0 or not finite).
    unscale: Vec<DVec3>,
    /// Per joint: the largest distance of a vertex it moves from it, in its bind frame.
    reach: Vec<f64>,
    /// `primvars:skel:jointIndices`, `elementSize` per vertex.
    pub indices: Vec<u32>,
    /// `primvars:skel:jointWeights`, divided by each vertex's sum.
    pub weights: Vec<f32>,
    /// Influences per vertex (`elementSize`).
    pub element_size: usize,
    /// The rig's index among the written rigs (its place in [`Motion::values`]).
    pub index: usize,
    /// The mesh (index into [`Scene::meshes`]).
    pub mesh: usize,
    /// The mesh's blend shapes, as `UsdSkel.BlendShape`s.
    pub shapes: Vec<Shape>,
    /// Per joint: the linear part of `C · inverse_bind`, to bound how far the skinning
    /// carries a blend shape's error.
    ib3: Vec<DMat3>,
    /// The mesh's normals, one per vertex (`interpolation = "vertex"`), through the normal
    /// matrix keyscene deforms them with, not normalised (blend-shape normal offsets add to
    /// them, and UsdSkel normalises after): when every corner of a vertex has the same normal
    /// ([`vertex_normals`]). `None`: no normals are written on the rig.
    pub vertex_normals: Option<Vec<DVec3>>,
}

/// One blend shape of a rig: a [`MorphTarget`](crate::scene::MorphTarget), its offsets with
/// the vertex weights applied, carried through the node's geometric transform (as the points
/// are), listed for the vertices any of its shapes moves.
#[derive(Debug, Clone)]
pub struct Shape {
    /// The `BlendShape` prim's name (the target's name as an identifier, unique on the mesh).
    pub name: String,
    /// `pointIndices`.
    pub indices: Vec<u32>,
    /// `offsets`, one per index.
    pub offsets: Vec<DVec3>,
    /// `normalOffsets`, one per index, when the target has normal offsets and the mesh's
    /// normals are written per vertex ([`Rig::vertex_normals`]).
    pub normal_offsets: Option<Vec<DVec3>>,
    /// In-between shapes (`inbetweens:<name>` attributes, `UsdSkelInbetweenShape`): name,
    /// `weight`, offsets and normal offsets (as above), one per index.
    pub inbetweens: Vec<Inbetween>,
    /// How far a unit of channel weight can move a vertex (the steepest segment of the
    /// piecewise-linear shape over the weight; the longest offset without in-betweens).
    size: f64,
    /// The weights where the shape's slope over the weight changes: the sub-shape levels (0,
    /// the in-betweens', 1) but the lowest and the highest (past those both rules extrapolate
    /// the end segment). Empty without in-betweens.
    kinks: Vec<f64>,
}

/// One in-between shape of a [`Shape`].
#[derive(Debug, Clone)]
pub struct Inbetween {
    /// The attribute's name after `inbetweens:`.
    pub name: String,
    /// The channel weight at which the shape applies in full (`weight` metadata).
    pub weight: f64,
    /// Offsets, one per [`Shape::indices`].
    pub offsets: Vec<DVec3>,
    /// Normal offsets, one per [`Shape::indices`], when the shape has normal offsets.
    pub normal_offsets: Option<Vec<DVec3>>,
}

/// UsdSkel's tolerance on in-between weights (`EPS` of `UsdSkelBlendShapeQuery`: a weight
/// this close to 0 or 1 is skipped, sub-shapes this close together blend nothing).
const INBETWEEN_EPS: f64 = 1e-6;

/// Whether UsdSkel blends the in-betweens of `t` as keyscene does
/// ([`crate::anim::inbetween_weights`], ufbx's rule), docs/usd.md "Blend shapes". Both put an
/// empty shape at weight 0 and the target at 1, blend the two shapes around the weight
/// linearly, and past the first or last shape extrapolate the nearest two: the same rule at
/// every weight, inside 0–1 and outside, whatever the first in-between's weight. They differ
/// only for levels UsdSkel does not take: not finite, within [`INBETWEEN_EPS`] of 0 (UsdSkel
/// skips it and blends from the empty shape, ufbx blends from it) or of 1 and above (keyscene
/// places the target at 1 after the in-betweens), or two levels that close (UsdSkel blends
/// nothing between them).
fn inbetweens_agree(t: &crate::scene::MorphTarget) -> bool {
    let mut prev = f64::NEG_INFINITY;
    for &(l, _) in &t.inbetweens {
        if !l.is_finite() || l.abs() <= INBETWEEN_EPS || l >= 1.0 - INBETWEEN_EPS {
            return false;
        }
        if l - prev <= INBETWEEN_EPS {
            return false;
        }
        prev = l;
    }
    true
}

/// The rig of skinned or blend-shaped mesh node `k` (without samples), or why it cannot be
/// one.
fn rig_of(scene: &Scene, line: &Timeline, k: usize) -> Result<Rig, String> {
    let node = &scene.nodes[k];
    let mi = node.mesh.filter(|&m| m < scene.meshes.len()).ok_or("no mesh")?;
    let mesh = &scene.meshes[mi];
    if mesh.geometry_cache.is_some() {
        return Err("it has a geometry cache".into());
    }
    if !mesh.morph_targets.iter().all(inbetweens_agree) {
        return Err("a blend shape's in-between weights are ones UsdSkel does not blend as keyscene does (not finite, at 0, at or past 1, or two within 1e-6)".into());
    }
    let g = node.geometry_transform();
    // keyscene's normal matrix: the skinning matrix's inverse transpose (its `G` included),
    // or without a skin ufbx's "compatible" one, the rotation of `G` only
    // (`Pose::world_corner_normals`).
    let nm = if mesh.skin.is_some() {
        DMat3::from_mat4(g).inverse().transpose()
    } else {
        DMat3::from_quat(g.to_scale_rotation_translation().1)
    };
    let normals: Option<Vec<DVec3>> = vertex_normals(mesh)
        .filter(|_| nm.is_finite())
        .map(|n| n.iter().map(|v| nm * v.as_dvec3()).collect());
    let shapes = shapes(mesh, &g, normals.as_ref().map(|_| nm));
    let empty = crate::scene::Skin {
        joints: Vec::new(),
        influences: Vec::new(),
        dq_weights: Vec::new(),
        mesh_bind: None,
    };
    let skin = match mesh.skin.and_then(|s| scene.skins.get(s)) {
        Some(s) => s,
        None if !shapes.is_empty() => &empty,
        None => return Err("no skin and no blend shape".into()),
    };
    let channels = crate::anim::channels_by_node(scene, line.animation);
    if channels[k].iter().any(|c| matches!(c, ChannelTarget::Morph(_))) {
        return Err("a morph track switches its mesh".into());
    }
    if skin.dq_weights.iter().any(|&d| d != 0.0) {
        return Err("it is skinned by dual quaternions".into());
    }
    let mut bind = Vec::with_capacity(skin.joints.len());
    let mut unscale = Vec::with_capacity(skin.joints.len());
    let mut to_joint = Vec::with_capacity(skin.joints.len());
    for j in &skin.joints {
        let b = j.inverse_bind.inverse();
        if j.node >= scene.nodes.len() || !b.is_finite() || j.inverse_bind.determinant() == 0.0 {
            return Err("a joint's node is missing or its bind matrix has no inverse".into());
        }
        let s = b.to_scale_rotation_translation().0;
        let u = DVec3::from_array(s.to_array().map(|x| {
            let u = 1.0 / x;
            if u.is_finite() && u != 0.0 {
                u
            } else {
                1.0
            }
        }));
        bind.push(b * DMat4::from_scale(u));
        unscale.push(u);
        to_joint.push(DMat4::from_scale(1.0 / u) * j.inverse_bind * node.geometry_transform());
    }
    let n = mesh.positions.len();
    let ib3 = skin
        .joints
        .iter()
        .zip(&unscale)
        .map(|(j, &u)| DMat3::from_mat4(DMat4::from_scale(1.0 / u) * j.inverse_bind))
        .collect();
    if skin.joints.is_empty() {
        return Ok(Rig {
            node: k,
            joints: Vec::new(),
            parent: Vec::new(),
            bind,
            unscale,
            reach: Vec::new(),
            indices: Vec::new(),
            weights: Vec::new(),
            element_size: 0,
            index: 0,
            mesh: mi,
            shapes,
            ib3,
            vertex_normals: normals,
        });
    }
    if skin.influences.len() < n {
        return Err("a vertex has no weight".into());
    }
    let element_size = skin.influences[..n].iter().map(Vec::len).max().unwrap_or(0).max(1);
    let mut reach = vec![0.0f64; skin.joints.len()];
    let mut indices = Vec::with_capacity(n * element_size);
    let mut weights = Vec::with_capacity(n * element_size);
    for (p, inf) in mesh.positions.iter().zip(&skin.influences) {
        let total: f64 = inf.iter().map(|&(_, w)| f64::from(w)).sum();
        if total.is_nan() || total <= 0.0 || total.is_infinite() {
            return Err("a vertex has no positive total weight".into());
        }
        for &(j, w) in inf {
            let ju = j as usize;
            let m = to_joint.get(ju).ok_or("a weight names a joint the skin lacks")?;
            let local = m.transform_point3(*p);
            reach[ju] = reach[ju].max(local.length());
            indices.push(j);
            weights.push((f64::from(w) / total) as f32);
        }
        for _ in inf.len()..element_size {
            indices.push(0);
            weights.push(0.0);
        }
    }
    let joints: Vec<usize> = skin.joints.iter().map(|j| j.node).collect();
    let parent = vec![None; joints.len()];
    let rig = Rig {
        node: k,
        joints,
        parent,
        bind,
        unscale,
        reach,
        indices,
        weights,
        element_size,
        index: 0,
        mesh: mi,
        shapes,
        ib3,
        vertex_normals: normals,
    };
    Ok(rig.with_tree(scene))
}

/// Most path elements (joints × their depth) of a skeleton's `joints`; past it the joints are
/// written as roots (a deep chain would make the paths quadratic in its depth).
const PATH_BUDGET: usize = 1 << 20;

impl Rig {
    /// The rig with its joints in a tree (docs/usd.md, "The joint hierarchy"): each joint's
    /// parent is the nearest ancestor node of its node that is a joint of the skin (ancestors
    /// that are not are folded into the joint's local transform), and the joints are
    /// reordered parents first (UsdSkel's topology requires it), shallower joints first and
    /// in skin order within a depth; `jointIndices` follow. Unchanged (every joint a root)
    /// past [`PATH_BUDGET`].
    fn with_tree(mut self, scene: &Scene) -> Rig {
        let n = self.joints.len();
        let mut of_node: std::collections::HashMap<usize, usize> = Default::default();
        for (j, &node) in self.joints.iter().enumerate() {
            of_node.entry(node).or_insert(j);
        }
        let skin_parent: Vec<Option<usize>> = self
            .joints
            .iter()
            .map(|&node| {
                let mut p = scene.nodes.get(node)?.parent;
                for _ in 0..scene.nodes.len() {
                    let q = p?;
                    if let Some(&j) = of_node.get(&q) {
                        return Some(j);
                    }
                    p = scene.nodes.get(q)?.parent;
                }
                None
            })
            .collect();
        let mut depth = vec![usize::MAX; n];
        for j in 0..n {
            let (mut chain, mut at, mut base) = (Vec::new(), Some(j), 0);
            while let Some(x) = at {
                if depth[x] != usize::MAX {
                    base = depth[x] + 1;
                    break;
                }
                chain.push(x);
                at = skin_parent[x];
            }
            for (d, &x) in chain.iter().rev().enumerate() {
                depth[x] = base + d;
            }
        }
        if depth.iter().map(|d| d + 1).sum::<usize>() > PATH_BUDGET {
            return self;
        }
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by_key(|&j| depth[j]);
        let mut remap = vec![0u32; n];
        for (i, &j) in order.iter().enumerate() {
            remap[j] = i as u32;
        }
        fn permuted<T: Clone>(v: &[T], order: &[usize]) -> Vec<T> {
            order.iter().map(|&j| v[j].clone()).collect()
        }
        self.parent = order.iter().map(|&j| skin_parent[j].map(|p| remap[p] as usize)).collect();
        self.joints = permuted(&self.joints, &order);
        self.bind = permuted(&self.bind, &order);
        self.unscale = permuted(&self.unscale, &order);
        self.reach = permuted(&self.reach, &order);
        self.ib3 = permuted(&self.ib3, &order);
        for i in &mut self.indices {
            *i = remap.get(*i as usize).copied().unwrap_or(*i);
        }
        self
    }

    /// Each joint's skeleton-space matrix from its local ones (`local[j]` relative to its
    /// parent's, which comes first).
    fn compose(&self, local: impl Iterator<Item = DMat4>) -> Vec<DMat4> {
        let mut out: Vec<DMat4> = Vec::with_capacity(self.joints.len());
        for (j, m) in local.enumerate() {
            let c = match self.parent.get(j).copied().flatten() {
                Some(p) => out[p] * m,
                None => m,
            };
            out.push(c);
        }
        out
    }
}

/// The blend shapes of `mesh` ([`Shape`]), offsets through `g`'s linear part, normal offsets
/// (when the mesh's normals are written per vertex) through their normal matrix `nm`.
/// A target with in-betweens gets each in-between's normal offsets as its weight times the
/// target's: keyscene adds a target's normal offsets times the channel weight, whatever its
/// in-betweens ([`crate::anim::Pose::world_corner_normals`]), and UsdSkel's piecewise-linear
/// blend of those is that line at every weight.
fn shapes(mesh: &crate::scene::Mesh, g: &DMat4, nm: Option<DMat3>) -> Vec<Shape> {
    let g3 = DMat3::from_mat4(*g);
    let gn = nm.unwrap_or(DMat3::IDENTITY);
    let mut names = super::names::Siblings::default();
    let n = mesh.positions.len();
    mesh.morph_targets
        .iter()
        .map(|t| {
            let deltas = t.weighted_deltas(None);
            let between: Vec<_> =
                (0..t.inbetweens.len()).map(|k| t.weighted_deltas(Some(k))).collect();
            let nd = t.weighted_normal_deltas().filter(|d| nm.is_some() && d.len() >= n);
            let moved = |i: usize| {
                deltas.get(i).is_some_and(|d| *d != DVec3::ZERO)
                    || between.iter().any(|b| b.get(i).is_some_and(|d| *d != DVec3::ZERO))
                    || nd.as_ref().is_some_and(|d| d[i] != Vec3::ZERO)
            };
            let indices: Vec<u32> = (0..n).filter(|&i| moved(i)).map(|i| i as u32).collect();
            let at = |d: &[DVec3]| -> Vec<DVec3> {
                indices
                    .iter()
                    .map(|&i| g3 * d.get(i as usize).copied().unwrap_or(DVec3::ZERO))
                    .collect()
            };
            let normal_at = |scale: f64| {
                nd.as_ref().map(|d| {
                    indices.iter().map(|&i| gn * (d[i as usize].as_dvec3() * scale)).collect()
                })
            };
            let offsets = at(&deltas);
            let mut levels: Vec<(f64, Vec<DVec3>)> = vec![(0.0, vec![DVec3::ZERO; indices.len()])];
            let mut ibs = Vec::new();
            let mut ib_names = super::names::Siblings::default();
            for (k, b) in between.iter().enumerate() {
                let w = t.inbetweens[k].0;
                let o = at(b);
                levels.push((w, o.clone()));
                let name = ib_names.claim(&format!("{}_{}", t.name, k + 1));
                ibs.push(Inbetween { name, weight: w, offsets: o, normal_offsets: normal_at(w) });
            }
            levels.push((1.0, offsets.clone()));
            levels.sort_by(|a, b| a.0.total_cmp(&b.0));
            let kinks = if ibs.is_empty() {
                Vec::new()
            } else {
                levels[1..levels.len() - 1].iter().map(|l| l.0).collect()
            };
            let size = levels
                .windows(2)
                .map(|p| {
                    let dw = p[1].0 - p[0].0;
                    let most =
                        p[0].1.iter().zip(&p[1].1).map(|(a, b)| a.distance(*b)).fold(0.0, f64::max);
                    if dw > 0.0 {
                        most / dw
                    } else {
                        f64::INFINITY
                    }
                })
                .fold(0.0, f64::max);
            let normal_offsets = normal_at(1.0);
            Shape {
                name: names.claim(&t.name),
                indices,
                offsets,
                normal_offsets,
                inbetweens: ibs,
                size,
                kinks,
            }
        })
        .collect()
}

/// The mesh's normals as one per vertex, when every corner of a vertex has the same stored
/// normal (UsdSkel deforms `vertex` normals only: `UsdSkelBakeSkinning` leaves face-varying
/// normals as they are, and blend-shape normal offsets are per point); `None` otherwise or
/// without normals.
pub fn vertex_normals(mesh: &crate::scene::Mesh) -> Option<Vec<Vec3>> {
    let attr = mesh.normals.as_ref()?;
    let mut out: Vec<Option<Vec3>> = vec![None; mesh.positions.len()];
    for p in 0..mesh.polygon_count() {
        for c in mesh.polygon_corners(p) {
            let v = mesh.corner_vertices[c] as usize;
            let n = attr.get(mesh.corner_vertices[c], c, p)?;
            match out.get_mut(v)? {
                Some(had) if *had != n => return None,
                slot => *slot = Some(n),
            }
        }
    }
    Some(out.into_iter().map(|n| n.unwrap_or(Vec3::ZERO)).collect())
}

/// The bound of the distance a vertex of joint `j` of `rig` moves between joint matrices `m`
/// and `w` (module docs, "Samples").
fn joint_error(rig: &Rig, j: usize, m: &DMat4, w: &DMat4) -> f64 {
    let d = DMat3::from_mat4(*m) - DMat3::from_mat4(*w);
    let e = frobenius(d) * rig.reach[j] + (m.w_axis - w.w_axis).truncate().length();
    if e.is_nan() {
        f64::INFINITY
    } else {
        e
    }
}

/// The Frobenius norm of `m`: a bound of how far it moves a unit vector.
fn frobenius(m: DMat3) -> f64 {
    (m.x_axis.length_squared() + m.y_axis.length_squared() + m.z_axis.length_squared()).sqrt()
}

/// The TRS of matrix `w` with its scale rounded to `half` (the rotation's sign is settled
/// once the samples are in order, [`sample`]; the sampler's slerp takes the short way).
fn trs(w: &DMat4) -> Trs {
    let (s, r, t) = w.to_scale_rotation_translation();
    Trs { t, r, s: DVec3::new(to_half(s.x), to_half(s.y), to_half(s.z)) }
}

/// One rig at one time: its mesh node's world matrix `M` (the skeleton prim's frame) and each
/// joint's `W · C⁻¹` in world space.
#[derive(Debug, Clone, Default)]
struct At {
    node: DMat4,
    joints: Vec<DMat4>,
}

/// Every rig at frame `f`: the world matrices of the rigs' nodes and joints only (and of what
/// they depend on), from `pose` ([`PartialPose`]: bit for bit [`Scene::evaluate`]'s).
fn worlds(pose: &mut PartialPose, rigs: &[Rig], f: f64) -> Vec<At> {
    pose.set_frame(f);
    rigs.iter()
        .map(|r| At {
            node: pose.world(r.node),
            joints: r
                .joints
                .iter()
                .zip(&r.unscale)
                .map(|(&j, &u)| pose.world(j) * DMat4::from_scale(u))
                .collect(),
        })
        .collect()
}

/// The sampled joint motion of every rig: frames, and per frame per rig per joint its
/// [`Trs`].
#[derive(Debug, Default)]
pub struct Motion {
    /// Sample frames (time codes).
    pub frames: Vec<f64>,
    /// `values[i][r][j]`: rig `r`'s joint `j` at `frames[i]`.
    pub values: Vec<Vec<Vec<Trs>>>,
    /// Sample frames of the blend-shape weights (their own: USD samples each attribute
    /// apart).
    pub weight_frames: Vec<f64>,
    /// `weights[i][r][s]`: rig `r`'s blend shape `s` at `weight_frames[i]`.
    pub weights: Vec<Vec<Vec<f32>>>,
    /// Whether the layer has a timeline (an animation is written).
    pub animated: bool,
}

/// Every rig's blend-shape weights at frame `f` ([`crate::anim::Pose::morph_weights`]), and
/// per rig how much a unit of offset in the mesh's frame can move in the world (a bound: the
/// largest Frobenius norm of its skinning matrices, or of its node's matrix without a skin).
fn shape_weights(pose: &mut PartialPose, rigs: &[Rig], f: f64) -> (Vec<Vec<f32>>, Vec<f64>) {
    pose.set_frame(f);
    let weights = rigs
        .iter()
        .map(|r| {
            let w = pose.morph_weights(r.mesh);
            (0..r.shapes.len()).map(|s| w.get(s).copied().unwrap_or(0.0) as f32).collect()
        })
        .collect();
    let scale = rigs
        .iter()
        .map(|r| {
            if r.joints.is_empty() {
                return frobenius(DMat3::from_mat4(pose.world(r.node)));
            }
            r.joints
                .iter()
                .zip(&r.unscale)
                .zip(&r.ib3)
                .map(|((&j, &u), ib)| {
                    frobenius(DMat3::from_mat4(pose.world(j) * DMat4::from_scale(u)) * *ib)
                })
                .fold(0.0, f64::max)
        })
        .collect();
    (weights, scale)
}

/// The blend-shape weights of `rigs` on the timeline: its grid, split where the linear
/// interpolation of the weights moves a vertex more than the tolerance from the evaluated
/// weights (`Σ |Δw| · longest offset · scale`) at a quarter, half or three quarters of an
/// interval (down to [`resample::min_span`]). Empty when no rig has a blend shape.
fn sample_weights(scene: &Scene, line: &Timeline, rigs: &[Rig]) -> (Vec<f64>, Vec<Vec<Vec<f32>>>) {
    if rigs.iter().all(|r| r.shapes.is_empty()) {
        return (Vec::new(), Vec::new());
    }
    let err = |a: &[Vec<f32>], b: &[Vec<f32>], u: f64, x: &(Vec<Vec<f32>>, Vec<f64>)| {
        let mut worst = 0.0f64;
        for (r, rig) in rigs.iter().enumerate() {
            let mut e = 0.0;
            for (s, shape) in rig.shapes.iter().enumerate() {
                let lerp = f64::from(a[r][s]) + (f64::from(b[r][s]) - f64::from(a[r][s])) * u;
                e += (lerp - f64::from(x.0[r][s])).abs() * shape.size;
            }
            worst = worst.max(e * x.1[r]);
        }
        if worst.is_nan() {
            0.0
        } else {
            worst
        }
    };
    let (mut frames, mut values): (Vec<f64>, Vec<Vec<Vec<f32>>>) = (Vec::new(), Vec::new());
    let mut budget = JOINT_BUDGET / rigs.iter().map(|r| r.shapes.len()).sum::<usize>().max(1);
    let pose = &mut PartialPose::new(scene, line.animation);
    // An explicit stack of intervals (no recursion): (start, end, their weights).
    for &f in &line.grid {
        let here = shape_weights(pose, rigs, f).0;
        if let (Some(&fa), Some(a)) = (frames.last(), values.last().cloned()) {
            let mut todo = vec![(fa, a, f, here.clone())];
            let mut added: Vec<(f64, Vec<Vec<f32>>)> = Vec::new();
            while let Some((fa, a, fb, b)) = todo.pop() {
                let span = fb - fa;
                if span <= resample::min_span(fb) || budget == 0 {
                    continue;
                }
                if let Some((fc, c)) = kink_crossing(pose, rigs, (fa, &a), (fb, &b)) {
                    budget -= 1;
                    added.push((fc, c.clone()));
                    todo.push((fa, a, fc, c.clone()));
                    todo.push((fc, c, fb, b));
                    continue;
                }
                let mid = shape_weights(pose, rigs, fa + span / 2.0);
                let mut worst = err(&a, &b, 0.5, &mid);
                for u in [0.25, 0.75] {
                    if worst <= line.tol() {
                        worst =
                            worst.max(err(&a, &b, u, &shape_weights(pose, rigs, fa + span * u)));
                    }
                }
                if worst <= line.tol() {
                    continue;
                }
                budget -= 1;
                let fm = fa + span / 2.0;
                added.push((fm, mid.0.clone()));
                todo.push((fa, a, fm, mid.0.clone()));
                todo.push((fm, mid.0, fb, b));
            }
            added.sort_by(|x, y| x.0.total_cmp(&y.0));
            for (f, v) in added {
                frames.push(f);
                values.push(v);
            }
        }
        frames.push(f);
        values.push(here);
    }
    (frames, values)
}

/// How close to a kink a sampled weight counts as on it ([`kink_crossing`]).
const KINK_SNAP: f64 = 1e-6;

/// Where the weights of `rigs` cross a kink of an in-between shape ([`Shape::kinks`]) strictly
/// inside the interval `a → b`: the time (found by bisection) and the weights there. UsdSkel
/// blends the in-betweens at the linearly interpolated weight and `UsdSkel.BakeSkinning` bakes
/// points at the samples and interpolates those: a sample at each kink makes the shape linear
/// in the weight between samples, so both agree with the evaluated weights within the
/// weights' own sampling error. `None` when no weight crosses a kink by more than
/// [`KINK_SNAP`].
fn kink_crossing(
    pose: &mut PartialPose,
    rigs: &[Rig],
    a: (f64, &[Vec<f32>]),
    b: (f64, &[Vec<f32>]),
) -> Option<(f64, Vec<Vec<f32>>)> {
    let side = |w: f32, k: f64| {
        let d = f64::from(w) - k;
        if d.abs() <= KINK_SNAP {
            0.0
        } else {
            d.signum()
        }
    };
    let (r, s, k) = rigs.iter().enumerate().find_map(|(r, rig)| {
        rig.shapes.iter().enumerate().find_map(|(s, shape)| {
            let k = shape.kinks.iter().find(|&&k| side(a.1[r][s], k) * side(b.1[r][s], k) < 0.0)?;
            Some((r, s, *k))
        })
    })?;
    let start = side(a.1[r][s], k);
    let (mut lo, mut hi) = (a.0, b.0);
    let mut at = None;
    for _ in 0..60 {
        let mid = lo + (hi - lo) / 2.0;
        if mid <= lo || mid >= hi {
            break;
        }
        let w = shape_weights(pose, rigs, mid).0;
        let here = side(w[r][s], k);
        at = Some((mid, w));
        if here == 0.0 {
            break;
        }
        if here == start {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    at
}

/// The rigs of `candidates` (skinned mesh nodes) that can be written as UsdSkel rigs, their
/// sampled motion, and a warning per node that cannot (module docs).
pub fn rigs(
    scene: &Scene,
    line: &Timeline,
    candidates: &[usize],
) -> (Vec<Rig>, Motion, Vec<String>) {
    let mut warnings = Vec::new();
    let mut rigs = Vec::new();
    for &k in candidates {
        match rig_of(scene, line, k) {
            Ok(r) => rigs.push(r),
            Err(why) => warnings.push(format!(
                "deformed mesh node \"{}\" written as posed points, not as a UsdSkel rig: {why}",
                scene.nodes[k].name
            )),
        }
    }
    // Rigs whose joints TRS cannot hold at a grid frame lose their hierarchy, then drop out,
    // and the grid is sampled again (each round changes at least one rig).
    let mut flattened = Vec::new();
    loop {
        if rigs.is_empty() {
            return (rigs, Motion::default(), warnings);
        }
        let (mut motion, bad) = sample(scene, line, &rigs);
        if bad.is_empty() {
            for (i, r) in rigs.iter_mut().enumerate() {
                r.index = i;
            }
            (motion.weight_frames, motion.weights) = sample_weights(scene, line, &rigs);
            motion.animated = line.animation.is_some();
            for rig in rigs.iter().filter(|r| flattened.contains(&r.node)) {
                warnings.push(format!(
                    "rig of mesh node \"{}\": joints written as roots, not in the bones' hierarchy: a joint relative to its parent is not translate · rotate · scale with a half-precision scale within the tolerance",
                    scene.nodes[rig.node].name
                ));
            }
            return (rigs, motion, warnings);
        }
        for &r in bad.iter().rev() {
            // First without the hierarchy: a local transform between two joints can hold a
            // shear their skeleton-space matrices do not.
            if rigs[r].parent.iter().any(Option::is_some) {
                let rig = &mut rigs[r];
                rig.parent = vec![None; rig.joints.len()];
                flattened.push(rig.node);
                continue;
            }
            let rig = rigs.remove(r);
            warnings.push(format!(
                "deformed mesh node \"{}\" written as posed points, not as a UsdSkel rig: a bone's world matrix is not translate · rotate · scale with a half-precision scale within the tolerance (shear or scale)",
                scene.nodes[rig.node].name
            ));
        }
    }
}

/// Samples `rigs` on the timeline; also returns the rigs (indices) whose joints TRS cannot
/// hold within the tolerance at some sample.
fn sample(scene: &Scene, line: &Timeline, rigs: &[Rig]) -> (Motion, Vec<usize>) {
    let joints: usize = rigs.iter().map(|r| r.joints.len()).sum::<usize>().max(1);
    let mut budget = JOINT_BUDGET / joints;
    let mut bad = vec![false; rigs.len()];
    let mut m = Motion::default();
    let pose = &mut PartialPose::new(scene, line.animation);
    for &f in &line.grid {
        let w = worlds(pose, rigs, f);
        let here = to_trs(rigs, &w, line.tol(), &mut bad);
        if let (Some(&fa), Some(a)) = (m.frames.last(), m.values.last().cloned()) {
            let mut cut = Cut { pose, line, rigs, budget: &mut budget, bad: &mut bad };
            cut.refine((fa, a), (f, here.clone()), None, &mut m);
        }
        m.frames.push(f);
        m.values.push(here);
    }
    // Each rotation on the side of the one before it: USD's slerp and the sampler's then
    // take the same (short) way between every two samples.
    for i in 1..m.values.len() {
        let (before, after) = m.values.split_at_mut(i);
        for (pr, ar) in before[i - 1].iter().zip(after[0].iter_mut()) {
            for (p, a) in pr.iter().zip(ar.iter_mut()) {
                if p.r.dot(a.r) < 0.0 {
                    a.r = -a.r;
                }
            }
        }
    }
    (m, bad.iter().enumerate().filter(|b| *b.1).map(|b| b.0).collect())
}

/// The [`Trs`] of every joint of `w` (per rig) relative to its parent joint as written (the
/// skeleton-space `M⁻¹ · W · C⁻¹` of the joint, times the inverse of its parent's composed
/// written matrix, so that the rounding of one joint does not carry into its children), or to
/// the mesh node's frame for a root joint; marks in `bad` the rigs whose composed TRS, placed
/// by `M`, strays from `W · C⁻¹` past `tol` (or whose `M` has no inverse).
fn to_trs(rigs: &[Rig], w: &[At], tol: f64, bad: &mut [bool]) -> Vec<Vec<Trs>> {
    rigs.iter()
        .enumerate()
        .map(|(r, rig)| {
            let at = &w[r];
            let inv = at.node.inverse();
            bad[r] |= !inv.is_finite();
            let mut composed: Vec<DMat4> = Vec::with_capacity(rig.joints.len());
            (0..rig.joints.len())
                .map(|j| {
                    let skel = inv * at.joints[j];
                    let parent = rig.parent.get(j).copied().flatten().map(|p| composed[p]);
                    let x = trs(&parent.map_or(skel, |p| p.inverse() * skel));
                    let c = parent.map_or(x.matrix(), |p| p * x.matrix());
                    composed.push(c);
                    let e = joint_error(rig, j, &(at.node * c), &at.joints[j]);
                    bad[r] |= e.is_nan() || e > tol;
                    x
                })
                .collect()
        })
        .collect()
}

/// The adaptive split of one interval (module docs, "Samples").
struct Cut<'a, 's> {
    pose: &'a mut PartialPose<'s>,
    line: &'a Timeline,
    rigs: &'a [Rig],
    budget: &'a mut usize,
    bad: &'a mut [bool],
}

impl Cut<'_, '_> {
    /// Appends to `m` the samples the interval `a → b` needs strictly between them, in order.
    /// `known`: the rigs at some frame already evaluated (a quarter of the parent interval),
    /// taken as the middle's when it is that frame (the same bits).
    fn refine(
        &mut self,
        a: (f64, Vec<Vec<Trs>>),
        b: (f64, Vec<Vec<Trs>>),
        mut known: Option<(f64, Vec<At>)>,
        m: &mut Motion,
    ) {
        let span = b.0 - a.0;
        if span <= resample::min_span(b.0) || *self.budget == 0 {
            return;
        }
        let tol = self.line.tol();
        let mut worst = 0.0f64;
        // The rigs at the middle, a quarter and three quarters, as far as tested.
        let mut at: [Option<(f64, Vec<At>)>; 3] = [None, None, None];
        for (i, u) in [0.5, 0.25, 0.75].into_iter().enumerate() {
            let f = a.0 + span * u;
            let w = match known.take() {
                Some((k, w)) if i == 0 && k.to_bits() == f.to_bits() => w,
                _ => worlds(self.pose, self.rigs, f),
            };
            for (r, rig) in self.rigs.iter().enumerate() {
                let lerped = a.1[r].iter().zip(&b.1[r]).map(|(x, y)| x.lerp(y, u).matrix());
                for (j, c) in rig.compose(lerped).iter().enumerate() {
                    worst = worst.max(joint_error(rig, j, &(w[r].node * *c), &w[r].joints[j]));
                }
            }
            at[i] = Some((f, w));
            if i == 0 && worst > tol {
                break;
            }
        }
        if worst <= tol {
            return;
        }
        *self.budget -= 1;
        let [mid, first, second] = at;
        let w = mid.map(|m| m.1).unwrap_or_default();
        let at_mid = to_trs(self.rigs, &w, tol, self.bad);
        let f = a.0 + span / 2.0;
        self.refine(a, (f, at_mid.clone()), first, m);
        m.frames.push(f);
        m.values.push(at_mid.clone());
        self.refine((f, at_mid), b, second, m);
    }
}

/// Writes rig `r`'s `Skeleton` prim `name` (a child of its mesh node's prim, beside the mesh
/// prim) with its `SkelAnimation` child `Motion`; `motion` holds every rig's samples. `at`: the
/// node prim's absolute path when the relationship must name it absolutely (inside a variant,
/// where OpenUSD refuses a relative target: its anchor would hold the variant selection);
/// `None`: relative (`<Motion>`).
pub fn write_skeleton(
    t: &mut Text,
    scene: &Scene,
    (rig, r): (&Rig, usize),
    motion: &Motion,
    name: &str,
    at: Option<&str>,
) {
    // Joint paths: each joint's name (an identifier, unique among its siblings) under its
    // parent's path.
    let mut roots = super::names::Siblings::default();
    let mut children: Vec<super::names::Siblings> =
        rig.joints.iter().map(|_| Default::default()).collect();
    let mut joints: Vec<String> = Vec::with_capacity(rig.joints.len());
    for (i, &j) in rig.joints.iter().enumerate() {
        let name = &scene.nodes[j].name;
        let path = match rig.parent.get(i).copied().flatten() {
            Some(p) => format!("{}/{}", joints[p], children[p].claim(name)),
            None => roots.claim(name),
        };
        joints.push(path);
    }
    let tokens = t.array(&joints, |_, j| format!("\"{j}\""));
    t.open(
        &format!("def Skeleton \"{name}\""),
        &["prepend apiSchemas = [\"SkelBindingAPI\"]".to_string()],
    );
    t.line(&format!("uniform token[] joints = {tokens}"));
    let bind = t.array(&rig.bind, |t, &m| t.matrix(m));
    t.line(&format!("uniform matrix4d[] bindTransforms = {bind}"));
    let first: Vec<DMat4> = motion.values[0][r].iter().map(Trs::matrix).collect();
    let rest = t.array(&first, |t, &m| t.matrix(m));
    t.line(&format!("uniform matrix4d[] restTransforms = {rest}"));
    match at {
        Some(p) => t.line(&format!("rel skel:animationSource = <{p}/{name}/Motion>")),
        None => t.line("rel skel:animationSource = <Motion>"),
    }
    t.open("def SkelAnimation \"Motion\"", &[]);
    t.line(&format!("uniform token[] joints = {tokens}"));
    animation(t, motion, r);
    if !rig.shapes.is_empty() {
        let names = t.array(&rig.shapes, |_, s| format!("\"{}\"", s.name));
        t.line(&format!("uniform token[] blendShapes = {names}"));
        let per_frame: Vec<&Vec<f32>> = motion.weights.iter().map(|v| &v[r]).collect();
        let f = |t: &mut Text, w: &f32| t.num_f(f64::from(*w));
        // The default value (what USD reads at the default time code: a layer without a
        // timeline is read there, and `UsdSkel.BakeSkinning` bakes there only when no
        // attribute has time samples), and with a timeline also time samples (one when the
        // weights never change, which USD holds for all time): Blender's importer reads
        // blend-shape weights from time samples only.
        let v = t.array(per_frame[0], f);
        t.line(&format!("float[] blendShapeWeights = {v}"));
        if motion.animated {
            let n = if per_frame.iter().all(|v| *v == per_frame[0]) { 1 } else { per_frame.len() };
            t.time_samples(
                "float[] blendShapeWeights",
                &motion.weight_frames[..n],
                &per_frame[..n],
                |t, v| t.array(v.as_slice(), f),
            );
        }
    }
    t.close();
    t.close();
}

/// The mesh prim's `BlendShape` children (their names are the rig's shape names), with their
/// normal offsets and in-between shapes.
pub fn write_shapes(t: &mut Text, rig: &Rig) {
    for shape in &rig.shapes {
        t.open(&format!("def BlendShape \"{}\"", shape.name), &[]);
        for ib in &shape.inbetweens {
            let o = t.array(&ib.offsets, |t, &v| t.vec3_f(v));
            t.line(&format!("uniform point3f[] inbetweens:{} = {o} (", ib.name));
            let w = t.num_f(ib.weight);
            t.line(&format!("    weight = {w}"));
            t.line(")");
            if let Some(n) = &ib.normal_offsets {
                let n = t.array(n, |t, &v| t.vec3_f(v));
                t.line(&format!("vector3f[] inbetweens:{}:normalOffsets = {n}", ib.name));
            }
        }
        if let Some(n) = &shape.normal_offsets {
            let n = t.array(n, |t, &v| t.vec3_f(v));
            t.line(&format!("uniform vector3f[] normalOffsets = {n}"));
        }
        let o = t.array(&shape.offsets, |t, &v| t.vec3_f(v));
        t.line(&format!("uniform vector3f[] offsets = {o}"));
        let i = t.array(&shape.indices, |_, i| i.to_string());
        t.line(&format!("uniform int[] pointIndices = {i}"));
        t.close();
    }
}

/// The `translations`, `rotations` and `scales` of rig `r`: one value when it never changes,
/// else time samples.
fn animation(t: &mut Text, motion: &Motion, r: usize) {
    let per_frame: Vec<&Vec<Trs>> = motion.values.iter().map(|v| &v[r]).collect();
    let still = per_frame.iter().all(|v| *v == per_frame[0]);
    type Format = fn(&mut Text, &mut String, &Trs);
    let parts: [(&str, Format); 3] = [
        ("float3[] translations", |t, s, x| t.put_tuple_f(s, &x.t.to_array())),
        ("quatf[] rotations", |t, s, x| t.put_quat_f(s, x.r)),
        ("half3[] scales", |t, s, x| t.put_tuple_f(s, &x.s.to_array())),
    ];
    for (decl, f) in parts {
        if still || motion.frames.len() == 1 {
            let v = t.array_with(per_frame[0], f);
            t.line_parts(&[decl, " = ", &v]);
        } else {
            let each = |t: &mut Text, v: &&Vec<Trs>| t.array_with(v.as_slice(), f);
            t.time_samples(decl, &motion.frames, &per_frame, each);
        }
    }
}

/// The mesh prim's binding lines (`SkelBindingAPI` is applied by the caller): `skeleton` is
/// the path of the `Skeleton` prim beside the mesh prim as written (`../Name`, or absolute),
/// `shapes` what goes before a blend shape's name in its target path (`""`: the mesh prim's
/// child, relative; or the mesh prim's absolute path and `/`, [`write_skeleton`]'s `at`).
pub fn write_binding(t: &mut Text, rig: &Rig, skeleton: &str, shapes: &str) {
    if let Some(n) = &rig.vertex_normals {
        let n = t.array(n, |t, &v| t.vec3_f(v));
        t.line(&format!("normal3f[] normals = {n} ("));
        t.line("    interpolation = \"vertex\"");
        t.line(")");
    }
    t.line(&format!("rel skel:skeleton = <{skeleton}>"));
    if !rig.shapes.is_empty() {
        let names = t.array(&rig.shapes, |_, s| format!("\"{}\"", s.name));
        t.line(&format!("uniform token[] skel:blendShapes = {names}"));
        let targets = t.array(&rig.shapes, |_, s| format!("<{shapes}{}>", s.name));
        t.line(&format!("rel skel:blendShapeTargets = {targets}"));
    }
    if rig.joints.is_empty() {
        return;
    }
    let idx = t.array(&rig.indices, |_, i| i.to_string());
    t.line(&format!("int[] primvars:skel:jointIndices = {idx} ("));
    t.line(&format!("    elementSize = {}", rig.element_size));
    t.line("    interpolation = \"vertex\"");
    t.line(")");
    let w = t.array(&rig.weights, |t, &w| t.num_f(f64::from(w)));
    t.line(&format!("float[] primvars:skel:jointWeights = {w} ("));
    t.line(&format!("    elementSize = {}", rig.element_size));
    t.line("    interpolation = \"vertex\"");
    t.line(")");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_rounding_matches_ieee_half() {
        // Exact halves stay; 0.1 is 0x2E66 = 0.0999755859375; 1/3 is 0x3555 =
        // 0.333251953125; 65504 is the largest; 2⁻²⁴ the smallest subnormal.
        assert_eq!(to_half(1.0), 1.0);
        assert_eq!(to_half(100.0), 100.0);
        assert_eq!(to_half(0.1), 0.0999755859375);
        assert_eq!(to_half(1.0 / 3.0), 0.333251953125);
        assert_eq!(to_half(-0.1), -0.0999755859375);
        assert_eq!(to_half(65504.0), 65504.0);
        assert_eq!(to_half(1e6), f64::INFINITY);
        assert_eq!(to_half(2f64.powi(-24)), 2f64.powi(-24));
        // 1 + 2⁻¹¹ is halfway between 1 and 1 + 2⁻¹⁰: ties to even (1).
        assert_eq!(to_half(1.0 + 2f64.powi(-11)), 1.0);
        assert_eq!(to_half(1.0 + 3.0 * 2f64.powi(-11)), 1.0 + 2.0 * 2f64.powi(-10));
    }

    #[test]
    fn inbetween_levels_usdskel_skips_fall_back() {
        // UsdSkelBlendShapeQuery: an in-between within 1e-6 of 0 or 1 is skipped, and two
        // sub-shapes within 1e-6 blend nothing; keyscene (ufbx) blends them.
        let with = |levels: &[f64]| crate::scene::MorphTarget {
            inbetweens: levels.iter().map(|&l| (l, vec![DVec3::X])).collect(),
            ..Default::default()
        };
        assert!(inbetweens_agree(&with(&[])));
        assert!(inbetweens_agree(&with(&[0.5])));
        assert!(inbetweens_agree(&with(&[-0.499, -0.249])));
        assert!(!inbetweens_agree(&with(&[0.0, 0.5])));
        assert!(!inbetweens_agree(&with(&[0.5, 0.5])));
        assert!(!inbetweens_agree(&with(&[1.0])));
        assert!(!inbetweens_agree(&with(&[1.5])));
        assert!(!inbetweens_agree(&with(&[f64::NAN])));
    }

    #[test]
    fn inbetween_shape_slope_and_kinks() {
        // One vertex: in-between at 0.5 moves it by (0, 2, 0), the target at 1 by (1, 0, 0).
        // Segments: 0 → 0.5 slope |(0,2,0)| / 0.5 = 4; 0.5 → 1: |(1,-2,0)| / 0.5 = 2·sqrt(5).
        // Kinks: 0.5 only (below 0 and past 1 the end segments extrapolate).
        let mesh = crate::scene::Mesh {
            positions: vec![DVec3::ZERO],
            morph_targets: vec![crate::scene::MorphTarget {
                name: "t".into(),
                position_deltas: vec![DVec3::X],
                inbetweens: vec![(0.5, vec![DVec3::new(0.0, 2.0, 0.0)])],
                ..Default::default()
            }],
            ..Default::default()
        };
        let s = &shapes(&mesh, &DMat4::IDENTITY, None)[0];
        assert_eq!(s.indices, vec![0]);
        assert_eq!(s.inbetweens.len(), 1);
        assert_eq!(s.inbetweens[0].weight, 0.5);
        assert_eq!(s.kinks, vec![0.5]);
        assert!((s.size - 4.0f64.max(2.0 * 5f64.sqrt())).abs() < 1e-12, "{}", s.size);
    }

    #[test]
    fn joints_follow_the_bones_parents_parents_first() {
        use crate::scene::{Node, NodeKind};
        // Nodes: 0 "hips" (root) → 1 "null" (not a joint) → 2 "spine" → 3 "head";
        // 0 → 4 "leg". Skin order: head, spine, leg, hips. By hand: hips is the root, spine's
        // parent is hips (through the null), head's spine, leg's hips; parents first:
        // hips (depth 0), then spine, leg (depth 1, skin order), then head (depth 2).
        let mut scene = Scene::default();
        for (name, parent) in [
            ("hips", None),
            ("null", Some(0)),
            ("spine", Some(1)),
            ("head", Some(2)),
            ("leg", Some(0)),
        ] {
            let mut n = Node::new(name, NodeKind::Null);
            n.parent = parent;
            scene.nodes.push(n);
        }
        let m = DMat4::IDENTITY;
        let rig = Rig {
            node: 0,
            joints: vec![3, 2, 4, 0],
            parent: vec![None; 4],
            bind: vec![m; 4],
            unscale: vec![DVec3::ONE; 4],
            reach: vec![3.0, 2.0, 4.0, 0.0],
            // One vertex per joint, in skin order.
            indices: vec![0, 1, 2, 3],
            weights: vec![1.0; 4],
            element_size: 1,
            index: 0,
            mesh: 0,
            shapes: Vec::new(),
            ib3: vec![DMat3::IDENTITY; 4],
            vertex_normals: None,
        }
        .with_tree(&scene);
        assert_eq!(rig.joints, vec![0, 2, 4, 3]);
        assert_eq!(rig.parent, vec![None, Some(0), Some(0), Some(1)]);
        assert_eq!(rig.reach, vec![0.0, 2.0, 4.0, 3.0]);
        // Skin joint 0 (head) is written 3rd, 1 (spine) 1st, 2 (leg) 2nd, 3 (hips) 0th.
        assert_eq!(rig.indices, vec![3, 1, 2, 0]);
    }

    #[test]
    fn joint_error_bounds_the_vertex_distance() {
        // Hand case: a joint 0.001 rad off about z, 0.01 off in x; a vertex 2 from the joint.
        let rig = Rig {
            node: 0,
            joints: vec![0],
            parent: vec![None],
            bind: vec![DMat4::IDENTITY],
            unscale: vec![DVec3::ONE],
            reach: vec![2.0],
            indices: vec![0],
            weights: vec![1.0],
            element_size: 1,
            index: 0,
            mesh: 0,
            shapes: Vec::new(),
            ib3: vec![DMat3::IDENTITY],
            vertex_normals: None,
        };
        let w = DMat4::IDENTITY;
        let m = DMat4::from_rotation_translation(
            DQuat::from_rotation_z(0.001),
            DVec3::new(0.01, 0.0, 0.0),
        );
        let p = DVec3::new(2.0, 0.0, 0.0);
        let actual = (m.transform_point3(p) - w.transform_point3(p)).length();
        let bound = joint_error(&rig, 0, &m, &w);
        assert!(actual <= bound + 1e-15, "{actual} > {bound}");
        // ‖R − I‖_F = 2·sqrt(1 − cos θ)·… ≈ sqrt(2)·θ for small θ: 0.01 + 2·sqrt(2)·0.001.
        assert!((bound - (0.01 + 2.0 * 2f64.sqrt() * 0.001)).abs() < 1e-6, "{bound}");
    }
}

//! Node transforms as the FBX writer writes them: the local matrix of every node
//! (`parent_world⁻¹ · world`, with the camera/light axis change of [`attribute_axes`]), its
//! T · R (XYZ Euler degrees) · S decomposition, and which nodes keep their source keys.

use glam::{DMat4, DQuat, DVec3, EulerRot};

use crate::scene::{LightKind, NodeKind, Scene};

/// T, XYZ Euler degrees (FBX eEulerXYZ: R = Rz · Ry · Rx), S of a local matrix, and whether
/// T·R·S reproduces it (no shear).
///
/// A matrix with a zero scale on some axis (a column of length 0) has no unique rotation; its
/// parts come from [`singular_scale_rotation`] instead, so the angles are finite (a NaN
/// `Lcl Rotation` is read back by every reader as the default 0,0,0, ufbx and ours alike).
pub(super) fn decompose(m: DMat4) -> (DVec3, DVec3, DVec3, bool) {
    let (s, q, t) = m.to_scale_rotation_translation();
    let (s, q) = if q.is_finite() && s.is_finite() { (s, q) } else { singular_scale_rotation(m) };
    let e = euler_xyz(q);
    let back = compose(t, e, s);
    let scale = m.to_cols_array().iter().fold(1.0f64, |a, v| a.max(v.abs()));
    let exact = back.abs_diff_eq(m, 1e-9 * scale);
    (t, e, s, exact)
}

/// Scale and rotation of a matrix whose 3×3 part has a zero (or non-finite) column: the
/// columns of non-zero finite length keep their directions (made orthonormal in X, Y, Z
/// order), the others get scale 0 and a direction that completes a right-handed frame
/// (the first of +X, +Y, +Z not along the kept ones). With no usable column the rotation is
/// the identity and the scale 0. Where the kept columns were orthogonal, T·R·S reproduces the
/// matrix exactly.
fn singular_scale_rotation(m: DMat4) -> (DVec3, DQuat) {
    let cols = [m.x_axis.truncate(), m.y_axis.truncate(), m.z_axis.truncate()];
    let mut axes: [Option<DVec3>; 3] = [None; 3];
    let mut scale = DVec3::ZERO;
    for (k, c) in cols.iter().enumerate() {
        let len = c.length();
        if !(len.is_finite() && len > 0.0) {
            continue;
        }
        // Gram-Schmidt against the axes already kept.
        let mut u = *c;
        for a in axes.iter().flatten() {
            u -= *a * u.dot(*a);
        }
        if u.length() > 1e-12 * len {
            axes[k] = Some(u.normalize());
            scale[k] = len;
        }
    }
    // Complete the frame with the first basis vector not along the kept axes.
    for k in 0..3 {
        if axes[k].is_some() {
            continue;
        }
        let kept: Vec<DVec3> = axes.iter().flatten().copied().collect();
        let fill = [DVec3::X, DVec3::Y, DVec3::Z]
            .into_iter()
            .map(|b| kept.iter().fold(b, |u, a| u - *a * u.dot(*a)))
            .find(|u| u.length() > 1e-6)
            .unwrap_or(DVec3::X);
        axes[k] = Some(fill.normalize());
    }
    let [x, y, z] = axes.map(|a| a.unwrap_or(DVec3::X));
    let mut r = glam::DMat3::from_cols(x, y, z);
    if r.determinant() < 0.0 {
        // Flip a zero-scale axis (its sign is free); one exists, since a frame of three
        // kept columns with a negative determinant is glam's ordinary case.
        let k = (0..3).find(|&k| scale[k] == 0.0).unwrap_or(0);
        let mut c = [r.x_axis, r.y_axis, r.z_axis];
        c[k] = -c[k];
        r = glam::DMat3::from_cols(c[0], c[1], c[2]);
    }
    (scale, DQuat::from_mat3(&r).normalize())
}

pub(super) fn euler_xyz(q: DQuat) -> DVec3 {
    let (z, y, x) = q.to_euler(EulerRot::ZYX);
    DVec3::new(x, y, z) * (180.0 / std::f64::consts::PI)
}

/// The rotation of XYZ Euler angles `deg` (degrees; X applied first), as FBX composes
/// `Lcl Rotation`: the inverse of [`euler_xyz`].
pub(super) fn quat_xyz(deg: DVec3) -> DQuat {
    let r = deg * (std::f64::consts::PI / 180.0);
    DQuat::from_euler(EulerRot::ZYX, r.z, r.y, r.x)
}

pub(super) fn compose(t: DVec3, euler_deg: DVec3, s: DVec3) -> DMat4 {
    let r = euler_deg * (std::f64::consts::PI / 180.0);
    let q = DQuat::from_euler(EulerRot::ZYX, r.z, r.y, r.x);
    DMat4::from_scale_rotation_translation(s, q, t)
}

/// Node `i`'s rest `Lcl Translation`, `Lcl Rotation` (XYZ Euler degrees), `Lcl Scaling` and
/// whether T·R·S reproduces `local` (its written local matrix, [`local_matrices`]).
///
/// A node whose written local matrix is its own transform (`direct`, [`direct_nodes`], and
/// `local` equal to `Node::transform`'s matrix within 1e-12 × its largest entry) writes its own
/// parts instead of decomposing `local`: translation and scale as the scene holds them, the
/// rotation as the source's `Lcl Rotation` angles ([`NodeSource::fbx_lcl_rotation`]) when they
/// give the node's rotation exactly in XYZ order (the reader's own composition,
/// `EulerOrder::Xyz.to_quat`), else the XYZ Euler angles of its quaternion. Decomposing
/// `parent_world⁻¹ · world` moves values by round-off (1.0000000000000002 for 1), so a file
/// written from a written file would differ from it; with this rule a second write reproduces
/// the first (docs/fbx.md, "FBX → FBX → FBX").
///
/// [`NodeSource::fbx_lcl_rotation`]: crate::scene::NodeSource::fbx_lcl_rotation
///
/// With `keep_pivots` ([`super::WriteOptions::keep_pivots`]) a direct node's pivots and
/// inherit type are written beside these parts, so its own parts are written whatever its
/// local matrix (`local` then includes the pivots).
pub(super) fn rest_parts(
    scene: &Scene,
    i: usize,
    local: DMat4,
    direct: bool,
    keep_pivots: bool,
) -> (DVec3, DVec3, DVec3, bool) {
    let n = &scene.nodes[i];
    let own = n.transform.matrix();
    let size = local.to_cols_array().iter().fold(1.0f64, |a, v| a.max(v.abs()));
    let stack = keep_pivots && direct && own.is_finite();
    if !stack && (!direct || !own.is_finite() || !own.abs_diff_eq(local, 1e-12 * size)) {
        return decompose(local);
    }
    let tr = &n.transform;
    let to_rad = std::f64::consts::PI / 180.0;
    let r = n
        .source
        .fbx_lcl_rotation
        .as_deref()
        .copied()
        .filter(|r| crate::scene::EulerOrder::Xyz.to_quat(*r * to_rad) == tr.rotation)
        .unwrap_or_else(|| euler_xyz(tr.rotation));
    (tr.translation, r, tr.scale, true)
}

/// `e` moved by whole turns per component to lie within 180° of `prev`.
pub(super) fn unwrap_near(e: DVec3, prev: DVec3) -> DVec3 {
    let f = |a: f64, p: f64| a + ((p - a) / 360.0).round() * 360.0;
    DVec3::new(f(e.x, prev.x), f(e.y, prev.y), f(e.z, prev.z))
}

/// The `Model` class a scene node is written as: `Mesh` for a node with a mesh, `LimbNode` for
/// a bone or a skin joint, `Camera` / `Light` for a camera or a (non-ambient) light, else `Null`
/// (groups, ambient lights, which FBX has no node for, and attributes the scene does not hold).
pub(super) fn model_class(scene: &Scene, i: usize) -> &'static str {
    let node = &scene.nodes[i];
    if let Some(class) = attribute_class(scene, i) {
        return class;
    }
    let joint = || scene.skins.iter().any(|s| s.joints.iter().any(|j| j.node == i));
    match node.kind {
        _ if node.mesh.is_some() => "Mesh",
        NodeKind::Bone => "LimbNode",
        _ if joint() => "LimbNode",
        _ => "Null",
    }
}

/// `Camera` or `Light` for a node written with that attribute (no mesh; a camera the scene
/// holds, a light that is not ambient), else `None`.
fn attribute_class(scene: &Scene, i: usize) -> Option<&'static str> {
    let node = &scene.nodes[i];
    match node.kind {
        _ if node.mesh.is_some() => None,
        NodeKind::Camera(c) if c < scene.cameras.len() => Some("Camera"),
        NodeKind::Light(l) if scene.lights.get(l).is_some_and(|l| l.kind != LightKind::Ambient) => {
            Some("Light")
        }
        _ => None,
    }
}

/// Every node's world matrix as written (`world · C`, [`attribute_axes`]).
pub(super) fn written_worlds(scene: &Scene, world: &[DMat4]) -> Vec<DMat4> {
    (0..scene.nodes.len())
        .map(|i| attribute_axes(scene, i).map_or(world[i], |c| world[i] * c))
        .collect()
}

/// The constant rotation `C` the writer appends to a camera or light node's world matrix
/// (`world_fbx = world · C`), so that the FBX node attribute's axes land where the source's
/// were; `None` for other nodes and for FBX sources (whose nodes already follow FBX's axes).
///
/// FBX cameras look down the node's +X with +Y up (FbxCamera; ufbx's camera axes) and lights
/// shine down the node's −Y (ufbx `ufbx_light::local_direction`), while keyscene's other
/// sources aim both down the node's −Z with +Y up (`scene::Camera`, `scene::Light`, the
/// renderer's `View::from_camera`). So for cameras `C` = 90° about +Y (+X → −Z, +Y → +Y, +Z →
/// +X), for lights `C` = 90° about +X (−Y → −Z, +X → +X). These are the turns ufbx applies
/// as `adjust_post_rotation` when a caller asks for other `target_camera_axes` /
/// `target_light_axes` (ufbx.c: FBX camera axes right +Z, up +Y, front −X; light axes right
/// +X, up −Z, front +Y). They are baked into `Lcl Rotation` here, not written as a
/// `PostRotation`, because the writer writes no post rotations (docs/fbx.md, "Writing").
pub(super) fn attribute_axes(scene: &Scene, i: usize) -> Option<DMat4> {
    if scene.meta.format == "fbx" {
        return None;
    }
    let half_turn = std::f64::consts::FRAC_PI_2;
    match attribute_class(scene, i) {
        Some("Camera") => Some(DMat4::from_rotation_y(half_turn)),
        Some("Light") => Some(DMat4::from_rotation_x(half_turn)),
        _ => None,
    }
}

/// Every node's local matrix as FBX composes it with InheritType RSrs:
/// `parent_world⁻¹ · world` (the world matrix itself for roots), each world first turned by
/// [`attribute_axes`]. Under a parent whose world matrix is singular (a zero scale) no local
/// reproduces the child's world: keyscene's own local matrix (`local`, with the same turns)
/// is written, which gives what any RSrs evaluator gives.
///
/// A `direct` node ([`direct_nodes`]) composes as `parent_world · local` in keyscene's
/// evaluator too, so its written local matrix is `local` itself: the same matrix without the
/// inverse, whose round-off grows with the parent's condition (a parent scaled by 0 and 10¹⁵,
/// as `fbx-conv/3dsmax_animation.FBX`'s decimal commas make one, moved a child's translation
/// by 10²⁰ and a file written from the written file differed).
pub(super) fn local_matrices(
    scene: &Scene,
    world: &[DMat4],
    local: &[DMat4],
    direct: &[bool],
) -> Vec<DMat4> {
    (0..scene.nodes.len())
        .map(|i| {
            if direct.get(i).copied().unwrap_or(false) {
                return local[i];
            }
            let parent = scene.nodes[i].parent.map(|p| (p, world[p]));
            local_matrix(scene, i, parent, world[i], local[i])
        })
        .collect()
}

/// Node `i`'s local matrix as [`local_matrices`] makes it, from its world matrix `world`, its
/// own local matrix `local` and its parent's id and world matrix (`None` for a root).
pub(super) fn local_matrix(
    scene: &Scene,
    i: usize,
    parent: Option<(usize, DMat4)>,
    world: DMat4,
    local: DMat4,
) -> DMat4 {
    let turned = |i: usize, m: DMat4| attribute_axes(scene, i).map_or(m, |c| m * c);
    match parent {
        Some((p, world_p)) => {
            let wp = turned(p, world_p);
            let det = wp.determinant();
            let l = wp.inverse() * turned(i, world);
            if det.is_finite() && det.abs() > 1e-300 && l.is_finite() {
                l
            } else {
                attribute_axes(scene, p).map_or(DMat4::IDENTITY, |c| c.inverse()) * turned(i, local)
            }
        }
        None => turned(i, world),
    }
}

/// `true` when node `i`'s world matrix is aimed at a target after composition (a camera or
/// light with a target), so its local matrix is not its parts'.
pub(super) fn aimed(scene: &Scene, i: usize) -> bool {
    let n = scene.nodes.len();
    match scene.nodes[i].kind {
        NodeKind::Camera(c) => scene.cameras.get(c).and_then(|c| c.target).is_some_and(|t| t < n),
        NodeKind::Light(l) => scene.lights.get(l).and_then(|l| l.target).is_some_and(|t| t < n),
        _ => false,
    }
}

/// Per scene node: is its written local matrix (`parent_world⁻¹ · world`) its own `T·R·S`, so
/// that its channels can be written from the source keys? Yes when it has no FBX pivots or
/// pre/post rotation (none animated either, [`ChannelTarget::drives_pivots`]), it is a root or
/// has inherit type `RSrs`, neither it nor its parent is aimed at a target, and neither is
/// turned by [`attribute_axes`] (a constant turn after the rotation has no per-component
/// Euler curve form).
///
/// With `keep_pivots` ([`super::WriteOptions::keep_pivots`]) static pivots and pre/post
/// rotation are written as they are, so they do not stop a node from being direct, nor does an
/// inherit type other than `RSrs` under a direct parent (whose written scale is its own).
pub(super) fn direct_nodes(scene: &Scene, keep_pivots: bool) -> Vec<bool> {
    let mut direct: Vec<bool> = (0..scene.nodes.len())
        .map(|i| {
            let n = &scene.nodes[i];
            (keep_pivots || n.pivots.is_none())
                && (n.parent.is_none()
                    || n.inherit == crate::scene::InheritType::RSrs
                    || keep_pivots)
                && !aimed(scene, i)
                && !n.parent.is_some_and(|p| aimed(scene, p))
                && attribute_axes(scene, i).is_none()
                && n.parent.is_none_or(|p| attribute_axes(scene, p).is_none())
        })
        .collect();
    for c in scene.animations.iter().flat_map(|a| &a.channels) {
        if c.target.drives_pivots() {
            if let Some(d) = direct.get_mut(c.node) {
                *d = false;
            }
        }
    }
    if keep_pivots {
        // A node inheriting other than RSrs needs its parent's own scale written: under a
        // baked parent it is baked too. Parents first, so a parent's answer is final when its
        // children ask (the writer validated the hierarchy: every node is reached once). This
        // was a fixpoint over the node list, quadratic in a chain stored children first.
        for i in scene.depth_first() {
            let node = &scene.nodes[i];
            let under_baked = node.parent.is_some_and(|p| !direct.get(p).copied().unwrap_or(false));
            if node.inherit != crate::scene::InheritType::RSrs && under_baked {
                direct[i] = false;
            }
        }
    }
    direct
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn euler_xyz_is_rz_ry_rx_and_round_trips() {
        // FBX eEulerXYZ: X applied first. Rotating +Y by 90° about X gives +Z; then 90° about
        // Z takes +Z to +Z: hand-computed R = Rz(90)·Rx(90) maps +Y to +Z and +X to +Y.
        let m = compose(DVec3::ZERO, DVec3::new(90.0, 0.0, 90.0), DVec3::ONE);
        assert!(m.transform_vector3(DVec3::Y).abs_diff_eq(DVec3::Z, 1e-12));
        assert!(m.transform_vector3(DVec3::X).abs_diff_eq(DVec3::Y, 1e-12));
        let (t, e, s, exact) = decompose(compose(
            DVec3::new(1.0, 2.0, 3.0),
            DVec3::new(10.0, -20.0, 30.0),
            DVec3::new(2.0, 3.0, 4.0),
        ));
        assert!(exact);
        assert!(t.abs_diff_eq(DVec3::new(1.0, 2.0, 3.0), 1e-12));
        assert!(e.abs_diff_eq(DVec3::new(10.0, -20.0, 30.0), 1e-9), "{e}");
        assert!(s.abs_diff_eq(DVec3::new(2.0, 3.0, 4.0), 1e-12));
    }

    #[test]
    fn a_zero_scale_axis_decomposes_into_finite_parts_that_compose_back() {
        // Hand-built: T (1, 2, 3), 30° about Z, S (0, 2, 0): two zero columns, the Y column
        // (−sin 30°, cos 30°, 0) × 2.
        let m = DMat4::from_scale_rotation_translation(
            DVec3::new(0.0, 2.0, 0.0),
            DQuat::from_rotation_z(30f64.to_radians()),
            DVec3::new(1.0, 2.0, 3.0),
        );
        let (t, e, s, exact) = decompose(m);
        assert!(e.is_finite() && s.is_finite(), "{e} {s}");
        assert_eq!(s, DVec3::new(0.0, 2.0, 0.0));
        assert!(t.abs_diff_eq(DVec3::new(1.0, 2.0, 3.0), 1e-12));
        assert!(exact);
        assert!(compose(t, e, s).abs_diff_eq(m, 1e-12));
        // All three scales zero: identity rotation.
        let (_, e, s, exact) = decompose(DMat4::from_translation(DVec3::X) * DMat4::ZERO);
        assert_eq!((e, s), (DVec3::ZERO, DVec3::ZERO));
        assert!(!exact); // the zero matrix has w = 0, not an affine transform
    }

    #[test]
    fn unwrapping_keeps_angles_within_half_a_turn_of_the_previous_key() {
        let e = unwrap_near(DVec3::new(-179.0, 10.0, 181.0), DVec3::new(179.0, 370.0, -170.0));
        assert_eq!(e, DVec3::new(181.0, 370.0, -179.0));
    }
}

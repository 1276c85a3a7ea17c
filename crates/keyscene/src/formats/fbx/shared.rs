//! What the scene importer ([`super::import`]) hands the animation reader
//! ([`super::animation`]): which scene element every FBX object became ([`ImportIds`]) and how
//! each model's rotation is put together ([`RotationSetup`]). It sits below both so that
//! `import` calls `animation` and `animation` reads only this (issue 13: modules read one way).

use glam::{DQuat, DVec3};

use super::objects::{IdMap, ObjectGraph};
use crate::scene::{BindPose, EulerOrder};

/// Which scene element every FBX object became, for readers that work on the same graph
/// afterwards (animation: curves name their targets by object id).
#[derive(Debug, Clone, Default)]
pub struct ImportIds {
    /// `Model` object id → scene node.
    pub nodes: IdMap<usize>,
    /// `BlendShapeChannel` object id → (mesh index, morph target index) for every mesh the
    /// channel deforms.
    pub morph_channels: IdMap<Vec<(usize, usize)>>,
    /// Camera attribute (`NodeAttribute`, or the model in FBX 6) id → index into
    /// `Scene::cameras`.
    pub cameras: IdMap<usize>,
    /// Light attribute id → index into `Scene::lights`.
    pub lights: IdMap<usize>,
    /// `Material` object id → index into `Scene::materials`.
    pub materials: IdMap<usize>,
    /// The file's bind poses, in file order (as `Scene::bind_poses`).
    pub bind_poses: Vec<BindPose>,
    /// In-file blend shapes (FBX 6 and 7.1 `Shape` records), driven by a property named after
    /// the shape of the object holding them (FBX 6: the model; 7.1: the geometry):
    /// (holder id, property name, mesh index, morph target index).
    pub morph_properties: Vec<(i64, String, usize, usize)>,
}

/// How a model's rotation is put together (ufbx `ufbxi_update_node`, `ufbxi_get_transform`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RotationSetup {
    /// The Euler order `Lcl Rotation` (and its curves) use: `RotationOrder` when the rotation
    /// space is used, else XYZ.
    pub order: EulerOrder,
    /// `PreRotation` (XYZ degrees) as a quaternion; identity when the space is not used.
    pub pre: DQuat,
    /// `PostRotation` as a quaternion (its inverse enters the local matrix); identity when the
    /// space is not used.
    pub post: DQuat,
    /// `RotationActive` ≠ 0 and `RotationSpaceForLimitOnly` = 0.
    pub uses_rotation_space: bool,
}

/// The rotation setup of model `id` (the rule: [`super::import`]'s module docs).
pub fn rotation_setup(graph: &ObjectGraph<'_, '_>, id: i64) -> RotationSetup {
    rotation_setup_with(
        graph.get_i64(id, "RotationActive", 1),
        graph.get_i64(id, "RotationSpaceForLimitOnly", 0),
        || {
            let pre = graph.get_vec3(id, "PreRotation", [0.0; 3]);
            let post = graph.get_vec3(id, "PostRotation", [0.0; 3]);
            (graph.get_i64(id, "RotationOrder", 0), pre, post)
        },
    )
}

/// [`rotation_setup`] from `RotationActive`, `RotationSpaceForLimitOnly` and, read only when
/// the rotation space is used, (`RotationOrder`, `PreRotation`, `PostRotation`).
pub(super) fn rotation_setup_with(
    active: i64,
    limit_only: i64,
    rest: impl FnOnce() -> (i64, [f64; 3], [f64; 3]),
) -> RotationSetup {
    if active == 0 || limit_only != 0 {
        return RotationSetup {
            order: EulerOrder::Xyz,
            pre: DQuat::IDENTITY,
            post: DQuat::IDENTITY,
            uses_rotation_space: false,
        };
    }
    let (order, pre, post) = rest();
    let xyz =
        |v: [f64; 3]| EulerOrder::Xyz.to_quat(DVec3::from(v) * (std::f64::consts::PI / 180.0));
    RotationSetup {
        order: EulerOrder::from_fbx(order),
        pre: xyz(pre),
        post: xyz(post),
        uses_rotation_space: true,
    }
}

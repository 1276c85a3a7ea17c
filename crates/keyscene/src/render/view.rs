//! Cameras: a scene camera (perspective or orthographic) at a pose, or the automatic camera
//! framing a bounding box.

use glam::{DMat4, DVec2, DVec3, DVec4};

use crate::anim::Pose;
use crate::scene::{AxisSystem, FovAxis, NodeId, NodeKind, Projection, Scene};

/// The automatic camera's vertical field of view, degrees.
pub const AUTO_FOV_Y_DEGREES: f64 = 40.0;
/// The automatic camera's direction from the scene's centre: this many degrees from the
/// scene's front axis towards its right axis…
pub const AUTO_AZIMUTH_DEGREES: f64 = 30.0;
/// …and this many degrees up towards its up axis.
pub const AUTO_ELEVATION_DEGREES: f64 = 20.0;
/// The automatic camera frames a sphere this much larger than the bounding box's sphere.
pub const AUTO_MARGIN: f64 = 1.1;

/// A view: where the camera is, where it looks and how wide it sees.
///
/// Camera space is right-handed: the camera at the origin looking down −Z, +Y up on the
/// image, +X to the right. Clip space (what the rasteriser takes) is
/// `(x / tan_half_fov.x, y / tan_half_fov.y, 1, −z)` of a camera-space point for a perspective
/// view — `x/w`, `y/w` run −1…1 across the image and `w` is the distance in front of the
/// camera — and `(x / half.x, y / half.y, z, 1)` for an orthographic one (`orthographic =
/// Some(half)`), whose distance in front of the camera is `−z`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct View {
    /// World → camera space (rigid: rotation and translation only).
    pub world_to_camera: DMat4,
    /// Tangents of half the horizontal (x) and vertical (y) fields of view.
    pub tan_half_fov: DVec2,
    /// Near clip distance, scene units, > 0.
    pub near: f64,
    /// Half the width and height of an orthographic view in scene units (glTF
    /// `xmag`/`ymag`); `None` for a perspective view.
    pub orthographic: Option<DVec2>,
}

impl View {
    /// The camera at `eye` looking along `forward` with `up` (approximately) up; `None` when
    /// `forward` is zero or parallel to `up` and no other up fits, or values are not finite.
    pub fn look_to(
        eye: DVec3,
        forward: DVec3,
        up: DVec3,
        tan_half_fov: DVec2,
        near: f64,
    ) -> Option<View> {
        let f = forward.try_normalize()?;
        let r = f.cross(up).try_normalize().or_else(|| f.cross(DVec3::X).try_normalize())?;
        let u = r.cross(f);
        if !eye.is_finite() || !tan_half_fov.is_finite() || tan_half_fov.min_element() <= 0.0 {
            return None;
        }
        let camera_to_world =
            DMat4::from_cols(r.extend(0.0), u.extend(0.0), (-f).extend(0.0), eye.extend(1.0));
        Some(View {
            world_to_camera: camera_to_world.inverse(),
            tan_half_fov,
            near: if near > 0.0 && near.is_finite() { near } else { 1e-3 },
            orthographic: None,
        })
    }

    /// The automatic camera framing the box `(min, max)` for an image of `aspect` (width ÷
    /// height): it looks at the box's centre from the direction [`AUTO_AZIMUTH_DEGREES`] from
    /// the scene's front axis towards its right axis and [`AUTO_ELEVATION_DEGREES`] up
    /// (`axes`: the scene's [`Metadata::axes`](crate::scene::Metadata::axes)), with a vertical
    /// field of view of [`AUTO_FOV_Y_DEGREES`], far enough that the sphere round the box
    /// (radius half its diagonal) times [`AUTO_MARGIN`] fits the narrower field of view. An
    /// empty or zero-size box counts as a sphere of radius 1.
    pub fn auto(min: DVec3, max: DVec3, axes: AxisSystem, aspect: f64) -> View {
        let (centre, radius) = if min.is_finite() && max.is_finite() && min.cmple(max).all() {
            ((min + max) * 0.5, (max - min).length() * 0.5)
        } else {
            (DVec3::ZERO, 1.0)
        };
        let radius = if radius > 0.0 { radius } else { 1.0 } * AUTO_MARGIN;
        let aspect = if aspect > 0.0 && aspect.is_finite() { aspect } else { 1.0 };
        let ty = (AUTO_FOV_Y_DEGREES.to_radians() * 0.5).tan();
        let tan = DVec2::new(ty * aspect, ty);
        let t = tan.min_element();
        // The sphere's tangent cone has half-angle asin(r/d); it fits when that is atan(t).
        let distance = radius * (1.0 + t * t).sqrt() / t;
        let (up, front) = (axes.up.vector(), axes.front.vector());
        let right = axes.right();
        let (az, el) = (AUTO_AZIMUTH_DEGREES.to_radians(), AUTO_ELEVATION_DEGREES.to_radians());
        let dir = (front * az.cos() + right * az.sin()) * el.cos() + up * el.sin();
        let eye = centre + dir * distance;
        let near = ((distance - radius) * 0.5).max(distance * 1e-4);
        View::look_to(eye, -dir, up, tan, near)
            .or_else(|| View::look_to(eye, -dir, DVec3::Y, tan, near))
            .expect("the automatic camera's direction is a unit vector off its up axis")
    }

    /// The view through camera node `node` at `pose`, for an image of `aspect` (width ÷
    /// height), its near plane at `near` scene units. The camera's position and orientation
    /// are its world matrix (already aimed at its target and rolled by
    /// [`Scene::evaluate`]); it looks down its −Z axis with +Y up, except in FBX scenes
    /// (`meta.format == "fbx"`) where cameras look down +X with +Y up, the FBX SDK's convention.
    /// The animated field of view ([`Pose::camera_fov`]) is kept along the camera's
    /// [`FovAxis`]; the other axis follows the image's aspect (the file's own aspect is not
    /// used). An orthographic camera ([`Projection::Orthographic`]) gives an orthographic
    /// view that keeps its `xmag` (horizontal [`FovAxis`]) or `ymag` (vertical), the other
    /// following the image's aspect. `None` when the node is no camera or its matrix is
    /// degenerate.
    pub fn from_camera(
        scene: &Scene,
        pose: &Pose,
        node: NodeId,
        aspect: f64,
        near: f64,
    ) -> Option<View> {
        let NodeKind::Camera(c) = scene.nodes.get(node)?.kind else { return None };
        let cam = scene.cameras.get(c)?;
        let world = *pose.world.get(node)?;
        let fov = pose.camera_fov.get(c).copied().unwrap_or(cam.fov_degrees);
        let t = (fov.clamp(0.01, 179.0).to_radians() * 0.5).tan();
        let aspect = if aspect > 0.0 && aspect.is_finite() { aspect } else { 1.0 };
        let tan = match cam.fov_axis {
            FovAxis::Horizontal => DVec2::new(t, t / aspect),
            FovAxis::Vertical => DVec2::new(t * aspect, t),
        };
        let (x, y, z) = (world.x_axis.truncate(), world.y_axis.truncate(), world.z_axis.truncate());
        let forward = if scene.meta.format == "fbx" { x } else { -z };
        let mut view = View::look_to(world.w_axis.truncate(), forward, y, tan, near)?;
        if let Projection::Orthographic { xmag, ymag } = cam.projection {
            let half = match cam.fov_axis {
                FovAxis::Horizontal => DVec2::new(xmag, xmag / aspect),
                FovAxis::Vertical => DVec2::new(ymag * aspect, ymag),
            };
            if !(half.is_finite() && half.min_element() > 0.0) {
                return None;
            }
            view.orthographic = Some(half);
        }
        Some(view)
    }

    /// `p` (world space) in clip space.
    pub fn clip(&self, p: DVec3) -> DVec4 {
        let c = self.world_to_camera.transform_point3(p);
        match self.orthographic {
            Some(half) => DVec4::new(c.x / half.x, c.y / half.y, c.z, 1.0),
            None => DVec4::new(c.x / self.tan_half_fov.x, c.y / self.tan_half_fov.y, 1.0, -c.z),
        }
    }

    /// Where `p` (world space) lands on a `width × height` image, in pixels (x right, y down,
    /// pixel `(i, j)` spans `[i, i+1) × [j, j+1)`); `None` when it is not in front of the near
    /// plane.
    pub fn project(&self, p: DVec3, width: u32, height: u32) -> Option<DVec2> {
        let c = self.clip(p);
        let in_front = if self.orthographic.is_some() { -c.z } else { c.w };
        (in_front >= self.near).then(|| {
            DVec2::new(
                (c.x / c.w * 0.5 + 0.5) * f64::from(width),
                (0.5 - c.y / c.w * 0.5) * f64::from(height),
            )
        })
    }

    /// The camera's position in world space.
    pub fn eye(&self) -> DVec3 {
        self.world_to_camera.inverse().w_axis.truncate()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_camera_sees_the_box_centre_in_the_image_centre() {
        let v = View::auto(DVec3::splat(-1.0), DVec3::splat(1.0), AxisSystem::default(), 4.0 / 3.0);
        let c = v.project(DVec3::ZERO, 160, 120).unwrap();
        assert!((c - DVec2::new(80.0, 60.0)).length() < 1e-9);
        // Y up, +Z front: the camera is in front (+Z), to the right (+X) and above (+Y).
        let eye = v.eye();
        assert!(eye.z > 0.0 && eye.x > 0.0 && eye.y > 0.0);
        // Up stays up: a point above the centre is higher on the image.
        assert!(v.project(DVec3::Y, 160, 120).unwrap().y < 60.0);
        // The sphere round the box (radius √3 · 1.1) touches the top and bottom at most.
        let d = eye.length();
        let r = 3f64.sqrt() * AUTO_MARGIN;
        assert!(((r / d).asin() - (AUTO_FOV_Y_DEGREES / 2.0).to_radians()).abs() < 1e-12);
    }
}

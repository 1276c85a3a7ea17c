//! Animated material properties: [`Scene::material_at`] evaluates a material at a time from
//! its [`MaterialChannel`]s ([`Scene::material_channels`]), the way ufbx's `evaluate_scene`
//! re-reads a material's maps from its animated properties (`ufbxi_fetch_maps` on the
//! evaluated props).

use super::{MaterialChannel, MaterialProperty, MaterialValue, Time};
use crate::scene::{Material, Scene};

impl MaterialChannel {
    /// The property's value at `frame` over `stored` (the material's stored value, units of
    /// [`Material::property`]): each component from its curve, else the curve node's
    /// constant, else `stored`; a layered channel blends its layers.
    pub fn sample(&self, frame: f64, stored: glam::DVec3) -> glam::DVec3 {
        match &self.value {
            MaterialValue::Curves { curves, constants } => {
                let mut v = stored;
                for c in 0..3 {
                    match curves[c].as_ref().and_then(|t| t.sample(frame)) {
                        Some(x) => v[c] = x,
                        None => {
                            if let Some(k) = constants[c] {
                                v[c] = k;
                            }
                        }
                    }
                }
                v
            }
            MaterialValue::Layered(blend) => blend.sample(frame),
        }
    }
}

impl Scene {
    /// Material `material` (index into [`Scene::materials`]) at `time` of animation
    /// `animation` (index into [`Scene::animations`]; `None` or an index past the end: the
    /// stored material): a copy with every animated property of that animation set to its
    /// value at that time ([`MaterialChannel::sample`], [`Material::set_property`], which
    /// also updates the transparency and self-illumination derived from them). `None` when
    /// `material` is out of range. Curves extrapolate as their tracks say.
    pub fn material_at(
        &self,
        animation: Option<usize>,
        material: usize,
        time: Time,
    ) -> Option<Material> {
        let mut m = self.materials.get(material)?.clone();
        let Some((a, anim)) = animation.and_then(|a| Some((a, self.animations.get(a)?))) else {
            return Some(m);
        };
        let frame = time.to_frame(anim.fps);
        for ch in &self.material_channels {
            if ch.animation == a && ch.material == material {
                let v = ch.sample(frame, m.property(ch.property));
                m.set_property(ch.property, v);
            }
        }
        Some(m)
    }

    /// Every material at `time` of `animation` ([`Scene::material_at`]), in
    /// [`Scene::materials`] order.
    pub fn materials_at(&self, animation: Option<usize>, time: Time) -> Vec<Material> {
        (0..self.materials.len()).filter_map(|m| self.material_at(animation, m, time)).collect()
    }

    /// The (material, property) pairs animation `animation` animates, in channel order,
    /// without repeats: what a writer that cannot carry them reports as not written.
    pub fn animated_material_properties(
        &self,
        animation: Option<usize>,
    ) -> Vec<(usize, MaterialProperty)> {
        let mut out: Vec<(usize, MaterialProperty)> = Vec::new();
        for ch in &self.material_channels {
            if Some(ch.animation) == animation && !out.contains(&(ch.material, ch.property)) {
                out.push((ch.material, ch.property));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anim::{Animation, Interpolation, Key, Track};
    use glam::{DVec3, Vec3};

    fn linear(keys: &[(f64, f64)]) -> Track<f64> {
        Track::new(
            keys.iter()
                .map(|&(frame, value)| Key { frame, value, interpolation: Interpolation::Linear })
                .collect(),
        )
    }

    /// `maya_anim_diffuse_curve_7700_ascii.fbx`'s shape: a `DiffuseColor` curve node with a
    /// curve on `d|X` only and `d|Y`, `d|Z` constants, `DiffuseFactor` 0.8. Hand-computed: at
    /// frame 5 of a 0→1 linear curve over frames 0–10, red is 0.5; green and blue take the
    /// node's 0.5; the shown colour is 0.8 × that (ufbx: `diffuse_color × diffuse_factor`).
    #[test]
    fn an_animated_colour_component_replaces_the_stored_one_and_the_factor_still_applies() {
        let mut s = Scene::default();
        s.materials.push(Material {
            diffuse: Vec3::new(0.415, 0.5, 0.5),
            diffuse_factor: 0.8,
            ..Material::default()
        });
        s.animations.push(Animation { fps: 24.0, ..Animation::default() });
        s.material_channels.push(MaterialChannel {
            animation: 0,
            material: 0,
            property: MaterialProperty::Diffuse,
            value: MaterialValue::Curves {
                curves: [Some(linear(&[(0.0, 0.0), (10.0, 1.0)])), None, None],
                constants: [Some(0.415), Some(0.5), Some(0.25)],
            },
        });
        let m = s.material_at(Some(0), 0, Time::Frame(5.0)).unwrap();
        assert_eq!(m.diffuse, Vec3::new(0.5, 0.5, 0.25));
        assert!((m.effective_diffuse() - Vec3::new(0.4, 0.4, 0.2)).abs().max_element() < 1e-6);
        // The stored pose and another animation leave it as stored.
        assert_eq!(s.material_at(None, 0, Time::Frame(5.0)).unwrap().diffuse.x, 0.415);
        assert_eq!(s.material_at(Some(1), 0, Time::Frame(5.0)).unwrap().diffuse.x, 0.415);
        assert!(s.material_at(Some(0), 1, Time::Frame(5.0)).is_none());
    }

    /// FBX `Opacity` supersedes `TransparencyFactor` (Maya writes both): an animated
    /// `TransparencyFactor` under a stored `Opacity` 1 leaves the material opaque, and without
    /// `Opacity` gives transparency = mean(TransparentColor × factor): (1 + 1 + 1)/3 × 0.25.
    #[test]
    fn animated_transparency_factor_follows_the_opacity_rule() {
        let mut s = Scene::default();
        let glass = Material { transparent: Vec3::ONE, ..Material::default() };
        s.materials.push(Material { opacity: Some(1.0), ..glass.clone() });
        s.materials.push(glass);
        s.animations.push(Animation { fps: 30.0, ..Animation::default() });
        for material in 0..2 {
            s.material_channels.push(MaterialChannel {
                animation: 0,
                material,
                property: MaterialProperty::TransparencyFactor,
                value: MaterialValue::Curves {
                    curves: [Some(linear(&[(0.0, 0.25), (30.0, 0.25)])), None, None],
                    constants: [None; 3],
                },
            });
        }
        let at = |m| s.material_at(Some(0), m, Time::Seconds(0.5)).unwrap();
        assert_eq!(at(0).transparency, 0.0);
        assert_eq!(at(1).transparency, 0.25);
        assert_eq!(
            at(1).property(MaterialProperty::TransparencyFactor),
            DVec3::new(0.25, 0.0, 0.0)
        );
    }
}

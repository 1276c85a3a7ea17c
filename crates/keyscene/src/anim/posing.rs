//! Posing a scene as one call (issue #13 §1): which animation ([`AnimationChoice`]), at what
//! time, with or without curve extrapolation, from a stored bind pose, with skins following
//! their node, re-expressed in other axes and units — [`PoseOptions`] and [`Scene::pose`].
//!
//! `keyscene sample`, `render`, `view` and `convert … .obj` all pose through this, so a
//! library user gets exactly the numbers the command line prints.

use std::fmt;

use crate::scene::{AxisSystem, NodeId, Scene};

use super::{Pose, Time};
use crate::quoting::quoted;

/// Which of [`Scene::animations`] to use.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum AnimationChoice {
    /// The first animation, or none (the rest pose) when the scene has no animation.
    #[default]
    First,
    /// This index; an error when the scene has fewer animations.
    Index(usize),
    /// By name (FBX: the AnimationStack's name): the first animation whose name equals it,
    /// else the first whose name contains it; an error when none matches. This is how
    /// `keyscene … --stack NAME` picks.
    Named(String),
    /// No animation: the rest transforms.
    Rest,
}

impl From<Option<usize>> for AnimationChoice {
    /// `Some(i)` is [`AnimationChoice::Index`], `None` [`AnimationChoice::Rest`].
    fn from(index: Option<usize>) -> Self {
        index.map_or(AnimationChoice::Rest, AnimationChoice::Index)
    }
}

/// Why [`Scene::pose`] or [`Scene::choose_animation`] refused its options. The `Display`
/// text names the option and its value, then the reason ([`PoseError::reason`]), which lists
/// what the file does have.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PoseError {
    /// [`AnimationChoice::Index`] past the scene's animations.
    NoSuchAnimation {
        /// The index asked for.
        index: usize,
        /// How many animations the scene has.
        count: usize,
    },
    /// [`AnimationChoice::Named`] matches no animation's name.
    NoAnimationNamed {
        /// The name asked for.
        name: String,
        /// Every animation's name, in scene order.
        available: Vec<String>,
    },
    /// [`PoseOptions::bind_pose`] names no stored bind pose.
    NoSuchBindPose {
        /// The name asked for.
        name: String,
        /// Every stored bind pose's name, in scene order.
        available: Vec<String>,
    },
}

impl PoseError {
    /// The reason alone, without the option it is about (the command line puts its own flag
    /// before it: `--stack "Run": no animation has that name (the file has: "Walk")`).
    pub fn reason(&self) -> String {
        match self {
            PoseError::NoSuchAnimation { count, .. } => {
                format!("the scene has {count} animation(s)")
            }
            PoseError::NoAnimationNamed { available, .. } => {
                let names: Vec<String> = available.iter().map(|a| quoted(a).to_string()).collect();
                format!(
                    "no animation has that name (the file has: {})",
                    if names.is_empty() { "none".into() } else { names.join(", ") }
                )
            }
            PoseError::NoSuchBindPose { available, .. } => format!(
                "the file has no such bind pose (it has: {})",
                if available.is_empty() { "none".to_string() } else { available.join(", ") }
            ),
        }
    }
}

impl fmt::Display for PoseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PoseError::NoSuchAnimation { index, .. } => write!(f, "animation {index}: ")?,
            PoseError::NoAnimationNamed { name, .. } => {
                write!(f, "animation {name}: ", name = quoted(&name))?
            }
            PoseError::NoSuchBindPose { name, .. } => {
                write!(f, "bind pose {name}: ", name = quoted(&name))?
            }
        }
        f.write_str(&self.reason())
    }
}

impl std::error::Error for PoseError {}

/// Something [`Scene::pose`] did not do as asked, though the pose is usable.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PoseWarning {
    /// [`PoseOptions::skin_follows_node`]: no stored bind pose lists this skinned mesh node
    /// and its skin stores no mesh bind matrix ([`Skin::mesh_bind`](crate::scene::Skin::mesh_bind)),
    /// or that matrix is singular, so it is left as its bones alone pose it.
    SkinNotInBindPose {
        /// The node.
        node: NodeId,
        /// Its name.
        name: String,
    },
}

impl fmt::Display for PoseWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PoseWarning::SkinNotInBindPose { name, .. } => {
                write!(
                    f,
                    "no bind pose lists skinned mesh node {name}; left as skinned",
                    name = quoted(&name)
                )
            }
        }
    }
}

/// How [`Scene::pose`] poses and places a scene. The default is the first animation's rest
/// state: no time (see [`PoseOptions::time`]), the file's own extrapolation, axes and unit.
///
/// Build it with [`Default`] and the setters (the struct may grow):
/// ```
/// use keyscene::anim::{AnimationChoice, PoseOptions, Time};
/// use keyscene::scene::AxisSystem;
/// let opts = PoseOptions::default()
///     .animation(AnimationChoice::Named("Take 001".into()))
///     .at(Time::Seconds(1.5))
///     .extrapolation(false)
///     .target_axes(AxisSystem::Y_UP_RIGHT_HANDED)
///     .target_units(1.0);
/// assert_eq!(opts.time, Some(Time::Seconds(1.5)));
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct PoseOptions {
    /// The animation to sample (default: the first).
    pub animation: AnimationChoice,
    /// The time to sample it at. `None` (the default): no animation is sampled, every node at
    /// its rest transform (frame 0 of no animation), as `keyscene convert … .obj --up y`
    /// without `--frame` poses.
    pub time: Option<Time>,
    /// Use each curve's own pre/post extrapolation (cycles, mirror, slope; the default,
    /// `true`); `false` holds every curve at its first/last key outside its keys
    /// ([`Animation::without_extrapolation`](crate::anim::Animation::without_extrapolation),
    /// ufbx's `UFBX_EVALUATE_FLAG_NO_EXTRAPOLATION`).
    pub extrapolation: bool,
    /// Place the nodes this stored bind pose ([`Scene::bind_poses`], FBX `BindPose`) lists at
    /// its matrices ([`Pose::apply_bind_pose`]); an error when the scene has none of that name.
    pub bind_pose: Option<String>,
    /// Skinned meshes also follow their own node's motion since binding, as Maya shows them
    /// ([`Pose::follow_skinned_nodes`]; default `false`: only the bones move a skin, as the FBX
    /// SDK evaluates it). A node no bind pose lists takes its skin's
    /// [`Skin::mesh_bind`](crate::scene::Skin::mesh_bind); nodes with neither are reported as
    /// [`PoseWarning`]s.
    pub skin_follows_node: bool,
    /// Re-express the posed scene in these axes ([`Scene::axis_unit_conversion`]; default:
    /// the file's own).
    pub target_axes: Option<AxisSystem>,
    /// Re-express the posed scene in this unit, metres per unit (default: the file's own).
    /// A file without a unit counts as metres.
    pub target_units: Option<f64>,
}

impl Default for PoseOptions {
    fn default() -> Self {
        PoseOptions {
            animation: AnimationChoice::First,
            time: None,
            extrapolation: true,
            bind_pose: None,
            skin_follows_node: false,
            target_axes: None,
            target_units: None,
        }
    }
}

impl PoseOptions {
    /// Sets [`PoseOptions::animation`].
    pub fn animation(mut self, animation: AnimationChoice) -> Self {
        self.animation = animation;
        self
    }

    /// Sets [`PoseOptions::time`] to `time`.
    pub fn at(mut self, time: Time) -> Self {
        self.time = Some(time);
        self
    }

    /// Sets [`PoseOptions::extrapolation`].
    pub fn extrapolation(mut self, on: bool) -> Self {
        self.extrapolation = on;
        self
    }

    /// Sets [`PoseOptions::bind_pose`].
    pub fn bind_pose(mut self, name: impl Into<String>) -> Self {
        self.bind_pose = Some(name.into());
        self
    }

    /// Sets [`PoseOptions::skin_follows_node`].
    pub fn skin_follows_node(mut self, on: bool) -> Self {
        self.skin_follows_node = on;
        self
    }

    /// Sets [`PoseOptions::target_axes`].
    pub fn target_axes(mut self, axes: AxisSystem) -> Self {
        self.target_axes = Some(axes);
        self
    }

    /// Sets [`PoseOptions::target_units`] (metres per unit).
    pub fn target_units(mut self, metres_per_unit: f64) -> Self {
        self.target_units = Some(metres_per_unit);
        self
    }

    /// Whether these options ask for the geometry exactly as stored: no time, no bind pose,
    /// no skin following, no axes or unit change ([`PoseOptions::extrapolation`] does not
    /// matter without a time). A writer given such options writes the stored geometry
    /// instead of a pose (`keyscene convert … .obj` without posing flags).
    pub fn is_as_stored(&self) -> bool {
        self.time.is_none()
            && self.bind_pose.is_none()
            && !self.skin_follows_node
            && self.target_axes.is_none()
            && self.target_units.is_none()
    }
}

impl Scene {
    /// The animation index `choice` names: `None` for the rest pose
    /// ([`AnimationChoice::Rest`], or [`AnimationChoice::First`] in a scene without
    /// animation).
    ///
    /// Errors: [`PoseError::NoSuchAnimation`] for an index past the end,
    /// [`PoseError::NoAnimationNamed`] for a name no animation has or contains.
    pub fn choose_animation(&self, choice: &AnimationChoice) -> Result<Option<usize>, PoseError> {
        let anims = &self.animations;
        match choice {
            AnimationChoice::First => Ok((!anims.is_empty()).then_some(0)),
            AnimationChoice::Rest => Ok(None),
            &AnimationChoice::Index(index) if index < anims.len() => Ok(Some(index)),
            &AnimationChoice::Index(index) => {
                Err(PoseError::NoSuchAnimation { index, count: anims.len() })
            }
            AnimationChoice::Named(name) => anims
                .iter()
                .position(|a| a.name == *name)
                .or_else(|| anims.iter().position(|a| a.name.contains(name.as_str())))
                .map(Some)
                .ok_or_else(|| PoseError::NoAnimationNamed {
                    name: name.clone(),
                    available: anims.iter().map(|a| a.name.clone()).collect(),
                }),
        }
    }

    /// Poses the scene as `opts` says, in this order: picks the animation
    /// ([`Scene::choose_animation`]); evaluates it at [`PoseOptions::time`]
    /// ([`Scene::evaluate`]; without a time, the rest transforms), holding curve ends when
    /// extrapolation is off; places the nodes of the named bind pose; makes skins follow
    /// their nodes; and last re-expresses everything in the target axes and unit
    /// ([`Pose::transform_world`] with [`Scene::axis_unit_conversion`]). Returns the pose
    /// and what could not be done as asked.
    ///
    /// Errors ([`crate::Error::Pose`]): an animation or bind pose the scene does not have
    /// ([`PoseError`], listing the ones it has).
    pub fn pose(&self, opts: &PoseOptions) -> Result<(Pose, Vec<PoseWarning>), crate::Error> {
        let animation = self.choose_animation(&opts.animation)?;
        let mut pose = match (opts.time, animation) {
            (None, _) => self.evaluate(None, Time::Frame(0.0)),
            (Some(t), Some(a)) if !opts.extrapolation => {
                self.evaluate_animation(Some(&self.animations[a].without_extrapolation()), t)
            }
            (Some(t), a) => self.evaluate(a, t),
        };
        if let Some(name) = &opts.bind_pose {
            let Some(bind) = self.bind_pose(name) else {
                return Err(PoseError::NoSuchBindPose {
                    name: name.clone(),
                    available: self.bind_poses.iter().map(|b| b.name.clone()).collect(),
                }
                .into());
            };
            pose.apply_bind_pose(self, bind);
        }
        let mut warnings = Vec::new();
        if opts.skin_follows_node {
            for node in pose.follow_skinned_nodes(self, &self.bind_poses) {
                let name = self.nodes[node].name.clone();
                warnings.push(PoseWarning::SkinNotInBindPose { node, name });
            }
        }
        if opts.target_axes.is_some() || opts.target_units.is_some() {
            let axes = opts.target_axes.unwrap_or(self.meta.axes);
            pose.transform_world(self.axis_unit_conversion(axes, opts.target_units));
        }
        Ok((pose, warnings))
    }
}

impl Scene {
    /// The frame rate that turns seconds into frames for `animation` (an index
    /// [`Scene::choose_animation`] gave): the animation's own, else the file's
    /// ([`crate::scene::Metadata::frame_rate`]), else 3D Studio's 30 fps
    /// ([`super::THREE_DS_FPS`]); 3DS, 3DA and glTF store no rate. `keyscene sample --time`
    /// and the Python package's `time=` use it.
    pub fn frame_rate(&self, animation: Option<usize>) -> f64 {
        animation
            .and_then(|i| self.animations.get(i))
            .map(|a| a.fps)
            .or(self.meta.frame_rate)
            .filter(|f| f.is_finite() && *f > 0.0)
            .unwrap_or(super::THREE_DS_FPS)
    }

    /// The world matrices of every node at each of `times`, posed as [`Scene::pose`] poses
    /// with `opts` at that time: `times.len() × nodes.len()` matrices, instant-major (node
    /// `n` at instant `i` is element `i * nodes.len() + n`). `opts.time` is ignored. Long runs
    /// of instants are split over the machine's cores (each instant is posed on its own, so
    /// the result does not depend on the split).
    ///
    /// Errors: as [`Scene::pose`].
    pub fn sample_world(
        &self,
        opts: &PoseOptions,
        times: &[Time],
    ) -> Result<Vec<glam::DMat4>, crate::Error> {
        let mut opts = opts.clone();
        // One choice for every instant: the index, so the name is matched once.
        opts.animation = self.choose_animation(&opts.animation)?.into();
        let run = |times: &[Time]| -> Result<Vec<glam::DMat4>, crate::Error> {
            let mut out = Vec::with_capacity(times.len() * self.nodes.len());
            let mut opts = opts.clone();
            for &t in times {
                opts.time = Some(t);
                let (pose, _) = self.pose(&opts)?;
                out.extend_from_slice(&pose.world);
            }
            Ok(out)
        };
        // Instants are independent: split them over the cores (scoped threads, at least
        // `MIN_INSTANTS_PER_THREAD` each), results concatenated in order.
        const MIN_INSTANTS_PER_THREAD: usize = 32;
        let threads = std::thread::available_parallelism()
            .map_or(1, usize::from)
            .min(times.len() / MIN_INSTANTS_PER_THREAD)
            .max(1);
        if threads == 1 {
            return run(times);
        }
        let chunk = times.len().div_ceil(threads);
        let parts: Vec<Result<Vec<glam::DMat4>, crate::Error>> = std::thread::scope(|s| {
            let handles: Vec<_> = times.chunks(chunk).map(|c| s.spawn(move || run(c))).collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                .collect()
        });
        let mut out = Vec::with_capacity(times.len() * self.nodes.len());
        for part in parts {
            out.extend(part?);
        }
        Ok(out)
    }

    /// The world-space vertices of node `node`'s mesh at each of `times`, skinned and
    /// blend-shaped as [`Pose::world_positions`] gives them: `times.len()` runs of the mesh's
    /// vertex count, instant-major. A node that shows no mesh at an instant gives an empty
    /// run there.
    ///
    /// Errors: as [`Scene::pose`].
    pub fn sample_positions(
        &self,
        opts: &PoseOptions,
        node: NodeId,
        times: &[Time],
    ) -> Result<Vec<Vec<glam::DVec3>>, crate::Error> {
        let mut opts = opts.clone();
        opts.animation = self.choose_animation(&opts.animation)?.into();
        times
            .iter()
            .map(|&t| {
                opts.time = Some(t);
                let (pose, _) = self.pose(&opts)?;
                Ok(pose.world_positions(self, node))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anim::Animation;

    fn scene_with(names: &[&str]) -> Scene {
        let mut s = Scene::default();
        for n in names {
            s.animations.push(Animation { name: n.to_string(), ..Animation::default() });
        }
        s
    }

    fn fly() -> Scene {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/FLY.3DS");
        crate::load(std::path::Path::new(path)).unwrap().0
    }

    #[test]
    fn sampling_many_instants_is_posing_each_and_matches_lib3ds() {
        let scene = fly();
        let times: Vec<Time> = (0..100).map(|k| Time::Frame(f64::from(k) * 6.0)).collect();
        let world = scene.sample_world(&PoseOptions::default(), &times).unwrap();
        let n = scene.nodes.len();
        assert_eq!(world.len(), times.len() * n);
        // Split over threads or not, instant k is pose k.
        for k in [0, 33, 99] {
            let (pose, _) = scene.pose(&PoseOptions::default().at(times[k])).unwrap();
            assert_eq!(&world[k * n..(k + 1) * n], &pose.world[..]);
        }
        // lib3ds 1.3 puts vertex 0 of "enemy" at (-87.42739, 97.29549, -0.5763435) at frame 200.
        let enemy = scene.nodes.iter().position(|x| x.name == "enemy").unwrap();
        let runs = scene
            .sample_positions(
                &PoseOptions::default(),
                enemy,
                &[Time::Frame(200.0), Time::Seconds(200.0 / 30.0)],
            )
            .unwrap();
        let lib3ds = glam::DVec3::new(-87.42739, 97.29549, -0.5763435);
        for run in &runs {
            assert!((run[0] - lib3ds).length() < 1e-3, "{}", run[0]);
        }
        assert_eq!(runs[0], runs[1]);
        // 3DS has no stored rate: 30 fps, as 3D Studio's keyframer.
        assert_eq!(scene.frame_rate(Some(0)), 30.0);
    }

    #[test]
    fn animations_are_picked_by_index_exact_name_then_substring() {
        let s = scene_with(&["Take 001", "Run", "Run fast"]);
        assert_eq!(s.choose_animation(&AnimationChoice::First), Ok(Some(0)));
        assert_eq!(s.choose_animation(&AnimationChoice::Rest), Ok(None));
        assert_eq!(s.choose_animation(&AnimationChoice::Index(2)), Ok(Some(2)));
        assert_eq!(s.choose_animation(&AnimationChoice::Named("Run".into())), Ok(Some(1)));
        assert_eq!(s.choose_animation(&AnimationChoice::Named("fast".into())), Ok(Some(2)));
        assert_eq!(scene_with(&[]).choose_animation(&AnimationChoice::First), Ok(None));
        let e = s.choose_animation(&AnimationChoice::Index(3)).unwrap_err();
        assert_eq!(e.to_string(), "animation 3: the scene has 3 animation(s)");
        let e = s.choose_animation(&AnimationChoice::Named("Walk".into())).unwrap_err();
        assert_eq!(
            e.to_string(),
            r#"animation "Walk": no animation has that name (the file has: "Take 001", "Run", "Run fast")"#
        );
    }

    #[test]
    fn an_unknown_bind_pose_lists_the_ones_the_file_has() {
        let s = scene_with(&[]);
        let e = s.pose(&PoseOptions::default().bind_pose("skinCluster1")).unwrap_err();
        assert_eq!(
            e.to_string(),
            r#"bind pose "skinCluster1": the file has no such bind pose (it has: none)"#
        );
    }

    #[test]
    fn nothing_asked_is_the_stored_geometry_and_extrapolation_alone_changes_nothing() {
        assert!(PoseOptions::default().is_as_stored());
        assert!(PoseOptions::default().extrapolation(false).is_as_stored());
        assert!(!PoseOptions::default().at(Time::Frame(0.0)).is_as_stored());
        assert!(!PoseOptions::default().target_units(0.01).is_as_stored());
    }
}

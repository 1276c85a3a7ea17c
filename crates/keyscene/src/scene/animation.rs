//! The animation data of a scene: tracks of keys and what they drive ([`Animation`],
//! [`Channel`], [`ChannelTarget`], [`Track`], [`Key`], [`Interpolation`], and the layer blends
//! of FBX animation layers). The types live here, in the scene model, because a [`Scene`]
//! holds its animations; sampling and evaluating them is [`crate::anim`]'s work (its module
//! docs give the time units and spline rules), and `anim` re-exports every type here, so
//! `keyscene::anim::Track` and `keyscene::scene::animation::Track` are the same type.
//!
//! Why this split (issue 13, "modules that read one way"): `scene` reads nothing above it,
//! `anim` reads `scene`. Before, the scene model held `anim::Animation` while `anim` took
//! `scene` types, so each module needed the other.
//!
//! [`Scene`]: super::Scene

use glam::{DQuat, DVec3};

use super::{EulerOrder, NodeId};

/// One animation (3DS keyframer, FBX `AnimationStack`, glTF animation).
#[derive(Debug, Clone, Default)]
pub struct Animation {
    /// The animation's name (FBX stack name; empty for 3DS).
    pub name: String,
    /// Frames per second of the key times.
    pub fps: f64,
    /// First and last frame of the animation, inclusive.
    pub frame_range: (f64, f64),
    /// What is animated.
    pub channels: Vec<Channel>,
}

/// The animated values of one node.
#[derive(Debug, Clone)]
pub struct Channel {
    /// The node whose value this drives.
    pub node: NodeId,
    /// Which value, with its keys.
    pub target: ChannelTarget,
}

/// A node property driven by a track.
#[derive(Debug, Clone)]
pub enum ChannelTarget {
    /// Local translation in scene units (3DS `POS_TRACK_TAG`).
    Translation(Track<DVec3>),
    /// Local rotation (3DS `ROT_TRACK_TAG`).
    Rotation(RotationTrack),
    /// Local scale factors (3DS `SCL_TRACK_TAG`).
    Scale(Track<DVec3>),
    /// Hidden (`true`) or shown, held between keys (3DS `HIDE_TRACK_TAG`, keys already turned
    /// from toggles into absolute states).
    Hidden(Track<bool>),
    /// The mesh shown by the node, index into `Scene::meshes`, held between keys
    /// (3DS `MORPH_TRACK_TAG`).
    Morph(Track<usize>),
    /// Camera field of view in degrees (3DS `FOV_TRACK_TAG`).
    Fov(Track<f64>),
    /// Camera or spotlight roll in degrees (3DS `ROLL_TRACK_TAG`).
    Roll(Track<f64>),
    /// Light colour, linear RGB 0–1 (3DS `COL_TRACK_TAG`).
    Color(Track<DVec3>),
    /// Spotlight hotspot full angle in degrees (3DS `HOT_TRACK_TAG`).
    Hotspot(Track<f64>),
    /// Spotlight falloff full angle in degrees (3DS `FALL_TRACK_TAG`).
    Falloff(Track<f64>),
    /// Local translation animated per component (FBX `Lcl Translation` with its `d|X`, `d|Y`,
    /// `d|Z` curves); `None` components keep the rest value.
    TranslationXyz([Option<Track<f64>>; 3]),
    /// Local scale animated per component (FBX `Lcl Scaling`); `None` keeps the rest value.
    ScaleXyz([Option<Track<f64>>; 3]),
    /// Any other animated scalar property, by the source's property name (FBX `FieldOfView`,
    /// `Intensity`, `Color|X` …), in the source's units. Two names are evaluated:
    /// `Visibility` hides the node while its value is below 1 in magnitude, and
    /// `DeformPercent#k` ([`curve::morph_weight_property`](crate::anim::curve::morph_weight_property)) sets the weight of morph target `k`
    /// of the node's mesh, in percent ([`Pose::morph_weights`](crate::anim::Pose::morph_weights)).
    Property {
        /// The property's name as the source spells it.
        name: String,
        /// The keys.
        track: Track<f64>,
    },
    /// A translation, rotation, scale or property that several FBX animation layers animate,
    /// or one layer with a partial or animated weight: the layers' curves kept as they are
    /// and blended at the asked time by ufbx's rule ([`layers`](crate::anim::layers)). Writers have no layer form
    /// and resample it.
    Layered(Box<LayerBlend>),
}

/// How a track continues outside its first and last key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Extrapolation {
    /// Hold the end key's value.
    #[default]
    Constant,
    /// Repeat the keyed span (3DS repeat/loop flags: the keyed span repeats).
    Repeat,
    /// Before the first key only: take the **last** key's value. This is what lib3ds 1.3
    /// computes for a 3DS track without the repeat flag (its key search finds no segment and
    /// falls through to the after-the-end branch); keyscene reproduces it so that 3DS files
    /// evaluate as the reference does (e.g. `PASKA2.3DS`, whose objects' first keys are at
    /// frames 140 and 150).
    HoldLast,
    /// Continue in a straight line with the end key's tangent (FBX "keep slope", `K`): before
    /// the first key its leaving slope, after the last key its arriving slope.
    Slope,
    /// Cycle the keyed span (FBX repetition `R`, mirror `M`, relative repetition `A`), at most
    /// `count` times (`None`: forever), then hold the value the last cycle ends on. See
    /// [`curve`](crate::anim::curve) for the exact rules. Unlike [`Extrapolation::Repeat`] the curve is only
    /// extrapolated strictly outside its keys (a frame on the last key shows the last key).
    Cycle {
        /// How each cycle maps back onto the keyed span.
        mode: CycleMode,
        /// How many cycles, `None` for no limit.
        count: Option<u32>,
    },
}

/// Keys of one animated value, sorted by frame.
#[derive(Debug, Clone, PartialEq)]
pub struct Track<T> {
    /// The keys, in non-decreasing frame order.
    pub keys: Vec<Key<T>>,
    /// Behaviour before the first key.
    pub before: Extrapolation,
    /// Behaviour after the last key.
    pub after: Extrapolation,
    /// Tangents at the first and last key are computed as if the track were cyclic
    /// (lib3ds `LIB3DS_SMOOTH`).
    pub cyclic_tangents: bool,
    /// The source's track flags word as stored (3DS: see `formats::three_ds` for which bits
    /// keyscene reads and why).
    pub flags: u16,
}

impl<T> Default for Track<T> {
    fn default() -> Self {
        Track {
            keys: Vec::new(),
            before: Extrapolation::Constant,
            after: Extrapolation::Constant,
            cyclic_tangents: false,
            flags: 0,
        }
    }
}

impl<T> Track<T> {
    /// A track of `keys` with constant extrapolation and no flags.
    pub fn new(keys: Vec<Key<T>>) -> Self {
        Track { keys, ..Track::default() }
    }

    /// `true` when the track has keys whose values can differ over time.
    pub fn is_animated(&self) -> bool {
        self.keys.len() > 1
    }
}

/// One key of a [`Track`].
#[derive(Debug, Clone, PartialEq)]
pub struct Key<T> {
    /// The key's time in frames of the animation's clock.
    pub frame: f64,
    /// The value at the key.
    pub value: T,
    /// How the curve arrives at and leaves this key.
    pub interpolation: Interpolation<T>,
}

/// How the curve leaves a key towards the next one.
#[derive(Debug, Clone, PartialEq)]
pub enum Interpolation<T> {
    /// Hold this key's value until the next key.
    Step,
    /// Take the **next** key's value right after this key (FBX "constant next"): the value is
    /// this key's at exactly its frame and the next key's strictly between the two.
    StepNext,
    /// Straight line to the next key.
    Linear,
    /// Kochanek–Bartels spline through the neighbouring keys (3D Studio, 3DA TCB tracks).
    Tcb(Tcb),
    /// Cubic Bézier in (time, value) with weighted tangents, as FBX `AnimationCurve` cubic keys
    /// and 3DA `BEZIER` keys store them. Slopes are value units **per frame**; a weight is the
    /// fraction of the segment's duration the tangent handle spans (1/3 makes this the plain
    /// Hermite cubic). The segment from key `a` to `b` has control points
    /// `(fa, va)`, `(fa + wa·Δ, va + sa·wa·Δ)`, `(fb − wb·Δ, vb − sb·wb·Δ)`, `(fb, vb)` with
    /// `sa`/`wa` = `a.out_slope`/`a.out_weight`, `sb`/`wb` = `b.in_slope`/`b.in_weight`,
    /// `Δ = fb − fa`, and is evaluated by solving the time polynomial for the frame.
    Bezier {
        /// Slope arriving at this key.
        in_slope: T,
        /// Weight of the arriving handle (fraction of the previous segment).
        in_weight: f64,
        /// Slope leaving this key.
        out_slope: T,
        /// Weight of the leaving handle (fraction of the next segment).
        out_weight: f64,
    },
    /// Cubic Hermite with stored tangents, in value units **per frame**: `in_tangent` arrives at
    /// this key, `out_tangent` leaves it (glTF `CUBICSPLINE` tangents are per second: multiply
    /// by `1 / fps` when reading them).
    Hermite {
        /// Incoming tangent.
        in_tangent: T,
        /// Outgoing tangent.
        out_tangent: T,
    },
    /// Quaternion tracks ([`RotationTrack::Quat`]): a squad segment with stored control
    /// quaternions (3DA TCB 4D `m_in_tan` / `m_out_tan`). The segment to the next key is
    /// `squad(a, a.out_control, b.in_control, b, u)` with lib3ds' slerp, which does not take
    /// the short way ([`tcb::squad_lib3ds`](crate::anim::tcb::squad_lib3ds)); `b.in_control` is `b`'s value when `b` is not a
    /// squad key. On other tracks a squad key interpolates linearly.
    Squad {
        /// Control quaternion arriving at this key.
        in_control: T,
        /// Control quaternion leaving this key.
        out_control: T,
    },
}

/// Kochanek–Bartels parameters of a key, as 3D Studio stores them (seed 000, "Tracks").
///
/// Ease to/from are kept but, like lib3ds 1.3 (whose track evaluation never calls its
/// `lib3ds_ease`), not applied by the evaluator: 3DS results must agree with lib3ds.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Tcb {
    /// Tension −1..1: higher is tighter.
    pub tension: f32,
    /// Continuity −1..1: 0 is smooth.
    pub continuity: f32,
    /// Bias −1..1: negative leans to the next key, positive to the previous.
    pub bias: f32,
    /// Ease into this key 0..1 (slows the approach).
    pub ease_to: f32,
    /// Ease out of this key 0..1 (slows the departure).
    pub ease_from: f32,
}

/// A 3DS rotation key value: a turn of `angle` radians about `axis`, relative to the
/// previous key's orientation (the first key is relative to identity).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AxisAngle {
    /// The turn in radians (may exceed a full turn: 3D Studio keeps spins).
    pub angle: f64,
    /// The axis, not necessarily normalised (3DS files store what the editor computed).
    pub axis: DVec3,
}

/// The rotation of a node over time.
#[derive(Debug, Clone, PartialEq)]
pub enum RotationTrack {
    /// Absolute orientations (glTF, 3DA TCB 4D).
    Quat(Track<DQuat>),
    /// 3DS relative axis-angle keys, accumulated and interpolated as lib3ds does.
    Relative(Track<AxisAngle>),
    /// Euler angles in **radians** animated per component (FBX `Lcl Rotation` curves, 3DA
    /// `EULER` tracks), combined in `order`; `None` components keep the rest rotation's angle
    /// (`rest`, also radians, in the same order).
    Euler {
        /// The order the three rotations apply in.
        order: EulerOrder,
        /// The rest angles (radians) used for components without a track.
        rest: DVec3,
        /// X, Y and Z angle tracks, radians.
        xyz: [Option<Track<f64>>; 3],
    },
}

impl RotationTrack {
    /// Number of keys.
    pub fn key_count(&self) -> usize {
        match self {
            RotationTrack::Quat(t) => t.keys.len(),
            RotationTrack::Relative(t) => t.keys.len(),
            RotationTrack::Euler { xyz, .. } => {
                xyz.iter().flatten().map(|t| t.keys.len()).max().unwrap_or(0)
            }
        }
    }
}

/// How a [`Extrapolation::Cycle`] maps frames outside the keys back onto them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CycleMode {
    /// The keyed span repeats as is (FBX `R`).
    Repeat,
    /// Every other cycle runs backwards (FBX `M`).
    Mirror,
    /// The span repeats, each cycle offset by the difference between the last and first key's
    /// values (FBX `A`, Maya "cycle with offset").
    Relative,
}

/// What a [`LayerBlend`] animates, and the units of its values.
#[derive(Debug, Clone, PartialEq)]
pub enum LayeredValue {
    /// The local translation (FBX `Lcl Translation`), scene units.
    Translation,
    /// The local rotation (FBX `Lcl Rotation`): Euler angles in **degrees** about X, Y and Z.
    Rotation {
        /// The order the blended angles apply in: the node's rotation order (FBX
        /// `RotationOrder` when the node uses its rotation space, else XYZ).
        order: EulerOrder,
        /// The order the layers compose rotations in (`q(e)` in the module docs): the
        /// model's `RotationOrder` whether or not its rotation space is used, as ufbx reads it
        /// for the blend.
        blend_order: EulerOrder,
    },
    /// The local scale factors (FBX `Lcl Scaling`).
    Scale,
    /// A scalar property, named and evaluated as [`ChannelTarget::Property`] (FBX
    /// `Visibility`, `DeformPercent#k`, `RotationPivot|X` …): component 0 (x) of the
    /// blend is its value, in the source's units. A vector property is one blend per
    /// component.
    Property(String),
}

/// How a layer's value meets the layers under it (FBX `AnimationLayer` `BlendMode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlendMode {
    /// `BlendMode` 0: added, scaled by the weight.
    Additive,
    /// `BlendMode` 1: replaces the value; the weight is not used.
    Override,
    /// `BlendMode` 2: mixed with the value by the weight.
    OverridePassthrough,
}

impl BlendMode {
    /// The mode for FBX's `BlendMode` value; values other than 0–2 read as override, as ufbx
    /// reads them.
    pub fn from_fbx(v: i64) -> BlendMode {
        match v {
            0 => BlendMode::Additive,
            2 => BlendMode::OverridePassthrough,
            _ => BlendMode::Override,
        }
    }
}

/// One layer's part in a [`LayerBlend`].
#[derive(Debug, Clone, PartialEq)]
pub struct LayerContribution {
    /// Whether this is the first layer of its stack: it replaces the value, whatever its
    /// mode and weight.
    pub first_in_stack: bool,
    /// How the layer combines.
    pub mode: BlendMode,
    /// The layer's weight, 0–1 (FBX `Weight` ÷ 100, clamped, above 0.99999 taken as 1).
    pub weight: f64,
    /// The layer's animated `Weight`, in **percent** (FBX's unit), when it has a curve: it
    /// replaces [`LayerContribution::weight`] for the blended modes.
    pub weight_track: Option<Track<f64>>,
    /// Rotations compose as orientations (FBX `RotationAccumulationMode` 0), else add or mix
    /// angle by angle.
    pub compose_rotation: bool,
    /// Scales multiply (FBX `ScaleAccumulationMode` 0), else add or mix.
    pub compose_scale: bool,
    /// The layer's curves for components X, Y and Z (degrees for rotation).
    pub curves: [Option<Track<f64>>; 3],
    /// The curve node's own values (`d|X`, `d|Y`, `d|Z`): a component without a curve takes
    /// it; without either it keeps the value of the layers under it.
    pub constants: [Option<f64>; 3],
}

/// A property animated by several layers of a stack, or by one whose weight is partial or
/// animated: the layers' values blended at the asked time (module docs).
#[derive(Debug, Clone, PartialEq)]
pub struct LayerBlend {
    /// What is animated, and the units.
    pub value: LayeredValue,
    /// The value under the stack: the node's rest value (degrees for rotation; a morph
    /// weight in percent). The first layer that animates the property blends with it when
    /// it is not the stack's first layer.
    pub rest: DVec3,
    /// The layers that animate the property, in stack order.
    pub layers: Vec<LayerContribution>,
}

/// An animated property of a material (FBX: an `AnimationCurveNode` connected `OP` to a
/// `Material`'s property), kept in [`Scene::material_channels`](super::Scene::material_channels)
/// and evaluated by `Scene::material_at` ([`crate::anim`]).
#[derive(Debug, Clone)]
pub struct MaterialChannel {
    /// The animation it belongs to: index into [`Scene::animations`](super::Scene::animations).
    pub animation: usize,
    /// The material it drives: index into [`Scene::materials`](super::Scene::materials).
    pub material: usize,
    /// Which property.
    pub property: MaterialProperty,
    /// Its keys, per component.
    pub value: MaterialValue,
}

/// The keys of a [`MaterialChannel`]. Components are X, Y, Z (red, green, blue for a
/// colour; a factor uses X only), in the property's own units (colours 0–1, factors 1 =
/// 100 %, `Shininess` as FBX stores it).
// The curves are kept inline: a scene has a few material channels, and a box per channel
// would only move the same bytes.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
pub enum MaterialValue {
    /// One layer's curves. A component without a curve takes the curve node's value
    /// (`constants`, FBX `d|X`, `d|Y`, `d|Z`), as ufbx's `ufbx_evaluate_anim_value_vec3`
    /// does, else keeps the material's stored value.
    Curves {
        /// The curves per component.
        curves: [Option<Track<f64>>; 3],
        /// The curve node's `d|` values per component.
        constants: [Option<f64>; 3],
    },
    /// Several FBX animation layers (or one of partial or animated weight), blended as node
    /// properties are ([`LayerBlend`], value [`LayeredValue::Property`] with the property's
    /// FBX name; its `rest` is the material's stored value).
    Layered(Box<LayerBlend>),
}

/// A material property a [`MaterialChannel`] animates, by its FBX name; what it sets in
/// [`Material`](super::Material).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MaterialProperty {
    /// `AmbientColor` (FBX 6.1 `Ambient`) → [`Material::ambient`](super::Material::ambient).
    Ambient,
    /// `AmbientFactor` → [`Material::ambient_factor`](super::Material::ambient_factor).
    AmbientFactor,
    /// `DiffuseColor` (`Diffuse`) → [`Material::diffuse`](super::Material::diffuse).
    Diffuse,
    /// `DiffuseFactor` → [`Material::diffuse_factor`](super::Material::diffuse_factor).
    DiffuseFactor,
    /// `SpecularColor` (`Specular`) → [`Material::specular`](super::Material::specular).
    Specular,
    /// `SpecularFactor` → [`Material::shininess_strength`](super::Material::shininess_strength).
    SpecularFactor,
    /// `ShininessExponent` (`Shininess`) ÷ 100 → [`Material::shininess`](super::Material::shininess).
    Shininess,
    /// `EmissiveColor` (`Emissive`) → [`Material::emissive`](super::Material::emissive).
    Emissive,
    /// `EmissiveFactor` → [`Material::emissive_factor`](super::Material::emissive_factor).
    EmissiveFactor,
    /// `TransparentColor` → [`Material::transparent`](super::Material::transparent).
    TransparentColor,
    /// `TransparencyFactor` → [`Material::transparency_factor`](super::Material::transparency_factor).
    TransparencyFactor,
    /// `Opacity` → [`Material::opacity`](super::Material::opacity).
    Opacity,
    /// A user property (FBX `U` flag): index into
    /// [`Material::user_properties`](super::Material::user_properties), its components in the
    /// property's own units ([`UserValue::components`](super::UserValue::components)).
    User(u16),
}

impl MaterialProperty {
    /// The property an FBX material property name animates (7.x names and the FBX 6.1 ones
    /// without `Color`, as ufbx's material map table reads them); `None` for others.
    pub fn from_fbx(name: &str) -> Option<MaterialProperty> {
        use MaterialProperty::*;
        Some(match name {
            "AmbientColor" | "Ambient" => Ambient,
            "AmbientFactor" => AmbientFactor,
            "DiffuseColor" | "Diffuse" => Diffuse,
            "DiffuseFactor" => DiffuseFactor,
            "SpecularColor" | "Specular" => Specular,
            "SpecularFactor" => SpecularFactor,
            "ShininessExponent" | "Shininess" => Shininess,
            "EmissiveColor" | "Emissive" => Emissive,
            "EmissiveFactor" => EmissiveFactor,
            "TransparentColor" | "Transparent" => TransparentColor,
            "TransparencyFactor" | "TransparentFactor" => TransparencyFactor,
            "Opacity" => Opacity,
            _ => return None,
        })
    }

    /// The property's FBX 7 name (`DiffuseColor`, `DiffuseFactor`, …), for messages.
    pub fn fbx_name(self) -> &'static str {
        use MaterialProperty::*;
        match self {
            Ambient => "AmbientColor",
            AmbientFactor => "AmbientFactor",
            Diffuse => "DiffuseColor",
            DiffuseFactor => "DiffuseFactor",
            Specular => "SpecularColor",
            SpecularFactor => "SpecularFactor",
            Shininess => "ShininessExponent",
            Emissive => "EmissiveColor",
            EmissiveFactor => "EmissiveFactor",
            TransparentColor => "TransparentColor",
            TransparencyFactor => "TransparencyFactor",
            Opacity => "Opacity",
            User(_) => "user property",
        }
    }

    /// The FBX name of the property on material `m`: [`MaterialProperty::fbx_name`], or a user
    /// property's own name.
    pub fn name_on(self, m: &super::Material) -> String {
        match self {
            MaterialProperty::User(k) => {
                m.user_properties.get(usize::from(k)).map_or_else(String::new, |p| p.name.clone())
            }
            p => p.fbx_name().to_string(),
        }
    }
}

//! The FBX writer's animation pass: per scene animation one `AnimationStack` +
//! `AnimationLayer`, and per node part (T, R, S) an `AnimationCurveNode` on the model's
//! `Lcl …` with its `AnimationCurve`s, key for key ([`plan_direct`], `keys.rs`) or resampled
//! by the shared adaptive sampler ([`sample`]; the rules are in the module docs of `export.rs`
//! and docs/fbx.md).

use glam::DVec3;

use super::keys;
use super::transform::{decompose, euler_xyz, local_matrix, quat_xyz, unwrap_near};
use super::{
    ktime, name_class, p, p_time, props70, Builder, Resampled, WriteOptions, KEY_DEFAULT_WEIGHTS,
    KEY_FLAGS_LINEAR,
};
use crate::anim::{self, resample, Animation, ChannelTarget, RotationTrack, Track};
use crate::formats::fbx::write::{Record, Value, WriteError};
use crate::quoting::quoted;
use crate::scene::{EulerOrder, Scene};

/// A node's rest `Lcl Translation`, `Lcl Rotation` (XYZ Euler degrees), `Lcl Scaling`: the
/// values its `Model` record holds.
type Parts = (DVec3, DVec3, DVec3);

/// An animation's clock: frames per second (30 when the source's is not usable) and its frame
/// range (`(0, 0)` when not usable).
pub(super) fn clock(anim: &Animation) -> (f64, (f64, f64)) {
    let fps = if anim.fps.is_finite() && anim.fps > 0.0 { anim.fps } else { 30.0 };
    let (f0, f1) = anim.frame_range;
    let range = if f0.is_finite() && f1.is_finite() && f1 >= f0 { (f0, f1) } else { (0.0, 0.0) };
    (fps, range)
}

/// The take name of animation `ai`: its name, or `Take 001`… when it has none.
pub(super) fn take_name(scene: &Scene, ai: usize) -> String {
    let a = &scene.animations[ai];
    if a.name.is_empty() {
        format!("Take {:03}", ai + 1)
    } else {
        a.name.clone()
    }
}

/// The animations [`WriteOptions::animation`] selects (all of them by default; none for an
/// index past the end).
pub(super) fn chosen(scene: &Scene, opts: &WriteOptions) -> Vec<usize> {
    match opts.animation {
        Some(a) if a < scene.animations.len() => vec![a],
        Some(_) => vec![],
        None => (0..scene.animations.len()).collect(),
    }
}

/// Integer frames of `(lo, hi)` with both ends (a resample's key times), or an error naming
/// `what` when there would be more than `max_keys`.
pub(super) fn resample_frames(
    (lo, hi): (f64, f64),
    max_keys: usize,
    what: impl Fn() -> String,
) -> Result<Vec<f64>, WriteError> {
    let mut v = vec![lo];
    let mut f = lo.floor() + 1.0;
    while f < hi {
        v.push(f);
        f += 1.0;
        if v.len() > max_keys {
            return Err(WriteError {
                path: vec!["Objects".into(), "AnimationCurve".into()],
                what: format!(
                    "{} spans {} frames, more keys than the limit {max_keys}",
                    what(),
                    hi - lo
                ),
            });
        }
    }
    if hi > lo {
        v.push(hi);
    }
    Ok(v)
}

/// A linear curve through `(time, value)` pairs (a resample), keys flagged as the SDK writes
/// linear keys.
pub(super) fn linear_curve(times: &[i64], values: impl Iterator<Item = f64>) -> keys::FbxCurve {
    keys::FbxCurve {
        keys: times
            .iter()
            .zip(values)
            .map(|(&time, v)| keys::FbxKey {
                time,
                value: v as f32,
                flags: KEY_FLAGS_LINEAR,
                data: [0.0, 0.0, f32::from_bits(KEY_DEFAULT_WEIGHTS), 0.0],
            })
            .collect(),
        pre: None,
        post: None,
    }
}

/// One animation as the property passes (camera/light attribute curves, blend-shape
/// `DeformPercent` curves) write it: animation `ai` of `scene`, its `AnimationLayer` id, its
/// key rate (frames per second) and written frame range, and the write options.
#[derive(Clone, Copy)]
pub(super) struct Take<'a> {
    pub scene: &'a Scene,
    pub ai: usize,
    pub layer: i64,
    pub fps: f64,
    pub range: (f64, f64),
    pub opts: &'a WriteOptions,
}

impl Builder {
    /// The animation pass (see the module docs): one stack per chosen animation. `direct` is
    /// [`super::transform::direct_nodes`] and `rest` each node's `Lcl Translation`, `Lcl Rotation` (degrees)
    /// and `Lcl Scaling` as its `Model` holds them (the rest pose, from the object pass): a
    /// baked node whose animation holds other values, even constant ones, needs curves.
    pub(super) fn animations(
        &mut self,
        scene: &Scene,
        opts: &WriteOptions,
        model_ids: &[i64],
        direct: &[bool],
        rest: &[Parts],
    ) -> Result<(), WriteError> {
        let mut dropped_morph = 0;
        for ai in chosen(scene, opts) {
            let anim = &scene.animations[ai];
            let (fps, range) = clock(anim);
            dropped_morph += anim
                .channels
                .iter()
                .filter(|c| matches!(c.target, ChannelTarget::Morph(_)))
                .count();
            let layer = self.stack(scene, ai, fps, range);
            let by_node = anim::channels_by_node(scene, Some(ai));
            let plans = plans(scene, &by_node, direct, fps, range);
            let samples = sample(scene, ai, &plans, (direct, &by_node, rest), fps, range, opts)?;
            for i in 0..scene.nodes.len() {
                let node = NodeCurves { ai, i, model: model_ids[i], rest: rest[i], layer };
                self.node_curves(node, &plans[i], &samples.values[i], &samples.times[i]);
            }
            self.report.capped += samples.capped;
            let take = Take { scene, ai, layer, fps, range, opts };
            self.attribute_curves(&take)?;
            self.deformer_curves(&take)?;
            self.visibility_curves(&take, model_ids)?;
            self.user_property_curves(&take, model_ids)?;
            self.material_user_property_curves(&take)?;
        }
        if dropped_morph > 0 {
            self.report.dropped.push(format!("{dropped_morph} 3DS morph (mesh swap) tracks"));
        }
        Ok(())
    }

    /// Writes animation `ai`'s `AnimationStack` and its `AnimationLayer`; returns the layer id.
    fn stack(&mut self, scene: &Scene, ai: usize, fps: f64, (f0, f1): (f64, f64)) -> i64 {
        let stack = self.id();
        let layer = self.id();
        let name = take_name(scene, ai);
        let (k0, k1) = (ktime(f0 / fps), ktime(f1 / fps));
        self.objects.push(
            Record::with(
                "AnimationStack",
                vec![Value::I64(stack), name_class(&name, "AnimStack"), Value::str("")],
            )
            .child(props70(vec![
                p_time("LocalStart", k0),
                p_time("LocalStop", k1),
                p_time("ReferenceStart", k0),
                p_time("ReferenceStop", k1),
            ])),
        );
        self.objects.push(Record::with(
            "AnimationLayer",
            vec![Value::I64(layer), name_class("BaseLayer", "AnimLayer"), Value::str("")],
        ));
        self.count("AnimationStack");
        self.count("AnimationLayer");
        self.oo(layer, stack);
        self.report.stacks += 1;
        layer
    }

    /// One node's curve nodes and curves for one animation, by its plan; a baked node whose
    /// samples all equal its rest values writes none.
    fn node_curves(&mut self, n: NodeCurves, plan: &[Plan; 3], samples: &[Parts], times: &[i64]) {
        if plan.iter().all(|p| matches!(p, Plan::Bake)) {
            let first = n.rest;
            let near =
                |a: DVec3, b: DVec3| a.abs_diff_eq(b, 1e-12 * b.abs().max_element().max(1.0));
            let differs = samples.iter().any(|x| {
                !near(x.0, first.0) || !x.1.abs_diff_eq(first.1, 1e-9) || !near(x.2, first.2)
            });
            if !differs {
                return;
            }
            self.report.resampled_nodes += 1;
            self.report.resampled.push(Resampled {
                animation: n.ai,
                node: n.i,
                part: "transform",
                reason: BAKED,
            });
        }
        let mut resampled_here = false;
        for (pick, (part, prop)) in
            [("T", "Lcl Translation"), ("R", "Lcl Rotation"), ("S", "Lcl Scaling")]
                .into_iter()
                .enumerate()
        {
            let (defaults, curves) = match &plan[pick] {
                Plan::Static => continue,
                Plan::Exact { defaults, curves } => {
                    self.report.exact_curves += curves.iter().flatten().count();
                    (*defaults, curves.clone())
                }
                Plan::Bake | Plan::Resample(_) => {
                    if let Plan::Resample(reason) = &plan[pick] {
                        resampled_here = true;
                        self.report.resampled.push(Resampled {
                            animation: n.ai,
                            node: n.i,
                            part: ["translation", "rotation", "scale"][pick],
                            reason,
                        });
                    }
                    if samples.is_empty() {
                        continue;
                    }
                    let vals: Vec<DVec3> = samples.iter().map(|x| [x.0, x.1, x.2][pick]).collect();
                    let curves = [0, 1, 2]
                        .map(|axis| Some(linear_curve(times, vals.iter().map(|v| v[axis]))));
                    // Every component has a curve, so the defaults do not change the
                    // evaluation: the Model's rest values, which a file written from this
                    // file gives as its defaults too (docs/fbx.md, "FBX → FBX → FBX").
                    ([n.rest.0, n.rest.1, n.rest.2][pick], curves)
                }
            };
            let comps = ["d|X", "d|Y", "d|Z"].map(|c| (c, defaults));
            self.curve_node(part, n.layer, (n.model, prop), &comps, &curves);
        }
        if resampled_here {
            self.report.resampled_nodes += 1;
        }
    }

    /// An `AnimationCurveNode` named `name` in `layer`, OP-connected to `target`'s property,
    /// with one component per `comps` entry (`d|X`…, its default the entry's vector component
    /// by position) and the curves given for them.
    pub(super) fn curve_node(
        &mut self,
        name: &str,
        layer: i64,
        (target, prop): (i64, &str),
        comps: &[(&str, DVec3)],
        curves: &[Option<keys::FbxCurve>],
    ) {
        let cn = self.id();
        let defaults: Vec<f64> = comps.iter().enumerate().map(|(k, (_, d))| d[k.min(2)]).collect();
        self.objects.push(
            Record::with(
                "AnimationCurveNode",
                vec![Value::I64(cn), name_class(name, "AnimCurveNode"), Value::str("")],
            )
            .child(props70(
                comps.iter().zip(&defaults).map(|((c, _), &d)| p_double_a(c, d)).collect(),
            )),
        );
        self.count("AnimationCurveNode");
        self.oo(cn, layer);
        self.op(cn, target, prop);
        for (k, (c, _)) in comps.iter().enumerate() {
            let Some(curve) = curves.get(k).and_then(|c| c.as_ref()) else { continue };
            let id = self.id();
            self.objects.push(curve_record(id, defaults[k], curve));
            self.count("AnimationCurve");
            self.op(id, cn, c);
        }
    }
}

/// What [`Builder::node_curves`] needs to know of one node in one animation.
struct NodeCurves {
    ai: usize,
    i: usize,
    model: i64,
    rest: Parts,
    layer: i64,
}

/// Per node, the plan of its T, R and S in one animation: the source keys for direct nodes
/// ([`plan_direct`]), the whole local matrix baked for the others that move (their channels,
/// a target, or a moving parent under an inherit type other than RSrs), else nothing.
fn plans(
    scene: &Scene,
    by_node: &[Vec<&ChannelTarget>],
    direct: &[bool],
    fps: f64,
    range: (f64, f64),
) -> Vec<[Plan; 3]> {
    let n = scene.nodes.len();
    let mut moves = vec![false; n];
    for i in scene.depth_first() {
        let node = &scene.nodes[i];
        let parent_moves = node.parent.is_some_and(|p| moves[p]);
        moves[i] = !by_node[i].is_empty()
            || super::transform::aimed(scene, i)
            || node.parent.is_some_and(|p| super::transform::aimed(scene, p))
            || (node.inherit != crate::scene::InheritType::RSrs && parent_moves);
    }
    (0..n)
        .map(|i| {
            if direct[i] {
                plan_direct(scene, i, &by_node[i], fps, range)
            } else if moves[i] {
                std::array::from_fn(|_| Plan::Bake)
            } else {
                std::array::from_fn(|_| Plan::Static)
            }
        })
        .collect()
}

/// Per node, the key times (KTime) of its resampled parts and its T, R (XYZ Euler degrees,
/// unwrapped), S at each (empty for a node without a resampled part).
struct NodeSamples {
    times: Vec<Vec<i64>>,
    values: Vec<Vec<Parts>>,
    /// Nodes whose sampler stopped at the key budget before the tolerance was met.
    capped: usize,
}

/// The share of [`resample::TOLERANCE`] the thinning of resampled keys may use (the sampler
/// splits to the rest), as the glTF writer shares it: a tenth.
const THIN_SHARE: f64 = 0.1;

/// How FBX interpolates a resampled node's linear keys, for the shared adaptive sampler
/// ([`resample::Curve`]): every component of `Lcl Translation`, `Lcl Rotation` (XYZ Euler
/// degrees, the second sample's angles moved by whole turns to within 180° of the first's, as
/// they are written) and `Lcl Scaling` linear from key to key. The error is the sum over the
/// resampled parts (`parts`: T, R, S) of the translation's distance times the parent's scale
/// `tscale` (what it moves the node in the world), and the rotation's and scale's effect on a
/// point at the scene size ([`resample::rotation_error`], [`resample::scale_error`]).
struct LinearParts {
    size: f64,
    tscale: f64,
    parts: [bool; 3],
}

impl LinearParts {
    /// Whether [`resample::Curve::error`] stays within `bound` between the written
    /// interpolation of two samples of value `v` (at any fraction) and `v`: the interpolation
    /// moves a value by its rounding only (`v (1 − s) + v s`: within 1e-15 of each component),
    /// and this bounds the error's terms for such a move as `error_above` bounds them, with
    /// the same slack. `false` for a value not finite.
    fn rounding_within(&self, v: Parts, bound: f64) -> bool {
        const SLACK: f64 = 1e-12;
        const ROUNDING: f64 = 1e-15;
        let rad = std::f64::consts::PI / 180.0;
        let magnitude = 2.0 * v.1.abs().element_sum() * rad;
        let mut e = 0.0;
        if self.parts[0] {
            e += self.tscale * ROUNDING * v.0.abs().element_sum() * (1.0 + SLACK);
        }
        if self.parts[1] {
            e += self.size * (ROUNDING * magnitude * (1.0 + SLACK) + SLACK * (1.0 + magnitude));
        }
        if self.parts[2] {
            e += self.size * ROUNDING * v.2.abs().max_element() * (1.0 + SLACK);
        }
        let finite = v.0.is_finite() && v.1.is_finite() && v.2.is_finite();
        finite && e.is_finite() && e <= bound
    }
}

impl resample::Curve<Parts> for LinearParts {
    type Chord = (Parts, Parts);
    fn chord(&self, a: Parts, b: Parts) -> (Parts, Parts) {
        (a, (b.0, unwrap_near(b.1, a.1), b.2))
    }
    fn at(&self, (a, b): &(Parts, Parts), s: f64) -> Parts {
        (a.0.lerp(b.0, s), a.1.lerp(b.1, s), a.2.lerp(b.2, s))
    }
    fn error(&self, w: Parts, s: Parts) -> f64 {
        let mut e = 0.0;
        if self.parts[0] {
            e += self.tscale * resample::vec3_error(w.0, s.0);
        }
        if self.parts[1] {
            e += resample::rotation_error(quat_xyz(w.1), quat_xyz(s.1), self.size);
        }
        if self.parts[2] {
            e += resample::scale_error(w.2, s.2, self.size);
        }
        e
    }
    /// The error, or, when a bound of it without the rotations' quaternions is within `bound`,
    /// that bound: the angle θ between two XYZ Euler rotations `Rz·Ry·Rx` is at most the sum
    /// of the three angles' differences (the angle between rotations is the same on either
    /// side of a product, so one goes to the other by three turns about one axis each), and
    /// the rotation error `size × 2 sin(θ/2)` at most `size × θ`. The bound stands for the
    /// rotation's term in the same sum [`resample::Curve::error`] makes, larger by a slack
    /// over every rounding of that term (the degrees' conversion, the quaternions', `asin`,
    /// `sin`: about 1e-14 rad and 1e-16 of the angles' magnitude; the slack is 1e-12 of
    /// both), so a test or a thinning it settles is settled as the error would settle it:
    /// the written keys do not change. Without a rotation part, or with values not finite,
    /// the error itself.
    fn error_above(&self, w: Parts, s: Parts, bound: f64) -> f64 {
        if !self.parts[1] {
            return self.error(w, s);
        }
        const SLACK: f64 = 1e-12;
        let rad = std::f64::consts::PI / 180.0;
        let turns = (w.1 - s.1).abs().element_sum() * rad;
        let magnitude = (w.1.abs().element_sum() + s.1.abs().element_sum()) * rad;
        let mut e = 0.0;
        if self.parts[0] {
            e += self.tscale * resample::vec3_error(w.0, s.0);
        }
        e += self.size * (turns * (1.0 + SLACK) + SLACK * (1.0 + magnitude));
        if self.parts[2] {
            e += resample::scale_error(w.2, s.2, self.size);
        }
        if e.is_finite() && e <= bound {
            e
        } else {
            self.error(w, s)
        }
    }
}

/// The seeds of node `i`'s resampled parts: every integer and half frame of the range and
/// its ends (`frames`, [`half_frames`]), every key of its channels and, for a baked node, of its ancestors' (with the
/// lead before a jump, [`resample::seed_frames`]), and the turn cuts of those rotation
/// channels ([`resample::turn_seeds`]); sorted, instants closer than [`resample::MERGE`] once.
fn node_seeds(
    scene: &Scene,
    i: usize,
    by_node: &[Vec<&ChannelTarget>],
    frames: &[f64],
    range: (f64, f64),
    direct: bool,
) -> Vec<f64> {
    let mut keys: Vec<Vec<f64>> = Vec::new();
    let mut turns = Vec::new();
    let (mut at, mut depth) = (Some(i), 0);
    while let Some(k) = at.filter(|_| depth <= scene.nodes.len()) {
        for c in &by_node[k] {
            keys.extend(anim::keep::key_frames(c));
            if let ChannelTarget::Rotation(r) = c {
                turns.extend(resample::turn_seeds(r, range, resample::ADAPTIVE_BUDGET / 2));
            }
        }
        at = if direct { None } else { scene.nodes[k].parent };
        depth += 1;
    }
    let mut seeds = resample::seed_frames(range, keys.iter().map(Vec::as_slice));
    seeds.extend(half_frames(frames, range));
    seeds.extend(turns);
    seeds.sort_by(f64::total_cmp);
    seeds.dedup_by(|b, a| *b - *a < resample::MERGE);
    seeds
}

/// The largest scale of node `i`'s parent's world matrix in `world` (1 for a root): how far a
/// translation error moves the node.
fn parent_scale(scene: &Scene, world: &[glam::DMat4], i: usize) -> f64 {
    scene.nodes[i].parent.and_then(|p| world.get(p)).map_or(1.0, max_scale)
}

/// The largest column length of `m`'s 3×3 part (1 when it is not a positive number).
pub(super) fn max_scale(m: &glam::DMat4) -> f64 {
    let s = (0..3).map(|c| m.col(c).truncate().length()).fold(0.0f64, f64::max);
    if s.is_finite() && s > 0.0 {
        s
    } else {
        1.0
    }
}

/// A scalar FBX interpolates linearly from key to key, its error `|written − source| ×
/// scale` (scene units per unit of the value).
struct LinearScalar {
    scale: f64,
}

impl resample::Curve<f64> for LinearScalar {
    type Chord = (f64, f64);
    fn chord(&self, a: f64, b: f64) -> (f64, f64) {
        (a, b)
    }
    fn at(&self, &(a, b): &(f64, f64), s: f64) -> f64 {
        a + (b - a) * s
    }
    fn error(&self, w: f64, s: f64) -> f64 {
        (w - s).abs() * self.scale
    }
}

/// A scalar track with no FBX form resampled as [`sample`] resamples node parts: seeds at
/// every integer and half frame of `range`, its ends and every key (`key_frames`, with the
/// lead before a jump), split where the linear keys stray more than `(1 − THIN_SHARE) × tol`
/// (scene units; the error of a value is `|Δ| × scale`) from `source`, then thinned within
/// `THIN_SHARE × tol`. An error when the range has more than `max_keys` frames (`what` names
/// the track).
pub(super) fn resample_scalar(
    mut source: impl FnMut(f64) -> f64,
    key_frames: &[f64],
    (range, fps): ((f64, f64), f64),
    (tol, scale): (f64, f64),
    max_keys: usize,
    what: impl Fn() -> String,
) -> Result<keys::FbxCurve, WriteError> {
    let frames = resample_frames(range, max_keys, what)?;
    let mut seeds = resample::seed_frames(range, [key_frames]);
    seeds.extend(half_frames(&frames, range));
    seeds.sort_by(f64::total_cmp);
    seeds.dedup_by(|b, a| *b - *a < resample::MERGE);
    let curve = LinearScalar { scale };
    let budget = max_keys.min(resample::ADAPTIVE_BUDGET).max(seeds.len());
    let s = resample::adaptive(&seeds, &mut source, &curve, (1.0 - THIN_SHARE) * tol, budget);
    let s = resample::thin(s, &curve, THIN_SHARE * tol);
    let mut times: Vec<i64> = Vec::with_capacity(s.frames.len());
    let mut values = Vec::with_capacity(s.frames.len());
    for (&f, v) in s.frames.iter().zip(s.values) {
        let t = ktime(f / fps);
        if times.last().is_none_or(|&l| t > l) {
            times.push(t);
            values.push(v);
        }
    }
    Ok(linear_curve(&times, values.into_iter()))
}

/// A property track with no FBX form and no scene unit (a camera's `FieldOfView`, a light's
/// `Color` or `Intensity`, a user property) resampled by [`resample_scalar`] within
/// [`resample::TOLERANCE`] of its largest key magnitude (at least 1, in the property's own
/// unit: 4.5e-3° for a 45° field of view, 1e-4 for a colour component) at every frame and
/// between frames. `keys`: the track's key frames and values.
pub(super) fn resample_value(
    source: impl FnMut(f64) -> f64,
    keys: &[(f64, f64)],
    take: &Take<'_>,
    what: impl Fn() -> String,
) -> Result<keys::FbxCurve, WriteError> {
    let magnitude = keys.iter().map(|k| k.1.abs()).filter(|m| m.is_finite()).fold(1.0, f64::max);
    let frames: Vec<f64> = keys.iter().map(|k| k.0).collect();
    let (range, fps) = ((take.range.0, take.range.1), take.fps);
    resample_scalar(
        source,
        &frames,
        (range, fps),
        (resample::TOLERANCE, 1.0 / magnitude),
        take.opts.max_keys,
        what,
    )
}

/// The integer frames `frames` of `range` and the half frame after each that is inside it:
/// seeds that keep every interval the error test sees at most half a frame long, so its test
/// at the middle looks at every quarter frame (an ease-in-out key segment one frame long is
/// exact at its middle, so the middle of a whole frame alone would not see it).
fn half_frames(frames: &[f64], (_, end): (f64, f64)) -> Vec<f64> {
    frames.iter().flat_map(|&f| [f, f + 0.5]).filter(|&f| f <= end).collect()
}

/// The resampled parts of every node (docs/fbx.md, "Resampled curves between frames"): per
/// node with a resampled or baked part, its T, R, S sampled by the shared adaptive sampler
/// ([`resample::adaptive`]) from [`node_seeds`] — split where FBX's linear keys
/// ([`LinearParts`]) stray more than `(1 − THIN_SHARE) ×` [`resample::TOLERANCE`] × the
/// scene size ([`resample::scene_size`] at the range's start) from the evaluated parts at the
/// middle of an interval (and its quarters when it is longer than a frame) — then thinned ([`resample::thin`]) to the
/// keys the chord needs within the rest of the tolerance. At most [`WriteOptions::max_keys`]
/// keys per node (an error when the range alone has more frames; past it in splits the node is
/// counted in `capped`).
fn sample(
    scene: &Scene,
    ai: usize,
    plans: &[[Plan; 3]],
    (direct, by_node, rest): (&[bool], &[Vec<&ChannelTarget>], &[Parts]),
    fps: f64,
    range: (f64, f64),
    opts: &WriteOptions,
) -> Result<NodeSamples, WriteError> {
    let n = scene.nodes.len();
    let mut out =
        NodeSamples { times: vec![Vec::new(); n], values: vec![Vec::new(); n], capped: 0 };
    let sampled = |p: &[Plan; 3]| p.iter().any(|x| matches!(x, Plan::Bake | Plan::Resample(_)));
    let wanted: Vec<usize> = (0..n).filter(|&i| sampled(&plans[i])).collect();
    if wanted.is_empty() {
        return Ok(out);
    }
    let why = || {
        let reason = plans
            .iter()
            .flatten()
            .find_map(|p| match p {
                Plan::Resample(r) => Some(*r),
                Plan::Bake => Some(BAKED),
                _ => None,
            })
            .unwrap_or("");
        format!("animation {} (a resampled part: {reason})", quoted(&scene.animations[ai].name))
    };
    let frames = resample_frames(range, opts.max_keys, why)?;
    let start = scene.evaluate(Some(ai), anim::Time::Frame(range.0)).world;
    let size = resample::scene_size(scene, &start);
    let tol = (1.0 - THIN_SHARE) * resample::TOLERANCE * size;
    let eps = THIN_SHARE * resample::TOLERANCE * size;
    // A direct node's channels are prepared once (a 3DS relative rotation track's keys
    // accumulated once, not at every sample). The others (and a direct node whose parts are
    // not finite) take their local matrix from a partial pose: only they and what they depend
    // on are evaluated, bit for bit as `Scene::evaluate` would (`anim::partial`).
    let mut pose = anim::PartialPose::new(scene, Some(ai));
    for &i in &wanted {
        let channels: Vec<anim::ChannelSampler> = match direct[i] {
            true => by_node[i].iter().map(|c| c.sampler()).collect(),
            false => Vec::new(),
        };
        // Strictly inside an interval where every channel of a direct node holds its value
        // (bit for bit, `resample::held_intervals`), its parts are those of the last frame
        // sampled there: a node whose tracks hold one key is evaluated near its key only.
        let held = match direct[i] {
            true => by_node[i].iter().fold(vec![(f64::NEG_INFINITY, f64::INFINITY)], |h, c| {
                resample::intersect_intervals(&h, &resample::held_intervals(c))
            }),
            false => Vec::new(),
        };
        let mut last: Option<(f64, Parts)> = None;
        let mut source = |fr: f64| -> Parts {
            if let Some((f, v)) = last {
                if resample::both_held(&held, f.min(fr), f.max(fr)) {
                    return v;
                }
            }
            let parts = if direct[i] { node_parts(scene, i, &channels, fr) } else { None };
            match parts {
                Some((t, q, s)) => {
                    let v = (t, euler_xyz(q), s);
                    last = Some((fr, v));
                    v
                }
                None => {
                    pose.set_frame(fr);
                    let parent = scene.nodes[i].parent.map(|p| (p, pose.world(p)));
                    let (world, own) = (pose.world(i), pose.local(i));
                    let (t, r, s, _) = decompose(local_matrix(scene, i, parent, world, own));
                    (t, r, s)
                }
            }
        };
        let seeds = node_seeds(scene, i, by_node, &frames, range, direct[i]);
        let parts = std::array::from_fn(|k| matches!(plans[i][k], Plan::Bake | Plan::Resample(_)));
        let curve = LinearParts { size, tscale: parent_scale(scene, &start, i), parts };
        let budget = opts.max_keys.min(resample::ADAPTIVE_BUDGET).max(seeds.len());
        let span = (seeds.first().copied(), seeds.last().copied());
        let one = match span {
            (Some(lo), Some(hi)) if seeds.len() > 2 && direct[i] => {
                let probe = |f: f64| node_parts(scene, i, &channels, f);
                held_value(&held, (lo, hi), probe)
                    .map(|(t, q, s)| (t, euler_xyz(q), s))
                    .filter(|v| curve.rounding_within(*v, eps.min(tol)))
                    .map(|v| (lo, hi, v))
            }
            _ => None,
        };
        let s = match one {
            // What sampling and thinning would keep of a value every frame gives: its ends.
            Some((lo, hi, v)) => {
                resample::Sampled { frames: vec![lo, hi], values: vec![v, v], capped: false }
            }
            None => {
                let s = resample::adaptive(&seeds, &mut source, &curve, tol, budget);
                resample::thin(s, &curve, eps)
            }
        };
        out.capped += usize::from(s.capped);
        let (times, values) = (&mut out.times[i], &mut out.values[i]);
        for (&f, v) in s.frames.iter().zip(s.values) {
            let t = ktime(f / fps);
            if times.last().is_some_and(|&l| t <= l) {
                continue;
            }
            let r = unwrap_near(v.1, values.last().map_or(rest[i].1, |prev: &Parts| prev.1));
            times.push(t);
            values.push((v.0, r, v.2));
        }
    }
    Ok(out)
}

/// The one value `probe` gives at every frame of `[lo, hi]`, bit for bit, when it does: `held`
/// (sorted, disjoint open intervals where the value holds, `resample::held_intervals`)
/// leaves only isolated frames of `[lo, hi]` outside it, and `probe` gives the same bits at
/// each of those and at one frame inside each interval. `None` otherwise, or when `probe`
/// gives `None` anywhere it is asked.
fn held_value(
    held: &[(f64, f64)],
    (lo, hi): (f64, f64),
    mut probe: impl FnMut(f64) -> Option<(DVec3, glam::DQuat, DVec3)>,
) -> Option<(DVec3, glam::DQuat, DVec3)> {
    let bits = |(t, q, s): (DVec3, glam::DQuat, DVec3)| {
        let q = q.to_array();
        [t.x, t.y, t.z, q[0], q[1], q[2], q[3], s.x, s.y, s.z].map(f64::to_bits)
    };
    let mut first = None;
    let mut same = |f: f64| -> Option<()> {
        let v = probe(f)?;
        match first {
            None => first = Some(v),
            Some(w) => (bits(v) == bits(w)).then_some(())?,
        }
        Some(())
    };
    // Every frame of [lo, x) is accounted for; x is not.
    let mut x = lo;
    for &(a, b) in held {
        if b <= x {
            continue;
        }
        if a > x || lo.partial_cmp(&hi) != Some(std::cmp::Ordering::Less) {
            return None;
        }
        if a == x {
            same(x)?;
        }
        let (from, to) = (a.max(lo), b.min(hi));
        let inside = from + 0.5 * (to - from);
        if !(a < inside && inside < b) {
            return None;
        }
        same(inside)?;
        x = b;
        if x > hi {
            return first;
        }
    }
    (x == hi).then_some(())?;
    same(x)?;
    first
}

/// [`anim::node_parts`] with the node's channels prepared for sampling (the same values, bit
/// for bit).
fn node_parts(
    scene: &Scene,
    node: usize,
    channels: &[anim::ChannelSampler],
    frame: f64,
) -> Option<(DVec3, glam::DQuat, DVec3)> {
    let mut p = scene.nodes[node].transform;
    for c in channels {
        c.apply_to_transform(&mut p, frame);
    }
    let r = p.rotation.normalize();
    (p.translation.is_finite() && r.is_finite() && p.scale.is_finite()).then_some((
        p.translation,
        r,
        p.scale,
    ))
}

pub(super) fn p_double_a(name: &str, v: f64) -> Record {
    p(name, "Number", "", "A", vec![Value::F64(v)])
}

pub(super) fn curve_record(id: i64, default: f64, curve: &keys::FbxCurve) -> Record {
    let (flags, data, refs) = curve.attributes();
    let mut r = Record::with(
        "AnimationCurve",
        vec![Value::I64(id), name_class("", "AnimCurve"), Value::str("")],
    )
    .child(Record::one("Default", default))
    .child(Record::one("KeyVer", 4009))
    .child(Record::with(
        "KeyTime",
        vec![Value::I64Array(curve.keys.iter().map(|k| k.time).collect())],
    ))
    .child(Record::with(
        "KeyValueFloat",
        vec![Value::F32Array(curve.keys.iter().map(|k| k.value).collect())],
    ))
    .child(Record::with("KeyAttrFlags", vec![Value::I32Array(flags)]))
    .child(Record::with("KeyAttrDataFloat", vec![Value::F32Array(data)]))
    .child(Record::with("KeyAttrRefCount", vec![Value::I32Array(refs)]));
    // As the SDK writes them (MotionBuilder's `motionbuilder_extrapolation_*_7700`): `Type` a
    // character, `Repetition` an int.
    for (name, e) in [("Pre-Extrapolation", curve.pre), ("Post-Extrapolation", curve.post)] {
        if let Some((ty, count)) = e {
            r.push(
                Record::new(name)
                    .child(Record::with("Type", vec![Value::Char(ty)]))
                    .child(Record::one("Repetition", count)),
            );
        }
    }
    r
}

/// Why a baked node's curves are resampled (its written local matrix is not its own T·R·S).
const BAKED: &str = "baked transform (FBX pivots, pre/post rotation, an inherit type other \
                     than RSrs, or a camera/light target); resampled";

/// How one part (T, R or S) of a node's local transform is written for one animation.
#[derive(Debug, Clone)]
pub(super) enum Plan {
    /// Not animated: the Model's `Lcl …` value holds.
    Static,
    /// The source's keys: one curve per component (`None`: the component holds its
    /// `d|X`/`d|Y`/`d|Z` default, the evaluator's rest value for it).
    Exact { defaults: DVec3, curves: [Option<keys::FbxCurve>; 3] },
    /// The part's evaluated values, resampled ([`sample`]), linear (the reason why).
    Resample(&'static str),
    /// The whole local matrix, `parent_world⁻¹ · world`, decomposed and resampled ([`sample`]).
    Bake,
}

/// The plan of a direct node's T, R and S ([`direct_nodes`]) from its channels.
pub(super) fn plan_direct(
    scene: &Scene,
    i: usize,
    channels: &[&ChannelTarget],
    fps: f64,
    (lo, hi): (f64, f64),
) -> [Plan; 3] {
    let rest = scene.nodes[i].transform;
    let deg = 180.0 / std::f64::consts::PI;
    let mut out: [Plan; 3] = std::array::from_fn(|_| Plan::Static);
    for (pick, slot) in out.iter_mut().enumerate() {
        let mine: Vec<&ChannelTarget> = channels
            .iter()
            .copied()
            .filter(|c| match c {
                ChannelTarget::Translation(_) | ChannelTarget::TranslationXyz(_) => pick == 0,
                ChannelTarget::Rotation(_) => pick == 1,
                ChannelTarget::Scale(_) | ChannelTarget::ScaleXyz(_) => pick == 2,
                ChannelTarget::Layered(b) => b.transform_part() == Some(pick),
                _ => false,
            })
            .collect();
        let rest_part = if pick == 0 { rest.translation } else { rest.scale };
        let xyz = |tracks: &[Option<Track<f64>>; 3], scale: f64, defaults: DVec3| -> Plan {
            let mut curves: [Option<keys::FbxCurve>; 3] = [None, None, None];
            for (c, t) in tracks.iter().enumerate() {
                let Some(t) = t.as_ref().filter(|t| !t.keys.is_empty()) else { continue };
                match keys::scalar_curve(t, scale, fps, lo, hi) {
                    Some(curve) => curves[c] = Some(curve),
                    None => return Plan::Resample(NO_FORM),
                }
            }
            Plan::Exact { defaults: defaults * scale, curves }
        };
        *slot = match mine.as_slice() {
            [] => Plan::Static,
            [_, _, ..] => Plan::Resample("several channels drive one part"),
            [c] => match c {
                ChannelTarget::Translation(t) | ChannelTarget::Scale(t) if t.keys.is_empty() => {
                    Plan::Static
                }
                ChannelTarget::Translation(t) | ChannelTarget::Scale(t) => {
                    match keys::vector_curves(t, fps, lo, hi) {
                        Some([x, y, z]) => {
                            Plan::Exact { defaults: rest_part, curves: [Some(x), Some(y), Some(z)] }
                        }
                        None => Plan::Resample(NO_FORM),
                    }
                }
                ChannelTarget::TranslationXyz(x) | ChannelTarget::ScaleXyz(x) => {
                    xyz(x, 1.0, rest_part)
                }
                ChannelTarget::Rotation(RotationTrack::Euler { order, rest, xyz: tracks }) => {
                    // The source's own `Lcl Rotation` degrees where they are this rest
                    // (radians × 180/π would move them by round-off).
                    let own = scene.nodes[i]
                        .source
                        .fbx_lcl_rotation
                        .as_deref()
                        .copied()
                        .filter(|d| *d * (std::f64::consts::PI / 180.0) == *rest);
                    if *order == EulerOrder::Xyz {
                        match (own, xyz(tracks, deg, *rest)) {
                            (Some(d), Plan::Exact { curves, .. }) => {
                                Plan::Exact { defaults: d, curves }
                            }
                            (_, plan) => plan,
                        }
                    } else {
                        Plan::Resample("Euler rotation in an order other than XYZ")
                    }
                }
                ChannelTarget::Rotation(RotationTrack::Quat(t)) if t.keys.is_empty() => {
                    Plan::Static
                }
                ChannelTarget::Rotation(RotationTrack::Quat(_)) => {
                    Plan::Resample("quaternion keys (slerp has no FBX Euler curve form)")
                }
                ChannelTarget::Rotation(RotationTrack::Relative(_)) => {
                    Plan::Resample("3DS relative axis-angle rotation keys")
                }
                ChannelTarget::Layered(_) => {
                    Plan::Resample("FBX animation layers blended at each time")
                }
                _ => Plan::Static,
            },
        };
    }
    out
}

/// Why a part with keys is resampled when no exact form exists.
pub(super) const NO_FORM: &str =
    "keys with no exact FBX curve form (jumps, 3DS repeat/hold-last ends, \
                       glTF/3DA tangents or TCB past what the Hermite form holds)";

#[cfg(test)]
mod tests {
    use resample::Curve;

    use super::*;

    #[test]
    fn a_turn_about_one_axis_errs_by_its_chord() {
        // Hand-computed: rotations δ apart about one axis move a point at distance `size` by
        // the chord size × 2 sin(δ/2).
        let curve = LinearParts { size: 2.0, tscale: 1.0, parts: [false, true, false] };
        let parts = |deg: DVec3| (DVec3::ZERO, deg, DVec3::ONE);
        let (a, b) = (DVec3::new(10.0, 20.0, 30.0), DVec3::new(10.0, 20.0, 31.0));
        let want = 2.0 * 2.0 * (0.5f64.to_radians()).sin();
        assert!((curve.error(parts(a), parts(b)) - want).abs() < 1e-12);
    }

    #[test]
    fn a_held_value_is_probed_inside_each_interval_and_at_each_point_between() {
        const INF: f64 = f64::INFINITY;
        let v = |x: f64| Some((DVec3::splat(x), glam::DQuat::IDENTITY, DVec3::ONE));
        let mut asked = Vec::new();
        let mut probe = |f: f64| {
            asked.push(f);
            v(1.0)
        };
        // One key at 5 (held before and after it): inside, at 5, inside.
        let two = [(-INF, 5.0), (5.0, INF)];
        assert_eq!(held_value(&two, (0.0, 10.0), &mut probe), v(1.0));
        assert_eq!(asked, [2.5, 5.0, 7.5]);
        // The key's own value differs: not one value.
        let at_key = |f: f64| if f == 5.0 { v(2.0) } else { v(1.0) };
        assert_eq!(held_value(&two, (0.0, 10.0), at_key), None);
        // A stretch between 5 and 6 where the value may bend: not held.
        assert_eq!(held_value(&[(-INF, 5.0), (6.0, INF)], (0.0, 10.0), |_| v(1.0)), None);
        // Held up to the range's end: the end is asked too.
        assert_eq!(held_value(&[(-INF, 10.0)], (0.0, 10.0), |_| v(1.0)), v(1.0));
        assert_eq!(held_value(&[(-INF, 10.0)], (0.0, 10.0), &v), None);
        // Nothing held, or everything.
        assert_eq!(held_value(&[], (0.0, 10.0), |_| v(1.0)), None);
        assert_eq!(held_value(&[(-INF, INF)], (0.0, 10.0), |_| v(1.0)), v(1.0));
        // A value the probe cannot give.
        assert_eq!(held_value(&[(-INF, INF)], (0.0, 10.0), |_| None), None);
    }

    #[test]
    fn the_quaternion_free_bound_settles_tests_as_the_error_would() {
        // Random XYZ Euler pairs, near and far, with translations and scales: whenever
        // `error_above` answers at most `bound`, the error is at most `bound` too; otherwise
        // it answers the error itself.
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut uniform = move || {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            (seed >> 11) as f64 / (1u64 << 53) as f64
        };
        let mut settled = 0;
        for k in 0..20_000 {
            let curve = LinearParts {
                size: 0.01 + 100.0 * uniform(),
                tscale: 0.5 + uniform(),
                parts: [k % 2 == 0, true, k % 3 == 0],
            };
            let v = |u: &mut dyn FnMut() -> f64, r: f64| {
                DVec3::new(u() - 0.5, u() - 0.5, u() - 0.5) * r
            };
            let rot = v(&mut uniform, 1440.0);
            let step = 10f64.powf(-9.0 * uniform());
            let w = (v(&mut uniform, 1.0), rot, DVec3::ONE + v(&mut uniform, 0.1));
            let s = (w.0 + v(&mut uniform, step), rot + v(&mut uniform, step), w.2);
            let exact = curve.error(w, s);
            let bound = exact * (0.5 + uniform());
            let got = curve.error_above(w, s, bound);
            if got <= bound {
                assert!(exact <= bound, "{w:?} {s:?}: {exact} > {bound}");
                settled += usize::from(got != exact);
            } else {
                assert_eq!(got, exact);
            }
        }
        assert!(settled > 1_000, "the bound settled {settled} tests only");
    }
}

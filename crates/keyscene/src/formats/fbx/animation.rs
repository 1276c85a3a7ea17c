//! FBX animation → [`Animation`]s: `AnimationStack` → `AnimationLayer` → `AnimationCurveNode`
//! → `AnimationCurve` (seed 003, "Animation").
//!
//! # Curves
//! An `AnimationCurve` holds `KeyTime` (KTime ticks: 1/46,186,158,000 s, or 1/141,120,000 s
//! when the header's `OtherFlags › TCDefinition` says so — FBX 7.7+ files may use the newer
//! unit, and reading them with the old one makes clips ≈327× too short; see
//! [`GlobalSettings::ktime_per_second`](super::objects::GlobalSettings)), `KeyValueFloat`, and
//! run-length encoded attributes: `KeyAttrRefCount[j]` consecutive keys share
//! `KeyAttrFlags[j]` and the four floats `KeyAttrDataFloat[4j..4j+4]`. ASCII files from 7.2 on
//! write those floats as the integers of their bit patterns (some are not floats at all);
//! they are turned back into floats bit for bit. The attributes of key `i` describe the
//! segment to key `i + 1`:
//!
//! | flags | segment | data |
//! |---|---|---|
//! | `0x2` constant (`0x100`: next) | held at key `i` (or `i + 1`) | — |
//! | `0x4` linear | straight | — |
//! | `0x8` cubic, `0x400` user | Bézier | `[0]` right slope, `[1]` next key's left slope |
//! | `0x8` cubic, `0x200` TCB | Bézier | `[0..3]` tension, continuity, bias |
//! | `0x8` cubic, other (auto) | Bézier | `[0]` right auto bias, `[1]` next left auto bias |
//!
//! with `0x1000` clamp, `0x2000` time-independent, `0x4000` progressive clamp (see
//! [`crate::anim::curve`] for the solvers), and `0x01000000`/`0x02000000` weighted right /
//! next-left tangents whose weights are two 16-bit decimal fractions (÷ 10 000) packed in the
//! bits of `[2]` (low half: right). Unweighted handles span a third of their segment. Slopes
//! are value units per second in the file; the [`Track`] stores them per frame.
//!
//! A key that is reached on a cubic segment but leaves on a held or straight one becomes two
//! [`Key`]s on the same frame — a Bézier one carrying the arriving handle, then the held or
//! linear one — because [`Interpolation`] describes both ends of a key in one value. Sampling
//! is unchanged by this (a frame on the key shows its value).
//!
//! `Pre-Extrapolation`/`Post-Extrapolation { Type, Repetition }`: `C` constant, `R` repetition,
//! `M` mirror, `K` keep slope, `A` relative repetition → [`Extrapolation`], with the repeat
//! count (absent or negative: forever).
//!
//! # Channels
//! A curve node connects to the property it drives (`OP` connection naming it) and its curves
//! connect to it naming the component (`d|X`, `d|Y`, `d|Z`, or `d|<Property>` for scalars):
//!
//! - Model `Lcl Translation` → [`ChannelTarget::TranslationXyz`]; `Lcl Scaling` →
//!   [`ChannelTarget::ScaleXyz`]; `Lcl Rotation` (degrees) → [`RotationTrack::Euler`] in
//!   radians, in the rotation order the importer used for the node
//!   ([`rotation_setup`]: `RotationOrder` only when the node uses its rotation space), rest
//!   angles from the node's stored `Lcl Rotation`.
//! - `BlendShapeChannel` `DeformPercent` → a [`ChannelTarget::Property`] named
//!   [`morph_weight_property`]`(k)` on every node that shows a mesh the channel deforms.
//! - Anything else on a model, camera or light (`Visibility`, `FieldOfView`, `Intensity`,
//!   `Color` …) → [`ChannelTarget::Property`] on the node, named as the property, with `|X`
//!   (`|Y`, `|Z`) appended for the components of vector properties; values as stored.
//!   `PreRotation`, `PostRotation`, `RotationOffset`, `RotationPivot`, `ScalingOffset` and
//!   `ScalingPivot` channels move the node's pivots when posed, as ufbx evaluates them
//!   ([`Scene::evaluate`](crate::scene::Scene::evaluate)); pre/post-rotation curves of a
//!   node that does not use its rotation space ([`rotation_setup`]) are dropped, as their
//!   static values are.
//! - A `Material`'s colour or factor (`DiffuseColor`/`Diffuse`, `DiffuseFactor`,
//!   `TransparencyFactor`, `Opacity` …, every name [`MaterialProperty::from_fbx`] knows) → a
//!   [`MaterialChannel`] in [`Scene::material_channels`](crate::scene::Scene::material_channels):
//!   the curves per component, and the curve node's `d|X` … for components without one (ufbx
//!   evaluates those as the node's value); several layers → [`MaterialValue::Layered`] over the
//!   stored value. Other material properties stay unanimated.
//!
//! # Layers
//! One [`Animation`] per stack, with the stack's layers merged as ufbx evaluates them: a
//! property animated by a single layer that replaces it (the stack's first layer, or a lone
//! override layer) keeps its curves exactly. A property that several layers animate, or whose
//! only layer blends (additive or override-passthrough, at any weight — partial, animated or
//! full), becomes one [`ChannelTarget::Layered`]: every member layer's curves, curve node
//! values, `BlendMode`, `Weight` (÷ 100) and `Weight` curve (percent), and
//! `RotationAccumulationMode`/`ScaleAccumulationMode`, in stack order, over the node's rest
//! value, blended at the asked time by ufbx's rule ([`crate::anim::layers`]): `BlendMode` 0
//! additive, 1 override, 2 override-passthrough. Rotations stay in degrees there (the rule
//! composes Euler angles in the model's `RotationOrder`, even when its rotation space is not
//! used and the blended angles then apply in XYZ); a vector property other than
//! `Lcl Translation`/`Rotation`/`Scaling` is one blend per component a layer has a curve for
//! (named `Prop|X` … as the single-layer channels), a blend shape's `DeformPercent` one blend
//! per node showing the mesh. A curve node without curves is its layer's constant value
//! (`d|X` …) in such a blend, as in ufbx: Maya stores the blended result as the property, so
//! a base layer's curveless node, not the stored value, is what the other layers add to
//! (`ufbx/maya_anim_layers*`). A curveless node of a one-channel property (`d|Visibility` …)
//! is left out, and the value under the layers of such a property is 0 (a blend shape's: its
//! default weight in percent; transforms: the node's rest transform): ufbx reads no value
//! from such a node (it looks up only `X`/`d|X` … there) and takes 0, and Maya writes one
//! into the base layer, so the layered `Visibility` of `ufbx/maya_anim_layers*` agrees with
//! ufbx this way (starting from the stored `Visibility` 1 would not). Poses and layered node
//! properties agree with ufbx's `evaluate_scene` / `evaluate_prop` between frames too
//! (`tests/fbx_layers_ufbx.rs`).

use std::collections::HashMap;

use glam::DVec3;

use super::objects::{ConnectionKind, Object, ObjectGraph, PropCache};
use super::shared::{rotation_setup, ImportIds};
use super::tree::{Array, ArrayType, Encoding, NodeRef};
use crate::anim::curve::{
    auto_slope, auto_slope_one_side, morph_weight_property, tcb_slopes, AutoRules,
};
use crate::anim::{
    Animation, BlendMode, Channel, ChannelTarget, CycleMode, Extrapolation, Interpolation, Key,
    LayerBlend, LayerContribution, LayeredValue, MaterialChannel, MaterialProperty, MaterialValue,
    RotationTrack, Track,
};
use crate::scene::{EulerOrder, NodeId, NodeKind, Scene, Warning};

const CONSTANT: u32 = 0x2;
#[cfg_attr(not(test), allow(dead_code))]
const LINEAR: u32 = 0x4;
const CUBIC: u32 = 0x8;
const AUTO_OR_NEXT: u32 = 0x100;
const TCB: u32 = 0x200;
const USER: u32 = 0x400;
const BREAK: u32 = 0x800;
const CLAMP: u32 = 0x1000;
const TIME_INDEPENDENT: u32 = 0x2000;
const CLAMP_PROGRESSIVE: u32 = 0x4000;
const WEIGHTED_RIGHT: u32 = 0x0100_0000;
const WEIGHTED_NEXT_LEFT: u32 = 0x0200_0000;

const THIRD: f64 = 1.0 / 3.0;

/// How a key leaves towards the next one, as read.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Leave {
    Hold,
    HoldNext,
    Linear,
    Cubic,
}

/// One key resolved to ufbx's form: times in seconds, slopes per second.
#[derive(Debug, Clone, Copy)]
struct RawKey {
    time: f64,
    value: f64,
    leave: Leave,
    left_slope: f64,
    left_weight: f64,
    right_slope: f64,
    right_weight: f64,
}

/// The curve's attribute floats, bit-exact (see the module docs for the ASCII rule), from its
/// `KeyAttrDataFloat` record.
fn attr_floats(doc_version: u32, encoding: Encoding, record: Option<NodeRef<'_, '_>>) -> Vec<f32> {
    let Some((record, arr)) = record.and_then(|r| Some((r, array_of(r)?))) else {
        return Vec::new();
    };
    record.decoded(match arr.ty() {
        ArrayType::F32 => arr.to_f32_vec(),
        ArrayType::I32 | ArrayType::I64 if encoding == Encoding::Ascii || doc_version >= 7200 => {
            arr.to_i64_vec()
                .map(|v| v.into_iter().map(|v| f32::from_bits(v as i32 as u32)).collect())
        }
        _ => arr.to_f32_vec(),
    })
}

/// The first array among a record's values (as [`NodeRef::child_array`] takes it).
fn array_of<'d, 'a>(record: NodeRef<'d, 'a>) -> Option<&'d Array<'a>> {
    record.first_array()
}

/// The first array of `record` read by `f`; empty without one. A read that fails (a corrupt
/// zlib stream) reads as empty and its error is kept in the document
/// ([`NodeRef::decoded`]), which fails the load.
fn read_array<'d, 'a, T: Default>(
    record: Option<NodeRef<'d, 'a>>,
    f: impl FnOnce(&'d Array<'a>) -> Result<T, super::Error>,
) -> T {
    record.and_then(|n| Some(n.decoded(f(array_of(n)?)))).unwrap_or_default()
}

fn extrapolation(node: NodeRef<'_, '_>, name: &str) -> Extrapolation {
    extrapolation_of(node.child(name))
}

/// The extrapolation a `Pre-Extrapolation`/`Post-Extrapolation` record states (none:
/// constant).
fn extrapolation_of(e: Option<NodeRef<'_, '_>>) -> Extrapolation {
    let Some(e) = e else {
        return Extrapolation::Constant;
    };
    let ty = e.child("Type").and_then(|t| {
        t.property(0).map(|p| {
            p.as_i64().map(|c| c as u8).or_else(|| p.as_bytes().and_then(|b| b.first().copied()))
        })
    });
    let count = e.child("Repetition").and_then(|t| t.property(0)).and_then(|p| p.as_i64());
    let count = count.filter(|&c| c >= 0).map(|c| c.min(u32::MAX as i64) as u32);
    let cycle = |mode| Extrapolation::Cycle { mode, count };
    match ty.flatten() {
        Some(b'R') => cycle(CycleMode::Repeat),
        Some(b'M') => cycle(CycleMode::Mirror),
        Some(b'A') => cycle(CycleMode::Relative),
        Some(b'K') => Extrapolation::Slope,
        _ => Extrapolation::Constant,
    }
}

/// The records of an `AnimationCurve` that [`read_curve`] reads, found in one pass over its
/// children (the first of each name, as [`NodeRef::child`] finds it; seven name searches per
/// curve were a sixth of the curve reading of `maya_kenney_character_7700_binary`).
#[derive(Default)]
struct CurveRecords<'d, 'a> {
    key_time: Option<NodeRef<'d, 'a>>,
    key_value: Option<NodeRef<'d, 'a>>,
    attr_flags: Option<NodeRef<'d, 'a>>,
    attr_data: Option<NodeRef<'d, 'a>>,
    attr_refs: Option<NodeRef<'d, 'a>>,
    pre: Option<NodeRef<'d, 'a>>,
    post: Option<NodeRef<'d, 'a>>,
}

impl<'d, 'a> CurveRecords<'d, 'a> {
    fn of(node: NodeRef<'d, 'a>) -> Self {
        let mut r = CurveRecords::default();
        for c in node.children() {
            let slot = match c.name() {
                "KeyTime" => &mut r.key_time,
                "KeyValueFloat" => &mut r.key_value,
                "KeyAttrFlags" => &mut r.attr_flags,
                "KeyAttrDataFloat" => &mut r.attr_data,
                "KeyAttrRefCount" => &mut r.attr_refs,
                "Pre-Extrapolation" => &mut r.pre,
                "Post-Extrapolation" => &mut r.post,
                _ => continue,
            };
            slot.get_or_insert(c);
        }
        r
    }
}

/// Reads an `AnimationCurve` record into a track with key times in frames at `fps`, `ktime`
/// ticks per second. Errors name what is inconsistent; an empty curve gives an empty track.
pub fn read_curve(
    doc_version: u32,
    encoding: Encoding,
    node: NodeRef<'_, '_>,
    ktime: i64,
    fps: f64,
) -> Result<Track<f64>, String> {
    let r = CurveRecords::of(node);
    let times = read_array(r.key_time, Array::to_i64_vec);
    let values = read_array(r.key_value, Array::to_f64_vec);
    if times.len() != values.len() {
        return Err(format!("{} key times but {} values", times.len(), values.len()));
    }
    let flags = read_array(r.attr_flags, Array::to_i32_vec);
    let refs = read_array(r.attr_refs, Array::to_i32_vec);
    let data = attr_floats(doc_version, encoding, r.attr_data);
    // Same size and alignment: collected in place, no second buffer.
    let secs: Vec<f64> = times.into_iter().map(|t| t as f64 / ktime as f64).collect();
    let mut b = TrackBuilder::new(track_len(secs.len(), &flags, &refs), fps);
    resolve_keys_with(&secs, &values, &flags, &data, &refs, |k| b.push(&k))?;
    let mut track = Track::new(b.keys);
    track.before = extrapolation_of(r.pre);
    track.after = extrapolation_of(r.post);
    Ok(track)
}

/// Resolves every key's interpolation and tangents as ufbx does (module docs).
#[cfg_attr(not(test), allow(dead_code))]
fn resolve_keys(
    t: &[f64],
    v: &[f64],
    flags: &[i32],
    data: &[f32],
    refs: &[i32],
) -> Result<Vec<RawKey>, String> {
    let mut out = Vec::with_capacity(t.len());
    resolve_keys_with(t, v, flags, data, refs, |k| out.push(k))?;
    Ok(out)
}

/// [`resolve_keys`] handing each key to `emit` as it is resolved, in order (on an error,
/// some keys may have been handed over already).
fn resolve_keys_with(
    t: &[f64],
    v: &[f64],
    flags: &[i32],
    data: &[f32],
    refs: &[i32],
    mut emit: impl FnMut(RawKey),
) -> Result<(), String> {
    let n = t.len();
    if n == 0 {
        return Ok(());
    }
    if flags.len() != refs.len() || data.len() < refs.len() * 4 {
        return Err(format!(
            "{} attribute flags, {} ref counts, {} attribute floats",
            flags.len(),
            refs.len(),
            data.len()
        ));
    }
    let mut run = 0usize;
    let mut left_in_run = refs.first().copied().unwrap_or(0);
    let mut slope_left = 0.0f64;
    let mut weight_left = THIRD;
    let mut prev_time = 0.0f64;
    for i in 0..n {
        if left_in_run <= 0 || run >= refs.len() {
            return Err(format!("key attribute ref counts cover fewer than {n} keys"));
        }
        let f = flags[run] as u32;
        let a = &data[run * 4..run * 4 + 4];
        let time = t[i];
        let value = v[i];
        let next = (i + 1 < n).then(|| (t[i + 1], v[i + 1]));
        let mut right_slope = f64::from(a[0]);
        let mut right_weight = THIRD;
        let mut next_left_slope = f64::from(a[1]);
        let mut next_left_weight = THIRD;
        if f & (WEIGHTED_RIGHT | WEIGHTED_NEXT_LEFT) != 0 {
            let packed = a[2].to_bits();
            if f & WEIGHTED_RIGHT != 0 {
                right_weight = f64::from(packed & 0xffff) * 0.0001;
            }
            if f & WEIGHTED_NEXT_LEFT != 0 {
                next_left_weight = f64::from(packed >> 16) * 0.0001;
            }
        }
        let has_prev = i > 0 && time > prev_time;
        let has_next = next.is_some_and(|(nt, _)| nt > time);
        let leave;
        if f & CONSTANT != 0 {
            leave = if f & AUTO_OR_NEXT != 0 { Leave::HoldNext } else { Leave::Hold };
            right_weight = THIRD;
            next_left_weight = THIRD;
            right_slope = 0.0;
            next_left_slope = 0.0;
        } else if f & CUBIC != 0 {
            leave = Leave::Cubic;
            if f & TCB != 0 {
                let sl = if has_prev { (value - v[i - 1]) / (time - prev_time) } else { 0.0 };
                let sr = match next {
                    Some((nt, nv)) if nt > time => (nv - value) / (nt - time),
                    _ => 0.0,
                };
                let edge = !has_prev || !has_next;
                let (l, r) =
                    tcb_slopes(f64::from(a[0]), f64::from(a[1]), f64::from(a[2]), sl, sr, edge);
                slope_left = l;
                right_slope = r;
                next_left_slope = 0.0;
                next_left_weight = THIRD;
            } else if f & USER != 0 {
                // User slopes as stored ("break" keeps the two sides apart; unbroken keys store
                // equal ones).
                let _ = f & BREAK;
            } else {
                let prev = has_prev.then(|| (prev_time, v[i - 1]));
                let weights = (weight_left, right_weight);
                let bias = (slope_left, right_slope);
                (slope_left, right_slope) =
                    auto_key_slopes(f, prev, (time, value), next, weights, bias);
            }
        } else {
            leave = Leave::Linear;
            right_weight = THIRD;
            next_left_weight = THIRD;
            let s = match next {
                Some((nt, nv)) if nt > time => (nv - value) / (nt - time),
                _ => 0.0,
            };
            right_slope = s;
            next_left_slope = s;
        }
        emit(RawKey {
            time,
            value,
            leave,
            left_slope: slope_left,
            left_weight: weight_left,
            right_slope,
            right_weight,
        });
        slope_left = next_left_slope;
        weight_left = next_left_weight;
        prev_time = time;
        left_in_run -= 1;
        if left_in_run == 0 {
            run += 1;
            left_in_run = refs.get(run).copied().unwrap_or(0);
        }
    }
    Ok(())
}

/// The (left, right) slopes of an automatic cubic key `c` (time, value) of flags `f` between
/// `prev` (`None` for the first key, or one at the same time) and `next`, with the key's
/// weights (left, right) and the stored slopes as biases (left, right): both sides one slope
/// when the biases cancel, one-sided at the ends ([`auto_slope_one_side`]), flat for a lone
/// key.
fn auto_key_slopes(
    f: u32,
    prev: Option<(f64, f64)>,
    c: (f64, f64),
    next: Option<(f64, f64)>,
    (weight_left, right_weight): (f64, f64),
    (bias_left, bias_right): (f64, f64),
) -> (f64, f64) {
    let rules = AutoRules {
        clamp: f & CLAMP != 0,
        time_independent: f & TIME_INDEPENDENT != 0,
        clamp_progressive: f & CLAMP_PROGRESSIVE != 0,
        clamp_threshold: 0.0,
    };
    let time = c.0;
    match (prev, next) {
        (Some(p), Some(nx)) if nx.0 > time => {
            if (bias_left + bias_right).abs() <= 0.0001 {
                let s = auto_slope(p, c, nx, weight_left, right_weight, bias_right, rules);
                (s, s)
            } else {
                (
                    auto_slope(p, c, nx, weight_left, right_weight, -bias_left, rules),
                    auto_slope(p, c, nx, weight_left, right_weight, bias_right, rules),
                )
            }
        }
        (Some(p), _) => {
            let s = auto_slope_one_side(c, p, -bias_left, rules);
            (s, s)
        }
        (None, Some(nx)) if nx.0 > time => {
            let s = auto_slope_one_side(c, nx, bias_right, rules);
            (s, s)
        }
        _ => (0.0, 0.0),
    }
}

/// The resolved keys as a track in frames (two keys where the arriving and leaving kinds
/// differ, see the module docs).
fn to_track(raw: &[RawKey], fps: f64) -> Track<f64> {
    // One key per raw key, plus one where a cubic segment arrives at a key that leaves
    // otherwise: allocated once.
    let doubled =
        raw.windows(2).filter(|w| w[0].leave == Leave::Cubic && w[1].leave != Leave::Cubic);
    let mut b = TrackBuilder::new(raw.len() + doubled.count(), fps);
    for k in raw {
        b.push(k);
    }
    Track::new(b.keys)
}

/// [`to_track`] one raw key at a time (what `read_curve` feeds [`resolve_keys_with`]'s keys
/// into, with no list of raw keys in between).
struct TrackBuilder {
    keys: Vec<Key<f64>>,
    fps: f64,
    per_frame: f64,
    /// The previous key left by a cubic segment.
    after_cubic: bool,
}

impl TrackBuilder {
    fn new(capacity: usize, fps: f64) -> Self {
        TrackBuilder {
            keys: Vec::with_capacity(capacity),
            fps,
            per_frame: 1.0 / fps,
            after_cubic: false,
        }
    }

    fn push(&mut self, k: &RawKey) {
        let frame = k.time * self.fps;
        let bezier = Interpolation::Bezier {
            in_slope: k.left_slope * self.per_frame,
            in_weight: k.left_weight,
            out_slope: k.right_slope * self.per_frame,
            out_weight: k.right_weight,
        };
        let arrives_cubic = std::mem::replace(&mut self.after_cubic, k.leave == Leave::Cubic);
        let leave = match k.leave {
            Leave::Cubic => {
                self.keys.push(Key { frame, value: k.value, interpolation: bezier });
                return;
            }
            Leave::Hold => Interpolation::Step,
            Leave::HoldNext => Interpolation::StepNext,
            Leave::Linear => Interpolation::Linear,
        };
        if arrives_cubic {
            self.keys.push(Key { frame, value: k.value, interpolation: bezier });
        }
        self.keys.push(Key { frame, value: k.value, interpolation: leave });
    }
}

/// How many keys [`to_track`] makes of `n` keys whose runs of attribute flags are `flags` and
/// `refs` (a key leaves cubic when its flags say cubic and not constant, as
/// [`resolve_keys_with`] reads them): `n` plus one per cubic-to-other change. A capacity hint:
/// on inconsistent runs (which [`resolve_keys_with`] rejects) it may be off.
fn track_len(n: usize, flags: &[i32], refs: &[i32]) -> usize {
    let mut len = n;
    let mut left = n;
    let mut prev_cubic = false;
    for (&f, &r) in flags.iter().zip(refs) {
        if left == 0 || r <= 0 {
            break;
        }
        let f = f as u32;
        let cubic = f & CONSTANT == 0 && f & CUBIC != 0;
        if prev_cubic && !cubic {
            len += 1;
        }
        prev_cubic = cubic;
        left -= (r as usize).min(left);
    }
    len
}

/// The curves of a curve node: component index → curve object (an iterator: no list is
/// allocated per curve node).
fn curves_of<'g, 'd, 'a>(
    graph: &'g ObjectGraph<'d, 'a>,
    curve_node: i64,
) -> impl Iterator<Item = (usize, &'g Object<'d, 'a>)> + 'g {
    let mut seen = 0usize;
    graph
        .children(curve_node)
        .filter_map(move |c| Some((c, graph.object(c.child)?)))
        .filter(|(_, obj)| obj.class == "AnimationCurve")
        .map(move |(c, obj)| {
            let comp = match c.parent_prop() {
                Some("d|X") | Some("d|x") => 0,
                Some("d|Y") | Some("d|y") => 1,
                Some("d|Z") | Some("d|z") => 2,
                Some(_) => 0,
                None => seen,
            };
            seen += 1;
            (comp.min(2), obj)
        })
}

/// What an animated property drives.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Target {
    Translation(NodeId),
    Rotation(NodeId),
    Scaling(NodeId),
    Morph(NodeId, usize),
    Property(NodeId, String),
    /// A material's property: index into `Scene::materials`.
    Material(usize, MaterialProperty),
}

/// One animated property in one layer: its target, the curves per component.
struct Animated {
    target: Target,
    curves: [Option<Track<f64>>; 3],
    count: usize,
    /// The curve node's `d|X`, `d|Y`, `d|Z` (or `d|<Property>`) values: what components
    /// without a curve contribute in a layer.
    defaults: [Option<f64>; 3],
}

struct Layer {
    weight: f64,
    weight_curve: Option<Track<f64>>,
    mode: BlendMode,
    compose_rotation: bool,
    compose_scale: bool,
    props: Vec<Animated>,
}

/// A KTime (`ktime` ticks per second) as frames at `fps`, for ranges people read
/// (`TimeSpanStart`, `LocalStart`…): the shortest decimal whose tick, converted back
/// (`frames / fps × ktime`, rounded), is `t` again. A tick is 1/46186158000 s, so a range
/// start stored as a tick next to −1.25 frames at 24 fps (−2405529063: −1.25 frames is
/// −2405529062.5 ticks) reads as −1.25, not as −1.2500000002598… (its exact value; the
/// difference is below one tick, so it is noise of the storage, not of the animation). Whole frames come out exact (the product `t × fps` is divided once, in integers,
/// when `fps` is a whole number).
pub fn ktime_to_frames(t: i64, ktime: i64, fps: f64) -> f64 {
    let ktime = ktime.max(1);
    let exact = if fps.fract() == 0.0 && fps.abs() < 1e6 {
        let n = t as i128 * fps as i128;
        let (q, r) = (n / ktime as i128, n % ktime as i128);
        q as f64 + r as f64 / ktime as f64
    } else {
        t as f64 * fps / ktime as f64
    };
    if !exact.is_finite() || fps <= 0.0 {
        return exact;
    }
    let back = |v: f64| (v / fps * ktime as f64).round() as i64 == t;
    for digits in 0..=15 {
        let scale = 10f64.powi(digits);
        let v = (exact * scale).round() / scale;
        if back(v) {
            return v;
        }
    }
    exact
}

/// Adds one [`Animation`] per `AnimationStack` of `graph` to `scene` (see the module docs).
/// `ids` says which object became which scene element.
pub(crate) fn import(
    graph: &ObjectGraph<'_, '_>,
    ids: &ImportIds,
    scene: &mut Scene,
    warnings: &mut Vec<Warning>,
) {
    let fps = graph.settings.frame_rate();
    let fps = if fps > 0.0 && fps.is_finite() { fps } else { 24.0 };
    let ktime = graph.settings.ktime_per_second.max(1);
    let mesh_nodes = mesh_nodes(scene);
    // Each material's user property names, in `Material::user_properties` order.
    let material_props: Vec<Vec<String>> = scene
        .materials
        .iter()
        .map(|m| m.user_properties.iter().map(|p| p.name.clone()).collect())
        .collect();
    let mut attr_nodes: HashMap<i64, NodeId> = HashMap::new();
    for (&id, &cam) in &ids.cameras {
        if let Some(n) = scene.nodes.iter().position(|n| n.kind == NodeKind::Camera(cam)) {
            attr_nodes.insert(id, n);
        }
    }
    for (&id, &light) in &ids.lights {
        if let Some(n) = scene.nodes.iter().position(|n| n.kind == NodeKind::Light(light)) {
            attr_nodes.insert(id, n);
        }
    }
    let stacks: Vec<&Object<'_, '_>> =
        graph.objects().iter().filter(|o| o.class == "AnimationStack").collect();
    if stacks.is_empty() {
        import_takes(graph, graph.doc.root("Takes"), ids, scene, warnings, ktime, fps);
        return;
    }
    for stack in stacks {
        let mut layers = Vec::new();
        for layer in graph.child_objects(stack.id, "AnimationLayer") {
            layers.push(read_layer(
                graph,
                layer,
                ids,
                (&mesh_nodes, &attr_nodes, &material_props),
                ktime,
                fps,
                warnings,
            ));
        }
        let begin = graph.prop(stack.id, "LocalStart").and_then(|p| p.i64());
        let end = graph.prop(stack.id, "LocalStop").and_then(|p| p.i64());
        let to_frame = |t: i64| ktime_to_frames(t, ktime, fps);
        let mut anim = Animation {
            name: stack.name.to_string(),
            fps,
            frame_range: (0.0, 0.0),
            channels: Vec::new(),
        };
        let mut lo = f64::INFINITY;
        let mut hi = f64::NEG_INFINITY;
        for l in &layers {
            for p in &l.props {
                for t in p.curves.iter().flatten() {
                    if let (Some(a), Some(b)) = (t.keys.first(), t.keys.last()) {
                        lo = lo.min(a.frame);
                        hi = hi.max(b.frame);
                    }
                }
            }
        }
        // A span the stack itself declares is kept even when empty (ufbx's
        // `ufbx_anim_stack.time_begin/time_end` are the properties as they are); one only
        // from the template, or backwards, gives way to the keys' span.
        let declared = graph.object(stack.id).is_some_and(|o| {
            graph.own_prop_names(o).filter(|n| *n == "LocalStart" || *n == "LocalStop").count() == 2
        });
        anim.frame_range = match (begin, end) {
            (Some(b), Some(e)) if e > b || (e == b && declared) => (to_frame(b), to_frame(e)),
            _ if lo <= hi => (lo, hi),
            _ => (0.0, 0.0),
        };
        let mut materials = Vec::new();
        merge_layers(scene, layers, &mut anim, &mut materials, graph);
        scene.animations.push(anim);
        scene.material_channels.append(&mut materials);
    }
}

/// FBX 6 `Takes`: one [`Animation`] per `Take`, its `Model` channels read as one layer. Legacy
/// files (before 6.0) may also key a model outside any take, with `Channel` records in the
/// top-level `Model` itself: ufbx 0.23 (`ufbxi_read_legacy_model`) gathers those into one
/// implicit stack named `(internal)`, created after the takes so it is never the first; so
/// does keyscene.
#[allow(clippy::too_many_arguments)]
fn import_takes(
    graph: &ObjectGraph<'_, '_>,
    takes: Option<NodeRef<'_, '_>>,
    ids: &ImportIds,
    scene: &mut Scene,
    warnings: &mut Vec<Warning>,
    ktime: i64,
    fps: f64,
) {
    let mut reader = TakeReader {
        ids,
        by_name: HashMap::new(),
        shapes: HashMap::new(),
        mesh_nodes: mesh_nodes(scene),
        legacy: graph.doc.content_version() < 6000,
        ktime,
        fps,
    };
    for o in graph.objects() {
        if o.class == "Model" {
            reader.by_name.entry(&*o.name).or_insert(o.id);
        }
        if o.sub_class == "BlendShapeChannel" {
            reader.shapes.entry(&*o.name).or_insert(o.id);
        }
    }
    for take in takes.into_iter().flat_map(|t| t.children()).filter(|c| c.name() == "Take") {
        let name = take.property(0).and_then(|p| p.as_str()).unwrap_or("").to_string();
        let mut layer = take_layer();
        for model in take.children().filter(|c| c.name() == "Model") {
            reader.model_channels(model, &mut layer, warnings);
        }
        let local = take.child("LocalTime").map(|n| {
            (n.property(0).and_then(|p| p.as_i64()), n.property(1).and_then(|p| p.as_i64()))
        });
        push_take(scene, graph, name, layer, local, ktime, fps);
    }
    if reader.legacy {
        // ufbx makes the stack as soon as one model has a named `Channel`, keyed or not (a
        // channel of `Default`s only animates nothing, and the stack then poses the rest).
        let mut layer = take_layer();
        let mut any = false;
        for model in graph.doc.roots().filter(|c| c.name() == "Model") {
            any |= model
                .children()
                .any(|c| c.name() == "Channel" && c.property(0).and_then(|p| p.as_str()).is_some());
            reader.model_channels(model, &mut layer, warnings);
        }
        if any {
            push_take(scene, graph, "(internal)".into(), layer, None, ktime, fps);
        }
    }
}

/// The one layer a take's channels make: full weight, override, rotations and scales composed.
fn take_layer() -> Layer {
    Layer {
        weight: 1.0,
        weight_curve: None,
        mode: BlendMode::Override,
        compose_rotation: true,
        compose_scale: true,
        props: Vec::new(),
    }
}

/// Adds the animation of one take (or of the legacy implicit stack): its frame range is the
/// take's `LocalTime` (kept when empty, as for a stack's own `LocalStart`/`LocalStop`), else
/// the keys' span.
fn push_take(
    scene: &mut Scene,
    graph: &ObjectGraph<'_, '_>,
    name: String,
    layer: Layer,
    local: Option<(Option<i64>, Option<i64>)>,
    ktime: i64,
    fps: f64,
) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for p in &layer.props {
        for t in p.curves.iter().flatten() {
            if let (Some(a), Some(b)) = (t.keys.first(), t.keys.last()) {
                lo = lo.min(a.frame);
                hi = hi.max(b.frame);
            }
        }
    }
    let frame_range = match local {
        Some((Some(b), Some(e))) if e >= b => {
            (ktime_to_frames(b, ktime, fps), ktime_to_frames(e, ktime, fps))
        }
        _ if lo <= hi => (lo, hi),
        _ => (0.0, 0.0),
    };
    let mut anim = Animation { name, fps, frame_range, channels: Vec::new() };
    let mut materials = Vec::new();
    merge_layers(scene, vec![layer], &mut anim, &mut materials, graph);
    scene.animations.push(anim);
    scene.material_channels.append(&mut materials);
}

/// What reading FBX 6 take channels needs: the models and blend shape channels by name.
struct TakeReader<'g> {
    ids: &'g ImportIds,
    by_name: HashMap<&'g str, i64>,
    shapes: HashMap<&'g str, i64>,
    mesh_nodes: HashMap<usize, Vec<NodeId>>,
    legacy: bool,
    ktime: i64,
    fps: f64,
}

impl TakeReader<'_> {
    /// The `Channel`s of one `Model` record (in a take, or a legacy top-level model) into
    /// `layer`: `Transform` › `T`/`R`/`S`, and scalar channels (blend shapes by their shape's
    /// name, other properties by theirs).
    fn model_channels(
        &self,
        model: NodeRef<'_, '_>,
        layer: &mut Layer,
        warnings: &mut Vec<Warning>,
    ) {
        let (ktime, fps) = (self.ktime, self.fps);
        let raw = model.property(0).and_then(|p| p.as_bytes()).unwrap_or(b"");
        let (_, short) = super::objects::split_name(raw);
        let short = String::from_utf8_lossy(short);
        let Some(&id) = self.by_name.get(short.as_ref()) else {
            return;
        };
        let Some(&node) = self.ids.nodes.get(&id) else {
            return;
        };
        for ch in model.children().filter(|c| c.name() == "Channel") {
            let mut cname = ch.property(0).and_then(|p| p.as_str()).unwrap_or("");
            // Before 6.0 a blend shape's channel is named `Shape (Shape)` (ufbx
            // `ufbxi_read_take_prop_channel` drops the suffix).
            if self.legacy {
                cname = cname.strip_suffix(" (Shape)").unwrap_or(cname);
            }
            if cname == "Transform" {
                for sub in ch.children().filter(|c| c.name() == "Channel") {
                    let target = match sub.property(0).and_then(|p| p.as_str()) {
                        Some("T") => Target::Translation(node),
                        Some("R") => Target::Rotation(node),
                        Some("S") => Target::Scaling(node),
                        _ => continue,
                    };
                    if let Some(a) = take_channel(sub, &target, ktime, fps, warnings) {
                        layer.props.push(a);
                    }
                }
                continue;
            }
            // FBX 6 blend shapes are driven by a model property named after the shape.
            let six: Vec<(usize, usize)> = self
                .ids
                .morph_properties
                .iter()
                .filter(|(m, name, ..)| *m == id && name == cname)
                .map(|&(_, _, mesh, k)| (mesh, k))
                .collect();
            let list = if six.is_empty() {
                self.shapes.get(cname).and_then(|id| self.ids.morph_channels.get(id)).cloned()
            } else {
                Some(six)
            };
            let targets: Vec<Target> = match list {
                Some(list) => morph_targets(&list, &self.mesh_nodes).collect(),
                None => vec![Target::Property(node, cname.to_string())],
            };
            for target in targets {
                if let Some(a) = take_channel(ch, &target, ktime, fps, warnings) {
                    layer.props.push(a);
                }
            }
        }
    }
}

/// One FBX 6 channel: a scalar one with `Key`s or a `Default`, or a vector one with `X`, `Y`,
/// `Z` children (ufbx `ufbxi_read_take_prop_channel`: a channel holding `Key` or `Default`
/// itself is scalar, whatever children it has).
///
/// A (sub-)channel with a `Default` and no keys still animates its property under the take:
/// ufbx makes it an anim value without curve, evaluated as that `Default` at every time
/// (`ufbxi_read_take_anim_channel` reads the `Default` first and returns before the keys).
/// keyscene gives it a one-key constant track at the `Default`. A component with neither keeps
/// the stored value.
fn take_channel(
    ch: NodeRef<'_, '_>,
    target: &Target,
    ktime: i64,
    fps: f64,
    warnings: &mut Vec<Warning>,
) -> Option<Animated> {
    let prop = ch.property(0).and_then(|p| p.as_str()).unwrap_or("").to_string();
    let mut curves: [Option<Track<f64>>; 3] = [None, None, None];
    let mut defaults = [None; 3];
    let mut count = 0;
    let subs: Vec<_> = ch.children().filter(|c| c.name() == "Channel").collect();
    let mut read = |node: NodeRef<'_, '_>, k: usize| {
        defaults[k] = node.child("Default").and_then(|d| d.property(0)).and_then(|p| p.as_f64());
        match read_take_curve(node, ktime, fps) {
            Ok(Some(t)) => {
                curves[k] = Some(t);
                count = count.max(k + 1);
            }
            Ok(None) => {
                if let Some(d) = defaults[k].filter(|d| d.is_finite()) {
                    let key = Key { frame: 0.0, value: d, interpolation: Interpolation::Step };
                    curves[k] = Some(Track { keys: vec![key], ..Track::default() });
                    count = count.max(k + 1);
                }
            }
            Err(e) => warnings.push(Warning {
                offset: Some(node.offset()),
                place: format!("Takes › Channel {prop}"),
                message: format!("{e}; channel ignored"),
            }),
        }
    };
    if subs.is_empty() || ch.child("Key").is_some() || ch.child("Default").is_some() {
        read(ch, 0);
    } else {
        for sub in subs {
            let k = match sub.property(0).and_then(|p| p.as_str()) {
                Some("X") => 0,
                Some("Y") => 1,
                Some("Z") => 2,
                _ => continue,
            };
            read(sub, k);
        }
    }
    (count > 0).then(|| Animated { target: target.clone(), curves, count, defaults })
}

/// The `Key` list of an FBX 6 channel (ufbx `ufbxi_read_take_anim_channel`): per key its
/// time, value and mode — `C` constant (then `n` for next with KeyVer ≥ 4004), `L` linear,
/// `U` cubic followed by a slope mode (`s`/`b`: right and next-left slopes; `a`, `p`, `q`,
/// `t`, `d`: automatic, with 0–3 parameters ignored) and weight modes (`n` none, `a` both,
/// `r` right, `l` next-left, `c` none). An ASCII list with letters arrives as one `Raw` text property
/// (`ascii.rs` module docs). Automatic keys take the progressive-clamped,
/// time-independent auto slope. `None` when the channel has no keys.
fn read_take_curve(
    node: NodeRef<'_, '_>,
    ktime: i64,
    fps: f64,
) -> Result<Option<Track<f64>>, String> {
    let Some(key) = node.child("Key") else {
        return Ok(None);
    };
    let data = take_key_values(key);
    let n = node
        .child("KeyCount")
        .and_then(|c| c.property(0))
        .and_then(|p| p.as_i64())
        .unwrap_or(0)
        .max(0) as usize;
    let key_ver =
        node.child("KeyVer").and_then(|c| c.property(0)).and_then(|p| p.as_i64()).unwrap_or(4005);
    if n == 0 {
        return Ok(None);
    }
    let mut pos = 0usize;
    let need = |pos: usize, k: usize| need_values(&data, pos, k);
    need(0, 2)?;
    let mut raw: Vec<RawKey> = Vec::with_capacity(n.min(data.len() / 3 + 1));
    let mut next_time = data[0] / ktime as f64;
    let mut next_value = data[1];
    let mut slope_left = 0.0;
    let mut weight_left = THIRD;
    let mut prev_time = 0.0;
    for i in 0..n {
        need(pos, 3)?;
        let time = next_time;
        let value = next_value;
        let mode = key_letter(data[pos + 2]);
        pos += 3;
        let mut right_slope = 0.0;
        let mut right_weight = THIRD;
        let mut next_left_slope = 0.0;
        let mut next_left_weight = THIRD;
        let mut auto = false;
        let leave;
        match mode {
            b'U' => {
                leave = Leave::Cubic;
                let (cubic, after) = read_cubic_key(&data, pos, key_ver)?;
                pos = after;
                auto = cubic.auto;
                right_slope = cubic.right_slope;
                next_left_slope = cubic.next_left_slope;
                right_weight = cubic.right_weight;
                next_left_weight = cubic.next_left_weight;
            }
            b'L' => leave = Leave::Linear,
            b'C' => {
                if key_ver >= 4004 {
                    need(pos, 1)?;
                    leave =
                        if key_letter(data[pos]) == b'n' { Leave::HoldNext } else { Leave::Hold };
                    pos += 1;
                } else {
                    leave = Leave::Hold;
                }
            }
            other => return Err(format!("unknown key mode {:?}", other as char)),
        }
        if i + 1 < n {
            need(pos, 2)?;
            next_time = data[pos] / ktime as f64;
            next_value = data[pos + 1];
        }
        let mut left = slope_left;
        if auto {
            let s = if i > 0 {
                let rules = AutoRules {
                    clamp_progressive: true,
                    time_independent: true,
                    ..AutoRules::default()
                };
                auto_slope(
                    (prev_time, raw[i - 1].value),
                    (time, value),
                    (next_time, next_value),
                    weight_left,
                    right_weight,
                    0.0,
                    rules,
                )
            } else {
                0.0
            };
            left = s;
            right_slope = s;
        }
        if leave == Leave::Linear {
            let s = if next_time > time { (next_value - value) / (next_time - time) } else { 0.0 };
            right_slope = s;
            next_left_slope = s;
        }
        raw.push(RawKey {
            time,
            value,
            leave,
            left_slope: left,
            left_weight: weight_left,
            right_slope,
            right_weight,
        });
        slope_left = next_left_slope;
        weight_left = next_left_weight;
        prev_time = time;
    }
    let mut track = to_track(&raw, fps);
    track.before = extrapolation(node, "Pre-Extrapolation");
    track.after = extrapolation(node, "Post-Extrapolation");
    Ok(Some(track))
}

/// The numbers of an FBX 6 `Key` record: an array, or a list whose key-mode letters count as
/// their character codes (an ASCII list with letters arrives as one `Raw` text property).
fn take_key_values(key: NodeRef<'_, '_>) -> Vec<f64> {
    let mut data: Vec<f64> = Vec::new();
    for p in key.properties() {
        use super::tree::Property as P;
        match p {
            P::Array(a) => data.extend(key.decoded(a.to_f64_vec())),
            P::Raw(text) => super::ascii::key_list_values(text, &mut data),
            P::String(s) => data.push(f64::from(s.first().copied().unwrap_or(0))),
            P::Bool(b) => data.push(f64::from(*b)),
            other => data.push(other.as_f64().unwrap_or(0.0)),
        }
    }
    data
}

/// A key-mode letter of a `Key` list (stored as its character code).
fn key_letter(x: f64) -> u8 {
    x as i64 as u8
}

/// `Ok` when `data` has `k` more values from `pos`.
fn need_values(data: &[f64], pos: usize, k: usize) -> Result<(), String> {
    if pos + k > data.len() {
        Err(format!("Key list ends early ({} values)", data.len()))
    } else {
        Ok(())
    }
}

/// The tangents a `U` (cubic) key of a `Key` list gives.
struct CubicKey {
    /// An automatic slope mode: the slopes are computed, not stored.
    auto: bool,
    right_slope: f64,
    next_left_slope: f64,
    right_weight: f64,
    next_left_weight: f64,
}

/// The slope mode and weight modes of a `U` key at `pos` (past the `U`), and the position
/// past them ([`read_take_curve`] lists the modes).
fn read_cubic_key(data: &[f64], mut pos: usize, key_ver: i64) -> Result<(CubicKey, usize), String> {
    let need = |pos: usize, k: usize| need_values(data, pos, k);
    let mut right_slope = 0.0;
    let mut right_weight = THIRD;
    let mut next_left_slope = 0.0;
    let mut next_left_weight = THIRD;
    let mut auto = false;
    need(pos, 1)?;
    let slope_mode = key_letter(data[pos]);
    pos += 1;
    let mut weights = 1usize;
    match slope_mode {
        b's' | b'b' => {
            need(pos, 2)?;
            right_slope = data[pos];
            next_left_slope = data[pos + 1];
            pos += 2;
            if key_ver == 4003 {
                weights = 0;
            }
        }
        b'a' => {
            auto = true;
            if key_ver <= 4004 {
                weights = 0;
            }
        }
        b'p' | b'q' => {
            auto = true;
            need(pos, 2)?;
            pos += 2;
            weights = if key_ver <= 4004 { 1 } else { 2 };
        }
        b't' => {
            auto = true;
            need(pos, 3)?;
            pos += 3;
            weights = 0;
        }
        b'd' => {
            auto = true;
            need(pos, 1)?;
            pos += 1;
        }
        other => return Err(format!("unknown slope mode {:?}", other as char)),
    }
    for _ in 0..weights {
        need(pos, 1)?;
        let wm = key_letter(data[pos]);
        pos += 1;
        match wm {
            b'n' | b'c' => {}
            b'a' => {
                need(pos, 2)?;
                right_weight = data[pos];
                next_left_weight = data[pos + 1];
                pos += 2;
            }
            b'l' => {
                need(pos, 1)?;
                next_left_weight = data[pos];
                pos += 1;
            }
            b'r' => {
                need(pos, 1)?;
                right_weight = data[pos];
                pos += 1;
            }
            other => return Err(format!("unknown weight mode {:?}", other as char)),
        }
    }
    Ok((CubicKey { auto, right_slope, next_left_slope, right_weight, next_left_weight }, pos))
}

/// What a curve node's target object may stand for, besides the graph's own: the nodes
/// instancing each mesh, the node of each camera/light attribute object, each material's user
/// property names.
type Owners<'a> = (&'a HashMap<usize, Vec<NodeId>>, &'a HashMap<i64, NodeId>, &'a [Vec<String>]);

#[allow(clippy::too_many_arguments)]
fn read_layer(
    graph: &ObjectGraph<'_, '_>,
    layer: &Object<'_, '_>,
    ids: &ImportIds,
    (mesh_nodes, attr_nodes, material_props): Owners<'_>,
    ktime: i64,
    fps: f64,
    warnings: &mut Vec<Warning>,
) -> Layer {
    let mut out = Layer {
        weight: (graph.get_f64(layer.id, "Weight", 100.0) / 100.0).clamp(0.0, 1.0),
        weight_curve: None,
        mode: BlendMode::from_fbx(graph.get_i64(layer.id, "BlendMode", 0)),
        compose_rotation: graph.get_i64(layer.id, "RotationAccumulationMode", 0) == 0,
        compose_scale: graph.get_i64(layer.id, "ScaleAccumulationMode", 0) == 0,
        props: Vec::new(),
    };
    if out.weight > 0.99999 {
        out.weight = 1.0;
    }
    // A curve node's `d|X`, `d|Y`, `d|Z` (its value on this layer), found in one pass and
    // their template entries once.
    let mut component_props = PropCache::new(&["d|X", "d|Y", "d|Z"]);
    // The targets of one curve node, so its curves are cloned for all but the last.
    let mut targets: Vec<(Target, [Option<f64>; 3])> = Vec::new();
    for cn in graph.child_objects(layer.id, "AnimationCurveNode") {
        let mut curves: [Option<Track<f64>>; 3] = [None, None, None];
        let mut count = 0;
        for (comp, obj) in curves_of(graph, cn.id) {
            match read_curve(graph.doc.version, graph.doc.encoding, obj.node, ktime, fps) {
                Ok(t) => {
                    count = count.max(comp + 1);
                    curves[comp] = Some(t);
                }
                Err(e) => warnings.push(Warning {
                    offset: Some(obj.node.offset()),
                    place: format!("AnimationCurve {}", obj.id),
                    message: format!("{e}; curve ignored"),
                }),
            }
        }
        let d = |name: &str| graph.prop(cn.id, name).and_then(|p| p.f64());
        let found = component_props.of(graph, cn);
        let defaults = [found.f64(0), found.f64(1), found.f64(2)];
        // A curve node without curves still gives its layer's value (its `d|` properties):
        // kept for blending with other layers (see `merge_layers`).
        if count == 0 && defaults.iter().all(Option::is_none) {
            continue;
        }
        for c in graph.parents(cn.id) {
            if c.kind != ConnectionKind::ObjectProperty {
                continue;
            }
            let Some(prop) = c.parent_prop() else { continue };
            let Some(obj) = graph.object(c.parent) else {
                continue;
            };
            let mut defaults = defaults;
            if defaults[0].is_none() {
                defaults[0] = d(&format!("d|{prop}"));
            }
            // In-file `Shape` records are driven by a property of the object holding them
            // (the FBX 7.1 geometry, the FBX 6 model) named after the shape.
            let in_file: Vec<(usize, usize)> = ids
                .morph_properties
                .iter()
                .filter(|(holder, name, ..)| *holder == obj.id && name == prop)
                .map(|&(_, _, mesh, k)| (mesh, k))
                .collect();
            if !in_file.is_empty() {
                targets.extend(morph_targets(&in_file, mesh_nodes).map(|t| (t, defaults)));
            } else if let Some(&node) = ids.nodes.get(&obj.id) {
                if matches!(prop, "PreRotation" | "PostRotation")
                    && !rotation_setup(graph, obj.id).uses_rotation_space
                {
                    // Ignored with RotationActive 0 / RotationSpaceForLimitOnly 1, animated or
                    // not (as the static value: see `shared::rotation_setup`).
                    continue;
                }
                let target = match prop {
                    "Lcl Translation" => Target::Translation(node),
                    "Lcl Rotation" => Target::Rotation(node),
                    "Lcl Scaling" => Target::Scaling(node),
                    _ => Target::Property(node, prop.to_string()),
                };
                targets.push((target, defaults));
            } else if let Some(list) = ids.morph_channels.get(&obj.id) {
                if prop != "DeformPercent" {
                    continue;
                }
                targets.extend(morph_targets(list, mesh_nodes).map(|t| (t, defaults)));
            } else if ids.morph_properties.iter().any(|(o, name, ..)| *o == obj.id && name == prop)
            {
                // `Shape` records inside a 7.1 `Geometry`, weighted by its property `prop`.
                let list: Vec<(usize, usize)> = ids
                    .morph_properties
                    .iter()
                    .filter(|(o, name, ..)| *o == obj.id && name == prop)
                    .map(|&(_, _, mesh, k)| (mesh, k))
                    .collect();
                targets.extend(morph_targets(&list, mesh_nodes).map(|t| (t, defaults)));
            } else if let Some(&node) = attr_nodes.get(&obj.id) {
                targets.push((Target::Property(node, prop.to_string()), defaults));
            } else if let (Some(&m), Some(p)) =
                (ids.materials.get(&obj.id), MaterialProperty::from_fbx(prop))
            {
                targets.push((Target::Material(m, p), defaults));
            } else if let Some((m, k)) = ids.materials.get(&obj.id).and_then(|&m| {
                let k = material_props.get(m)?.iter().position(|n| n == prop)?;
                Some((m, u16::try_from(k).ok()?))
            }) {
                targets.push((Target::Material(m, MaterialProperty::User(k)), defaults));
            } else if obj.id == layer.id && prop == "Weight" {
                out.weight_curve = curves.iter().flatten().next().cloned();
            }
        }
        if let Some((target, defaults)) = targets.pop() {
            for (target, defaults) in targets.drain(..) {
                out.props.push(Animated { target, curves: curves.clone(), count, defaults });
            }
            out.props.push(Animated { target, curves, count, defaults });
        }
    }
    out
}

/// The scene's rest value of a target's three components (degrees for rotation; 0 for other
/// properties, see "Layers" in the module docs).
fn rest_value(scene: &Scene, target: &Target, rest: &RestRotation<'_>) -> DVec3 {
    match target {
        Target::Translation(n) => scene.nodes[*n].transform.translation,
        Target::Scaling(n) => scene.nodes[*n].transform.scale,
        Target::Rotation(n) => rest.degrees(*n).unwrap_or(DVec3::ZERO),
        Target::Morph(n, k) => {
            let w = scene.nodes[*n]
                .mesh
                .and_then(|m| scene.meshes[m].morph_targets.get(*k))
                .map(|t| t.default_weight);
            DVec3::splat(w.unwrap_or(0.0) * 100.0)
        }
        Target::Material(m, p) => scene.materials[*m].property(*p),
        _ => DVec3::ZERO,
    }
}

/// A model node's rotation order and stored `Lcl Rotation` (degrees), read from the graph
/// for the nodes a channel targets. (A table over every node cost about 120 bytes per model
/// at the load's peak, for files that animate few of them or none.)
struct RestRotation<'g> {
    graph: &'g ObjectGraph<'g, 'g>,
    scene: &'g Scene,
}

impl RestRotation<'_> {
    /// The FBX object id of scene node `n`, when it was a `Model`.
    fn model(&self, n: NodeId) -> Option<i64> {
        let id = self.scene.nodes.get(n)?.source.id?;
        self.graph.object(id).filter(|o| o.class == "Model").map(|o| o.id)
    }

    /// The order the node's rotation applies in ([`rotation_setup`]).
    fn order(&self, n: NodeId) -> Option<EulerOrder> {
        self.model(n).map(|id| rotation_setup(self.graph, id).order)
    }

    /// The model's `RotationOrder` as stored, whether or not its rotation space is used: the
    /// order layers compose rotations in (as ufbx reads it for the blend).
    fn stored_order(&self, n: NodeId) -> Option<EulerOrder> {
        self.model(n).map(|id| EulerOrder::from_fbx(self.graph.get_i64(id, "RotationOrder", 0)))
    }

    fn degrees(&self, n: NodeId) -> Option<DVec3> {
        self.model(n).map(|id| DVec3::from(self.graph.get_vec3(id, "Lcl Rotation", [0.0; 3])))
    }
}

/// Turns the layers of a stack into channels (see "Layers" in the module docs); the channels
/// of material properties go to `materials`, for the animation `anim` becomes when pushed next.
fn merge_layers(
    scene: &Scene,
    mut layers: Vec<Layer>,
    anim: &mut Animation,
    materials: &mut Vec<MaterialChannel>,
    graph: &ObjectGraph,
) {
    let rest = RestRotation { graph, scene };
    // Group by target, in order of first appearance. Found through a map: a linear search of
    // the groups made loading quadratic in the animated properties (10,000 animated siblings:
    // three quarters of the load).
    let mut groups: Vec<(Target, Vec<(usize, usize)>)> = Vec::new();
    let mut group_of: foldhash::HashMap<Target, usize> = foldhash::HashMap::default();
    for (li, l) in layers.iter().enumerate() {
        for (pi, p) in l.props.iter().enumerate() {
            match group_of.get(&p.target) {
                Some(&g) => groups[g].1.push((li, pi)),
                None => {
                    group_of.insert(p.target.clone(), groups.len());
                    groups.push((p.target.clone(), vec![(li, pi)]));
                }
            }
        }
    }
    drop(group_of);
    for (target, members) in groups {
        // Curve nodes without curves only matter under a layer that animates the property:
        // there they are that layer's value, as ufbx evaluates them (a base layer's curveless
        // node replaces the stored value, which Maya writes as the blended result).
        let animated: Vec<(usize, usize)> =
            members.iter().copied().filter(|&(li, pi)| layers[li].props[pi].count > 0).collect();
        let Some(&first) = animated.first() else { continue };
        // The first layer replaces the stored value, as does a lone override layer; anything
        // else is kept as its layers and blended when sampled.
        // (A lone override layer on top replaces whatever curveless nodes lie under it.)
        let last = members.last().map_or(first, |&m| m);
        let simple = animated.len() == 1
            && (members.len() == 1 && first.0 == 0
                || layers[first.0].mode == BlendMode::Override && last == first);
        if let Target::Material(material, property) = target {
            let value = if simple {
                let p = &mut layers[first.0].props[first.1];
                MaterialValue::Curves {
                    curves: std::mem::take(&mut p.curves),
                    constants: p.defaults,
                }
            } else {
                let value = LayeredValue::Property(property.name_on(&scene.materials[material]));
                let rest = scene.materials[material].property(property);
                MaterialValue::Layered(Box::new(layer_blend(&layers, &members, value, rest, None)))
            };
            let animation = scene.animations.len();
            materials.push(MaterialChannel { animation, material, property, value });
        } else if simple {
            // Moved out, not copied: a property belongs to one group only.
            let p = &mut layers[first.0].props[first.1];
            let count = p.count;
            push_channels(anim, target, std::mem::take(&mut p.curves), count, &rest);
        } else {
            push_layered(scene, &layers, &members, target, anim, &rest);
        }
    }
}

/// Pushes the channels of a property one layer animates alone, with its curves.
fn push_channels(
    anim: &mut Animation,
    target: Target,
    curves: [Option<Track<f64>>; 3],
    count: usize,
    rest_rot: &RestRotation<'_>,
) {
    match target {
        Target::Translation(node) => {
            anim.channels.push(Channel { node, target: ChannelTarget::TranslationXyz(curves) })
        }
        Target::Scaling(node) => {
            anim.channels.push(Channel { node, target: ChannelTarget::ScaleXyz(curves) })
        }
        Target::Rotation(node) => {
            let to_rad = std::f64::consts::PI / 180.0;
            let xyz = curves.map(|c| c.map(|t| scale_track(t, to_rad)));
            let rest = rest_rot.degrees(node).unwrap_or(DVec3::ZERO) * to_rad;
            let order = rest_rot.order(node).unwrap_or(EulerOrder::Xyz);
            anim.channels.push(Channel {
                node,
                target: ChannelTarget::Rotation(RotationTrack::Euler { order, rest, xyz }),
            });
        }
        Target::Morph(node, k) => {
            if let Some(track) = curves.into_iter().flatten().next() {
                anim.channels.push(Channel {
                    node,
                    target: ChannelTarget::Property { name: morph_weight_property(k), track },
                });
            }
        }
        // Material properties are channels of their own (`merge_layers`).
        Target::Material(..) => {}
        Target::Property(node, name) => {
            for (i, c) in curves.into_iter().enumerate() {
                let Some(track) = c else { continue };
                let name =
                    if count > 1 { format!("{name}|{}", ["X", "Y", "Z"][i]) } else { name.clone() };
                anim.channels
                    .push(Channel { node, target: ChannelTarget::Property { name, track } });
            }
        }
    }
}

/// The scene nodes showing each mesh (mesh index → nodes).
fn mesh_nodes(scene: &Scene) -> HashMap<usize, Vec<NodeId>> {
    let mut out: HashMap<usize, Vec<NodeId>> = HashMap::new();
    for (i, n) in scene.nodes.iter().enumerate() {
        if let Some(m) = n.mesh {
            out.entry(m).or_default().push(i);
        }
    }
    out
}

/// The morph targets a `BlendShapeChannel` drives: its (mesh, target) pairs on every node
/// showing the mesh.
fn morph_targets<'a>(
    list: &'a [(usize, usize)],
    mesh_nodes: &'a HashMap<usize, Vec<NodeId>>,
) -> impl Iterator<Item = Target> + 'a {
    list.iter().flat_map(move |&(mesh, k)| {
        mesh_nodes.get(&mesh).into_iter().flatten().map(move |&n| Target::Morph(n, k))
    })
}

/// Multiplies a track's values and slopes by `s`.
fn scale_track(mut t: Track<f64>, s: f64) -> Track<f64> {
    for k in &mut t.keys {
        k.value *= s;
        if let Interpolation::Bezier { in_slope, out_slope, .. } = &mut k.interpolation {
            *in_slope *= s;
            *out_slope *= s;
        }
    }
    t
}

/// The blend of the layers `members` ((layer, property) in stack order) of one property: every
/// member's curves and curve node values, with its components picked by `pick` (all three, or
/// one moved to X), over `rest`.
fn layer_blend(
    layers: &[Layer],
    members: &[(usize, usize)],
    value: LayeredValue,
    rest: DVec3,
    pick: Option<usize>,
) -> LayerBlend {
    let contributions = members.iter().map(|&(li, pi)| {
        let l = &layers[li];
        let p = &l.props[pi];
        let (curves, constants) = match pick {
            None => (p.curves.clone(), p.defaults),
            Some(c) => ([p.curves[c].clone(), None, None], [p.defaults[c], None, None]),
        };
        LayerContribution {
            first_in_stack: li == 0,
            mode: l.mode,
            weight: l.weight,
            weight_track: l.weight_curve.clone(),
            compose_rotation: l.compose_rotation,
            compose_scale: l.compose_scale,
            curves,
            constants,
        }
    });
    LayerBlend { value, rest, layers: contributions.collect() }
}

/// Pushes the channels of a property that several layers animate, or one layer of partial or
/// animated weight: a [`ChannelTarget::Layered`] with every member layer's curves and curve
/// node values (`members`: (layer, property) in stack order), blended when sampled. A vector
/// property that is not a transform part is one blend per component a layer has a curve for.
fn push_layered(
    scene: &Scene,
    layers: &[Layer],
    members: &[(usize, usize)],
    target: Target,
    anim: &mut Animation,
    rest_rot: &RestRotation<'_>,
) {
    let rest = rest_value(scene, &target, rest_rot);
    let blend =
        |value, rest, pick| ChannelTarget::from(layer_blend(layers, members, value, rest, pick));
    let mut push = |node, target| anim.channels.push(Channel { node, target });
    match target {
        Target::Translation(n) => push(n, blend(LayeredValue::Translation, rest, None)),
        Target::Scaling(n) => push(n, blend(LayeredValue::Scale, rest, None)),
        Target::Rotation(n) => {
            let order = rest_rot.order(n).unwrap_or(EulerOrder::Xyz);
            let blend_order = rest_rot.stored_order(n).unwrap_or(EulerOrder::Xyz);
            push(n, blend(LayeredValue::Rotation { order, blend_order }, rest, None));
        }
        Target::Morph(n, k) => {
            let name = morph_weight_property(k);
            push(n, blend(LayeredValue::Property(name), rest, Some(0)));
        }
        Target::Material(..) => {}
        Target::Property(n, name) => {
            let count = members.iter().map(|&(li, pi)| layers[li].props[pi].count).max();
            for c in 0..3 {
                if !members.iter().any(|&(li, pi)| layers[li].props[pi].curves[c].is_some()) {
                    continue;
                }
                let name = if count.unwrap_or(0) > 1 {
                    format!("{name}|{}", ["X", "Y", "Z"][c])
                } else {
                    name.clone()
                };
                let rest = DVec3::new(rest[c], 0.0, 0.0);
                push(n, blend(LayeredValue::Property(name), rest, Some(c)));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hand-computed: one frame at 24 fps is 46186158000 / 24 = 1924423250 ticks, so −1.25
    /// frames is −2405529062.5 ticks; a file stores a whole tick, −2405529063, whose exact value
    /// −1.2500000002598… frames must print as −1.25 (−1.25 × 1924423250 rounds back to it).
    #[test]
    fn ktime_ranges_read_as_the_shortest_frames_that_round_trip_to_their_tick() {
        const K: i64 = 46_186_158_000;
        assert_eq!(ktime_to_frames(-2_405_529_063, K, 24.0), -1.25);
        // A tick that is not the nearest to any short decimal keeps more digits, exactly.
        let v = ktime_to_frames(-2_405_529_000, K, 24.0);
        assert_eq!((v / 24.0 * K as f64).round(), -2_405_529_000.0);
        assert_eq!(ktime_to_frames(1_924_423_250, K, 24.0), 1.0);
        assert_eq!(ktime_to_frames(K * 200 / 24, K, 24.0), 200.0);
        assert_eq!(ktime_to_frames(0, K, 30.0), 0.0);
        // Half a frame at 30 fps, 769769300 ticks, exactly.
        assert_eq!(ktime_to_frames(769_769_300, K, 30.0), 0.5);
    }

    fn bits(x: f32) -> f32 {
        x
    }

    #[test]
    fn track_len_adds_a_key_where_a_cubic_run_meets_another_kind() {
        // Runs: 2 cubic keys, 1 linear (cubic → linear: +1), 1 cubic, 1 constant (a cubic
        // flag under constant holds: +1), 1 linear (constant → linear: none).
        let flags = [CUBIC, LINEAR, CUBIC, CONSTANT | CUBIC, LINEAR].map(|f| f as i32);
        assert_eq!(track_len(6, &flags, &[2, 1, 1, 1, 1]), 8);
        // The same keys through `resolve_keys` and `to_track` give as many.
        let t: Vec<f64> = (0..6).map(f64::from).collect();
        let raw = resolve_keys(&t, &[0.0; 6], &flags, &[0.0; 20], &[2, 1, 1, 1, 1]).unwrap();
        assert_eq!(to_track(&raw, 1.0).keys.len(), 8);
        assert_eq!(track_len(0, &[], &[]), 0);
    }

    #[test]
    fn packed_weights_decode_as_decimal_fractions() {
        // Right 0.5 (5000), next-left 0.25 (2500).
        let packed = f32::from_bits(5000 | (2500 << 16));
        let k = resolve_keys(
            &[0.0, 1.0],
            &[0.0, 1.0],
            &[(CUBIC | USER | WEIGHTED_RIGHT | WEIGHTED_NEXT_LEFT) as i32],
            &[2.0, 3.0, packed, 0.0],
            &[2],
        )
        .unwrap();
        assert_eq!(k[0].right_weight, 0.5);
        assert_eq!(k[1].left_weight, 0.25);
        assert_eq!(k[0].right_slope, 2.0);
        assert_eq!(k[1].left_slope, 3.0);
        let _ = bits(0.0);
    }

    #[test]
    fn linear_then_constant_next_keys() {
        let k = resolve_keys(
            &[0.0, 1.0, 2.0],
            &[0.0, 2.0, 5.0],
            &[LINEAR as i32, (CONSTANT | AUTO_OR_NEXT) as i32],
            &[0.0; 8],
            &[1, 2],
        )
        .unwrap();
        assert_eq!(k[0].leave, Leave::Linear);
        assert_eq!(k[0].right_slope, 2.0);
        assert_eq!(k[1].leave, Leave::HoldNext);
        let t = to_track(&k, 24.0);
        assert_eq!(t.sample(36.0), Some(5.0));
        assert_eq!(t.sample(12.0), Some(1.0));
    }

    #[test]
    fn a_cubic_key_followed_by_a_held_key_keeps_its_arriving_handle() {
        // Key 0 cubic (user, slopes 0 out, 6 into key 1), key 1 held.
        let k = resolve_keys(
            &[0.0, 1.0, 2.0],
            &[0.0, 1.0, 1.0],
            &[(CUBIC | USER) as i32, CONSTANT as i32],
            &[0.0, 6.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
            &[1, 2],
        )
        .unwrap();
        let t = to_track(&k, 1.0);
        // Two keys at frame 1: the Bézier one with the arriving slope 6, then the held one.
        assert_eq!(t.keys.len(), 4);
        assert!(
            matches!(t.keys[1].interpolation, Interpolation::Bezier { in_slope, .. } if in_slope == 6.0)
        );
        assert_eq!(t.keys[2].interpolation, Interpolation::Step);
        assert_eq!(t.sample(1.5), Some(1.0));
        // Bézier 0, 0, 1 − 2, 1 at s = ½ (weights ⅓): (0 + 0 + 3·(−1)·… ) = 3/8·(−1) + 1/8 = −0.25.
        assert!((t.sample(0.5).unwrap() - (-0.25)).abs() < 1e-12);
    }
}

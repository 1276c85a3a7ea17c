//! Key-keeping rules the writers share (issue 13 §3): which nodes can be written from their
//! source keys, which channel drives a node part, the written frame range, the frames a
//! resampled part is sampled at, and how many samples a writer may make.
//!
//! A writer keeps a part's source keys when the file format holds them exactly and resamples
//! it otherwise. What "exactly" means is the format's own (glTF samplers:
//! `formats::gltf::export::animation`; 3DA tracks: `formats::three_da::keys`), but the
//! questions before it are the same for every writer and are answered here once:
//!
//! - **Own parts** ([`own_trs_nodes`]): a node whose local matrix is `T·R·S` of its own parts
//!   (no FBX pivots or pre/post rotation, none animated, a root or inherit type `RSrs`) can be
//!   written part by part; any other node's local is the product of its pivots or its parents'
//!   world matrices and is resampled from the evaluated scene.
//! - **One channel per part** ([`part_channel`]): a part keeps keys only when exactly one
//!   channel drives it; parts that FBX animation layers blend ([`ChannelTarget::Layered`]) have
//!   no key form ([`LAYERS_BLENDED`]).
//! - **Range** ([`first_frame`], [`written_range`]): frames before 0 are not written; a written
//!   animation runs from its first frame (at least 0) to its last frame or its last key,
//!   whichever is later.
//! - **Resampling** ([`sample_frames`], [`resample_frames`]): a time-based format (glTF) samples
//!   on an even grid that also takes every key and the instant before every jump; a frame-based
//!   one (3DA) at every integer frame. Both are bounded ([`MAX_GRID_SAMPLES`],
//!   [`RESAMPLE_BUDGET`]) so that no input makes a writer allocate without limit.

use crate::anim::{Channel, ChannelTarget, RotationTrack, Track};
use crate::scene::{InheritType, Scene};

/// Why a part's keys were not kept: a reason for a writer's report.
pub type Why = &'static str;

/// Why a part driven by a [`ChannelTarget::Layered`] channel is resampled: no format the
/// writers write has layers, and the blend of several curves (or of one with a partial or
/// animated weight) has no key form.
pub const LAYERS_BLENDED: Why =
    "animation layers blended (FBX AnimationLayer weights or several layers)";

/// Why a part driven by more than one channel is resampled: the evaluator applies them in
/// turn, so the last one wins at each time, which one source track does not say.
pub const SEVERAL_CHANNELS: Why = "several channels drive it";

/// One of a node's transform parts, in the order of [`crate::anim::LayerBlend::transform_part`]
/// (0 translation, 1 rotation, 2 scale).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// Local translation ([`ChannelTarget::Translation`], [`ChannelTarget::TranslationXyz`]).
    Translation,
    /// Local rotation ([`ChannelTarget::Rotation`], any [`RotationTrack`]).
    Rotation,
    /// Local scale ([`ChannelTarget::Scale`], [`ChannelTarget::ScaleXyz`]).
    Scale,
}

impl Part {
    /// 0, 1 or 2, as [`crate::anim::LayerBlend::transform_part`] numbers the parts.
    pub fn index(self) -> usize {
        match self {
            Part::Translation => 0,
            Part::Rotation => 1,
            Part::Scale => 2,
        }
    }

    /// Whether `target` is a channel of this part with its own keys (a layered channel is
    /// not: see [`part_channel`]).
    pub fn is_driven_by(self, target: &ChannelTarget) -> bool {
        matches!(
            (self, target),
            (Part::Translation, ChannelTarget::Translation(_) | ChannelTarget::TranslationXyz(_))
                | (Part::Rotation, ChannelTarget::Rotation(_))
                | (Part::Scale, ChannelTarget::Scale(_) | ChannelTarget::ScaleXyz(_))
        )
    }
}

/// The one channel among a node's `channels` that drives `part`: `Ok(None)` when none does
/// (the part holds its rest value), `Err` when the part has no single source curve — a
/// layered channel blends it ([`LAYERS_BLENDED`]) or several channels drive it
/// ([`SEVERAL_CHANNELS`]) — and must be resampled.
pub fn part_channel<'c>(
    channels: &[&'c ChannelTarget],
    part: Part,
) -> Result<Option<&'c ChannelTarget>, Why> {
    let mut found = None;
    for &c in channels {
        if let ChannelTarget::Layered(b) = c {
            if b.transform_part() == Some(part.index()) {
                return Err(LAYERS_BLENDED);
            }
        }
        if part.is_driven_by(c) {
            if found.is_some() {
                return Err(SEVERAL_CHANNELS);
            }
            found = Some(c);
        }
    }
    Ok(found)
}

/// Per scene node: is its local matrix `T·R·S` of its own parts, in every animation whose
/// channels are given? Yes when it has no FBX pivots or pre/post rotation, no channel among
/// `channels` animates them ([`ChannelTarget::drives_pivots`]), and it is a root or has
/// inherit type `RSrs` (the other inherit types take the parent's scale component-wise, which
/// no child part holds). Such a node's parts are the source's, so a writer can keep its keys.
///
/// The glTF writer passes every animation's channels (its rest pose is shared by all of
/// them); the 3DA writer writes one animation and also accepts a node whose ancestors all have
/// scale 1 throughout it.
pub fn own_trs_nodes<'a>(
    scene: &Scene,
    channels: impl IntoIterator<Item = &'a Channel>,
) -> Vec<bool> {
    let mut own: Vec<bool> = scene
        .nodes
        .iter()
        .map(|n| n.pivots.is_none() && (n.parent.is_none() || n.inherit == InheritType::RSrs))
        .collect();
    for c in channels {
        if c.target.drives_pivots() {
            if let Some(d) = own.get_mut(c.node) {
                *d = false;
            }
        }
    }
    own
}

/// The first written frame for an animation whose frame range starts at `first`: `first`,
/// but not before 0 (frames before 0 are not written), and 0 when `first` is not finite.
pub fn first_frame(first: f64) -> f64 {
    if first.is_finite() {
        first.max(0.0)
    } else {
        0.0
    }
}

/// The written frames `(start, end)` of an animation with frame range `frame_range` and the
/// key frames `keys` ([`key_frames`] of its channels): from [`first_frame`] to the range's end
/// or the last key, whichever is later (never before `start`). A non-finite range end counts
/// as `start`. Keys past the range's end are written rather than cut, so no source key is lost.
pub fn written_range(frame_range: (f64, f64), keys: &[Vec<f64>]) -> (f64, f64) {
    let start = first_frame(frame_range.0);
    let last_key = keys.iter().filter_map(|k| k.last().copied()).fold(f64::NEG_INFINITY, f64::max);
    let end = if frame_range.1.is_finite() { frame_range.1 } else { start };
    (start, end.max(last_key).max(start))
}

/// The key frames of a channel's tracks, one list per track in key order (a channel animated
/// per component has up to three; a layered one one per curve and weight); non-finite frames
/// are left out.
pub fn key_frames(target: &ChannelTarget) -> Vec<Vec<f64>> {
    fn frames<T>(t: &Track<T>) -> Vec<f64> {
        t.keys.iter().map(|k| k.frame).filter(|f| f.is_finite()).collect()
    }
    fn each(tracks: &[Option<Track<f64>>; 3]) -> Vec<Vec<f64>> {
        tracks.iter().flatten().map(frames).collect()
    }
    match target {
        ChannelTarget::Translation(t) | ChannelTarget::Scale(t) | ChannelTarget::Color(t) => {
            vec![frames(t)]
        }
        ChannelTarget::Rotation(RotationTrack::Quat(t)) => vec![frames(t)],
        ChannelTarget::Rotation(RotationTrack::Relative(t)) => vec![frames(t)],
        ChannelTarget::Rotation(RotationTrack::Euler { xyz, .. }) => each(xyz),
        ChannelTarget::TranslationXyz(c) | ChannelTarget::ScaleXyz(c) => each(c),
        ChannelTarget::Hidden(t) => vec![frames(t)],
        ChannelTarget::Morph(t) => vec![frames(t)],
        ChannelTarget::Fov(t)
        | ChannelTarget::Roll(t)
        | ChannelTarget::Hotspot(t)
        | ChannelTarget::Falloff(t) => {
            vec![frames(t)]
        }
        ChannelTarget::Property { track, .. } => vec![frames(track)],
        ChannelTarget::Layered(b) => b.tracks().map(frames).collect(),
    }
}

/// Most samples of one resampling grid ([`sample_frames`]): ten million frames, 40 MB of
/// `f32` times per sampled value. Past it the grid stops (the keys are still sampled).
pub const MAX_GRID_SAMPLES: usize = 10_000_000;

/// How far before a jump (two keys on one frame) an extra sample is taken, as a fraction of
/// the sampling step.
pub const JUMP_LEAD: f64 = 1e-3;

/// How close to a key (or the first or last written frame) a grid sample may be, as a
/// fraction of the sampling step, before it is left out: closer than this the pair adds
/// nothing to the curve (the segment between them is shorter than any frame a player shows)
/// and only crowds the key. Far below [`JUMP_LEAD`], so the sample before a jump stays.
pub const SAMPLE_MERGE: f64 = 1e-4;

/// The frames at which a time-based writer (glTF) resamples, sorted (equal frames possible).
///
/// - an even grid `anchor + k·step` over `range = (start, end)` (`start` included, `end`
///   excluded, at most [`MAX_GRID_SAMPLES`]); `anchor` is the animation's first frame, so keys
///   before frame 0 keep their phase on the grid;
/// - `start`, `end` and every key in `keys` within the range, so linear curves come out exact;
///   a grid sample closer than [`SAMPLE_MERGE`] steps to one of them is left out;
/// - where two keys of a track share a frame (a jump), the frame [`JUMP_LEAD`] steps before
///   it, so the linear segment leading to the jump stays on the curve.
pub fn sample_frames(range: (f64, f64), anchor: f64, step: f64, keys: &[Vec<f64>]) -> Vec<f64> {
    let (start, end) = range;
    let mut grid = Vec::new();
    let mut k = ((start - anchor) / step).ceil().max(0.0) as u64;
    loop {
        let f = anchor + k as f64 * step;
        if f >= end - 1e-9 * step || grid.len() >= MAX_GRID_SAMPLES {
            break;
        }
        grid.push(f);
        k += 1;
    }
    let mut frames = vec![start, end];
    for k in keys {
        frames.extend(k.iter().copied().filter(|&f| f >= start && f <= end));
    }
    frames.sort_by(f64::total_cmp);
    let merge = SAMPLE_MERGE * step;
    // The key frames (no NaN) and the grid, both in order: the key at or after each grid
    // sample is found by walking, not searching (the same index: `k < f` holds on a prefix).
    let walk = frames.iter().all(|k| !k.is_nan()) && grid.is_sorted_by(|a, b| a < b);
    let mut i = 0;
    grid.retain(|&f| {
        if walk {
            while frames.get(i).is_some_and(|&k| k < f) {
                i += 1;
            }
        } else {
            i = frames.partition_point(|&k| k < f);
        }
        let near = |j: usize| frames.get(j).is_some_and(|&k| k != f && (k - f).abs() < merge);
        !(near(i) || (i > 0 && near(i - 1)))
    });
    let before = JUMP_LEAD * step;
    let mut leads = Vec::new();
    for k in keys {
        for w in k.windows(2).filter(|w| w[0] == w[1]) {
            if w[0] - before > start && w[0] <= end {
                leads.push(w[0] - before);
            }
        }
    }
    leads.sort_by(f64::total_cmp);
    // Three runs in `total_cmp` order merged: the order one sort of them all gives (frames
    // equal by `total_cmp` have the same bits).
    let frames = merge_sorted(&frames, &leads);
    if grid.is_sorted_by(|a, b| a.total_cmp(b).is_le()) {
        merge_sorted(&frames, &grid)
    } else {
        let mut all = frames;
        all.extend(grid);
        all.sort_by(f64::total_cmp);
        all
    }
}

/// Two slices in `total_cmp` order merged into one in that order.
fn merge_sorted(a: &[f64], b: &[f64]) -> Vec<f64> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if b[j].total_cmp(&a[i]).is_lt() {
            out.push(b[j]);
            j += 1;
        } else {
            out.push(a[i]);
            i += 1;
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

/// Most (entity, frame) samples one frame-based export (3DA) resamples. A range whose every
/// frame would pass it is sampled at the source's key frames and an even grid instead
/// ([`resample_frames`]), so no input makes the writer allocate more than a few hundred MB for
/// resampled tracks (each sample is a local transform of 80 bytes while it is built and a key
/// of 16–20 bytes per track in the file).
pub const RESAMPLE_BUDGET: usize = 1 << 21;

/// The integer frames at which `entities` entities are resampled over `lo..=hi`, and whether
/// that is every integer frame. Every frame when `entities × frames` stays within
/// [`RESAMPLE_BUDGET`]; else at most `RESAMPLE_BUDGET / entities` frames (at least 2): the
/// source keys' frames inside the range (`key_frames`, output frames, rounded; evenly thinned
/// to half that count when there are more) and an even grid over the range with both ends.
pub fn resample_frames(
    lo: i64,
    hi: i64,
    entities: usize,
    key_frames: impl Iterator<Item = f64>,
) -> (Vec<i64>, bool) {
    let span = (hi - lo).max(0) as u64 + 1;
    let per = (RESAMPLE_BUDGET / entities.max(1)).max(2);
    if span <= per as u64 {
        return ((lo..=hi).collect(), true);
    }
    let mut keys: Vec<i64> = key_frames
        .map(f64::round)
        .filter(|f| (lo as f64..=hi as f64).contains(f))
        .map(|f| f as i64)
        .collect();
    keys.sort_unstable();
    keys.dedup();
    let key_cap = per / 2;
    if keys.len() > key_cap {
        let n = keys.len();
        keys = (0..key_cap).map(|i| keys[i * n / key_cap]).collect();
    }
    let grid = (per - keys.len()).max(2);
    // The grid rises with `i` and `keys` is sorted: the stable sort finds the two runs and
    // merges them in one pass (an unstable sort of up to RESAMPLE_BUDGET frames cost 12 % of
    // a budget-bound 3DA export).
    let mut out: Vec<i64> = (0..grid)
        .map(|i| lo + ((i as u128 * (span - 1) as u128) / (grid - 1) as u128) as i64)
        .chain(keys)
        .collect();
    out.sort();
    out.dedup();
    (out, false)
}

#[cfg(test)]
mod tests {
    use glam::DVec3;

    use super::*;
    use crate::anim::{Interpolation, Key, LayerBlend, LayeredValue};
    use crate::scene::{Node, NodeKind, Pivots};

    fn key<T>(value: T) -> Key<T> {
        Key { frame: 0.0, value, interpolation: Interpolation::Linear }
    }

    fn translation() -> ChannelTarget {
        ChannelTarget::Translation(Track::new(vec![key(DVec3::ZERO)]))
    }

    fn layered(value: LayeredValue) -> ChannelTarget {
        ChannelTarget::Layered(Box::new(LayerBlend { value, rest: DVec3::ZERO, layers: vec![] }))
    }

    #[test]
    fn a_part_keeps_keys_only_from_its_one_unlayered_channel() {
        let (t, s) = (translation(), layered(LayeredValue::Scale));
        let one = [&t, &s];
        assert!(matches!(
            part_channel(&one, Part::Translation),
            Ok(Some(ChannelTarget::Translation(_)))
        ));
        assert!(matches!(part_channel(&one, Part::Rotation), Ok(None)));
        assert_eq!(part_channel(&one, Part::Scale).err(), Some(LAYERS_BLENDED));
        let t2 = translation();
        assert_eq!(part_channel(&[&t, &t2], Part::Translation).err(), Some(SEVERAL_CHANNELS));
    }

    #[test]
    fn own_parts_need_no_pivots_and_a_root_or_rsrs_inheritance() {
        let mut s = Scene::default();
        for i in 0..5 {
            s.nodes.push(Node::new(format!("n{i}"), NodeKind::Null));
        }
        s.attach(1, Some(0));
        s.attach(2, Some(0));
        s.attach(3, Some(0));
        s.attach(4, None);
        s.nodes[2].inherit = InheritType::Rrs;
        s.nodes[3].pivots = Some(Box::new(Pivots::default()));
        let pivot = Channel {
            node: 4,
            target: ChannelTarget::Property {
                name: "RotationPivot|X".into(),
                track: Track::new(vec![key(1.0)]),
            },
        };
        assert_eq!(own_trs_nodes(&s, []), [true, true, false, false, true]);
        assert_eq!(own_trs_nodes(&s, [&pivot]), [true, true, false, false, false]);
    }

    #[test]
    fn the_written_range_starts_at_zero_at_the_earliest_and_reaches_the_last_key() {
        assert_eq!(first_frame(-5.0), 0.0);
        assert_eq!(first_frame(3.5), 3.5);
        assert_eq!(first_frame(f64::NAN), 0.0);
        assert_eq!(first_frame(f64::NEG_INFINITY), 0.0);
        assert_eq!(written_range((-2.0, 10.0), &[vec![0.0, 12.0]]), (0.0, 12.0));
        assert_eq!(written_range((0.0, 10.0), &[vec![3.0], vec![]]), (0.0, 10.0));
        assert_eq!(written_range((5.0, f64::NAN), &[]), (5.0, 5.0));
        assert_eq!(written_range((8.0, 4.0), &[]), (8.0, 8.0));
    }

    #[test]
    fn samples_take_every_key_skip_grid_points_crowding_one_and_lead_each_jump() {
        // Grid 0, 0.5, 1, 1.5 (2 is the end); 1 is 1e-5 from the key at 0.99999, under
        // SAMPLE_MERGE × 0.5 = 5e-5, so it goes; the jump at 1.5 gets 1.5 − JUMP_LEAD × 0.5.
        let f = sample_frames((0.0, 2.0), 0.0, 0.5, &[vec![0.99999, 1.5, 1.5]]);
        let want = [0.0, 0.0, 0.5, 0.99999, 1.4995, 1.5, 1.5, 1.5, 2.0];
        assert_eq!(f.len(), want.len(), "{f:?}");
        assert!(f.iter().zip(want).all(|(a, b)| (a - b).abs() < 1e-12), "{f:?}");
        // The grid keeps the phase of a first frame before 0: anchor −0.25, step 0.5.
        assert_eq!(sample_frames((0.0, 1.0), -0.25, 0.5, &[]), [0.0, 0.25, 0.75, 1.0]);
    }

    #[test]
    fn resampling_takes_every_frame_within_the_budget_else_keys_and_an_even_grid() {
        let (f, every) = resample_frames(0, 9, 1, std::iter::empty());
        assert_eq!((f, every), ((0..=9).collect(), true));
        // 4 frames per entity: keys 3 (3.2 and 3.4 rounded) and 8 (7.6), the key at 20 out of
        // range, and a grid of the remaining 2: both ends.
        let keys = [3.2, 3.4, 7.6, 20.0].into_iter();
        let (f, every) = resample_frames(0, 9, RESAMPLE_BUDGET / 4, keys);
        assert_eq!((f, every), (vec![0, 3, 8, 9], false));
    }

    #[test]
    fn long_ranges_are_resampled_at_keys_and_a_bounded_grid() {
        let (f, every) = resample_frames(0, 10, 3, std::iter::empty());
        assert!(every && f.len() == 11);
        let (f, every) = resample_frames(0, 10_000_000, 1, [5.0, 7_777_777.0].into_iter());
        assert!(!every);
        assert!(f.len() <= RESAMPLE_BUDGET);
        assert_eq!((f[0], *f.last().unwrap()), (0, 10_000_000));
        assert!(f.contains(&5) && f.contains(&7_777_777));
        // Keys on grid points, at the ends and repeated: each frame once, rising.
        let keys = [0.0, 10_000_000.0, 5.0, 5.2, 7_777_777.0, 4_999_997.6].into_iter();
        let (f, _) = resample_frames(0, 10_000_000, 1, keys);
        assert!(f.windows(2).all(|w| w[0] < w[1]));
        assert!([0, 5, 4_999_998, 7_777_777, 10_000_000].iter().all(|k| f.contains(k)));
    }
}

//! Entity tracks (docs/3da.md, "Exporter", Tracks): the written frame range, and per entity
//! which of position, rotation and scale keep the source's keys (through [`super::keyed`]
//! and `three_da::keys`) and which are resampled ([`super::resample`]) and why.

use glam::{DMat3, DQuat, DVec3};

use super::keyed::{describe_vec, keyed_rot_track, keyed_vec_track, turn_rot, turn_vec};
use super::{f3, Context, EntityTracks, ExportReport, TrackSource};
use crate::anim::{Animation, ChannelTarget, Interpolation, RotationTrack, Track};
use crate::formats::three_da::keys;
use crate::formats::three_da::layout::{self, LinearKey};
use crate::formats::three_da::model::{Entity, KeyTrack, RotTrack, VecTrack};
use crate::quoting::quoted;
use crate::scene::{NodeId, Scene};

/// The written frames: `lo..=hi` output frames and the scale from source frames.
pub(super) struct Frames {
    pub lo: i64,
    pub hi: i64,
    pub range: keys::Range,
}

/// The output frames of `anim` at `fps` (`None`: the animation's own rate; without an
/// animation frame 0 only), with warnings for frames that cannot be written (before 0, past
/// `i32::MAX - 1`) and for a rate other than the 30 fps 3DA readers play.
pub(super) fn frames(
    anim: Option<&Animation>,
    fps: Option<f64>,
    report: &mut ExportReport,
) -> Frames {
    // Output frames per source frame.
    let rate = match (anim, fps) {
        (Some(a), Some(fps)) if a.fps > 0.0 && fps > 0.0 && fps.is_finite() => fps / a.fps,
        _ => 1.0,
    };
    // Key frames are `int`: the last written frame stays below i32::MAX.
    let last_frame = i64::from(i32::MAX) - 1;
    let (lo, hi) = match anim {
        Some(a) => {
            let (a0, a1) = (a.frame_range.0 * rate, a.frame_range.1 * rate);
            let lo = if a0.is_finite() { (a0.floor().max(0.0) as i64).min(last_frame) } else { 0 };
            let hi = if a1.is_nan() { lo } else { (a1.ceil() as i64).clamp(lo, last_frame) };
            if a1.ceil() > last_frame as f64 {
                report.warnings.push(format!(
                    "animation ends at frame {a1}; frames after {last_frame} are not written"
                ));
            }
            (lo, hi)
        }
        None => (0, 0),
    };
    if let Some(a) = anim.filter(|a| !a.channels.is_empty()) {
        // A 3DA file stores no rate: its readers (the seed's engine, Play3da) play key frames
        // at 30 per second, so keys written at any other rate play too fast or too slow.
        let written = fps.filter(|f| *f > 0.0 && f.is_finite()).unwrap_or(a.fps);
        if (written - 30.0).abs() > 1e-9 {
            report.warnings.push(format!(
                "key frames are written at {written} fps, but 3DA readers play 30 fps \
                 ({}× the source speed): convert with --fps 30 (ExportOptions::fps) to keep \
                 the timing",
                30.0 / written
            ));
        }
    }
    if let Some(a) = anim {
        if a.frame_range.0 < 0.0 {
            report.warnings.push(format!(
                "animation starts at frame {}; frames before 0 are not written",
                a.frame_range.0
            ));
        }
    }
    Frames { lo, hi, range: keys::Range { rate, lo: lo as f64, hi: hi as f64 } }
}

/// A track the exporter wrote, with where its keys came from.
enum Written {
    Vec(VecTrack),
    Rot(RotTrack),
}

/// One of an entity's position, rotation and scale: kept (the track and its source), or why
/// it is resampled.
type Planned = Result<(Written, TrackSource), String>;

/// An entity with tracks to resample.
pub(super) struct Need {
    /// Its kept slot.
    pub k: usize,
    /// Its node.
    pub id: NodeId,
    /// Local matrix from the posed world matrices (`world(parent)⁻¹ · world`, decomposed);
    /// else the node's own T, R, S (turned by `turn` for a root under an axis conversion).
    pub world: bool,
    /// The root's axis conversion as a turn.
    pub turn: Option<DQuat>,
    /// Position, rotation, scale: why each is resampled (`None`: kept).
    pub why: [Option<String>; 3],
}

/// Per scene node: whether `anim` animates its pivots or pre/post rotation (such nodes are
/// baked like static pivots).
pub(super) fn pivots_animated(scene: &Scene, anim: Option<&Animation>) -> Vec<bool> {
    let mut out = vec![false; scene.nodes.len()];
    for c in anim.iter().flat_map(|a| &a.channels).filter(|c| c.target.drives_pivots()) {
        if let Some(p) = out.get_mut(c.node) {
            *p = true;
        }
    }
    out
}

/// The tracks of the entity in slot `k`, written into `e`: the local T/R/S relative to the
/// kept parent. Where the node's local matrix is its own T·R·S under its written parent
/// (turned by the axis conversion for a root), its curves are kept as they are
/// ([`keep_tracks`]); else, and for parts without a 3DA form, the returned [`Need`] asks for
/// them to be resampled.
pub(super) fn plan(
    cx: &Context,
    k: usize,
    pivots_animated: &[bool],
    ancestors_unscaled: &[bool],
    e: &mut Entity,
    report: &mut ExportReport,
) -> (EntityTracks, Option<Need>) {
    let (id, name) = (cx.ents.nodes[k], &cx.ents.names[k]);
    let why_not = why_not_kept(cx, k, pivots_animated, ancestors_unscaled, report);
    // A root under an axis conversion takes `to_file · local`.
    let converted_root = cx.space.convert && cx.ents.parents[k].is_none();
    let root_turn = if converted_root { cx.space.turn } else { None };
    let planned: [Planned; 3] = match why_not {
        Some(why) => [0, 1, 2].map(|_| Err(why.to_string())),
        None => keep_tracks(cx, id, root_turn, name, report),
    };
    let mut sources = [TrackSource::Rest, TrackSource::Rest, TrackSource::Rest];
    let mut need =
        Need { k, id, world: why_not.is_some(), turn: root_turn, why: [None, None, None] };
    for (part, p) in planned.into_iter().enumerate() {
        match p {
            Ok((Written::Vec(t), src)) if part == 0 => (e.position, sources[0]) = (Some(t), src),
            Ok((Written::Vec(t), src)) => (e.scale, sources[2]) = (Some(t), src),
            Ok((Written::Rot(t), src)) => (e.rotation, sources[1]) = (Some(t), src),
            Err(why) => need.why[part] = Some(why),
        }
    }
    let [position, rotation, scale] = sources;
    let tracks = EntityTracks { name: name.clone(), node: id, position, rotation, scale };
    (tracks, need.why.iter().any(Option::is_some).then_some(need))
}

/// Why no track of slot `k` can keep the node's keys (its 3DA local is not its own T·R·S),
/// reporting what is baked into its tracks; `None` when they can.
fn why_not_kept(
    cx: &Context,
    k: usize,
    pivots_animated: &[bool],
    ancestors_unscaled: &[bool],
    report: &mut ExportReport,
) -> Option<&'static str> {
    let (scene, id, name) = (cx.scene, cx.ents.nodes[k], &cx.ents.names[k]);
    let node_ref = &scene.nodes[id];
    let parent_kept = node_ref.parent.map(|p| cx.ents.slot_of.contains_key(&p)).unwrap_or(true);
    // The inherit types other than RSrs apply the parent's scale component-wise; with
    // every ancestor's scale 1 at all times they are the plain product too.
    let plain = node_ref.pivots.is_none()
        && !pivots_animated[id]
        && (node_ref.parent.is_none()
            || node_ref.inherit == crate::scene::InheritType::RSrs
            || ancestors_unscaled[id]);
    let converted_root = cx.space.convert && cx.ents.parents[k].is_none();
    if !parent_kept {
        report.baked.push(format!(
            "{}: transforms of dropped ancestors baked into its tracks",
            quoted(name)
        ));
    }
    if !plain {
        report.baked.push(format!("{}: pivots / inherit type baked into its tracks", quoted(name)));
    }
    if !parent_kept {
        Some("a dropped ancestor's transform is baked into it")
    } else if !plain {
        Some("FBX pivots, pre/post rotation or inherit type are baked into it")
    } else if converted_root && cx.space.turn.is_none() {
        Some("the root's axis conversion mirrors or scales")
    } else {
        None
    }
}

/// One line per entity (file order) with kept tracks in [`ExportReport::kept`].
pub(super) fn report_kept(tracks: &[Option<EntityTracks>], report: &mut ExportReport) {
    for (f, t) in tracks.iter().enumerate() {
        let Some(t) = t else { continue };
        let kept: Vec<String> =
            [("position", &t.position), ("rotation", &t.rotation), ("scale", &t.scale)]
                .iter()
                .filter_map(|(part, s)| match s {
                    TrackSource::Kept(d) => Some(format!("{part} {d}")),
                    _ => None,
                })
                .collect();
        if !kept.is_empty() {
            report.kept.push(format!("{} (entity {f}): {}", quoted(&t.name), kept.join("; ")));
        }
    }
}

/// Per scene node: whether every ancestor has scale 1 at every time (rest scale exactly 1
/// and any scale curve constant 1: every key 1 with zero slopes). One pass over the channels
/// and one over the nodes, parents first (walking each node's ancestors and the channels per
/// ancestor was quadratic in a chain's depth: 78 % of a 10,000-node chain's export). A node
/// no root reaches (a scene that fails validation) counts as scaled.
pub(super) fn ancestors_unscaled(scene: &Scene, anim: Option<&Animation>) -> Vec<bool> {
    let one = |t: &Track<f64>| {
        crate::anim::hermite::hermite_keys(t).is_some_and(|k| {
            k.iter().all(|k| k.value == 1.0 && k.in_slope == 0.0 && k.out_slope == 0.0)
        })
    };
    // Whether the node itself has scale 1 at every time.
    let mut unit: Vec<bool> = scene.nodes.iter().map(|n| n.transform.scale == DVec3::ONE).collect();
    for ch in anim.iter().flat_map(|a| &a.channels) {
        let Some(u) = unit.get_mut(ch.node) else { continue };
        let this = match &ch.target {
            ChannelTarget::Scale(t) => {
                t.keys.iter().all(|k| k.value == DVec3::ONE)
                    && t.keys.iter().all(|k| {
                        matches!(k.interpolation, Interpolation::Linear | Interpolation::Step)
                    })
            }
            ChannelTarget::ScaleXyz(c) => c.iter().flatten().all(one),
            ChannelTarget::Layered(b) => b.transform_part() != Some(2),
            _ => true,
        };
        *u &= this;
    }
    let mut out = vec![false; scene.nodes.len()];
    for id in scene.depth_first() {
        let v = match scene.nodes[id].parent {
            None => true,
            Some(p) => {
                unit.get(p).copied().unwrap_or(false) && out.get(p).copied().unwrap_or(false)
            }
        };
        if let Some(slot) = out.get_mut(id) {
            *slot = v;
        }
    }
    out
}

/// The position, rotation and scale tracks of a node whose 3DA local is its own T·R·S
/// (turned by `turn` when it is a root under an axis conversion), keeping the source's keys
/// where 3DA can hold them exactly (docs/3da.md, "Exporter", Tracks):
/// - 3DS TCB vector keys → TCB 3D ([`keyed_vec_track`]), relative rotations → TCB 4D and
///   quaternion keys → LINEAR / TCB 4D ([`keyed_rot_track`]);
/// - other vector tracks and FBX per-component curves → LINEAR or BEZIER 3D, FBX Euler curves
///   → EULER (`keys.rs`, through [`crate::anim::hermite`]).
///
/// A part without a curve is one key of the rest value. `Err` says why a part is resampled.
fn keep_tracks(
    cx: &Context,
    id: NodeId,
    turn: Option<DQuat>,
    name: &str,
    report: &mut ExportReport,
) -> [Planned; 3] {
    let (scene, r) = (cx.scene, cx.frames.range);
    let m = turn.map(DMat3::from_quat);
    let rest = scene.nodes[id].transform;
    let rest_vec =
        |v: DVec3| Ok((Written::Vec(VecTrack::Linear(one_key(f3(v)))), TrackSource::Rest));
    let rest_rot = (turn.unwrap_or(DQuat::IDENTITY) * rest.rotation).normalize();
    let mut out: [Planned; 3] = [
        rest_vec(m.unwrap_or(DMat3::IDENTITY) * rest.translation),
        Ok((
            Written::Rot(RotTrack::Linear(one_key(rest_rot.as_quat().to_array()))),
            TrackSource::Rest,
        )),
        rest_vec(rest.scale),
    ];
    for &target in cx.node_channels(id) {
        match target {
            ChannelTarget::Translation(t) => {
                if let Some(p) = whole_vector(t, r, m) {
                    out[0] = p;
                }
            }
            ChannelTarget::Scale(t) => {
                if let Some(p) = whole_vector(t, r, None) {
                    out[2] = p;
                }
            }
            ChannelTarget::TranslationXyz(c) => {
                out[0] = kept_vec(keys::vector_xyz(c, rest.translation, r, m));
            }
            ChannelTarget::ScaleXyz(c) => {
                out[2] = kept_vec(keys::vector_xyz(c, rest.scale, r, None))
            }
            ChannelTarget::Rotation(RotationTrack::Euler { order, rest, xyz }) => {
                out[1] = keys::euler(*order, *rest, xyz, r, turn)
                    .map(|(t, d)| (Written::Rot(t), TrackSource::Kept(d)))
                    .map_err(String::from);
            }
            ChannelTarget::Rotation(rt) if rt.key_count() > 0 => {
                out[1] = quaternion(rt, r, turn);
            }
            ChannelTarget::Rotation(_) => {}
            ChannelTarget::Layered(b) => match b.transform_part() {
                Some(part) => out[part] = Err(crate::anim::keep::LAYERS_BLENDED.into()),
                None => report.dropped.push(format!(
                    "{name}: {} track",
                    target.name(),
                    name = quoted(&name)
                )),
            },
            other => {
                report.dropped.push(format!("{name}: {} track", other.name(), name = quoted(&name)))
            }
        }
    }
    out
}

/// A vector track from `three_da::keys`: kept in 3DA's form, or why not.
fn kept_vec(t: Result<(VecTrack, String), keys::Why>) -> Planned {
    t.map(|(t, d)| (Written::Vec(t), TrackSource::Kept(d))).map_err(String::from)
}

/// A whole-vector track (turned by `m`): TCB keys as TCB 3D ([`keyed_vec_track`]), anything
/// else through the Hermite form (`keys::vector`). `None` when it has no keys.
fn whole_vector(t: &Track<DVec3>, r: keys::Range, m: Option<DMat3>) -> Option<Planned> {
    if t.keys.is_empty() {
        return None;
    }
    if t.keys.iter().any(|k| matches!(k.interpolation, Interpolation::Tcb(_))) {
        return Some(match keyed_vec_track(t, r.rate, r.lo, r.hi) {
            Some(v) => {
                let v = match m {
                    Some(m) => turn_vec(v, m),
                    None => v,
                };
                let d = describe_vec(&v);
                Ok((Written::Vec(v), TrackSource::Kept(d)))
            }
            None => Err(
                "TCB keys with step or Bézier keys, jumps, end rules or key frames 3DA cannot hold"
                    .into(),
            ),
        });
    }
    Some(kept_vec(keys::vector(t, r, m)))
}

/// A keyed quaternion or relative rotation track (turned by `turn`) as LINEAR / TCB 4D
/// ([`keyed_rot_track`]), or why not.
fn quaternion(rt: &RotationTrack, r: keys::Range, turn: Option<DQuat>) -> Planned {
    keyed_rot_track(rt, r.rate, r.lo, r.hi)
        .and_then(|t| match turn {
            Some(q) => turn_rot(t, q),
            None => Some(t),
        })
        .map(|t| {
            let d = match &t {
                RotTrack::Tcb(k) => format!("TCB 4D, {} keys", k.keys.len()),
                RotTrack::Linear(k) => format!("LINEAR 4D, {} keys", k.keys.len()),
                RotTrack::Euler(_) => "EULER".into(),
            };
            (Written::Rot(t), TrackSource::Kept(d))
        })
        .ok_or_else(|| {
            "rotation keys 3DA cannot hold (step or Bézier keys, jumps, end rules or key frames off integers)".into()
        })
}

/// A LINEAR track of one key at frame 0.
fn one_key<V: layout::Value>(value: V) -> KeyTrack<LinearKey<V>> {
    KeyTrack { current: value, keys: vec![LinearKey { frame: 0, value }] }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{animated_null, scalar};
    use super::super::{export, Axes, ExportOptions};
    use super::*;
    use crate::anim::Tcb;
    use crate::formats::three_da::File;
    use crate::scene::{AxisSystem, Node, NodeKind};

    #[test]
    fn fps_option_rescales_key_frames_and_keeps_the_curve() {
        use crate::anim::{Animation, Channel, Key};
        let mut s = Scene::default();
        s.meta.axes = AxisSystem::Z_UP_RIGHT_HANDED;
        s.nodes.push(Node::new("n", NodeKind::Null));
        s.attach(0, None);
        let key = |frame: f64, x: f64| Key {
            frame,
            value: DVec3::new(x, 0.0, 0.0),
            interpolation: Interpolation::Tcb(Tcb::default()),
        };
        let track = Track::new(vec![key(0.0, 0.0), key(10.0, 4.0), key(30.0, 1.0)]);
        s.animations.push(Animation {
            name: String::new(),
            fps: 30.0,
            frame_range: (0.0, 30.0),
            channels: vec![Channel { node: 0, target: ChannelTarget::Translation(track.clone()) }],
        });
        let opts = ExportOptions { fps: Some(60.0), ..ExportOptions::default() };
        let (file, _, report) = export(&s, &opts).unwrap();
        assert!(report.resampled.is_empty(), "{:?}", report.resampled);
        let pos = file.entities[0].position.as_ref().unwrap();
        assert_eq!(pos.frames(), vec![0, 20, 60]);
        assert_eq!(file.frames, 61);
        for f in [3.0, 10.0, 17.5, 29.0] {
            let ours = pos.sample(f * 2.0).unwrap();
            assert!((ours - track.sample(f).unwrap()).length() < 1e-5, "frame {f}");
        }
    }

    #[test]
    fn y_up_sources_are_turned_into_max_axes_at_the_root() {
        // A Y-up, +Z-front scene (glTF's): up (0, 1, 0) becomes Max's up (0, 0, 1) and the
        // front (0, 0, 1) Max's front (0, −1, 0); the child's local track is unchanged.
        let mut s = Scene::default();
        s.meta.axes = AxisSystem::Y_UP_RIGHT_HANDED;
        for name in ["root", "child"] {
            let id = s.nodes.len();
            s.nodes.push(Node::new(name, NodeKind::Null));
            s.attach(id, (id == 1).then_some(0));
        }
        s.nodes[0].transform.translation = DVec3::new(0.0, 2.0, 3.0);
        s.nodes[1].transform.translation = DVec3::new(0.0, 1.0, 0.0);
        let pos =
            |f: &File, i: usize| f.entities[i].position.as_ref().unwrap().sample(0.0).unwrap();
        let (max, _, report) = export(&s, &ExportOptions::default()).unwrap();
        assert!(pos(&max, 0).abs_diff_eq(DVec3::new(0.0, -3.0, 2.0), 1e-12), "{:?}", pos(&max, 0));
        assert!(pos(&max, 1).abs_diff_eq(DVec3::new(0.0, 1.0, 0.0), 1e-12));
        assert!(report.baked.iter().any(|b| b.starts_with("axes:")));
        let opts = ExportOptions { axes: Axes::Source, ..ExportOptions::default() };
        let (src, _, _) = export(&s, &opts).unwrap();
        assert!(pos(&src, 0).abs_diff_eq(DVec3::new(0.0, 2.0, 3.0), 1e-12));
    }

    #[test]
    fn fbx_curves_keep_their_keys_and_the_report_says_which() {
        use crate::scene::EulerOrder;
        let cubic = Interpolation::Bezier {
            in_slope: 0.0,
            in_weight: 1.0 / 3.0,
            out_slope: 0.0,
            out_weight: 1.0 / 3.0,
        };
        let x = scalar(&[(0.0, 0.0), (10.0, 4.0)], cubic);
        let z = scalar(&[(0.0, 0.0), (10.0, 1.0)], Interpolation::Linear);
        let channels = || {
            vec![
                ChannelTarget::TranslationXyz([Some(x.clone()), None, None]),
                ChannelTarget::Rotation(RotationTrack::Euler {
                    order: EulerOrder::Xyz,
                    rest: DVec3::ZERO,
                    xyz: [None, None, Some(z.clone())],
                }),
            ]
        };
        let s = animated_null(AxisSystem::Z_UP_RIGHT_HANDED, (0.0, 10.0), channels());
        let (file, _, report) = export(&s, &ExportOptions::default()).unwrap();
        let t = &report.tracks[0];
        assert!(matches!(&t.position, TrackSource::Kept(d) if d.starts_with("BEZIER 3D")));
        assert!(matches!(&t.rotation, TrackSource::Kept(d) if d.starts_with("EULER")));
        assert_eq!(t.scale, TrackSource::Rest);
        assert!(report.resampled_entities.is_empty());
        // Between keys: the Hermite with zero end slopes at u = 1/4 is 4·(3u² − 2u³) = 0.625;
        // the linear Z angle at frame 2.5 is 0.25 rad.
        let e = &file.entities[0];
        let p = e.position.as_ref().unwrap().sample(2.5).unwrap();
        assert!((p.x - 0.625).abs() < 1e-6, "{p}");
        let q = e.rotation.as_ref().unwrap().sample(2.5).unwrap();
        assert!(q.dot(DQuat::from_rotation_z(0.25)).abs() > 1.0 - 1e-12, "{q:?}");
        // A Y-up root: the turn (+90° about X) is not about XYZ's outermost axis (Z), so its
        // rotation is resampled and says why; the translation keys are turned and kept.
        let s = animated_null(AxisSystem::Y_UP_RIGHT_HANDED, (0.0, 10.0), channels());
        let (_, _, report) = export(&s, &ExportOptions::default()).unwrap();
        let t = &report.tracks[0];
        assert!(t.position.is_kept());
        assert!(
            matches!(&t.rotation, TrackSource::Resampled { why, every_frame: true } if why.contains("outermost")),
            "{:?}",
            t.rotation
        );
        assert_eq!(report.resampled_entities, vec![0]);
    }
}

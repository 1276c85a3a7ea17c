//! Resampled tracks (docs/3da.md, "Exporter", Tracks): the parts [`plan`](super::tracks::plan)
//! could not keep, sampled from the evaluated scene into LINEAR tracks at every integer frame
//! or, past [`RESAMPLE_BUDGET`], at the source's key frames and an even grid, then thinned
//! ([`resample::thin`]: keys their neighbours' line reproduces to `f32` precision go).

use glam::{DMat4, DQuat, DVec3};

use super::tracks::Need;
use super::{f3, Context, EntityTracks, ExportReport, TrackSource, RESAMPLE_BUDGET};
use crate::anim::resample::{self, Sampled};
use crate::anim::{keep, ChannelTarget, PartialPose, RotationTrack};
use crate::formats::three_da::layout::LinearKey;
use crate::formats::three_da::model::{Entity, KeyTrack, RotTrack, VecTrack};
use crate::quoting::quoted;
use crate::scene::{NodeId, Transform};

/// Resamples the parts `needs` lists (docs/3da.md, "Exporter"): at every integer frame of the
/// range, or, when that would pass [`RESAMPLE_BUDGET`] samples, at the source's key frames
/// and an even grid (warned). Only the resampled entities' local transforms are kept per
/// frame. Fills in the entities' tracks (indexed by file index) and the report.
pub(super) fn resample(
    cx: &Context,
    needs: &[Need],
    entities: &mut [Option<Entity>],
    tracks: &mut [Option<EntityTracks>],
    report: &mut ExportReport,
) {
    if needs.is_empty() {
        return;
    }
    let fr = &cx.frames;
    let rate = fr.range.rate;
    let key_frames: Vec<f64> = cx
        .anim
        .iter()
        .flat_map(|a| &a.channels)
        .flat_map(|c| channel_key_frames(&c.target))
        .map(|f| f * rate)
        .collect();
    // Keys past the animation's range (a 3DS key after KFSEG's end) are written as they are
    // by the keyed tracks: resampled tracks run to the last key too, so what plays there is
    // the same motion (up to the last frame a 3DA key can hold).
    let last_key = key_frames.iter().copied().filter(|f| f.is_finite()).fold(f64::MIN, f64::max);
    let hi = if last_key.ceil() > fr.hi as f64 {
        (last_key.ceil() as i64).min(i64::from(i32::MAX) - 1)
    } else {
        fr.hi
    };
    let (frames, every) =
        crate::anim::keep::resample_frames(fr.lo, hi, needs.len(), key_frames.into_iter());
    if !every {
        report.warnings.push(format!(
            "{} frames × {} resampled entities pass the budget of {RESAMPLE_BUDGET} samples: resampled at {} frames (the source's keys and an even grid), exact there only",
            hi - fr.lo + 1,
            needs.len(),
            frames.len()
        ));
    }
    let locals = sample_locals(cx, needs, &frames);
    for (n, l) in needs.iter().zip(locals) {
        let fi = cx.ents.file_index[n.k];
        let (Some(e), Some(t)) = (entities[fi].as_mut(), tracks[fi].as_mut()) else { continue };
        write_tracks(cx, n, &l, (&frames, every), (e, t), report, fi);
    }
}

/// The local transform of every entity in `needs` at each of `frames` (output frames).
///
/// An entity no channel can move (none on its node or an ancestor:
/// [`crate::scene::Scene::motion`]) holds one value: it is sampled once, at the first frame.
/// Per frame only the moving entities and what they depend on (their nodes, kept parents and
/// ancestors) are posed ([`PartialPose`]), with the values `Scene::evaluate` gives them.
fn sample_locals(cx: &Context, needs: &[Need], frames: &[i64]) -> Vec<Vec<Transform>> {
    let rate = cx.frames.range.rate;
    let to_file = cx.space.convert.then_some(cx.space.to_file);
    let moves = cx.scene.motion(cx.anim_index).unaimed;
    let mut pose = PartialPose::new(cx.scene, cx.anim_index);
    // World matrices in the file's root space.
    let world = |pose: &mut PartialPose, id: NodeId| {
        let w = pose.world(id);
        to_file.map_or(w, |m| m * w)
    };
    let local_of = |n: &Need, pose: &mut PartialPose| {
        if !n.world {
            let mut t = pose.parts(n.id);
            if let Some(q) = n.turn {
                t.translation = q * t.translation;
                t.rotation = q * t.rotation;
            }
            t
        } else {
            let pw =
                cx.ents.parents[n.k].map_or(DMat4::IDENTITY, |p| world(pose, cx.ents.nodes[p]));
            let (s, r, t) = (pw.inverse() * world(pose, n.id)).to_scale_rotation_translation();
            Transform { translation: t, rotation: r, scale: s }
        }
    };
    let mut locals: Vec<Vec<Transform>> =
        needs.iter().map(|_| Vec::with_capacity(frames.len())).collect();
    let moving = |n: &Need| moves.get(n.id).copied().unwrap_or(true);
    if let Some(&f) = frames.first().filter(|_| needs.iter().any(|n| !moving(n))) {
        pose.set_frame(f as f64 / rate);
        for (n, l) in needs.iter().zip(&mut locals).filter(|(n, _)| !moving(n)) {
            l.resize(frames.len(), local_of(n, &mut pose));
        }
    }
    if needs.iter().any(moving) {
        let held: Vec<Vec<(f64, f64)>> = needs.iter().map(|n| held_parts(cx, n)).collect();
        let mut last: Option<f64> = None;
        for &f in frames {
            let at = f as f64 / rate;
            let mut posed = false;
            for ((n, l), held) in
                needs.iter().zip(&mut locals).zip(&held).filter(|p| moving(p.0 .0))
            {
                // Where every channel behind its resampled parts holds from the last frame to
                // this one, the sample is the last one (the same bits, without posing).
                if let (Some(a), Some(&prev)) = (last, l.last()) {
                    if resample::both_held(held, a, at) {
                        l.push(prev);
                        continue;
                    }
                }
                if !posed {
                    pose.set_frame(at);
                    posed = true;
                }
                l.push(local_of(n, &mut pose));
            }
            last = Some(at);
        }
    }
    locals
}

/// The open source-frame intervals where the resampled parts of `n` hold: where every channel
/// on its node driving one of them ([`keep::Part::is_driven_by`], or a layered blend of the
/// part) holds its value ([`resample::held_intervals`]). Empty for an entity whose local comes
/// from the posed world matrices (its ancestors' channels count too): it is posed at every
/// frame.
fn held_parts(cx: &Context, n: &Need) -> Vec<(f64, f64)> {
    if n.world {
        return Vec::new();
    }
    let parts = [keep::Part::Translation, keep::Part::Rotation, keep::Part::Scale];
    let resampled: Vec<keep::Part> =
        parts.into_iter().filter(|p| n.why[p.index()].is_some()).collect();
    let mut held = vec![(f64::NEG_INFINITY, f64::INFINITY)];
    for c in cx.node_channels(n.id) {
        let drives = resampled.iter().any(|p| {
            p.is_driven_by(c)
                || matches!(c, ChannelTarget::Layered(b) if b.transform_part() == Some(p.index()))
        });
        if drives {
            held = resample::intersect_intervals(&held, &resample::held_intervals(c));
        }
    }
    held
}

/// Writes the resampled parts of `n` from its sampled locals `l` into entity `e` (file index
/// `fi`) and its report entry `t`; an entity whose tracks change (or whose node is animated)
/// gets a line in [`ExportReport::resampled`].
fn write_tracks(
    cx: &Context,
    n: &Need,
    l: &[Transform],
    (frames, every): (&[i64], bool),
    (e, t): (&mut Entity, &mut EntityTracks),
    report: &mut ExportReport,
    fi: usize,
) {
    let (lo, hi) = (frames.first().copied().unwrap_or(0), frames.last().copied().unwrap_or(0));
    let mut changing = false;
    let mut lines = Vec::new();
    let source = |why: &str| TrackSource::Resampled { why: why.to_string(), every_frame: every };
    if let Some(why) = &n.why[0] {
        let v = vec_track(frames, l.iter().map(|t| t.translation));
        changing |= v.frames().len() > 1;
        e.position = Some(v);
        t.position = source(why);
        lines.push(("position", why.as_str()));
    }
    if let Some(why) = &n.why[1] {
        let v = rot_track(frames, l.iter().map(|t| t.rotation));
        changing |= v.frames().is_some_and(|f| f.len() > 1);
        e.rotation = Some(v);
        t.rotation = source(why);
        lines.push(("rotation", why.as_str()));
    }
    if let Some(why) = &n.why[2] {
        let v = vec_track(frames, l.iter().map(|t| t.scale));
        changing |= v.frames().len() > 1;
        e.scale = Some(v);
        t.scale = source(why);
        lines.push(("scale", why.as_str()));
    }
    if frames.len() > 1 && (changing || !cx.node_channels(n.id).is_empty()) {
        report.resampled_entities.push(fi);
        let at = if every {
            format!("every frame {lo}..={hi} (exact at integer frames)")
        } else {
            format!("{} frames of {lo}..={hi} (exact at those frames)", frames.len())
        };
        report.resampled.push(format!(
            "{}: {} resampled as LINEAR tracks at {at}",
            quoted(&t.name),
            group_reasons(&lines)
        ));
    }
}

/// `position, rotation (why)`: parts listed with their reason, parts sharing one reason
/// together.
fn group_reasons(parts: &[(&str, &str)]) -> String {
    let mut groups: Vec<(Vec<&str>, &str)> = Vec::new();
    for &(part, why) in parts {
        match groups.iter_mut().find(|g| g.1 == why) {
            Some(g) => g.0.push(part),
            None => groups.push((vec![part], why)),
        }
    }
    groups.iter().map(|(p, why)| format!("{} ({why})", p.join(", "))).collect::<Vec<_>>().join(", ")
}

/// The key frames (source frames) of a channel's tracks.
fn channel_key_frames(t: &ChannelTarget) -> Vec<f64> {
    let frames = |k: &[crate::anim::Key<f64>]| k.iter().map(|k| k.frame).collect::<Vec<_>>();
    match t {
        ChannelTarget::Translation(t) | ChannelTarget::Scale(t) => {
            t.keys.iter().map(|k| k.frame).collect()
        }
        ChannelTarget::TranslationXyz(c)
        | ChannelTarget::ScaleXyz(c)
        | ChannelTarget::Rotation(RotationTrack::Euler { xyz: c, .. }) => {
            c.iter().flatten().flat_map(|t| frames(&t.keys)).collect()
        }
        ChannelTarget::Rotation(RotationTrack::Quat(t)) => t.keys.iter().map(|k| k.frame).collect(),
        ChannelTarget::Rotation(RotationTrack::Relative(t)) => {
            t.keys.iter().map(|k| k.frame).collect()
        }
        ChannelTarget::Layered(b) if b.transform_part().is_some() => b.key_frames(),
        _ => Vec::new(),
    }
}

/// The `f32` precision the thinning of resampled keys keeps values to: a quarter of `f32`'s
/// step (2⁻²²) at the largest magnitude among them (for quaternions, of a unit).
const THIN_EPS: f64 = 1.0 / (1u64 << 22) as f64;

/// LINEAR 3D keys at `frames` (one key when every value is the same in `f32`), without the
/// keys the line between their neighbours reproduces to a quarter of `f32` precision
/// ([`resample::thin`], the glTF writer's last step): the track's value at every frame stays
/// the sampled one (as `f32`), a straight or still stretch keeps its ends.
fn vec_track(frames: &[i64], values: impl Iterator<Item = DVec3>) -> VecTrack {
    let values: Vec<DVec3> = values.collect();
    let size =
        values.iter().map(|v| v.abs().max_element()).filter(|m| m.is_finite()).fold(0.0, f64::max);
    let s = Sampled { frames: frames.iter().map(|&f| f as f64).collect(), values, capped: false };
    let s = resample::thin(s, &resample::Positions, THIN_EPS * size);
    let mut keys: Vec<LinearKey<[f32; 3]>> = s
        .frames
        .iter()
        .zip(s.values)
        .map(|(&f, v)| LinearKey { frame: f as i32, value: f3(v) })
        .collect();
    if keys.iter().all(|k| k.value == keys[0].value) {
        keys.truncate(1);
    }
    VecTrack::Linear(KeyTrack { current: keys[0].value, keys })
}

/// LINEAR 4D keys (x, y, z, w) at `frames`, each on the same hemisphere as the one before
/// (one key when every value is the same in `f32`), thinned as [`vec_track`] thins (slerp
/// chords of at most a quarter turn, so the shortest arc keeps the source's way round).
fn rot_track(frames: &[i64], values: impl Iterator<Item = DQuat>) -> RotTrack {
    let mut values: Vec<DQuat> = values.map(DQuat::normalize).collect();
    resample::same_hemisphere(&mut values);
    let s = Sampled { frames: frames.iter().map(|&f| f as f64).collect(), values, capped: false };
    let s = resample::thin(s, &resample::Rotations { size: 1.0 }, THIN_EPS);
    let mut keys: Vec<LinearKey<[f32; 4]>> = s
        .frames
        .iter()
        .zip(s.values)
        .map(|(&f, q)| LinearKey { frame: f as i32, value: q.as_quat().to_array() })
        .collect();
    if keys.iter().all(|k| k.value == keys[0].value) {
        keys.truncate(1);
    }
    RotTrack::Linear(KeyTrack { current: keys[0].value, keys })
}

#[cfg(test)]
mod tests {
    use super::super::tests::{animated_null, scalar};
    use super::super::{export, ExportOptions};
    use super::*;
    use crate::anim::Interpolation;
    use crate::scene::AxisSystem;

    #[test]
    fn resampled_keys_on_the_line_of_their_neighbours_are_left_out() {
        // A step from 1 to 2 at frame 50 over 0..=100, resampled at every frame: 1 held to
        // frame 49, 2 from frame 50 on. Only the ends of the two flat stretches are needed
        // (hand computed), and the track still gives the step at every frame.
        let step = scalar(&[(0.0, 1.0), (50.0, 2.0)], Interpolation::Step);
        let s = animated_null(
            AxisSystem::Z_UP_RIGHT_HANDED,
            (0.0, 100.0),
            vec![ChannelTarget::TranslationXyz([Some(step), None, None])],
        );
        let (file, _, report) = export(&s, &ExportOptions::default()).unwrap();
        let pos = file.entities[0].position.as_ref().unwrap();
        assert_eq!(pos.frames(), [0, 49, 50, 100]);
        for f in 0..=100 {
            let want = if f < 50 { 1.0 } else { 2.0 };
            assert_eq!(pos.sample(f64::from(f)).unwrap().x, want, "frame {f}");
        }
        assert!(matches!(
            &report.tracks[0].position,
            TrackSource::Resampled { every_frame: true, .. }
        ));
    }

    #[test]
    fn resampling_a_long_range_stays_within_the_budget() {
        // A step key (no 3DA form) over ten million frames: resampled at its keys and a grid,
        // not at every frame, and exact at the keys.
        let step = scalar(&[(0.0, 1.0), (5_000_001.0, 2.0)], Interpolation::Step);
        let s = animated_null(
            AxisSystem::Z_UP_RIGHT_HANDED,
            (0.0, 10_000_000.0),
            vec![ChannelTarget::TranslationXyz([Some(step), None, None])],
        );
        let (file, _, report) = export(&s, &ExportOptions::default()).unwrap();
        let pos = file.entities[0].position.as_ref().unwrap();
        let frames = pos.frames();
        assert!(frames.len() <= RESAMPLE_BUDGET, "{}", frames.len());
        assert!(frames.contains(&5_000_001));
        assert_eq!(pos.sample(5_000_001.0).unwrap().x, 2.0);
        assert_eq!(pos.sample(0.0).unwrap().x, 1.0);
        assert!(matches!(
            &report.tracks[0].position,
            TrackSource::Resampled { every_frame: false, why } if why.contains("step")
        ));
        assert!(report.warnings.iter().any(|w| w.contains("budget")), "{:?}", report.warnings);
    }

    #[test]
    fn constant_tracks_get_one_key() {
        let t = vec_track(&[0, 1, 2], [DVec3::ONE; 3].into_iter());
        assert_eq!(t.frames(), vec![0]);
        let t = vec_track(&[0, 1, 2], [DVec3::ONE, DVec3::ZERO, DVec3::ONE].into_iter());
        assert_eq!(t.frames(), vec![0, 1, 2]);
    }
}

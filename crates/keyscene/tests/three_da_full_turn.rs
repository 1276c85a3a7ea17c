//! A 3DS relative rotation of (nearly) a whole turn or more between two keys (issue 33 §9, "3DA: a
//! rotation of (nearly) a full turn between two keys stays a turn"): converted to 3DA and read
//! back, the blade turns as the source does at every frame, and between frames it never takes
//! the other way round.
//!
//! The source is hand-built: a mesh one unit off its node's origin, keyed about +Z by 3DS
//! relative rotation keys (each key's angle is its turn from the key before, whole turns
//! included) of 355°, 360° (linear), 300°, −720.5° and 90° (TCB). Expected values come
//! from keyscene's own 3DS evaluation, which `three_ds_lib3ds.rs` pins to lib3ds. 3DA's
//! TCB 4D keys cannot hold a segment of (nearly) a whole turn or more between two keys —
//! the two quaternions are (nearly) opposite or equal — so the exporter resamples such a track
//! at every frame; the checks are: world matrices equal at every
//! integer frame (1e-4, the tolerance of `three_da_from_3ds.rs`; 3DA stores `f32`), and at
//! every half frame where the source turns smoothly (less than 0.7 rad each half frame) the
//! blade within 0.1 rad of the source's (a lost or reversed turn is off by up to π).

use glam::{DMat4, DVec3};
use keyscene::anim::{
    Animation, AxisAngle, Channel, ChannelTarget, Interpolation, Key, RotationTrack, Tcb, Time,
    Track,
};
use keyscene::formats::three_da;
use keyscene::scene::{Mesh, Node, NodeKind, Scene};

fn source() -> Scene {
    let mut s = Scene::default();
    s.meta.format = "3ds".into();
    s.meshes.push(Mesh {
        name: "Blade".into(),
        positions: vec![
            DVec3::new(1.0, 0.0, 0.0),
            DVec3::new(2.0, 0.0, 0.0),
            DVec3::new(1.5, 0.2, 0.0),
        ],
        polygon_starts: vec![0, 3],
        corner_vertices: vec![0, 1, 2],
        ..Mesh::default()
    });
    let mut node = Node::new("Blade", NodeKind::Mesh);
    node.mesh = Some(0);
    s.nodes.push(node);
    s.attach(0, None);
    let key = |frame: f64, degrees: f64, interpolation| Key {
        frame,
        value: AxisAngle { angle: degrees.to_radians(), axis: DVec3::Z },
        interpolation,
    };
    let tcb = || Interpolation::Tcb(Tcb::default());
    s.animations.push(Animation {
        name: String::new(),
        fps: 30.0,
        frame_range: (0.0, 50.0),
        channels: vec![Channel {
            node: 0,
            target: ChannelTarget::Rotation(RotationTrack::Relative(Track::new(vec![
                key(0.0, 0.0, Interpolation::Linear),
                key(10.0, 355.0, Interpolation::Linear),
                key(20.0, 360.0, Interpolation::Linear),
                key(30.0, 300.0, tcb()),
                key(40.0, -720.5, tcb()),
                key(50.0, 90.0, tcb()),
            ]))),
        }],
    });
    s
}

/// The angle (radians) between where the blade's first vertex points in `a` and in `b`.
fn blade_angle(a: DMat4, b: DMat4) -> f64 {
    let (p, q) = (a.transform_point3(DVec3::X), b.transform_point3(DVec3::X));
    p.truncate().angle_to(q.truncate()).abs()
}

#[test]
fn a_whole_turn_between_keys_stays_a_turn_in_3da() {
    let src = source();
    let (file, _, report) = three_da::export(&src, &three_da::ExportOptions::default()).unwrap();
    let bytes = three_da::write(&file).unwrap();
    let (back, _) = keyscene::load_bytes(&bytes, None, &Default::default()).unwrap();
    let node = back.nodes.iter().position(|n| n.name == "Blade").expect("the blade is written");
    // The 3DA's root may be turned into the file's axes (a constant `to_file` on the left):
    // compare each frame's matrix relative to frame 0's, which that turn leaves alone.
    let want_at = |f: f64| src.evaluate(Some(0), Time::Frame(f)).world[0];
    let got_at =
        |f: f64| back.evaluate(back.animations.first().map(|_| 0), Time::Frame(f)).world[node];
    let (want0, got0) = (want_at(0.0).inverse(), got_at(0.0).inverse());
    let mut between = 0;
    for half in 0..=100 {
        let f = half as f64 / 2.0;
        let want = want0 * want_at(f);
        let got = got0 * got_at(f);
        if half % 2 == 0 {
            let d = (got - want).to_cols_array().iter().fold(0.0f64, |m, x| m.max(x.abs()));
            assert!(d < 1e-4, "frame {f}: 3DA differs from the source by {d}");
            continue;
        }
        // Between frames, where the source turns smoothly (lib3ds' slerp of a segment of a
        // whole turn jumps; no frame sampling can follow a jump).
        let (before, after) = (want0 * want_at(f - 0.5), want0 * want_at(f + 0.5));
        if blade_angle(before, want) < 0.7 && blade_angle(want, after) < 0.7 {
            let a = blade_angle(got, want);
            assert!(a < 0.1, "frame {f}: the blade is {a} rad from the source's");
            between += 1;
        }
    }
    assert!(between >= 40, "only {between} half frames where the source turns smoothly");
    assert!(
        !report.resampled.is_empty(),
        "a segment of a whole turn is resampled, not kept as quaternion keys"
    );
}

//! Writer ↔ reader tests on hand-built scenes, with hand-computed expectations.

use glam::{DMat4, DQuat, DVec3};

use super::*;
use crate::anim::{Animation, Channel, ChannelTarget, Interpolation, Key, Time, Track};
use crate::scene::{AxisSystem, Mesh, MorphTarget, Node, NodeKind, Scene};

/// One triangle (0,0,0) (1,0,0) (0,1,0) on a node at (1,2,3), in a Z-up scene.
fn triangle_scene() -> Scene {
    let mut s = Scene::default();
    s.meta.axes = AxisSystem::Z_UP_RIGHT_HANDED;
    s.meshes.push(Mesh {
        name: "tri".into(),
        positions: vec![DVec3::ZERO, DVec3::X, DVec3::Y],
        polygon_starts: vec![0, 3],
        corner_vertices: vec![0, 1, 2],
        smoothing_groups: Some(vec![1]),
        ..Mesh::default()
    });
    let mut n = Node::new("Tri", NodeKind::Mesh);
    n.mesh = Some(0);
    n.transform.translation = DVec3::new(1.0, 2.0, 3.0);
    s.nodes.push(n);
    s.attach(0, None);
    s
}

fn read_glb(bytes: &[u8]) -> Scene {
    let (scene, warnings) = read(bytes, &crate::ReadOptions::default()).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    scene
}

#[test]
fn z_up_point_maps_to_y_up() {
    // 3DS (+Z up, −Y front) → glTF: (x, y, z) → (x, z, −y), so (1, 2, 3) → (1, 3, −2).
    let q = export::axis_rotation(AxisSystem::Z_UP_RIGHT_HANDED, &mut Vec::new()).unwrap();
    let p = q * DVec3::new(1.0, 2.0, 3.0);
    assert!((p - DVec3::new(1.0, 3.0, -2.0)).length() < 1e-12, "{p}");
    assert!(export::axis_rotation(AxisSystem::Y_UP_RIGHT_HANDED, &mut Vec::new()).is_none());
}

#[test]
fn one_triangle_round_trips_through_glb() {
    let src = triangle_scene();
    let file = write(&src, &WriteOptions::default()).unwrap();
    assert!(file.warnings.is_empty(), "{:?}", file.warnings);
    let back = read_glb(&file.main);
    assert_eq!(back.meta.format, "gltf");
    // Axis root + the triangle's node.
    assert_eq!(back.nodes.len(), 2);
    assert_eq!(back.nodes[0].name, AXIS_ROOT_NAME);
    assert_eq!(back.nodes[1].name, "Tri");
    let pose = back.evaluate(None, Time::Frame(0.0));
    let got = pose.world_positions(&back, 1);
    // Source world (1,2,3), (2,2,3), (1,3,3) → Y-up (x, z, −y).
    let want = [DVec3::new(1.0, 3.0, -2.0), DVec3::new(2.0, 3.0, -2.0), DVec3::new(1.0, 3.0, -3.0)];
    assert_eq!(got.len(), 3);
    for (g, w) in got.iter().zip(want) {
        assert!((*g - w).length() < 1e-6, "{g} vs {w}");
    }
    let normals = back.meshes[0].normals.as_ref().unwrap();
    // The face normal +Z (source) is +Y after the root turn; in the node's frame it stays +Z.
    assert!((normals.values[0] - glam::Vec3::Z).length() < 1e-6);
}

#[test]
fn geometry_transform_is_baked_into_vertices() {
    let mut s = triangle_scene();
    s.meta.axes = AxisSystem::Y_UP_RIGHT_HANDED;
    s.nodes[0].set_geometry_transform(DMat4::from_translation(DVec3::new(-10.0, 0.0, 0.0)));
    let back = read_glb(&write(&s, &WriteOptions::default()).unwrap().main);
    let want = s.evaluate(None, Time::Frame(0.0)).world_positions(&s, 0);
    let got = back.evaluate(None, Time::Frame(0.0)).world_positions(&back, 0);
    for (g, w) in got.iter().zip(&want) {
        assert!((*g - *w).length() < 1e-6, "{g} vs {w}");
    }
}

#[test]
fn resampled_animation_matches_at_frames_and_seconds() {
    let mut s = triangle_scene();
    s.meta.axes = AxisSystem::Y_UP_RIGHT_HANDED;
    let tcb = Interpolation::Tcb(crate::anim::Tcb::default());
    let keys = vec![
        Key { frame: 0.0, value: DVec3::ZERO, interpolation: tcb.clone() },
        Key { frame: 10.0, value: DVec3::new(5.0, 0.0, 0.0), interpolation: tcb.clone() },
        Key { frame: 20.0, value: DVec3::new(5.0, 5.0, 0.0), interpolation: tcb },
    ];
    let rot = vec![
        Key { frame: 0.0, value: DQuat::IDENTITY, interpolation: Interpolation::Linear },
        Key {
            frame: 20.0,
            value: DQuat::from_rotation_z(3.0),
            interpolation: Interpolation::Linear,
        },
    ];
    s.animations.push(Animation {
        name: "take".into(),
        fps: 30.0,
        frame_range: (0.0, 20.0),
        channels: vec![
            Channel { node: 0, target: ChannelTarget::Translation(Track::new(keys)) },
            Channel {
                node: 0,
                target: ChannelTarget::Rotation(crate::anim::RotationTrack::Quat(Track::new(rot))),
            },
        ],
    });
    let file = write(&s, &WriteOptions::default()).unwrap();
    let back = read_glb(&file.main);
    assert_eq!(back.animations.len(), 1);
    assert_eq!(back.animations[0].frame_range, (0.0, 20.0));
    for f in [0.0, 3.0, 10.0, 17.0, 20.0] {
        let want = s.evaluate(Some(0), Time::Frame(f)).world_positions(&s, 0);
        let got = back.evaluate(Some(0), Time::Seconds(f / 30.0)).world_positions(&back, 0);
        for (g, w) in got.iter().zip(&want) {
            assert!((*g - *w).length() < 1e-5, "frame {f}: {g} vs {w}");
        }
    }
}

#[test]
fn gltf_container_refers_to_its_bin() {
    let s = triangle_scene();
    let opts = WriteOptions {
        container: Container::Gltf { bin_uri: "t.bin".into() },
        ..WriteOptions::default()
    };
    let file = write(&s, &opts).unwrap();
    let (name, bin) = file.bin.clone().unwrap();
    assert_eq!(name, "t.bin");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("t.bin"), bin).unwrap();
    let ro = crate::ReadOptions { base_dir: Some(dir.path().into()), ..Default::default() };
    let (back, _) = read(&file.main, &ro).unwrap();
    assert_eq!(back.meshes[0].positions.len(), 3);
    // Without a base folder the external buffer cannot be found: an error that says where.
    let err = read(&file.main, &crate::ReadOptions::default()).unwrap_err().to_string();
    assert!(err.contains("buffers[0]"), "{err}");
}

#[test]
fn save_writes_atomically_beside_and_names_generator() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("scene.gltf");
    save(&triangle_scene(), &path, &WriteOptions::default()).unwrap();
    assert!(dir.path().join("scene.bin").is_file());
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains(&format!("keyscene {}", env!("CARGO_PKG_VERSION"))));
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
}

#[test]
fn saved_glb_is_streamed_as_the_container_says() {
    // glTF 2.0 §4.4: header (magic, version 2, total length), then the JSON chunk padded with
    // spaces, then the BIN chunk padded with zeros. The streamed file is checked against that
    // layout field by field, and is the bytes `write` returns in memory.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("scene.glb");
    save(&triangle_scene(), &path, &WriteOptions::default()).unwrap();
    let saved = std::fs::read(&path).unwrap();
    let word = |at: usize| u32::from_le_bytes(saved[at..at + 4].try_into().unwrap()) as usize;
    assert_eq!(&saved[..4], b"glTF");
    assert_eq!(word(4), 2);
    assert_eq!(word(8), saved.len());
    let json_len = word(12);
    assert_eq!(&saved[16..20], b"JSON");
    assert_eq!(json_len % 4, 0);
    let bin_at = 20 + json_len;
    assert_eq!(&saved[bin_at + 4..bin_at + 8], b"BIN\0");
    assert_eq!(bin_at + 8 + word(bin_at), saved.len());
    let json: serde_json::Value =
        serde_json::from_slice(saved[20..bin_at].trim_ascii_end()).unwrap();
    assert_eq!(json["buffers"][0]["byteLength"].as_u64().unwrap() as usize, word(bin_at));
    assert_eq!(saved, write(&triangle_scene(), &WriteOptions::default()).unwrap().main);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

/// [`skinned_morph_scene`] plus a 100 × 100-vertex grid (120,000 bytes of positions, more than
/// the staging writer's 64 KiB buffer) on a second mesh node: views of every kind (positions,
/// normals, u16 indices of 6 bytes that need padding, skin, morph, animation).
fn many_views_scene() -> Scene {
    let mut s = skinned_morph_scene();
    let n = 100;
    let positions = (0..n * n).map(|i| DVec3::new((i % n) as f64, (i / n) as f64, 0.0)).collect();
    let mut corner_vertices = Vec::new();
    for y in 0..n - 1 {
        for x in 0..n - 1 {
            let v = y * n + x;
            corner_vertices.extend([v, v + 1, v + n + 1, v + n].map(|v| v as u32));
        }
    }
    let polygon_starts = (0..=(n - 1) * (n - 1)).map(|q| (q * 4) as u32).collect();
    s.meshes.push(Mesh {
        name: "grid".into(),
        positions,
        polygon_starts,
        corner_vertices,
        ..Mesh::default()
    });
    let mut g = Node::new("Grid", NodeKind::Mesh);
    g.mesh = Some(1);
    s.nodes.push(g);
    s.attach(2, None);
    s
}

#[test]
fn staged_glb_and_bin_keep_the_spec_layout_and_the_in_memory_bytes() {
    // `save` stages the binary buffer on disk; glTF 2.0 §4.4: the header's length is the
    // file's, each chunk's length a multiple of 4, the BIN chunk the buffer of byteLength
    // bytes (§5.10). The bytes are those `write` makes in memory.
    let scene = many_views_scene();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("grid.glb");
    save(&scene, &path, &WriteOptions::default()).unwrap();
    let saved = std::fs::read(&path).unwrap();
    let word = |at: usize| u32::from_le_bytes(saved[at..at + 4].try_into().unwrap()) as usize;
    assert_eq!((&saved[..4], word(4), word(8)), (&b"glTF"[..], 2, saved.len()));
    let json_len = word(12);
    let bin_at = 20 + json_len;
    assert_eq!((json_len % 4, &saved[16..20]), (0, &b"JSON"[..]));
    assert_eq!((word(bin_at) % 4, &saved[bin_at + 4..bin_at + 8]), (0, &b"BIN\0"[..]));
    assert_eq!(bin_at + 8 + word(bin_at), saved.len());
    assert!(word(bin_at) > 120_000, "{}", word(bin_at));
    let json: serde_json::Value =
        serde_json::from_slice(saved[20..bin_at].trim_ascii_end()).unwrap();
    assert_eq!(json["buffers"][0]["byteLength"].as_u64().unwrap() as usize, word(bin_at));
    assert_eq!(saved, write(&scene, &WriteOptions::default()).unwrap().main);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "no staging file left");
    // `.gltf`: the staged file becomes `grid.bin`, the buffer `write` returns.
    let gltf = dir.path().join("grid.gltf");
    save(&scene, &gltf, &WriteOptions::default()).unwrap();
    let opts = WriteOptions { container: container_for(&gltf), ..WriteOptions::default() };
    let (_, bin) = write(&scene, &opts).unwrap().bin.unwrap();
    assert_eq!(std::fs::read(dir.path().join("grid.bin")).unwrap(), bin);
    assert_eq!(std::fs::read(&gltf).unwrap(), write(&scene, &opts).unwrap().main);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 3);
}

#[test]
fn a_failed_save_leaves_no_output_and_no_staging_file() {
    // The staging file exists from the start of `save`; an error after it (here the tolerance,
    // checked by the writer) must remove it and write nothing.
    let dir = tempfile::tempdir().unwrap();
    let opts = WriteOptions { tolerance: 0.0, ..WriteOptions::default() };
    for name in ["x.glb", "x.gltf"] {
        assert!(save(&many_views_scene(), &dir.path().join(name), &opts).is_err());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "{name}");
    }
    // A missing output folder is said plainly, before anything is built.
    let e = save(&triangle_scene(), &dir.path().join("no/x.glb"), &WriteOptions::default());
    assert!(e.unwrap_err().to_string().contains("does not exist"));
}

#[test]
fn cubicspline_and_step_channels_read_as_hermite_and_step_keys() {
    // Translation x: CUBICSPLINE keys at 0 s (value 0, out-tangent 3 /s) and 1 s (value 1,
    // in-tangent 0). glTF's Hermite at t = 0.5 s (u = 0.5, t_d = 1 s):
    // h10·t_d·3 + h01·1 = 0.125·3 + 0.5 = 0.875. Scale: STEP 1 → 2 at 1 s.
    let floats: [f32; 26] = [
        0.0, 1.0, // inputs
        0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 3.0, 0.0, 0.0, // key 0: in, value, out
        0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, // key 1
        1.0, 1.0, 1.0, 2.0, 2.0, 2.0, // step scales
    ];
    let bytes: Vec<u8> = floats.iter().flat_map(|f| f.to_le_bytes()).collect();
    let json = format!(
        r#"{{"asset":{{"version":"2.0"}},"scene":0,"scenes":[{{"nodes":[0]}}],"nodes":[{{"name":"n"}}],
        "buffers":[{{"byteLength":104,"uri":"data:application/octet-stream;base64,{}"}}],
        "bufferViews":[{{"buffer":0,"byteOffset":0,"byteLength":8}},{{"buffer":0,"byteOffset":8,"byteLength":72}},
                       {{"buffer":0,"byteOffset":80,"byteLength":24}}],
        "accessors":[{{"bufferView":0,"componentType":5126,"count":2,"type":"SCALAR","min":[0],"max":[1]}},
                     {{"bufferView":1,"componentType":5126,"count":6,"type":"VEC3"}},
                     {{"bufferView":2,"componentType":5126,"count":2,"type":"VEC3"}}],
        "animations":[{{"channels":[{{"sampler":0,"target":{{"node":0,"path":"translation"}}}},
                                    {{"sampler":1,"target":{{"node":0,"path":"scale"}}}}],
                        "samplers":[{{"input":0,"output":1,"interpolation":"CUBICSPLINE"}},
                                    {{"input":0,"output":2,"interpolation":"STEP"}}]}}]}}"#,
        ::base64::Engine::encode(&::base64::engine::general_purpose::STANDARD, &bytes)
    );
    let (scene, warnings) = read(json.as_bytes(), &crate::ReadOptions::default()).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(scene.animations[0].fps, 30.0);
    assert_eq!(scene.animations[0].frame_range, (0.0, 30.0));
    let at = |s: f64| scene.evaluate(Some(0), Time::Seconds(s)).local[0];
    let m = at(0.5);
    assert!((m.w_axis.x - 0.875).abs() < 1e-6, "{}", m.w_axis.x);
    assert!((m.x_axis.x - 1.0).abs() < 1e-12);
    let m = at(1.0);
    assert!((m.w_axis.x - 1.0).abs() < 1e-6);
    assert!((m.x_axis.x - 2.0).abs() < 1e-12);
}

#[test]
fn key_times_closer_than_a_frame_snap_stay_distinct() {
    // Times 1/30 s less 8 f32 steps (~3e-8 s) and 1/30 s: frames 0.9999991 and 1 at 30 fps,
    // both within the whole-frame snap, yet strictly increasing as f32: glTF §3.11 accepts
    // them, and they stay two keys with their values (LINEAR: 1 then 2).
    let t1 = 1.0f32 / 30.0;
    let t0 = f32::from_bits(t1.to_bits() - 8);
    assert!(t0 < t1);
    let floats: [f32; 8] = [t0, t1, 1.0, 0.0, 0.0, 2.0, 0.0, 0.0];
    let bytes: Vec<u8> = floats.iter().flat_map(|f| f.to_le_bytes()).collect();
    let json = format!(
        r#"{{"asset":{{"version":"2.0"}},"scene":0,"scenes":[{{"nodes":[0]}}],"nodes":[{{"name":"n"}}],
        "buffers":[{{"byteLength":32,"uri":"data:application/octet-stream;base64,{}"}}],
        "bufferViews":[{{"buffer":0,"byteOffset":0,"byteLength":8}},{{"buffer":0,"byteOffset":8,"byteLength":24}}],
        "accessors":[{{"bufferView":0,"componentType":5126,"count":2,"type":"SCALAR","min":[{t0}],"max":[{t1}]}},
                     {{"bufferView":1,"componentType":5126,"count":2,"type":"VEC3"}}],
        "animations":[{{"channels":[{{"sampler":0,"target":{{"node":0,"path":"translation"}}}}],
                        "samplers":[{{"input":0,"output":1,"interpolation":"LINEAR"}}]}}]}}"#,
        ::base64::Engine::encode(&::base64::engine::general_purpose::STANDARD, &bytes)
    );
    let (scene, _) = read(json.as_bytes(), &crate::ReadOptions::default()).unwrap();
    let at = |s: f64| scene.evaluate(Some(0), Time::Seconds(s)).local[0].w_axis.x;
    assert!((at(f64::from(t0)) - 1.0).abs() < 1e-6, "{}", at(f64::from(t0)));
    assert!((at(f64::from(t1)) - 2.0).abs() < 1e-6, "{}", at(f64::from(t1)));
}

#[test]
fn malformed_input_is_an_error_not_a_panic() {
    let opts = crate::ReadOptions::default();
    assert!(read(b"glTF\x02\0\0\0\x0c\0\0\0", &opts).is_err());
    assert!(
        read(b"{\"asset\":{\"version\":\"2.0\"},\"nodes\":[{\"children\":[0]}]}", &opts).is_err()
    );
    let mut glb = write(&triangle_scene(), &WriteOptions::default()).unwrap().main;
    for cut in [0, 11, 20, glb.len() / 2, glb.len() - 1] {
        let _ = read(&glb[..cut], &opts);
    }
    for i in (12..glb.len()).step_by(7) {
        glb[i] ^= 0x5A;
        let _ = read(&glb, &opts);
    }
}

/// A Y-up triangle (1,0,0) (2,0,0) (1,1,0) on node "m" at (5,0,0), skinned to bone "b" at the
/// origin (vertex 0: weight 1; vertex 1: weight 0.5 alone, renormalised to 1; vertex 2: no
/// influence, so it follows "m"), with one morph target moving vertex 0 by +Z. The bone turns
/// 0 → 90° about Z over frames 0–10 (linear), the target's DeformPercent goes 0 → 50.
fn skinned_morph_scene() -> Scene {
    use crate::scene::{Skin, SkinJoint};
    let mut s = triangle_scene();
    s.meta.axes = AxisSystem::Y_UP_RIGHT_HANDED;
    s.meshes[0].positions = vec![DVec3::X, DVec3::new(2.0, 0.0, 0.0), DVec3::new(1.0, 1.0, 0.0)];
    s.meshes[0].morph_targets = vec![MorphTarget {
        name: "lift".into(),
        position_deltas: vec![DVec3::Z, DVec3::ZERO, DVec3::ZERO],
        ..MorphTarget::default()
    }];
    s.meshes[0].skin = Some(0);
    s.nodes[0].name = "m".into();
    s.nodes[0].transform.translation = DVec3::new(5.0, 0.0, 0.0);
    s.nodes.push(Node::new("b", NodeKind::Bone));
    s.attach(1, None);
    s.skins.push(Skin {
        joints: vec![SkinJoint { node: 1, inverse_bind: DMat4::IDENTITY }],
        influences: vec![vec![(0, 1.0)], vec![(0, 0.5)], vec![]],
        dq_weights: Vec::new(),
        mesh_bind: None,
    });
    fn lin<T>(frame: f64, value: T) -> Key<T> {
        Key { frame, value, interpolation: Interpolation::Linear }
    }
    s.animations.push(Animation {
        name: "take".into(),
        fps: 30.0,
        frame_range: (0.0, 10.0),
        channels: vec![
            Channel {
                node: 1,
                target: ChannelTarget::Rotation(crate::anim::RotationTrack::Quat(Track::new(
                    vec![
                        lin(0.0, DQuat::IDENTITY),
                        lin(10.0, DQuat::from_rotation_z(std::f64::consts::FRAC_PI_2)),
                    ],
                ))),
            },
            Channel {
                node: 0,
                target: ChannelTarget::Property {
                    name: crate::anim::curve::morph_weight_property(0),
                    track: Track::new(vec![lin(0.0, 0.0), lin(10.0, 50.0)]),
                },
            },
        ],
    });
    s
}

#[test]
fn skin_and_morph_weights_round_trip() {
    let src = skinned_morph_scene();
    let file = write(&src, &WriteOptions::default()).unwrap();
    assert!(file.warnings.is_empty(), "{:?}", file.warnings);
    let back = read_glb(&file.main);
    let m = back.nodes.iter().position(|n| n.name == "m").unwrap();
    let mesh = &back.meshes[back.nodes[m].mesh.unwrap()];
    assert_eq!(mesh.morph_targets[0].name, "lift");
    // The skin gained the mesh node as a joint for the unweighted vertex.
    let skin = &back.skins[mesh.skin.unwrap()];
    assert_eq!(skin.joints.len(), 2);
    assert_eq!(skin.joints[1].node, m);
    let h = std::f64::consts::FRAC_1_SQRT_2;
    // Frame 10: weight 0.5, bone at 90°: (1,0,0.5) → (0,1,0.5); (2,0,0) → (0,2,0);
    // vertex 2 follows "m": (6,1,0). Frame 5: weight 0.25, 45°.
    let cases = [
        (10.0, [DVec3::new(0.0, 1.0, 0.5), DVec3::new(0.0, 2.0, 0.0), DVec3::new(6.0, 1.0, 0.0)]),
        (
            5.0,
            [DVec3::new(h, h, 0.25), DVec3::new(2.0 * h, 2.0 * h, 0.0), DVec3::new(6.0, 1.0, 0.0)],
        ),
    ];
    for (frame, want) in cases {
        let got = back.evaluate(Some(0), Time::Seconds(frame / 30.0)).world_positions(&back, m);
        for (g, w) in got.iter().zip(want) {
            assert!((*g - w).length() < 1e-6, "frame {frame}: {g} vs {w}");
        }
    }
}

#[test]
fn dual_quaternion_skins_are_written_linear_with_a_warning() {
    let mut s = skinned_morph_scene();
    s.skins[0].dq_weights = vec![1.0; 3];
    let file = write(&s, &WriteOptions::default()).unwrap();
    assert!(
        file.warnings.iter().any(|w| w.message.contains("dual-quaternion")),
        "{:?}",
        file.warnings
    );
}

#[test]
fn embedded_gltf_stands_alone_and_one_animation_can_be_chosen() {
    let mut s = skinned_morph_scene();
    let mut second = s.animations[0].clone();
    second.name = "second".into();
    s.animations.push(second);
    let opts = WriteOptions {
        container: Container::Gltf { bin_uri: "unused.bin".into() },
        embed: true,
        only_animation: Some(1),
        ..WriteOptions::default()
    };
    let file = write(&s, &opts).unwrap();
    assert!(file.bin.is_none());
    // No base folder: the buffer must come from the data URI.
    let back = read_glb(&file.main);
    assert_eq!(back.animations.len(), 1);
    assert_eq!(back.animations[0].name, "second");
    assert_eq!(back.meshes[0].positions.len(), 3);
}

/// A diffuse map of `t.png` (a PNG signature, written into `dir`) with no transform, tiling
/// or wrap.
fn png_map(dir: &std::path::Path) -> crate::scene::TextureMap {
    let png = dir.join("t.png");
    std::fs::write(&png, b"\x89PNG\r\n\x1a\n").unwrap();
    crate::scene::TextureMap {
        slot: crate::scene::MapSlot::Diffuse,
        file: "t.png".into(),
        resolved: Some(png),
        embedded: None,
        strength: 1.0,
        uv_transform: Default::default(),
        flags: 0,
        wrap: Default::default(),
    }
}

/// [`triangle_scene`] with one UV set and one material, `maps`, on its mesh.
fn mapped_triangle(maps: Vec<crate::scene::TextureMap>) -> Scene {
    use crate::scene::{Attribute, Mapping, UvSet};
    let mut s = triangle_scene();
    s.materials.push(crate::scene::Material { name: "m".into(), maps, ..Default::default() });
    s.meshes[0].material_slots = vec![Some(0)];
    s.meshes[0].uv_sets = vec![UvSet {
        name: String::new(),
        uvs: Attribute {
            values: vec![glam::Vec2::ZERO, glam::Vec2::X, glam::Vec2::Y],
            mapping: Mapping::PerVertex,
        },
    }];
    s
}

#[test]
fn textures_are_bound_only_on_primitives_that_have_uvs() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = mapped_triangle(vec![png_map(dir.path())]);
    s.meshes[0].uv_sets.clear();
    let file = write(&s, &WriteOptions::default()).unwrap();
    let (json, _) = super::glb::split(&file.main).unwrap();
    let v: serde_json::Value = serde_json::from_slice(json).unwrap();
    assert!(v["materials"][0]["pbrMetallicRoughness"]["baseColorTexture"].is_null());
    assert!(file.warnings.iter().any(|w| w.message.contains("without UVs")));
}

#[test]
fn uv_transform_becomes_khr_texture_transform_in_v_down_space() {
    use crate::scene::{TextureMap, UvTransform};
    let dir = tempfile::tempdir().unwrap();
    let s = mapped_triangle(vec![TextureMap {
        // uv' = (0.25, 0.5) + R(90°)·((2, 3) ∘ uv)
        uv_transform: UvTransform {
            scale: glam::Vec2::new(2.0, 3.0),
            offset: glam::Vec2::new(0.25, 0.5),
            rotation_degrees: 90.0,
        },
        ..png_map(dir.path())
    }]);
    let opts = WriteOptions {
        container: Container::Gltf { bin_uri: "t.bin".into() },
        ..WriteOptions::default()
    };
    let file = write(&s, &opts).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&file.main).unwrap();
    let t = &v["materials"][0]["pbrMetallicRoughness"]["baseColorTexture"]["extensions"]
        ["KHR_texture_transform"];
    // Hand-derived: source uv (0, 0) is glTF (0, 1) and must land on the source's
    // (0.25, 0.5), glTF (0.25, 0.5): offset + R(−90°)·(0, 3) = (−2.75, 0.5) + (3, 0).
    let f = |x: &serde_json::Value| x.as_f64().unwrap();
    assert!((f(&t["offset"][0]) + 2.75).abs() < 1e-6 && (f(&t["offset"][1]) - 0.5).abs() < 1e-6);
    assert!((f(&t["rotation"]) + std::f64::consts::FRAC_PI_2).abs() < 1e-6);
    assert_eq!((f(&t["scale"][0]), f(&t["scale"][1])), (2.0, 3.0));
    assert!(v["extensionsUsed"].as_array().unwrap().iter().any(|e| e == "KHR_texture_transform"));
    // The reader inverts it.
    std::fs::write(dir.path().join("t.bin"), file.bin.unwrap().1).unwrap();
    let ro = crate::ReadOptions { base_dir: Some(dir.path().into()), ..Default::default() };
    let (back, _) = read(&file.main, &ro).unwrap();
    let t = back.materials[0].maps[0].uv_transform;
    assert!((t.offset - glam::Vec2::new(0.25, 0.5)).length() < 1e-6, "{t:?}");
    assert!((t.rotation_degrees - 90.0).abs() < 1e-4 && t.scale == glam::Vec2::new(2.0, 3.0));
}

#[test]
fn tiling_flags_become_samplers_and_bump_maps_get_tangents() {
    use crate::scene::{Attribute, MapSlot, Mapping, TextureMap, UvSet};
    let dir = tempfile::tempdir().unwrap();
    let map = |slot, flags| TextureMap { slot, flags, ..png_map(dir.path()) };
    // lib3ds Lib3dsTextureMapFlags: NO_TILE 0x10, MIRROR 0x2.
    let mut s = mapped_triangle(vec![map(MapSlot::Diffuse, 0x10), map(MapSlot::Bump, 0x2)]);
    s.meshes[0].uv_sets = vec![UvSet {
        name: String::new(),
        uvs: Attribute {
            values: vec![glam::Vec2::ZERO, glam::Vec2::X, glam::Vec2::Y],
            mapping: Mapping::PerVertex,
        },
    }];
    let opts = WriteOptions {
        container: Container::Gltf { bin_uri: "t.bin".into() },
        embed: true,
        ..WriteOptions::default()
    };
    let file = write(&s, &opts).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&file.main).unwrap();
    assert_eq!(v["images"].as_array().unwrap().len(), 1, "one image for both maps");
    let m = &v["materials"][0];
    let sampler = |info: &serde_json::Value| {
        let t = &v["textures"][info["index"].as_u64().unwrap() as usize];
        &v["samplers"][t["sampler"].as_u64().unwrap() as usize]
    };
    // glTF 2.0 §5.26: CLAMP_TO_EDGE 33071, MIRRORED_REPEAT 33648.
    let base = sampler(&m["pbrMetallicRoughness"]["baseColorTexture"]);
    assert_eq!((base["wrapS"].as_u64(), base["wrapT"].as_u64()), (Some(33071), Some(33071)));
    let normal = sampler(&m["normalTexture"]);
    assert_eq!((normal["wrapS"].as_u64(), normal["wrapT"].as_u64()), (Some(33648), Some(33648)));
    // The triangle lies in z = 0 facing +z with U along +x: tangent +x (the Z-up mesh's
    // own frame; the axis root rotates the node, not the vertices), w = +1.
    let attrs = &v["meshes"][0]["primitives"][0]["attributes"];
    let acc = &v["accessors"][attrs["TANGENT"].as_u64().unwrap() as usize];
    assert_eq!((acc["type"].as_str(), acc["count"].as_u64()), (Some("VEC4"), Some(3)));
    let (back, _) = read(&file.main, &crate::ReadOptions::default()).unwrap();
    assert_eq!(back.meshes[0].positions.len(), 3);
    // The reader turns samplers back into the tiling bits and normalTexture into a bump map.
    let maps: Vec<_> = back.materials[0].maps.iter().map(|m| (m.slot, m.flags)).collect();
    assert_eq!(maps, [(MapSlot::Diffuse, 0x10), (MapSlot::Bump, 0x2)]);
}

#[test]
fn per_axis_wrap_modes_become_sampler_wrap_s_and_t_and_read_back() {
    use crate::scene::{TextureMap, WrapMode};
    let dir = tempfile::tempdir().unwrap();
    // An FBX texture with WrapModeU 1 (clamp) and WrapModeV 0 (repeat).
    let wrap = [WrapMode::Clamp, WrapMode::Repeat];
    let s = mapped_triangle(vec![TextureMap { wrap, ..png_map(dir.path()) }]);
    let file = write(&s, &WriteOptions::default()).unwrap();
    let (json, _) = crate::formats::gltf::glb::split(&file.main).unwrap();
    let v: serde_json::Value = serde_json::from_slice(json).unwrap();
    // glTF 2.0 §5.26: CLAMP_TO_EDGE 33071, REPEAT 10497.
    let sampler = &v["samplers"][0];
    assert_eq!((sampler["wrapS"].as_u64(), sampler["wrapT"].as_u64()), (Some(33071), Some(10497)));
    let (back, _) = read(&file.main, &crate::ReadOptions::default()).unwrap();
    assert_eq!(back.materials[0].maps[0].wrap, [WrapMode::Clamp, WrapMode::Repeat]);
}

/// TANGENT comes back as the mesh's tangents and binormals: a triangle (normal +Z) storing
/// tangent (0, 3, 0) and binormal +X is written as TANGENT (0, 1, 0, −1) (N × T = Z × Y = −X,
/// opposite the binormal); the reader gives tangent +Y and binormal cross(N, T) · w = +X
/// (glTF 2.0 §3.7.2.1), in the mesh's own frame (the axis root carries the Z-up turn).
#[test]
fn tangents_and_their_handedness_read_back_as_tangents_and_binormals() {
    use crate::scene::{Attribute, Mapping};
    let mut src = triangle_scene();
    let y3 = glam::Vec3::new(0.0, 3.0, 0.0);
    src.meshes[0].tangents = Some(Attribute { values: vec![y3], mapping: Mapping::AllSame });
    src.meshes[0].binormals =
        Some(Attribute { values: vec![glam::Vec3::X], mapping: Mapping::AllSame });
    let back = read_glb(&write(&src, &WriteOptions::default()).unwrap().main);
    let m = &back.meshes[0];
    let (t, b) = (m.tangents.as_ref().unwrap(), m.binormals.as_ref().unwrap());
    assert_eq!(t.values.len(), 3);
    for (t, b) in t.values.iter().zip(&b.values) {
        assert!((*t - glam::Vec3::Y).length() < 1e-6, "tangent {t}");
        assert!((*b - glam::Vec3::X).length() < 1e-6, "binormal {b}");
    }
}

/// The floats of accessor `index` in a GLB (tightly packed, as the writer stores them).
fn glb_floats(glb: &[u8], json: &serde_json::Value, index: u64) -> Vec<f32> {
    let a = &json["accessors"][index as usize];
    let view = &json["bufferViews"][a["bufferView"].as_u64().unwrap() as usize];
    let per = match a["type"].as_str().unwrap() {
        "SCALAR" => 1,
        "VEC3" => 3,
        "VEC4" => 4,
        t => panic!("{t}"),
    };
    let json_len = u32::from_le_bytes(glb[12..16].try_into().unwrap()) as usize;
    let bin = &glb[20 + json_len + 8..];
    let start = view["byteOffset"].as_u64().unwrap_or(0) as usize
        + a["byteOffset"].as_u64().unwrap_or(0) as usize;
    let n = a["count"].as_u64().unwrap() as usize * per;
    (0..n)
        .map(|k| f32::from_le_bytes(bin[start + 4 * k..start + 4 * k + 4].try_into().unwrap()))
        .collect()
}

#[test]
fn source_keys_become_cubicspline_and_step_samplers_with_tangents_per_second() {
    let mut s = triangle_scene();
    s.meta.axes = AxisSystem::Y_UP_RIGHT_HANDED;
    // x: Hermite from (frame −10, −5) to (10, 5) with flat ends: −5 + 10·(3u² − 2u³). At frame
    // 0 (u = ½) the value is 0 and the slope 10·1.5 / 20 frames = 0.75 per frame, which is
    // 0.75 · 24 = 18 per second at 24 fps.
    let h = |frame: f64, x: f64| Key {
        frame,
        value: DVec3::new(x, 0.0, 0.0),
        interpolation: Interpolation::Hermite { in_tangent: DVec3::ZERO, out_tangent: DVec3::ZERO },
    };
    let step = |frame: f64, x: f64| Key { frame, value: x, interpolation: Interpolation::Step };
    s.animations.push(Animation {
        name: "take".into(),
        fps: 24.0,
        frame_range: (-10.0, 20.0),
        channels: vec![
            Channel {
                node: 0,
                target: ChannelTarget::Translation(Track::new(vec![h(-10.0, -5.0), h(10.0, 5.0)])),
            },
            Channel {
                node: 0,
                target: ChannelTarget::ScaleXyz([
                    Some(Track::new(vec![step(0.0, 1.0), step(5.0, 2.0)])),
                    None,
                    None,
                ]),
            },
        ],
    });
    let cubic = WriteOptions { cubic_spline: true, ..WriteOptions::default() };
    let file = write(&s, &cubic).unwrap();
    let json = glb::split(&file.main).unwrap().0;
    let json: serde_json::Value = serde_json::from_slice(json).unwrap();
    let anim = &json["animations"][0];
    let sampler = |path: &str| {
        let ch = anim["channels"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["target"]["path"] == path)
            .unwrap();
        let sm = &anim["samplers"][ch["sampler"].as_u64().unwrap() as usize];
        (
            sm["interpolation"].as_str().unwrap().to_string(),
            glb_floats(&file.main, &json, sm["input"].as_u64().unwrap()),
            glb_floats(&file.main, &json, sm["output"].as_u64().unwrap()),
        )
    };
    // Cut at frame 0, then the key at 10 and the held end at the animation's last frame 20.
    let (interp, input, output) = sampler("translation");
    assert_eq!(interp, "CUBICSPLINE");
    assert_eq!(input, [0.0, (10.0f64 / 24.0) as f32, (20.0f64 / 24.0) as f32]);
    #[rustfmt::skip]
    let want = [
        0.0, 0.0, 0.0,   0.0, 0.0, 0.0,   18.0, 0.0, 0.0,
        0.0, 0.0, 0.0,   5.0, 0.0, 0.0,   0.0, 0.0, 0.0,
        0.0, 0.0, 0.0,   5.0, 0.0, 0.0,   0.0, 0.0, 0.0,
    ];
    for (k, (g, w)) in output.iter().zip(want).enumerate() {
        assert!((g - w).abs() < 1e-5, "output {k}: {g} vs {w}");
    }
    let (interp, input, output) = sampler("scale");
    assert_eq!(interp, "STEP");
    assert_eq!(input, [0.0, (5.0f64 / 24.0) as f32, (20.0f64 / 24.0) as f32]);
    assert_eq!(output, [1.0, 1.0, 1.0, 2.0, 1.0, 1.0, 2.0, 1.0, 1.0]);
    // Read back, the curve is the source's between keys too.
    let back = read_glb(&file.main);
    for f in [0.0, 2.5, 4.99, 5.0, 7.25, 10.0, 13.0] {
        let want = s.evaluate(Some(0), Time::Frame(f)).world_positions(&s, 0);
        let got = back.evaluate(Some(0), Time::Seconds(f / 24.0)).world_positions(&back, 0);
        for (g, w) in got.iter().zip(&want) {
            assert!((*g - *w).length() < 1e-5, "frame {f}: {g} vs {w}");
        }
    }
    // By default the Hermite translation is LINEAR keys, within 1e-4 of the scene size (the
    // largest coordinate the curve reaches, 5) of the source at every frame and between.
    let file = write(&s, &WriteOptions::default()).unwrap();
    let json: serde_json::Value =
        serde_json::from_slice(glb::split(&file.main).unwrap().0).unwrap();
    for sm in json["animations"][0]["samplers"].as_array().unwrap() {
        assert_ne!(sm["interpolation"], "CUBICSPLINE");
    }
    let back = read_glb(&file.main);
    for f in (0..=80).map(|q| f64::from(q) * 0.25) {
        let want = s.evaluate(Some(0), Time::Frame(f)).world_positions(&s, 0);
        let got = back.evaluate(Some(0), Time::Seconds(f / 24.0)).world_positions(&back, 0);
        for (g, w) in got.iter().zip(&want) {
            assert!((*g - *w).length() <= 5e-4 * (1.0 + 1e-6), "frame {f}: {g} vs {w}");
        }
    }
    // Resampling asked for: one LINEAR sample per frame from 0 to 20.
    let opts = WriteOptions { resample_fps: Some(24.0), ..WriteOptions::default() };
    let file = write(&s, &opts).unwrap();
    let json: serde_json::Value =
        serde_json::from_slice(glb::split(&file.main).unwrap().0).unwrap();
    for sm in json["animations"][0]["samplers"].as_array().unwrap() {
        assert_eq!(sm["interpolation"], "LINEAR");
        assert_eq!(json["accessors"][sm["input"].as_u64().unwrap() as usize]["count"], 21);
    }
}

#[test]
fn resampling_grid_never_crowds_a_key() {
    // Keys at frames 0.99999 and 359.00001 (24 fps, as a 2013 3ds Max export has them): the
    // one-per-frame grid would put samples at frames 1 and 359, 1e-5 frames (0.4 µs) from the
    // keys. Those two are left out; every other whole frame stays a sample.
    let mut s = triangle_scene();
    s.meta.axes = AxisSystem::Y_UP_RIGHT_HANDED;
    let tcb = Interpolation::Tcb(crate::anim::Tcb::default());
    let keys = vec![
        Key { frame: 0.99999, value: DVec3::ZERO, interpolation: tcb.clone() },
        Key { frame: 180.0, value: DVec3::new(5.0, 0.0, 0.0), interpolation: tcb.clone() },
        Key { frame: 359.00001, value: DVec3::new(5.0, 5.0, 0.0), interpolation: tcb },
    ];
    s.animations.push(Animation {
        name: "take".into(),
        fps: 24.0,
        // The grid keeps the first frame's phase: from frame 0 it runs on whole frames.
        frame_range: (0.0, 359.00001),
        channels: vec![Channel { node: 0, target: ChannelTarget::Translation(Track::new(keys)) }],
    });
    let opts = WriteOptions { resample_fps: Some(24.0), ..WriteOptions::default() };
    let file = write(&s, &opts).unwrap();
    let doc = ::gltf::Gltf::from_slice(&file.main).unwrap();
    let blob = doc.blob.clone().unwrap();
    let anim = doc.animations().next().unwrap();
    let channel = anim.channels().next().unwrap();
    let times: Vec<f32> = channel.reader(|_| Some(&blob[..])).read_inputs().unwrap().collect();
    let mut want: Vec<f32> = vec![0.0, (0.99999f64 / 24.0) as f32];
    want.extend((2..=358).map(|f| (f64::from(f) / 24.0) as f32));
    want.push((359.00001f64 / 24.0) as f32);
    assert_eq!(times, want);
    // And keyscene reads its own file back, at the keys' values.
    let back = read_glb(&file.main);
    let at = |f: f64| back.evaluate(Some(0), Time::Seconds(f / 24.0)).local[0].w_axis.truncate();
    assert!((at(180.0) - DVec3::new(5.0, 0.0, 0.0)).length() < 1e-5, "{}", at(180.0));
}

/// Issue 17 §1: a `.gltf` whose JSON stops early says "truncated at byte N" (the file's
/// length) and what it was inside, not serde_json's "EOF while parsing".
#[test]
fn a_cut_gltf_document_is_truncated_at_its_length() {
    let text = br#"{"asset": {"version": "2.0"}, "nodes": [{"name": "No"#;
    let e = read(text, &crate::ReadOptions::default()).unwrap_err().to_string();
    assert!(
        e.contains(&format!(
            "the file is truncated at byte {}: the JSON ends inside a string",
            text.len()
        )),
        "{e}"
    );
    assert!(!e.contains("EOF"), "{e}");
    // Not a truncation: the line and column of the bad byte.
    let e = read(b"{\"asset\": ]", &crate::ReadOptions::default()).unwrap_err().to_string();
    assert!(e.contains("not valid glTF JSON at line 1, column 11"), "{e}");
}

/// A GLB cut short says truncated at its length, against the length its header declares.
#[test]
fn a_cut_glb_is_truncated_at_its_length() {
    let glb = glb::to_glb(br#"{"asset":{"version":"2.0"}}"#, &[]).unwrap();
    for cut in [6, 30] {
        let e = read(&glb[..cut], &crate::ReadOptions::default()).unwrap_err().to_string();
        assert!(e.contains(&format!("the file is truncated at byte {cut}: expected")), "{e}");
    }
    let e = read(&glb[..30], &crate::ReadOptions::default()).unwrap_err().to_string();
    assert!(e.contains(&format!("the {} bytes the GLB header declares", glb.len())), "{e}");
}

#[test]
fn meshes_built_on_several_threads_give_the_bytes_of_one_thread_and_stay_in_place() {
    // Five meshes of 40,000+ corners each: their batch passes the parallel threshold. Each
    // mesh lies at its own height, so a mesh handed to the wrong node shows in the read-back.
    let mut s = Scene::default();
    for i in 0..5u32 {
        s.meshes.push(crate::scene::test_meshes::grid_mesh(&format!("grid{i}"), 100, f64::from(i)));
        let mut n = Node::new(format!("Grid{i}"), NodeKind::Mesh);
        n.mesh = Some(i as usize);
        s.nodes.push(n);
        s.attach(i as usize, None);
    }
    let on = |threads: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| write(&s, &WriteOptions::default()).unwrap().main)
    };
    let one = on(1);
    assert_eq!(one, on(2), "two threads wrote other bytes than one");
    assert_eq!(one, on(4), "four threads wrote other bytes than one");
    let back = read_glb(&one);
    let pose = back.evaluate(None, Time::Frame(0.0));
    for i in 0..5 {
        let node = back.nodes.iter().position(|n| n.name == format!("Grid{i}")).unwrap();
        let got = pose.world_positions(&back, node);
        // 101 × 101 grid vertices, each on the plane of its height (the scene is glTF's
        // Y-up already: no axis root, z stays z).
        assert_eq!(got.len(), 101 * 101, "Grid{i}");
        assert!(got.iter().all(|p| (p.z - f64::from(i)).abs() < 1e-9), "Grid{i} left its plane");
    }
}

/// A material of shading model `model` with the PBR values of an OpenPBR-like surface:
/// base (0.5, 0.25, 0) × 0.8, metalness 0.25, roughness 0.6, emission (1, 0.5, 0) × 4,
/// opacity 0.5, IOR 1.33, specular 0.5 × white, transmission 0.2, coat 0.75 roughness 0.1,
/// sheen (0.5, 0.5, 0.5) × 0.5 roughness 0.3.
fn pbr_material(model: crate::scene::ShadingModel) -> crate::scene::Pbr {
    use crate::scene::{Pbr, PbrProperty as P, PbrValue};
    use glam::Vec4;
    let mut pbr = Pbr::new(model);
    for (p, v) in [
        (P::BaseColor, Vec4::new(0.5, 0.25, 0.0, 1.0)),
        (P::BaseFactor, Vec4::X * 0.8),
        (P::Metalness, Vec4::X * 0.25),
        (P::Roughness, Vec4::X * 0.6),
        (P::EmissionColor, Vec4::new(1.0, 0.5, 0.0, 1.0)),
        (P::EmissionFactor, Vec4::X * 4.0),
        (P::Opacity, Vec4::new(0.5, 0.5, 0.5, 0.0)),
        (P::SpecularIor, Vec4::X * 1.33),
        (P::SpecularFactor, Vec4::X * 0.5),
        (P::SpecularColor, Vec4::ONE),
        (P::TransmissionFactor, Vec4::X * 0.2),
        (P::TransmissionColor, Vec4::ONE),
        (P::CoatFactor, Vec4::X * 0.75),
        (P::CoatRoughness, Vec4::X * 0.1),
        (P::SheenColor, Vec4::new(0.5, 0.5, 0.5, 1.0)),
        (P::SheenFactor, Vec4::X * 0.5),
        (P::SheenRoughness, Vec4::X * 0.3),
    ] {
        *pbr.get_mut(p) = PbrValue::stored(v);
    }
    pbr
}

#[test]
fn pbr_materials_write_khr_extensions_and_read_back() {
    use crate::scene::{PbrProperty as P, ShadingModel};
    let mut s = mapped_triangle(Vec::new());
    s.materials[0].pbr = Some(pbr_material(ShadingModel::OpenPbr));
    let file = write(&s, &WriteOptions::default()).unwrap();
    let (json, _) = super::glb::split(&file.main).unwrap();
    let v: serde_json::Value = serde_json::from_slice(json).unwrap();
    let m = &v["materials"][0];
    let close = |a: &serde_json::Value, b: f64| (a.as_f64().unwrap() - b).abs() < 1e-6;
    let pbr = &m["pbrMetallicRoughness"];
    // Hand-computed: base × factor = (0.4, 0.2, 0), alpha = opacity 0.5 (BLEND).
    for (i, want) in [0.4, 0.2, 0.0, 0.5].into_iter().enumerate() {
        assert!(close(&pbr["baseColorFactor"][i], want), "{pbr}");
    }
    assert_eq!(m["alphaMode"], "BLEND");
    assert!(close(&pbr["metallicFactor"], 0.25) && close(&pbr["roughnessFactor"], 0.6));
    // Emission (4, 2, 0): factor (1, 0.5, 0), strength 4.
    let x = &m["extensions"];
    assert!(close(&m["emissiveFactor"][1], 0.5), "{m}");
    assert!(close(&x["KHR_materials_emissive_strength"]["emissiveStrength"], 4.0));
    assert!(close(&x["KHR_materials_ior"]["ior"], 1.33));
    assert!(close(&x["KHR_materials_specular"]["specularFactor"], 0.5));
    assert!(close(&x["KHR_materials_transmission"]["transmissionFactor"], 0.2));
    assert!(close(&x["KHR_materials_clearcoat"]["clearcoatFactor"], 0.75));
    assert!(close(&x["KHR_materials_clearcoat"]["clearcoatRoughnessFactor"], 0.1));
    assert!(close(&x["KHR_materials_sheen"]["sheenColorFactor"][0], 0.25));
    assert!(close(&x["KHR_materials_sheen"]["sheenRoughnessFactor"], 0.3));
    let used: Vec<&str> =
        v["extensionsUsed"].as_array().unwrap().iter().filter_map(|e| e.as_str()).collect();
    for e in x.as_object().unwrap().keys() {
        assert!(used.contains(&e.as_str()), "{e} not in extensionsUsed {used:?}");
    }
    assert!(v["extensionsRequired"].is_null());
    // Read back: the same values, as a glTF material (base factor folded into the colour,
    // emission factor the strength, sheen factor 1 with the colour scaled).
    let back = read_glb(&file.main);
    let got = back.materials[0].pbr.as_ref().expect("PBR values read back");
    assert_eq!(got.model, ShadingModel::Gltf);
    let near = |a: glam::Vec3, b: glam::Vec3| (a - b).abs().max_element() < 1e-6;
    assert!(near(got.base_color(), glam::Vec3::new(0.4, 0.2, 0.0)));
    assert!(near(got.emission(), glam::Vec3::new(4.0, 2.0, 0.0)));
    for (p, want) in [
        (P::Metalness, 0.25),
        (P::Roughness, 0.6),
        (P::Opacity, 0.5),
        (P::SpecularIor, 1.33),
        (P::SpecularFactor, 0.5),
        (P::TransmissionFactor, 0.2),
        (P::CoatFactor, 0.75),
        (P::CoatRoughness, 0.1),
        (P::SheenRoughness, 0.3),
    ] {
        assert!((got.get(p).scalar() - want).abs() < 1e-6, "{}", p.name());
    }
    // Written again, the read-back scene gives the same material.
    let again = write(&back, &WriteOptions::default()).unwrap();
    let (json2, _) = super::glb::split(&again.main).unwrap();
    let v2: serde_json::Value = serde_json::from_slice(json2).unwrap();
    assert_eq!(v2["materials"][0], v["materials"][0]);
}

#[test]
fn phong_and_plain_gltf_materials_take_no_pbr_path() {
    // A Phong-model Pbr is ignored by the writer (no extension), and a plain glTF material
    // (metallic 0, no extension) reads back without PBR values.
    let mut s = mapped_triangle(Vec::new());
    s.materials[0].pbr = Some(pbr_material(crate::scene::ShadingModel::Phong));
    let with = write(&s, &WriteOptions::default()).unwrap();
    s.materials[0].pbr = None;
    let without = write(&s, &WriteOptions::default()).unwrap();
    assert_eq!(with.main, without.main);
    assert!(read_glb(&without.main).materials[0].pbr.is_none());
}

/// The JSON chunk of a GLB.
fn glb_json(glb: &[u8]) -> serde_json::Value {
    let len = u32::from_le_bytes(glb[12..16].try_into().unwrap()) as usize;
    serde_json::from_slice(&glb[20..20 + len]).unwrap()
}

#[test]
fn morph_deltas_are_sparse_where_that_is_fewer_bytes() {
    // "lift" moves vertex 0 only and has no normal deltas; "all" moves every vertex and its
    // normals. glTF 2.0 §3.6.2.3: a sparse accessor over zeros holds "lift" (one u8 index,
    // 4 bytes padded, and one VEC3: 16 bytes, against 36 dense); its zero normals too (one
    // element at least, §5.1.6: vertex 0's zero); "all" stays dense.
    let mut s = skinned_morph_scene();
    let all = vec![DVec3::new(0.0, 0.0, 2.0), DVec3::new(0.0, 1.0, 0.0), DVec3::new(1.0, 0.0, 0.0)];
    s.meshes[0].morph_targets.push(MorphTarget {
        name: "all".into(),
        position_deltas: all.clone(),
        normal_deltas: Some(vec![glam::Vec3::X; 3]),
        ..MorphTarget::default()
    });
    let file = write(&s, &WriteOptions::default()).unwrap();
    let j = glb_json(&file.main);
    let targets = &j["meshes"][0]["primitives"][0]["targets"];
    let acc = |t: usize, a: &str| &j["accessors"][targets[t][a].as_u64().unwrap() as usize];
    let lift = acc(0, "POSITION");
    assert!(lift.get("bufferView").is_none(), "{lift}");
    assert_eq!(lift["sparse"]["count"], 1);
    assert_eq!(lift["sparse"]["indices"]["componentType"], 5121);
    assert_eq!(lift["min"], serde_json::json!([0.0, 0.0, 0.0]));
    assert_eq!(lift["max"], serde_json::json!([0.0, 0.0, 1.0]));
    let zero_normals = acc(0, "NORMAL");
    assert!(zero_normals.get("bufferView").is_none());
    assert_eq!(zero_normals["sparse"]["count"], 1);
    assert_eq!(zero_normals["count"], 3);
    assert!(acc(1, "POSITION").get("bufferView").is_some());
    assert!(acc(1, "POSITION").get("sparse").is_none());
    // Read back: every delta as it was.
    let back = read_glb(&file.main);
    let mesh = back.meshes.iter().find(|m| m.morph_targets.len() == 2).unwrap();
    assert_eq!(mesh.morph_targets[0].position_deltas, vec![DVec3::Z, DVec3::ZERO, DVec3::ZERO]);
    assert_eq!(mesh.morph_targets[1].position_deltas, all);
    let zero = Some(vec![glam::Vec3::ZERO; 3]);
    assert!(
        mesh.morph_targets[0].normal_deltas.is_none()
            || mesh.morph_targets[0].normal_deltas == zero
    );
}

#[test]
fn tolerance_bounds_the_error_between_frames_and_looser_writes_fewer_keys() {
    // The triangle (rest bounding box: largest coordinate 1, so the scene size is 1) moves
    // along a TCB path over 5 units and turns 3 rad about Z in 20 frames: both resampled.
    // Each part is within the tolerance of its own measure (docs/gltf.md, Animation): the
    // rotation's at the scene size (1), the translation's at the farthest coordinate it
    // reaches (5), so a vertex is within 6 × the tolerance, between frames too.
    let mut s = triangle_scene();
    s.meta.axes = AxisSystem::Y_UP_RIGHT_HANDED;
    s.nodes[0].transform.translation = DVec3::ZERO;
    let tcb = Interpolation::Tcb(crate::anim::Tcb::default());
    let key = |frame: f64, value: DVec3| Key { frame, value, interpolation: tcb.clone() };
    let keys = vec![
        key(0.0, DVec3::ZERO),
        key(10.0, DVec3::X * 5.0),
        key(20.0, DVec3::new(5.0, 5.0, 0.0)),
    ];
    let tcb_rot = |frame: f64, a: f64| Key {
        frame,
        value: DQuat::from_rotation_z(a),
        interpolation: Interpolation::Tcb(crate::anim::Tcb::default()),
    };
    let rot = vec![tcb_rot(0.0, 0.0), tcb_rot(8.0, 1.0), tcb_rot(20.0, 3.0)];
    s.animations.push(Animation {
        name: "take".into(),
        fps: 30.0,
        frame_range: (0.0, 20.0),
        channels: vec![
            Channel { node: 0, target: ChannelTarget::Translation(Track::new(keys)) },
            Channel {
                node: 0,
                target: ChannelTarget::Rotation(crate::anim::RotationTrack::Quat(Track::new(rot))),
            },
        ],
    });
    let mut counts = Vec::new();
    for tolerance in [1e-4, 1e-2] {
        let opts = WriteOptions { tolerance, ..WriteOptions::default() };
        let file = write(&s, &opts).unwrap();
        let j = glb_json(&file.main);
        let keys: u64 = j["animations"][0]["samplers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|sm| {
                j["accessors"][sm["input"].as_u64().unwrap() as usize]["count"].as_u64().unwrap()
            })
            .sum();
        counts.push(keys);
        let back = read_glb(&file.main);
        let m = back.nodes.iter().position(|n| n.mesh.is_some()).unwrap();
        for q in 0..=80 {
            let f = f64::from(q) / 4.0;
            let want = s.evaluate(Some(0), Time::Frame(f)).world_positions(&s, 0);
            let got = back.evaluate(Some(0), Time::Seconds(f / 30.0)).world_positions(&back, m);
            for (g, w) in got.iter().zip(&want) {
                let bound = 6.0 * tolerance;
                assert!((*g - *w).length() <= bound, "{tolerance}: frame {f}: {g} vs {w}");
            }
        }
    }
    assert!(counts[1] * 2 < counts[0], "keys at 1e-4 and 1e-2: {counts:?}");
    let bad = WriteOptions { tolerance: 0.0, ..WriteOptions::default() };
    assert!(write(&s, &bad).unwrap_err().to_string().contains("tolerance 0"));
}

#[test]
fn visible_only_leaves_out_meshes_hidden_throughout() {
    // Three triangles: "shown"; "hidden" (hidden, no animation shows it); "appears" (hidden
    // at rest, a hide track shows it at frame 5). Only "hidden"'s mesh is left out.
    let mut s = triangle_scene();
    for name in ["hidden", "appears"] {
        let mut n = s.nodes[0].clone();
        n.name = name.into();
        n.hidden = true;
        n.children.clear();
        s.nodes.push(n);
        let i = s.nodes.len() - 1;
        s.attach(i, None);
    }
    s.nodes[0].name = "shown".into();
    let key = |frame: f64, value: bool| Key { frame, value, interpolation: Interpolation::Step };
    s.animations.push(Animation {
        name: "take".into(),
        fps: 30.0,
        frame_range: (0.0, 10.0),
        channels: vec![Channel {
            node: 2,
            target: ChannelTarget::Hidden(Track::new(vec![key(0.0, true), key(5.0, false)])),
        }],
    });
    let mesh_of = |j: &serde_json::Value, name: &str| {
        let nodes = j["nodes"].as_array().unwrap();
        nodes.iter().find(|n| n["name"] == name).unwrap().get("mesh").is_some()
    };
    let all = write(&s, &WriteOptions::default()).unwrap();
    let j = glb_json(&all.main);
    assert!(mesh_of(&j, "shown") && mesh_of(&j, "hidden") && mesh_of(&j, "appears"));
    let opts = WriteOptions { visible_only: true, ..WriteOptions::default() };
    let some = write(&s, &opts).unwrap();
    let j = glb_json(&some.main);
    assert!(mesh_of(&j, "shown") && !mesh_of(&j, "hidden") && mesh_of(&j, "appears"));
    let w: Vec<String> = some.warnings.iter().map(ToString::to_string).collect();
    assert!(w.iter().any(|w| w.contains("\"hidden\"") && w.contains("--visible-only")), "{w:?}");
    assert_eq!(w.len(), 1, "{w:?}");
}

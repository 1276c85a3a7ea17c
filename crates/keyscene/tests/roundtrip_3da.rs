//! 3DA low level: write → read → write is byte-identical for random files (both track-header
//! variants); a hand-built valid file checks clean; truncated, flipped and re-pointed files
//! never panic or hang, and `check` reports them.
#![cfg(feature = "three_da")]

use keyscene::formats::three_da::layout::{
    entity_type, make_name, BezierKey, Extents, LinearKey, Material, TcbKey, VBlend, Variant,
    NO_PARENT,
};
use keyscene::formats::three_da::model::{
    Entity, EulerTrack, File, FloatTrack, KeyTrack, RotTrack, Surface, VecTrack, IDENTITY,
};
use keyscene::formats::three_da::{check, read, write};
use keyscene::limits::Limits;
use proptest::prelude::*;

fn vec_track(frames: &[u32]) -> VecTrack {
    VecTrack::Tcb(KeyTrack {
        current: [0.0; 3],
        keys: frames
            .iter()
            .map(|&f| TcbKey { frame: f, value: [f as f32, 1.0, 2.0], ..TcbKey::default() })
            .collect(),
    })
}

/// A valid two-entity file: a mesh with one quad (list + strip) and a helper child with an
/// EULER rotation.
fn sample() -> File {
    let mut mesh = Entity::new(entity_type::MESH, "Box01");
    mesh.num_children = 1;
    mesh.position = Some(vec_track(&[0, 10]));
    mesh.rotation = Some(RotTrack::Linear(KeyTrack {
        current: [0.0, 0.0, 0.0, 1.0],
        keys: vec![LinearKey { frame: 0, value: [0.0, 0.0, 0.0, 1.0] }],
    }));
    mesh.scale = Some(VecTrack::Bezier(KeyTrack {
        current: [1.0; 3],
        keys: vec![BezierKey { frame: 0, in_tan: [0.0; 3], out_tan: [0.0; 3], value: [1.0; 3] }],
    }));
    mesh.surfaces.push(Surface {
        material_idx: 0,
        tri_list: vec![0, 1, 2, 2, 1, 3],
        tri_strip: vec![0, 1, 2, 3],
        s_size: 4,
        xyz: Some(vec![[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 1.0, 0.0]]),
        normal: Some(vec![[0.0, 0.0, 1.0]; 4]),
        color: Some(vec![0xFFFF_FFFF; 4]),
        texcoord: [Some(vec![[0.0, 0.0]; 4]), None, None, None],
        ..Surface::default()
    });
    mesh.bounds = Extents { min: [0.0; 3], max: [1.0, 1.0, 0.0] };
    let mut helper = Entity::new(entity_type::HELPER, "Dummy01");
    helper.parent_idx = 0;
    helper.position = Some(vec_track(&[0]));
    let lin = |v: f32| {
        FloatTrack::Linear(KeyTrack { current: v, keys: vec![LinearKey { frame: 0, value: v }] })
    };
    helper.rotation = Some(RotTrack::Euler(Box::new(EulerTrack {
        num_keys: 1,
        x: lin(0.1),
        y: lin(0.2),
        z: FloatTrack::Tcb(KeyTrack {
            current: 0.3,
            keys: vec![TcbKey { frame: 0, value: 0.3, ..TcbKey::default() }],
        }),
        rot_order: [0, 1, 2],
        current: [0.0, 0.0, 0.0, 1.0],
    })));
    helper.scale = Some(vec_track(&[0]));
    File {
        frames: 11,
        num_faces: 2,
        num_vertices: 4,
        bounds: Extents { min: [0.0; 3], max: [1.0, 1.0, 0.0] },
        materials: vec![Material { name: make_name("stone.mat"), ..Material::default() }],
        entities: vec![mesh, helper],
        ..File::default()
    }
}

#[test]
fn sample_file_checks_clean_in_both_variants() {
    for variant in [Variant::Padded, Variant::Packed] {
        let f = File { variant, ..sample() };
        let bytes = write(&f).unwrap();
        assert_eq!(&bytes[..4], b"3DA_");
        let report = check(&bytes);
        assert_eq!(report.variant, Some(variant));
        assert!(report.issues.is_empty(), "{variant:?}: {:#?}", report.issues);
        let (back, warnings) = read(&bytes, &Limits::default()).unwrap();
        assert!(warnings.is_empty());
        assert_eq!(back, f);
    }
}

#[test]
fn wrong_id_and_version_are_clear_errors() {
    let mut bytes = write(&sample()).unwrap();
    bytes[4] = 0x08;
    let e = read(&bytes, &Limits::default()).unwrap_err().to_string();
    assert!(e.contains("version 0x208"), "{e}");
    bytes[0] = b'X';
    let e = read(&bytes, &Limits::default()).unwrap_err().to_string();
    assert!(e.contains("not a 3DA file"), "{e}");
}

fn u32_at(b: &[u8], off: usize) -> u32 {
    u32::from_le_bytes(b[off..off + 4].try_into().unwrap())
}

fn set_u32(b: &mut [u8], off: usize, v: u32) {
    b[off..off + 4].copy_from_slice(&v.to_le_bytes());
}

fn has_error_at(b: &[u8], offset: u64, needle: &str) -> bool {
    check(b).errors().any(|i| i.offset == offset && i.message.contains(needle))
}

#[test]
fn offsets_pointed_at_themselves_or_out_of_range_are_reported() {
    let bytes = write(&sample()).unwrap();
    let e0 = u32_at(&bytes, 32) as usize;
    // Entity next_offset pointing at the entity itself: a cycle.
    let mut b = bytes.clone();
    set_u32(&mut b, e0 + 148, e0 as u32);
    assert!(has_error_at(&b, (e0 + 148) as u64, "cyclic"), "{:#?}", check(&b).issues);
    // Surface next_offset at itself, with num_surfaces raised to 2.
    let s0 = u32_at(&bytes, e0 + 64) as usize;
    let mut b = bytes.clone();
    set_u32(&mut b, e0 + 68, 2);
    set_u32(&mut b, s0 + 64, s0 as u32);
    assert!(has_error_at(&b, (s0 + 64) as u64, "cyclic"), "{:#?}", check(&b).issues);
    // Position track past the end.
    let mut b = bytes.clone();
    set_u32(&mut b, e0 + 72, bytes.len() as u32);
    assert!(has_error_at(&b, (e0 + 72) as u64, "past the end"), "{:#?}", check(&b).issues);
    // xyz stream into the header.
    let mut b = bytes.clone();
    set_u32(&mut b, s0 + 20, 8);
    assert!(has_error_at(&b, (s0 + 20) as u64, "header"), "{:#?}", check(&b).issues);
    // Rotation track pointing at the entity record itself: a bad track id.
    let mut b = bytes.clone();
    set_u32(&mut b, e0 + 76, e0 as u32);
    assert!(check(&b).has_errors());
}

#[test]
fn huge_counts_are_refused_before_allocating() {
    let bytes = write(&sample()).unwrap();
    let e0 = u32_at(&bytes, 32) as usize;
    let pos = u32_at(&bytes, e0 + 72) as usize;
    for (field, value) in
        [(8usize, u32::MAX), (20, i32::MAX as u32), (e0 + 68, u32::MAX), (pos + 8, i32::MAX as u32)]
    {
        let mut b = bytes.clone();
        set_u32(&mut b, field, value);
        let r = check(&b);
        assert!(
            r.errors().any(|i| i.message.contains("exceed") || i.message.contains("past the end")),
            "field {field:#x}: {:#?}",
            r.issues
        );
        assert!(read(&b, &Limits::default()).is_err());
    }
    let s0 = u32_at(&bytes, e0 + 64) as usize;
    let mut b = bytes.clone();
    set_u32(&mut b, s0 + 60, u32::MAX);
    assert!(check(&b).has_errors());
}

#[test]
fn content_violations_are_reported_with_offsets() {
    let base = sample();
    let bytes = |f: &File| write(f).unwrap();
    // Parent not before child.
    let mut f = base.clone();
    f.entities[0].parent_idx = 1;
    f.entities[0].num_children = 0;
    let b = bytes(&f);
    let e0 = u32_at(&b, 32) as u64;
    assert!(has_error_at(&b, e0 + 60, "not before"), "{:#?}", check(&b).issues);
    // Child count wrong.
    let mut f = base.clone();
    f.entities[0].num_children = 3;
    let b = bytes(&f);
    assert!(has_error_at(&b, e0 + 62, "num_children"));
    // Index ≥ s_size.
    let mut f = base.clone();
    f.entities[0].surfaces[0].tri_list[4] = 9;
    let b = bytes(&f);
    let s0 = u32_at(&b, e0 as usize + 64) as usize;
    let list = u32_at(&b, s0 + 4) as u64;
    assert!(has_error_at(&b, list + 8, "s_size"), "{:#?}", check(&b).issues);
    // Strip with the wrong winding.
    let mut f = base.clone();
    f.entities[0].surfaces[0].tri_strip = vec![1, 0, 2, 3];
    assert!(check(&bytes(&f)).errors().any(|i| i.message.contains("differ")));
    // Frames not increasing.
    let mut f = base.clone();
    f.entities[0].position = Some(vec_track(&[5, 5]));
    assert!(check(&bytes(&f)).errors().any(|i| i.message.contains("frames must increase")));
    // PRS track without keys, and missing.
    let mut f = base.clone();
    f.entities[1].scale = Some(vec_track(&[]));
    f.entities[0].scale = None;
    let r = check(&bytes(&f));
    assert!(r.errors().any(|i| i.message.contains("no keys")));
    assert!(r.errors().any(|i| i.message.contains("missing")));
    // Blend weights.
    let mut f = base.clone();
    f.entities[0].type_id = entity_type::MESH_SKINNED;
    f.entities[0].surfaces[0].blending =
        Some(vec![VBlend { bone_idx: [1, 0, 0, 0], weight: [32767, 0, 0, 0] }; 4]);
    assert!(check(&bytes(&f)).errors().any(|i| i.message.contains("32768")));
    // Name without NUL.
    let mut f = base.clone();
    f.entities[1].name = [b'x'; 32];
    assert!(check(&bytes(&f)).errors().any(|i| i.message.contains("NUL")));
}

#[test]
fn every_truncation_is_an_error_and_no_flip_panics() {
    let bytes = write(&sample()).unwrap();
    for cut in 0..bytes.len() {
        let r = check(&bytes[..cut]);
        assert!(r.has_errors(), "cut at {cut} not reported");
        assert!(read(&bytes[..cut], &Limits::default()).is_err());
    }
    for at in 0..bytes.len() {
        for bit in [0x01u8, 0x80, 0xFF] {
            let mut b = bytes.clone();
            b[at] ^= bit;
            let r = check(&b);
            if read(&b, &Limits::default()).is_err() {
                assert!(r.has_errors(), "flip at {at}: read fails but check is clean");
            }
        }
    }
}

// ---- property tests ----

fn name() -> impl Strategy<Value = [u8; 32]> {
    prop_oneof![any::<[u8; 32]>(), "[A-Za-z0-9_]{0,31}".prop_map(|s| make_name(&s))]
}

fn f3() -> impl Strategy<Value = [f32; 3]> {
    any::<[f32; 3]>()
}

fn extents() -> impl Strategy<Value = Extents> {
    (f3(), f3()).prop_map(|(min, max)| Extents { min, max })
}

fn tcb<V: Arbitrary + Copy + std::fmt::Debug>() -> impl Strategy<Value = TcbKey<V>> {
    (any::<u32>(), any::<[f32; 5]>(), any::<V>(), any::<V>(), any::<V>()).prop_map(
        |(frame, p, value, in_tan, out_tan)| TcbKey {
            frame,
            tension: p[0],
            continuity: p[1],
            bias: p[2],
            ease_in: p[3],
            ease_out: p[4],
            value,
            in_tan,
            out_tan,
        },
    )
}

fn keys<K, V: std::fmt::Debug>(
    cur: impl Strategy<Value = V>,
    k: impl Strategy<Value = K>,
) -> impl Strategy<Value = KeyTrack<K>>
where
    K: keyscene::formats::three_da::layout::KeyRecord<V = V>,
{
    (cur, prop::collection::vec(k, 0..4)).prop_map(|(current, keys)| KeyTrack { current, keys })
}

fn vec_tr() -> impl Strategy<Value = VecTrack> {
    prop_oneof![
        keys(f3(), tcb::<[f32; 3]>()).prop_map(VecTrack::Tcb),
        keys(f3(), (any::<i32>(), f3()).prop_map(|(frame, value)| LinearKey { frame, value }))
            .prop_map(VecTrack::Linear),
        keys(
            f3(),
            (any::<i32>(), f3(), f3(), f3()).prop_map(|(frame, in_tan, out_tan, value)| {
                BezierKey { frame, in_tan, out_tan, value }
            })
        )
        .prop_map(VecTrack::Bezier),
    ]
}

fn float_tr() -> impl Strategy<Value = FloatTrack> {
    prop_oneof![
        keys(any::<f32>(), tcb::<f32>()).prop_map(FloatTrack::Tcb),
        keys(
            any::<f32>(),
            (any::<i32>(), any::<f32>()).prop_map(|(frame, value)| LinearKey { frame, value })
        )
        .prop_map(FloatTrack::Linear),
        keys(
            any::<f32>(),
            any::<(i32, f32, f32, f32)>().prop_map(|(frame, in_tan, out_tan, value)| BezierKey {
                frame,
                in_tan,
                out_tan,
                value
            })
        )
        .prop_map(FloatTrack::Bezier),
    ]
}

fn rot_tr() -> impl Strategy<Value = RotTrack> {
    let q = any::<[f32; 4]>;
    prop_oneof![
        keys(q(), tcb::<[f32; 4]>()).prop_map(RotTrack::Tcb),
        keys(q(), (any::<i32>(), q()).prop_map(|(frame, value)| LinearKey { frame, value }))
            .prop_map(RotTrack::Linear),
        (any::<i32>(), float_tr(), float_tr(), float_tr(), any::<[u32; 3]>(), q()).prop_map(
            |(num_keys, x, y, z, rot_order, current)| {
                RotTrack::Euler(Box::new(EulerTrack { num_keys, x, y, z, rot_order, current }))
            }
        ),
    ]
}

fn stream<T: std::fmt::Debug>(
    n: usize,
    t: impl Strategy<Value = T>,
) -> impl Strategy<Value = Option<Vec<T>>> {
    prop::option::of(prop::collection::vec(t, n))
}

fn surface() -> impl Strategy<Value = Surface> {
    (0usize..5).prop_flat_map(|n| {
        let uv = || stream(n, any::<[f32; 2]>());
        (
            any::<i32>(),
            prop::collection::vec(any::<u16>(), 0..8),
            prop::collection::vec(any::<u16>(), 0..8),
            (stream(n, f3()), stream(n, f3()), stream(n, any::<u32>()), stream(n, f3())),
            (uv(), uv(), uv(), uv(), uv()),
            stream(
                n,
                any::<([u8; 4], [u16; 4])>()
                    .prop_map(|(bone_idx, weight)| VBlend { bone_idx, weight }),
            ),
        )
            .prop_map(
                move |(
                    material_idx,
                    tri_list,
                    tri_strip,
                    (xyz, tangent, color, normal),
                    (t0, t1, t2, t3, lightmap),
                    blending,
                )| Surface {
                    material_idx,
                    tri_list,
                    tri_strip,
                    s_size: n as u32,
                    xyz,
                    tangent,
                    color,
                    normal,
                    texcoord: [t0, t1, t2, t3],
                    lightmap,
                    blending,
                },
            )
    })
}

fn entity() -> impl Strategy<Value = Entity> {
    (
        (
            any::<u32>(),
            name(),
            extents(),
            any::<u16>(),
            any::<u16>(),
            prop_oneof![Just(IDENTITY), any::<[f32; 16]>()],
        ),
        prop::collection::vec(surface(), 0..3),
        (prop::option::of(vec_tr()), prop::option::of(rot_tr()), prop::option::of(vec_tr())),
    )
        .prop_map(
            |(
                (type_id, name, bounds, parent_idx, num_children, bone_init_tm),
                surfaces,
                (position, rotation, scale),
            )| Entity {
                type_id,
                name,
                bounds,
                parent_idx,
                num_children,
                bone_init_tm,
                surfaces,
                position,
                rotation,
                scale,
            },
        )
}

fn material() -> impl Strategy<Value = Material> {
    (name(), any::<[u32; 4]>(), any::<i32>(), any::<[f32; 16]>(), any::<(f32, i32)>()).prop_map(
        |(n, map_channel, num_maps, c, (specular_pow, flags))| Material {
            name: n,
            map_name: [n, [0; 32], n, [7; 32]],
            map_channel,
            num_maps,
            ambient: [c[0], c[1], c[2], c[3]],
            diffuse: [c[4], c[5], c[6], c[7]],
            specular: [c[8], c[9], c[10], c[11]],
            emissive: [c[12], c[13], c[14], c[15]],
            specular_pow,
            flags,
        },
    )
}

fn file() -> impl Strategy<Value = File> {
    (
        prop_oneof![Just(Variant::Padded), Just(Variant::Packed)],
        any::<(u32, i32, i32, u32)>(),
        extents(),
        prop::collection::vec(material(), 0..3),
        prop::collection::vec(entity(), 0..4),
        prop::option::of(prop::collection::vec(any::<u8>(), 0..24)),
    )
        .prop_map(
            |(
                variant,
                (frames, num_faces, num_vertices, colmap_id),
                bounds,
                materials,
                entities,
                colmap,
            )| File {
                variant,
                frames,
                num_faces,
                num_vertices,
                bounds,
                colmap_id,
                materials,
                entities,
                colmap,
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn write_read_write_is_byte_identical(f in file()) {
        let a = write(&f).unwrap();
        let (back, _) = read(&a, &Limits::default()).unwrap();
        let b = write(&back).unwrap();
        prop_assert_eq!(&a, &b);
        prop_assert_eq!(back.entities.len(), f.entities.len());
    }

    #[test]
    fn corrupted_files_never_panic(f in file(), cuts in prop::collection::vec(any::<prop::sample::Index>(), 64),
                                   flips in prop::collection::vec((any::<prop::sample::Index>(), 1u8..=255), 1..16)) {
        let a = write(&f).unwrap();
        let colmap_at = u32_at(&a, 64) as usize;
        let structured_end = if colmap_at == 0 { a.len() } else { colmap_at };
        for cut in &cuts {
            let at = cut.index(a.len());
            let r = check(&a[..at]);
            if at < structured_end {
                prop_assert!(r.has_errors(), "cut at {} of {} not reported", at, a.len());
            }
        }
        let mut b = a.clone();
        for (i, x) in &flips {
            let at = i.index(b.len());
            b[at] ^= x;
        }
        let r = check(&b);
        if read(&b, &Limits::default()).is_err() {
            prop_assert!(r.has_errors());
        }
    }
}

#[test]
fn root_parent_is_ffff() {
    assert_eq!(Entity::new(entity_type::HELPER, "x").parent_idx, NO_PARENT);
}

//! Hand-built scenes shared by the glTF tests.
#![allow(dead_code)]

use std::path::Path;

use glam::{DVec3, Vec2, Vec3};
use keyscene::anim::{
    Animation, AxisAngle, Channel, ChannelTarget, Interpolation, Key, RotationTrack, Tcb, Track,
};
use keyscene::scene::{
    Attribute, AxisSystem, Camera, FovAxis, Light, LightKind, MapSlot, Mapping, Material, Mesh,
    Node, NodeKind, Scene, TextureMap, UvSet, UvTransform,
};

/// A 1×1 white PNG.
const PNG_1X1: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

/// A Z-up scene with every feature the writer handles: hierarchy, a dummy, instancing with
/// different geometry transforms, quads and a concave n-gon, smoothing groups, UVs, two
/// materials (one textured, PNG, with a bump map), a TGA texture (left out of GLB), a targeted camera and
/// spotlight, a point light, an ambient light, TCB and relative-rotation animation including a
/// key that scales to zero, and a hidden node.
pub fn feature_scene(textures: &Path) -> Scene {
    let png = textures.join("white.png");
    std::fs::write(&png, keyscene::formats::gltf::base64::decode(PNG_1X1).unwrap()).unwrap();
    let tga = textures.join("old.tga");
    std::fs::write(&tga, [0u8; 18]).unwrap();
    let mut s = Scene::default();
    s.meta.format = "3ds".into();
    s.meta.axes = AxisSystem::Z_UP_RIGHT_HANDED;
    let map = |file: &str, resolved: &Path| TextureMap {
        slot: MapSlot::Diffuse,
        file: file.into(),
        resolved: Some(resolved.into()),
        embedded: None,
        strength: 1.0,
        uv_transform: UvTransform::default(),
        flags: 0,
        wrap: Default::default(),
    };
    s.materials.push(Material {
        name: "Textured".into(),
        shininess: 0.4,
        transparency: 0.25,
        two_sided: true,
        // The bump map (a normalTexture with MikkTSpace TANGENTs; the UVs, all at v = 0.5,
        // are degenerate, so tangents take the fallback) is mirror-tiled once: lib3ds
        // MIRROR | NO_TILE.
        maps: vec![
            map("WHITE.PNG", &png),
            TextureMap { slot: MapSlot::Bump, flags: 0x12, ..map("WHITE.PNG", &png) },
        ],
        ..Material::default()
    });
    s.materials.push(Material {
        name: "Tga".into(),
        maps: vec![map("OLD.TGA", &tga)],
        ..Material::default()
    });
    // A quad, a triangle and a concave pentagon.
    let positions = vec![
        DVec3::new(0.0, 0.0, 0.0),
        DVec3::new(2.0, 0.0, 0.0),
        DVec3::new(2.0, 2.0, 0.0),
        DVec3::new(0.0, 2.0, 0.0),
        DVec3::new(1.0, 1.0, 2.0),
        DVec3::new(4.0, 0.0, 0.0),
        DVec3::new(4.0, 4.0, 0.0),
        DVec3::new(3.0, 1.0, 0.0),
    ];
    let polys: Vec<Vec<u32>> = vec![vec![0, 1, 2, 3], vec![0, 1, 4], vec![1, 5, 6, 7, 2]];
    let mut starts = vec![0u32];
    for p in &polys {
        starts.push(starts.last().unwrap() + p.len() as u32);
    }
    let n = positions.len();
    s.meshes.push(Mesh {
        name: "Shape".into(),
        positions,
        polygon_starts: starts,
        corner_vertices: polys.concat(),
        uv_sets: vec![UvSet {
            name: String::new(),
            uvs: Attribute {
                values: (0..n).map(|i| Vec2::new(i as f32 / 8.0, 0.5)).collect(),
                mapping: Mapping::PerVertex,
            },
        }],
        smoothing_groups: Some(vec![1, 1, 0]),
        polygon_materials: vec![0, 1, 0],
        material_slots: vec![Some(0), Some(1)],
        ..Mesh::default()
    });
    let add = |s: &mut Scene, node: Node, parent: Option<usize>| {
        s.nodes.push(node);
        let id = s.nodes.len() - 1;
        s.attach(id, parent);
        id
    };
    let mut dummy = Node::new("$$$DUMMY", NodeKind::Null);
    dummy.instance = "Group".into();
    let dummy = add(&mut s, dummy, None);
    let mut a = Node::new("Shape", NodeKind::Mesh);
    a.instance = "01".into();
    a.mesh = Some(0);
    a.set_geometry_transform(glam::DMat4::from_translation(DVec3::new(-1.0, -1.0, 0.0)));
    let a = add(&mut s, a, Some(dummy));
    let mut b = Node::new("Shape", NodeKind::Mesh);
    b.instance = "02".into();
    b.mesh = Some(0);
    b.hidden = true;
    b.transform.translation = DVec3::new(5.0, 0.0, 0.0);
    let _b = add(&mut s, b, Some(a));
    s.cameras.push(Camera {
        roll_degrees: 10.0,
        far: Some(1000.0),
        ..Camera::new("Cam", 60.0, FovAxis::Horizontal)
    });
    let mut cam = Node::new("Cam", NodeKind::Camera(0));
    cam.transform.translation = DVec3::new(0.0, -20.0, 5.0);
    let cam = add(&mut s, cam, None);
    let target =
        add(&mut s, Node::new("Cam.Target", NodeKind::CameraTarget { camera: Some(cam) }), None);
    s.cameras[0].target = Some(target);
    let light = |name: &str, kind, target| Light {
        name: name.into(),
        kind,
        color: Vec3::new(1.0, 0.9, 0.8),
        intensity: 1.0,
        hotspot_degrees: 30.0,
        falloff_degrees: 200.0,
        attenuation: Some((1.0, 50.0)),
        on: true,
        target,
        roll_degrees: 0.0,
    };
    s.lights.push(light("Spot", LightKind::Spot, Some(dummy)));
    s.lights.push(light("Omni", LightKind::Point, None));
    s.lights.push(light("Amb", LightKind::Ambient, None));
    let mut spot = Node::new("Spot", NodeKind::Light(0));
    spot.transform.translation = DVec3::new(10.0, 10.0, 10.0);
    add(&mut s, spot, None);
    add(&mut s, Node::new("Omni", NodeKind::Light(1)), Some(dummy));
    add(&mut s, Node::new("Amb", NodeKind::Ambient), None);
    let tcb = Tcb { tension: 0.2, continuity: -0.3, bias: 0.5, ease_to: 0.5, ease_from: 0.2 };
    let key =
        |frame: f64, value: DVec3| Key { frame, value, interpolation: Interpolation::Tcb(tcb) };
    let rkey = |frame: f64, angle: f64, axis: DVec3| Key {
        frame,
        value: AxisAngle { angle, axis },
        interpolation: Interpolation::Tcb(tcb),
    };
    s.animations.push(Animation {
        name: String::new(),
        fps: 30.0,
        frame_range: (0.0, 40.0),
        channels: vec![
            Channel {
                node: dummy,
                target: ChannelTarget::Translation(Track::new(vec![
                    key(0.0, DVec3::ZERO),
                    key(20.0, DVec3::new(3.0, 1.0, 0.0)),
                    key(40.0, DVec3::new(0.0, 4.0, 2.0)),
                ])),
            },
            Channel {
                node: a,
                target: ChannelTarget::Rotation(RotationTrack::Relative(Track::new(vec![
                    rkey(0.0, 0.0, DVec3::Z),
                    rkey(20.0, 5.0, DVec3::new(0.0, 0.0, 2.0)),
                    rkey(20.0, 1.0, DVec3::X),
                    rkey(40.0, -3.0, DVec3::new(1.0, 1.0, 0.0)),
                ]))),
            },
            Channel {
                node: a,
                target: ChannelTarget::Scale(Track::new(vec![
                    key(0.0, DVec3::ONE),
                    key(30.0, DVec3::new(0.0, 1.0, 1.0)),
                    key(40.0, DVec3::splat(2.0)),
                ])),
            },
            Channel {
                node: cam,
                target: ChannelTarget::Translation(Track::new(vec![
                    key(0.0, DVec3::new(0.0, -20.0, 5.0)),
                    key(40.0, DVec3::new(20.0, 0.0, 5.0)),
                ])),
            },
        ],
    });
    s
}

/// [`feature_scene`] with PBR materials (issue 33 §1): the textured material an OpenPBR one
/// using every `KHR_materials_*` extension the writer knows (emission over 1, IOR, specular,
/// transmission, clearcoat, sheen) with base colour, greyscale roughness (metalness 0),
/// normal and occlusion maps; the other an Arnold one whose values are out of range or not
/// finite (IOR below 1, NaN roughness, negative emission), which the writer must clamp or
/// leave out.
pub fn pbr_scene(textures: &Path) -> Scene {
    use glam::Vec4;
    use keyscene::scene::{Pbr, PbrProperty as P, PbrValue, ShadingModel, TextureChannel};
    let mut s = feature_scene(textures);
    let white = s.materials[0].maps[0].clone();
    let mut pbr = Pbr::new(ShadingModel::OpenPbr);
    for (p, v) in [
        (P::BaseColor, Vec4::new(0.5, 0.25, 0.0, 1.0)),
        (P::BaseFactor, Vec4::X * 0.8),
        (P::Roughness, Vec4::X * 0.6),
        (P::EmissionColor, Vec4::new(1.0, 0.5, 0.0, 1.0)),
        (P::EmissionFactor, Vec4::X * 40.0),
        (P::Opacity, Vec4::splat(0.5)),
        (P::SpecularIor, Vec4::X * 1.33),
        (P::SpecularFactor, Vec4::X * 0.5),
        (P::SpecularColor, Vec4::new(1.0, 0.9, 0.8, 1.0)),
        (P::TransmissionFactor, Vec4::X * 0.2),
        (P::CoatFactor, Vec4::X * 0.75),
        (P::CoatRoughness, Vec4::X * 0.1),
        (P::SheenColor, Vec4::new(0.5, 0.5, 0.5, 1.0)),
        (P::SheenFactor, Vec4::X * 0.5),
        (P::SheenRoughness, Vec4::X * 0.3),
    ] {
        *pbr.get_mut(p) = PbrValue::stored(v);
    }
    for (p, channel) in [
        (P::BaseColor, TextureChannel::Rgb),
        (P::Roughness, TextureChannel::R),
        (P::NormalMap, TextureChannel::Rgb),
        (P::AmbientOcclusion, TextureChannel::R),
    ] {
        let v = pbr.get_mut(p);
        v.texture = Some(white.clone());
        v.channel = channel;
    }
    s.materials[0].pbr = Some(pbr);
    let mut odd = Pbr::new(ShadingModel::ArnoldStandardSurface);
    for (p, v) in [
        (P::BaseColor, Vec4::new(2.0, -1.0, f32::NAN, 1.0)),
        (P::BaseFactor, Vec4::X),
        (P::Roughness, Vec4::X * f32::NAN),
        (P::Metalness, Vec4::X * 3.0),
        (P::EmissionColor, Vec4::new(-1.0, f32::INFINITY, 0.5, 1.0)),
        (P::EmissionFactor, Vec4::X),
        (P::SpecularIor, Vec4::X * 0.5),
        (P::CoatFactor, Vec4::X * 2.0),
    ] {
        *odd.get_mut(p) = PbrValue::stored(v);
    }
    s.materials[1].pbr = Some(odd);
    s
}

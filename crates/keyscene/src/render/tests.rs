//! Renderer tests on hand-built scenes, expected pixels computed by hand.

use glam::{DVec2, DVec3, Vec3};

use super::*;
use crate::anim::Time;
use crate::scene::{AxisSystem, Camera, FovAxis, Material, Mesh, Node, NodeKind, Scene};

/// A Z-up scene (3D Studio's axes) with a camera at (0, −10, 0) aimed at a target node at the
/// origin, horizontal FOV 90°, and one mesh node holding `mesh`.
fn scene_with(mesh: Mesh, materials: Vec<Material>) -> Scene {
    let mut s = Scene::default();
    s.meta.axes = AxisSystem::Z_UP_RIGHT_HANDED;
    let mut cam = Node::new("Camera01", NodeKind::Camera(0));
    cam.transform.translation = DVec3::new(0.0, -10.0, 0.0);
    s.nodes.push(cam);
    s.attach(0, None);
    s.nodes.push(Node::new("Camera01.Target", NodeKind::CameraTarget { camera: Some(0) }));
    s.attach(1, None);
    s.cameras
        .push(Camera { target: Some(1), ..Camera::new("Camera01", 90.0, FovAxis::Horizontal) });
    let mut m = Node::new("Box01", NodeKind::Mesh);
    m.mesh = Some(0);
    s.nodes.push(m);
    s.attach(2, None);
    s.meshes.push(mesh);
    s.materials = materials;
    s
}

/// A square of side `2h` centred on `c` in the plane y = c.y, facing the camera at −Y
/// (counter-clockwise seen from −Y), material slot 0.
fn square(c: DVec3, h: f64, slot: Option<usize>) -> Mesh {
    let p = |x: f64, z: f64| c + DVec3::new(x, 0.0, z);
    Mesh {
        positions: vec![p(-h, -h), p(h, -h), p(h, h), p(-h, h)],
        polygon_starts: vec![0, 4],
        corner_vertices: vec![0, 1, 2, 3],
        material_slots: slot.map(|m| vec![Some(m)]).unwrap_or_default(),
        ..Mesh::default()
    }
}

fn opts(width: u32, height: u32) -> Options {
    Options { width, height, background: [0, 0, 0], ..Options::default() }
}

fn red() -> Material {
    Material { diffuse: Vec3::new(1.0, 0.0, 0.0), ..Material::default() }
}

#[test]
fn a_known_vertex_projects_to_the_pixel_computed_from_the_camera() {
    // Camera at (0,−10,0) looking at the origin, +Z up: camera right is +X, up is +Z, the
    // point (2, 0, 1) lies 10 in front, 2 right, 1 up. Horizontal FOV 90° → tan = 1; image
    // 200×100 → vertical tan = 0.5. NDC x = 2/10/1 = 0.2, y = 1/10/0.5 = 0.2; pixel x =
    // (0.2·0.5 + 0.5)·200 = 120, y = (0.5 − 0.2·0.5)·100 = 40.
    let s = scene_with(square(DVec3::new(2.0, 0.0, 1.0), 0.01, Some(0)), vec![red()]);
    let pose = s.evaluate(None, Time::Frame(0.0));
    let view = View::from_camera(&s, &pose, 0, 2.0, 0.01).unwrap();
    let p = view.project(DVec3::new(2.0, 0.0, 1.0), 200, 100).unwrap();
    assert!((p - DVec2::new(120.0, 40.0)).length() < 1e-9, "{p}");
    // Rendered: a square of half-size 0.1 round that point (1 pixel at distance 10).
    let s = scene_with(square(DVec3::new(2.0, 0.0, 1.0), 0.1, Some(0)), vec![red()]);
    let img = Renderer::new(&s, None).render(&pose, &view, &opts(200, 100)).unwrap();
    let lit: Vec<(u32, u32)> = (0..100)
        .flat_map(|y| (0..200).map(move |x| (x, y)))
        .filter(|&(x, y)| img.pixel(x, y) != [0, 0, 0])
        .collect();
    // Half-size 0.1 at distance 10 = 1 pixel: the square spans pixels x 119…120, y 39…40.
    assert_eq!(lit, vec![(119, 39), (120, 39), (119, 40), (120, 40)]);
    assert!(img.pixel(120, 40)[0] > 200 && img.pixel(120, 40)[1] == 0);
}

#[test]
fn lambert_with_the_light_at_the_camera() {
    // The square faces the camera head-on; the centre pixel of an odd-sized image looks
    // straight down the axis: n·l = 1, red = 255 · (0.2 + 0.8 · 1) = 255.
    let s = scene_with(square(DVec3::ZERO, 1.0, Some(0)), vec![red()]);
    let pose = s.evaluate(None, Time::Frame(0.0));
    let view = View::from_camera(&s, &pose, 0, 1.0, 0.01).unwrap();
    let img = Renderer::new(&s, None).render(&pose, &view, &opts(65, 65)).unwrap();
    assert_eq!(img.pixel(32, 32), [255, 0, 0]);
    // Turned 60° about Z (away from the camera), n·l at the centre is cos 60° = ½:
    // 255 · (0.2 + 0.8 · 0.5) = 153.
    let mut s = s;
    s.nodes[2].transform.rotation = glam::DQuat::from_rotation_z(60f64.to_radians());
    let pose = s.evaluate(None, Time::Frame(0.0));
    let img = Renderer::new(&s, None).render(&pose, &view, &opts(65, 65)).unwrap();
    let r = img.pixel(32, 32)[0];
    assert!((152..=154).contains(&r), "{r}");
}

#[test]
fn back_faces_are_culled_unless_two_sided_and_hidden_nodes_are_skipped() {
    // Turned 180°, the square faces away from the camera.
    let mut s = scene_with(square(DVec3::ZERO, 1.0, Some(0)), vec![red()]);
    s.nodes[2].transform.rotation = glam::DQuat::from_rotation_z(std::f64::consts::PI);
    let pose = s.evaluate(None, Time::Frame(0.0));
    let view = View::from_camera(&s, &pose, 0, 1.0, 0.01).unwrap();
    let img = Renderer::new(&s, None).render(&pose, &view, &opts(33, 33)).unwrap();
    assert_eq!(img.pixel(16, 16), [0, 0, 0]);
    s.materials[0].two_sided = true;
    let img = Renderer::new(&s, None).render(&pose, &view, &opts(33, 33)).unwrap();
    assert_eq!(img.pixel(16, 16), [255, 0, 0], "lit from the front: its normal is flipped");
    s.nodes[2].hidden = true;
    let pose = s.evaluate(None, Time::Frame(0.0));
    let img = Renderer::new(&s, None).render(&pose, &view, &opts(33, 33)).unwrap();
    assert_eq!(img.pixel(16, 16), [0, 0, 0]);
}

#[test]
fn transparency_blends_over_what_is_behind() {
    // A red square 40 % transparent in front of an opaque green one, both facing the camera:
    // red · 0.6 + green · 0.4 = (153, 102, 0).
    let mut mesh = square(DVec3::ZERO, 1.0, None);
    let back = square(DVec3::new(0.0, 2.0, 0.0), 2.0, None);
    mesh.positions.extend(&back.positions);
    mesh.polygon_starts = vec![0, 4, 8];
    mesh.corner_vertices = vec![0, 1, 2, 3, 4, 5, 6, 7];
    // The transparent square comes first in the file: it must still be drawn last.
    mesh.polygon_materials = vec![0, 1];
    mesh.material_slots = vec![Some(0), Some(1)];
    let glass = Material { transparency: 0.4, ..red() };
    let green = Material { diffuse: Vec3::new(0.0, 1.0, 0.0), ..Material::default() };
    let s = scene_with(mesh, vec![glass, green]);
    let pose = s.evaluate(None, Time::Frame(0.0));
    let view = View::from_camera(&s, &pose, 0, 1.0, 0.01).unwrap();
    let img = Renderer::new(&s, None).render(&pose, &view, &opts(33, 33)).unwrap();
    assert_eq!(img.pixel(16, 16), [153, 102, 0]);
}

#[test]
fn a_missing_material_or_texture_draws_the_checker() {
    // No material slot: the default material's checker, grey and magenta squares (the square
    // spans pixels 16…48; 5.7 checker squares across it).
    let s = scene_with(square(DVec3::ZERO, 5.0, None), vec![]);
    let pose = s.evaluate(None, Time::Frame(0.0));
    let view = View::from_camera(&s, &pose, 0, 1.0, 0.01).unwrap();
    let img = Renderer::new(&s, None).render(&pose, &view, &opts(65, 65)).unwrap();
    let inside: Vec<[u8; 3]> = (18..47)
        .flat_map(|y| (18..47).map(move |x| (x, y)))
        .map(|(x, y)| img.pixel(x, y))
        .collect();
    let grey = inside.iter().filter(|c| c[0] == c[1] && c[1] == c[2] && c[0] > 100).count();
    let magenta = inside.iter().filter(|c| c[1] < c[0] / 2 && c[2] > c[1] * 2).count();
    assert_eq!(grey + magenta, inside.len());
    assert!(grey > inside.len() / 4 && magenta > inside.len() / 4, "{grey} {magenta}");
    // A material whose texture file does not exist: the checker, and a warning naming it.
    let mut m = red();
    m.maps.push(crate::scene::TextureMap {
        slot: MapSlot::Diffuse,
        file: "NOPE.PNG".into(),
        resolved: None,
        embedded: None,
        strength: 1.0,
        uv_transform: UvTransform::default(),
        flags: 0,
        wrap: Default::default(),
    });
    let s = scene_with(square(DVec3::ZERO, 5.0, Some(0)), vec![m]);
    let mut r = Renderer::new(&s, None);
    let img2 = r.render(&pose, &view, &opts(65, 65)).unwrap();
    assert_eq!(img, img2);
    let w = r.take_warnings();
    assert_eq!(w.len(), 1);
    assert!(w[0].message.contains("NOPE.PNG"));
}

#[test]
fn bounding_box_overlay_draws_its_corners_where_they_project() {
    let s = scene_with(square(DVec3::ZERO, 1.0, Some(0)), vec![red()]);
    let pose = s.evaluate(None, Time::Frame(0.0));
    let view = View::from_camera(&s, &pose, 0, 1.0, 0.01).unwrap();
    let o = Options { bbox: true, wireframe: true, ..opts(64, 64) };
    let img = Renderer::new(&s, None).render(&pose, &view, &o).unwrap();
    // The box is the flat square itself, (±1, 0, ±1): 10 away, tan 1 → ±0.1 NDC → pixels
    // 28.8…35.2. Its top edge runs along row 28 (y = 28.8), in the overlay's yellow.
    let yellow = BBOX_COLOR.map(|c| (c * 255.0 + 0.5) as u8);
    assert_eq!(img.pixel(32, 28), yellow);
    assert_eq!(img.pixel(32, 32), [0, 0, 0], "wireframe: no fill");
}

#[test]
fn sizes_outside_the_limits_are_errors() {
    let s = scene_with(square(DVec3::ZERO, 1.0, None), vec![]);
    let pose = s.evaluate(None, Time::Frame(0.0));
    let view = View::auto(DVec3::splat(-1.0), DVec3::ONE, s.meta.axes, 1.0);
    let mut r = Renderer::new(&s, None);
    assert!(matches!(r.render(&pose, &view, &opts(0, 10)), Err(Error::Size { .. })));
    assert!(matches!(r.render(&pose, &view, &opts(10, MAX_SIZE + 1)), Err(Error::Size { .. })));
}

#[test]
fn contact_sheet_places_frames_in_rows() {
    let a = Image::filled(2, 1, [255, 0, 0]);
    let b = Image::filled(2, 1, [0, 255, 0]);
    let c = Image::filled(2, 1, [0, 0, 255]);
    let sheet = contact_sheet(&[a, b, c], 2, 1, [0, 0, 0]).unwrap();
    assert_eq!((sheet.width, sheet.height), (7, 5));
    assert_eq!(sheet.pixel(1, 1), [255, 0, 0]);
    assert_eq!(sheet.pixel(4, 1), [0, 255, 0]);
    assert_eq!(sheet.pixel(1, 3), [0, 0, 255]);
    assert_eq!(sheet.pixel(4, 3), [0, 0, 0]);
}

#[test]
fn non_finite_and_huge_coordinates_draw_nothing_wrong_and_do_not_panic() {
    // Hostile geometry: NaN, infinite and 1e300 coordinates, a vertex behind the camera, and
    // polygon corners past the vertex list.
    let mut mesh = square(DVec3::ZERO, 1.0, Some(0));
    mesh.positions[1] = DVec3::new(f64::NAN, 0.0, 0.0);
    mesh.positions[2] = DVec3::new(1e300, -1e300, f64::INFINITY);
    mesh.positions.push(DVec3::new(0.0, -20.0, 0.0));
    mesh.polygon_starts.extend([7, 10]);
    mesh.corner_vertices.extend([0, 3, 4, 0, 3, 99]);
    let s = scene_with(mesh, vec![red()]);
    let pose = s.evaluate(None, Time::Frame(0.0));
    let view = View::from_camera(&s, &pose, 0, 1.0, 0.01).unwrap();
    for o in [opts(33, 33), Options { wireframe: true, bbox: true, bsphere: true, ..opts(33, 33) }]
    {
        Renderer::new(&s, None).render(&pose, &view, &o).unwrap();
    }
}

#[test]
fn a_still_of_fly_draws_the_scene_through_its_camera_or_the_automatic_one() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/FLY.3DS");
    let (scene, _) = crate::load(std::path::Path::new(path)).unwrap();
    let opts = Options { width: 64, height: 48, ..Options::default() };
    for camera in [CameraChoice::Default, CameraChoice::Auto] {
        let pose = crate::anim::PoseOptions::default().at(Time::Frame(100.0));
        let (image, warnings) = render_still(&scene, None, &pose, &camera, &opts).unwrap();
        assert_eq!((image.width, image.height), (64, 48));
        let background = image.pixel(0, 0);
        let drawn = (0..48).flat_map(|y| (0..64).map(move |x| (x, y)));
        assert!(drawn.filter(|&(x, y)| image.pixel(x, y) != background).count() > 20, "{camera:?}");
        assert!(warnings.iter().all(|w| !w.message.contains("no visible geometry")));
        assert_eq!(image.to_rgba().len(), 64 * 48 * 4);
    }
    let e = render_still(
        &scene,
        None,
        &crate::anim::PoseOptions::default(),
        &CameraChoice::Named("nope".into()),
        &opts,
    )
    .unwrap_err();
    assert!(e.to_string().contains("no camera of that name"), "{e}");
}

#[test]
fn an_orthographic_camera_draws_sizes_independent_of_distance() {
    // The camera of `scene_with` made orthographic with xmag = 4 (horizontal axis): on a
    // 200×100 image the view is 8 units wide and 4 high, 25 pixels per unit. A square of
    // half-size 1 round (2, 0, 1) spans x 1…3, z 0…2 → pixels x 150…199 (100 + 25·2 ± 25),
    // y 0…49 (50 − 25·1 ± 25), wherever it is along the view axis; a perspective camera
    // would draw it smaller further away.
    for y in [0.0, 40.0] {
        let mut s = scene_with(square(DVec3::new(2.0, y, 1.0), 1.0, Some(0)), vec![red()]);
        s.cameras[0].projection = crate::scene::Projection::Orthographic { xmag: 4.0, ymag: 1.0 };
        let pose = s.evaluate(None, Time::Frame(0.0));
        let view = View::from_camera(&s, &pose, 0, 2.0, 0.01).unwrap();
        assert_eq!(view.orthographic, Some(DVec2::new(4.0, 2.0)));
        let p = view.project(DVec3::new(2.0, y, 1.0), 200, 100).unwrap();
        assert!((p - DVec2::new(150.0, 25.0)).length() < 1e-9, "{p}");
        let img = Renderer::new(&s, None).render(&pose, &view, &opts(200, 100)).unwrap();
        let lit: Vec<(u32, u32)> = (0..100)
            .flat_map(|y| (0..200).map(move |x| (x, y)))
            .filter(|&(x, y)| img.pixel(x, y) != [0, 0, 0])
            .collect();
        let want: Vec<(u32, u32)> = (0..50).flat_map(|y| (125..175).map(move |x| (x, y))).collect();
        assert_eq!(lit, want, "square at distance {}", 10.0 + y);
        // Lit head-on everywhere (the light is along the view axis): full red.
        assert_eq!(img.pixel(130, 10), [255, 0, 0]);
    }
}

#[test]
fn an_orthographic_view_keeps_the_nearer_surface() {
    // Two squares along the view axis, the nearer (y = 0, red) drawn before the farther (y =
    // 5, default grey): depth is camera-space z, so the farther one fails the depth test.
    let mut mesh = square(DVec3::ZERO, 1.0, Some(0));
    let far = square(DVec3::new(0.0, 5.0, 0.0), 1.0, None);
    mesh.positions.extend(far.positions);
    mesh.polygon_starts = vec![0, 4, 8];
    mesh.corner_vertices = (0..8).collect();
    mesh.material_slots = vec![Some(0), None];
    mesh.polygon_materials = vec![0, 1];
    let mut s = scene_with(mesh, vec![red()]);
    s.cameras[0].projection = crate::scene::Projection::Orthographic { xmag: 4.0, ymag: 4.0 };
    let pose = s.evaluate(None, Time::Frame(0.0));
    let view = View::from_camera(&s, &pose, 0, 1.0, 0.01).unwrap();
    let img = Renderer::new(&s, None).render(&pose, &view, &opts(64, 64)).unwrap();
    assert_eq!(img.pixel(32, 32), [255, 0, 0]);
}

//! Render speed: a 100,352-triangle scene at 800×600 on one core (issue #6: well under a
//! second).
//!
//! ```text
//! cargo bench -p keyscene --bench render
//! ```
//! The scene is made here, no corpus needed: a UV sphere of 224 × 224 segments (100,352
//! triangles, half of them facing away and culled) filling most of the image through the
//! automatic camera, one material, smooth normals from one smoothing group.
//!
//! - `render_800x600`: [`Renderer::render`] of the posed scene (vertex transform, normals,
//!   triangulation, rasterising, shading, PNG-ready bytes).
//! - `evaluate_and_render_800x600`: the same preceded by [`Scene::evaluate`] (skinning-free, so
//!   evaluation is the world-position transform).
//! - `encode_png_800x600`: the image encoded as PNG (what `keyscene render` adds per frame).

use divan::{black_box, Bencher};
use glam::DVec3;
use keyscene::anim::Time;
use keyscene::render::{posed_bounds, Options, Renderer, View};
use keyscene::scene::{Material, Mesh, Node, NodeKind, Scene};

#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Segments round and from pole to pole.
const SEGMENTS: u32 = 224;

fn main() {
    divan::main();
}

/// A unit UV sphere of `SEGMENTS × SEGMENTS` quads split into two triangles each (the pole
/// rows too, degenerate halves included, so the count is exactly 2·SEGMENTS²).
fn scene() -> Scene {
    let n = SEGMENTS;
    let mut positions = Vec::new();
    for i in 0..=n {
        let theta = std::f64::consts::PI * f64::from(i) / f64::from(n);
        for j in 0..=n {
            let phi = std::f64::consts::TAU * f64::from(j) / f64::from(n);
            positions.push(DVec3::new(
                theta.sin() * phi.cos(),
                theta.sin() * phi.sin(),
                theta.cos(),
            ));
        }
    }
    let at = |i: u32, j: u32| i * (n + 1) + j;
    let mut corners = Vec::new();
    for i in 0..n {
        for j in 0..n {
            let (a, b, c, d) = (at(i, j), at(i + 1, j), at(i + 1, j + 1), at(i, j + 1));
            corners.extend([a, b, c, a, c, d]);
        }
    }
    let tris = corners.len() as u32 / 3;
    let mesh = Mesh {
        positions,
        polygon_starts: (0..=tris).map(|t| t * 3).collect(),
        corner_vertices: corners,
        smoothing_groups: Some(vec![1; tris as usize]),
        polygon_materials: Vec::new(),
        material_slots: vec![Some(0)],
        ..Mesh::default()
    };
    let mut s = Scene::default();
    s.materials.push(Material::default());
    s.meshes.push(mesh);
    let mut node = Node::new("sphere", NodeKind::Mesh);
    node.mesh = Some(0);
    s.nodes.push(node);
    s.attach(0, None);
    s
}

fn setup() -> (Scene, Options) {
    let s = scene();
    assert_eq!(s.meshes[0].polygon_count(), 2 * (SEGMENTS * SEGMENTS) as usize);
    (s, Options { width: 800, height: 600, ..Options::default() })
}

#[divan::bench(sample_count = 10)]
fn render_800x600(b: Bencher) {
    let (scene, opts) = setup();
    let pose = scene.evaluate(None, Time::Frame(0.0));
    let (min, max) = posed_bounds(&scene, &pose).unwrap();
    let view = View::auto(min, max, scene.meta.axes, opts.aspect());
    let mut r = Renderer::new(&scene, None);
    b.bench_local(|| black_box(r.render(&pose, &view, &opts).unwrap()));
}

#[divan::bench(sample_count = 10)]
fn evaluate_and_render_800x600(b: Bencher) {
    let (scene, opts) = setup();
    let pose = scene.evaluate(None, Time::Frame(0.0));
    let (min, max) = posed_bounds(&scene, &pose).unwrap();
    let view = View::auto(min, max, scene.meta.axes, opts.aspect());
    let mut r = Renderer::new(&scene, None);
    b.bench_local(|| {
        let pose = scene.evaluate(None, Time::Frame(0.0));
        black_box(r.render(&pose, &view, &opts).unwrap())
    });
}

#[divan::bench(sample_count = 10)]
fn encode_png_800x600(b: Bencher) {
    let (scene, opts) = setup();
    let pose = scene.evaluate(None, Time::Frame(0.0));
    let (min, max) = posed_bounds(&scene, &pose).unwrap();
    let view = View::auto(min, max, scene.meta.axes, opts.aspect());
    let image = Renderer::new(&scene, None).render(&pose, &view, &opts).unwrap();
    b.bench_local(|| {
        let mut out = Vec::new();
        image.write_png(&mut out).unwrap();
        black_box(out)
    });
}

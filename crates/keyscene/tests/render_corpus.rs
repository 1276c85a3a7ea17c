//! `keyscene::render` on corpus files: golden images (reviewed by eye when they were made,
//! compared with a tolerance), a reference vertex projected by hand from the lib3ds camera, and
//! silhouette motion checked against the lib3ds reference centroids.
//!
//! Golden images live in `tests/golden/`, 160×120. `KEYSCENE_BLESS=1` rewrites them from the
//! current renderer (then look at every one before committing). On a mismatch the rendered
//! image is written beside the target folder (`target/render-golden-actual/`).

mod common;

use std::path::{Path, PathBuf};

use glam::{DVec2, DVec3};
use keyscene::anim::Time;
use keyscene::render::{posed_bounds, Image, Options, Renderer, View};
use keyscene::scene::Scene;
use libtest_mimic::{Failed, Trial};

const W: u32 = 160;
const H: u32 = 120;

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

fn opts() -> Options {
    Options { width: W, height: H, background: [0x33; 3], ..Options::default() }
}

/// The auto-camera render of `path` at `frame` (textures from the file's folder).
fn render_auto(path: &Path, frame: f64, opts: &Options) -> Result<Image, Failed> {
    let (scene, _) = keyscene::load(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let anim = (!scene.animations.is_empty()).then_some(0);
    let pose = scene.evaluate(anim, Time::Frame(frame));
    let (min, max) = posed_bounds(&scene, &pose).ok_or("nothing visible")?;
    let view = View::auto(min, max, scene.meta.axes, opts.aspect());
    let image = Renderer::new(&scene, path.parent()).render(&pose, &view, opts)?;
    Ok(image)
}

fn read_png(path: &Path) -> Result<Image, Failed> {
    let file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut dec = png::Decoder::new(std::io::BufReader::new(file)).read_info()?;
    let mut buf = vec![0; dec.output_buffer_size().ok_or("PNG too large")?];
    let info = dec.next_frame(&mut buf)?;
    if info.color_type != png::ColorType::Rgb || info.bit_depth != png::BitDepth::Eight {
        return Err(format!("{}: not 8-bit RGB", path.display()).into());
    }
    buf.truncate(info.buffer_size());
    Ok(Image { width: info.width, height: info.height, rgb: buf })
}

/// Compares `image` with the golden `name`: at most 0.5 % of pixels may differ by more than
/// 16 in a channel, and the mean channel difference must stay under 1 (room for a different
/// libm's last-bit trigonometry in camera set-up; docs/render.md).
fn check_golden(name: &str, image: &Image) -> Result<(), Failed> {
    let path = golden_dir().join(name);
    if std::env::var_os("KEYSCENE_BLESS").is_some() {
        image.save_png(&path)?;
        return Ok(());
    }
    let golden = read_png(&path)?;
    if (golden.width, golden.height) != (image.width, image.height) {
        return Err(format!("{name}: size {}×{} ≠ golden", image.width, image.height).into());
    }
    let mut far = 0usize;
    let mut sum = 0u64;
    for (a, b) in image.rgb.chunks(3).zip(golden.rgb.chunks(3)) {
        let d = a.iter().zip(b).map(|(x, y)| x.abs_diff(*y)).collect::<Vec<u8>>();
        sum += d.iter().map(|&v| u64::from(v)).sum::<u64>();
        far += usize::from(d.iter().any(|&v| v > 16));
    }
    let pixels = (image.width * image.height) as usize;
    let mean = sum as f64 / (pixels * 3) as f64;
    if far * 200 > pixels || mean >= 1.0 {
        let out = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/render-golden-actual");
        std::fs::create_dir_all(&out).ok();
        image.save_png(&out.join(name)).ok();
        return Err(format!(
            "{name}: {far} of {pixels} pixels differ by more than 16, mean difference {mean:.3} \
             (actual image in {})",
            out.display()
        )
        .into());
    }
    Ok(())
}

fn golden(name: &'static str, corpus: &Option<PathBuf>, file: &'static str, frame: f64) -> Trial {
    common::corpus_trial(format!("golden/{name}"), corpus, move |dir| {
        check_golden(name, &render_auto(&dir.join(file), frame, &opts())?)
    })
}

/// A 3DS file converted to 3DA (as `keyscene convert` writes it) into a temporary folder with
/// its textures copied beside it, rendered from the 3DA.
fn golden_3da(corpus: &Option<PathBuf>) -> Trial {
    common::corpus_trial("golden/test1_3ds_as_3da.png", corpus, |dir| {
        let src = dir.join("3ds/assimp/test1.3ds");
        let (scene, _) = keyscene::load(&src)?;
        let tmp = tempfile::tempdir()?;
        for m in &scene.materials {
            for map in &m.maps {
                if let Some(r) = &map.resolved {
                    std::fs::copy(r, tmp.path().join(r.file_name().ok_or("texture name")?))?;
                }
            }
        }
        let out = tmp.path().join("test1.3da");
        keyscene::formats::three_da::save(
            &scene,
            &out,
            &keyscene::formats::three_da::ExportOptions::default(),
        )?;
        check_golden("test1_3ds_as_3da.png", &render_auto(&out, 0.0, &opts())?)
    })
}

/// The lib3ds reference of a corpus file (`3ds/reference/<folder>_<file>.lib3ds.json`).
fn reference(dir: &Path, folder: &str, file: &str) -> Result<serde_json::Value, Failed> {
    let p = dir.join(format!("3ds/reference/{folder}_{file}.lib3ds.json"));
    Ok(serde_json::from_slice(&std::fs::read(&p).map_err(|e| format!("{}: {e}", p.display()))?)?)
}

fn reference_sample(r: &serde_json::Value, frame: f64) -> Option<&serde_json::Value> {
    r["samples"].as_array()?.iter().find(|s| s["frame"].as_f64() == Some(frame))
}

/// FLY.3DS through its own camera at frame 200: a vertex of `enemy` whose world position
/// lib3ds reports, projected by hand from lib3ds's camera and target positions (look-at with
/// 3D Studio's +Z up, horizontal FOV from the file, no roll), lands on the same pixel as
/// [`View::project`] puts our vertex, and the rendered image is not background there.
fn projection_fly(corpus: &Option<PathBuf>) -> Trial {
    common::corpus_trial("camera/fly_vertex_projects_where_lib3ds_camera_puts_it", corpus, |dir| {
        let r = reference(dir, "secondreality", "FLY.3DS")?;
        let s = reference_sample(&r, 200.0).ok_or("no frame 200 in the reference")?;
        let nodes = s["nodes"].as_array().ok_or("nodes")?;
        let by = |name: &str, ty: &str| {
            nodes.iter().find(|n| n["name"] == name && n["type"] == ty).ok_or("node missing")
        };
        let pos = |n: &serde_json::Value| {
            let m = n["matrix_col_major"].as_array().unwrap();
            DVec3::new(m[12].as_f64().unwrap(), m[13].as_f64().unwrap(), m[14].as_f64().unwrap())
        };
        let eye = pos(by("Camera01", "camera")?);
        let target = pos(by("Camera01", "target")?);
        let enemy = by("enemy", "object")?;
        let vtx = &enemy["world_sample_vertices"][1];
        let p_ref = common::vec3(&vtx["position"]);
        let (scene, _) = keyscene::load(&dir.join("3ds/secondreality/FLY.3DS"))?;
        let cam = &scene.cameras[0];
        let pose = scene.evaluate(Some(0), Time::Frame(200.0));
        let roll = pose.camera_roll[0];
        if roll.abs() > 1e-9 {
            return Err(format!("the hand computation assumes no roll, the file has {roll}").into());
        }
        // By hand: forward f, right = f × up, camera up = right × f; pinhole projection.
        let f = (target - eye).normalize();
        let right = f.cross(DVec3::Z).normalize();
        let up = right.cross(f);
        let d = p_ref - eye;
        let t = (pose.camera_fov[0].to_radians() / 2.0).tan();
        let aspect = f64::from(W) / f64::from(H);
        let ndc = DVec2::new(d.dot(right) / d.dot(f) / t, d.dot(up) / d.dot(f) / (t / aspect));
        let expected =
            DVec2::new((ndc.x + 1.0) / 2.0 * f64::from(W), (1.0 - ndc.y) / 2.0 * f64::from(H));
        let cam_node = scene
            .nodes
            .iter()
            .position(|n| matches!(n.kind, keyscene::scene::NodeKind::Camera(0)))
            .ok_or("no camera node")?;
        let view = View::from_camera(&scene, &pose, cam_node, aspect, 0.1).ok_or("no view")?;
        let enemy_node = common::find_node(&scene, enemy).ok_or("enemy not found")?;
        let ours =
            pose.world_positions(&scene, enemy_node)[vtx["index"].as_u64().unwrap() as usize];
        let got = view.project(ours, W, H).ok_or("behind the camera")?;
        if (got - expected).length() > 0.05 {
            return Err(format!(
                "projected to {got}, by hand from lib3ds {expected} (fov {})",
                cam.fov_degrees
            )
            .into());
        }
        if !(0.0..f64::from(W)).contains(&expected.x) || !(0.0..f64::from(H)).contains(&expected.y)
        {
            return Err(format!("the vertex falls outside the image: {expected}").into());
        }
        let o = Options { background: [0, 0, 0], ..opts() };
        let image = Renderer::new(&scene, None).render(&pose, &view, &o)?;
        let (x, y) = (expected.x as u32, expected.y as u32);
        let covered = (x.saturating_sub(1)..=(x + 1).min(W - 1)).any(|x| {
            (y.saturating_sub(1)..=(y + 1).min(H - 1)).any(|y| image.pixel(x, y) != [0; 3])
        });
        if !covered {
            return Err(format!("nothing drawn round pixel ({x}, {y})").into());
        }
        Ok(())
    })
}

/// magnum's `maya-camera-light-orientation.fbx`: its node `forwardCamera` looks down −Z with +Y
/// up (magnum-plugins' UfbxImporter test, `fbx/magnum/refs/cameras.expected.txt`), though FBX
/// cameras look down their node's +X: a point straight ahead on −Z lands in the image centre,
/// one above it (+Y) higher up and one to its right (+X) further right.
fn fbx_camera_looks_down_its_x_axis(corpus: &Option<PathBuf>) -> Trial {
    common::corpus_trial("camera/fbx_forward_camera_looks_down_minus_z", corpus, |dir| {
        let (scene, _) = keyscene::load(&dir.join("fbx/magnum/maya-camera-light-orientation.fbx"))?;
        let node = scene.nodes.iter().position(|n| n.name == "forwardCamera").ok_or("camera")?;
        let pose = scene.evaluate(None, Time::Frame(0.0));
        let view = View::from_camera(&scene, &pose, node, 4.0 / 3.0, 0.1).ok_or("no view")?;
        let at =
            |p: DVec3| view.project(p, W, H).ok_or_else(|| Failed::from(format!("{p} behind")));
        let centre = at(DVec3::new(0.0, 0.0, -10.0))?;
        if (centre - DVec2::new(80.0, 60.0)).length() > 1e-6 {
            return Err(format!("(0, 0, −10) projects to {centre}, not the centre").into());
        }
        if at(DVec3::new(0.0, 1.0, -10.0))?.y >= 60.0 || at(DVec3::new(1.0, 0.0, -10.0))?.x <= 80.0
        {
            return Err("+Y is not up or +X is not right on the image".into());
        }
        Ok(())
    })
}

/// The centroid (pixels) of the non-background pixels.
fn coverage_centroid(image: &Image, background: [u8; 3]) -> Option<DVec2> {
    let mut sum = DVec2::ZERO;
    let mut n = 0.0;
    for y in 0..image.height {
        for x in 0..image.width {
            if image.pixel(x, y) != background {
                sum += DVec2::new(f64::from(x) + 0.5, f64::from(y) + 0.5);
                n += 1.0;
            }
        }
    }
    (n > 0.0).then(|| sum / n)
}

/// claw.3DS (one object swinging about its pivot) at frames 0 and 83, one fixed automatic
/// camera framing both: the silhouette's centroid moves the way lib3ds's world centroid of
/// `Cone01` moves, projected through that camera (direction within 25°, length within a
/// factor of 2 — a silhouette centroid is not a vertex centroid).
fn silhouette_claw(corpus: &Option<PathBuf>) -> Trial {
    common::corpus_trial("motion/claw_silhouette_moves_as_lib3ds_centroid", corpus, |dir| {
        let r = reference(dir, "blitz3d", "claw.3DS")?;
        let centroid = |frame: f64| -> Result<DVec3, Failed> {
            let s = reference_sample(&r, frame).ok_or("frame missing in the reference")?;
            let n = s["nodes"].as_array().and_then(|n| n.iter().find(|n| n["name"] == "Cone01"));
            Ok(common::vec3(&n.ok_or("Cone01 missing")?["world_centroid"]))
        };
        let path = dir.join("3ds/blitz3d/claw.3DS");
        let (scene, _): (Scene, _) = keyscene::load(&path)?;
        let poses = [0.0, 83.0].map(|f| scene.evaluate(Some(0), Time::Frame(f)));
        let b: Vec<_> = poses.iter().filter_map(|p| posed_bounds(&scene, p)).collect();
        if b.len() != 2 {
            return Err("nothing visible".into());
        }
        let (min, max) = (b[0].0.min(b[1].0), b[0].1.max(b[1].1));
        let o = Options { background: [0, 0, 0], ..opts() };
        let view = View::auto(min, max, scene.meta.axes, o.aspect());
        let mut renderer = Renderer::new(&scene, path.parent());
        let mut cov = Vec::new();
        for p in &poses {
            cov.push(coverage_centroid(&renderer.render(p, &view, &o)?, [0; 3]).ok_or("empty")?);
        }
        let moved = cov[1] - cov[0];
        let project = |f| view.project(centroid(f)?, W, H).ok_or_else(|| Failed::from("behind"));
        let expected = project(83.0)? - project(0.0)?;
        let cos = moved.dot(expected) / (moved.length() * expected.length());
        let ratio = moved.length() / expected.length();
        if cos < 25f64.to_radians().cos() || !(0.5..2.0).contains(&ratio) {
            return Err(format!(
                "silhouette moved {moved}, lib3ds centroid {expected} (cos {cos:.3}, ratio {ratio:.2})"
            )
            .into());
        }
        Ok(())
    })
}

fn main() {
    let corpus = common::corpus();
    let trials = vec![
        golden(
            "cube_with_texture_transformations_3ds.png",
            &corpus,
            "3ds/online3dviewer/cube_with_texture_transformations.3ds",
            0.0,
        ),
        golden("test1_3ds.png", &corpus, "3ds/assimp/test1.3ds", 0.0),
        golden("claw_3ds_frame40.png", &corpus, "3ds/blitz3d/claw.3DS", 40.0),
        golden("knight_fbx_skinned_frame20.png", &corpus, "fbx/fbx-conv/knight.fbx", 20.0),
        golden_3da(&corpus),
        projection_fly(&corpus),
        fbx_camera_looks_down_its_x_axis(&corpus),
        silhouette_claw(&corpus),
    ];
    common::run(trials);
}

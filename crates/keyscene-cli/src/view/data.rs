//! What `keyscene view`'s page is sent: the scene description (`/scene`), mesh buffers
//! (`/mesh/N`), textures (`/texture/N`) and poses (`/pose`), all built from the library's scene,
//! its evaluation ([`Scene::evaluate`]) and its renderer's material and normal rules, so the page
//! draws what `sample` and `render` compute. Shapes: `docs/view.md`.

use glam::{DMat3, DVec3, Vec2, Vec3};
use keyscene::anim::{AnimationChoice, Pose, PoseOptions, Time};
use keyscene::render::{
    first_camera, posed_bounds, range_bounds, world_corner_normals, Image, Renderer, Surface,
};
use keyscene::scene::{geometry, FovAxis, LightKind, NodeKind, Projection, Scene};
use serde::Serialize;
use serde_json::{json, Value};

/// The magic at the start of a `/mesh/N` buffer (version 1 of the layout in `docs/view.md`).
pub const MESH_MAGIC: &[u8; 4] = b"KSM1";

/// Everything the server sends that does not depend on the request: built once at start.
#[derive(Debug)]
pub struct Prepared {
    /// The `/scene` document, serialised.
    pub scene_json: Vec<u8>,
    /// The `/mesh/N` buffers, per mesh in `Scene::meshes`.
    pub meshes: Vec<Vec<u8>>,
    /// The `/texture/N` PNGs, per material in `Scene::materials` (`None`: no texture drawn).
    pub textures: Vec<Option<Vec<u8>>>,
}

/// Builds the scene description, mesh buffers and textures of `scene` (loaded from a file
/// named `file`, with the reader's `warnings`), `animation` being the one the page starts on.
/// Textures are found and decoded as `render` does (`base_dir`: the scene file's folder);
/// their problems join the warnings.
pub fn prepare(
    scene: &Scene,
    file: &str,
    warnings: &[String],
    animation: Option<usize>,
    base_dir: Option<&std::path::Path>,
) -> Prepared {
    let mut renderer = Renderer::new(scene, base_dir);
    let surfaces: Vec<Surface> =
        (0..scene.materials.len()).map(|m| renderer.surface_of(m)).collect();
    let textures: Vec<Option<Vec<u8>>> = surfaces
        .iter()
        .map(|s| {
            let t = s.texture.as_ref()?;
            let rgb: Vec<u8> = t.texels().iter().flatten().copied().collect();
            let image = Image { width: t.width() as u32, height: t.height() as u32, rgb };
            let mut png = Vec::new();
            image.write_png(&mut png).ok()?;
            Some(png)
        })
        .collect();
    let meshes: Vec<Vec<u8>> = scene.meshes.iter().map(|m| mesh_buffer(&mut renderer, m)).collect();
    let mut all_warnings: Vec<String> = warnings.to_vec();
    all_warnings.extend(renderer.take_warnings().iter().map(ToString::to_string));
    let doc = scene_doc(scene, file, &all_warnings, animation, &surfaces, &textures);
    Prepared { scene_json: doc.to_string().into_bytes(), meshes, textures }
}

/// The `/scene` document (shape in `docs/view.md`).
fn scene_doc(
    scene: &Scene,
    file: &str,
    warnings: &[String],
    animation: Option<usize>,
    surfaces: &[Surface],
    textures: &[Option<Vec<u8>>],
) -> Value {
    let axes = scene.meta.axes;
    let nodes: Vec<Value> = scene
        .nodes
        .iter()
        .map(|n| {
            json!({
                "name": n.name,
                "instance": n.instance,
                "kind": n.kind.name(),
                "parent": n.parent,
                "children": n.children,
                "mesh": n.mesh,
                "camera": match n.kind { NodeKind::Camera(c) => Some(c), _ => None },
            })
        })
        .collect();
    let meshes: Vec<Value> = scene
        .meshes
        .iter()
        .map(|m| {
            json!({
                "name": m.name,
                "vertex_count": m.positions.len(),
                "polygon_count": m.polygon_count(),
                "deformed": is_deformed(m),
            })
        })
        .collect();
    let material = |s: &Surface, name: &str, texture: bool, index: Option<usize>| {
        json!({
            "name": name,
            "color": s.color,
            "texture": if texture { index.map(|i| format!("/texture/{i}")) } else { None },
            "strength": s.strength,
            "checker": s.checker,
            "alpha": s.alpha,
            "two_sided": s.two_sided,
            "specular": s.specular,
            "exponent": s.exponent,
            "self_illumination": s.self_illumination,
        })
    };
    let materials: Vec<Value> = surfaces
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let has = textures.get(i).is_some_and(Option::is_some);
            material(s, &scene.materials[i].name, has, Some(i))
        })
        .collect();
    let cameras: Vec<Value> = scene
        .cameras
        .iter()
        .map(|c| {
            json!({
                "name": c.name,
                "fov_degrees": c.fov_degrees,
                "fov_axis": fov_axis(c.fov_axis),
                "roll_degrees": c.roll_degrees,
                "target": c.target,
                "near": c.near,
                "far": c.far,
                "projection": projection_name(c.projection),
                "orthographic": orthographic(c.projection),
            })
        })
        .collect();
    let lights: Vec<Value> = scene
        .lights
        .iter()
        .map(|l| {
            let kind = match l.kind {
                LightKind::Point => "point",
                LightKind::Spot => "spot",
                LightKind::Directional => "directional",
                LightKind::Ambient => "ambient",
            };
            json!({ "name": l.name, "kind": kind })
        })
        .collect();
    let animations: Vec<Value> = scene
        .animations
        .iter()
        .map(|a| {
            json!({
                "name": a.name,
                "fps": a.fps,
                "frame_range": [a.frame_range.0, a.frame_range.1],
                "channels": a.channels.len(),
            })
        })
        .collect();
    json!({
        "file": file,
        "format": scene.meta.format,
        "axes": {
            "up": axes.up.vector().to_array(),
            "front": axes.front.vector().to_array(),
            "right": axes.right().to_array(),
        },
        "frame_rate": scene.frame_rate(animation),
        "nodes": nodes,
        "roots": scene.roots,
        "meshes": meshes,
        "materials": materials,
        "default_material": material(&Surface::default_material(), "default", false, None),
        "cameras": cameras,
        "lights": lights,
        "animations": animations,
        "animation": animation,
        "first_camera": first_camera(scene),
        "auto_camera": {
            "range_bounds": range_bounds(
                scene,
                &PoseOptions::default().animation(AnimationChoice::from(animation)),
                &[],
            )
            .ok()
            .flatten()
            .map(|(a, b)| [a.to_array(), b.to_array()]),
            "fov_y_degrees": keyscene::render::AUTO_FOV_Y_DEGREES,
            "azimuth_degrees": keyscene::render::AUTO_AZIMUTH_DEGREES,
            "elevation_degrees": keyscene::render::AUTO_ELEVATION_DEGREES,
            "margin": keyscene::render::AUTO_MARGIN,
        },
        "ambient": keyscene::render::AMBIENT,
        "overlay_colors": {
            "bbox": keyscene::render::BBOX_COLOR,
            "bsphere": keyscene::render::BSPHERE_COLOR,
        },
        "warnings": warnings,
    })
}

/// `perspective` or `orthographic`.
fn projection_name(p: Projection) -> &'static str {
    match p {
        Projection::Perspective => "perspective",
        Projection::Orthographic { .. } => "orthographic",
    }
}

/// An orthographic camera's `[xmag, ymag]`, else `None`.
fn orthographic(p: Projection) -> Option<[f64; 2]> {
    match p {
        Projection::Perspective => None,
        Projection::Orthographic { xmag, ymag } => Some([xmag, ymag]),
    }
}

fn fov_axis(a: FovAxis) -> &'static str {
    match a {
        FovAxis::Horizontal => "horizontal",
        FovAxis::Vertical => "vertical",
    }
}

/// Whether a mesh's posed shape can differ from its rest shape placed by one matrix (skin,
/// blend shapes or a geometry cache): the pose then carries its world positions and normals.
pub fn is_deformed(m: &keyscene::scene::Mesh) -> bool {
    m.skin.is_some() || !m.morph_targets.is_empty() || m.geometry_cache.is_some()
}

/// The `/mesh/N` buffer of `mesh` (little-endian; layout in `docs/view.md`): magic, counts
/// (vertices V, corners C, triangle corners T, groups G), rest positions (V×3 f32, mesh
/// space), corner normals (C×3 f32, mesh space, [`geometry::corner_normals`] of the rest
/// positions), corner UVs (C×2 f32, [`Renderer::corner_uvs`]), the vertex of every corner
/// (C u32), the corner of every triangle corner (T u32, polygons triangulated by
/// [`geometry::triangulate`], grouped by surface), then G groups of (first triangle corner,
/// count, material index or −1 for the default material) as u32, u32, i32.
pub fn mesh_buffer(renderer: &mut Renderer, mesh: &keyscene::scene::Mesh) -> Vec<u8> {
    let normals = geometry::corner_normals(mesh, &mesh.positions, DMat3::IDENTITY);
    let uvs: Vec<Vec2> = renderer.corner_uvs(mesh);
    let surfaces = renderer.polygon_surfaces(mesh);
    // Triangle corners per surface, in first-use order of the surfaces.
    let mut groups: Vec<(Option<usize>, Vec<u32>)> = Vec::new();
    for (p, surface) in surfaces.iter().enumerate() {
        let poly = mesh.polygon(p);
        if poly.len() < 3 {
            continue;
        }
        let start = mesh.polygon_corners(p).start as u32;
        let tris = if poly.len() == 3 {
            vec![[0, 1, 2]]
        } else {
            geometry::triangulate(&mesh.positions, poly)
        };
        let g = match groups.iter().position(|(s, _)| s == surface) {
            Some(g) => g,
            None => {
                groups.push((*surface, Vec::new()));
                groups.len() - 1
            }
        };
        for t in tris {
            groups[g].1.extend(t.iter().map(|&k| start + k as u32));
        }
    }
    let t: usize = groups.iter().map(|g| g.1.len()).sum();
    let (v, c) = (mesh.positions.len(), mesh.corner_vertices.len());
    let mut out = Vec::with_capacity(20 + v * 12 + c * 24 + t * 4 + groups.len() * 12);
    out.extend_from_slice(MESH_MAGIC);
    for n in [v, c, t, groups.len()] {
        out.extend_from_slice(&(n as u32).to_le_bytes());
    }
    for p in &mesh.positions {
        for x in p.as_vec3().to_array() {
            out.extend_from_slice(&x.to_le_bytes());
        }
    }
    for n in &normals {
        for x in n.to_array() {
            out.extend_from_slice(&x.to_le_bytes());
        }
    }
    for uv in &uvs {
        for x in uv.to_array() {
            out.extend_from_slice(&x.to_le_bytes());
        }
    }
    for &cv in &mesh.corner_vertices {
        out.extend_from_slice(&cv.to_le_bytes());
    }
    for (_, corners) in &groups {
        for &k in corners {
            out.extend_from_slice(&k.to_le_bytes());
        }
    }
    let mut first = 0u32;
    for (surface, corners) in &groups {
        out.extend_from_slice(&first.to_le_bytes());
        out.extend_from_slice(&(corners.len() as u32).to_le_bytes());
        let m = surface.map_or(-1i32, |m| m as i32);
        out.extend_from_slice(&m.to_le_bytes());
        first += corners.len() as u32;
    }
    out
}

/// The `/pose` document: the scene at `frame` of `animation`, posed once ([`Scene::pose`]) —
/// the pose `sample` prints and `render` draws.
#[derive(Debug, Serialize)]
pub struct PoseDoc {
    /// The animation evaluated (index), or null for the rest pose.
    pub animation: Option<usize>,
    /// The frame evaluated.
    pub frame: f64,
    /// The same instant in seconds.
    pub seconds: f64,
    /// World matrix of every node, column-major.
    pub world: Vec<[f64; 16]>,
    /// Mesh-to-world matrix (world · geometry transform) of every node showing a mesh, else
    /// null.
    pub mesh_to_world: Vec<Option<[f64; 16]>>,
    /// The mesh every node shows at this frame (3DS morph tracks switch it), or null.
    pub mesh: Vec<Option<usize>>,
    /// Whether every node is hidden.
    pub hidden: Vec<bool>,
    /// Animated field of view (degrees) per camera in the scene's camera list.
    pub camera_fov: Vec<f64>,
    /// Animated roll (degrees) per camera.
    pub camera_roll: Vec<f64>,
    /// Per camera node: the view `render --camera` uses ([`keyscene::render::View::from_camera`]).
    pub camera_views: Vec<CameraView>,
    /// The box round the visible geometry (`render`'s `posed_bounds`), or null.
    pub bounds: Option<[[f64; 3]; 2]>,
    /// Deformed world positions and normals of every visible node whose mesh is deformed.
    pub deformed: Vec<Deformed>,
}

/// A camera node's view at one pose.
#[derive(Debug, Serialize)]
pub struct CameraView {
    /// The camera node.
    pub node: usize,
    /// World → camera (looking down −Z, +Y up), column-major.
    pub world_to_camera: [f64; 16],
    /// The animated field of view, degrees, along `fov_axis`.
    pub fov_degrees: f64,
    /// `horizontal` or `vertical`.
    pub fov_axis: &'static str,
    /// An orthographic camera's `[xmag, ymag]` (half the view's width and height, scene
    /// units; the page keeps the one along `fov_axis` and fits the other to its aspect, as
    /// `render::View::from_camera` does); `null` for a perspective camera.
    pub orthographic: Option<[f64; 2]>,
}

/// One deformed mesh node at one pose.
#[derive(Debug, Serialize)]
pub struct Deformed {
    /// The node.
    pub node: usize,
    /// The mesh it shows.
    pub mesh: usize,
    /// World positions, x y z per vertex (f32 precision).
    pub positions: Vec<f32>,
    /// World unit normals, x y z per mesh corner, as `render` shades them.
    pub normals: Vec<f32>,
}

/// The scene at `frame` of `animation` as the page draws it.
///
/// # Errors
/// As [`Scene::pose`]: `animation` is not an index of `scene.animations`.
pub fn pose(
    scene: &Scene,
    animation: Option<usize>,
    frame: f64,
) -> Result<PoseDoc, keyscene::Error> {
    let opts =
        PoseOptions::default().animation(AnimationChoice::from(animation)).at(Time::Frame(frame));
    let pose: Pose = scene.pose(&opts)?.0;
    let n = scene.nodes.len();
    let mesh_to_world = (0..n)
        .map(|i| {
            pose.mesh[i]
                .filter(|&m| m < scene.meshes.len())
                .map(|_| pose.mesh_to_world(scene, i).to_cols_array())
        })
        .collect();
    let mut deformed = Vec::new();
    for i in 0..n {
        let Some(m) = pose.mesh[i].filter(|&m| m < scene.meshes.len()) else { continue };
        let mesh = &scene.meshes[m];
        if pose.hidden[i] || !is_deformed(mesh) {
            continue;
        }
        let positions: Vec<DVec3> = pose.world_positions(scene, i);
        if positions.len() != mesh.positions.len() {
            continue;
        }
        let normals: Vec<Vec3> = world_corner_normals(scene, mesh, &positions, &pose, i);
        deformed.push(Deformed {
            node: i,
            mesh: m,
            positions: positions.iter().flat_map(|p| p.as_vec3().to_array()).collect(),
            normals: normals.iter().flat_map(|v| v.to_array()).collect(),
        });
    }
    let camera_views = (0..n)
        .filter_map(|i| {
            let NodeKind::Camera(c) = scene.nodes[i].kind else { return None };
            let cam = scene.cameras.get(c)?;
            let view = keyscene::render::View::from_camera(scene, &pose, i, 1.0, 1e-3)?;
            Some(CameraView {
                node: i,
                world_to_camera: view.world_to_camera.to_cols_array(),
                fov_degrees: pose.camera_fov.get(c).copied().unwrap_or(cam.fov_degrees),
                fov_axis: fov_axis(cam.fov_axis),
                orthographic: orthographic(cam.projection),
            })
        })
        .collect();
    Ok(PoseDoc {
        animation,
        frame: pose.frame,
        seconds: pose.seconds,
        world: pose.world.iter().map(|m| m.to_cols_array()).collect(),
        mesh_to_world,
        mesh: pose.mesh.clone(),
        hidden: pose.hidden.clone(),
        camera_fov: pose.camera_fov.clone(),
        camera_roll: pose.camera_roll.clone(),
        camera_views,
        bounds: posed_bounds(scene, &pose).map(|(a, b)| [a.to_array(), b.to_array()]),
        deformed,
    })
}

//! Headless preview rendering, as ChromeEngine's Play3da viewer draws a model (seed 002,
//! "Configuring Play3da.exe"): one light at the camera, a checker default material where a
//! material or texture is missing, bounding box and bounding sphere models on request.
//!
//! The module takes a [`Scene`] and a [`Pose`] and knows no file format. A [`Renderer`] keeps
//! the decoded textures of one scene across frames; [`View`] is the camera (a scene camera
//! with [`View::from_camera`], or [`View::auto`] framing a box); [`Renderer::render`] draws an
//! [`Image`]. The rasteriser is our own ([`raster`]), deterministic: the same scene, pose and
//! options give the same pixels on every machine. Why, and the shading model: `docs/render.md`.
//!
//! ```no_run
//! use keyscene::render::{posed_bounds, Options, Renderer, View};
//! let (scene, _) = keyscene::load("examples/FLY.3DS".as_ref())?;
//! let pose = scene.evaluate(Some(0), keyscene::anim::Time::Frame(10.0));
//! let (min, max) = posed_bounds(&scene, &pose).unwrap_or_default();
//! let opts = Options::default();
//! let view = View::auto(min, max, scene.meta.axes, opts.aspect());
//! let image = Renderer::new(&scene, Some("examples".as_ref())).render(&pose, &view, &opts)?;
//! image.save_png("fly.png".as_ref())?;
//! # Ok::<(), keyscene::Error>(())
//! ```

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use glam::{DMat3, DVec3, DVec4, Vec2, Vec3};

use crate::anim::Pose;
use crate::quoting::quoted;
use crate::scene::{geometry, MapSlot, Material, Mesh, NodeId, Scene, UvTransform, Warning};

mod framing;
mod label;
pub mod raster;
pub mod texture;
mod view;

pub use framing::{
    find_camera, first_camera, range_bounds, range_times, render_still, scene_near, CameraChoice,
    RANGE_SAMPLES,
};
use raster::{ClipVertex, Fragment, Mode, Target};
pub use texture::Texture;
pub use view::{
    View, AUTO_AZIMUTH_DEGREES, AUTO_ELEVATION_DEGREES, AUTO_FOV_Y_DEGREES, AUTO_MARGIN,
};

/// The largest image width or height [`Renderer::render`] accepts, pixels.
pub const MAX_SIZE: u32 = 4096;

/// The share of a surface's colour lit regardless of the light (0–1).
pub const AMBIENT: f32 = 0.2;

/// The bounding-box overlay's colour (RGB 0–1): yellow.
pub const BBOX_COLOR: [f32; 3] = [1.0, 0.85, 0.0];
/// The bounding-sphere overlay's colour (RGB 0–1): cyan.
pub const BSPHERE_COLOR: [f32; 3] = [0.0, 0.8, 1.0];

/// Why an image could not be rendered or written.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The requested image size is 0 or above [`MAX_SIZE`].
    #[error("render: image size {width}×{height} is outside 1…{MAX_SIZE} pixels per side")]
    Size {
        /// Requested width.
        width: u32,
        /// Requested height.
        height: u32,
    },
    /// The PNG encoder failed (usually the output stream).
    #[error("render: writing PNG: {0}")]
    Png(String),
}

/// What to draw and how large.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// Image width, pixels (1…[`MAX_SIZE`]).
    pub width: u32,
    /// Image height, pixels (1…[`MAX_SIZE`]).
    pub height: u32,
    /// Background colour, 8-bit sRGB as stored in the PNG.
    pub background: [u8; 3],
    /// Draw the scene's bounding box (visible geometry at this pose) as yellow lines.
    pub bbox: bool,
    /// Draw the scene's bounding sphere (centre: the box's centre; radius: the farthest
    /// vertex) as three cyan great circles.
    pub bsphere: bool,
    /// Draw polygon outlines (in each material's colour, back faces culled as for filled
    /// polygons) instead of filled polygons.
    pub wireframe: bool,
}

impl Default for Options {
    /// 800×600, dark grey background (#333333), no overlays, filled.
    fn default() -> Self {
        Options {
            width: 800,
            height: 600,
            background: [0x33; 3],
            bbox: false,
            bsphere: false,
            wireframe: false,
        }
    }
}

impl Options {
    /// Width ÷ height.
    pub fn aspect(&self) -> f64 {
        f64::from(self.width) / f64::from(self.height.max(1))
    }
}

/// An 8-bit RGB image, rows top to bottom.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Image {
    /// Width, pixels.
    pub width: u32,
    /// Height, pixels.
    pub height: u32,
    /// `width × height × 3` bytes, row-major, R, G, B per pixel.
    pub rgb: Vec<u8>,
}

impl Image {
    /// A `width × height` image filled with `color`.
    pub fn filled(width: u32, height: u32, color: [u8; 3]) -> Image {
        let n = width as usize * height as usize;
        Image { width, height, rgb: color.repeat(n) }
    }

    /// The pixel at column `x`, row `y` (0 at the top). Panics outside the image.
    pub fn pixel(&self, x: u32, y: u32) -> [u8; 3] {
        assert!(x < self.width && y < self.height, "pixel ({x}, {y}) outside the image");
        let i = (y as usize * self.width as usize + x as usize) * 3;
        [self.rgb[i], self.rgb[i + 1], self.rgb[i + 2]]
    }

    /// The pixels as RGBA, `width × height × 4` bytes, alpha 255 everywhere (the renderer
    /// draws opaque images over the background colour).
    pub fn to_rgba(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.rgb.len() / 3 * 4);
        for p in self.rgb.chunks_exact(3) {
            out.extend_from_slice(&[p[0], p[1], p[2], 255]);
        }
        out
    }

    /// Encodes the image as an 8-bit RGB PNG into `out`.
    pub fn write_png(&self, out: &mut dyn std::io::Write) -> Result<(), Error> {
        let png_err = |e: png::EncodingError| Error::Png(e.to_string());
        let mut enc = png::Encoder::new(out, self.width, self.height);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        let mut w = enc.write_header().map_err(png_err)?;
        w.write_image_data(&self.rgb).map_err(png_err)?;
        w.finish().map_err(png_err)
    }

    /// Writes the image as a PNG file, atomically ([`crate::write_atomically`]): on error no
    /// file is left behind.
    pub fn save_png(&self, path: &Path) -> Result<(), crate::Error> {
        crate::write_atomically(path, |w| self.write_png(w).map_err(crate::Error::from))
    }

    /// Copies `tile` into this image with its top-left corner at `(x, y)`, clipping what
    /// falls outside.
    pub fn paste(&mut self, tile: &Image, x: u32, y: u32) {
        for ty in 0..tile.height {
            let dy = y as usize + ty as usize;
            if dy >= self.height as usize {
                break;
            }
            let w = (tile.width as usize).min((self.width as usize).saturating_sub(x as usize));
            let src = ty as usize * tile.width as usize * 3;
            let dst = (dy * self.width as usize + x as usize) * 3;
            self.rgb[dst..dst + w * 3].copy_from_slice(&tile.rgb[src..src + w * 3]);
        }
    }
}

/// One contact sheet of `frames` (all of one size): `columns` per row (at least 1), rows top
/// to bottom, a `gap`-pixel border of `background` round and between them. `None` when
/// `frames` is empty.
pub fn contact_sheet(
    frames: &[Image],
    columns: u32,
    gap: u32,
    background: [u8; 3],
) -> Option<Image> {
    let first = frames.first()?;
    let columns = columns.clamp(1, frames.len() as u32);
    let rows = (frames.len() as u32).div_ceil(columns);
    let (w, h) = (first.width, first.height);
    let mut sheet = Image::filled(columns * (w + gap) + gap, rows * (h + gap) + gap, background);
    for (k, f) in frames.iter().enumerate() {
        let (c, r) = (k as u32 % columns, k as u32 / columns);
        sheet.paste(f, gap + c * (w + gap), gap + r * (h + gap));
    }
    Some(sheet)
}

/// The axis-aligned box `(min, max)` of every vertex of every visible mesh node at `pose`
/// (world space, deformed); `None` when nothing is visible.
pub fn posed_bounds(scene: &Scene, pose: &Pose) -> Option<(DVec3, DVec3)> {
    let mut b: Option<(DVec3, DVec3)> = None;
    for node in visible_mesh_nodes(scene, pose) {
        for p in pose.world_positions(scene, node) {
            if p.is_finite() {
                b = Some(b.map_or((p, p), |(lo, hi)| (lo.min(p), hi.max(p))));
            }
        }
    }
    b
}

/// Mesh nodes drawn at `pose`: those showing a mesh and not hidden, in node order.
fn visible_mesh_nodes<'a>(scene: &'a Scene, pose: &'a Pose) -> impl Iterator<Item = NodeId> + 'a {
    (0..scene.nodes.len()).filter(move |&n| {
        pose.mesh.get(n).copied().flatten().is_some_and(|m| m < scene.meshes.len())
            && !pose.hidden.get(n).copied().unwrap_or(false)
    })
}

/// How one material is drawn, resolved from a [`Material`] by [`Renderer::surface_of`]: the
/// values the shading of [`Renderer::render`] uses (`keyscene view` sends them to its page so
/// the browser shades as `render` does).
#[derive(Debug, Clone)]
pub struct Surface {
    /// Diffuse colour, linear RGB 0–1 (non-finite components read as 0.8).
    pub color: [f32; 3],
    /// The decoded diffuse texture, when the material has one that loaded.
    pub texture: Option<Arc<Texture>>,
    /// The texture's share of the base colour (0–1); the rest is `color`.
    pub strength: f32,
    /// The diffuse map's UV transform (applied to the corner UVs, see [`Renderer::corner_uvs`]).
    pub uv: UvTransform,
    /// Drawn with the default material's checker (no material, or its texture is missing).
    pub checker: bool,
    /// Opacity, `1 − transparency` (0–1).
    pub alpha: f32,
    /// Back faces drawn (with flipped normals) instead of culled.
    pub two_sided: bool,
    /// Specular colour × shininess strength, RGB 0–1.
    pub specular: [f32; 3],
    /// Blinn-Phong exponent (1…128, see `docs/render.md`).
    pub exponent: u32,
    /// The least lighting factor (0–1): self-illuminated surfaces are never darker.
    pub self_illumination: f32,
}

impl Surface {
    /// The default material (r_init.scr's `DefaultMaterial`): the checker, opaque,
    /// one-sided, no highlight.
    pub fn default_material() -> Surface {
        Surface {
            color: texture::CHECKER[0],
            texture: None,
            strength: 1.0,
            uv: UvTransform::default(),
            checker: true,
            alpha: 1.0,
            two_sided: false,
            specular: [0.0; 3],
            exponent: 1,
            self_illumination: 0.0,
        }
    }
}

/// A triangle kept for the transparent pass.
struct Deferred {
    /// Distance of its centroid from the camera (sorted far to near).
    depth: f64,
    v: [ClipVertex; 3],
    surface: usize,
}

/// Renders one scene, frame after frame, keeping its decoded textures.
#[derive(Debug)]
pub struct Renderer<'s> {
    scene: &'s Scene,
    base_dir: Option<PathBuf>,
    /// Decoded textures by path (`None`: undecodable, already reported).
    textures: HashMap<PathBuf, Option<Arc<Texture>>>,
    /// Decoded embedded images by their shared allocation (`None`: undecodable, reported).
    embedded: HashMap<usize, Option<Arc<Texture>>>,
    /// Texture names not found, already reported.
    missing: HashSet<String>,
    warnings: Vec<Warning>,
}

impl<'s> Renderer<'s> {
    /// A renderer for `scene`. A map's image is its
    /// [`embedded`](crate::scene::TextureMap::embedded) bytes, else the file at its
    /// [`resolved`](crate::scene::TextureMap::resolved) path, else the file looked up by name
    /// in `base_dir` (the scene file's folder) ignoring case.
    pub fn new(scene: &'s Scene, base_dir: Option<&Path>) -> Renderer<'s> {
        Renderer {
            scene,
            base_dir: base_dir.map(Path::to_path_buf),
            textures: HashMap::new(),
            embedded: HashMap::new(),
            missing: HashSet::new(),
            warnings: Vec::new(),
        }
    }

    /// The problems met so far (textures missing or undecodable, each reported once), emptied.
    pub fn take_warnings(&mut self) -> Vec<Warning> {
        std::mem::take(&mut self.warnings)
    }

    /// Draws the scene at `pose` through `view`.
    ///
    /// Every visible mesh node ([`Pose::hidden`] false) is drawn with its posed world-space
    /// vertices ([`Pose::world_positions`]: skinning and blend shapes applied), its polygons
    /// triangulated ([`geometry::triangulate`]), per-corner normals from
    /// [`world_corner_normals`] (stored normals of skinned and blend-shaped meshes deformed
    /// like their positions). Shading (`docs/render.md`):
    /// `colour · (AMBIENT + (1 − AMBIENT) · max(0, n·l)) + specular · max(0, n·l)^e`, with `l`
    /// towards the camera (the one light sits at the camera, as in Play3da) so the half vector
    /// equals `l`. Opaque triangles are drawn first with the depth buffer; transparent ones
    /// (`alpha = 1 − transparency < 1`) after, far to near by centroid distance, blended, depth
    /// tested but not written. Back faces are culled unless the material is two-sided.
    ///
    /// Errors: [`Error::Size`] when the size is outside 1…[`MAX_SIZE`].
    pub fn render(&mut self, pose: &Pose, view: &View, opts: &Options) -> Result<Image, Error> {
        if opts.width == 0 || opts.height == 0 || opts.width > MAX_SIZE || opts.height > MAX_SIZE {
            return Err(Error::Size { width: opts.width, height: opts.height });
        }
        let bg = opts.background.map(|c| f32::from(c) / 255.0);
        let mut target = Target::new(opts.width as usize, opts.height as usize, bg, view.near);
        target.orthographic = view.orthographic.is_some();
        let scene = self.scene;
        let mut surfaces: Vec<Surface> = scene.materials.iter().map(|m| self.surface(m)).collect();
        let default_surface = surfaces.len();
        surfaces.push(Surface::default_material());
        let mut deferred = Vec::new();
        let mut bounds: Option<(DVec3, DVec3)> = None;
        let mut all_positions: Vec<Vec<DVec3>> = Vec::new();
        let camera_rotation = DMat3::from_mat4(view.world_to_camera);
        let eye = view.eye();
        // Towards the camera from a surface point: an orthographic view's backward axis.
        let backward = view.orthographic.map(|_| view.world_to_camera.inverse().z_axis.truncate());
        for node in visible_mesh_nodes(scene, pose) {
            let Some(mesh) = pose.mesh[node].and_then(|m| scene.meshes.get(m)) else { continue };
            let positions = pose.world_positions(scene, node);
            if positions.len() != mesh.positions.len() {
                continue;
            }
            for &p in positions.iter().filter(|p| p.is_finite()) {
                bounds = Some(bounds.map_or((p, p), |(lo, hi)| (lo.min(p), hi.max(p))));
            }
            let slot_surface = |p: usize| {
                let slot = mesh.polygon_material(p);
                mesh.material_slots
                    .get(slot as usize)
                    .copied()
                    .flatten()
                    .filter(|&m| m < default_surface)
                    .unwrap_or(default_surface)
            };
            let clip: Vec<DVec4> = positions.iter().map(|&p| view.clip(p)).collect();
            if opts.wireframe {
                for p in 0..mesh.polygon_count() {
                    let s = &surfaces[slot_surface(p)];
                    let poly = mesh.polygon(p);
                    let Some(&first) = poly.first() else { continue };
                    let n = geometry::newell_normal(&positions, poly);
                    let p = positions.get(first as usize).copied().unwrap_or_default();
                    let to_eye = backward.unwrap_or(eye - p);
                    if !s.two_sided && n.dot(to_eye) <= 0.0 {
                        continue;
                    }
                    let color = if s.checker { texture::CHECKER[1] } else { s.color };
                    for (k, &a) in poly.iter().enumerate() {
                        let b = poly[(k + 1) % poly.len()];
                        if let (Some(&ca), Some(&cb)) = (clip.get(a as usize), clip.get(b as usize))
                        {
                            target.line(ca, cb, color);
                        }
                    }
                }
            } else {
                let normals = self.world_normals(mesh, &positions, pose, node);
                let uvs = mesh.uv_sets.first().map(|s| &s.uvs);
                let planar = PlanarChecker::new(mesh);
                for p in 0..mesh.polygon_count() {
                    let si = slot_surface(p);
                    let s = &surfaces[si];
                    let poly = mesh.polygon(p);
                    let corners = mesh.polygon_corners(p);
                    let vertex = |k: usize| -> Option<ClipVertex> {
                        let c = corners.start + k;
                        let v = *poly.get(k)?;
                        let n = camera_rotation * normals.get(c)?.as_dvec3();
                        let uv = match uvs.and_then(|a| a.get(v, c, p)) {
                            Some(uv) if s.checker || s.texture.is_some() => transform_uv(uv, &s.uv),
                            _ if s.checker => planar.uv(mesh, poly, v),
                            _ => Vec2::ZERO,
                        };
                        let n = n.as_vec3();
                        Some(ClipVertex {
                            clip: *clip.get(v as usize)?,
                            attr: [n.x, n.y, n.z, uv.x, uv.y],
                        })
                    };
                    let tris = if poly.len() == 3 {
                        vec![[0, 1, 2]]
                    } else {
                        geometry::triangulate(&positions, poly)
                    };
                    for t in tris {
                        let (Some(a), Some(b), Some(c)) =
                            (vertex(t[0]), vertex(t[1]), vertex(t[2]))
                        else {
                            continue;
                        };
                        let v = [a, b, c];
                        if s.alpha < 1.0 {
                            let depth = (a.clip.w + b.clip.w + c.clip.w) / 3.0;
                            deferred.push(Deferred { depth, v, surface: si });
                            continue;
                        }
                        let mode = Mode { cull_back: !s.two_sided, depth_write: true };
                        let (w, h) = (target.width, target.height);
                        target.triangle(v, mode, &mut |f| shade(f, s, view, w, h));
                    }
                }
            }
            if opts.bsphere {
                all_positions.push(positions);
            }
        }
        // Far to near; equal depths keep drawing order (stable sort).
        deferred.sort_by(|a, b| b.depth.total_cmp(&a.depth));
        for d in &deferred {
            let s = &surfaces[d.surface];
            let mode = Mode { cull_back: !s.two_sided, depth_write: false };
            let (w, h) = (target.width, target.height);
            target.triangle(d.v, mode, &mut |f| shade(f, s, view, w, h));
        }
        if let Some((lo, hi)) = bounds {
            if opts.bbox {
                draw_box(&mut target, view, lo, hi);
            }
            if opts.bsphere {
                let centre = (lo + hi) * 0.5;
                let radius = all_positions
                    .iter()
                    .flatten()
                    .filter(|p| p.is_finite())
                    .map(|p| p.distance(centre))
                    .fold(0.0, f64::max);
                draw_sphere(&mut target, view, centre, radius);
            }
        }
        Ok(to_image(&target, opts))
    }

    /// How material `material` (an index into [`Scene::materials`]) is drawn, its texture
    /// decoded (once per image; problems go to [`take_warnings`](Self::take_warnings)); the
    /// default material for an index past the list.
    pub fn surface_of(&mut self, material: usize) -> Surface {
        let scene = self.scene;
        match scene.materials.get(material) {
            Some(m) => self.surface(m),
            None => Surface::default_material(),
        }
    }

    /// The surface of every polygon of `mesh` as [`Renderer::render`] picks it: the index into
    /// [`Scene::materials`] of its material slot, or `None` for the default material (no slot,
    /// an empty slot or an index past the list).
    pub fn polygon_surfaces(&self, mesh: &Mesh) -> Vec<Option<usize>> {
        let n = self.scene.materials.len();
        (0..mesh.polygon_count())
            .map(|p| {
                let slot = mesh.polygon_material(p);
                mesh.material_slots.get(slot as usize).copied().flatten().filter(|&m| m < n)
            })
            .collect()
    }

    /// The texture coordinates [`Renderer::render`] interpolates at every corner of `mesh`
    /// (indexed like [`Mesh::corner_vertices`]): the first UV set through the map's UV
    /// transform where the polygon's surface is textured or the checker; for the checker on a
    /// mesh without UVs, the planar projection of the rest positions (see `docs/render.md`);
    /// else 0.
    pub fn corner_uvs(&mut self, mesh: &Mesh) -> Vec<Vec2> {
        let surfaces: Vec<Surface> =
            (0..self.scene.materials.len()).map(|m| self.surface_of(m)).collect();
        let default_surface = Surface::default_material();
        let uvs = mesh.uv_sets.first().map(|s| &s.uvs);
        let planar = PlanarChecker::new(mesh);
        let mut out = vec![Vec2::ZERO; mesh.corner_vertices.len()];
        for (p, surface) in self.polygon_surfaces(mesh).into_iter().enumerate() {
            let s = surface.and_then(|m| surfaces.get(m)).unwrap_or(&default_surface);
            let poly = mesh.polygon(p);
            for (k, c) in mesh.polygon_corners(p).enumerate() {
                let Some(&v) = poly.get(k) else { continue };
                out[c] = match uvs.and_then(|a| a.get(v, c, p)) {
                    Some(uv) if s.checker || s.texture.is_some() => transform_uv(uv, &s.uv),
                    _ if s.checker => planar.uv(mesh, poly, v),
                    _ => Vec2::ZERO,
                };
            }
        }
        out
    }

    /// Per-corner world-space unit normals of `mesh` posed at `positions`.
    fn world_normals(
        &self,
        mesh: &Mesh,
        positions: &[DVec3],
        pose: &Pose,
        node: NodeId,
    ) -> Vec<Vec3> {
        world_corner_normals(self.scene, mesh, positions, pose, node)
    }

    /// How material `m` is drawn: its diffuse colour, or its first diffuse texture (the
    /// checker when that cannot be loaded).
    fn surface(&mut self, m: &Material) -> Surface {
        let map = m.maps.iter().find(|t| t.slot == MapSlot::Diffuse && !t.file.is_empty());
        let mut s = Surface {
            color: m.effective_diffuse().to_array().map(|c| {
                if c.is_finite() {
                    c.clamp(0.0, 1.0)
                } else {
                    0.8
                }
            }),
            texture: None,
            strength: 1.0,
            uv: UvTransform::default(),
            checker: false,
            alpha: 1.0
                - if m.transparency.is_finite() { m.transparency.clamp(0.0, 1.0) } else { 0.0 },
            two_sided: m.two_sided,
            specular: (m.specular * m.shininess_strength).to_array().map(|c| {
                if c.is_finite() {
                    c.clamp(0.0, 1.0)
                } else {
                    0.0
                }
            }),
            exponent: shininess_exponent(m.shininess),
            self_illumination: if m.self_illumination.is_finite() {
                m.self_illumination.clamp(0.0, 1.0)
            } else {
                0.0
            },
        };
        if let Some(map) = map {
            s.uv = map.uv_transform;
            s.strength = if map.strength.is_finite() { map.strength.clamp(0.0, 1.0) } else { 1.0 };
            s.texture = match &map.embedded {
                Some(bytes) => self.embedded_texture(&map.file, bytes, &m.name),
                None => self.texture(&map.file, map.resolved.as_deref(), &m.name),
            };
            s.checker = s.texture.is_none();
        }
        s
    }

    /// The decoded embedded image of map `file` (once per image), or `None` with a warning
    /// when it cannot be decoded.
    fn embedded_texture(
        &mut self,
        file: &str,
        bytes: &Arc<[u8]>,
        material: &str,
    ) -> Option<Arc<Texture>> {
        let key = bytes.as_ptr() as usize;
        if let Some(t) = self.embedded.get(&key) {
            return t.clone();
        }
        let t = match Texture::from_bytes(bytes) {
            Ok(t) => Some(Arc::new(t)),
            Err(e) => {
                self.warnings.push(Warning {
                    offset: None,
                    place: format!("material {material}", material = quoted(&material)),
                    message: format!(
                        "embedded texture {file} could not be decoded ({e}); drawn with the \
                         default (checker) material",
                        file = quoted(&file)
                    ),
                });
                None
            }
        };
        self.embedded.insert(key, t.clone());
        t
    }

    /// The decoded texture `file` (found at `resolved`, else by name in the base folder), or
    /// `None` with a warning (once per file) when it is missing or cannot be decoded.
    fn texture(
        &mut self,
        file: &str,
        resolved: Option<&Path>,
        material: &str,
    ) -> Option<Arc<Texture>> {
        let path = resolved.map(Path::to_path_buf).or_else(|| {
            self.base_dir.as_deref().and_then(|d| texture::resolve_case_insensitive(d, file))
        });
        let Some(path) = path else {
            if self.missing.insert(file.to_owned()) {
                self.warnings.push(Warning {
                    offset: None,
                    place: format!("material {material}", material = quoted(&material)),
                    message: format!(
                        "texture {file} not found beside the scene; drawn with the default \
                         (checker) material",
                        file = quoted(&file)
                    ),
                });
            }
            return None;
        };
        if let Some(t) = self.textures.get(&path) {
            return t.clone();
        }
        let t = match Texture::load(&path) {
            Ok(t) => Some(Arc::new(t)),
            Err(e) => {
                self.warnings.push(Warning {
                    offset: None,
                    place: format!("material {material}", material = quoted(&material)),
                    message: format!(
                        "texture {file} could not be decoded ({e}); drawn with the default \
                         (checker) material",
                        file = quoted(&file)
                    ),
                });
                None
            }
        };
        self.textures.insert(path, t.clone());
        t
    }
}

/// The per-corner world-space unit normals [`Renderer::render`] shades node `node`'s `mesh`
/// with, `positions` being its posed world positions ([`Pose::world_positions`]), indexed like
/// [`Mesh::corner_vertices`]: [`geometry::corner_normals`] through the normal matrix of
/// [`Pose::mesh_to_world`] (stored normals, else smoothing groups or faces of the posed
/// positions); for a mesh with stored normals and a skin or blend shapes with normal deltas,
/// the stored normals deformed as [`Pose::world_corner_normals`] deforms them (the skinning
/// matrices of the positions, ufbx's rule), a corner whose deformed normal is zero keeping
/// the former.
pub fn world_corner_normals(
    scene: &Scene,
    mesh: &Mesh,
    positions: &[DVec3],
    pose: &Pose,
    node: NodeId,
) -> Vec<Vec3> {
    let nm = geometry::normal_matrix(pose.mesh_to_world(scene, node));
    let mut out = geometry::corner_normals(mesh, positions, nm);
    let deforms =
        mesh.skin.is_some() || mesh.morph_targets.iter().any(|t| t.normal_deltas.is_some());
    if let Some(deformed) = deforms.then(|| pose.world_corner_normals(scene, node)).flatten() {
        for (n, d) in out.iter_mut().zip(deformed) {
            if d != DVec3::ZERO {
                *n = d.as_vec3();
            }
        }
    }
    out
}

/// The Blinn-Phong exponent for shininess `s` (0–1): `2^(10·s)` rounded, capped to 1…128, as
/// lib3ds's OpenGL player maps 3DS shininess to `GL_SHININESS`.
fn shininess_exponent(s: f32) -> u32 {
    let s = if s.is_finite() { s.clamp(0.0, 1.0) } else { 0.0 };
    (2f32.powf(10.0 * s).round() as u32).clamp(1, 128)
}

/// `x^e` by repeated squaring: the same multiplications in the same order on every machine.
fn powi(mut x: f32, mut e: u32) -> f32 {
    let mut r = 1.0f32;
    while e > 0 {
        if e & 1 == 1 {
            r *= x;
        }
        x *= x;
        e >>= 1;
    }
    r
}

/// `uv' = offset + R(rotation) · (scale ∘ uv)`.
fn transform_uv(uv: Vec2, t: &UvTransform) -> Vec2 {
    let s = uv * t.scale;
    if t.rotation_degrees == 0.0 {
        return s + t.offset;
    }
    let (sin, cos) = t.rotation_degrees.to_radians().sin_cos();
    Vec2::new(cos * s.x - sin * s.y, sin * s.x + cos * s.y) + t.offset
}

/// Texture coordinates for the checker on a mesh without UVs: its rest positions projected
/// onto the mesh-space plane facing each polygon most, scaled so the mesh's rest box diagonal
/// spans one unit ([`texture::CHECKER_CELLS`] squares). Sticks to the surface as it moves.
struct PlanarChecker {
    origin: DVec3,
    scale: f64,
}

impl PlanarChecker {
    fn new(mesh: &Mesh) -> PlanarChecker {
        let finite = mesh.positions.iter().filter(|p| p.is_finite());
        let lo = finite.clone().fold(DVec3::INFINITY, |a, &p| a.min(p));
        let hi = finite.fold(DVec3::NEG_INFINITY, |a, &p| a.max(p));
        let d = (hi - lo).length();
        let scale = if d.is_finite() && d > 0.0 { 1.0 / d } else { 1.0 };
        PlanarChecker { origin: if lo.is_finite() { lo } else { DVec3::ZERO }, scale }
    }

    fn uv(&self, mesh: &Mesh, poly: &[u32], v: u32) -> Vec2 {
        let n = geometry::newell_normal(&mesh.positions, poly).abs();
        let p = (mesh.positions.get(v as usize).copied().unwrap_or_default() - self.origin)
            * self.scale;
        let uv = if n.x >= n.y && n.x >= n.z {
            (p.y, p.z)
        } else if n.y >= n.z {
            (p.x, p.z)
        } else {
            (p.x, p.y)
        };
        Vec2::new(uv.0 as f32, uv.1 as f32)
    }
}

/// The colour of a fragment of surface `s` (RGBA, linear 0–1).
fn shade(f: &Fragment, s: &Surface, view: &View, width: usize, height: usize) -> [f32; 4] {
    let a = &f.attr;
    let mut n = Vec3::new(a[0], a[1], a[2]);
    let len = n.length();
    n = if len > 0.0 { n / len } else { Vec3::Z };
    if f.back {
        n = -n;
    }
    // Towards the camera from the surface point, in camera space: −(x_ndc·tx, y_ndc·ty, −1)·w.
    let xn = (f.x as f32 + 0.5) / width as f32 * 2.0 - 1.0;
    let yn = 1.0 - (f.y as f32 + 0.5) / height as f32 * 2.0;
    let l = match view.orthographic {
        Some(_) => Vec3::Z,
        None => Vec3::new(-xn * view.tan_half_fov.x as f32, -yn * view.tan_half_fov.y as f32, 1.0),
    };
    let l = l / l.length();
    let ndl = (n.x * l.x + n.y * l.y + n.z * l.z).max(0.0);
    let base = if s.checker {
        texture::checker(a[3], a[4])
    } else if let Some(t) = &s.texture {
        let c = t.sample(a[3], a[4]);
        let k = s.strength;
        [0, 1, 2].map(|i| c[i] * k + s.color[i] * (1.0 - k))
    } else {
        s.color
    };
    let lit = (AMBIENT + (1.0 - AMBIENT) * ndl).max(s.self_illumination);
    let spec = powi(ndl, s.exponent);
    let c = [0, 1, 2].map(|i| base[i] * lit + s.specular[i] * spec);
    [c[0], c[1], c[2], s.alpha]
}

/// The 12 edges of the box `(lo, hi)`.
fn draw_box(target: &mut Target, view: &View, lo: DVec3, hi: DVec3) {
    let corner = |i: usize| {
        DVec3::new(
            if i & 1 == 0 { lo.x } else { hi.x },
            if i & 2 == 0 { lo.y } else { hi.y },
            if i & 4 == 0 { lo.z } else { hi.z },
        )
    };
    for i in 0..8 {
        for bit in [1, 2, 4] {
            if i & bit == 0 {
                target.line(view.clip(corner(i)), view.clip(corner(i | bit)), BBOX_COLOR);
            }
        }
    }
}

/// Three great circles (in the XY, YZ and ZX planes) of the sphere, 72 segments each.
fn draw_sphere(target: &mut Target, view: &View, centre: DVec3, radius: f64) {
    const SEGMENTS: usize = 72;
    let axes = [(DVec3::X, DVec3::Y), (DVec3::Y, DVec3::Z), (DVec3::Z, DVec3::X)];
    for (u, v) in axes {
        let point = |k: usize| {
            let t = k as f64 / SEGMENTS as f64 * std::f64::consts::TAU;
            centre + (u * t.cos() + v * t.sin()) * radius
        };
        for k in 0..SEGMENTS {
            target.line(view.clip(point(k)), view.clip(point(k + 1)), BSPHERE_COLOR);
        }
    }
}

/// Quantises the colour buffer: `round(clamp(c, 0, 1) · 255)`.
fn to_image(t: &Target, opts: &Options) -> Image {
    let q = |c: f32| (c.clamp(0.0, 1.0) * 255.0 + 0.5) as u8;
    let mut rgb = Vec::with_capacity(t.color.len() * 3);
    for c in &t.color {
        rgb.extend_from_slice(&[q(c[0]), q(c[1]), q(c[2])]);
    }
    Image { width: opts.width, height: opts.height, rgb }
}

#[cfg(test)]
mod tests;

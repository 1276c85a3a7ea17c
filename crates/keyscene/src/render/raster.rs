//! The z-buffer rasteriser: triangles with a top-left fill rule on a fixed-point grid,
//! perspective-correct attributes, and one-pixel lines. See `docs/render.md`.
//!
//! # Conventions
//! Clip space is the renderer's own (see [`super::View`]): `x/w` and `y/w` run −1…1 across the
//! image (y up), `w` is the distance in front of the camera (perspective) or 1 (orthographic,
//! [`Target::orthographic`], where `−z` is that distance). Pixel `(x, y)` (y down) has its
//! sample point at its centre, `(x + ½, y + ½)`. Screen positions are snapped to 1/256 pixel and
//! the coverage test is exact integer arithmetic, so two triangles sharing an edge cover every
//! pixel along it exactly once. Depth is `z/w` (perspective views set `z = 1`, so `1/w`;
//! orthographic ones the camera-space `z`), larger is nearer; a fragment is drawn only when
//! strictly nearer than what is stored, so of two equal depths the first drawn stays.

use glam::DVec4;

/// Bits of sub-pixel precision of snapped screen positions (1/256 pixel).
pub const SUBPIXEL_BITS: u32 = 8;
const ONE: i64 = 1 << SUBPIXEL_BITS;
const HALF: i64 = ONE / 2;

/// Clip-space guard band: polygons are clipped to `|x|, |y| ≤ GUARD · w`, which keeps snapped
/// coordinates of images up to [`super::MAX_SIZE`] far inside `i64` edge-function range.
const GUARD: f64 = 4.0;

/// Attributes carried per vertex: view-space normal (3), texture coordinates (2).
pub const ATTRS: usize = 5;

/// A vertex after the vertex stage.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClipVertex {
    /// Clip-space position `(x, y, z, w)`; `z/w` is the depth (module docs).
    pub clip: DVec4,
    /// The attributes, interpolated perspective-correctly.
    pub attr: [f32; ATTRS],
}

/// A pixel being shaded.
#[derive(Debug, Clone, Copy)]
pub struct Fragment {
    /// Pixel column.
    pub x: usize,
    /// Pixel row (0 at the top).
    pub y: usize,
    /// Interpolated attributes.
    pub attr: [f32; ATTRS],
    /// The triangle faces away from the camera (only drawn when not culled).
    pub back: bool,
}

/// Colour (linear 0–1 RGB, composited in `f32`) and depth buffers.
#[derive(Debug, Clone)]
pub struct Target {
    /// Width in pixels.
    pub width: usize,
    /// Height in pixels.
    pub height: usize,
    /// Row-major colours, top row first.
    pub color: Vec<[f32; 3]>,
    /// Row-major depth `z/w` of the nearest surface drawn, −∞ where nothing was drawn.
    pub depth: Vec<f32>,
    /// Clip distance in front of the camera (scene units, > 0).
    pub near: f64,
    /// The view is orthographic: clip `w` is 1 and the near plane is at `−z = near` (set
    /// after [`Target::new`], which makes a perspective target).
    pub orthographic: bool,
}

/// How a triangle is drawn.
#[derive(Debug, Clone, Copy)]
pub struct Mode {
    /// Skip triangles facing away from the camera.
    pub cull_back: bool,
    /// Store the depth of drawn fragments (off for transparent surfaces).
    pub depth_write: bool,
}

impl Target {
    /// A `width × height` target filled with `background`, depth cleared.
    pub fn new(width: usize, height: usize, background: [f32; 3], near: f64) -> Target {
        Target {
            width,
            height,
            color: vec![background; width * height],
            depth: vec![f32::NEG_INFINITY; width * height],
            near,
            orthographic: false,
        }
    }

    /// How far clip position `c` is in front of the near plane (≥ 0: in front).
    fn in_front(&self, c: DVec4) -> f64 {
        if self.orthographic {
            -c.z - self.near
        } else {
            c.w - self.near
        }
    }

    /// Draws a triangle: clips it to the near plane and the guard band, then rasterises.
    /// `shade` returns the fragment's RGBA (alpha 1: opaque; below 1: blended over).
    pub fn triangle(
        &mut self,
        v: [ClipVertex; 3],
        mode: Mode,
        shade: &mut dyn FnMut(&Fragment) -> [f32; 4],
    ) {
        let planes = self.planes();
        if v.iter().all(|p| planes.iter().all(|pl| pl(p.clip) >= 0.0)) {
            self.raster(&v.map(|p| self.snap(p)), mode, shade);
            return;
        }
        let mut poly = v.to_vec();
        for plane in &planes {
            poly = clip_polygon(&poly, plane);
            if poly.len() < 3 {
                return;
            }
        }
        let s: Vec<Snapped> = poly.iter().map(|p| self.snap(*p)).collect();
        for k in 1..s.len() - 1 {
            self.raster(&[s[0], s[k], s[k + 1]], mode, shade);
        }
    }

    /// The clip planes as signed distances (inside ≥ 0): near, then the four guard planes.
    fn planes(&self) -> [impl Fn(DVec4) -> f64; 5] {
        let (near, orthographic) = (self.near, self.orthographic);
        [0, 1, 2, 3, 4].map(move |k| {
            move |c: DVec4| match k {
                0 if orthographic => -c.z - near,
                0 => c.w - near,
                1 => GUARD * c.w - c.x,
                2 => GUARD * c.w + c.x,
                3 => GUARD * c.w - c.y,
                _ => GUARD * c.w + c.y,
            }
        })
    }

    /// Clip position → snapped screen position, `1/w` and attributes divided by `w`.
    fn snap(&self, v: ClipVertex) -> Snapped {
        let (sx, sy) = self.screen(v.clip);
        let iw = 1.0 / v.clip.w;
        let iwf = iw as f32;
        Snapped {
            x: (sx * ONE as f64).round() as i64,
            y: (sy * ONE as f64).round() as i64,
            iw: iwf,
            depth: (v.clip.z * iw) as f32,
            attr: v.attr.map(|a| a * iwf),
        }
    }

    /// Clip position → continuous pixel coordinates (x right, y down; pixel centres at ½).
    pub fn screen(&self, c: DVec4) -> (f64, f64) {
        let sx = (c.x / c.w * 0.5 + 0.5) * self.width as f64;
        let sy = (0.5 - c.y / c.w * 0.5) * self.height as f64;
        (sx, sy)
    }

    fn raster(
        &mut self,
        v: &[Snapped; 3],
        mode: Mode,
        shade: &mut dyn FnMut(&Fragment) -> [f32; 4],
    ) {
        let area = edge(&v[0], &v[1], v[2].x, v[2].y);
        if area == 0 {
            return;
        }
        // Counter-clockwise in the scene (front) is clockwise on a y-down screen: area < 0.
        let back = area > 0;
        if back && mode.cull_back {
            return;
        }
        let v = if area < 0 { [v[0], v[2], v[1]] } else { *v };
        let area = area.abs();
        let min_x = v.iter().map(|p| p.x).min().unwrap_or(0);
        let max_x = v.iter().map(|p| p.x).max().unwrap_or(0);
        let min_y = v.iter().map(|p| p.y).min().unwrap_or(0);
        let max_y = v.iter().map(|p| p.y).max().unwrap_or(0);
        // Pixels whose centre (p·ONE + HALF) lies in [min, max].
        let first = |m: i64| (m - HALF + ONE - 1).div_euclid(ONE).max(0);
        let last = |m: i64, n: usize| (m - HALF).div_euclid(ONE).min(n as i64 - 1);
        let (x0, x1) = (first(min_x), last(max_x, self.width));
        let (y0, y1) = (first(min_y), last(max_y, self.height));
        if x0 > x1 || y0 > y1 {
            return;
        }
        // Edge k is opposite vertex k; its value is vertex k's barycentric weight × area.
        let edges = [(v[1], v[2]), (v[2], v[0]), (v[0], v[1])];
        let step_x = edges.map(|(a, b)| -(b.y - a.y) * ONE);
        let step_y = edges.map(|(a, b)| (b.x - a.x) * ONE);
        let bias = edges.map(|(a, b)| if top_left(&a, &b) { 0 } else { -1 });
        let (px, py) = (x0 * ONE + HALF, y0 * ONE + HALF);
        let mut row = edges.map(|(a, b)| edge(&a, &b, px, py));
        let inv_area = 1.0 / area as f32;
        for y in y0..=y1 {
            let mut e = row;
            for x in x0..=x1 {
                if e[0] + bias[0] >= 0 && e[1] + bias[1] >= 0 && e[2] + bias[2] >= 0 {
                    let l =
                        [e[0] as f32 * inv_area, e[1] as f32 * inv_area, e[2] as f32 * inv_area];
                    let iw = l[0] * v[0].iw + l[1] * v[1].iw + l[2] * v[2].iw;
                    let depth = l[0] * v[0].depth + l[1] * v[1].depth + l[2] * v[2].depth;
                    let idx = y as usize * self.width + x as usize;
                    if depth > self.depth[idx] {
                        let w = 1.0 / iw;
                        let mut attr = [0.0; ATTRS];
                        for (k, a) in attr.iter_mut().enumerate() {
                            *a = (l[0] * v[0].attr[k] + l[1] * v[1].attr[k] + l[2] * v[2].attr[k])
                                * w;
                        }
                        let frag = Fragment { x: x as usize, y: y as usize, attr, back };
                        let c = shade(&frag);
                        self.blend(idx, c);
                        if mode.depth_write {
                            self.depth[idx] = depth;
                        }
                    }
                }
                for k in 0..3 {
                    e[k] += step_x[k];
                }
            }
            for k in 0..3 {
                row[k] += step_y[k];
            }
        }
    }

    /// Composites `c` (RGBA, alpha 0–1) over pixel `idx`.
    fn blend(&mut self, idx: usize, c: [f32; 4]) {
        let a = c[3].clamp(0.0, 1.0);
        let d = &mut self.color[idx];
        if a >= 1.0 {
            *d = [c[0], c[1], c[2]];
        } else {
            for k in 0..3 {
                d[k] = c[k] * a + d[k] * (1.0 - a);
            }
        }
    }

    /// Draws a one-pixel line between two clip-space points in `color`, without depth test:
    /// clipped to the near plane and the image, then stepped one pixel at a time along its
    /// longer axis (digital differential analyser, `f64`).
    pub fn line(&mut self, a: DVec4, b: DVec4, color: [f32; 3]) {
        let (da, db) = (self.in_front(a), self.in_front(b));
        if da < 0.0 && db < 0.0 {
            return;
        }
        let cut = |p: DVec4, q: DVec4, dp: f64, dq: f64| p + (q - p) * (dp / (dp - dq));
        let (a, b) = match (da < 0.0, db < 0.0) {
            (true, _) => (cut(a, b, da, db), b),
            (_, true) => (a, cut(a, b, da, db)),
            _ => (a, b),
        };
        let (ax, ay) = self.screen(a);
        let (bx, by) = self.screen(b);
        // Liang–Barsky against [0, width] × [0, height].
        let (dx, dy) = (bx - ax, by - ay);
        let (mut t0, mut t1) = (0.0f64, 1.0f64);
        for (p, q) in
            [(-dx, ax), (dx, self.width as f64 - ax), (-dy, ay), (dy, self.height as f64 - ay)]
        {
            if p == 0.0 {
                if q < 0.0 {
                    return;
                }
            } else {
                let r = q / p;
                if p < 0.0 {
                    t0 = t0.max(r);
                } else {
                    t1 = t1.min(r);
                }
            }
        }
        if t0.is_nan() || t1.is_nan() || t0 > t1 {
            return;
        }
        let (x0, y0) = (ax + dx * t0, ay + dy * t0);
        let (x1, y1) = (ax + dx * t1, ay + dy * t1);
        let steps = (x1 - x0).abs().max((y1 - y0).abs()).ceil().max(1.0);
        let n = steps as i64;
        for i in 0..=n {
            let t = i as f64 / steps;
            let x = (x0 + (x1 - x0) * t).floor();
            let y = (y0 + (y1 - y0) * t).floor();
            if x >= 0.0 && y >= 0.0 && (x as usize) < self.width && (y as usize) < self.height {
                let idx = y as usize * self.width + x as usize;
                self.color[idx] = color;
            }
        }
    }
}

/// A vertex on the fixed-point screen grid.
#[derive(Debug, Clone, Copy)]
struct Snapped {
    x: i64,
    y: i64,
    iw: f32,
    /// `z/w`, larger is nearer.
    depth: f32,
    attr: [f32; ATTRS],
}

/// The edge function of `a → b` at `(px, py)`: twice the signed area of `a, b, p`, positive
/// when `p` lies to the right of `a → b` on a y-down screen.
fn edge(a: &Snapped, b: &Snapped, px: i64, py: i64) -> i64 {
    (b.x - a.x) * (py - a.y) - (b.y - a.y) * (px - a.x)
}

/// Whether `a → b` is a top or left edge of a triangle whose inside has non-negative edge
/// functions (Direct3D's fill rule): a left edge goes up the screen (its inside lies to the
/// right), a top edge is horizontal with the inside below it.
fn top_left(a: &Snapped, b: &Snapped) -> bool {
    let (dx, dy) = (b.x - a.x, b.y - a.y);
    dy < 0 || (dy == 0 && dx > 0)
}

/// Sutherland–Hodgman: the part of `poly` where `plane ≥ 0`, attributes interpolated linearly
/// in clip space.
fn clip_polygon(poly: &[ClipVertex], plane: &impl Fn(DVec4) -> f64) -> Vec<ClipVertex> {
    let mut out = Vec::with_capacity(poly.len() + 2);
    for (i, &p) in poly.iter().enumerate() {
        let q = poly[(i + 1) % poly.len()];
        let (dp, dq) = (plane(p.clip), plane(q.clip));
        if dp >= 0.0 {
            out.push(p);
        }
        if (dp >= 0.0) != (dq >= 0.0) {
            let t = dp / (dp - dq);
            let mut attr = [0.0; ATTRS];
            for (k, a) in attr.iter_mut().enumerate() {
                *a = p.attr[k] + (q.attr[k] - p.attr[k]) * t as f32;
            }
            out.push(ClipVertex { clip: p.clip + (q.clip - p.clip) * t, attr });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A clip vertex at pixel position `(x, y)` of a `w × h` target, depth `w = 1`.
    fn at(x: f64, y: f64, w: usize, h: usize) -> ClipVertex {
        let cx = x / w as f64 * 2.0 - 1.0;
        let cy = 1.0 - y / h as f64 * 2.0;
        ClipVertex { clip: DVec4::new(cx, cy, 1.0, 1.0), attr: [0.0; ATTRS] }
    }

    const BOTH: Mode = Mode { cull_back: false, depth_write: false };

    /// How many times each pixel is shaded when drawing `tris` (pixel coordinates).
    fn coverage(tris: &[[(f64, f64); 3]], w: usize, h: usize) -> Vec<u32> {
        let mut t = Target::new(w, h, [0.0; 3], 1e-3);
        let mut count = vec![0u32; w * h];
        for tri in tris {
            let v = tri.map(|(x, y)| at(x, y, w, h));
            t.triangle(v, BOTH, &mut |f| {
                count[f.y * w + f.x] += 1;
                [1.0; 4]
            });
        }
        count
    }

    #[test]
    fn top_edge_pixels_are_in_and_bottom_edge_pixels_are_out() {
        // A square whose edges run exactly through sample points (rows 1.5 and 3.5, columns
        // 0.5 and 3.5): the top edge (y = 1.5) is included, the bottom (y = 3.5) is not; the
        // left edge (x = 0.5) is included, the right (x = 3.5) is not.
        let (a, b, c, d) = ((0.5, 1.5), (3.5, 1.5), (3.5, 3.5), (0.5, 3.5));
        // Counter-clockwise on a y-up screen is clockwise here: a, d, c and a, c, b.
        let cov = coverage(&[[a, d, c], [a, c, b]], 5, 5);
        let rows: Vec<Vec<u32>> = cov.chunks(5).map(<[u32]>::to_vec).collect();
        assert_eq!(rows[0], [0, 0, 0, 0, 0]);
        assert_eq!(rows[1], [1, 1, 1, 0, 0]);
        assert_eq!(rows[2], [1, 1, 1, 0, 0]);
        assert_eq!(rows[3], [0, 0, 0, 0, 0]);
    }

    #[test]
    fn triangles_sharing_an_edge_cover_each_pixel_once() {
        // A fan of 7 triangles round an off-grid centre, edges at awkward slopes, covering a
        // 12×10 rectangle that runs through pixel centres: every pixel inside is shaded exactly
        // once, none twice (no gaps, no overdraw).
        let (w, h) = (16, 14);
        let c = (6.3, 5.7);
        let rim = [
            (1.5, 1.5),
            (7.21, 1.5),
            (13.5, 1.5),
            (13.5, 6.93),
            (13.5, 11.5),
            (4.77, 11.5),
            (1.5, 11.5),
            (1.5, 6.1),
        ];
        let tris: Vec<_> = (0..rim.len()).map(|k| [c, rim[(k + 1) % rim.len()], rim[k]]).collect();
        let cov = coverage(&tris, w, h);
        for y in 0..h {
            for x in 0..w {
                let (cx, cy) = (x as f64 + 0.5, y as f64 + 0.5);
                // Top-left rule on the rectangle [1.5, 13.5) × [1.5, 11.5).
                let inside = (1.5..13.5).contains(&cx) && (1.5..11.5).contains(&cy);
                assert_eq!(cov[y * w + x], inside as u32, "pixel ({x}, {y})");
            }
        }
    }

    #[test]
    fn back_faces_are_culled_when_asked() {
        let mut t = Target::new(4, 4, [0.0; 3], 1e-3);
        // Clockwise in y-up clip space: facing away.
        let v = [at(0.0, 0.0, 4, 4), at(4.0, 0.0, 4, 4), at(0.0, 4.0, 4, 4)];
        let mut n = 0;
        t.triangle(v, Mode { cull_back: true, depth_write: true }, &mut |_| {
            n += 1;
            [1.0; 4]
        });
        assert_eq!(n, 0);
        t.triangle(v, BOTH, &mut |f| {
            assert!(f.back);
            n += 1;
            [1.0; 4]
        });
        // Centres with x + y < 3; those on the hypotenuse x + y = 3 lie on a bottom-right edge.
        assert_eq!(n, 6);
    }

    #[test]
    fn attributes_are_perspective_correct() {
        // A triangle receding from w = 1 (bottom edge) to w = 3 (top corner), its attribute
        // 0 at the bottom and 1 at the top, linear in space: 1/w is affine on the screen, the
        // attribute is not.
        let mut t = Target::new(8, 8, [0.0; 3], 1e-3);
        let v = |x: f64, y: f64, w: f64, a: f32| ClipVertex {
            clip: DVec4::new(x * w, y * w, 1.0, w),
            attr: [a, 0.0, 0.0, 0.0, 0.0],
        };
        // Bottom edge at y_ndc = −1 (w = 1), top edge at y_ndc = +1 (w = 3).
        let q = [v(-1.0, -1.0, 1.0, 0.0), v(1.0, -1.0, 1.0, 0.0), v(1.0, 1.0, 3.0, 1.0)];
        let mut got = Vec::new();
        t.triangle(q, BOTH, &mut |f| {
            if f.x == 7 {
                got.push((f.y, f.attr[0]));
            }
            [1.0; 4]
        });
        // Pixel row 3 has its centre at y_ndc = 1 − 3.5/4 = 0.125; 1/w = lerp(1, 1/3, s) with
        // s = (0.125 + 1)/2 = 0.5625 → 1/w = 0.625, w = 1.6, attribute (1.6 − 1)/2 = 0.3.
        let (_, a) = got.iter().find(|(y, _)| *y == 3).copied().unwrap();
        assert!((a - 0.3).abs() < 1e-3, "got {a}");
    }

    #[test]
    fn near_plane_clips_instead_of_wrapping_behind_the_camera() {
        // One vertex behind the camera: only the part in front is drawn, nothing panics.
        let mut t = Target::new(8, 8, [0.0; 3], 0.1);
        let a = ClipVertex { clip: DVec4::new(0.0, 0.5, 1.0, -1.0), attr: [0.0; ATTRS] };
        let b = at(1.0, 7.0, 8, 8);
        let c = at(7.0, 7.0, 8, 8);
        let mut n = 0;
        t.triangle([a, b, c], BOTH, &mut |_| {
            n += 1;
            [1.0; 4]
        });
        assert!(n > 0 && n < 64);
    }
}

//! Diffuse textures: decoding (the `image` crate: PNG, JPEG, TGA, BMP), bilinear sampling with
//! repeat wrap, and the checker of the default material.

use std::path::{Path, PathBuf};

/// Textures wider or taller than this many pixels are not loaded (the default material is
/// drawn instead, with a warning).
pub const MAX_TEXTURE_SIZE: u32 = 8192;

/// A decoded texture: 8-bit RGB texels, row 0 at the top of the image.
#[derive(Clone)]
pub struct Texture {
    width: usize,
    height: usize,
    texels: Vec<[u8; 3]>,
}

impl std::fmt::Debug for Texture {
    /// The size only, not the texels.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Texture({}×{})", self.width, self.height)
    }
}

impl Texture {
    /// Decodes the image file at `path`. Errors name the file and what went wrong: unreadable,
    /// not a PNG/JPEG/TGA/BMP, corrupt, or larger than [`MAX_TEXTURE_SIZE`].
    pub fn load(path: &Path) -> Result<Texture, String> {
        let reader = image::ImageReader::open(path)
            .and_then(|r| r.with_guessed_format())
            .map_err(|e| format!("{}: {e}", path.display()))?;
        Self::decode(reader).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Decodes an image held in memory (an FBX `Video` › `Content`), with the limits and
    /// formats of [`load`](Self::load); errors say what went wrong.
    pub fn from_bytes(bytes: &[u8]) -> Result<Texture, String> {
        let reader = image::ImageReader::new(std::io::Cursor::new(bytes))
            .with_guessed_format()
            .map_err(|e| e.to_string())?;
        Self::decode(reader)
    }

    fn decode<R: std::io::BufRead + std::io::Seek>(
        mut reader: image::ImageReader<R>,
    ) -> Result<Texture, String> {
        let mut limits = image::Limits::default();
        limits.max_image_width = Some(MAX_TEXTURE_SIZE);
        limits.max_image_height = Some(MAX_TEXTURE_SIZE);
        limits.max_alloc = Some(512 << 20);
        reader.limits(limits);
        let img = reader.decode().map_err(|e| e.to_string())?.into_rgb8();
        let (width, height) = (img.width() as usize, img.height() as usize);
        if width == 0 || height == 0 {
            return Err("the image has no pixels".into());
        }
        let texels = img.pixels().map(|p| p.0).collect();
        Ok(Texture { width, height, texels })
    }

    /// A texture from RGB texels, row 0 at the top; `None` when `texels` does not hold
    /// `width × height` texels or either is 0.
    pub fn from_texels(width: usize, height: usize, texels: Vec<[u8; 3]>) -> Option<Texture> {
        (width > 0 && height > 0 && texels.len() == width.checked_mul(height)?).then_some(Texture {
            width,
            height,
            texels,
        })
    }

    /// Width, texels.
    pub fn width(&self) -> usize {
        self.width
    }

    /// Height, texels.
    pub fn height(&self) -> usize {
        self.height
    }

    /// The texels, row-major, row 0 at the top of the image, 8-bit RGB.
    pub fn texels(&self) -> &[[u8; 3]] {
        &self.texels
    }

    /// The colour (RGB 0–1) at texture coordinates `(u, v)`, V up (OpenGL convention: v = 0 is
    /// the image's bottom row), bilinear between the four nearest texel centres, wrapping
    /// round both edges (repeat). Non-finite coordinates read as 0.
    pub fn sample(&self, u: f32, v: f32) -> [f32; 3] {
        let fin = |a: f32| if a.is_finite() { a } else { 0.0 };
        // Only the fractional part matters; taking it first keeps precision for large u, v.
        let (u, v) = (fin(u) - fin(u).floor(), fin(v) - fin(v).floor());
        let x = u * self.width as f32 - 0.5;
        let y = (1.0 - v) * self.height as f32 - 0.5;
        let (x0, y0) = (x.floor(), y.floor());
        let (fx, fy) = (x - x0, y - y0);
        let wrap = |i: f32, n: usize| (i as i64).rem_euclid(n as i64) as usize;
        let (xa, xb) = (wrap(x0, self.width), wrap(x0 + 1.0, self.width));
        let (ya, yb) = (wrap(y0, self.height), wrap(y0 + 1.0, self.height));
        let t = |x: usize, y: usize| self.texels[y * self.width + x];
        let (a, b, c, d) = (t(xa, ya), t(xb, ya), t(xa, yb), t(xb, yb));
        let mut out = [0.0; 3];
        for (k, o) in out.iter_mut().enumerate() {
            let top = f32::from(a[k]) * (1.0 - fx) + f32::from(b[k]) * fx;
            let bottom = f32::from(c[k]) * (1.0 - fx) + f32::from(d[k]) * fx;
            *o = (top * (1.0 - fy) + bottom * fy) / 255.0;
        }
        out
    }
}

/// The default material's two checker colours (RGB 0–1): light grey and magenta, so a missing
/// material or texture stands out as in game engines' default materials.
pub const CHECKER: [[f32; 3]; 2] = [[0.85, 0.85, 0.85], [0.85, 0.2, 0.75]];

/// Checker squares per texture-coordinate unit.
pub const CHECKER_CELLS: f32 = 8.0;

/// The default material's colour at `(u, v)`: [`CHECKER`] squares, [`CHECKER_CELLS`] per unit.
pub fn checker(u: f32, v: f32) -> [f32; 3] {
    let cell = |a: f32| if a.is_finite() { (a * CHECKER_CELLS).floor() as i64 } else { 0 };
    CHECKER[((cell(u) + cell(v)) & 1) as usize]
}

/// `file`'s last path component (either slash style) found in `dir` ignoring ASCII case, as
/// 3DS files name 8.3 upper-case textures whose files are lower case.
pub fn resolve_case_insensitive(dir: &Path, file: &str) -> Option<PathBuf> {
    let name = file.rsplit(['/', '\\']).next().filter(|n| !n.is_empty())?;
    let exact = dir.join(name);
    if exact.is_file() {
        return Some(exact);
    }
    std::fs::read_dir(dir).ok()?.flatten().map(|e| e.path()).find(|p| {
        p.is_file()
            && p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.eq_ignore_ascii_case(name))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two_by_two() -> Texture {
        // Top row: black, white; bottom row: red, blue.
        Texture::from_texels(2, 2, vec![[0, 0, 0], [255, 255, 255], [255, 0, 0], [0, 0, 255]])
            .unwrap()
    }

    #[test]
    fn texel_centres_sample_exactly_and_v_points_up() {
        let t = two_by_two();
        // Texel (0, bottom row) centre: u = 0.25, v = 0.25 → red.
        assert_eq!(t.sample(0.25, 0.25), [1.0, 0.0, 0.0]);
        // Texel (1, top row) centre: u = 0.75, v = 0.75 → white.
        assert_eq!(t.sample(0.75, 0.75), [1.0, 1.0, 1.0]);
    }

    #[test]
    fn bilinear_blends_neighbours_and_wraps_round_the_edges() {
        let t = two_by_two();
        // Half-way between black (top left) and white (top right) centres.
        assert_eq!(t.sample(0.5, 0.75), [0.5, 0.5, 0.5]);
        // u = 0 lies half-way between the last column and the first (repeat): black/white.
        assert_eq!(t.sample(0.0, 0.75), [0.5, 0.5, 0.5]);
        // Whole-unit offsets change nothing.
        assert_eq!(t.sample(3.25, -1.75), t.sample(0.25, 0.25));
    }

    #[test]
    fn checker_alternates_every_eighth_unit() {
        assert_eq!(checker(0.01, 0.01), CHECKER[0]);
        assert_eq!(checker(0.13, 0.01), CHECKER[1]);
        assert_eq!(checker(0.13, 0.13), CHECKER[0]);
        assert_eq!(checker(-0.01, 0.01), CHECKER[1]);
    }
}

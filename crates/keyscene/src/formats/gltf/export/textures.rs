//! Textures, their images (embedded in the buffer, or files a `.gltf` refers to; other formats
//! than PNG and JPEG transcoded to PNG) and samplers.

use std::borrow::Cow;

use gltf_json as json;
use json::texture::WrappingMode;
use json::validation::Checked::Valid;

use super::materials::wrap_modes;
use super::Out;
use crate::formats::gltf::{warning, Container, ExternalImage};
use crate::scene::TextureMap;

/// Where a texture's image comes from: a file beside the scene, or bytes the scene carries
/// (keyed by their shared allocation, so maps sharing one embedded image share one glTF image).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) enum ImageKey {
    File(std::path::PathBuf),
    Embedded(usize),
}

/// A texture's key: its image and wrapS/wrapT (GL enums).
pub(super) type TextureKey = (ImageKey, [u32; 2]);

/// An image as glTF may hold it.
struct Allowed<'b> {
    bytes: Cow<'b, [u8]>,
    /// `image/png` or `image/jpeg`.
    mime: &'static str,
    /// The name it is written under (`<stem>.png` when transcoded).
    file_name: String,
    /// The PNG bytes when transcoded, for a `.gltf` that refers to the image by URI.
    transcoded: Option<std::sync::Arc<[u8]>>,
}

impl Out {
    /// The texture for a map whose image the scene carries ([`TextureMap::embedded`], always
    /// written into the buffer) or whose file was found (embedded in GLB, referenced by a
    /// `.gltf`).
    pub(super) fn texture(
        &mut self,
        material: &str,
        map: &TextureMap,
    ) -> Option<json::Index<json::Texture>> {
        let place = format!("material \"{material}\" › map \"{}\"", map.file);
        let image = match (&map.embedded, &map.resolved) {
            (Some(bytes), _) => ImageKey::Embedded(bytes.as_ptr() as usize),
            (None, Some(path)) => ImageKey::File(path.clone()),
            (None, None) => {
                self.warnings.push(warning(place, "texture file not found: left out"));
                return None;
            }
        };
        let wrap = wrap_modes(map);
        let key = (image.clone(), wrap.map(|w| w.as_gl_enum()));
        if let Some(&ix) = self.textures.get(&key) {
            return ix;
        }
        if self.textures.iter().any(|((p, _), ix)| *p == image && ix.is_none()) {
            return None;
        }
        let base_name = |f: &str| f.rsplit(['/', '\\']).next().unwrap_or(f).to_string();
        let file_name = match &map.resolved {
            Some(path) if map.embedded.is_none() => path
                .file_name()
                .and_then(|n| n.to_str())
                .map_or_else(|| map.file.clone(), str::to_string),
            _ => base_name(&map.file),
        };
        let source = match self.images_by_path.get(&image) {
            Some(&ix) => ix,
            None => self.image(&place, map, &key, &file_name)?,
        };
        let sampler = (wrap != [WrappingMode::Repeat; 2]).then(|| {
            *self.samplers.entry(wrap.map(|w| w.as_gl_enum())).or_insert_with(|| {
                json::Index::push(
                    &mut self.root.samplers,
                    json::texture::Sampler {
                        wrap_s: Valid(wrap[0]),
                        wrap_t: Valid(wrap[1]),
                        ..Default::default()
                    },
                )
            })
        });
        let tex = json::Index::push(
            &mut self.root.textures,
            json::Texture {
                name: Some(file_name),
                sampler,
                source,
                extensions: None,
                extras: Default::default(),
            },
        );
        self.textures.insert(key, Some(tex));
        Some(tex)
    }

    /// The glTF image of texture `key`'s image, named `file_name`: its bytes into the buffer, or
    /// (a found file, `.gltf` without embedding) a URI to the file. `None` when the file cannot
    /// be read or is no image glTF allows or keyscene can transcode: warned, and the texture
    /// recorded as unusable.
    fn image(
        &mut self,
        place: &str,
        map: &TextureMap,
        key: &TextureKey,
        file_name: &str,
    ) -> Option<json::Index<json::Image>> {
        let image = &key.0;
        let bytes: Cow<'_, [u8]> = match (&map.embedded, image) {
            (Some(bytes), _) => Cow::Borrowed(&bytes[..]),
            (None, ImageKey::File(path)) => match std::fs::read(path) {
                Ok(b) => Cow::Owned(b),
                Err(e) => {
                    self.warnings
                        .push(warning(place, format!("{}: {e}: left out", path.display())));
                    self.textures.insert(key.clone(), None);
                    return None;
                }
            },
            (None, ImageKey::Embedded(_)) => return None,
        };
        // A `.gltf` refers to a found file by name unless told to embed; everything else goes
        // into the buffer.
        let external = match image {
            ImageKey::File(path) if !self.embed && self.container != Container::Glb => {
                Some(path.clone())
            }
            _ => None,
        };
        let Some(Allowed { bytes, mime, file_name, transcoded }) =
            self.allowed_image(place, bytes, file_name)
        else {
            self.textures.insert(key.clone(), None);
            return None;
        };
        let image_json = match external {
            None => json::Image {
                buffer_view: Some(self.view(&bytes, None)),
                mime_type: Some(json::image::MimeType(mime.into())),
                name: Some(file_name.clone()),
                uri: None,
                extensions: None,
                extras: Default::default(),
            },
            Some(path) => {
                let uri = uri_encode(&file_name);
                self.images.push(ExternalImage {
                    uri: uri.clone(),
                    file_name: file_name.clone(),
                    source: path,
                    bytes: transcoded,
                });
                json::Image {
                    buffer_view: None,
                    mime_type: None,
                    name: Some(file_name.clone()),
                    uri: Some(uri),
                    extensions: None,
                    extras: Default::default(),
                }
            }
        };
        let ix = json::Index::push(&mut self.root.images, image_json);
        self.images_by_path.insert(image.clone(), ix);
        Some(ix)
    }

    /// An image glTF allows: PNG and JPEG as they are; other images the `image` crate decodes
    /// (TGA, BMP: what `render` reads) transcoded to PNG, named `<stem>.png` (warned); `None`
    /// (warned) for anything else.
    fn allowed_image<'b>(
        &mut self,
        place: &str,
        bytes: Cow<'b, [u8]>,
        file_name: &str,
    ) -> Option<Allowed<'b>> {
        if let Some(mime) = image_mime(&bytes) {
            return Some(Allowed {
                bytes,
                mime,
                file_name: file_name.to_string(),
                transcoded: None,
            });
        }
        let Some(png) = to_png(&bytes, file_name) else {
            self.warnings.push(warning(
                place,
                format!(
                    "{file_name} is not PNG or JPEG, the only images glTF allows, nor an image keyscene can transcode (TGA, BMP): left out"
                ),
            ));
            return None;
        };
        let stem = match file_name.rfind('.') {
            Some(i) if i > 0 => &file_name[..i],
            _ => file_name,
        };
        let png_name = format!("{stem}.png");
        self.warnings.push(warning(
            place,
            format!(
                "{file_name} transcoded to PNG as {png_name} (glTF allows PNG and JPEG images only)"
            ),
        ));
        let png: std::sync::Arc<[u8]> = png.into();
        Some(Allowed {
            bytes: Cow::Owned(png.to_vec()),
            mime: "image/png",
            file_name: png_name,
            transcoded: Some(png),
        })
    }
}

/// `image/png` or `image/jpeg` from the file's signature, else `None`.
/// `bytes` (an image the `image` crate decodes: TGA, BMP — the formats `render` reads) re-encoded
/// as PNG; `None` when it cannot be decoded. The format is recognised from the bytes, else from
/// `file_name`'s extension (TGA has no signature). Decoding is bounded: at most 16384 texels a
/// side and 512 MiB.
fn to_png(bytes: &[u8], file_name: &str) -> Option<Vec<u8>> {
    let mut reader = image::ImageReader::new(std::io::Cursor::new(bytes));
    if let Ok(format) = image::ImageFormat::from_path(file_name) {
        reader.set_format(format);
    }
    let mut reader = reader.with_guessed_format().ok()?;
    let mut limits = image::Limits::default();
    limits.max_image_width = Some(16384);
    limits.max_image_height = Some(16384);
    limits.max_alloc = Some(512 << 20);
    reader.limits(limits);
    let img = reader.decode().ok()?;
    let mut out = std::io::Cursor::new(Vec::new());
    img.write_to(&mut out, image::ImageFormat::Png).ok()?;
    Some(out.into_inner())
}

fn image_mime(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some("image/jpeg")
    } else {
        None
    }
}

/// Percent-encodes everything but RFC 3986 unreserved characters, for file names in URIs.
pub(crate) fn uri_encode(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for b in name.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

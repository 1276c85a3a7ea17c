//! Loading any supported file: the format recognised by content ([`FileFormat::detect`]),
//! then the format's reader. The layer above `formats` (issue 13: limits/error → scene → anim
//! → formats → this entry → CLI).

use std::path::Path;

use crate::io::{FileFormat, ReadOptions};
use crate::limits::Limits;
use crate::scene::{Scene, Warning};
use crate::Error;

/// Reads a scene from a file, recognising its format by content (then extension).
/// Returns the scene and the problems the reader survived.
pub fn load(path: &Path) -> Result<(Scene, Vec<Warning>), Error> {
    load_with(path, &ReadOptions { limits: Limits::default(), base_dir: None })
}

/// [`load`] with reader options: `opts.base_dir` resolves texture and buffer file names
/// (`None`: the file's own folder), `opts.limits` bounds what the reader allocates.
pub fn load_with(path: &Path, opts: &ReadOptions) -> Result<(Scene, Vec<Warning>), Error> {
    let bytes = std::fs::read(path).map_err(|source| Error::Io { path: path.into(), source })?;
    let mut opts = opts.clone();
    if opts.base_dir.is_none() {
        opts.base_dir =
            path.parent().map(|p| if p.as_os_str().is_empty() { Path::new(".") } else { p }.into());
    }
    load_bytes(&bytes, Some(path), &opts)
}

/// Reads a scene from bytes; `path` (which need not exist) only helps recognise the format.
pub fn load_bytes(
    bytes: &[u8],
    path: Option<&Path>,
    opts: &ReadOptions,
) -> Result<(Scene, Vec<Warning>), Error> {
    // An empty file is no scene in any format: say so before a reader's own words (a JSON
    // parser's "EOF while parsing", a chunk reader's "truncated") hide the plain fact.
    // Like every reader's error, these name no file: the caller knows it and says it once
    // (the CLI prefixes `FILE: `; it printed `e.fbx: e.fbx: …` when both did).
    if bytes.is_empty() {
        return Err(Error::UnknownFormat("the file is empty (0 bytes)".into()));
    }
    match FileFormat::detect(bytes, path) {
        #[cfg(feature = "three_ds")]
        Some(FileFormat::ThreeDs) => Ok(crate::formats::three_ds::read(bytes, opts)?),
        #[cfg(feature = "three_da")]
        Some(FileFormat::ThreeDa) => Ok(crate::formats::three_da::load(bytes, opts)?),
        #[cfg(feature = "gltf")]
        Some(FileFormat::Gltf) => Ok(crate::formats::gltf::read(bytes, opts)?),
        #[cfg(feature = "fbx")]
        Some(FileFormat::Fbx) => Ok(crate::formats::fbx::read(bytes, opts)?),
        #[allow(unreachable_patterns)]
        Some(f) => Err(Error::Unsupported(format!("{} support is not compiled in", f.name()))),
        None => Err(Error::UnknownFormat(
            "not a file format keyscene reads (3DS/PRJ, FBX, glTF/GLB, 3DA)".into(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn load_with_takes_the_limits_and_names_the_missing_file() {
        let path = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/FLY.3DS"));
        let (scene, _) = load_with(path, &ReadOptions::default()).unwrap();
        assert_eq!(scene.meshes.len(), 3);
        let tight = ReadOptions::default().limits(Limits { max_elements: 10, ..Limits::default() });
        let e = load_with(path, &tight).unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::Limit, "{e}");
        let e = load_with(Path::new("no/such.fbx"), &ReadOptions::default()).unwrap_err();
        assert_eq!(
            (e.kind(), e.path()),
            (crate::ErrorKind::NotFound, Some(Path::new("no/such.fbx")))
        );
    }
}

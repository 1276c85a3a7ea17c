//! Autodesk 3D Studio `.3ds` / `.prj` (being written: issue #2).

use crate::scene::{Scene, Warning};
use crate::ReadOptions;

/// A malformed 3DS file.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The file does not start with a 3DS root chunk.
    #[error("3ds: not a 3DS file: {0}")]
    NotThreeDs(String),
}

/// Reads a 3DS/PRJ file into a scene.
pub fn read(_bytes: &[u8], _opts: &ReadOptions) -> Result<(Scene, Vec<Warning>), Error> {
    Err(Error::NotThreeDs("reader not written yet".into()))
}

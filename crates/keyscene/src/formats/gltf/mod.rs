//! glTF 2.0 (being written: issue #2).

use crate::scene::{Scene, Warning};
use crate::ReadOptions;

/// A glTF problem.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Invalid glTF.
    #[error("gltf: {0}")]
    Invalid(String),
}

/// Reads a glTF/GLB file into a scene.
pub fn read(_bytes: &[u8], _opts: &ReadOptions) -> Result<(Scene, Vec<Warning>), Error> {
    Err(Error::Invalid("reader not written yet".into()))
}

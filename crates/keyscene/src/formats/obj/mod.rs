//! Wavefront OBJ writer (being written: issue #2).

/// An OBJ problem.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Cannot write.
    #[error("obj: {0}")]
    Write(String),
}

//! The 3DS reader's error type: every problem says where (byte offset and chunk path) and what
//! was expected.

/// A 3DS/PRJ file that cannot be read.
///
/// Displayed as `3ds: PLACE at byte 0xOFFSET: MESSAGE`, where PLACE is the chunk path from the
/// root, e.g. `MDATA › NAMED_OBJECT "Box01" › N_TRI_OBJECT › FACE_ARRAY`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Error {
    /// The bytes do not start with a 3DS root chunk (`M3DMAGIC` 0x4D4D or `CMAGIC` 0xC23D).
    #[error("3ds: not a 3DS file: {0}")]
    NotThreeDs(String),
    /// A chunk's payload does not hold what its id promises.
    #[error("3ds: {place} at byte {offset:#x}: {message}")]
    Malformed {
        /// The chunk path, outermost first, joined with ` › `.
        place: String,
        /// Absolute byte offset in the file where the problem starts.
        offset: u64,
        /// What was found and what was expected.
        message: String,
    },
    /// A count in the file exceeds [`crate::limits::Limits`].
    #[error("3ds: {place} at byte {offset:#x}: {message}")]
    Limit {
        /// The chunk path, outermost first.
        place: String,
        /// Absolute byte offset of the count.
        offset: u64,
        /// Which limit and the value asked for.
        message: String,
    },
}

impl Error {
    /// The absolute byte offset the error refers to, when it has one.
    pub fn offset(&self) -> Option<u64> {
        match self {
            Error::NotThreeDs(_) => Some(0),
            Error::Malformed { offset, .. } | Error::Limit { offset, .. } => Some(*offset),
        }
    }
}

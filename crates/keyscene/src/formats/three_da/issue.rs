//! [`Issue`] and [`Severity`]: one problem found in a 3DA file, at a byte offset. Shared by the
//! reader's structural walk ([`super::read`]) and the content rules of [`super::check`], and
//! kept below both so that `check` reads `read` and `read` does not read `check`.

use std::fmt;

/// How bad a problem is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// The engine would misread the file or fail on it.
    Error,
    /// The file loads, but departs from the canonical layout or the seed's conventions.
    Warning,
}

/// One problem, at the byte offset of the field that holds the bad value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Issue {
    /// Error or warning.
    pub severity: Severity,
    /// Byte offset in the file.
    pub offset: u64,
    /// What is wrong, with the path to it (`entity 2 "Box01" › surface 0 › tri_list: …`).
    pub message: String,
}

impl fmt::Display for Issue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        write!(f, "{s} at {:#x}: {}", self.offset, self.message)
    }
}

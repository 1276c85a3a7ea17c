//! Bounds on what a reader may allocate or how deep it may go, checked before allocating
//! (the image-rs `Limits` pattern). Every count read from a file is compared with the bytes
//! that remain *and* with these limits.

/// Resource limits for readers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Largest file (or decompressed array) a reader accepts, in bytes. Default 2 GiB.
    pub max_bytes: u64,
    /// Most elements (vertices, faces, keys, nodes…) in any single list. Default 2^28.
    pub max_elements: u64,
    /// Deepest nesting of chunks/records a reader descends into. Default 64.
    pub max_depth: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { max_bytes: 2 << 30, max_elements: 1 << 28, max_depth: 64 }
    }
}

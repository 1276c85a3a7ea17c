//! The crate's error type: one variant per format, each carrying where and what.

use std::path::PathBuf;

/// Everything that can stop keyscene from reading or writing a file.
///
/// Non-exhaustive: new formats and checks add variants; match the ones you handle and keep a
/// `_` arm.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Reading or writing a file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file's format could not be recognised from its bytes or extension.
    #[error("{0}")]
    UnknownFormat(String),
    /// A 3DS/PRJ file is malformed.
    #[cfg(feature = "three_ds")]
    #[error(transparent)]
    ThreeDs(#[from] crate::formats::three_ds::Error),
    /// A 3DA file is malformed or could not be written.
    #[cfg(feature = "three_da")]
    #[error(transparent)]
    ThreeDa(#[from] crate::formats::three_da::Error),
    /// An FBX file is malformed.
    #[cfg(feature = "fbx")]
    #[error(transparent)]
    Fbx(#[from] crate::formats::fbx::Error),
    /// A glTF file is malformed or could not be written.
    #[cfg(feature = "gltf")]
    #[error(transparent)]
    Gltf(#[from] crate::formats::gltf::Error),
    /// An OBJ file could not be written.
    #[cfg(feature = "obj")]
    #[error(transparent)]
    Obj(#[from] crate::formats::obj::Error),
    /// An image could not be rendered or encoded.
    #[cfg(feature = "render")]
    #[error(transparent)]
    Render(#[from] crate::render::Error),
    /// A file beside an output (a material script, a texture) would replace a different file
    /// written from another source (see [`crate::output`]); nothing was written.
    #[error("{path}: not replaced: it was written from {theirs}, and {what} from {ours} would replace it with other content (names collide; remove the file or convert into another folder)", path = path.display())]
    OutputCollision {
        /// The file that exists.
        path: PathBuf,
        /// What would have been written (`material script of "Stone"`).
        what: String,
        /// The source being converted now.
        ours: String,
        /// The source the existing file was written from (or "an earlier run or another
        /// program" when it records none).
        theirs: String,
    },
    /// The output file itself already exists and was not written by this process from the
    /// same source (see [`crate::output::claim_output`]); nothing was written.
    #[error("{path}: already exists{from}: not replaced (remove it, write elsewhere, or replace it on purpose with --force)", path = path.display(), from = match theirs { Some(t) => format!(" (written from {t} in this run, now {ours})"), None => String::new() })]
    OutputExists {
        /// The existing output.
        path: PathBuf,
        /// The source being converted now.
        ours: String,
        /// The source this process wrote the file from earlier in this run, if it did.
        theirs: Option<String>,
    },
    /// The scene cannot be written in the requested format.
    #[error("{0}")]
    Unsupported(String),
    /// Posing options name an animation or bind pose the scene does not have
    /// ([`Scene::pose`](crate::scene::Scene::pose), [`crate::anim::PoseOptions`]).
    #[error(transparent)]
    Pose(#[from] crate::anim::PoseError),
}

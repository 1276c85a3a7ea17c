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
    /// The output is a file the scene is read from — the input itself or a file it names (a
    /// texture, a geometry cache) — under whatever path spelling, link or hard link
    /// ([`crate::output::refuse_input`]); nothing was written, `force` or not.
    #[error("{output}: not written: it is {input}, a file the scene is read from (a source is never replaced, even with --force; write the output elsewhere)", output = output.display(), input = input.display())]
    WouldReplaceInput {
        /// The output asked for.
        output: PathBuf,
        /// The source file it is (as the scene names it).
        input: PathBuf,
    },
    /// The scene cannot be written in the requested format.
    #[error("{0}")]
    Unsupported(String),
    /// Posing options name an animation or bind pose the scene does not have
    /// ([`Scene::pose`](crate::scene::Scene::pose), [`crate::anim::PoseOptions`]).
    #[error(transparent)]
    Pose(#[from] crate::anim::PoseError),
    /// A conversion option has a value out of range or does not apply to the output
    /// ([`crate::convert::Settings`]); the text names the option as the command line spells
    /// it (`--fps 0: expected a positive number`).
    #[error("{0}")]
    Option(String),
    /// A reader's error with the file it was reading ([`Error::in_file`]): displayed as
    /// `PATH: ERROR`, as the command line prints a file it could not load.
    #[error("{}: {source}", path.display())]
    Read {
        /// The file being read.
        path: PathBuf,
        /// The reader's error (which names no file).
        source: Box<Error>,
    },
}

/// What kind of failure an [`Error`] is, for callers that map errors to their own types (the
/// Python package raises one exception class per kind, docs/python.md) or to exit codes.
/// Non-exhaustive: match the kinds you handle and keep a `_` arm.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The input file (or a file it names) does not exist ([`Error::Io`] with
    /// [`std::io::ErrorKind::NotFound`]).
    NotFound,
    /// Another I/O failure: permissions, a full disk, a folder where a file was expected.
    Io,
    /// The bytes are not a readable scene: unknown format, malformed or truncated data.
    BadInput,
    /// A count, size or depth in the file exceeds [`crate::limits::Limits`].
    Limit,
    /// The scene cannot be written in the requested format, or a format is not compiled in.
    Unsupported,
    /// The output (or a file beside it) exists and may not be replaced
    /// ([`Error::OutputExists`], [`Error::OutputCollision`]).
    OutputExists,
    /// A writer failed on a scene it accepted (an encoder or stream error).
    Write,
    /// An option names something the scene does not have, or has a value out of range
    /// ([`Error::Pose`], [`Error::Option`]).
    BadOption,
}

impl Error {
    /// This error with the file it was reading named: an I/O error (which names its file
    /// already) stays as it is, any other becomes [`Error::Read`].
    pub fn in_file(self, path: &std::path::Path) -> Error {
        match self {
            e @ (Error::Io { .. } | Error::Read { .. }) => e,
            e => Error::Read { path: path.to_path_buf(), source: Box::new(e) },
        }
    }

    /// This error's [`ErrorKind`].
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::Read { source, .. } => source.kind(),
            Error::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
                ErrorKind::NotFound
            }
            Error::Io { .. } => ErrorKind::Io,
            Error::UnknownFormat(_) => ErrorKind::BadInput,
            #[cfg(feature = "three_ds")]
            Error::ThreeDs(crate::formats::three_ds::Error::Limit { .. }) => ErrorKind::Limit,
            #[cfg(feature = "three_ds")]
            Error::ThreeDs(_) => ErrorKind::BadInput,
            #[cfg(feature = "three_da")]
            Error::ThreeDa(e) => match e {
                crate::formats::three_da::Error::Invalid(_) => ErrorKind::Unsupported,
                crate::formats::three_da::Error::Io(_) => ErrorKind::Write,
                _ => ErrorKind::BadInput,
            },
            #[cfg(feature = "fbx")]
            Error::Fbx(e) if matches!(e.kind, crate::formats::fbx::ErrorKind::Limit { .. }) => {
                ErrorKind::Limit
            }
            #[cfg(feature = "fbx")]
            Error::Fbx(_) => ErrorKind::BadInput,
            #[cfg(feature = "gltf")]
            Error::Gltf(e) => match e {
                crate::formats::gltf::Error::Limit { .. } => ErrorKind::Limit,
                crate::formats::gltf::Error::Write(_) => ErrorKind::Write,
                _ => ErrorKind::BadInput,
            },
            #[cfg(feature = "obj")]
            Error::Obj(_) => ErrorKind::Write,
            #[cfg(feature = "render")]
            Error::Render(_) => ErrorKind::Write,
            Error::OutputCollision { .. }
            | Error::OutputExists { .. }
            | Error::WouldReplaceInput { .. } => ErrorKind::OutputExists,
            Error::Unsupported(_) => ErrorKind::Unsupported,
            Error::Pose(_) | Error::Option(_) => ErrorKind::BadOption,
        }
    }

    /// Where in the file the problem is, as the reader names it: the 3DS chunk path and byte
    /// offset (`MDATA › NAMED_OBJECT "Box01" › N_TRI_OBJECT at byte 0x1c2`), the FBX record
    /// path with its line and column or byte offset, the glTF document place (`nodes[3]`), the
    /// 3DA byte offset. `None` when the error is not about a place in a file.
    pub fn place(&self) -> Option<String> {
        match self {
            Error::Read { source, .. } => source.place(),
            #[cfg(feature = "three_ds")]
            Error::ThreeDs(
                crate::formats::three_ds::Error::Malformed { place, offset, .. }
                | crate::formats::three_ds::Error::Limit { place, offset, .. },
            ) => Some(format!("{place} at byte {offset:#x}")),
            #[cfg(feature = "three_da")]
            Error::ThreeDa(crate::formats::three_da::Error::Malformed { offset, .. }) => {
                Some(format!("byte {offset:#x}"))
            }
            #[cfg(feature = "fbx")]
            Error::Fbx(e) => {
                let at = match e.line_column {
                    Some((line, column)) => {
                        format!("line {line}, column {column} (byte {:#x})", e.offset)
                    }
                    None => format!("byte {:#x}", e.offset),
                };
                Some(if e.path.is_empty() {
                    at
                } else {
                    format!("{} at {at}", e.path.join(" › "))
                })
            }
            #[cfg(feature = "gltf")]
            Error::Gltf(
                crate::formats::gltf::Error::Invalid { place, .. }
                | crate::formats::gltf::Error::Limit { place, .. },
            ) => Some(place.clone()),
            _ => None,
        }
    }

    /// The file the error names, when it names one: the file that could not be read or
    /// written, the existing output. Reader errors name no file (the caller knows which it
    /// read and says it once).
    pub fn path(&self) -> Option<&std::path::Path> {
        match self {
            Error::Io { path, .. }
            | Error::OutputCollision { path, .. }
            | Error::OutputExists { path, .. }
            | Error::Read { path, .. } => Some(path),
            Error::WouldReplaceInput { output, .. } => Some(output),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_follow_the_variant() {
        let missing = Error::Io {
            path: "x.fbx".into(),
            source: std::io::Error::from(std::io::ErrorKind::NotFound),
        };
        assert_eq!(missing.kind(), ErrorKind::NotFound);
        assert_eq!(missing.path(), Some(std::path::Path::new("x.fbx")));
        let denied = Error::Io {
            path: "x.fbx".into(),
            source: std::io::Error::from(std::io::ErrorKind::PermissionDenied),
        };
        assert_eq!(denied.kind(), ErrorKind::Io);
        assert_eq!(Error::UnknownFormat("x".into()).kind(), ErrorKind::BadInput);
        assert_eq!(Error::Unsupported("x".into()).kind(), ErrorKind::Unsupported);
        assert_eq!(Error::Option("--fps 0: x".into()).kind(), ErrorKind::BadOption);
        let exists = Error::OutputExists { path: "o.glb".into(), ours: "a".into(), theirs: None };
        assert_eq!((exists.kind(), exists.place()), (ErrorKind::OutputExists, None));
    }

    #[cfg(feature = "three_ds")]
    #[test]
    fn a_3ds_error_has_its_chunk_path_and_offset_as_place() {
        let e: Error = crate::formats::three_ds::Error::Limit {
            place: "MDATA › NAMED_OBJECT".into(),
            offset: 0x1c,
            message: "too many".into(),
        }
        .into();
        assert_eq!(e.kind(), ErrorKind::Limit);
        assert_eq!(e.place().as_deref(), Some("MDATA › NAMED_OBJECT at byte 0x1c"));
    }
}

//! What every reader and writer shares below the formats: the options a reader takes, telling
//! a format from a file's first bytes, and writing output files atomically. (Loading, which
//! calls the format readers, is one layer up in `load`, so that `formats` reads `io` and `io`
//! does not read `formats`.)

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::limits::Limits;
use crate::Error;

/// The file formats keyscene reads (non-exhaustive: formats will be added).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum FileFormat {
    /// Autodesk 3D Studio `.3ds` (root `M3DMAGIC` 0x4D4D) or project `.prj` (root 0xC23D).
    ThreeDs,
    /// glTF 2.0, JSON (`.gltf`) or binary (`.glb`).
    Gltf,
    /// Techland ChromeEngine `.3da` (starts with `3DA_`).
    ThreeDa,
    /// Autodesk FBX, binary (`Kaydara FBX Binary` header) or ASCII (`; FBX` comment or an
    /// `FBXHeaderExtension` record near the start), or any file named `.fbx`.
    Fbx,
}

impl FileFormat {
    /// The format's name in messages: `3DS`, `glTF`, `3DA`, `FBX`.
    pub fn name(self) -> &'static str {
        match self {
            FileFormat::ThreeDs => "3DS",
            FileFormat::Gltf => "glTF",
            FileFormat::ThreeDa => "3DA",
            FileFormat::Fbx => "FBX",
        }
    }

    /// Recognises a format from the first bytes of a file, falling back to the extension.
    /// Content wins: a `.3ds` file that does not start with a 3DS root chunk is not taken for
    /// one (the 3DS reader then reports why).
    pub fn detect(bytes: &[u8], path: Option<&Path>) -> Option<FileFormat> {
        if bytes.starts_with(b"glTF") || bytes.first() == Some(&b'{') {
            return Some(FileFormat::Gltf);
        }
        if bytes.starts_with(b"3DA_") {
            return Some(FileFormat::ThreeDa);
        }
        if bytes.starts_with(b"Kaydara FBX Binary") || looks_like_ascii_fbx(bytes) {
            return Some(FileFormat::Fbx);
        }
        if bytes.len() >= 2 && matches!(u16::from_le_bytes([bytes[0], bytes[1]]), 0x4D4D | 0xC23D) {
            return Some(FileFormat::ThreeDs);
        }
        let ext = path?.extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "3ds" | "prj" => Some(FileFormat::ThreeDs),
            "gltf" | "glb" => Some(FileFormat::Gltf),
            "3da" => Some(FileFormat::ThreeDa),
            "fbx" => Some(FileFormat::Fbx),
            _ => None,
        }
    }
}

/// An ASCII FBX file: its first kilobyte, after a possible UTF-8 byte-order mark and
/// whitespace, starts with `; FBX` or holds `FBXHeaderExtension`.
fn looks_like_ascii_fbx(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(1024)];
    let head = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    let start = head.iter().position(|b| !b.is_ascii_whitespace()).unwrap_or(head.len());
    head[start..].starts_with(b"; FBX") || head.windows(18).any(|w| w == b"FBXHeaderExtension")
}

/// Options every reader takes. Non-exhaustive: start from [`Default`] and use the setters
/// (`ReadOptions::default().base_dir("models")`), so that new options are not a breaking change.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct ReadOptions {
    /// Allocation and depth limits.
    pub limits: Limits,
    /// The folder the file came from, for resolving texture and buffer file names
    /// (case-insensitively). `None`: resolve nothing.
    pub base_dir: Option<PathBuf>,
}

impl ReadOptions {
    /// Sets [`ReadOptions::limits`].
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Sets [`ReadOptions::base_dir`].
    pub fn base_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.base_dir = Some(dir.into());
        self
    }
}

thread_local! {
    /// The files written on this thread inside [`recording_writes`] (`None` outside it).
    static WRITTEN: std::cell::RefCell<Option<Vec<PathBuf>>> = const { std::cell::RefCell::new(None) };
}

/// Runs `f` and returns, with its result, every file [`write_atomically`] wrote on this thread
/// meanwhile (paths as the writer named them, in the order written, repeats removed), and the
/// companion files [`crate::output::write_companions`] found already holding their bytes
/// (left as they are, but part of this output all the same). Writes on other threads are not
/// seen; keyscene's writers write on the calling thread. A recording inside another is seen
/// by both. A file written and then removed again (a writer undoing a failed write) is still
/// listed: use the list only when `f` succeeded.
pub(crate) fn recording_writes<T>(f: impl FnOnce() -> T) -> (T, Vec<PathBuf>) {
    /// Puts the outer recording back (with this one's files added), even when `f` panics.
    struct Restore(Option<Vec<PathBuf>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let outer = self.0.take();
            WRITTEN.with(|w| {
                let mut w = w.borrow_mut();
                let inner = w.take().unwrap_or_default();
                *w = outer.map(|mut o| {
                    o.extend(inner);
                    o
                });
            });
        }
    }
    let restore = Restore(WRITTEN.with(|w| w.borrow_mut().replace(Vec::new())));
    let value = f();
    let mut files = WRITTEN.with(|w| w.borrow().clone().unwrap_or_default());
    drop(restore);
    let mut seen = std::collections::HashSet::new();
    files.retain(|p| seen.insert(p.clone()));
    (value, files)
}

/// Records `path` as written by the [`recording_writes`] running on this thread, if any.
pub(crate) fn note_written(path: &Path) {
    WRITTEN.with(|w| {
        if let Some(files) = w.borrow_mut().as_mut() {
            files.push(path.to_path_buf());
        }
    });
}

/// Writes a file atomically: `fill` writes into a temporary file in the destination's folder,
/// which is renamed over `path` only when `fill` succeeds. On any error nothing is left behind
/// (the temporary file is removed) and an existing `path` is untouched. `fill` writes through a
/// buffer; [`write_atomically_seekable`] hands it the file itself.
pub fn write_atomically<E>(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> Result<(), E>,
) -> Result<(), E>
where
    E: From<Error>,
{
    write_atomically_seekable(path, |file| {
        let mut w = std::io::BufWriter::new(file);
        fill(&mut w)?;
        w.flush().map_err(|source| Error::Io { path: path.into(), source })?;
        Ok(())
    })
}

/// [`write_atomically`] for writers that seek back to patch what they wrote (the 3DA writer's
/// forward offsets): `fill` gets the temporary file itself, at position 0, and buffers its own
/// writes. The same guarantees: renamed over `path` only when `fill` succeeds, removed on any
/// error.
pub fn write_atomically_seekable<E>(
    path: &Path,
    fill: impl FnOnce(&mut std::fs::File) -> Result<(), E>,
) -> Result<(), E>
where
    E: From<Error>,
{
    let mut tmp = staging_file(path)?;
    fill(tmp.as_file_mut())?;
    persist_staged(tmp, path)?;
    Ok(())
}

/// The folder `path` will be written in (`.` for a bare file name), or an [`Error::Io`] naming
/// `path` that says plainly the folder does not exist (a temporary file's made-up name would
/// only confuse).
fn output_dir(path: &Path) -> Result<&Path, Error> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        let missing = std::io::Error::new(
            std::io::ErrorKind::NotFound,
            format!("the output folder {} does not exist", dir.display()),
        );
        return Err(Error::Io { path: path.into(), source: missing });
    }
    Ok(dir)
}

/// A named temporary file in `path`'s folder, for bytes that become `path` once whole
/// ([`persist_staged`]); dropping it (on any error) removes it. Errors: [`Error::Io`] naming
/// `path`.
pub(crate) fn staging_file(path: &Path) -> Result<tempfile::NamedTempFile, Error> {
    let dir = output_dir(path)?;
    tempfile::NamedTempFile::new_in(dir).map_err(|source| Error::Io { path: path.into(), source })
}

/// An unnamed temporary file in `path`'s folder (on Linux `O_TMPFILE`: no name, so nothing is
/// left behind even when the process is killed), for a writer to stage bytes that are copied
/// into `path` later (the GLB writer's binary chunk). In `path`'s folder so that the copy
/// stays on one file system, where the kernel copies without a user-space buffer. Errors:
/// [`Error::Io`] naming `path`.
pub(crate) fn unnamed_staging_file(path: &Path) -> Result<std::fs::File, Error> {
    let dir = output_dir(path)?;
    tempfile::tempfile_in(dir).map_err(|source| Error::Io { path: path.into(), source })
}

/// Renames the whole staged file `tmp` over `path`, with the permissions a plainly created
/// file would have, and records `path` as written ([`recording_writes`]). On error `tmp` is
/// removed and an existing `path` is untouched.
pub(crate) fn persist_staged(tmp: tempfile::NamedTempFile, path: &Path) -> Result<(), Error> {
    let io = |source| Error::Io { path: path.into(), source };
    set_default_permissions(tmp.as_file(), path).map_err(io)?;
    tmp.persist(path).map_err(|e| io(e.error))?;
    note_written(path);
    Ok(())
}

/// Writes `bytes` to `path` atomically ([`write_atomically`]): what a writer that encodes in
/// memory first does with its result. Errors: [`Error::Io`] naming `path`.
pub fn write_bytes_atomically(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    write_atomically::<Error>(path, |w| {
        w.write_all(bytes).map_err(|source| Error::Io { path: path.into(), source })
    })
}

/// Gives the finished temporary file the permissions a plainly created file would have: an
/// existing destination's mode, else 0o666 less the process umask (temporary files start at
/// 0o600, which would hide the output from other users).
#[cfg(unix)]
fn set_default_permissions(file: &std::fs::File, dest: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let mode = match std::fs::metadata(dest) {
        Ok(m) => m.permissions().mode() & 0o7777,
        Err(_) => 0o666 & !current_umask(),
    };
    file.set_permissions(std::fs::Permissions::from_mode(mode))
}

#[cfg(not(unix))]
fn set_default_permissions(_file: &std::fs::File, _dest: &Path) -> std::io::Result<()> {
    Ok(())
}

/// The process umask, read from `/proc/self/status` (Linux); 0o022 where that is unavailable.
#[cfg(unix)]
fn current_umask() -> u32 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Umask:"))
                .and_then(|v| u32::from_str_radix(v.trim(), 8).ok())
        })
        .unwrap_or(0o022)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failed_write_leaves_no_file() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("x.obj");
        let r: Result<(), Error> = write_atomically(&out, |w| {
            w.write_all(b"partial").unwrap();
            Err(Error::Unsupported("stop".into()))
        });
        assert!(r.is_err());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[cfg(unix)]
    #[test]
    fn written_file_is_readable_by_others_as_a_plain_file_would_be() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("x.obj");
        write_atomically::<Error>(&out, |w| {
            w.write_all(b"v 0 0 0\n").unwrap();
            Ok(())
        })
        .unwrap();
        let mode = std::fs::metadata(&out).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o666 & !current_umask());
    }

    #[test]
    fn detects_3ds_and_prj_roots_by_content() {
        assert_eq!(FileFormat::detect(&[0x4D, 0x4D, 0, 0], None), Some(FileFormat::ThreeDs));
        assert_eq!(FileFormat::detect(&[0x3D, 0xC2, 0, 0], None), Some(FileFormat::ThreeDs));
        assert_eq!(FileFormat::detect(b"glTF\x02\0\0\0", None), Some(FileFormat::Gltf));
        assert_eq!(FileFormat::detect(b"3DA_\x07\x02\0\0", None), Some(FileFormat::ThreeDa));
    }

    #[test]
    fn detects_fbx_binary_and_ascii_by_content() {
        assert_eq!(
            FileFormat::detect(b"Kaydara FBX Binary  \0\x1a\0", None),
            Some(FileFormat::Fbx)
        );
        assert_eq!(FileFormat::detect(b"; FBX 7.4.0 project file\n", None), Some(FileFormat::Fbx));
        assert_eq!(
            FileFormat::detect(b"\n\nFBXHeaderExtension:  {\n", None),
            Some(FileFormat::Fbx)
        );
        assert_eq!(FileFormat::detect(b"x", Some(Path::new("a.FBX"))), Some(FileFormat::Fbx));
    }
}

//! Converting every scene file under a folder (`keyscene convert DIR OUTDIR --to FORMAT`, the
//! Python package's `keyscene.convert_all`): in parallel, continuing past failures, skipping
//! outputs that are up to date, split into shards for several processes, and recorded in a
//! JSON Lines manifest (docs/cli.md, "Batch conversion"). The command line only prints what
//! [`convert_folder`] returns.

use std::collections::HashMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;

use rayon::prelude::*;
use serde::Serialize;

use crate::convert::{ConvertOptions, OutputFormat};
use crate::Error;

/// The extensions (compared lower-cased) of the files a batch converts: 3D Studio `.3ds` and
/// project `.prj`, FBX, 3DA, glTF and GLB.
pub const INPUT_EXTENSIONS: [&str; 6] = ["3ds", "prj", "fbx", "3da", "gltf", "glb"];

/// What became of one input file.
#[derive(Debug, Clone, Serialize)]
pub struct FileResult {
    /// The input, relative to the input folder (`/`-separated).
    pub input: String,
    /// The output written, relative to the output folder; `None` when the file failed.
    pub output: Option<String>,
    /// `converted`, `warnings` (converted, with warnings), `failed`, or `skipped` (its output
    /// is up to date, see [`Options::force`]).
    pub status: &'static str,
    /// The reader's and writer's warnings (3DA: the exporter report's `warnings:` lines).
    pub warnings: Vec<String>,
    /// Why the file failed: the error as a single conversion prints it.
    pub error: Option<String>,
}

/// How a batch runs, beside its input, output and format.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct Options {
    /// Convert only this shard (`--shard I/N`).
    pub shard: Option<Shard>,
    /// Copy texture images beside the outputs (`--no-copy-textures` turns it off).
    pub copy_textures: bool,
    /// glTF outputs quantized and meshopt-compressed (`--compress`,
    /// [`WriteOptions::compress`](crate::formats::gltf::WriteOptions::compress)); ignored for the
    /// other formats.
    pub compress: bool,
    /// Convert every file, replacing existing outputs (`--force`). Without it a file whose
    /// output is up to date is skipped, and an existing output that is not up to date is
    /// replaced only when the manifest records it as this source's output (else the file
    /// fails: the output is not replaced silently, [`crate::output::claim_output`]).
    ///
    /// Up to date: the output exists, is not older than its source, and, with a manifest,
    /// the manifest's last line for the source records the same size, SHA-256 and keyscene
    /// build ([`Options::build`]) and this output.
    pub force: bool,
    /// `--manifest FILE.jsonl`: read for the previous runs' lines, then appended one
    /// [`ManifestLine`] per file as each finishes (so an interrupted run can be resumed).
    pub manifest: Option<PathBuf>,
    /// The keyscene build that converts, as the manifest records it ([`build_id`]).
    pub build: String,
}

/// One line of the `--manifest` file (JSON Lines, docs/cli.md "Manifest"): what became of one
/// source. A file holds every run's lines in order; the last line of a path is its state.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct ManifestLine {
    /// The source, relative to the input folder (`/`-separated).
    pub path: String,
    /// Its size in bytes.
    pub size: u64,
    /// The SHA-256 of its bytes, 64 lower-case hex digits (empty when it could not be read).
    pub sha256: String,
    /// `converted`, `warnings`, `failed` or `skipped` (up to date).
    pub outcome: String,
    /// Every file the conversion wrote, relative to the output folder (`/`-separated): the
    /// main output first, then the files beside it (`.mtl`, `.bin`, `.mat` scripts, copied
    /// texture images, and those found already holding the same bytes) in the order written.
    /// Skipped (up to date): the files the previous line listed. Empty when it failed. The
    /// up-to-date check looks at the main output only.
    pub outputs: Vec<String>,
    /// The reader's and writer's warnings.
    pub warnings: Vec<String>,
    /// Why it failed, as the summary says it.
    #[serde(default)]
    pub error: Option<String>,
    /// Wall-clock seconds this file took (hashing, loading, writing).
    pub seconds: f64,
    /// The keyscene build that wrote the line ([`build_id`]).
    pub build: String,
}

/// A keyscene build, as the manifest records it: the version and the size and modification
/// time of `file`, the program that runs the library (the `keyscene` executable, the Python
/// extension module), so that a rebuilt program counts as another build and its outputs are
/// not taken as up to date. `what` names the file's kind (`executable`, `module`).
pub fn build_id(what: &str, file: Option<&Path>) -> String {
    let meta = file.and_then(|p| std::fs::metadata(p).ok());
    let (size, modified) = meta.map_or((0, 0), |m| {
        let t = m.modified().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok());
        (m.len(), t.map_or(0, |d| d.as_nanos()))
    });
    format!("keyscene {} ({what} {size} bytes, modified {modified} ns)", env!("CARGO_PKG_VERSION"))
}

/// What [`convert_folder`] reports as it goes, for a progress bar.
#[derive(Debug, Clone, Copy)]
pub enum Progress<'a> {
    /// The number of files to convert (or skip), once, before the first starts.
    Found(usize),
    /// A file (its path relative to the input folder, `/`-separated) starts.
    Started(&'a str),
    /// A file is done (converted, skipped or failed).
    Done,
}

/// The whole batch's outcome ([`convert_folder`]); `--json` prints it (docs/cli.md, "Batch
/// conversion").
#[derive(Debug, Serialize)]
#[non_exhaustive]
pub struct Summary {
    /// The input folder as given.
    pub input_dir: String,
    /// The output folder as given.
    pub output_dir: String,
    /// The output format's extension, without its dot.
    pub to: &'static str,
    /// The shard as `I/N`, else `None` (every file).
    pub shard: Option<String>,
    /// Supported files found under the input folder (of the shard, with a shard).
    pub files: usize,
    /// Files written, with or without warnings (`converted + skipped + failed == files`).
    pub converted: usize,
    /// Files whose output was up to date and left as it was.
    pub skipped: usize,
    /// Of `converted`, those with at least one warning.
    pub with_warnings: usize,
    /// Files not written.
    pub failed: usize,
    /// Wall-clock time of the whole batch in seconds.
    pub seconds: f64,
    /// One entry per input file, sorted by input path.
    pub results: Vec<FileResult>,
    /// Appending to the manifest failed (the first error), after which the batch went on.
    #[serde(skip)]
    pub manifest_error: Option<Error>,
}

/// Converts every supported file under `input_dir` (recursively, see [`INPUT_EXTENSIONS`]) to
/// `to`, mirroring subfolders under `output_dir` (created as needed), on all cores (rayon's
/// pool). Each output is written atomically as a single conversion writes it
/// ([`crate::convert::convert_file`] with no options but `no_copy_textures`); a file that
/// fails is reported and the rest go on; a file whose output is up to date is skipped
/// ([`Options::force`]). `progress` hears how many files the batch (or shard) has, then, from
/// the worker threads, each file as it starts and as it ends ([`Progress`]).
///
/// Output names: `sub/name.ext` → `OUTDIR/sub/name.<to>`; when two inputs of one folder would
/// give the same name (`box.3ds`, `box.fbx`), each keeps its extension (`box.3ds.glb`).
///
/// Errors ([`Error::Io`], naming the folder or manifest): the input folder is not a folder or
/// cannot be listed, holds no supported file ([`Error::Option`]; a shard that gets none of a
/// non-empty folder's files is not an error), the output folder cannot be created, the manifest cannot be read or
/// opened or holds a line that is not a [`ManifestLine`]. Files that fail are results, not
/// errors ([`Summary::failed`]).
pub fn convert_folder(
    input_dir: &Path,
    output_dir: &Path,
    to: OutputFormat,
    opts: &Options,
    progress: &(dyn Fn(Progress<'_>) + Sync),
) -> Result<Summary, Error> {
    let start = Instant::now();
    let shard = opts.shard;
    if !input_dir.is_dir() {
        return Err(not_a_folder(input_dir));
    }
    std::fs::create_dir_all(output_dir).map_err(|e| io(output_dir, "cannot create", e))?;
    let skip = output_dir.canonicalize().ok();
    let all = supported_files(input_dir, skip.as_deref())?;
    if all.is_empty() {
        // Nothing to do is a mistake (a wrong folder), not a success; a shard that happens to
        // get no file of a non-empty folder is fine.
        return Err(Error::Option(format!(
            "{}: no scene file under it (the extensions converted: {})",
            input_dir.display(),
            INPUT_EXTENSIONS.map(|e| format!(".{e}")).join(", ")
        )));
    }
    // Output names are decided over every file (not the shard's), so each shard names a
    // file's output as a whole run would.
    let (inputs, outputs): (Vec<PathBuf>, Vec<PathBuf>) = all
        .iter()
        .cloned()
        .zip(output_names(&all, to))
        .filter(|(rel, _)| shard.is_none_or(|s| s.holds(rel)))
        .unzip();
    let previous = match &opts.manifest {
        Some(path) => read_manifest(path)?,
        None => HashMap::new(),
    };
    let manifest = match &opts.manifest {
        Some(path) => Some(Mutex::new(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .map_err(|e| io(path, "cannot write the manifest", e))?,
        )),
        None => None,
    };
    progress(Progress::Found(inputs.len()));
    let job = Job { input_dir, output_dir, to, opts, previous: &previous };
    let manifest_error: Mutex<Option<Error>> = Mutex::new(None);
    let mut results: Vec<FileResult> = inputs
        .par_iter()
        .zip(outputs.par_iter())
        .map(|(rel, out_rel)| {
            progress(Progress::Started(&slashed(rel)));
            let (result, line) = job.one(rel, out_rel);
            if let (Some(m), Some(path)) = (&manifest, &opts.manifest) {
                let text = serde_json::to_string(&line).unwrap_or_default() + "\n";
                let mut file = m.lock().unwrap_or_else(|e| e.into_inner());
                if let Err(e) = file.write_all(text.as_bytes()).and_then(|()| file.flush()) {
                    manifest_error.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert(io(
                        path,
                        "cannot write the manifest",
                        e,
                    ));
                }
            }
            progress(Progress::Done);
            result
        })
        .collect();
    results.sort_by(|a, b| a.input.cmp(&b.input));

    let count = |status: &str| results.iter().filter(|r| r.status == status).count();
    let (failed, skipped) = (count("failed"), count("skipped"));
    Ok(Summary {
        input_dir: input_dir.display().to_string(),
        output_dir: output_dir.display().to_string(),
        to: &to.extension()[1..],
        shard: shard.map(|s| format!("{}/{}", s.index, s.count)),
        files: results.len(),
        converted: results.len() - failed - skipped,
        skipped,
        with_warnings: count("warnings"),
        failed,
        seconds: start.elapsed().as_secs_f64(),
        results,
        manifest_error: manifest_error.into_inner().ok().flatten(),
    })
}

/// `PATH: not a folder`.
fn not_a_folder(dir: &Path) -> Error {
    let kind =
        if dir.exists() { std::io::ErrorKind::NotADirectory } else { std::io::ErrorKind::NotFound };
    Error::Io { path: dir.to_path_buf(), source: std::io::Error::new(kind, "not a folder") }
}

/// An I/O error on `path`, with what was being done: `PATH: cannot create: …`.
fn io(path: &Path, doing: &str, e: std::io::Error) -> Error {
    Error::Io {
        path: path.to_path_buf(),
        source: std::io::Error::new(e.kind(), format!("{doing}: {e}")),
    }
}

/// Reads a manifest's lines: the last line of each path. A missing file is an empty manifest;
/// a line that is not a [`ManifestLine`] is an error naming the file and line.
fn read_manifest(path: &Path) -> Result<HashMap<String, ManifestLine>, Error> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(HashMap::new()),
        Err(e) => return Err(io(path, "cannot read the manifest", e)),
    };
    let mut lines = HashMap::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let l: ManifestLine = serde_json::from_str(line).map_err(|e| Error::Io {
            path: path.to_path_buf(),
            source: std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!(
                    "line {}: not a manifest line (expected a JSON object with path, size, \
                     sha256, outcome, outputs, warnings, seconds and build): {e}",
                    i + 1
                ),
            ),
        })?;
        lines.insert(l.path.clone(), l);
    }
    Ok(lines)
}

/// What every file of one batch shares.
struct Job<'a> {
    input_dir: &'a Path,
    output_dir: &'a Path,
    to: OutputFormat,
    opts: &'a Options,
    previous: &'a HashMap<String, ManifestLine>,
}

impl Job<'_> {
    /// Converts (or skips) one file: its result and its manifest line.
    fn one(&self, rel: &Path, out_rel: &Path) -> (FileResult, ManifestLine) {
        let start = Instant::now();
        let (input, output) = (self.input_dir.join(rel), self.output_dir.join(out_rel));
        let (path, out_name) = (slashed(rel), slashed(out_rel));
        let (size, sha256) = match std::fs::read(&input) {
            Ok(bytes) => (bytes.len() as u64, sha256_hex(&bytes)),
            Err(_) => (0, String::new()),
        };
        let before = self.previous.get(&path);
        let ours = before.is_some_and(|b| b.outputs.contains(&out_name));
        let up_to_date = !self.opts.force
            && newer_or_same(&output, &input)
            && (self.opts.manifest.is_none()
                || before.is_some_and(|b| {
                    ours && b.outcome != "failed"
                        && b.size == size
                        && b.sha256 == sha256
                        && !sha256.is_empty()
                        && b.build == self.opts.build
                }));
        let (result, outputs) = if up_to_date {
            let listed = before.map(|b| b.outputs.clone()).unwrap_or_default();
            let outputs = if listed.is_empty() { vec![out_name.clone()] } else { listed };
            let result = FileResult {
                input: path.clone(),
                output: Some(out_name.clone()),
                status: "skipped",
                warnings: before.map(|b| b.warnings.clone()).unwrap_or_default(),
                error: None,
            };
            (result, outputs)
        } else {
            let (result, files) = convert_one(
                &input,
                &output,
                rel,
                out_rel,
                self.to,
                self.opts,
                self.opts.force || ours,
            );
            let mut outputs: Vec<String> = result.output.iter().cloned().collect();
            if result.output.is_some() {
                for f in files.iter().filter(|f| **f != output) {
                    let rel = f.strip_prefix(self.output_dir).unwrap_or(f);
                    let name = slashed(rel);
                    if !outputs.contains(&name) {
                        outputs.push(name);
                    }
                }
            }
            (result, outputs)
        };
        let line = ManifestLine {
            path,
            size,
            sha256,
            outcome: result.status.to_string(),
            outputs,
            warnings: result.warnings.clone(),
            error: result.error.clone(),
            seconds: start.elapsed().as_secs_f64(),
            build: self.opts.build.clone(),
        };
        (result, line)
    }
}

/// Whether `output` exists and was modified no earlier than `source`.
fn newer_or_same(output: &Path, source: &Path) -> bool {
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    matches!((modified(output), modified(source)), (Some(o), Some(s)) if o >= s)
}

/// SHA-256 of `bytes` as 64 lower-case hex digits.
fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// Loads `input_dir/rel`, writes `output_dir/out_rel`, and says how it went, with every file
/// the conversion wrote ([`crate::convert::Report::files`]; empty when it failed). A panic inside
/// the library is caught and reported as this file's failure, so the batch goes on.
/// `replace`: an existing output may be replaced (`--force`, or the manifest records it as
/// this source's).
fn convert_one(
    input: &Path,
    output: &Path,
    rel: &Path,
    out_rel: &Path,
    to: OutputFormat,
    opts: &Options,
    replace: bool,
) -> (FileResult, Vec<PathBuf>) {
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        convert_file(input, output, to, opts, replace)
    }))
    .unwrap_or_else(|panic| {
        let what = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        Err(Error::Unsupported(format!("internal error (panic): {what}")))
    });
    match outcome {
        Ok((warnings, files)) => (
            FileResult {
                input: slashed(rel),
                output: Some(slashed(out_rel)),
                status: if warnings.is_empty() { "converted" } else { "warnings" },
                warnings,
                error: None,
            },
            files,
        ),
        Err(e) => (
            FileResult {
                input: slashed(rel),
                output: None,
                status: "failed",
                warnings: Vec::new(),
                error: Some(e.to_string()),
            },
            Vec::new(),
        ),
    }
}

/// One conversion as `keyscene convert IN OUT` does it with no options (but
/// `--no-copy-textures`); returns the warnings and the files written
/// ([`crate::convert::Report::files`]). Files beside the output (material scripts,
/// images) follow [`crate::output`]'s rule: one that would replace another source's file
/// fails this file, naming both sources.
fn convert_file(
    input: &Path,
    output: &Path,
    to: OutputFormat,
    batch: &Options,
    replace: bool,
) -> Result<(Vec<String>, Vec<PathBuf>), Error> {
    let source = crate::output::source_name(input);
    crate::output::refuse_input(output, &[input])?;
    crate::output::claim_output(output, &source, replace)?;
    let (scene, read_warnings) = crate::load(input)?;
    crate::output::refuse_input(output, &scene.source_files())?;
    let mut warnings: Vec<String> = read_warnings.iter().map(ToString::to_string).collect();
    if let Some(dir) = output.parent() {
        std::fs::create_dir_all(dir).map_err(|e| io(dir, "cannot create", e))?;
    }
    // `output`'s extension is `to`'s: the library picks the writer from it.
    let _ = to;
    let mut opts = ConvertOptions::default().copy_textures(batch.copy_textures).source(source);
    opts.gltf.compress = batch.compress;
    let report = crate::convert(&scene, output, &opts)?;
    warnings.extend(report.warnings);
    Ok((warnings, report.files))
}

/// Every file under `dir` with a supported extension, relative to `dir`, sorted. Symbolic links
/// to folders are not followed (no cycles); the folder `skip` (the output folder, canonical)
/// is left out when it lies inside `dir`.
fn supported_files(dir: &Path, skip: Option<&Path>) -> Result<Vec<PathBuf>, Error> {
    if !dir.is_dir() {
        return Err(not_a_folder(dir));
    }
    let mut found = Vec::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let abs = dir.join(&rel);
        if !rel.as_os_str().is_empty()
            && skip.is_some()
            && abs.canonicalize().ok().as_deref() == skip
        {
            continue;
        }
        let entries = std::fs::read_dir(&abs).map_err(|e| io(&abs, "cannot list", e))?;
        for entry in entries {
            let entry = entry.map_err(|e| io(&abs, "cannot list", e))?;
            let Ok(kind) = entry.file_type() else { continue };
            let path = rel.join(entry.file_name());
            if kind.is_dir() {
                stack.push(path);
            } else if (kind.is_file() || entry.path().is_file()) && is_supported(&path) {
                found.push(path);
            }
        }
    }
    found.sort();
    Ok(found)
}

fn is_supported(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| INPUT_EXTENSIONS.iter().any(|x| x.eq_ignore_ascii_case(e)))
}

/// The output path (relative) of each input: its extension replaced by `to`'s, or appended
/// when another input of the same folder would give the same name (compared case-insensitively,
/// as the output may land on a case-insensitive file system).
fn output_names(inputs: &[PathBuf], to: OutputFormat) -> Vec<PathBuf> {
    let plain: Vec<PathBuf> =
        inputs.iter().map(|p| p.with_extension(&to.extension()[1..])).collect();
    let mut uses: HashMap<String, usize> = HashMap::new();
    for p in &plain {
        *uses.entry(slashed(p).to_lowercase()).or_default() += 1;
    }
    inputs
        .iter()
        .zip(plain)
        .map(|(input, p)| {
            if uses[&slashed(&p).to_lowercase()] > 1 {
                let mut name = input.as_os_str().to_owned();
                name.push(to.extension());
                PathBuf::from(name)
            } else {
                p
            }
        })
        .collect()
}

/// `--shard I/N`: the part of a batch one process converts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// This process's part, `0 ≤ index < count`.
    pub index: u64,
    /// How many parts the batch is split into.
    pub count: u64,
}

impl Shard {
    /// Whether the file at `rel` (relative to the input folder) is this shard's: the 64-bit
    /// FNV-1a hash of its `/`-separated path, modulo `count`, equals `index`. The split depends
    /// on nothing but the path (not the file order, the machine or the other files), so
    /// adding a file moves no other file to another shard.
    pub fn holds(self, rel: &Path) -> bool {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in slashed(rel).bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        h % self.count == self.index
    }
}

impl Shard {
    /// Parses `I/N` (`0 ≤ I < N`), as `--shard` takes it.
    pub fn parse(s: &str) -> Result<Shard, String> {
        let bad = || format!("expected I/N with 0 <= I < N (e.g. 0/4), not {s}");
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let (index, count) =
            (i.trim().parse().map_err(|_| bad())?, n.trim().parse().map_err(|_| bad())?);
        if count == 0 || index >= count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

/// A relative path with `/` between components, as the summary shows it.
fn slashed(p: &Path) -> String {
    p.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_would_collide_keep_their_source_extension() {
        let inputs: Vec<PathBuf> = ["a/box.3ds", "a/BOX.fbx", "a/ship.fbx", "b/box.3ds"]
            .iter()
            .map(PathBuf::from)
            .collect();
        let names: Vec<String> =
            output_names(&inputs, OutputFormat::Glb).iter().map(|p| slashed(p)).collect();
        assert_eq!(names, ["a/box.3ds.glb", "a/BOX.fbx.glb", "a/ship.glb", "b/box.glb"]);
    }

    #[test]
    fn shards_split_every_path_exactly_once() {
        let paths: Vec<PathBuf> =
            (0..200).map(|i| PathBuf::from(format!("d{}/f{i}.fbx", i % 7))).collect();
        let shards: Vec<Shard> = (0..3).map(|i| Shard::parse(&format!("{i}/3")).unwrap()).collect();
        for p in &paths {
            assert_eq!(shards.iter().filter(|s| s.holds(p)).count(), 1, "{}", p.display());
        }
        // Each shard gets a fair share (200/3 ≈ 67), not everything.
        for s in &shards {
            let n = paths.iter().filter(|p| s.holds(p)).count();
            assert!((40..95).contains(&n), "shard {}/3 holds {n} of 200", s.index);
        }
        for bad in ["3/3", "1", "a/2", "0/0", "-1/2"] {
            assert!(Shard::parse(bad).is_err(), "{bad}");
        }
    }
}

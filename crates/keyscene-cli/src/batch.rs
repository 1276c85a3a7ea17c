//! `keyscene convert DIR OUTDIR --to FORMAT`: the library's folder conversion
//! ([`keyscene::batch::convert_folder`]) with a progress bar, and its summary printed
//! (docs/cli.md, "Batch conversion").

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use indicatif::{ProgressBar, ProgressStyle};
use keyscene::batch::{Progress, Shard, Summary};
use keyscene::convert::OutputFormat;

use crate::{emit, CliError};

/// `--to`: the output format of a batch conversion, by its file extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Target {
    /// Binary glTF, buffers and images embedded.
    Glb,
    /// glTF JSON with its `.bin` buffer (and images) beside it.
    Gltf,
    /// ChromeEngine 3DA with one `.mat` material script per material beside it.
    #[value(name = "3da")]
    ThreeDa,
    /// Wavefront OBJ (the geometry as stored) with its `.mtl` beside it.
    Obj,
    /// Binary FBX 7.4: source keys kept where FBX curves hold them, the rest resampled.
    Fbx,
    /// 3D Studio `.3ds`: 3DS sources keep their keys, others are keyed on every frame (30 fps).
    #[value(name = "3ds")]
    ThreeDs,
    /// USD text layer `.usda`, texture images beside it; one animation as time samples.
    Usda,
    /// USDZ package `.usdz`: the layer and its images in one uncompressed, aligned zip.
    Usdz,
}

impl Target {
    /// The library's output format.
    pub fn format(self) -> OutputFormat {
        match self {
            Target::Glb => OutputFormat::Glb,
            Target::Gltf => OutputFormat::Gltf,
            Target::ThreeDa => OutputFormat::ThreeDa,
            Target::Obj => OutputFormat::Obj,
            Target::Fbx => OutputFormat::Fbx,
            Target::ThreeDs => OutputFormat::ThreeDs,
            Target::Usda => OutputFormat::Usda,
            Target::Usdz => OutputFormat::Usdz,
        }
    }
}

/// How a batch runs and prints, beside its input, output and format.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Print the [`Summary`] as JSON (`--json`).
    pub json: bool,
    /// Print nothing on success (`--quiet`; failures still go to stderr).
    pub quiet: bool,
    /// List every warning of every file, not the first five (`--report`).
    pub report: bool,
    /// Convert only this shard (`--shard I/N`).
    pub shard: Option<Shard>,
    /// Copy texture images beside the outputs (`--no-copy-textures` turns it off).
    pub copy_textures: bool,
    /// `--compress` ([`keyscene::batch::Options::compress`]).
    pub compress: bool,
    /// `--force` ([`keyscene::batch::Options::force`]).
    pub force: bool,
    /// `--manifest FILE.jsonl` ([`keyscene::batch::Options::manifest`]).
    pub manifest: Option<PathBuf>,
}

/// Converts every supported file under `input_dir` to `to` ([`keyscene::batch::convert_folder`],
/// the build recorded as this executable's, [`keyscene::batch::build_id`]). A progress bar
/// (files done, files per second, the file being converted) goes to stderr when stderr is a
/// terminal. Prints the summary (`json`: the [`Summary`] document) to `out`.
///
/// Errors: the library's (the input folder, the output folder, the manifest); or, after the
/// summary is printed, the manifest could not be appended to, or any file failed (`N of M
/// files failed`, exit status 1).
pub fn run(
    input_dir: &Path,
    output_dir: &Path,
    to: Target,
    opts: &Options,
    out: &mut dyn std::io::Write,
) -> Result<(), CliError> {
    let mut lib = keyscene::batch::Options::default();
    lib.shard = opts.shard;
    lib.copy_textures = opts.copy_textures;
    lib.compress = opts.compress;
    lib.force = opts.force;
    lib.manifest = opts.manifest.clone();
    lib.build = keyscene::batch::build_id("executable", std::env::current_exe().ok().as_deref());
    let bar = if std::io::stderr().is_terminal() && !opts.quiet {
        let bar = ProgressBar::new(0);
        // The rate as a whole number of files per second in the terminal's own colour
        // (indicatif's `{per_sec}` ignores the precision and printed `88.1239/s`).
        let rate = |state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
            let _ = write!(w, "{:.0} files/s", state.per_sec());
        };
        if let Ok(style) = ProgressStyle::with_template(
            "{bar:30} {pos}/{len} files, {rate}, {elapsed} elapsed, ETA {eta}: {wide_msg}",
        ) {
            bar.set_style(style.with_key("rate", rate));
        }
        bar
    } else {
        ProgressBar::hidden()
    };
    let progress = |event: Progress<'_>| match event {
        Progress::Found(n) => bar.set_length(n as u64),
        Progress::Started(name) => bar.set_message(name.to_string()),
        Progress::Done => bar.inc(1),
    };
    let summary =
        keyscene::batch::convert_folder(input_dir, output_dir, to.format(), &lib, &progress);
    bar.finish_and_clear();
    let summary = summary?;
    if opts.json {
        let text = serde_json::to_string_pretty(&summary)
            .map_err(|e| CliError::Msg(format!("summary as JSON: {e}")))?;
        emit(out, &(text + "\n"))?;
    } else if !opts.quiet {
        emit(out, &readable(&summary, opts.report))?;
    }
    if let Some(e) = summary.manifest_error {
        return Err(e.into());
    }
    if summary.failed > 0 {
        return Err(CliError::Msg(format!("{} of {} files failed", summary.failed, summary.files)));
    }
    Ok(())
}

/// Parses `I/N` (`0 ≤ I < N`) for `--shard`.
pub fn parse_shard(s: &str) -> Result<Shard, String> {
    keyscene::batch::Shard::parse(s)
}

/// The readable summary: each file with warnings (up to five of them) or an error, then the
/// totals.
fn readable(s: &Summary, every_warning: bool) -> String {
    use std::fmt::Write;
    let mut text = String::new();
    for r in &s.results {
        match (&r.error, r.warnings.len()) {
            (Some(e), _) => writeln!(text, "failed: {}: {e}", r.input).unwrap(),
            (None, 0) => {}
            (None, n) => {
                writeln!(text, "warnings: {} ({n}):", r.input).unwrap();
                let shown = if every_warning { n } else { 5 };
                for w in r.warnings.iter().take(shown) {
                    writeln!(text, "  {w}").unwrap();
                }
                if n > shown {
                    writeln!(text, "  … {} more", n - 5).unwrap();
                }
            }
        }
    }
    writeln!(
        text,
        "converted {} of {} files to {} in {} ({} with warnings), {} failed, in {:.1} s",
        s.converted, s.files, s.to, s.output_dir, s.with_warnings, s.failed, s.seconds
    )
    .unwrap();
    if s.skipped > 0 {
        text.pop();
        writeln!(text, "; {} up to date (skipped; --force converts them)", s.skipped).unwrap();
    }
    if let Some(shard) = &s.shard {
        text.pop();
        writeln!(text, " (shard {shard})").unwrap();
    }
    text
}

//! What a successful `keyscene convert IN OUT` prints (issue #17 §2; docs/cli.md, "What convert
//! prints"), the same for every output format:
//! - default: one summary line on stdout (input, output, format, seconds, warning count);
//! - `--report` (`-v`): the summary line, then the 3DA exporter's or FBX writer's full report
//!   (what was converted, baked, kept, resampled and dropped); OBJ and glTF have none;
//! - `--quiet` (`-q`): nothing on stdout;
//! - `--json`: one JSON document on stdout ([`SingleSummary`]).
//!
//! Warnings (the reader's and the writer's) go to stderr as `keyscene: warning: FILE: …` in
//! every mode but `--json`, whose document holds them: `--quiet` silences the summary, never a
//! warning.

use std::path::Path;

use serde::Serialize;

use crate::{emit, CliError};

/// How much a conversion prints on success.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Verbosity {
    /// Nothing on stdout (`--quiet`).
    Quiet,
    /// One summary line (the default).
    #[default]
    Summary,
    /// The summary line and the full report (`--report`, `-v`).
    Report,
    /// One JSON document (`--json`).
    Json,
}

impl Verbosity {
    /// The mode the flags ask for (clap makes them exclusive).
    pub fn of(quiet: bool, report: bool, json: bool) -> Verbosity {
        match (quiet, report, json) {
            (true, ..) => Verbosity::Quiet,
            (_, true, _) => Verbosity::Report,
            (.., true) => Verbosity::Json,
            _ => Verbosity::Summary,
        }
    }
}

/// The `--json` document of a single-file conversion (docs/cli.md).
#[derive(Debug, Clone, Serialize)]
pub struct SingleSummary {
    /// The input file as given.
    pub input: String,
    /// The output file as given.
    pub output: String,
    /// The output format's extension, without the dot (`glb`, `3da`…).
    pub format: String,
    /// `converted`, or `warnings` when there is at least one warning.
    pub outcome: &'static str,
    /// The reader's warnings, then the writer's.
    pub warnings: Vec<String>,
    /// The 3DA exporter's or FBX writer's report as `--report` prints it; `null` for OBJ and
    /// glTF, which have none.
    pub report: Option<String>,
    /// Wall-clock seconds from loading to the written output.
    pub seconds: f64,
}

/// Prints a finished single-file conversion in `mode`: `read` are the reader's warnings (about
/// `input`), `written` the writer's (about `output`), `report` the writer's full report.
#[allow(clippy::too_many_arguments)]
pub fn single(
    out: &mut dyn std::io::Write,
    mode: Verbosity,
    input: &Path,
    output: &Path,
    read: &[String],
    written: &[String],
    report: Option<&str>,
    seconds: f64,
) -> Result<(), CliError> {
    let format =
        output.extension().map(|e| e.to_string_lossy().to_ascii_lowercase()).unwrap_or_default();
    if mode != Verbosity::Json {
        for w in read {
            eprintln!("keyscene: warning: {}: {w}", input.display());
        }
        for w in written {
            eprintln!("keyscene: warning: {}: {w}", output.display());
        }
    }
    let n = read.len() + written.len();
    match mode {
        Verbosity::Quiet => Ok(()),
        Verbosity::Json => {
            let doc = SingleSummary {
                input: input.display().to_string(),
                output: output.display().to_string(),
                format,
                outcome: if n == 0 { "converted" } else { "warnings" },
                warnings: read.iter().chain(written).cloned().collect(),
                report: report.map(str::to_string),
                seconds,
            };
            let text = serde_json::to_string_pretty(&doc)
                .map_err(|e| CliError::Msg(format!("summary as JSON: {e}")))?;
            emit(out, &(text + "\n"))
        }
        Verbosity::Summary | Verbosity::Report => {
            let mut line = summary_line(input, output, &format, n, seconds);
            if mode == Verbosity::Report {
                if let Some(r) = report {
                    line.push_str(r.trim_end());
                    line.push('\n');
                }
            } else if report.is_some() {
                line.pop();
                line.push_str(" (--report for the full report)\n");
            }
            emit(out, &line)
        }
    }
}

/// `converted IN to OUT (FMT) in S s, N warnings`, with its newline.
fn summary_line(
    input: &Path,
    output: &Path,
    format: &str,
    warnings: usize,
    seconds: f64,
) -> String {
    let warnings = match warnings {
        0 => "no warnings".to_string(),
        1 => "1 warning (on stderr)".to_string(),
        n => format!("{n} warnings (on stderr)"),
    };
    format!(
        "converted {} to {} ({}) in {seconds:.2} s, {warnings}\n",
        input.display(),
        output.display(),
        format.to_ascii_uppercase()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_is_one_line_and_quiet_is_nothing() {
        let (i, o) = (Path::new("a.fbx"), Path::new("b.3da"));
        let mut buf = Vec::new();
        single(&mut buf, Verbosity::Summary, i, o, &[], &[], Some("r1\nr2\n"), 0.5).unwrap();
        let text = String::from_utf8(buf).unwrap();
        assert_eq!(
            text,
            "converted a.fbx to b.3da (3DA) in 0.50 s, no warnings (--report for the full report)\n"
        );
        let mut buf = Vec::new();
        single(&mut buf, Verbosity::Report, i, o, &[], &[], Some("r1\nr2\n"), 0.5).unwrap();
        assert!(String::from_utf8(buf).unwrap().ends_with("\nr1\nr2\n"));
        let mut buf = Vec::new();
        single(&mut buf, Verbosity::Quiet, i, o, &[], &[], Some("r1"), 0.5).unwrap();
        assert!(buf.is_empty());
    }
}

//! `keyscene check FILE`: structural validation.
//!
//! A `.3da` file (recognised by its `3DA_` id) goes through
//! [`keyscene::formats::three_da::check`], which lists every violation with its byte offset.
//! Any other file is loaded; the reader's warnings are listed and a load error fails the check.
//! Output: one line per issue, each `FILE: FORMAT: …`, then a summary line
//! `FILE: N errors, M warnings`.

use std::path::Path;

use crate::{emit, CliError};

/// Checks `file`, prints the issues to `out`, and fails when any is an error.
pub fn run(file: &Path, out: &mut dyn std::io::Write) -> Result<(), CliError> {
    let bytes = std::fs::read(file)
        .map_err(|e| CliError::Lib(keyscene::Error::Io { path: file.into(), source: e }))?;
    let (errors, warnings) = if bytes.starts_with(b"3DA_") {
        let report = keyscene::formats::three_da::check(&bytes);
        let mut text = String::new();
        if let Some(v) = report.variant {
            text.push_str(&format!("{}: 3DA: layout: {v}\n", file.display()));
        }
        for issue in &report.issues {
            text.push_str(&format!("{}: 3DA: {issue}\n", file.display()));
        }
        emit(out, &text)?;
        let e = report.errors().count();
        (e, report.issues.len() - e)
    } else {
        let mut opts = keyscene::ReadOptions::default();
        opts.base_dir = file.parent().map(Path::to_path_buf);
        use keyscene::FileFormat;
        let format =
            FileFormat::detect(&bytes, Some(file)).map_or("unknown format", FileFormat::name);
        match keyscene::load_bytes(&bytes, Some(file), &opts) {
            Ok((_, warnings)) => {
                let text: String = warnings
                    .iter()
                    .map(|w| format!("{}: {format}: warning: {w}\n", file.display()))
                    .collect();
                emit(out, &text)?;
                (0, warnings.len())
            }
            // A load error is this file's one error line, with file and format like the rest,
            // printed once: stdout gets it as a report line and the summary; stderr (the exit
            // reason) only the count, as for a 3DA file's errors.
            Err(e) => {
                let f = file.display();
                emit(out, &format!("{f}: {format}: error: {e}\n{f}: 1 errors, 0 warnings\n"))?;
                return Err(CliError::Msg(format!("{f}: 1 errors")));
            }
        }
    };
    emit(out, &format!("{}: {errors} errors, {warnings} warnings\n", file.display()))?;
    if errors > 0 {
        return Err(CliError::Msg(format!("{}: {errors} errors", file.display())));
    }
    Ok(())
}

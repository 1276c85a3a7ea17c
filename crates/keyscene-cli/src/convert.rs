//! `keyscene convert`: writes a scene in the format OUT's extension names, through the
//! library's one entry point, [`keyscene::convert()`](fn@keyscene::convert). This module only
//! refuses options that do not apply to the output and prints the report.

use std::path::Path;

use clap::parser::ValueSource;
use clap::ArgMatches;

use keyscene::convert::{not_applicable, ConvertOptions, OutputFormat, APPLIES_TO};
use keyscene::scene::Scene;

use crate::CliError;

/// What one conversion produced, for the summary: the reader's warnings are not included
/// (`main` prints them as it loads).
#[derive(Debug, Clone, Default)]
pub struct Converted {
    /// The writer's warnings (posing warnings first, then the writer's; 3DA, FBX and 3DS: the
    /// report's warnings and what was not written).
    pub warnings: Vec<String>,
    /// The 3DA exporter's, FBX or 3DS writer's full report (`--report`), `None` for OBJ and
    /// glTF.
    pub report: Option<String>,
}

/// Refuses a `convert` option given on the command line (`sub`: the `convert` matches) that
/// `output` does not use ([`keyscene::convert::APPLIES_TO`]), naming the option and the
/// outputs it applies to, so that nothing is silently ignored. `--animation`/`--stack` apply
/// to every output; `--to`/`--json`/`--shard` apply to folders (checked in `main`).
pub fn check_options(output: OutputFormat, sub: &ArgMatches) -> Result<(), CliError> {
    for &(id, ..) in APPLIES_TO {
        if sub.value_source(id) == Some(ValueSource::CommandLine) {
            if let Some(why) = not_applicable(id, output) {
                return Err(CliError::Msg(format!("--{} {why}", id.replace('_', "-"))));
            }
        }
    }
    Ok(())
}

/// Writes `scene` to `output` ([`keyscene::convert()`](fn@keyscene::convert) with `opts`).
/// Nothing is printed: the warnings (posing warnings, `--transform-skin`, first) and the
/// 3DA/FBX/3DS report are returned ([`Converted`]) for the caller's summary (`summary.rs`).
/// Options that do not apply to the format are refused before this by [`check_options`].
pub fn run(scene: &Scene, output: &Path, opts: &ConvertOptions) -> Result<Converted, CliError> {
    let report = keyscene::convert(scene, output, opts)?;
    let mut warnings: Vec<String> =
        report.pose_warnings.iter().map(|w| format!("--transform-skin: {w}")).collect();
    warnings.extend(report.warnings.iter().cloned());
    let full = if let Some(r) = &report.three_da {
        Some(r.to_string())
    } else if let Some(r) = &report.fbx {
        Some(r.to_string())
    } else {
        report.three_ds.as_ref().map(ToString::to_string)
    };
    Ok(Converted { warnings, report: full })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn z_up_faces_minus_y_and_y_up_faces_z() {
        use keyscene::scene::{Axis, AxisSystem};
        let axes = AxisSystem::right_handed_with_up;
        assert_eq!(axes(Axis::PosZ), AxisSystem::Z_UP_RIGHT_HANDED);
        assert_eq!(axes(Axis::PosY), AxisSystem::Y_UP_RIGHT_HANDED);
        assert!(axes(Axis::NegX).basis().is_some());
    }

    #[test]
    fn every_convert_option_says_which_outputs_it_applies_to() {
        use clap::CommandFactory;
        let cli = crate::Cli::command();
        let convert = cli.find_subcommand("convert").unwrap();
        let every_output =
            ["input", "output", "animation", "stack", "help", "force", "report", "quiet", "json"];
        let folders = ["to", "shard", "manifest"];
        for arg in convert.get_arguments() {
            let id = arg.get_id().as_str();
            assert!(
                APPLIES_TO.iter().any(|a| a.0 == id)
                    || every_output.contains(&id)
                    || folders.contains(&id),
                "convert option {id:?} is missing from APPLIES_TO"
            );
        }
        for (id, ..) in APPLIES_TO {
            assert!(convert.get_arguments().any(|a| a.get_id() == id), "{id:?} is no option");
        }
    }
}

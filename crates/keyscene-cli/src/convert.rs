//! `keyscene convert`: the single-file conversion is the library's
//! [`keyscene::convert::convert_file`] (which refuses options that do not apply to the
//! output); this module turns its report into the summary's parts.

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

impl Converted {
    /// The summary's part of a conversion report: posing warnings (worded after
    /// `--transform-skin`) then the writer's, and the 3DA/FBX/3DS report as text.
    pub fn of(report: &keyscene::convert::Report) -> Converted {
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
        Converted { warnings, report: full }
    }
}

#[cfg(test)]
mod tests {
    use keyscene::convert::APPLIES_TO;

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

//! `keyscene convert`: writes a scene in the format OUT's extension names.

use std::path::Path;

use clap::parser::ValueSource;
use clap::ArgMatches;

use keyscene::anim::Time;
use keyscene::scene::{Axis, AxisSystem, Scene};

use crate::{pick_animation, CliError};

/// How `convert … .obj` poses and places the geometry (all off by default: the geometry as
/// stored, in the file's own axes and units).
#[derive(Debug, Clone, Default)]
pub struct PoseOptions {
    /// Pose at this frame of the file's clock.
    pub frame: Option<f64>,
    /// Pose at this time in seconds.
    pub time: Option<f64>,
    /// Write with this axis pointing up (right-handed; see [`AxisSystem::right_handed_with_up`]).
    pub up: Option<Axis>,
    /// Write in this unit: metres per unit (`None`: the file's own unit).
    pub metres_per_unit: Option<f64>,
    /// Hold every curve's end values outside its keys instead of the file's pre/post
    /// extrapolation (cycles, mirror, slope).
    pub no_extrapolation: bool,
    /// Pose the nodes a stored bind pose of this name lists at its matrices.
    pub bind_pose: Option<String>,
    /// Skinned meshes follow their own node's motion since binding, as Maya shows them.
    pub transform_skin: bool,
}

/// What `convert` does for `.3da` output (`--fps`, `--axes`).
#[derive(Debug, Clone, Default)]
pub struct ThreeDaOptions {
    /// Key frames at this rate (`ExportOptions::fps`; default: the animation's own).
    pub fps: Option<f64>,
    /// The written axes (`ExportOptions::axes`; default 3ds Max's).
    pub axes: keyscene::formats::three_da::Axes,
}

/// What every output's writer needs to put files beside it (`--no-copy-textures`, and the
/// source for the rule that an output never replaces another source's file,
/// [`keyscene::output`]).
#[derive(Debug, Clone)]
pub struct Companions {
    /// Copy the texture images the output names beside it (default; `--no-copy-textures`
    /// turns it off).
    pub copy_textures: bool,
    /// The source file, as [`keyscene::output::source_name`] records it.
    pub source: String,
}

impl PoseOptions {
    /// Whether anything but the geometry as stored was asked for.
    fn poses(&self) -> bool {
        self.frame.is_some()
            || self.time.is_some()
            || self.up.is_some()
            || self.metres_per_unit.is_some()
            || self.bind_pose.is_some()
            || self.transform_skin
    }
}

/// The file format `convert` writes, named by OUT's extension (any case).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    /// `.obj`, with a `.mtl` beside it.
    Obj,
    /// `.gltf`, with its `.bin` and images beside it unless `--embed`.
    Gltf,
    /// `.glb`: binary glTF, always self-contained.
    Glb,
    /// `.3da`, with one `.mat` script per material beside it.
    ThreeDa,
    /// `.fbx`: binary FBX 7.4 (`formats::fbx::export`).
    Fbx,
}

impl Output {
    /// The format `path`'s extension names; an error for any other extension.
    pub fn of(path: &Path) -> Result<Output, CliError> {
        let ext = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
        match ext.as_deref() {
            Some("obj") => Ok(Output::Obj),
            Some("gltf") => Ok(Output::Gltf),
            Some("glb") => Ok(Output::Glb),
            Some("3da") => Ok(Output::ThreeDa),
            Some("fbx") => Ok(Output::Fbx),
            _ => Err(CliError::Msg(format!(
                "{}: unknown output format (use .obj, .gltf, .glb, .3da or .fbx)",
                path.display()
            ))),
        }
    }

    /// The extension as the user writes it, with its dot.
    fn extension(self) -> &'static str {
        match self {
            Output::Obj => ".obj",
            Output::Gltf => ".gltf",
            Output::Glb => ".glb",
            Output::ThreeDa => ".3da",
            Output::Fbx => ".fbx",
        }
    }
}

/// What one conversion produced, for the summary: the reader's warnings are not included
/// (`main` prints them as it loads).
#[derive(Debug, Clone, Default)]
pub struct Converted {
    /// The writer's warnings (3DA and FBX: the report's warnings and what was not written).
    pub warnings: Vec<String>,
    /// The 3DA exporter's or FBX writer's full report (`--report`), `None` for OBJ and glTF.
    pub report: Option<String>,
}

/// Each single-file `convert` option (its clap id) with the outputs it applies to and why it
/// does not apply to others (empty, or a clause that starts with a space).
/// `--animation`/`--stack`/`--force`/`--report`/`--quiet`/`--json` apply to every output and
/// are not listed; `--to`/`--shard`/`--manifest` apply to folders (checked in `main`).
const APPLIES_TO: &[(&str, &[Output], &str)] = {
    use Output::*;
    const POSE: &str = " (glTF and 3DA keep the whole animation)";
    &[
        ("frame", &[Obj], POSE),
        ("time", &[Obj], POSE),
        ("no_extrapolation", &[Obj], POSE),
        ("bind_pose", &[Obj], POSE),
        ("transform_skin", &[Obj], POSE),
        ("up", &[Obj, Gltf, Glb], ""),
        ("units", &[Obj, Gltf, Glb], ""),
        ("space", &[Obj, Gltf, Glb], ""),
        ("embed", &[Gltf], " (a .glb is always self-contained)"),
        ("no_copy_textures", &[Obj, Gltf, ThreeDa], " (a .glb holds its images)"),
        ("no_animation", &[Gltf, Glb], ""),
        ("resample_fps", &[Gltf, Glb], ""),
        ("max_influences", &[Gltf, Glb], ""),
        ("fps", &[ThreeDa], ""),
        ("axes", &[ThreeDa], ""),
    ]
};

/// Refuses a `convert` option given on the command line (`sub`: the `convert` matches) that
/// `output` does not use, naming the option and the outputs it applies to, so that nothing is
/// silently ignored.
pub fn check_options(output: Output, sub: &ArgMatches) -> Result<(), CliError> {
    for &(id, outputs, why) in APPLIES_TO {
        if sub.value_source(id) == Some(ValueSource::CommandLine) && !outputs.contains(&output) {
            let names: Vec<&str> = outputs.iter().map(|o| o.extension()).collect();
            let names = match names.split_last() {
                Some((last, init)) if !init.is_empty() => format!("{} and {last}", init.join(", ")),
                _ => names.join(""),
            };
            return Err(CliError::Msg(format!(
                "--{} does not apply to {} output: it applies to {names} only{why}",
                id.replace('_', "-"),
                output.extension()
            )));
        }
    }
    Ok(())
}

/// Writes `scene` to `output` in `format` (see [`Output`]): `.obj` (plus `.mtl`), `.gltf`
/// (plus `.bin` and images), `.glb`, `.3da` (plus one `.mat` script per material; what was
/// converted, baked, resampled and dropped is printed) or `.fbx` (binary 7.4, every animation
/// or the one `--animation`/`--stack` names; the report is printed).
/// OBJ: `pose` says how to pose and place it (see [`PoseOptions`]); with none of its options the
/// geometry is written as stored. glTF and 3DA keep the whole animation; for glTF
/// `pose.up`/`pose.metres_per_unit` name the source's own axes and unit (see
/// [`GltfArgs::write_options`](crate::gltf_args::GltfArgs::write_options)). `animation`
/// (already resolved from `--animation`/`--stack`) picks the animation to pose with (OBJ),
/// export (3DA) or write alone (glTF, when given). Nothing is printed: the warnings and the
/// 3DA/FBX report are returned ([`Converted`]) for the caller's summary (`summary.rs`).
/// Options that do not apply to `format` are refused before this by [`check_options`].
#[allow(clippy::too_many_arguments)]
pub fn run(
    mut scene: Scene,
    output: &Path,
    format: Output,
    pose: &PoseOptions,
    animation: Option<usize>,
    gltf: &crate::gltf_args::GltfArgs,
    three_da: &ThreeDaOptions,
    companions: &Companions,
) -> Result<Converted, CliError> {
    let requested = animation;
    let obj_opts = keyscene::formats::obj::SaveOptions {
        copy_textures: companions.copy_textures,
        source: Some(companions.source.clone()),
    };
    let obj_save = |scene: &Scene, pose: Option<&keyscene::anim::Pose>| {
        let warnings = keyscene::formats::obj::save(scene, pose, output, &obj_opts)?;
        Ok::<_, CliError>(Converted { warnings, report: None })
    };
    let animation = pick_animation(&scene, animation)?;
    match format {
        Output::Obj => {
            if !pose.poses() {
                return obj_save(&scene, None);
            }
            if pose.no_extrapolation {
                if let Some(a) = animation {
                    scene.animations[a] = scene.animations[a].without_extrapolation();
                }
            }
            let mut p = match (pose.frame, pose.time) {
                (Some(f), _) => scene.evaluate(animation, Time::Frame(f)),
                (None, Some(t)) => scene.evaluate(animation, Time::Seconds(t)),
                (None, None) => scene.evaluate(None, Time::Frame(0.0)),
            };
            if let Some(name) = &pose.bind_pose {
                let Some(bind) = scene.bind_pose(name) else {
                    let names: Vec<&str> =
                        scene.bind_poses.iter().map(|b| b.name.as_str()).collect();
                    return Err(CliError::Msg(format!(
                        "--bind-pose {name:?}: the file has no such bind pose (it has: {})",
                        if names.is_empty() { "none".to_string() } else { names.join(", ") }
                    )));
                };
                p.apply_bind_pose(&scene, bind);
            }
            let mut skin_warnings = Vec::new();
            if pose.transform_skin {
                for n in p.follow_skinned_nodes(&scene, &scene.bind_poses) {
                    skin_warnings.push(format!(
                        "--transform-skin: no bind pose lists skinned mesh node {:?}; left as skinned",
                        scene.nodes[n].name
                    ));
                }
            }
            if pose.up.is_some() || pose.metres_per_unit.is_some() {
                let axes = pose.up.map_or(scene.meta.axes, AxisSystem::right_handed_with_up);
                p.transform_world(scene.axis_unit_conversion(axes, pose.metres_per_unit));
            }
            let mut done = obj_save(&scene, Some(&p))?;
            skin_warnings.append(&mut done.warnings);
            done.warnings = skin_warnings;
            Ok(done)
        }
        Output::Gltf | Output::Glb => {
            let mut opts = gltf
                .write_options(requested, pose.up, pose.metres_per_unit)
                .map_err(CliError::Msg)?;
            opts.copy_textures = companions.copy_textures;
            opts.source = Some(companions.source.clone());
            let warnings = keyscene::formats::gltf::save(&scene, output, &opts)?;
            Ok(Converted {
                warnings: warnings.iter().map(ToString::to_string).collect(),
                report: None,
            })
        }
        Output::ThreeDa => {
            let opts = keyscene::formats::three_da::ExportOptions {
                animation,
                fps: three_da.fps,
                axes: three_da.axes,
                copy_textures: companions.copy_textures,
                source: Some(companions.source.clone()),
                ..keyscene::formats::three_da::ExportOptions::default()
            };
            let report = keyscene::formats::three_da::save(&scene, output, &opts)?;
            let mut warnings = report.warnings.clone();
            warnings.extend(report.dropped.iter().map(|d| format!("not written: {d}")));
            Ok(Converted { warnings, report: Some(report.to_string()) })
        }
        Output::Fbx => {
            let opts = keyscene::formats::fbx::export::WriteOptions {
                animation: requested,
                ..Default::default()
            };
            let report = keyscene::formats::fbx::export::save(&scene, output, &opts)?;
            let warnings = report.dropped.iter().map(|d| format!("not written: {d}")).collect();
            Ok(Converted { warnings, report: Some(report.to_string()) })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn z_up_faces_minus_y_and_y_up_faces_z() {
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

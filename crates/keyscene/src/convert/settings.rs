//! `keyscene convert`'s options by their command-line names ([`Settings`]), and the whole
//! single-file conversion they drive ([`convert_file`]): the command line and the Python
//! package (`keyscene.convert(src, dst, **options)`) fill the same [`Settings`] and call the
//! same function, so an option means the same everywhere and both write the same bytes.

use std::path::Path;

use super::{not_applicable, ConvertOptions, OutputFormat, Report};
use crate::anim::{AnimationChoice, PoseOptions, Time};
use crate::scene::{Axis, AxisSystem, Scene, Warning};
use crate::Error;

/// A length unit given as `--units`: metres per unit, or `None` for `unitless` (keep the
/// file's own unit).
pub type Unit = Option<f64>;

/// Every option of `keyscene convert IN OUT` (docs/cli.md), one field per option, named as the
/// command line names it with `_` for `-`. A field that is `None` or `false` was not given.
/// Which output each option applies to is [`super::APPLIES_TO`]; [`Settings::check`] refuses the
/// others. Build from [`Default`] and set fields, or by name with [`Settings::set`].
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct Settings {
    /// `--frame F`: OBJ, pose at this frame of the file's clock.
    pub frame: Option<f64>,
    /// `--time SECONDS`: OBJ, pose at this time in seconds (FBX: absolute file time).
    pub time: Option<f64>,
    /// `--animation I`: the animation to use, by index (default: the first).
    pub animation: Option<usize>,
    /// `--stack NAME`: the animation to use, by name (FBX AnimationStack; exact name first,
    /// else the first containing it).
    pub stack: Option<String>,
    /// `--up AXIS`: OBJ, write with this axis up; glTF, the source's own up axis.
    pub up: Option<Axis>,
    /// `--units UNIT`: OBJ, write in this unit; glTF, the source's own unit.
    pub units: Option<Unit>,
    /// `--space AXIS_up_UNIT`: `--up` and `--units` together.
    pub space: Option<(Axis, Unit)>,
    /// `--no-extrapolation`: OBJ, hold curve ends instead of the file's extrapolation.
    pub no_extrapolation: bool,
    /// `--bind-pose NAME`: OBJ, pose from the stored FBX bind pose NAME.
    pub bind_pose: Option<String>,
    /// `--transform-skin`: OBJ, skinned meshes also follow their own node, as Maya shows them.
    pub transform_skin: bool,
    /// `--embed`: `.gltf` self-contained (base64 buffer and images); FBX, embed texture images.
    pub embed: bool,
    /// `--no-animation`: glTF, leave animations out.
    pub no_animation: bool,
    /// `--resample-fps N`: glTF, resample every channel at N samples per second.
    pub resample_fps: Option<f64>,
    /// `--cubic-spline`: glTF, keep source curves glTF's CUBICSPLINE holds exactly as
    /// CUBICSPLINE samplers (default: LINEAR/STEP keys only).
    pub cubic_spline: bool,
    /// `--compress`: glTF, quantize vertex attributes (`KHR_mesh_quantization`) and
    /// meshopt-compress the buffer views (`EXT_meshopt_compression`).
    pub compress: bool,
    /// `--max-influences N`: glTF, joint influences kept per vertex (default 4).
    pub max_influences: Option<usize>,
    /// `--tolerance R`: glTF and USD, the animation error bound relative to the scene size
    /// (default 1e-4; [`crate::formats::gltf::WriteOptions::tolerance`],
    /// [`crate::formats::usd::WriteOptions::tolerance`]).
    pub tolerance: Option<f64>,
    /// `--visible-only`: glTF, leave out meshes hidden throughout
    /// ([`crate::formats::gltf::WriteOptions::visible_only`]).
    pub visible_only: bool,
    /// `--source-vertex-ids`: glTF, write `_KEYSCENE_VERTEX`
    /// ([`crate::formats::gltf::WriteOptions::source_vertex_ids`]).
    pub source_vertex_ids: bool,
    /// `--fps N`: 3DA, the key frame rate written (default: the animation's own).
    pub fps: Option<f64>,
    /// `--axes max|source`: 3DA, the axes written (default `max`).
    pub axes: Option<crate::formats::three_da::Axes>,
    /// `--fbx-version 7400|7500`: FBX, the file version (default 7400).
    pub fbx_version: Option<u32>,
    /// `--fbx-ascii`: FBX, write ASCII instead of binary.
    pub fbx_ascii: bool,
    /// `--fbx-keep-pivots`: FBX, keep the full transform stack and the source's keys.
    pub fbx_keep_pivots: bool,
    /// `--triangulate`: FBX and USD, split polygons into triangles.
    pub triangulate: bool,
    /// `--no-copy-textures`: do not copy texture images beside the output.
    pub no_copy_textures: bool,
    /// `--force`: replace an existing output file.
    pub force: bool,
}

/// A value given to [`Settings::set`]: what a keyword argument or a command-line word holds.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// `true`/`false` (flags).
    Bool(bool),
    /// A whole number.
    Int(i64),
    /// A number.
    Float(f64),
    /// A word (`z`, `cm`, `y_up_m`, `max`, a name).
    Str(String),
}

impl Value {
    fn describe(&self) -> String {
        match self {
            Value::Bool(b) => format!("{b}"),
            Value::Int(i) => format!("{i}"),
            Value::Float(f) => format!("{f}"),
            Value::Str(s) => crate::quoted(s).to_string(),
        }
    }
}

impl Settings {
    /// The option names [`Settings::set`] takes, in the order of `keyscene convert --help`.
    pub const NAMES: &'static [&'static str] = &[
        "frame",
        "time",
        "animation",
        "stack",
        "up",
        "units",
        "space",
        "no_extrapolation",
        "bind_pose",
        "transform_skin",
        "embed",
        "no_animation",
        "resample_fps",
        "cubic_spline",
        "compress",
        "max_influences",
        "tolerance",
        "visible_only",
        "source_vertex_ids",
        "fps",
        "axes",
        "fbx_version",
        "fbx_ascii",
        "fbx_keep_pivots",
        "triangulate",
        "no_copy_textures",
        "force",
    ];

    /// Sets the option `name` (a [`Settings::NAMES`] entry) to `value`, parsed as the command
    /// line parses its word: flags take [`Value::Bool`]; `frame`, `time`, `resample_fps`,
    /// `tolerance`, `fps` a number; `animation` an index, or a name (then it sets `stack`);
    /// `max_influences` and `fbx_version` a whole number; `up` an axis word (`x` … `-z`),
    /// `units` a unit word (`m`, `cm`, `mm`, `in`, `ft`, `unitless`) or a number of metres per
    /// unit, `space` `AXIS_up_UNIT`, `axes` `max` or `source`, `stack`/`bind_pose` a name.
    ///
    /// Errors: [`Error::Option`] naming the option for an unknown name (listing the valid
    /// ones) or a value of the wrong kind or out of range.
    pub fn set(&mut self, name: &str, value: Value) -> Result<(), Error> {
        let bad = |expected: &str| {
            Error::Option(format!(
                "--{} {}: expected {expected}",
                name.replace('_', "-"),
                value.describe()
            ))
        };
        let number = || match value {
            Value::Int(i) => Ok(i as f64),
            Value::Float(f) => Ok(f),
            _ => Err(bad("a number")),
        };
        let flag = || match value {
            Value::Bool(b) => Ok(b),
            _ => Err(bad("true or false")),
        };
        let word = || match &value {
            Value::Str(s) => Ok(s.clone()),
            _ => Err(bad("a string")),
        };
        let whole = || match value {
            Value::Int(i) if i >= 0 => Ok(i as u64),
            _ => Err(bad("a whole number")),
        };
        match name {
            "frame" => self.frame = Some(number()?),
            "time" => self.time = Some(number()?),
            "animation" => match &value {
                Value::Str(s) => self.stack = Some(s.clone()),
                Value::Int(i) if *i >= 0 => self.animation = Some(*i as usize),
                _ => return Err(bad("an animation index (0, 1, …) or name")),
            },
            "stack" => self.stack = Some(word()?),
            "up" => self.up = Some(parse_axis(&word()?).map_err(|e| bad(&e))?),
            "units" => {
                self.units = Some(match &value {
                    Value::Str(s) => parse_unit(s).map_err(|e| bad(&e))?,
                    _ => Some(number().ok().filter(|m| m.is_finite() && *m > 0.0).ok_or_else(
                        || bad("a unit (m, cm, mm, in, ft, unitless) or metres per unit"),
                    )?),
                })
            }
            "space" => self.space = Some(parse_space(&word()?).map_err(|e| bad(&e))?),
            "no_extrapolation" => self.no_extrapolation = flag()?,
            "bind_pose" => self.bind_pose = Some(word()?),
            "transform_skin" => self.transform_skin = flag()?,
            "embed" => self.embed = flag()?,
            "no_animation" => self.no_animation = flag()?,
            "resample_fps" => self.resample_fps = Some(number()?),
            "cubic_spline" => self.cubic_spline = flag()?,
            "compress" => self.compress = flag()?,
            "max_influences" => self.max_influences = Some(whole()? as usize),
            "tolerance" => self.tolerance = Some(number()?),
            "visible_only" => self.visible_only = flag()?,
            "source_vertex_ids" => self.source_vertex_ids = flag()?,
            "fps" => self.fps = Some(number()?),
            "axes" => self.axes = Some(parse_3da_axes(&word()?).map_err(|e| bad(&e))?),
            "fbx_version" => {
                let v = match &value {
                    Value::Str(s) => s.parse::<u64>().map_err(|_| bad("7400 or 7500"))?,
                    _ => whole()?,
                };
                if v != 7400 && v != 7500 {
                    return Err(bad("7400 or 7500"));
                }
                self.fbx_version = Some(v as u32);
            }
            "fbx_ascii" => self.fbx_ascii = flag()?,
            "fbx_keep_pivots" => self.fbx_keep_pivots = flag()?,
            "triangulate" => self.triangulate = flag()?,
            "no_copy_textures" => self.no_copy_textures = flag()?,
            "force" => self.force = flag()?,
            _ => {
                return Err(Error::Option(format!(
                    "unknown option {}: the options are {}",
                    crate::quoted(name),
                    Self::NAMES.join(", ")
                )))
            }
        }
        Ok(())
    }

    /// The names of the options given (set to something other than their default), in
    /// [`Settings::NAMES`] order.
    pub fn given(&self) -> Vec<&'static str> {
        let set = [
            self.frame.is_some(),
            self.time.is_some(),
            self.animation.is_some(),
            self.stack.is_some(),
            self.up.is_some(),
            self.units.is_some(),
            self.space.is_some(),
            self.no_extrapolation,
            self.bind_pose.is_some(),
            self.transform_skin,
            self.embed,
            self.no_animation,
            self.resample_fps.is_some(),
            self.cubic_spline,
            self.compress,
            self.max_influences.is_some(),
            self.tolerance.is_some(),
            self.visible_only,
            self.source_vertex_ids,
            self.fps.is_some(),
            self.axes.is_some(),
            self.fbx_version.is_some(),
            self.fbx_ascii,
            self.fbx_keep_pivots,
            self.triangulate,
            self.no_copy_textures,
            self.force,
        ];
        Self::NAMES.iter().zip(set).filter(|(_, on)| *on).map(|(n, _)| *n).collect()
    }

    /// Refuses options that `format` does not use ([`APPLIES_TO`](crate::convert::APPLIES_TO)) and option pairs that
    /// exclude each other, naming the option as the command line does (`--fbx-ascii does not
    /// apply to .glb output: it applies to .fbx only`), so that nothing is silently ignored.
    ///
    /// Errors: [`Error::Option`].
    pub fn check(&self, format: OutputFormat) -> Result<(), Error> {
        for id in self.given() {
            if let Some(why) = not_applicable(id, format) {
                return Err(Error::Option(format!("--{} {why}", id.replace('_', "-"))));
            }
        }
        let pairs =
            [("frame", "time"), ("animation", "stack"), ("space", "up"), ("space", "units")];
        let given = self.given();
        for (a, b) in pairs {
            if given.contains(&a) && given.contains(&b) {
                return Err(Error::Option(format!(
                    "--{} and --{} cannot be used together",
                    a.replace('_', "-"),
                    b.replace('_', "-")
                )));
            }
        }
        Ok(())
    }

    /// The animation these settings choose: `stack` by name, else `animation` by index,
    /// else the first.
    pub fn animation_choice(&self) -> AnimationChoice {
        match (&self.stack, self.animation) {
            (Some(name), _) => AnimationChoice::Named(name.clone()),
            (None, Some(i)) => AnimationChoice::Index(i),
            (None, None) => AnimationChoice::First,
        }
    }

    /// The library options these settings ask for, as `keyscene convert` builds them; `source`
    /// is the source's recorded name ([`crate::output::source_name`]).
    ///
    /// Errors: [`Error::Option`] for a resample rate or 3DA rate that is not a positive
    /// number, a tolerance not in (0, 1], or `max_influences` 0.
    pub fn options(&self, source: Option<String>) -> Result<ConvertOptions, Error> {
        let (up, units) = match self.space {
            Some((a, u)) => (Some(a), Some(u)),
            None => (self.up, self.units),
        };
        let metres_per_unit = units.flatten();
        for (name, rate) in [("resample-fps", self.resample_fps), ("fps", self.fps)] {
            if let Some(r) = rate.filter(|r| !(r.is_finite() && *r > 0.0)) {
                return Err(Error::Option(format!("--{name} {r}: expected a positive number")));
            }
        }
        let pose = PoseOptions {
            time: self.frame.map(Time::Frame).or(self.time.map(Time::Seconds)),
            extrapolation: !self.no_extrapolation,
            bind_pose: self.bind_pose.clone(),
            skin_follows_node: self.transform_skin,
            target_axes: up.map(AxisSystem::right_handed_with_up),
            target_units: metres_per_unit,
            ..PoseOptions::default()
        };
        let mut opts = ConvertOptions::default()
            .animation(self.animation_choice())
            .pose(pose)
            .copy_textures(!self.no_copy_textures);
        opts.source = source;
        let tolerance = self
            .tolerance
            .map(crate::anim::resample::check_tolerance)
            .transpose()
            .map_err(|e| Error::Option(format!("--{e}")))?;
        #[cfg(feature = "gltf")]
        {
            let max_influences = self.max_influences.unwrap_or(4);
            if max_influences == 0 {
                return Err(Error::Option("--max-influences 0: expected at least 1".into()));
            }
            let g = &mut opts.gltf;
            g.embed = self.embed;
            g.animations = !self.no_animation;
            g.resample_fps = self.resample_fps;
            g.cubic_spline = self.cubic_spline;
            g.compress = self.compress;
            g.visible_only = self.visible_only;
            g.source_vertex_ids = self.source_vertex_ids;
            g.max_influences = max_influences;
            if let Some(t) = tolerance {
                g.tolerance = t;
            }
            g.source_axes = up.map(AxisSystem::right_handed_with_up);
            g.source_metres_per_unit = metres_per_unit;
        }
        #[cfg(feature = "usd")]
        {
            opts.usd.up = up;
            opts.usd.metres_per_unit = metres_per_unit;
            opts.usd.triangulate = self.triangulate;
            if let Some(t) = tolerance {
                opts.usd.tolerance = t;
            }
        }
        #[cfg(feature = "three_da")]
        {
            opts.three_da.fps = self.fps;
            opts.three_da.axes = self.axes.unwrap_or_default();
        }
        #[cfg(feature = "fbx")]
        {
            let f = &mut opts.fbx;
            f.binary.version = self.fbx_version.unwrap_or(7400);
            (f.ascii, f.triangulate, f.embed) = (self.fbx_ascii, self.triangulate, self.embed);
            f.keep_pivots = self.fbx_keep_pivots;
        }
        Ok(opts)
    }
}

/// What [`convert_file`] did: the reader's warnings and the writer's [`Report`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct FileReport {
    /// What the reader survived (the file loaded with these problems).
    pub read_warnings: Vec<Warning>,
    /// The conversion's report (its warnings, the files written).
    pub report: Report,
}

impl FileReport {
    /// Every warning in the order the command line prints them: the reader's, then posing
    /// warnings (worded after `--transform-skin`), then the writer's.
    pub fn warnings(&self) -> Vec<String> {
        let mut all: Vec<String> = self.read_warnings.iter().map(ToString::to_string).collect();
        all.extend(self.report.pose_warnings.iter().map(|w| format!("--transform-skin: {w}")));
        all.extend(self.report.warnings.iter().cloned());
        all
    }
}

/// Converts the file `input` to `output` as `keyscene convert IN OUT` with `settings` does:
/// refuses to write over the input or a file the scene was read from, `force` or not
/// ([`crate::output::refuse_input`]); refuses a folder as output, an unknown output extension
/// and options the output does not use ([`Settings::check`]); refuses to replace an existing
/// `output` unless
/// [`Settings::force`] ([`crate::output::claim_output`]); loads the input
/// ([`crate::load`]); refuses an animation the scene lacks; and writes through
/// [`convert()`](fn@super::convert). The output's bytes are the command line's.
///
/// Errors: [`Error::Option`] for options (before anything is read), [`Error::OutputExists`],
/// the reader's errors with the input named ([`Error::in_file`]), posing errors, the writer's.
pub fn convert_file(input: &Path, output: &Path, settings: &Settings) -> Result<FileReport, Error> {
    let source = crate::output::source_name(input);
    crate::output::refuse_input(output, &[input])?;
    claim(input.file_stem(), output, settings, &source)?;
    let (scene, read_warnings) = crate::load(input).map_err(|e| e.in_file(input))?;
    crate::output::refuse_input(output, &scene.source_files())?;
    write(&scene, read_warnings, output, settings, Some(source))
}

/// [`convert_file`] for a scene already loaded (`Scene.save` in Python): the same checks
/// (a folder as output, the extension, the options, an existing output without
/// [`Settings::force`]) and the same writer. `source` is the source's recorded name
/// ([`crate::output::source_name`]; `None`: the output's own path).
pub fn convert_loaded(
    scene: &Scene,
    read_warnings: Vec<Warning>,
    output: &Path,
    settings: &Settings,
    source: Option<String>,
) -> Result<FileReport, Error> {
    let name = source.clone().unwrap_or_else(|| output.display().to_string());
    if let Some(src) = &source {
        crate::output::refuse_input(output, &[Path::new(src)])?;
    }
    crate::output::refuse_input(output, &scene.source_files())?;
    claim(Path::new(&name).file_stem(), output, settings, &name)?;
    write(scene, read_warnings, output, settings, source)
}

/// Everything refused before a scene is read: a folder as output, an unknown extension,
/// options the output does not use, an existing output without `force`.
fn claim(
    stem: Option<&std::ffi::OsStr>,
    output: &Path,
    settings: &Settings,
    source: &str,
) -> Result<(), Error> {
    if output.is_dir() {
        return Err(Error::Option(format!(
            "{out} is a folder: give an output file (e.g. {out}/{stem}.glb), or convert a \
             folder into it with `keyscene convert DIR {out} --to {formats}`",
            out = output.display(),
            stem = stem.map_or("scene".into(), |s| s.to_string_lossy()),
            formats =
                OutputFormat::ALL.iter().map(|f| &f.extension()[1..]).collect::<Vec<_>>().join("|"),
        )));
    }
    let format = OutputFormat::of(output)?;
    settings.check(format)?;
    crate::output::claim_output(output, source, settings.force)
}

/// Writes a scene whose output is claimed.
fn write(
    scene: &Scene,
    read_warnings: Vec<Warning>,
    output: &Path,
    settings: &Settings,
    source: Option<String>,
) -> Result<FileReport, Error> {
    // An unknown animation is refused before any other option is looked at.
    scene.choose_animation(&settings.animation_choice())?;
    let opts = settings.options(source)?;
    let report = super::convert(scene, output, &opts)?;
    Ok(FileReport { read_warnings, report })
}

/// Parses an axis word: `x`, `y`, `z` (or `+x` …), `-x`, `-y`, `-z` (any case).
pub fn parse_axis(s: &str) -> Result<Axis, String> {
    Ok(match s.to_ascii_lowercase().as_str() {
        "x" | "+x" => Axis::PosX,
        "-x" => Axis::NegX,
        "y" | "+y" => Axis::PosY,
        "-y" => Axis::NegY,
        "z" | "+z" => Axis::PosZ,
        "-z" => Axis::NegZ,
        _ => return Err("expected x, y, z, -x, -y or -z".into()),
    })
}

/// Parses a unit word: metres per unit for `m`, `cm`, `mm`, `in`, `ft`; `None` for
/// `unitless` (the file's own unit).
pub fn parse_unit(s: &str) -> Result<Unit, String> {
    Ok(Some(match s.to_ascii_lowercase().as_str() {
        "m" => 1.0,
        "cm" => 0.01,
        "mm" => 0.001,
        "in" => 0.0254,
        "ft" => 0.3048,
        "unitless" => return Ok(None),
        _ => return Err("expected m, cm, mm, in, ft or unitless".into()),
    }))
}

/// Parses `AXIS_up_UNIT` (`y_up_m`, `-z_up_in`).
pub fn parse_space(s: &str) -> Result<(Axis, Unit), String> {
    let (axis, unit) =
        s.split_once("_up_").ok_or("expected AXIS_up_UNIT, e.g. y_up_m or z_up_cm")?;
    Ok((parse_axis(axis)?, parse_unit(unit)?))
}

/// Parses the 3DA axes word: `max` or `source`.
pub fn parse_3da_axes(s: &str) -> Result<crate::formats::three_da::Axes, String> {
    match s {
        "max" => Ok(crate::formats::three_da::Axes::Max),
        "source" => Ok(crate::formats::three_da::Axes::Source),
        _ => Err("expected max or source".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_are_set_by_their_command_line_names() {
        let mut s = Settings::default();
        s.set("up", Value::Str("z".into())).unwrap();
        s.set("units", Value::Str("cm".into())).unwrap();
        s.set("fbx_version", Value::Int(7500)).unwrap();
        s.set("animation", Value::Str("Run".into())).unwrap();
        s.set("embed", Value::Bool(true)).unwrap();
        assert_eq!(s.up, Some(Axis::PosZ));
        assert_eq!(s.units, Some(Some(0.01)));
        assert_eq!(s.fbx_version, Some(7500));
        assert_eq!(s.animation_choice(), AnimationChoice::Named("Run".into()));
        assert_eq!(s.given(), ["stack", "up", "units", "embed", "fbx_version"]);
        let e = s.set("colour", Value::Bool(true)).unwrap_err().to_string();
        assert!(e.starts_with("unknown option \"colour\": the options are frame, time,"), "{e}");
        let e = s.set("fbx_version", Value::Int(7300)).unwrap_err().to_string();
        assert_eq!(e, "--fbx-version 7300: expected 7400 or 7500");
        let e = s.set("embed", Value::Int(1)).unwrap_err().to_string();
        assert_eq!(e, "--embed 1: expected true or false");
        assert_eq!(Settings::NAMES.len(), s.given().len() + 22);
    }

    #[test]
    fn compress_is_a_gltf_option() {
        let mut s = Settings::default();
        s.set("compress", Value::Bool(true)).unwrap();
        assert_eq!(s.given(), ["compress"]);
        assert!(s.check(OutputFormat::Glb).is_ok() && s.check(OutputFormat::Gltf).is_ok());
        let e = s.check(OutputFormat::Obj).unwrap_err().to_string();
        assert!(e.starts_with("--compress does not apply to .obj output"), "{e}");
        #[cfg(feature = "gltf")]
        assert!(s.options(None).unwrap().gltf.compress);
    }

    #[test]
    fn cubic_spline_is_a_gltf_option() {
        let mut s = Settings::default();
        s.set("cubic_spline", Value::Bool(true)).unwrap();
        assert_eq!(s.given(), ["cubic_spline"]);
        assert!(s.check(OutputFormat::Glb).is_ok() && s.check(OutputFormat::Gltf).is_ok());
        let e = s.check(OutputFormat::Fbx).unwrap_err().to_string();
        assert!(e.starts_with("--cubic-spline does not apply to .fbx output"), "{e}");
        #[cfg(feature = "gltf")]
        assert!(s.options(None).unwrap().gltf.cubic_spline);
        #[cfg(feature = "gltf")]
        assert!(!Settings::default().options(None).unwrap().gltf.cubic_spline);
    }

    #[test]
    #[cfg(feature = "gltf")]
    fn tolerance_reaches_the_gltf_and_usd_writers_within_zero_to_one() {
        let mut s = Settings::default();
        assert_eq!(s.options(None).unwrap().gltf.tolerance, 1e-4);
        #[cfg(feature = "usd")]
        assert_eq!(s.options(None).unwrap().usd.tolerance, 1e-4);
        s.set("tolerance", Value::Float(0.01)).unwrap();
        assert_eq!(s.options(None).unwrap().gltf.tolerance, 0.01);
        #[cfg(feature = "usd")]
        assert_eq!(s.options(None).unwrap().usd.tolerance, 0.01);
        assert!(s.check(OutputFormat::Usda).is_ok() && s.check(OutputFormat::Usdz).is_ok());
        assert!(s.check(OutputFormat::Fbx).unwrap_err().to_string().starts_with("--tolerance"));
        for bad in [0.0, -1e-4, 1.5, f64::NAN, f64::INFINITY] {
            let s = Settings { tolerance: Some(bad), ..Settings::default() };
            let e = s.options(None).unwrap_err().to_string();
            assert!(e.contains("--tolerance") && e.contains("at most 1"), "{e}");
        }
    }

    #[test]
    fn options_for_another_output_are_refused_by_name() {
        let s = Settings { fbx_ascii: true, ..Settings::default() };
        let e = s.check(OutputFormat::Glb).unwrap_err().to_string();
        assert_eq!(e, "--fbx-ascii does not apply to .glb output: it applies to .fbx only");
        assert!(s.check(OutputFormat::Fbx).is_ok());
        let both = Settings { frame: Some(1.0), time: Some(1.0), ..Settings::default() };
        assert!(both.check(OutputFormat::Obj).is_err());
    }

    #[test]
    fn units_and_space_reach_the_writers() {
        let s = Settings {
            space: Some((Axis::PosZ, Some(0.01))),
            resample_fps: Some(60.0),
            ..Settings::default()
        };
        let o = s.options(None).unwrap();
        assert_eq!(o.pose.target_units, Some(0.01));
        assert_eq!(o.pose.target_axes, Some(AxisSystem::Z_UP_RIGHT_HANDED));
        #[cfg(feature = "gltf")]
        assert_eq!((o.gltf.source_metres_per_unit, o.gltf.resample_fps), (Some(0.01), Some(60.0)));
        let bad = Settings { resample_fps: Some(0.0), ..Settings::default() };
        assert_eq!(
            bad.options(None).unwrap_err().to_string(),
            "--resample-fps 0: expected a positive number"
        );
        assert_eq!(parse_unit("unitless"), Ok(None));
        assert_eq!(parse_space("-z_up_in"), Ok((Axis::NegZ, Some(0.0254))));
    }
}

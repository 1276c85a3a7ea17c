//! One entry point for writing a scene in any output format (issue #13 §1):
//! [`convert()`](fn@convert) picks the writer from the output's extension ([`OutputFormat`])
//! and hands it its options from one [`ConvertOptions`]. `keyscene convert IN OUT`, the
//! folder converter (`keyscene convert DIR OUT --to …`) and a library user call this same
//! function, so they write the same bytes.
//!
//! This module sits above the formats (it calls each writer) and below the CLI; no format
//! imports it.
//!
//! Which option applies to which output is [`APPLIES_TO`]; options that do not apply to the
//! output are ignored here, and refused by the CLI ([`not_applicable`]).

use std::path::Path;

use crate::anim::{AnimationChoice, PoseOptions, PoseWarning};
use crate::quoting::quoted;
use crate::scene::Scene;
use crate::Error;

mod settings;
pub use settings::{
    convert_file, convert_loaded, parse_3da_axes, parse_axis, parse_space, parse_unit, FileReport,
    Settings, Unit, Value,
};

/// The formats [`convert()`](fn@convert) writes, named by the output's extension (any case).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum OutputFormat {
    /// `.obj`, with a `.mtl` beside it ([`crate::formats::obj`]).
    Obj,
    /// `.gltf`, with its `.bin` and images beside it unless embedded ([`crate::formats::gltf`]).
    Gltf,
    /// `.glb`: binary glTF, always self-contained.
    Glb,
    /// `.3da`, with one `.mat` script per material beside it ([`crate::formats::three_da`]).
    ThreeDa,
    /// `.fbx`: binary FBX 7.4 ([`crate::formats::fbx::export`]).
    Fbx,
    /// `.3ds`: 3D Studio ([`crate::formats::three_ds::export`]; 3DS sources keep their keys,
    /// others are keyed on every frame at 30 fps).
    ThreeDs,
    /// `.usda`: a USD text layer, images beside it ([`crate::formats::usd`]).
    Usda,
    /// `.usdz`: a USDZ package, the layer and its images inside ([`crate::formats::usd`]).
    Usdz,
}

impl OutputFormat {
    /// Every format written, in the order the docs list them; the extension names
    /// ([`OutputFormat::extension`]) are what a folder conversion's `--to` takes.
    pub const ALL: [OutputFormat; 8] = [
        OutputFormat::Glb,
        OutputFormat::Gltf,
        OutputFormat::ThreeDa,
        OutputFormat::Obj,
        OutputFormat::Fbx,
        OutputFormat::ThreeDs,
        OutputFormat::Usda,
        OutputFormat::Usdz,
    ];

    /// The format `path`'s extension names.
    ///
    /// Errors: [`Error::UnknownFormat`] for any other extension, naming the path and the
    /// extensions that are written.
    pub fn of(path: &Path) -> Result<OutputFormat, Error> {
        let ext = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
        match ext.as_deref() {
            Some("obj") => Ok(OutputFormat::Obj),
            Some("gltf") => Ok(OutputFormat::Gltf),
            Some("glb") => Ok(OutputFormat::Glb),
            Some("3da") => Ok(OutputFormat::ThreeDa),
            Some("fbx") => Ok(OutputFormat::Fbx),
            Some("3ds") => Ok(OutputFormat::ThreeDs),
            Some("usda") => Ok(OutputFormat::Usda),
            Some("usdz") => Ok(OutputFormat::Usdz),
            _ => Err(Error::UnknownFormat(format!(
                "{}: unknown output format (use .obj, .gltf, .glb, .3da, .fbx, .3ds, .usda or .usdz)",
                path.display()
            ))),
        }
    }

    /// The extension with its dot (`.obj`, `.gltf`, `.glb`, `.3da`, `.fbx`, `.3ds`).
    pub fn extension(self) -> &'static str {
        match self {
            OutputFormat::Obj => ".obj",
            OutputFormat::Gltf => ".gltf",
            OutputFormat::Glb => ".glb",
            OutputFormat::ThreeDa => ".3da",
            OutputFormat::Fbx => ".fbx",
            OutputFormat::ThreeDs => ".3ds",
            OutputFormat::Usda => ".usda",
            OutputFormat::Usdz => ".usdz",
        }
    }
}

/// Each conversion option, by its command-line name with `_` for `-` (`no_copy_textures` is
/// `--no-copy-textures`), with the outputs it applies to and why it does not apply to the
/// others (empty, or a clause that starts with a space). `animation`/`stack` apply to every
/// output and are not listed.
///
/// The options and the [`ConvertOptions`] fields they set: `frame`, `time`,
/// `no_extrapolation`, `bind_pose`, `transform_skin`, and for OBJ `up`/`units`/`space`:
/// [`ConvertOptions::pose`]; `up`/`units`/`space` for glTF and USD (the *source's* axes and unit; [`ConvertOptions::usd`]),
/// `embed`, `no_animation`, `resample_fps`, `cubic_spline`, `compress`, `max_influences`, `tolerance`, `visible_only`, `source_vertex_ids`: [`ConvertOptions::gltf`];
/// `fps`, `axes`: [`ConvertOptions::three_da`]; `fbx_version`, `fbx_ascii`, `fbx_keep_pivots`, `triangulate`, and
/// `embed` for FBX: [`ConvertOptions::fbx`] (`triangulate` for USD: [`ConvertOptions::usd`]); `no_copy_textures`:
/// [`ConvertOptions::copy_textures`].
pub const APPLIES_TO: &[(&str, &[OutputFormat], &str)] = {
    use OutputFormat::*;
    const POSE: &str = " (glTF and 3DA keep the whole animation)";
    &[
        ("frame", &[Obj], POSE),
        ("time", &[Obj], POSE),
        ("no_extrapolation", &[Obj], POSE),
        ("bind_pose", &[Obj], POSE),
        ("transform_skin", &[Obj], POSE),
        ("up", &[Obj, Gltf, Glb, Usda, Usdz], ""),
        ("units", &[Obj, Gltf, Glb, Usda, Usdz], ""),
        ("space", &[Obj, Gltf, Glb, Usda, Usdz], ""),
        ("embed", &[Gltf, Fbx], " (a .glb is always self-contained)"),
        (
            "no_copy_textures",
            &[Obj, Gltf, ThreeDa, ThreeDs, Usda],
            " (a .glb or .usdz holds its images)",
        ),
        ("no_animation", &[Gltf, Glb], ""),
        ("resample_fps", &[Gltf, Glb], ""),
        ("cubic_spline", &[Gltf, Glb], ""),
        ("compress", &[Gltf, Glb], ""),
        ("max_influences", &[Gltf, Glb], ""),
        ("tolerance", &[Gltf, Glb, Usda, Usdz], ""),
        ("visible_only", &[Gltf, Glb], ""),
        ("source_vertex_ids", &[Gltf, Glb], ""),
        ("fps", &[ThreeDa], ""),
        ("fbx_version", &[Fbx], ""),
        ("fbx_ascii", &[Fbx], ""),
        ("fbx_keep_pivots", &[Fbx], ""),
        ("triangulate", &[Fbx, Usda, Usdz], ""),
        ("axes", &[ThreeDa], ""),
    ]
};

/// Why `option` (an [`APPLIES_TO`] name) does not apply to `format`, worded to follow the
/// option's name: `does not apply to .glb output: it applies to .gltf only (a .glb is always
/// self-contained)`. `None` when it applies, or is not in the table (it applies everywhere).
pub fn not_applicable(option: &str, format: OutputFormat) -> Option<String> {
    let &(_, outputs, why) = APPLIES_TO.iter().find(|a| a.0 == option)?;
    if outputs.contains(&format) {
        return None;
    }
    let names: Vec<&str> = outputs.iter().map(|o| o.extension()).collect();
    let names = match names.split_last() {
        Some((last, init)) if !init.is_empty() => format!("{} and {last}", init.join(", ")),
        _ => names.join(""),
    };
    Some(format!(
        "does not apply to {} output: it applies to {names} only{why}",
        format.extension()
    ))
}

/// Everything [`convert()`](fn@convert) needs, one field per concern; each format's own
/// options are inside, and the shared fields below override theirs.
///
/// ```
/// use keyscene::convert::ConvertOptions;
/// use keyscene::anim::{AnimationChoice, PoseOptions, Time};
/// let opts = ConvertOptions::default()
///     .animation(AnimationChoice::Index(0))
///     .pose(PoseOptions::default().at(Time::Frame(10.0)))
///     .copy_textures(false);
/// assert!(!opts.copy_textures);
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ConvertOptions {
    /// The animation to use, for every output: OBJ poses with it (it replaces
    /// [`PoseOptions::animation`]), 3DA exports it, glTF and FBX write it alone when it is not
    /// [`AnimationChoice::First`] (with `First` they write every animation). An animation the
    /// scene does not have is an error for every output.
    pub animation: AnimationChoice,
    /// OBJ: how to pose and place the geometry; when it asks for nothing
    /// ([`PoseOptions::is_as_stored`], the default) the geometry is written as stored.
    pub pose: PoseOptions,
    /// glTF/GLB writer options ([`crate::formats::gltf::WriteOptions`]; `only_animation`,
    /// `copy_textures` and `source` are set from the fields here).
    #[cfg(feature = "gltf")]
    pub gltf: crate::formats::gltf::WriteOptions,
    /// 3DA exporter options ([`crate::formats::three_da::ExportOptions`]; `animation`,
    /// `copy_textures` and `source` are set from the fields here).
    #[cfg(feature = "three_da")]
    pub three_da: crate::formats::three_da::ExportOptions,
    /// FBX writer options ([`crate::formats::fbx::export::WriteOptions`]; `animation` is set
    /// from [`ConvertOptions::animation`]).
    #[cfg(feature = "fbx")]
    pub fbx: crate::formats::fbx::export::WriteOptions,
    /// 3DS writer options ([`crate::formats::three_ds::export::WriteOptions`]; `animation`,
    /// `copy_textures` and `source` are set from the fields here).
    #[cfg(feature = "three_ds")]
    pub three_ds: crate::formats::three_ds::export::WriteOptions,
    /// USD writer options ([`crate::formats::usd::WriteOptions`]; `animation`,
    /// `copy_textures` and `source` are set from the fields here).
    #[cfg(feature = "usd")]
    pub usd: crate::formats::usd::WriteOptions,
    /// Copy the texture images the output names beside it (OBJ, `.gltf`, 3DA, 3DS; default
    /// `true`).
    pub copy_textures: bool,
    /// The source file's name as [`crate::output::source_name`] records it, for the rule that
    /// an output never replaces another source's file ([`crate::output`]); `None`: the
    /// output's own path.
    pub source: Option<String>,
}

impl Default for ConvertOptions {
    fn default() -> Self {
        ConvertOptions {
            animation: AnimationChoice::First,
            pose: PoseOptions::default(),
            #[cfg(feature = "gltf")]
            gltf: Default::default(),
            #[cfg(feature = "three_da")]
            three_da: Default::default(),
            #[cfg(feature = "fbx")]
            fbx: Default::default(),
            #[cfg(feature = "three_ds")]
            three_ds: Default::default(),
            #[cfg(feature = "usd")]
            usd: Default::default(),
            copy_textures: true,
            source: None,
        }
    }
}

impl ConvertOptions {
    /// Sets [`ConvertOptions::animation`].
    pub fn animation(mut self, animation: AnimationChoice) -> Self {
        self.animation = animation;
        self
    }

    /// Sets [`ConvertOptions::pose`].
    pub fn pose(mut self, pose: PoseOptions) -> Self {
        self.pose = pose;
        self
    }

    /// Sets [`ConvertOptions::gltf`].
    #[cfg(feature = "gltf")]
    pub fn gltf(mut self, gltf: crate::formats::gltf::WriteOptions) -> Self {
        self.gltf = gltf;
        self
    }

    /// Sets [`ConvertOptions::three_da`].
    #[cfg(feature = "three_da")]
    pub fn three_da(mut self, three_da: crate::formats::three_da::ExportOptions) -> Self {
        self.three_da = three_da;
        self
    }

    /// Sets [`ConvertOptions::fbx`].
    #[cfg(feature = "fbx")]
    pub fn fbx(mut self, fbx: crate::formats::fbx::export::WriteOptions) -> Self {
        self.fbx = fbx;
        self
    }

    /// Sets [`ConvertOptions::three_ds`].
    #[cfg(feature = "three_ds")]
    pub fn three_ds(mut self, three_ds: crate::formats::three_ds::export::WriteOptions) -> Self {
        self.three_ds = three_ds;
        self
    }

    /// Sets [`ConvertOptions::usd`].
    #[cfg(feature = "usd")]
    pub fn usd(mut self, usd: crate::formats::usd::WriteOptions) -> Self {
        self.usd = usd;
        self
    }

    /// Sets [`ConvertOptions::copy_textures`].
    pub fn copy_textures(mut self, on: bool) -> Self {
        self.copy_textures = on;
        self
    }

    /// Sets [`ConvertOptions::source`].
    pub fn source(mut self, source: impl Into<String>) -> Self {
        self.source = Some(source.into());
        self
    }
}

/// What [`convert()`](fn@convert) did.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Report {
    /// The format written.
    pub format: OutputFormat,
    /// OBJ: what posing could not do as asked ([`Scene::pose`]).
    pub pose_warnings: Vec<PoseWarning>,
    /// What the writer could not carry over exactly, one line each: the OBJ and glTF
    /// writers' warnings, the 3DA report's `warnings`, and `not written: …` lines for what
    /// 3DA, FBX and 3DS left out.
    pub warnings: Vec<String>,
    /// 3DA: the exporter's whole report (what was converted, baked, resampled, dropped).
    #[cfg(feature = "three_da")]
    pub three_da: Option<crate::formats::three_da::ExportReport>,
    /// FBX: the writer's report (objects written, what was left out).
    #[cfg(feature = "fbx")]
    pub fbx: Option<crate::formats::fbx::export::Report>,
    /// 3DS: the writer's report (what was written, renamed, split, left out).
    #[cfg(feature = "three_ds")]
    pub three_ds: Option<crate::formats::three_ds::export::Report>,
    /// USD: the writer's report (what was not written, renamed prims).
    #[cfg(feature = "usd")]
    pub usd: Option<crate::formats::usd::Report>,
    /// Every file the conversion wrote, as the writer named it (the output's folder joined
    /// with the file name), in the order written: the files beside the output (`.mtl`, `.bin`,
    /// `.mat` scripts, copied texture images) and the output itself, which is written last.
    /// Companion files found already holding the same bytes are listed too (they are left
    /// as they are, [`crate::output::write_companions`]).
    pub files: Vec<std::path::PathBuf>,
}

impl Report {
    fn new(format: OutputFormat) -> Report {
        Report {
            format,
            pose_warnings: Vec::new(),
            warnings: Vec::new(),
            #[cfg(feature = "three_da")]
            three_da: None,
            #[cfg(feature = "fbx")]
            fbx: None,
            #[cfg(feature = "three_ds")]
            three_ds: None,
            #[cfg(feature = "usd")]
            usd: None,
            files: Vec::new(),
        }
    }
}

/// Writes `scene` to `output` in the format its extension names ([`OutputFormat::of`]), each
/// file atomically, with the files that go beside it (`.mtl`, `.bin`, `.mat` scripts, texture
/// images; [`crate::output`]'s rule keeps them from replacing another source's files):
/// - `.obj`: posed by [`ConvertOptions::pose`] ([`Scene::pose`]), or as stored;
/// - `.gltf`/`.glb`: [`ConvertOptions::gltf`], the whole animation (or the one chosen);
/// - `.3da`: [`ConvertOptions::three_da`], the chosen animation;
/// - `.fbx`: binary FBX 7.4 (7.5 or ASCII as [`ConvertOptions::fbx`] asks), every animation
///   (or the one chosen);
/// - `.3ds`: [`ConvertOptions::three_ds`], the chosen animation (3DS holds one);
/// - `.usda`/`.usdz`: [`ConvertOptions::usd`], every animation as a variant of the root
///   prim's `animation` variant set, the chosen one selected (one animation: written plainly).
///
/// Errors: [`Error::UnknownFormat`] for another extension; [`Error::Pose`] for an animation
/// or bind pose the scene lacks; [`Error::Unsupported`] when the format's feature is off or
/// the writer cannot write the scene; the writer's own errors (I/O, collisions).
pub fn convert(scene: &Scene, output: &Path, opts: &ConvertOptions) -> Result<Report, Error> {
    let (report, files) = crate::io::recording_writes(|| write_output(scene, output, opts));
    let mut report = report?;
    report.files = files;
    Ok(report)
}

/// The OBJ arm of [`write_output`]: posed as `opts.pose` says (at a time, with the materials
/// of that time), its warnings into `report`.
#[cfg(feature = "obj")]
fn write_obj(
    scene: &Scene,
    output: &Path,
    opts: &ConvertOptions,
    animation: Option<usize>,
    report: &mut Report,
) -> Result<(), Error> {
    let obj = crate::formats::obj::SaveOptions {
        copy_textures: opts.copy_textures,
        source: opts.source.clone(),
    };
    let pose = if opts.pose.is_as_stored() {
        None
    } else {
        let mut p = opts.pose.clone();
        p.animation = opts.animation.clone();
        let (pose, warnings) = scene.pose(&p)?;
        report.pose_warnings = warnings;
        Some(pose)
    };
    // Posed at a time, the materials are those of that time (animated colours).
    let at_time;
    let scene = match opts.pose.time.filter(|_| pose.is_some()) {
        Some(t) if !scene.animated_material_properties(animation).is_empty() => {
            at_time = Scene { materials: scene.materials_at(animation, t), ..scene.clone() };
            &at_time
        }
        _ => scene,
    };
    report.warnings = crate::formats::obj::save(scene, pose.as_ref(), output, &obj)?;
    Ok(())
}

/// [`convert`] without the record of the files written.
fn write_output(scene: &Scene, output: &Path, opts: &ConvertOptions) -> Result<Report, Error> {
    let format = OutputFormat::of(output)?;
    let animation = scene.choose_animation(&opts.animation)?;
    // The animation alone when one was asked for; every animation otherwise.
    let only = (opts.animation != AnimationChoice::First).then_some(animation).flatten();
    let mut report = Report::new(format);
    let off = |feature: &str| {
        Error::Unsupported(format!(
            "{}: keyscene was built without the {feature} feature",
            output.display()
        ))
    };
    match format {
        OutputFormat::Obj => {
            #[cfg(feature = "obj")]
            write_obj(scene, output, opts, animation, &mut report)?;
            #[cfg(not(feature = "obj"))]
            return Err(off("obj"));
        }
        OutputFormat::Gltf | OutputFormat::Glb => {
            #[cfg(feature = "gltf")]
            {
                let mut gltf = opts.gltf.clone();
                if opts.animation != AnimationChoice::First {
                    gltf.only_animation = only;
                }
                gltf.copy_textures = opts.copy_textures;
                gltf.source = opts.source.clone();
                let warnings = crate::formats::gltf::save(scene, output, &gltf)?;
                report.warnings = warnings.iter().map(ToString::to_string).collect();
                let written: Vec<usize> = match gltf.only_animation {
                    Some(a) => vec![a],
                    None => (0..scene.animations.len()).collect(),
                };
                report.warnings.extend(animated_materials_not_written(scene, &written, false));
            }
            #[cfg(not(feature = "gltf"))]
            return Err(off("gltf"));
        }
        OutputFormat::ThreeDa => {
            #[cfg(feature = "three_da")]
            {
                let mut three_da = opts.three_da.clone();
                three_da.animation = animation;
                three_da.copy_textures = opts.copy_textures;
                three_da.source = opts.source.clone();
                let written = crate::formats::three_da::save(scene, output, &three_da)?;
                report.warnings = written.warnings.clone();
                report.warnings.extend(written.dropped.iter().map(|d| format!("not written: {d}")));
                report.warnings.extend(animated_materials_not_written(
                    scene,
                    animation.as_slice(),
                    false,
                ));
                report.three_da = Some(written);
            }
            #[cfg(not(feature = "three_da"))]
            return Err(off("three_da"));
        }
        OutputFormat::Fbx => {
            #[cfg(feature = "fbx")]
            {
                let mut fbx = opts.fbx.clone();
                if opts.animation != AnimationChoice::First {
                    fbx.animation = only;
                }
                let written = crate::formats::fbx::export::save(scene, output, &fbx)?;
                report.warnings =
                    written.dropped.iter().map(|d| format!("not written: {d}")).collect();
                let all: Vec<usize> = (0..scene.animations.len()).collect();
                let animations = fbx.animation.map_or(all, |a| vec![a]);
                report.warnings.extend(animated_materials_not_written(scene, &animations, true));
                report.fbx = Some(written);
            }
            #[cfg(not(feature = "fbx"))]
            return Err(off("fbx"));
        }
        OutputFormat::ThreeDs => {
            #[cfg(feature = "three_ds")]
            {
                let mut three_ds = opts.three_ds.clone();
                three_ds.animation = animation;
                three_ds.copy_textures = opts.copy_textures;
                three_ds.source = opts.source.clone();
                let written = crate::formats::three_ds::export::save(scene, output, &three_ds)?;
                report.warnings =
                    written.dropped.iter().map(|d| format!("not written: {d}")).collect();
                report.warnings.extend(
                    written
                        .renamed
                        .iter()
                        .map(|(k, a, b)| format!("renamed {k} {} to {}", quoted(a), quoted(b))),
                );
                report.warnings.extend(animated_materials_not_written(
                    scene,
                    animation.as_slice(),
                    false,
                ));
                report.warnings.extend(written.warnings.iter().cloned());
                report.three_ds = Some(written);
            }
            #[cfg(not(feature = "three_ds"))]
            return Err(off("three_ds"));
        }
        OutputFormat::Usda | OutputFormat::Usdz => {
            #[cfg(feature = "usd")]
            {
                let mut usd = opts.usd.clone();
                usd.animation = animation;
                usd.copy_textures = opts.copy_textures;
                usd.source = opts.source.clone();
                let written = crate::formats::usd::save(scene, output, &usd)?;
                report.warnings = written.warnings.clone();
                report.warnings.extend(
                    written
                        .renamed
                        .iter()
                        .map(|(k, a, b)| format!("renamed {k} {} to prim {b}", quoted(a))),
                );
                let animations = match crate::formats::usd::takes::chosen(scene, &usd).0 {
                    Some(all) => all,
                    None => animation.into_iter().collect(),
                };
                report.warnings.extend(animated_materials_not_written(scene, &animations, false));
                report.usd = Some(written);
            }
            #[cfg(not(feature = "usd"))]
            return Err(off("usd"));
        }
    }
    let _ = (off, only);
    Ok(report)
}

/// `not written: …` lines for the animated material properties
/// ([`Scene::material_channels`]) of `animations` (indices), which the glTF, 3DA, 3DS and FBX
/// writers do not carry: glTF has no ratified animated material (`KHR_animation_pointer` is
/// not read by every loader), 3DA and 3DS have none, and the FBX writer writes the curves of
/// material user properties only (`user_written`). Each writes the stored value instead. (OBJ posed at a time writes the materials of
/// that time, [`Scene::materials_at`].)
#[cfg(any(
    feature = "gltf",
    feature = "three_da",
    feature = "fbx",
    feature = "three_ds",
    feature = "usd"
))]
fn animated_materials_not_written(
    scene: &Scene,
    animations: &[usize],
    user_written: bool,
) -> Vec<String> {
    let mut out = Vec::new();
    for &a in animations {
        for (m, p) in scene.animated_material_properties(Some(a)) {
            if user_written && matches!(p, crate::scene::animation::MaterialProperty::User(_)) {
                continue;
            }
            out.push(format!(
                "not written: animated material property {} of material \"{}\" (animation \"{}\"); \
                 its stored value is written",
                scene.materials.get(m).map_or_else(String::new, |x| p.name_on(x)),
                scene.materials.get(m).map_or("", |m| m.name.as_str()),
                scene.animations.get(a).map_or("", |a| a.name.as_str())
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_are_named_by_their_extension_in_any_case() {
        assert_eq!(OutputFormat::of(Path::new("a/B.GLB")).unwrap(), OutputFormat::Glb);
        assert_eq!(OutputFormat::of(Path::new("x.3da")).unwrap(), OutputFormat::ThreeDa);
        let e = OutputFormat::of(Path::new("x.blend")).unwrap_err().to_string();
        assert_eq!(e, "x.blend: unknown output format (use .obj, .gltf, .glb, .3da, .fbx, .3ds, .usda or .usdz)");
    }

    #[test]
    fn an_option_says_which_outputs_it_applies_to() {
        assert_eq!(not_applicable("embed", OutputFormat::Gltf), None);
        assert_eq!(
            not_applicable("embed", OutputFormat::Glb).as_deref(),
            Some("does not apply to .glb output: it applies to .gltf and .fbx only (a .glb is always self-contained)")
        );
        assert_eq!(
            not_applicable("up", OutputFormat::Fbx).as_deref(),
            Some("does not apply to .fbx output: it applies to .obj, .gltf, .glb, .usda and .usdz only")
        );
        assert_eq!(not_applicable("stack", OutputFormat::Fbx), None);
    }

    /// A material whose `DiffuseFactor` is keyed 0 → 1 over frames 0–10: an OBJ posed at
    /// frame 5 writes `Kd` = colour × 0.5 (hand-computed), a GLB reports the property as not
    /// written.
    #[test]
    fn animated_materials_are_posed_in_obj_and_reported_in_gltf() {
        use crate::anim::{
            Animation, Interpolation, Key, MaterialChannel, MaterialProperty, MaterialValue, Time,
            Track,
        };
        let mut scene = Scene::default();
        let diffuse = glam::Vec3::new(1.0, 0.5, 0.0);
        scene.materials.push(crate::scene::Material {
            name: "paint".into(),
            diffuse,
            ..Default::default()
        });
        scene.animations.push(Animation { name: "Take".into(), fps: 10.0, ..Default::default() });
        let key = |frame, value| Key { frame, value, interpolation: Interpolation::Linear };
        scene.material_channels.push(MaterialChannel {
            animation: 0,
            material: 0,
            property: MaterialProperty::DiffuseFactor,
            value: MaterialValue::Curves {
                curves: [Some(Track::new(vec![key(0.0, 0.0), key(10.0, 1.0)])), None, None],
                constants: [None; 3],
            },
        });
        let dir = tempfile::tempdir().unwrap();
        let pose = PoseOptions { time: Some(Time::Frame(5.0)), ..PoseOptions::default() };
        let opts = ConvertOptions::default().pose(pose);
        convert(&scene, &dir.path().join("a.obj"), &opts).unwrap();
        let mtl = std::fs::read_to_string(dir.path().join("a.mtl")).unwrap();
        assert!(mtl.contains("Kd 0.5 0.25 0\n"), "{mtl}");
        let report =
            convert(&scene, &dir.path().join("a.glb"), &ConvertOptions::default()).unwrap();
        assert!(
            report.warnings.iter().any(|w| w.starts_with(
                "not written: animated material property DiffuseFactor of material \"paint\""
            )),
            "{:?}",
            report.warnings
        );
    }

    #[test]
    fn an_animation_the_scene_lacks_fails_every_output_before_anything_is_written() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["a.obj", "a.glb", "a.3da", "a.fbx"] {
            let out = dir.path().join(name);
            let opts = ConvertOptions::default().animation(AnimationChoice::Index(1));
            let e = convert(&Scene::default(), &out, &opts).unwrap_err();
            assert_eq!(e.to_string(), "animation 1: the scene has 0 animation(s)");
            assert!(!out.exists());
        }
    }

    /// A chain of `n` nodes, each 1 unit along +X and 0.5 along +Y from its parent (the root
    /// at the origin), the last one with a triangle at its origin, and the root keyed.
    #[cfg(all(feature = "gltf", feature = "three_da", feature = "fbx", feature = "three_ds"))]
    fn deep_chain(n: usize) -> Scene {
        use crate::anim::{Animation, Channel, ChannelTarget, Interpolation, Key, Track};
        use crate::scene::{Mesh, Node, NodeKind};
        use glam::DVec3;
        let mut s = Scene::default();
        for i in 0..n {
            let mut node = Node::new(format!("n{i}"), NodeKind::Null);
            if i > 0 {
                node.transform.translation = DVec3::new(1.0, 0.5, 0.0);
            }
            s.nodes.push(node);
            s.attach(i, i.checked_sub(1));
        }
        s.meshes.push(Mesh {
            name: "tri".into(),
            positions: vec![DVec3::ZERO, DVec3::X, DVec3::Y],
            polygon_starts: vec![0, 3],
            corner_vertices: vec![0, 1, 2],
            ..Mesh::default()
        });
        s.nodes[n - 1].kind = NodeKind::Mesh;
        s.nodes[n - 1].mesh = Some(0);
        let key = |frame, value| Key { frame, value, interpolation: Interpolation::Linear };
        let track = Track::new(vec![key(0.0, DVec3::ZERO), key(10.0, DVec3::Z)]);
        s.animations.push(Animation {
            name: "root".into(),
            fps: 30.0,
            frame_range: (0.0, 10.0),
            channels: vec![Channel { node: 0, target: ChannelTarget::Translation(track) }],
        });
        s
    }

    /// Issue #16 goal 2, 3DS: a chain of 10,000 nodes (fewer than `NODE_ID` numbers) is
    /// resampled and written, every node moving with the keyed root; read back, the last node
    /// is where the chain's translations sum to, (n − 1) · (1, 0.5, 0), and 1 along +Z more at
    /// frame 10 (3DS frame 10 = 1/3 s, the root's last key). The time is the `write` bench's
    /// `chain_to_3ds`, not measured here.
    #[test]
    #[cfg(all(feature = "gltf", feature = "three_da", feature = "fbx", feature = "three_ds"))]
    fn a_10000_node_chain_converts_to_3ds() {
        use crate::anim::Time;
        use glam::DVec3;
        let n = 10_000;
        let scene = deep_chain(n);
        let end = DVec3::new((n - 1) as f64, 0.5 * (n - 1) as f64, 0.0);
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("chain.3ds");
        convert(&scene, &out, &ConvertOptions::default()).unwrap();
        let (back, _) = crate::load(&out).unwrap();
        back.validate().unwrap();
        assert_eq!(back.nodes.len(), n);
        let last = back.nodes.iter().position(|x| x.mesh.is_some()).unwrap();
        let at = |seconds: f64| {
            back.evaluate(Some(0), Time::Seconds(seconds)).world[last].w_axis.truncate()
        };
        // f32 locals composed over 10,000 levels: 1e-4 × the scene's size (issue #14).
        let tol = 1e-4 * end.length();
        assert!(at(0.0).abs_diff_eq(end, tol), "{}", at(0.0));
        assert!(at(10.0 / 30.0).abs_diff_eq(end + DVec3::Z, tol), "{}", at(10.0 / 30.0));
    }

    /// Issue #16 goal 2: a hierarchy 100,000 nodes deep is validated, evaluated, converted to
    /// GLB, FBX, OBJ and USDA (3DA and 3DS refuse it) and read back (USDA: counted) without recursion (a test thread has a 2 MiB stack), and
    /// the last node lands where the chain's translations sum to: (n − 1) · (1, 0.5, 0), and
    /// 1 along +Z more at frame 10 where the root's key moves it.
    #[test]
    #[cfg(all(
        feature = "gltf",
        feature = "three_da",
        feature = "fbx",
        feature = "three_ds",
        feature = "usd"
    ))]
    fn a_100000_node_chain_converts_without_recursion() {
        use crate::anim::Time;
        use glam::DVec3;
        let n = 100_000;
        let scene = deep_chain(n);
        scene.validate().unwrap();
        let end = DVec3::new((n - 1) as f64, 0.5 * (n - 1) as f64, 0.0);
        let last_world = |s: &Scene, frame: f64| {
            let last = s.nodes.iter().position(|x| x.name == format!("n{}", n - 1)).unwrap();
            s.evaluate(Some(0), Time::Frame(frame)).world[last].w_axis.truncate()
        };
        assert_eq!(last_world(&scene, 0.0), end);
        assert_eq!(last_world(&scene, 10.0), end + DVec3::Z);
        let dir = tempfile::tempdir().unwrap();
        for ext in ["glb", "3da", "fbx", "obj", "3ds", "usda"] {
            let out = dir.path().join(format!("chain.{ext}"));
            let written = convert(&scene, &out, &ConvertOptions::default());
            if ext == "3da" {
                // 3DA parent indices are 16-bit: the writer refuses the chain, in words.
                let e = written.map(|_| ()).unwrap_err().to_string();
                assert!(e.contains("100000 entities do not fit a u16 parent index"), "{e}");
                continue;
            }
            if ext == "3ds" {
                // 3DS node ids (NODE_ID) are 16-bit, 0xFFFF meaning "no parent": the writer
                // counts the 100,000 keyframer nodes and refuses them, in words, before it
                // samples anything.
                let e = written.map(|_| ()).unwrap_err().to_string();
                assert!(
                    e.contains(
                        "100000 keyframer nodes (or more), more than NODE_ID (u16) can number"
                    ),
                    "{e}"
                );
                assert!(!out.exists());
                continue;
            }
            written.unwrap_or_else(|e| panic!("{ext}: {e}"));
            if ext == "usda" {
                // One prim per node under the root prim, the only moving node (the root) with
                // time samples; indentation capped, so the text stays linear in the depth.
                let text = std::fs::read_to_string(&out).unwrap();
                assert_eq!(text.matches("def Xform ").count(), n + 1);
                // The root's ops (translate/orient/scale: each that changes) hold them all,
                // before the second node's prim.
                let samples = text.matches(".timeSamples").count();
                assert!((1..=3).contains(&samples), "{samples}");
                let second = text.match_indices("def Xform ").nth(2).unwrap().0;
                assert!(text.rfind(".timeSamples").unwrap() < second);
                assert!(text.len() < 1000 * n, "{} bytes", text.len());
                continue;
            }
            if ext == "obj" {
                // The triangle's first vertex is the last node's origin (f32-exact here).
                let text = std::fs::read_to_string(&out).unwrap();
                let v = text.lines().find(|l| l.starts_with("v ")).unwrap();
                assert_eq!(v, format!("v {} {} 0", n - 1, 0.5 * (n - 1) as f64));
                continue;
            }
            let (back, _) = crate::load(&out).unwrap_or_else(|e| panic!("{ext}: {e}"));
            back.validate().unwrap();
            // Written in f32 (glTF, 3DA): 99999 and 49999.5 are exact in f32.
            let tol = if ext == "fbx" { 1e-9 } else { 1e-3 };
            assert!(
                last_world(&back, 0.0).abs_diff_eq(end, tol),
                "{ext}: {}",
                last_world(&back, 0.0)
            );
        }
    }
}

//! The `keyscene` command-line tool: inspect, sample and convert animated 3D scenes.
//!
//! ```text
//! keyscene inspect FILE [--json]
//! keyscene sample FILE (--frame F | --time SECONDS)... [--fps N] [--animation I | --stack NAME] [--json]
//! keyscene convert IN OUT [--frame F | --time SECONDS] [--animation I | --stack NAME]
//!     [--up AXIS] [--units UNIT] [--no-extrapolation] [--bind-pose NAME] [--transform-skin]
//!     [--embed] [--no-animation] [--resample-fps N] [--max-influences N]
//!     [--axes max|source] [--fps N] [--fbx-version 7400|7500] [--fbx-ascii] [--fbx-keep-pivots] [--triangulate]
//!     [--force] [--report | --quiet | --json]
//! keyscene convert DIR OUTDIR --to glb|gltf|3da|obj|fbx|3ds|usda|usdz [--json] [--shard I/N] [--manifest FILE.jsonl]
//! keyscene render FILE -o OUT [--frame F | --time SECONDS | --frames A..B[:STEP] [--sheet]]
//!     [--size WxH] [--camera NAME|auto] [--bbox] [--bsphere] [--wireframe] [--background #rrggbb]
//! keyscene view FILE [--port N] [--no-open] [--animation I | --stack NAME] [--bind ADDR] [--watch]
//! ```
//!
//! Reader warnings go to stderr as `keyscene: warning: …`; errors as `keyscene: error: …` (with
//! the file offset and chunk path the library reports) and exit status 1. Output files are
//! written atomically: on error no output file is left behind. The JSON shapes are documented in
//! `docs/cli.md`.

#![warn(missing_docs)]

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::parser::ValueSource;
use clap::{ArgMatches, CommandFactory, FromArgMatches, Parser, Subcommand};
use keyscene::anim::{AnimationChoice, PoseError};
use keyscene::convert::Settings;
use keyscene::scene::Axis;

/// mimalloc as the global allocator: a fifth of loading a 3DS file is allocating the scene's
/// many small vectors, and mimalloc makes that markedly cheaper than the system allocator
/// (docs/benchmarks.md: 13× lib3ds with it, 9.2× without).
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod batch;
mod check;
mod convert;
mod gltf_args;
mod inspect;
mod render;
mod sample;
mod summary;
mod view;

/// Read, evaluate and convert animated 3D scenes.
#[derive(Debug, Parser)]
#[command(
    name = "keyscene",
    version,
    about = "keyscene: inspect, check, sample, convert, render and view animated 3D scenes",
    long_about = "keyscene: inspect, check, sample, convert, render and view animated 3D scenes.\n\n\
        Reads 3D Studio .3ds/.prj, FBX 6.1-7.7 (binary and ASCII), ChromeEngine .3da and glTF 2.0 \
        (.gltf/.glb); writes glTF/GLB, 3DA (with .mat material scripts), FBX 7.4/7.5 (binary or \
        ASCII), 3DS and OBJ (+ .mtl). Evaluates animation as lib3ds (3DS) and the FBX SDK (as \
        ufbx reproduces it) do. Details: README.md and docs/cli.md."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Show a scene's format, counts, node tree, materials, animation tracks and bind poses.
    Inspect {
        /// The scene file.
        file: PathBuf,
        /// Print JSON (schema in docs/cli.md) instead of the readable summary.
        #[arg(long)]
        json: bool,
        /// Dump the file's low-level structure instead (FBX: the node-record tree, arrays
        /// summarised), to locate a problem in one layer.
        #[arg(long, conflicts_with = "json")]
        raw: bool,
    },
    /// Validate a file: 3DA files get every structural check of docs/3da.md (offsets, chains,
    /// hierarchy, indices, strips, keys, weights, names, collision map), each with its byte
    /// offset; other formats are loaded and their reader warnings listed. Exits non-zero on any
    /// error.
    Check {
        /// The file to check.
        file: PathBuf,
    },
    /// Evaluate the animation at frames or times and print world-space results as JSON.
    Sample {
        /// The scene file.
        file: PathBuf,
        /// A frame of the file's clock (fractional allowed); repeatable, kept in order with --time.
        #[arg(long, value_name = "F", allow_negative_numbers = true)]
        frame: Vec<f64>,
        /// A time in seconds; repeatable, kept in order with --frame.
        #[arg(long, value_name = "SECONDS", allow_negative_numbers = true)]
        time: Vec<f64>,
        /// Frames per second for converting frames and seconds. Default: the file's rate, or
        /// 30 (3D Studio's rate) when the format stores none (3DS).
        #[arg(long, value_name = "N")]
        fps: Option<f64>,
        /// The animation to evaluate (index; default 0).
        #[arg(long, value_name = "I")]
        animation: Option<usize>,
        /// The animation to evaluate, by name (FBX: the AnimationStack; the first whose name
        /// equals NAME, else the first containing it). Default: the first animation.
        #[arg(long, value_name = "NAME", conflicts_with = "animation")]
        stack: Option<String>,
        /// Print JSON: the only output, and the default (accepted for scripts that pass it).
        #[arg(long)]
        json: bool,
    },
    /// Convert a scene; the output format follows OUT's extension (.obj, .gltf, .glb, .3da, .fbx,
    /// .3ds, .usda, .usdz).
    /// With a folder as input, convert every supported file under it (see --to).
    Convert {
        /// The scene file to read, or a folder: every .3ds, .prj, .fbx, .3da, .gltf and .glb
        /// file under it is converted (in parallel), mirroring subfolders under OUT.
        input: PathBuf,
        /// The file to write: .obj (with a .mtl beside it), .gltf, .glb, .3da (with .mat
        /// material scripts beside it), .fbx (binary FBX 7.4; see --fbx-version, --fbx-ascii) or
        /// .3ds (3D Studio). For a folder input: the output folder.
        output: PathBuf,
        /// Folder input: the output format. The summary lists files converted, with warnings
        /// and failed (with the reason); the exit status is non-zero when any failed.
        #[arg(long, help_heading = "Folder input", value_name = "FORMAT")]
        to: Option<batch::Target>,
        /// Print the summary as JSON instead of a line (folder input: the batch summary;
        /// schemas in docs/cli.md).
        #[arg(long)]
        json: bool,
        /// Print the full conversion report after the summary line (3DA: what was converted,
        /// baked, kept, resampled and dropped; FBX: what was written and dropped; a folder:
        /// every warning of every file). Default: one summary line.
        #[arg(long, short = 'v', conflicts_with_all = ["json", "quiet"])]
        report: bool,
        /// Print nothing on success (warnings and errors still go to stderr).
        #[arg(long, short = 'q', conflicts_with = "json")]
        quiet: bool,
        /// Replace an existing output file. Without it an existing OUT is an error (an output
        /// of an earlier run or another program is never replaced silently); a folder input
        /// skips files whose outputs are up to date. Files beside the output that another
        /// source wrote are never replaced.
        #[arg(long)]
        force: bool,
        /// Folder input: append one JSON line per source to FILE (path, size, sha256,
        /// outcome, outputs, warnings, seconds, build), and read its earlier lines to skip
        /// up-to-date files and update outputs it records (docs/cli.md, "Manifest").
        #[arg(long, help_heading = "Folder input", value_name = "FILE.jsonl")]
        manifest: Option<PathBuf>,
        /// Folder input: convert only shard I of N (0 ≤ I < N), a split fixed by each file's
        /// path relative to the input folder, so that N processes given 0/N … N-1/N (GNU
        /// parallel, a CI matrix, a Kubernetes Indexed Job) convert every file exactly once.
        #[arg(long, help_heading = "Folder input", value_name = "I/N", value_parser = batch::parse_shard)]
        shard: Option<keyscene::batch::Shard>,
        /// OBJ: pose the scene at this frame of the file's clock. Default: the geometry as
        /// stored (properties as stored, no curve evaluated, skins at their stored pose).
        #[arg(
            long,
            value_name = "F",
            allow_negative_numbers = true,
            conflicts_with = "time",
            help_heading = "OBJ output (posing)"
        )]
        frame: Option<f64>,
        /// OBJ: pose the scene at this time in seconds (FBX: absolute file time).
        #[arg(
            long,
            value_name = "SECONDS",
            allow_negative_numbers = true,
            help_heading = "OBJ output (posing)"
        )]
        time: Option<f64>,
        /// The animation to pose with (index; default 0).
        #[arg(long, value_name = "I")]
        animation: Option<usize>,
        /// The animation to pose with, by name (FBX: the AnimationStack; the first whose name
        /// equals NAME, else the first containing it). Default: the first animation.
        #[arg(long, value_name = "NAME", conflicts_with = "animation")]
        stack: Option<String>,
        /// OBJ: write with this axis pointing up: x, y, z, -x, -y or -z (right-handed; front is
        /// +Z for x/y up, -Y for z up). Default: the file's own axes. glTF: the source's own up
        /// axis, for a file that states it wrongly or not at all (glTF is always +Y up).
        #[arg(long, help_heading = "OBJ and glTF output", value_name = "AXIS", value_parser = keyscene::convert::parse_axis, allow_hyphen_values = true)]
        up: Option<Axis>,
        /// OBJ: write in this unit: m, cm, mm, in, ft, or unitless (the file's own unit, the
        /// default). A file without a unit counts as metres. glTF: the source's own unit (glTF
        /// is always metres).
        #[arg(long, help_heading = "OBJ and glTF output", value_name = "UNIT", value_parser = parse_units)]
        units: Option<UnitsArg>,
        /// OBJ and glTF: shorthand for --up and --units together, written AXIS_up_UNIT: `y_up_m`
        /// (glTF's space), `y_up_cm` (Maya's), `z_up_m`, `-z_up_in`…
        #[arg(long, value_name = "AXIS_up_UNIT", value_parser = parse_space,
              help_heading = "OBJ and glTF output",
              allow_hyphen_values = true, conflicts_with_all = ["up", "units"])]
        space: Option<(Axis, UnitsArg)>,
        /// OBJ: hold every animation curve at its first/last key outside its keys, instead of
        /// the file's pre/post extrapolation (repeat, mirror, keep slope).
        #[arg(long, help_heading = "OBJ output (posing)")]
        no_extrapolation: bool,
        /// OBJ: pose the nodes listed by the file's stored bind pose NAME (FBX `BindPose`,
        /// e.g. `skinCluster1`) at their bind-time matrices; other nodes follow their parents.
        #[arg(long, help_heading = "OBJ output (posing)", value_name = "NAME")]
        bind_pose: Option<String>,
        /// OBJ: a skinned mesh also follows its own node's motion since binding, as Maya shows
        /// it (by default only its bones move it, as the FBX SDK evaluates skins).
        #[arg(long, help_heading = "OBJ output (posing)")]
        transform_skin: bool,
        #[command(flatten)]
        gltf: gltf_args::GltfArgs,
        /// 3DA: write key frames at this rate (default: the animation's own; keys that do not
        /// land on integer frames are resampled).
        #[arg(long, value_name = "N", help_heading = "3DA output")]
        fps: Option<f64>,
        /// 3DA: the axes written: `max` (3ds Max's +Z up, right-handed; the default) or
        /// `source` (the file's own). See docs/3da.md, "Axes and EULER rotation".
        #[arg(long, help_heading = "3DA output", value_name = "AXES", value_parser = keyscene::convert::parse_3da_axes)]
        axes: Option<keyscene::formats::three_da::Axes>,
        /// FBX: the file version, 7400 (32-bit record offsets; the default) or 7500 (64-bit;
        /// also chosen by itself for a binary file that could pass 4 GiB).
        #[arg(long, help_heading = "FBX output", value_name = "VERSION", value_parser = ["7400", "7500"])]
        fbx_version: Option<String>,
        /// FBX: write ASCII FBX instead of binary.
        #[arg(long, help_heading = "FBX output")]
        fbx_ascii: bool,
        /// FBX: keep the source's full transform stack (pivots, pre/post rotation, inherit
        /// type, geometric transforms) and its keys as they are, for round trips to a DCC tool
        /// (default: baked into the subset every importer handles).
        #[arg(long, help_heading = "FBX output")]
        fbx_keep_pivots: bool,
        /// FBX and USD: split polygons into triangles (default: n-gons kept).
        #[arg(long, help_heading = "FBX output")]
        triangulate: bool,
        /// OBJ, .gltf, 3DA (and folders): do not copy the texture images the output names
        /// beside it (by default they are copied, embedded FBX images written out as files, and
        /// images that cannot be found reported).
        #[arg(long)]
        no_copy_textures: bool,
    },
    /// Render PNG images of the scene at a frame or a range of frames, as the Play3da viewer
    /// draws it (one light at the camera, default checker material; docs/render.md).
    Render(render::RenderArgs),
    /// Play the scene in the browser: serves a local page (WebGL2) showing keyscene's own
    /// evaluation, with timeline, outliner and warnings, and prints its URL (docs/view.md).
    View(view::ViewArgs),
}

/// What a subcommand failed with: a library error, or a usage problem found after parsing.
#[derive(Debug)]
pub enum CliError {
    /// From the library (reading, evaluating or writing).
    Lib(keyscene::Error),
    /// Anything else, already worded for the user.
    Msg(String),
}

impl From<keyscene::Error> for CliError {
    /// A posing error is worded after the flag that asked for it ([`flagged`]).
    fn from(e: keyscene::Error) -> Self {
        match e {
            keyscene::Error::Pose(p) => p.into(),
            e => CliError::Lib(e),
        }
    }
}

impl From<PoseError> for CliError {
    fn from(e: PoseError) -> Self {
        CliError::Msg(flagged(&e))
    }
}

/// A posing error after the flag that gave the value: `--animation 3: the scene has 2
/// animation(s)`, `--stack "Run": no animation has that name (the file has: "Walk")`,
/// `--bind-pose "x": the file has no such bind pose (it has: none)`.
fn flagged(e: &PoseError) -> String {
    match e {
        PoseError::NoSuchAnimation { index, .. } => format!("--animation {index}: {}", e.reason()),
        PoseError::NoAnimationNamed { name, .. } => {
            format!("--stack {}: {}", keyscene::quoted(name), e.reason())
        }
        PoseError::NoSuchBindPose { name, .. } => {
            format!("--bind-pose {}: {}", keyscene::quoted(name), e.reason())
        }
        e => e.to_string(),
    }
}

impl std::fmt::Display for CliError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CliError::Lib(e) => e.fmt(f),
            CliError::Msg(m) => f.write_str(m),
        }
    }
}

/// Turns transparent huge pages off for this process (Linux `prctl(PR_SET_THP_DISABLE)`, what
/// mimalloc does itself under `MIMALLOC_ALLOW_THP=0`). mimalloc asks for huge pages on its
/// 1 GiB arena, so each 2 MiB stretch it touches became 2 MiB of resident memory: converting
/// `maya_kenney_character_7700_binary.fbx` peaked at 30 MiB resident for about 3 MiB of live
/// heap, 12 MiB without (docs/benchmarks.md, run of 2026-12-02, branch h-perf; issue #16
/// goal 7). Best effort: an older kernel refuses the call and nothing changes.
///
/// It runs from `.init_array` (see [`NO_HUGE_PAGES`]), before the Rust runtime starts: the
/// runtime's first allocation (the main thread's info, in `lang_start`) comes before `main`,
/// and the flag only applies to pages touched after it is set. Called from `main`, the first
/// 2 MiB of the arena was already a huge page that the kernel had zeroed: `keyscene --version`
/// took 3.4 ms of CPU and 9.1 MB resident (docs/benchmarks.md, stop 27).
#[cfg(target_os = "linux")]
extern "C" fn no_huge_pages() {
    let (on, zero): (libc::c_ulong, libc::c_ulong) = (1, 0);
    // SAFETY: prctl with PR_SET_THP_DISABLE only sets a flag of the calling process; the
    // extra arguments are the unsigned longs the call takes. It allocates nothing and touches
    // no Rust state, so it may run before the runtime is set up.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, on, zero, zero, zero);
    }
}

/// The ELF start-up hook that calls [`no_huge_pages`]: the dynamic loader runs the functions
/// of `.init_array` before `main` (the Rust standard library uses the same section for its
/// own argument set-up on glibc).
#[cfg(target_os = "linux")]
#[used]
#[link_section = ".init_array"]
static NO_HUGE_PAGES: extern "C" fn() = no_huge_pages;

fn main() -> ExitCode {
    let matches = Cli::command().get_matches();
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(c) => c,
        Err(e) => e.exit(),
    };
    match run(cli, &matches) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("keyscene: error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli, matches: &ArgMatches) -> Result<(), CliError> {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match cli.command {
        Command::Inspect { file, raw: true, .. } => inspect::raw(&file, &mut out),
        Command::Inspect { file, json, raw: false } => {
            let scene = load(&file)?;
            inspect::run(&scene, &file, json, &mut out)
        }
        Command::Check { file } => check::run(&file, &mut out),
        Command::Sample { file, fps, animation, stack, .. } => {
            let sub = matches.subcommand_matches("sample").expect("sample was parsed");
            let times = sample::requested_times(sub);
            if times.is_empty() {
                return Err(CliError::Msg("sample: give at least one --frame or --time".into()));
            }
            let scene = load(&file)?;
            sample::run(&scene, &times, fps, &animation_choice(animation, stack), &mut out)
        }
        Command::Convert {
            input,
            output,
            frame,
            time,
            animation,
            stack,
            up,
            units,
            space,
            no_extrapolation,
            bind_pose,
            transform_skin,
            to,
            json,
            report,
            quiet,
            force,
            manifest,
            shard,
            gltf,
            fps,
            axes,
            fbx_version,
            fbx_ascii,
            fbx_keep_pivots,
            triangulate,
            no_copy_textures,
        } => {
            if input.is_dir() {
                let sub = matches.subcommand_matches("convert").expect("convert was parsed");
                let opts = batch::Options {
                    json,
                    quiet,
                    report,
                    shard,
                    copy_textures: !no_copy_textures,
                    compress: gltf.compress,
                    force,
                    manifest,
                };
                return batch_convert(&input, &output, to, &opts, sub, &mut out);
            }
            if !input.exists() {
                // Not "--to applies to converting a folder": the input is simply not there.
                return Err(CliError::Lib(keyscene::Error::Io {
                    path: input,
                    source: std::io::Error::new(
                        std::io::ErrorKind::NotFound,
                        "no such file or folder",
                    ),
                }));
            }
            if to.is_some() || shard.is_some() || manifest.is_some() {
                let what = if manifest.is_some() {
                    "--manifest"
                } else if shard.is_some() {
                    "--shard"
                } else {
                    "--to"
                };
                return Err(CliError::Msg(format!("{what} applies to converting a folder")));
            }
            let mut settings = Settings::default();
            settings.frame = frame;
            settings.time = time;
            settings.animation = animation;
            settings.stack = stack;
            settings.up = up;
            settings.units = units.map(|u| u.0);
            settings.space = space.map(|(a, u)| (a, u.0));
            settings.no_extrapolation = no_extrapolation;
            settings.bind_pose = bind_pose;
            settings.transform_skin = transform_skin;
            settings.embed = gltf.embed;
            settings.no_animation = gltf.no_animation;
            settings.resample_fps = gltf.resample_fps;
            settings.cubic_spline = gltf.cubic_spline;
            settings.compress = gltf.compress;
            settings.tolerance = gltf.tolerance;
            settings.visible_only = gltf.visible_only;
            settings.source_vertex_ids = gltf.source_vertex_ids;
            let sub = matches.subcommand_matches("convert").expect("convert was parsed");
            // Given on the command line, not clap's default of 4.
            settings.max_influences = (sub.value_source("max_influences")
                == Some(ValueSource::CommandLine))
            .then_some(gltf.max_influences);
            settings.fps = fps;
            settings.axes = axes;
            settings.fbx_version = fbx_version.and_then(|v| v.parse().ok());
            settings.fbx_ascii = fbx_ascii;
            settings.fbx_keep_pivots = fbx_keep_pivots;
            settings.triangulate = triangulate;
            settings.no_copy_textures = no_copy_textures;
            settings.force = force;
            let start = std::time::Instant::now();
            let done = keyscene::convert::convert_file(&input, &output, &settings)?;
            let read_warnings: Vec<String> =
                done.read_warnings.iter().map(ToString::to_string).collect();
            let converted = convert::Converted::of(&done.report);
            summary::single(
                &mut out,
                summary::Verbosity::of(quiet, report, json),
                &input,
                &output,
                &read_warnings,
                &converted.warnings,
                converted.report.as_deref(),
                start.elapsed().as_secs_f64(),
            )
        }
        Command::Render(args) => render::run(args),
        Command::View(args) => view::run(args),
    }
}

/// `convert DIR OUTDIR`: needs `--to` and takes none of the single-file options.
#[allow(clippy::too_many_arguments)]
fn batch_convert(
    input: &Path,
    output: &Path,
    to: Option<batch::Target>,
    opts: &batch::Options,
    sub: &ArgMatches,
    out: &mut dyn std::io::Write,
) -> Result<(), CliError> {
    let Some(to) = to else {
        return Err(CliError::Msg(format!(
            "{} is a folder: give --to {}",
            input.display(),
            keyscene::convert::OutputFormat::ALL
                .iter()
                .map(|f| &f.extension()[1..])
                .collect::<Vec<_>>()
                .join("|")
        )));
    };
    // Every `convert` option but the three a folder takes too.
    let single_file_options = Settings::NAMES
        .iter()
        .filter(|n| !matches!(**n, "no_copy_textures" | "force" | "compress"));
    let given = single_file_options
        .into_iter()
        .find(|id| sub.value_source(id) == Some(clap::parser::ValueSource::CommandLine));
    if let Some(id) = given {
        return Err(CliError::Msg(format!(
            "--{} applies to converting one file, not a folder",
            id.replace('_', "-")
        )));
    }
    if opts.compress && !matches!(to, batch::Target::Glb | batch::Target::Gltf) {
        return Err(CliError::Msg("--compress applies to --to glb or --to gltf".into()));
    }
    batch::run(input, output, to, opts, out)
}

/// Loads a scene and prints the reader's warnings to stderr.
/// A read error names the file (an I/O error already does).
fn load(path: &Path) -> Result<keyscene::scene::Scene, CliError> {
    let (scene, warnings) = load_quietly(path)?;
    for w in &warnings {
        eprintln!("keyscene: warning: {}: {w}", path.display());
    }
    Ok(scene)
}

/// [`load`] without printing: the scene and the reader's warnings as text.
fn load_quietly(path: &Path) -> Result<(keyscene::scene::Scene, Vec<String>), CliError> {
    let (scene, warnings) = keyscene::load(path).map_err(|e| match e {
        e @ keyscene::Error::Io { .. } => CliError::Lib(e),
        e => CliError::Msg(format!("{}: {e}", path.display())),
    })?;
    Ok((scene, warnings.iter().map(ToString::to_string).collect()))
}

/// `--units`: metres per unit, `None` for `unitless` (keep the file's unit).
#[derive(Debug, Clone, Copy)]
pub struct UnitsArg(keyscene::convert::Unit);

fn parse_units(s: &str) -> Result<UnitsArg, String> {
    keyscene::convert::parse_unit(s).map(UnitsArg)
}

fn parse_space(s: &str) -> Result<(Axis, UnitsArg), String> {
    keyscene::convert::parse_space(s).map(|(a, u)| (a, UnitsArg(u)))
}

/// `--animation I` / `--stack NAME` (clap refuses both) as the library's
/// [`AnimationChoice`]: the name, else the index, else the first animation.
pub fn animation_choice(index: Option<usize>, name: Option<String>) -> AnimationChoice {
    match (name, index) {
        (Some(name), _) => AnimationChoice::Named(name),
        (None, Some(i)) => AnimationChoice::Index(i),
        (None, None) => AnimationChoice::First,
    }
}

/// Writes `s` to stdout-like `out`. A closed pipe ends the output quietly (`Ok`); other
/// failures are errors.
pub fn emit(out: &mut dyn std::io::Write, s: &str) -> Result<(), CliError> {
    match out.write_all(s.as_bytes()).and_then(|()| out.flush()) {
        // The reader went away (`keyscene inspect … | head`): stop quietly, as `cat` does.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        r => r.map_err(|e| CliError::Msg(format!("writing output: {e}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// docs/cli.md and `--help` cannot drift apart (issue 36 §3): every subcommand is in the
    /// docs' synopsis and every option of every subcommand (its `--long` or `-short` form) is
    /// documented there.
    #[test]
    fn docs_cli_md_documents_every_subcommand_and_option() {
        let docs = include_str!("../../../docs/cli.md");
        let cli = Cli::command();
        let mut missing = Vec::new();
        for sub in cli.get_subcommands() {
            let name = sub.get_name();
            if !docs.contains(&format!("keyscene {name} ")) {
                missing.push(format!("subcommand {name}"));
            }
            for arg in sub.get_arguments() {
                let Some(long) = arg.get_long() else { continue };
                let short = arg.get_short().map(|c| format!("-{c} "));
                if !docs.contains(&format!("--{long}"))
                    && !short.as_ref().is_some_and(|s| docs.contains(s.as_str()))
                {
                    missing.push(format!("{name} --{long}"));
                }
            }
        }
        assert!(missing.is_empty(), "docs/cli.md does not document: {missing:?}");
    }
}

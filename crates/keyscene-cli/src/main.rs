//! The `keyscene` command-line tool: inspect, sample and convert animated 3D scenes.
//!
//! ```text
//! keyscene inspect FILE [--json]
//! keyscene sample FILE (--frame F | --time SECONDS)... [--fps N] [--animation I] --json
//! keyscene convert IN OUT [--frame F] [--animation I]
//! ```
//!
//! Reader warnings go to stderr as `keyscene: warning: …`; errors as `keyscene: error: …` (with
//! the file offset and chunk path the library reports) and exit status 1. Output files are
//! written atomically: on error no output file is left behind. The JSON shapes are documented in
//! `docs/cli.md`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{ArgMatches, CommandFactory, FromArgMatches, Parser, Subcommand};

/// mimalloc as the global allocator: a fifth of loading a 3DS file is allocating the scene's
/// many small vectors, and mimalloc makes that markedly cheaper than the system allocator
/// (docs/benchmarks.md: 13× lib3ds with it, 9.2× without).
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod check;
mod convert;
mod inspect;
mod sample;

/// Read, evaluate and convert animated 3D scenes (3DS, glTF).
#[derive(Debug, Parser)]
#[command(name = "keyscene", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Show a scene's format, counts, node tree, materials and animation tracks.
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
        /// Print JSON (the only output format; required so the output is explicit).
        #[arg(long, required = true)]
        json: bool,
    },
    /// Convert a scene; the output format follows OUT's extension (.obj, .gltf, .glb, .3da).
    Convert {
        /// The scene file to read.
        input: PathBuf,
        /// The file to write: .obj (with a .mtl beside it), .gltf, .glb, or .3da (with .mat
        /// material scripts beside it).
        output: PathBuf,
        /// Pose the scene at this frame. OBJ default: the geometry as stored, no animation
        /// evaluated.
        #[arg(long, value_name = "F", allow_negative_numbers = true)]
        frame: Option<f64>,
        /// The animation to pose with --frame (index; default 0).
        #[arg(long, value_name = "I")]
        animation: Option<usize>,
    },
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
    fn from(e: keyscene::Error) -> Self {
        CliError::Lib(e)
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
        Command::Sample { file, fps, animation, .. } => {
            let sub = matches.subcommand_matches("sample").expect("sample was parsed");
            let times = sample::requested_times(sub);
            if times.is_empty() {
                return Err(CliError::Msg("sample: give at least one --frame or --time".into()));
            }
            let scene = load(&file)?;
            sample::run(&scene, &times, fps, animation, &mut out)
        }
        Command::Convert { input, output, frame, animation } => {
            let scene = load(&input)?;
            convert::run(&scene, &output, frame, animation)
        }
    }
}

/// Loads a scene and prints the reader's warnings to stderr.
fn load(path: &Path) -> Result<keyscene::scene::Scene, CliError> {
    let (scene, warnings) = keyscene::load(path)?;
    for w in &warnings {
        eprintln!("keyscene: warning: {}: {w}", path.display());
    }
    Ok(scene)
}

/// The animation index to use: `requested` when given (an error when out of range), else 0
/// when the scene has an animation, else none (rest pose).
pub fn pick_animation(
    scene: &keyscene::scene::Scene,
    requested: Option<usize>,
) -> Result<Option<usize>, CliError> {
    match requested {
        Some(i) if i < scene.animations.len() => Ok(Some(i)),
        Some(i) => Err(CliError::Msg(format!(
            "--animation {i}: the scene has {} animation(s)",
            scene.animations.len()
        ))),
        None => Ok((!scene.animations.is_empty()).then_some(0)),
    }
}

/// Writes `s` to stdout-like `out`, mapping a closed pipe or other failure to an error.
pub fn emit(out: &mut dyn std::io::Write, s: &str) -> Result<(), CliError> {
    out.write_all(s.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| CliError::Msg(format!("writing output: {e}")))
}

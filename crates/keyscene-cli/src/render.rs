//! `keyscene render`: PNG images of a scene at one frame or a range of frames, the headless
//! Play3da (library: `keyscene::render`, conventions in `docs/render.md`).

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use keyscene::anim::{AnimationChoice, Pose, PoseOptions, Time};
use keyscene::render::{
    contact_sheet, find_camera, first_camera, range_bounds, scene_near, Image, Options, Renderer,
    View,
};
use keyscene::scene::Scene;

use crate::{animation_choice, CliError};

/// The most frames `--frames` may ask for.
pub const MAX_FRAMES: usize = 100_000;

/// `keyscene render`'s arguments.
#[derive(Debug, clap::Args)]
pub struct RenderArgs {
    /// The scene file.
    file: PathBuf,
    /// The PNG file to write; with --frames (without --sheet) a folder, created if missing,
    /// that receives frame_0000.png, frame_0001.png… in sequence order.
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    output: PathBuf,
    /// Render at this frame of the file's clock. Default: the animation's first frame (0
    /// without animation).
    #[arg(long, value_name = "F", allow_negative_numbers = true,
          conflicts_with_all = ["time", "frames"])]
    frame: Option<f64>,
    /// Render at this time in seconds.
    #[arg(long, value_name = "SECONDS", allow_negative_numbers = true, conflicts_with = "frames")]
    time: Option<f64>,
    /// Render frames A, A+STEP, … up to B (inclusive; STEP defaults to 1), e.g. 0..100:5.
    #[arg(long, value_name = "A..B[:STEP]", value_parser = parse_frames, allow_hyphen_values = true)]
    frames: Option<(f64, f64, f64)>,
    /// With --frames: write one contact sheet (frames in rows, left to right) to OUT instead
    /// of a PNG sequence.
    #[arg(long, requires = "frames")]
    sheet: bool,
    /// Image size in pixels, WIDTHxHEIGHT.
    #[arg(long, value_name = "WxH", value_parser = parse_size, default_value = "800x600")]
    size: (u32, u32),
    /// The camera: a camera node's name, or `auto` for a camera framing the visible geometry
    /// over the whole animation range and every rendered frame (docs/render.md). Default: the
    /// scene's first camera when it has one, else `auto`.
    #[arg(long, value_name = "NAME|auto")]
    camera: Option<String>,
    /// Replace existing PNG files. Without it an existing OUT (or frame file) is an error, as
    /// for `convert`; the scene file and the files it reads are never replaced.
    #[arg(long)]
    force: bool,
    /// Draw the bounding box of the visible geometry (yellow lines).
    #[arg(long)]
    bbox: bool,
    /// Draw the bounding sphere of the visible geometry (three cyan circles).
    #[arg(long)]
    bsphere: bool,
    /// Draw polygon outlines instead of filled polygons.
    #[arg(long)]
    wireframe: bool,
    /// Background colour, #rrggbb.
    #[arg(long, value_name = "#rrggbb", value_parser = parse_color, default_value = "#333333")]
    background: [u8; 3],
    /// The animation to render (index; default 0).
    #[arg(long, value_name = "I")]
    animation: Option<usize>,
    /// The animation to render, by name (FBX: the AnimationStack).
    #[arg(long, value_name = "NAME", conflicts_with = "animation")]
    stack: Option<String>,
}

/// Runs `keyscene render`.
pub fn run(args: RenderArgs) -> Result<(), CliError> {
    let scene = crate::load(&args.file)?;
    let choice = animation_choice(args.animation, args.stack.clone());
    let animation = scene.choose_animation(&choice)?;
    let times = times(&scene, animation, &args)?;
    let opts = Options {
        width: args.size.0,
        height: args.size.1,
        background: args.background,
        bbox: args.bbox,
        bsphere: args.bsphere,
        wireframe: args.wireframe,
    };
    if args.sheet {
        check_sheet_size(times.len(), &opts)?;
    }
    let camera_node = match args.camera.as_deref() {
        None => first_camera(&scene),
        Some("auto") => None,
        Some(name) => Some(find_camera(&scene, name)?),
    };
    let camera_name = camera_node.map_or("auto".to_string(), |n| scene.nodes[n].name.clone());
    // A first pass for the box round everything the animation shows (poses are not kept: a
    // long sequence of a large scene would not fit in memory).
    let pose_opts = PoseOptions::default().animation(AnimationChoice::from(animation));
    let bounds = range_bounds(&scene, &pose_opts, &times)?;
    if bounds.is_none() {
        eprintln!("keyscene: warning: {}: no visible geometry to render", args.file.display());
    }
    let (min, max) = bounds.unwrap_or((glam::DVec3::splat(-1.0), glam::DVec3::splat(1.0)));
    let auto = View::auto(min, max, scene.meta.axes, opts.aspect());
    let near = scene_near(bounds);
    let base_dir =
        args.file.parent().map(|p| if p.as_os_str().is_empty() { Path::new(".") } else { p });
    let mut renderer = Renderer::new(&scene, base_dir);
    let sequence = args.frames.is_some() && !args.sheet;
    if sequence {
        std::fs::create_dir_all(&args.output).map_err(|e| {
            CliError::Msg(format!("{}: cannot create the folder: {e}", args.output.display()))
        })?;
    }
    // Every file this run writes, refused before anything is drawn when it is a source or
    // exists without --force (the library's one output rule, as for `convert`).
    let targets: Vec<PathBuf> = if sequence {
        (0..times.len()).map(|k| frame_file(&args.output, k)).collect()
    } else {
        vec![args.output.clone()]
    };
    let mut inputs = scene.source_files();
    inputs.push(args.file.clone());
    let source = keyscene::output::source_name(&args.file);
    for target in &targets {
        keyscene::output::refuse_input(target, &inputs)?;
        keyscene::output::claim_output(target, &source, args.force)?;
    }
    let bar = progress_bar(times.len());
    let mut sheet_frames = Vec::new();
    for (k, &time) in times.iter().enumerate() {
        let pose = &pose_at(&scene, animation, time)?;
        let view = match camera_node {
            None => auto,
            Some(node) => {
                View::from_camera(&scene, pose, node, opts.aspect(), near).ok_or_else(|| {
                    CliError::Msg(format!(
                        "camera \"{camera_name}\": the camera's matrix is degenerate at frame {} \
                         (--camera auto renders through the automatic camera)",
                        pose.frame
                    ))
                })?
            }
        };
        let image = renderer.render(pose, &view, &opts).map_err(keyscene::Error::from)?;
        for w in renderer.take_warnings() {
            bar.suspend(|| eprintln!("keyscene: warning: {}: {w}", args.file.display()));
        }
        if args.sheet {
            let mut image = image;
            image.draw_label(
                &frame_label(pose.frame),
                LABEL_MARGIN,
                LABEL_MARGIN,
                label_scale(&opts),
            );
            sheet_frames.push(image);
        } else if sequence {
            image.save_png(&frame_file(&args.output, k))?;
        } else {
            image.save_png(&args.output)?;
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    if args.sheet {
        let columns = sheet_columns(sheet_frames.len());
        let sheet: Image = contact_sheet(&sheet_frames, columns, SHEET_GAP, args.background)
            .ok_or_else(|| CliError::Msg("--sheet: no frames to put on the sheet".into()))?;
        sheet.save_png(&args.output)?;
    }
    Ok(())
}

/// Frame `k` of a sequence in the folder `dir`: `frame_0000.png`, `frame_0001.png`, …
fn frame_file(dir: &Path, k: usize) -> PathBuf {
    dir.join(format!("frame_{k:04}.png"))
}

/// The instants to render: `--frames`, else `--time`, else `--frame`, else the animation's
/// first frame.
fn times(
    scene: &Scene,
    animation: Option<usize>,
    args: &RenderArgs,
) -> Result<Vec<Time>, CliError> {
    if let Some((a, b, step)) = args.frames {
        let n = ((b - a) / step + 1e-9).floor() + 1.0;
        if n.is_nan() || n < 1.0 {
            return Err(CliError::Msg(format!("--frames {a}..{b}: the range is empty")));
        }
        if n > MAX_FRAMES as f64 {
            return Err(CliError::Msg(format!(
                "--frames {a}..{b}:{step}: {n} frames, more than the {MAX_FRAMES} allowed"
            )));
        }
        return Ok((0..n as usize).map(|k| Time::Frame(a + step * k as f64)).collect());
    }
    if let Some(t) = args.time {
        return Ok(vec![Time::Seconds(t)]);
    }
    let first = animation.and_then(|i| scene.animations.get(i)).map_or(0.0, |a| a.frame_range.0);
    Ok(vec![Time::Frame(args.frame.unwrap_or(first))])
}

/// The scene posed at `time` of animation `animation` (an index
/// [`Scene::choose_animation`] gave, or `None`: the rest pose), as [`Scene::pose`] poses it.
fn pose_at(scene: &Scene, animation: Option<usize>, time: Time) -> Result<Pose, CliError> {
    let opts = PoseOptions::default().animation(AnimationChoice::from(animation)).at(time);
    Ok(scene.pose(&opts)?.0)
}

/// A contact-sheet cell's label: its frame in the file's clock, shortest form that reads back
/// (`12`, `12.5`).
fn frame_label(frame: f64) -> String {
    format!("{frame}")
}

/// The label's distance from the cell's top-left corner, pixels.
const LABEL_MARGIN: u32 = 4;

/// The label's font pixel size: 1 image pixel per 200 of the cell's height, at least 1.
fn label_scale(opts: &Options) -> u32 {
    (opts.height / 200).max(1)
}

/// The contact sheet's layout: ⌈√n⌉ columns, [`SHEET_GAP`]-pixel gaps.
fn sheet_columns(n: usize) -> u32 {
    (n as f64).sqrt().ceil() as u32
}

/// The gap between and round the frames of a contact sheet, pixels.
const SHEET_GAP: u32 = 2;

/// The most pixels a contact sheet may have (8192², 192 MiB as RGB).
const MAX_SHEET_PIXELS: u64 = 8192 * 8192;

/// Refuses a contact sheet of `n` frames that would exceed [`MAX_SHEET_PIXELS`], before any
/// frame is rendered (every frame is kept in memory until the sheet is written).
fn check_sheet_size(n: usize, opts: &Options) -> Result<(), CliError> {
    let cols = u64::from(sheet_columns(n));
    let rows = (n as u64).div_ceil(cols.max(1));
    let g = u64::from(SHEET_GAP);
    let w = cols * (u64::from(opts.width) + g) + g;
    let h = rows * (u64::from(opts.height) + g) + g;
    if w * h > MAX_SHEET_PIXELS {
        return Err(CliError::Msg(format!(
            "--sheet: {n} frames of {}x{} make a {w}x{h} sheet, more than {MAX_SHEET_PIXELS} \
             pixels; use fewer frames or a smaller --size",
            opts.width, opts.height
        )));
    }
    Ok(())
}

/// A progress bar on stderr when it is a terminal and there is more than one frame; hidden
/// otherwise.
fn progress_bar(n: usize) -> indicatif::ProgressBar {
    if n > 1 && std::io::stderr().is_terminal() {
        let bar = indicatif::ProgressBar::new(n as u64);
        if let Ok(style) =
            indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} frames {eta}")
        {
            bar.set_style(style);
        }
        bar
    } else {
        indicatif::ProgressBar::hidden()
    }
}

/// `A..B[:STEP]`.
fn parse_frames(s: &str) -> Result<(f64, f64, f64), String> {
    let err = || "expected A..B or A..B:STEP, e.g. 0..100:5".to_string();
    let (range, step) = match s.rsplit_once(':') {
        Some((r, st)) => (r, st.trim().parse::<f64>().map_err(|_| err())?),
        None => (s, 1.0),
    };
    let (a, b) = range.split_once("..").ok_or_else(err)?;
    let (a, b) =
        (a.trim().parse::<f64>().map_err(|_| err())?, b.trim().parse::<f64>().map_err(|_| err())?);
    if !(a.is_finite() && b.is_finite() && step.is_finite() && step > 0.0) {
        return Err("A and B must be numbers and STEP a positive number".into());
    }
    Ok((a, b, step))
}

/// `WIDTHxHEIGHT`.
fn parse_size(s: &str) -> Result<(u32, u32), String> {
    let (w, h) = s.split_once(['x', 'X']).ok_or("expected WIDTHxHEIGHT, e.g. 800x600")?;
    let max = keyscene::render::MAX_SIZE;
    let dim = |v: &str| {
        v.trim().parse::<u32>().ok().filter(|&d| (1..=max).contains(&d)).ok_or_else(|| {
            format!("{}: expected a whole number of pixels, 1…{max}", keyscene::quoted(v))
        })
    };
    Ok((dim(w)?, dim(h)?))
}

/// `#rrggbb` (the `#` optional).
fn parse_color(s: &str) -> Result<[u8; 3], String> {
    let hex = s.strip_prefix('#').unwrap_or(s);
    if hex.len() != 6 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err("expected #rrggbb, e.g. #333333".into());
    }
    let byte = |i: usize| u8::from_str_radix(&hex[i..i + 2], 16).map_err(|e| e.to_string());
    Ok([byte(0)?, byte(2)?, byte(4)?])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_ranges_sizes_and_colours_parse() {
        assert_eq!(parse_frames("0..100:5"), Ok((0.0, 100.0, 5.0)));
        assert_eq!(parse_frames("-10..10"), Ok((-10.0, 10.0, 1.0)));
        assert!(parse_frames("0..10:0").is_err());
        assert!(parse_frames("0-10").is_err());
        assert_eq!(parse_size("160x120"), Ok((160, 120)));
        assert!(parse_size("0x120").is_err());
        assert!(parse_size("99999x1").is_err());
        assert_eq!(parse_color("#ff8000"), Ok([255, 128, 0]));
        assert_eq!(parse_color("102030"), Ok([0x10, 0x20, 0x30]));
        assert!(parse_color("#fff").is_err());
    }
}

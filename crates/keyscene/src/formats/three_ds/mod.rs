//! Autodesk 3D Studio `.3ds` and project `.prj` files (issue #2 §3–4).
//!
//! Two layers, each usable alone:
//! - [`chunks`]: bytes → chunks → [`chunks::File3ds`], plain structs with the values as stored
//!   (never imports [`crate::scene`]).
//! - [`import`]: [`chunks::File3ds`] → [`Scene`], the keyframer as one
//!   [`crate::anim::Animation`] at [`crate::anim::THREE_DS_FPS`] that evaluates as lib3ds 1.3
//!   does (rules in [`crate::anim::tcb`]); a folder of passes, one file per thing it builds.
//!
//! - [`write`](mod@write) and [`export`]: the writer, [`Scene`] → chunks → bytes (issue #14 §2).
//!
//! Coordinates stay as stored: Z up, right-handed, unitless (`MASTER_SCALE` is kept as a
//! property).

pub mod chunks;
mod error;
pub mod export;
pub mod import;
pub mod write;

pub use error::Error;

use crate::scene::{Scene, Warning};
use crate::ReadOptions;

/// Reads a 3DS/PRJ file into a scene, returning the problems it survived as warnings.
///
/// Errors say where (byte offset and chunk path) and what was expected; a file that does not
/// start with a 3DS root chunk gives [`Error::NotThreeDs`]. Counts are checked against
/// `opts.limits` and the bytes present before anything is allocated.
pub fn read(bytes: &[u8], opts: &ReadOptions) -> Result<(Scene, Vec<Warning>), Error> {
    let mut ctx = chunks::Ctx::for_file(opts.limits, bytes.len() as u64);
    let file = chunks::decode(bytes, &mut ctx)?;
    let mut warnings = ctx.warnings;
    let scene = import::import(&file, opts, &mut warnings);
    Ok((scene, warnings))
}

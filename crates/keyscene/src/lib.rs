//! keyscene: read, evaluate and convert animated 3D scenes.
//!
//! Layers, bottom up:
//! - [`formats`]: one module per file format, each with a low-level layer (chunks, records,
//!   structs) usable alone, and a bridge to and from the scene model. A format never imports
//!   another format; conversions go through [`scene::Scene`].
//! - [`scene`]: the format-neutral model (nodes, meshes, materials, cameras, lights, skins).
//! - [`anim`]: tracks, keys and the evaluator that poses a scene at a time.
//! - [`limits`]: the bounds every reader checks before allocating.
//! - [`output`]: files writers put beside an output (material scripts, texture images) and
//!   the rule that they never silently replace another source's files.
//! - [`render`] (feature `render`): headless preview images of a posed scene.
//!
//! ```no_run
//! let (scene, warnings) = keyscene::load("examples/FLY.3DS".as_ref())?;
//! let pose = scene.evaluate(Some(0), keyscene::anim::Time::Frame(10.0));
//! # Ok::<(), keyscene::Error>(())
//! ```

#![warn(missing_docs)]

pub mod anim;
pub mod convert;
pub mod formats;
pub mod limits;
pub mod output;
#[cfg(feature = "render")]
pub mod render;
pub mod scene;

mod error;
mod io;
mod load;

pub use convert::convert;
pub use error::Error;
pub use io::{write_atomically, FileFormat, ReadOptions};
pub use load::{load, load_bytes};

//! keyscene: read, evaluate and convert animated 3D scenes — 3DS/PRJ, FBX, 3DA, glTF/GLB in,
//! glTF/GLB, 3DA, OBJ, FBX out — through one format-neutral [`scene::Scene`].
//!
//! # Where to start
//! | to … | call |
//! |---|---|
//! | read a file | [`load`] (or [`load_bytes`] with [`ReadOptions`]) → `(Scene, warnings)` |
//! | look at it | [`scene::Scene`]'s fields: `nodes`, `meshes`, `materials`, `animations`, … |
//! | pose it at a time | [`scene::Scene::pose`] with [`anim::PoseOptions`] (or [`scene::Scene::evaluate`]) |
//! | write it | [`convert()`](fn@convert) with [`convert::ConvertOptions`] (the writer from the extension) |
//! | render a preview | [`render::Renderer`] (feature `render`) |
//!
//! The `keyscene` command line calls exactly these (docs/api.md lists every function it
//! uses), so `keyscene sample`, `convert` and `render` print and write what the library gives.
//!
//! # The four common tasks
//! Load and inspect (the bundled `examples/FLY.3DS`, Second Reality's fly-by; lib3ds 1.3
//! reads 3 meshes and a 0–600 frame segment from it):
//! ```
//! let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/FLY.3DS");
//! let (scene, warnings) = keyscene::load(path.as_ref())?;
//! assert!(warnings.is_empty());
//! assert_eq!(scene.meshes.len(), 3);
//! assert_eq!(scene.animations[0].frame_range, (0.0, 600.0));
//! for node in &scene.nodes {
//!     println!("{} ({}), parent {:?}", node.name, node.kind.name(), node.parent);
//! }
//! # Ok::<(), keyscene::Error>(())
//! ```
//! Evaluate at a time (lib3ds puts vertex 0 of `enemy` at (−87.42739, 97.29549, −0.5763435)
//! at frame 200):
//! ```
//! use keyscene::anim::{PoseOptions, Time};
//! # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/FLY.3DS");
//! # let (scene, _) = keyscene::load(path.as_ref())?;
//! let (pose, _warnings) = scene.pose(&PoseOptions::default().at(Time::Frame(200.0)))?;
//! let enemy = scene.nodes.iter().position(|n| n.name == "enemy").unwrap();
//! let v0 = pose.world_positions(&scene, enemy)[0];
//! let lib3ds = glam::DVec3::new(-87.42739, 97.29549, -0.5763435);
//! assert!((v0 - lib3ds).length() < 1e-3, "{v0}");
//! # Ok::<(), keyscene::Error>(())
//! ```
//! Convert a file (the writer follows the extension: `.glb`, `.gltf`, `.3da`, `.obj`, `.fbx`):
//! ```
//! use keyscene::convert::ConvertOptions;
//! # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/FLY.3DS");
//! let (scene, _) = keyscene::load(path.as_ref())?;
//! let dir = tempfile::tempdir().unwrap();
//! let out = dir.path().join("fly.glb");
//! let report = keyscene::convert(&scene, &out, &ConvertOptions::default())?;
//! for w in &report.warnings {
//!     eprintln!("{w}");
//! }
//! // A GLB starts with the magic `glTF` and version 2 (glTF 2.0 spec, "Binary glTF Layout").
//! let bytes = std::fs::read(&out).unwrap();
//! assert_eq!(&bytes[..8], b"glTF\x02\0\0\0");
//! # Ok::<(), keyscene::Error>(())
//! ```
//! Write a scene built in code (one triangle; OBJ numbers its vertices from 1):
//! ```
//! use keyscene::scene::{Mesh, Node, NodeKind, Scene};
//! use glam::DVec3;
//! let mut scene = Scene::default();
//! scene.meshes.push(Mesh {
//!     name: "tri".into(),
//!     positions: vec![DVec3::ZERO, DVec3::X, DVec3::Y],
//!     polygon_starts: vec![0, 3],
//!     corner_vertices: vec![0, 1, 2],
//!     ..Mesh::default()
//! });
//! let mut node = Node::new("Tri", NodeKind::Mesh);
//! node.mesh = Some(0);
//! scene.nodes.push(node);
//! scene.attach(0, None);
//! let dir = tempfile::tempdir().unwrap();
//! let out = dir.path().join("tri.obj");
//! keyscene::convert(&scene, &out, &Default::default())?;
//! let obj = std::fs::read_to_string(&out).unwrap();
//! assert_eq!(obj.lines().filter(|l| l.starts_with("v ")).count(), 3);
//! assert!(obj.lines().any(|l| l.starts_with("f ") && l.split_whitespace().count() == 4));
//! # Ok::<(), keyscene::Error>(())
//! ```
//!
//! # Layers, bottom up
//! - [`limits`], [`Error`]: the bounds every reader checks before allocating; the error type.
//! - [`scene`]: the format-neutral model (nodes, meshes, materials, cameras, lights, skins).
//! - [`anim`]: tracks, keys and the evaluator that poses a scene at a time ([`anim::PoseOptions`]).
//! - [`formats`]: one module per file format, each with a low-level layer (chunks, records,
//!   structs) usable alone, and a bridge to and from the scene model. A format never imports
//!   another format; conversions go through [`scene::Scene`].
//! - [`output`]: files writers put beside an output (material scripts, texture images) and
//!   the rule that they never silently replace another source's files.
//! - [`convert`](mod@convert): one entry point over every writer.
//! - [`render`] (feature `render`): headless preview images of a posed scene.
//!
//! Option structs and enums that will grow ([`ReadOptions`], [`convert::ConvertOptions`],
//! [`anim::PoseOptions`], [`FileFormat`], [`Error`], the writers' options) are
//! `#[non_exhaustive]`: build them from `Default` and set fields or use their setters.

#![warn(missing_docs)]

pub mod anim;
#[cfg(feature = "batch")]
pub mod batch;
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
mod quoting;

pub use convert::convert;
pub use error::{Error, ErrorKind};
pub use io::{write_atomically, write_atomically_seekable, FileFormat, ReadOptions};
pub use load::{load, load_bytes, load_with};
pub use quoting::{quoted, Quoted};

//! `keyscene convert`: writes a scene in the format OUT's extension names.

use std::path::Path;

use keyscene::anim::Time;
use keyscene::scene::Scene;

use crate::{pick_animation, CliError};

/// Writes `scene` to `output`: `.obj` (plus `.mtl`), `.gltf` (plus `.bin` and images), `.glb`,
/// or `.3da` (plus one `.mat` script per material; what was converted, baked, resampled and
/// dropped is printed).
/// OBJ: `frame` poses the scene at that frame of animation `animation` (default 0), `None` writes
/// the geometry as stored. glTF keeps the whole animation, so `frame` is refused there.
/// Conversion warnings go to stderr.
pub fn run(
    scene: &Scene,
    output: &Path,
    frame: Option<f64>,
    animation: Option<usize>,
) -> Result<(), CliError> {
    let ext = output
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .unwrap_or_default();
    let animation = pick_animation(scene, animation)?;
    match ext.as_str() {
        "obj" => {
            let pose = frame.map(|f| scene.evaluate(animation, Time::Frame(f)));
            Ok(keyscene::formats::obj::save(scene, pose.as_ref(), output)?)
        }
        "gltf" | "glb" => {
            if frame.is_some() {
                return Err(CliError::Msg(
                    "--frame applies to OBJ output; glTF keeps the whole animation".into(),
                ));
            }
            let opts = keyscene::formats::gltf::WriteOptions::default();
            let warnings = keyscene::formats::gltf::save(scene, output, &opts)?;
            for w in &warnings {
                eprintln!("keyscene: warning: {}: {w}", output.display());
            }
            Ok(())
        }
        "3da" => {
            if frame.is_some() {
                return Err(CliError::Msg(
                    "--frame applies to OBJ output; 3DA keeps the whole animation".into(),
                ));
            }
            let opts = keyscene::formats::three_da::ExportOptions {
                animation,
                ..keyscene::formats::three_da::ExportOptions::default()
            };
            let report = keyscene::formats::three_da::save(scene, output, &opts)?;
            println!("{report}");
            Ok(())
        }
        _ => Err(CliError::Msg(format!(
            "{}: unknown output format (use .obj, .gltf, .glb or .3da)",
            output.display()
        ))),
    }
}

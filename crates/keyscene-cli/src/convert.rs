//! `keyscene convert`: writes a scene in the format OUT's extension names.

use std::path::Path;

use keyscene::anim::Time;
use keyscene::scene::Scene;

use crate::{pick_animation, CliError};

/// Writes `scene` to `output`: `.obj` (plus `.mtl`), `.gltf` or `.glb`. `frame`: pose the scene
/// at that frame of animation `animation` (default 0); `None` writes OBJ geometry as stored.
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
    let pose = frame.map(|f| scene.evaluate(animation, Time::Frame(f)));
    match ext.as_str() {
        "obj" => Ok(keyscene::formats::obj::save(scene, pose.as_ref(), output)?),
        "gltf" | "glb" => Err(CliError::Msg(format!(
            "{}: glTF output is not available in this build yet",
            output.display()
        ))),
        _ => Err(CliError::Msg(format!(
            "{}: unknown output format (use .obj, .gltf or .glb)",
            output.display()
        ))),
    }
}

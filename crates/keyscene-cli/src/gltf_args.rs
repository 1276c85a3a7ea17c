//! `keyscene convert … .gltf|.glb` options, named as FBX2glTF and gltf-transform users expect
//! (issue #5 §1). `--up`, `--units` and `--stack`/`--animation` are shared with the other
//! outputs and handed in by `convert`.

use keyscene::formats::gltf::WriteOptions;
use keyscene::scene::{Axis, AxisSystem};

/// glTF-only options of `keyscene convert`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct GltfArgs {
    /// glTF: write a self-contained .gltf (buffer and images as base64 data URIs) instead of a
    /// .gltf with a .bin and image files beside it. FBX: put every texture image found beside
    /// the source into the file (`Video` › `Content`; images the source embeds always are).
    #[arg(long)]
    pub embed: bool,
    /// glTF: leave animations out (the scene at its rest pose: the first animation's first frame).
    #[arg(long)]
    pub no_animation: bool,
    /// glTF: resample every animation channel at N samples per second (default: keep source
    /// keys where glTF holds them exactly, resample the rest at one sample per source frame).
    #[arg(long, value_name = "N")]
    pub resample_fps: Option<f64>,
    /// glTF: keep up to N joint influences per skinned vertex (rounded up to a multiple of 4;
    /// one JOINTS_n/WEIGHTS_n pair per 4). Default 4, what every viewer supports.
    #[arg(long, value_name = "N", default_value_t = 4)]
    pub max_influences: usize,
}

impl GltfArgs {
    /// The writer options: these flags and `up`/`metres_per_unit` (`--up`/`--units`: the
    /// source's own axes and unit when the file states them wrongly or not at all; the output
    /// is always glTF's +Y up, metres). `--stack`/`--animation` reach the writer through
    /// [`ConvertOptions::animation`](keyscene::convert::ConvertOptions::animation). Fails on a
    /// resample rate that is not a positive number.
    pub fn write_options(
        &self,
        up: Option<Axis>,
        metres_per_unit: Option<f64>,
    ) -> Result<WriteOptions, String> {
        if let Some(r) = self.resample_fps {
            if !(r.is_finite() && r > 0.0) {
                return Err(format!("--resample-fps {r}: expected a positive number"));
            }
        }
        if self.max_influences == 0 {
            return Err("--max-influences 0: expected at least 1".into());
        }
        let mut o = WriteOptions::default();
        o.embed = self.embed;
        o.animations = !self.no_animation;
        o.resample_fps = self.resample_fps;
        o.max_influences = self.max_influences;
        o.source_axes = up.map(AxisSystem::right_handed_with_up);
        o.source_metres_per_unit = metres_per_unit;
        Ok(o)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_map_to_writer_options() {
        let args = GltfArgs {
            embed: true,
            no_animation: true,
            resample_fps: Some(60.0),
            max_influences: 8,
        };
        let o = args.write_options(Some(Axis::PosZ), Some(0.01)).unwrap();
        assert!(o.embed && !o.animations);
        assert_eq!((o.resample_fps, o.max_influences, o.only_animation), (Some(60.0), 8, None));
        assert_eq!(o.source_axes, Some(keyscene::scene::AxisSystem::Z_UP_RIGHT_HANDED));
        assert_eq!(o.source_metres_per_unit, Some(0.01));
        let bad = GltfArgs { resample_fps: Some(0.0), ..args };
        assert!(bad.write_options(None, None).is_err());
    }
}

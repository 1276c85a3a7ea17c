//! `keyscene convert … .gltf|.glb` options, named as FBX2glTF and gltf-transform users expect
//! (issue #5 §1). `--up`, `--units` and `--stack`/`--animation` are shared with the other
//! outputs. They reach the writer through the library's
//! [`keyscene::convert::Settings`], which checks their values.

/// glTF-only options of `keyscene convert`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct GltfArgs {
    /// glTF: write a self-contained .gltf (buffer and images as base64 data URIs) instead of a
    /// .gltf with a .bin and image files beside it. FBX: put every texture image found beside
    /// the source into the file (`Video` › `Content`; images the source embeds always are).
    #[arg(long, help_heading = "glTF output")]
    pub embed: bool,
    /// glTF: leave animations out (the scene at its rest pose: the first animation's first frame).
    #[arg(long, help_heading = "glTF output")]
    pub no_animation: bool,
    /// glTF: resample every animation channel at N samples per second (default: keep source
    /// keys where glTF holds them exactly, resample the rest at one sample per source frame).
    #[arg(long, value_name = "N", help_heading = "glTF output")]
    pub resample_fps: Option<f64>,
    /// glTF: keep source curves that glTF's CUBICSPLINE holds exactly (Bézier/Hermite keys) as
    /// CUBICSPLINE samplers. Default: LINEAR/STEP keys only, those curves resampled within
    /// 1e-4 of the scene size, which every client plays right (Blender's importer mangles
    /// CUBICSPLINE tangents).
    #[arg(long, help_heading = "glTF output")]
    pub cubic_spline: bool,
    /// glTF: a web-ready file in one step: vertex attributes quantized (KHR_mesh_quantization;
    /// positions within 1e-4 of the scene size) and vertex, index, skin and animation data
    /// compressed with meshopt (EXT_meshopt_compression). Both extensions are required: a
    /// client needs a meshopt decoder (three.js: GLTFLoader.setMeshoptDecoder). Also with a
    /// folder and --to glb|gltf.
    #[arg(long, help_heading = "glTF output")]
    pub compress: bool,
    /// glTF: keep up to N joint influences per skinned vertex (rounded up to a multiple of 4;
    /// one JOINTS_n/WEIGHTS_n pair per 4). Default 4, what every viewer supports.
    #[arg(long, value_name = "N", default_value_t = 4, help_heading = "glTF output")]
    pub max_influences: usize,
    /// glTF and USD: the animation error bound R, relative to the scene size (default 1e-4, in
    /// (0, 1]). Resampled channels (USD: time samples) stay within it at every frame and
    /// between frames, and glTF keys that LINEAR interpolation reproduces within a tenth of it
    /// are dropped: a larger R writes fewer keys (a smaller file, sooner) that follow the
    /// source less closely. Source keys glTF holds exactly are kept.
    #[arg(long, value_name = "R", help_heading = "glTF output")]
    pub tolerance: Option<f64>,
    /// glTF: leave out the mesh of every node hidden throughout (at rest and in every written
    /// animation), as Blender's "Visible Objects" and FBX2glTF do; the node stays. Default:
    /// hidden meshes are written hidden (KHR_node_visibility).
    #[arg(long, help_heading = "glTF output")]
    pub visible_only: bool,
    /// glTF: write the _KEYSCENE_VERTEX attribute (each vertex's index in the source mesh, 4
    /// bytes a vertex), from which keyscene's reader restores the source vertex order. Default:
    /// not written (no other client reads it).
    #[arg(long, help_heading = "glTF output")]
    pub source_vertex_ids: bool,
}

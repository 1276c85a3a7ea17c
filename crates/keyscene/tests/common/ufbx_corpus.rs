//! The FBX corpus as the tests that compare with the `ufbx` crate walk it.

use std::path::PathBuf;

use glam::DMat4;

/// One corpus FBX file.
pub struct FbxFile {
    /// The file's path.
    pub path: PathBuf,
    /// The corpus's `fbx/` folder.
    pub dir: PathBuf,
    /// The path below `fbx/`, with `/` separators (as MANIFEST.md names files).
    pub rel: String,
    /// Whether the `ufbx` crate loads the file (default options).
    pub ufbx_loads: bool,
}

/// Every `.fbx` under the corpus's `fbx/` folder, sorted; empty without a corpus.
pub fn fbx_files(corpus: &Option<PathBuf>) -> Vec<FbxFile> {
    let Some(dir) = corpus.as_ref().map(|c| c.join("fbx")) else { return Vec::new() };
    super::files_with_ext(&dir, &["fbx"])
        .into_iter()
        .map(|path| {
            let rel = path.strip_prefix(&dir).unwrap_or(&path).to_string_lossy().replace('\\', "/");
            let ufbx_loads = std::fs::read(&path)
                .is_ok_and(|b| ufbx::load_memory(&b, ufbx::LoadOpts::default()).is_ok());
            FbxFile { path, dir: dir.clone(), rel, ufbx_loads }
        })
        .collect()
}

/// The scale the ufbx comparisons' tolerances are relative to: the largest finite
/// translation component of the given world matrices, at least 1.
pub fn scene_size<'a>(worlds: impl IntoIterator<Item = &'a DMat4>) -> f64 {
    worlds
        .into_iter()
        .map(|m| m.col(3).truncate().abs().max_element())
        .filter(|v| v.is_finite())
        .fold(1.0f64, f64::max)
}

/// Largest difference of the 3×3 parts relative to `want`'s largest entry (at least 1), and of
/// the translations relative to `size`.
pub fn difference(got: DMat4, want: DMat4, size: f64) -> (f64, f64) {
    let mut linear = 0.0f64;
    let mut scale = 1.0f64;
    for c in 0..3 {
        for r in 0..3 {
            linear = linear.max((got.col(c)[r] - want.col(c)[r]).abs());
            scale = scale.max(want.col(c)[r].abs());
        }
    }
    let t = (got.col(3) - want.col(3)).truncate().abs().max_element();
    (linear / scale, t / size)
}

/// `path` loaded by keyscene (`load_bytes`, default options) and by the `ufbx` crate (default
/// `LoadOpts`), from the same bytes; the error says which side failed.
pub fn load_both(
    path: &std::path::Path,
) -> Result<(keyscene::scene::Scene, ufbx::SceneRoot), String> {
    load_both_with(path, ufbx::LoadOpts::default())
}

/// [`load_both`] with ufbx loading by `opts`.
#[allow(dead_code)] // not every test binary that includes `common` calls it
pub fn load_both_with(
    path: &std::path::Path,
    opts: ufbx::LoadOpts<'static>,
) -> Result<(keyscene::scene::Scene, ufbx::SceneRoot), String> {
    let bytes = std::fs::read(path).map_err(|e| e.to_string())?;
    let theirs =
        ufbx::load_memory(&bytes, opts).map_err(|e| format!("ufbx: {:?}", e.description))?;
    let (scene, _) = keyscene::load_bytes(&bytes, Some(path), &Default::default())
        .map_err(|e| format!("keyscene: {e}"))?;
    Ok((scene, theirs))
}

/// A ufbx matrix (affine, fields `m<row><column>`) as a column-major [`DMat4`] with the
/// bottom row 0 0 0 1.
pub fn to_dmat4(m: &ufbx::Matrix) -> DMat4 {
    DMat4::from_cols_array(&[
        m.m00, m.m10, m.m20, 0.0, m.m01, m.m11, m.m21, 0.0, m.m02, m.m12, m.m22, 0.0, m.m03, m.m13,
        m.m23, 1.0,
    ])
}

/// keyscene's animation for ufbx's anim stack number `k`, named `name`: the animation of that
/// name (both readers name an animation after its `AnimationStack`), else the one at the same
/// index when there is one.
pub fn matching_animation(scene: &keyscene::scene::Scene, k: usize, name: &str) -> Option<usize> {
    scene
        .animations
        .iter()
        .position(|a| a.name == name)
        .or((k < scene.animations.len()).then_some(k))
}

/// The source scene's nodes by name, for pairing ufbx's nodes with keyscene's: both read a
/// file's nodes in its order, so the k-th ufbx node of a name is first tried against the k-th
/// source node of that name ([`NodesByName::pair`]); only when that one does not agree are the
/// others of the name measured. Scanning every node of a name for every ufbx node was
/// quadratic: `synthetic_id_collision` has 10,000 nodes of one name.
#[allow(dead_code)] // not every test binary that includes `common` calls it
pub struct NodesByName {
    of: std::collections::HashMap<String, Vec<usize>>,
}

#[allow(dead_code)]
impl NodesByName {
    /// The index of `scene`'s node names, each name as `key` makes it.
    pub fn new(scene: &keyscene::scene::Scene, key: impl Fn(&str) -> String) -> NodesByName {
        let mut of: std::collections::HashMap<String, Vec<usize>> = Default::default();
        for (i, n) in scene.nodes.iter().enumerate() {
            of.entry(key(&n.name)).or_default().push(i);
        }
        NodesByName { of }
    }

    /// The source nodes named `name` (as the index's key made it), in node order.
    pub fn named(&self, name: &str) -> &[usize] {
        self.of.get(name).map_or(&[][..], Vec::as_slice)
    }

    /// For each name of `names` (ufbx's nodes in order), how many before it had that name.
    pub fn ranks<'n>(names: impl IntoIterator<Item = &'n str>) -> Vec<usize> {
        let mut seen: std::collections::HashMap<&str, usize> = Default::default();
        names
            .into_iter()
            .map(|n| {
                let r = seen.entry(n).or_default();
                *r += 1;
                *r - 1
            })
            .collect()
    }

    /// The source node named `name` with the smallest `err` and that error: the node of rank
    /// `rank` among them when its error is at most `good`, else the smallest over all of
    /// them. `None` when no node has the name.
    pub fn pair(
        &self,
        name: &str,
        rank: usize,
        good: f64,
        err: impl Fn(usize) -> f64,
    ) -> Option<(f64, usize)> {
        let all = self.named(name);
        if let Some(&i) = all.get(rank) {
            let e = err(i);
            if e <= good {
                return Some((e, i));
            }
        }
        all.iter().map(|&i| (err(i), i)).min_by(|a, b| a.0.total_cmp(&b.0))
    }
}

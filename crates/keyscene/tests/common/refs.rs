//! The rows of `corpus/fbx/references.tsv`: which ufbx reference `.obj` to compare an FBX file
//! with, and how (columns as MANIFEST.md describes them).

use std::path::{Path, PathBuf};
use std::process::Command;

use libtest_mimic::Trial;

/// What checking one row found.
pub enum Outcome {
    /// The row's reference matches.
    Pass,
    /// It does not, and why.
    Fail(String),
    /// The row cannot be checked here, and why (reported as an ignored trial).
    Ignore(String),
}

impl Outcome {
    /// The outcome as a trial named `name` (an ignored one carries its reason in its name).
    pub fn into_trial(self, name: String) -> Trial {
        match self {
            Outcome::Pass => Trial::test(name, || Ok(())),
            Outcome::Fail(why) => Trial::test(name, move || Err(why.into())),
            Outcome::Ignore(why) => {
                Trial::test(format!("ignored: {why} :: {name}"), || Ok(())).with_ignored_flag(true)
            }
        }
    }
}

/// The folder holding `obj_compare.py`: `KEYSCENE_ORACLES`, else `<corpus>/../oracles`.
pub fn oracles(corpus: &Path) -> PathBuf {
    std::env::var_os("KEYSCENE_ORACLES")
        .map(PathBuf::from)
        .unwrap_or_else(|| corpus.join("../oracles"))
}

/// One row of `references.tsv`, columns as written (trimmed), flags read as `yes`.
#[derive(Clone)]
pub struct RefRow {
    /// FBX file, relative to `corpus/fbx`.
    pub fbx: String,
    /// Reference `.obj`, relative to `corpus/fbx`.
    pub obj: String,
    /// `static` (stored pose) or `time` (posed at `time_s`).
    pub mode: String,
    /// Time in seconds, empty for static rows.
    pub time_s: String,
    /// Stack name (or a part of it), empty for the default.
    pub stack: String,
    /// `ordered` or `nearest` vertex matching.
    pub matching: String,
    /// Per-component tolerance.
    pub tolerance: String,
    /// Scale applied to reference positions before comparing.
    pub position_scale: String,
    /// Whether normals are compared.
    pub normals: bool,
    /// Whether UVs are compared.
    pub uvs: bool,
    /// Skinned meshes follow their node since binding (Maya's display).
    pub transform_skin: bool,
    /// Axis/unit conversion, empty for the file's own space.
    pub conversion: String,
    /// Extra options (`bind_pose=…`, `no_extrapolation`), empty for none.
    pub options: String,
}

impl RefRow {
    /// For a `time` row, the animation it poses and the time in seconds: its stack (the first
    /// animation whose name contains the row's, as ufbx's harness matches stacks; the first
    /// animation when the row names none), made extrapolation-free when the row says
    /// `no_extrapolation`. `Ok(None)` for a `static` row. A scene without animations that
    /// has geometry caches is posed at the time with no animation (`None`): the caches are
    /// its animation.
    pub fn posed_animation(
        &self,
        scene: &mut keyscene::scene::Scene,
    ) -> Result<Option<(Option<usize>, f64)>, Outcome> {
        if self.mode != "time" {
            return Ok(None);
        }
        let Ok(t) = self.time_s.parse::<f64>() else {
            return Err(Outcome::Fail(format!("bad time {:?}", self.time_s)));
        };
        if scene.animations.is_empty() && !scene.geometry_caches.is_empty() {
            return Ok(Some((None, t)));
        }
        if scene.animations.is_empty() {
            return Err(Outcome::Fail("the scene has no animation to pose".into()));
        }
        let a = if self.stack.is_empty() {
            Some(0)
        } else {
            scene.animations.iter().position(|a| a.name.contains(&self.stack))
        };
        let Some(a) = a else {
            return Err(Outcome::Fail(format!("no stack containing {:?}", self.stack)));
        };
        if self.options.split(',').any(|o| o.trim() == "no_extrapolation") {
            scene.animations[a] = scene.animations[a].without_extrapolation();
        }
        Ok(Some((Some(a), t)))
    }

    /// The row as a trial name: `MODE FBX -> OBJ [t=…] [stack=…] [conversion=…] [options]`.
    pub fn name(&self) -> String {
        let mut n = format!("{} {} -> {}", self.mode, self.fbx, self.obj);
        if !self.time_s.is_empty() {
            n += &format!(" t={}", self.time_s);
        }
        if !self.stack.is_empty() {
            n += &format!(" stack={}", self.stack);
        }
        if !self.conversion.is_empty() {
            n += &format!(" conversion={}", self.conversion);
        }
        if !self.options.is_empty() {
            n += &format!(" {}", self.options);
        }
        n
    }

    /// The row's options (`no_extrapolation`, `bind_pose=NAME`, `skip_normals=GROUP`), split
    /// at `,` or `;`, trimmed, empty ones left out.
    pub fn option_list(&self) -> Vec<&str> {
        self.options.split([';', ',']).map(str::trim).filter(|o| !o.is_empty()).collect()
    }

    /// The `obj_compare.py` command (in `oracles`) comparing `candidate` with `reference`
    /// at the row's matching, tolerance and position scale (each left to the script's default
    /// when empty); with `attributes`, also normals (less the `skip_normals=` groups) and UVs
    /// where the row asks for them.
    pub fn obj_compare(
        &self,
        oracles: &Path,
        reference: &Path,
        candidate: &Path,
        attributes: bool,
    ) -> Command {
        let mut cmd = Command::new("python3");
        cmd.arg(oracles.join("obj_compare.py")).arg(reference).arg(candidate);
        for (flag, v) in [
            ("--match", &self.matching),
            ("--tolerance", &self.tolerance),
            ("--position-scale", &self.position_scale),
        ] {
            if !v.is_empty() {
                cmd.arg(flag).arg(v);
            }
        }
        if attributes && self.normals {
            cmd.arg("--normals");
            for g in self.option_list().iter().filter_map(|o| o.strip_prefix("skip_normals=")) {
                cmd.args(["--skip-normals-group", g]);
            }
        }
        if attributes && self.uvs {
            cmd.arg("--uvs");
        }
        cmd
    }
}

/// Every row of `fbx_dir/references.tsv` (header skipped), or none when the file is missing.
pub fn reference_rows(fbx_dir: &Path) -> Vec<RefRow> {
    let text = std::fs::read_to_string(fbx_dir.join("references.tsv")).unwrap_or_default();
    text.lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let c: Vec<&str> = l.split('\t').collect();
            let col = |i: usize| c.get(i).copied().unwrap_or("").trim().to_string();
            RefRow {
                fbx: col(0),
                obj: col(1),
                mode: col(2),
                time_s: col(3),
                stack: col(4),
                matching: col(5),
                tolerance: col(6),
                position_scale: col(7),
                normals: col(8) == "yes",
                uvs: col(9) == "yes",
                transform_skin: col(10) == "yes",
                conversion: col(11),
                options: col(12),
            }
        })
        .collect()
}

/// The trials of `rows` (named `prefix` + [`RefRow::name`]) whose name passes the command
/// line's filter, each checked by `check(k, row)` (`k`: the row's index) before the harness
/// starts — whether a row is ignored depends on its outcome — on every core at once: each
/// check waits for a Python `obj_compare.py` process, and one after another they took minutes.
/// Trials come out in row order.
pub fn checked_trials<F>(rows: &[RefRow], prefix: &str, check: F) -> Vec<Trial>
where
    F: Fn(usize, &RefRow) -> Outcome + Sync,
{
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;
    let args = libtest_mimic::Arguments::from_args();
    let picked: Vec<(usize, String)> = rows
        .iter()
        .enumerate()
        .map(|(k, r)| (k, format!("{prefix}{}", r.name())))
        .filter(|(_, name)| args.filter.as_deref().is_none_or(|f| name.contains(f)))
        .collect();
    let outcomes: Mutex<Vec<Option<Outcome>>> =
        Mutex::new((0..picked.len()).map(|_| None).collect());
    let next = AtomicUsize::new(0);
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get()).min(picked.len());
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let j = next.fetch_add(1, Ordering::Relaxed);
                let Some((k, _)) = picked.get(j) else { break };
                let o = check(*k, &rows[*k]);
                outcomes.lock().unwrap_or_else(|e| e.into_inner())[j] = Some(o);
            });
        }
    });
    let outcomes = outcomes.into_inner().unwrap_or_else(|e| e.into_inner());
    picked
        .into_iter()
        .zip(outcomes)
        .map(|((_, name), o)| {
            o.unwrap_or_else(|| Outcome::Fail("the check did not finish".into())).into_trial(name)
        })
        .collect()
}

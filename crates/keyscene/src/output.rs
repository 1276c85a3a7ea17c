//! Files a writer puts beside its main output (material scripts, texture images), and the rule
//! that keeps them from replacing each other (issue #17 §2; docs/3da.md, "Material scripts",
//! and docs/cli.md, "Textures").
//!
//! Rule: an output never silently replaces a different file that another source wrote, in this
//! run or an earlier one. A file about to be written beside the output is compared with what
//! lies there:
//! - nothing there, or the same bytes: written (or left as it is);
//! - a file this process wrote earlier from another source: an error naming both sources;
//! - a file on disk with other bytes: replaced only when it records the same source (material
//!   scripts carry a `written by keyscene from "SOURCE"` comment, see [`provenance_line`]);
//!   otherwise an error naming both (images record nothing, so an image of the same name with
//!   other content is never replaced: remove it or convert into another folder).
//!
//! Re-running a conversion of the same source into the same folder therefore overwrites its
//! own outputs and nothing else.
//!
//! The main output file (the `.glb`, `.obj`, `.3da`… itself) is stricter, as it records no
//! source ([`claim_output`]): an existing file is replaced only on purpose (`force`, the CLI's
//! `--force`), whether an earlier run of the same source or anything else wrote it; and a file
//! this process already wrote from another source is never replaced, `force` or not. Two processes writing one folder at the same moment are not
//! guarded against each other (only against what they find on disk).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::scene::Scene;
use crate::Error;

/// The comment line a material script starts its provenance with: the source's path follows,
/// quoted (`// written by keyscene from "/abs/path/model.fbx"`).
pub const PROVENANCE_PREFIX: &str = "// written by keyscene from ";

/// The provenance comment line (with its newline) for `source`.
pub fn provenance_line(source: &str) -> String {
    format!("{PROVENANCE_PREFIX}{source:?}\n")
}

/// The source a file's provenance line names, if it has one.
fn recorded_source(bytes: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(bytes).ok()?;
    let line = text.lines().find_map(|l| l.strip_prefix(PROVENANCE_PREFIX))?;
    // The line holds a Rust-style quoted string; sources are plain paths, so unescaping `\"`
    // and `\\` is enough.
    let inner = line.trim().strip_prefix('"')?.strip_suffix('"')?;
    Some(inner.replace("\\\"", "\"").replace("\\\\", "\\"))
}

/// The name a source is recorded under: its absolute, canonical path when it exists, else the
/// path as given.
pub fn source_name(path: &Path) -> String {
    path.canonicalize().unwrap_or_else(|_| path.to_path_buf()).display().to_string()
}

/// One file to be written beside an output.
#[derive(Debug, Clone)]
pub struct Companion {
    /// Where it goes.
    pub path: PathBuf,
    /// Its bytes.
    pub bytes: Arc<[u8]>,
    /// What it is, for messages (`material script of "Stone"`, `texture "IMAGE1.JPG"`).
    pub what: String,
}

/// Every companion file this process wrote: canonical path (lower-cased, as the folder may be
/// case-insensitive) → the source it was written from and a hash of its bytes.
static WRITTEN: Mutex<Option<HashMap<String, (String, u64)>>> = Mutex::new(None);

fn key(path: &Path) -> String {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    let name = path.file_name().map(|n| n.to_string_lossy().to_lowercase()).unwrap_or_default();
    dir.join(name).display().to_string()
}

fn hash(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h ^ bytes.len() as u64
}

/// Writes `files` (each atomically, [`crate::write_atomically`]) for `source` (see
/// [`source_name`]) under the module's rule, all checked before any is written. Returns the
/// files created (that did not exist before), so a caller whose later write fails can remove
/// them again.
///
/// Errors: [`Error::OutputCollision`] when a file would replace another source's output (see
/// the module docs); [`Error::Io`] when a file cannot be read or written.
pub fn write_companions(files: &[Companion], source: &str) -> Result<Vec<PathBuf>, Error> {
    let mut guard = WRITTEN.lock().unwrap_or_else(|e| e.into_inner());
    let written = guard.get_or_insert_with(HashMap::new);
    let mut todo = Vec::new();
    for f in files {
        let k = key(&f.path);
        let h = hash(&f.bytes);
        if let Some((theirs, their_hash)) = written.get(&k) {
            if *their_hash == h && f.path.exists() {
                crate::io::note_written(&f.path);
                continue;
            }
            if theirs != source {
                return Err(collision(f, source, theirs));
            }
        }
        match std::fs::read(&f.path) {
            Ok(old) if old[..] == f.bytes[..] => crate::io::note_written(&f.path),
            Ok(old) => match recorded_source(&old) {
                Some(theirs) if theirs == source => todo.push((f, k, h)),
                Some(theirs) => return Err(collision(f, source, &theirs)),
                None if written.get(&k).is_some_and(|(s, _)| s == source) => todo.push((f, k, h)),
                None => {
                    return Err(collision(f, source, "an earlier run or another program"));
                }
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => todo.push((f, k, h)),
            Err(e) => return Err(Error::Io { path: f.path.clone(), source: e }),
        }
    }
    let mut created = Vec::new();
    for (f, k, h) in todo {
        let existed = f.path.exists();
        let r = crate::write_atomically::<Error>(&f.path, |w| {
            w.write_all(&f.bytes).map_err(|e| Error::Io { path: f.path.clone(), source: e })
        });
        if let Err(e) = r {
            for p in &created {
                let _ = std::fs::remove_file(p);
            }
            return Err(e);
        }
        written.insert(k, (source.to_string(), h));
        if !existed {
            created.push(f.path.clone());
        }
    }
    Ok(created)
}

/// Refuses to write `output` when it is one of `inputs` — the file a scene was read from, or a
/// file the scene names ([`Scene::source_files`]) — compared by file identity (device and
/// inode on Unix, the canonical path elsewhere), so a relative path, `..`, a symbolic link or a
/// hard link to a source is caught as well as the same spelling. No `force` overrides it: a
/// conversion never destroys what it reads. Inputs that do not exist are skipped.
///
/// Errors: [`Error::WouldReplaceInput`] naming the output and the source.
pub fn refuse_input<P: AsRef<Path>>(output: &Path, inputs: &[P]) -> Result<(), Error> {
    let Some(out) = identity(output) else { return Ok(()) };
    for input in inputs {
        if identity(input.as_ref()).as_ref() == Some(&out) {
            return Err(Error::WouldReplaceInput {
                output: output.to_path_buf(),
                input: input.as_ref().to_path_buf(),
            });
        }
    }
    Ok(())
}

/// What makes two paths the same file: (device, inode) on Unix (hard links share it), the
/// canonical path elsewhere. `None` when nothing is at `path`.
#[cfg(unix)]
fn identity(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(path).ok()?;
    Some((m.dev(), m.ino()))
}

#[cfg(not(unix))]
fn identity(path: &Path) -> Option<PathBuf> {
    path.canonicalize().ok()
}

impl Scene {
    /// Every file this scene was read from besides the scene file itself: resolved texture
    /// images and geometry cache files ([`refuse_input`] keeps outputs off them).
    pub fn source_files(&self) -> Vec<PathBuf> {
        let textures =
            self.materials.iter().flat_map(|m| &m.maps).filter_map(|t| t.resolved.clone());
        textures.chain(self.geometry_caches.iter().map(|c| c.file.clone())).collect()
    }
}

/// Starts a new run: forgets every output and companion file this process has claimed or
/// written, so that the rules above apply to the next conversion as they apply to a new
/// `keyscene` process. A long-lived process that converts on request (the Python package:
/// each `convert`, `Scene.save` and `convert_all` call is one run) calls it before each
/// conversion; otherwise a second conversion of the same source would replace its earlier
/// output without `force`, and another source could never write that path again.
pub fn new_run() {
    let mut guard = WRITTEN.lock().unwrap_or_else(|e| e.into_inner());
    *guard = None;
}

/// Claims `path` as the main output of `source` (see [`source_name`]) before it is written,
/// under the module's rule for main outputs:
/// - this process already claimed `path` for another source: an error, even with `force`
///   (two sources of one run would write one file);
/// - this process already claimed it for `source`: allowed (the same conversion again);
/// - a file (or anything else) is at `path`: an error unless `force` (an output of an earlier
///   run or another program is not replaced silently);
/// - nothing there: allowed.
///
/// An allowed claim is recorded, so that later claims (and [`write_companions`]) in this
/// process see it. Errors: [`Error::OutputExists`], naming the file (and both sources when
/// this run wrote it).
pub fn claim_output(path: &Path, source: &str, force: bool) -> Result<(), Error> {
    let mut guard = WRITTEN.lock().unwrap_or_else(|e| e.into_inner());
    let written = guard.get_or_insert_with(HashMap::new);
    let k = key(path);
    match written.get(&k) {
        Some((theirs, _)) if theirs != source => {
            return Err(Error::OutputExists {
                path: path.to_path_buf(),
                ours: source.to_string(),
                theirs: Some(theirs.clone()),
            });
        }
        Some(_) => return Ok(()),
        None => {}
    }
    if !force && std::fs::symlink_metadata(path).is_ok() {
        return Err(Error::OutputExists {
            path: path.to_path_buf(),
            ours: source.to_string(),
            theirs: None,
        });
    }
    // The hash of no bytes: a companion file is never taken for this output's same content.
    written.insert(k, (source.to_string(), MAIN_OUTPUT));
    Ok(())
}

/// The hash [`claim_output`] records for a main output (whose bytes are not known yet).
const MAIN_OUTPUT: u64 = u64::MAX;

fn collision(f: &Companion, ours: &str, theirs: &str) -> Error {
    Error::OutputCollision {
        path: f.path.clone(),
        what: f.what.clone(),
        ours: ours.to_string(),
        theirs: theirs.to_string(),
    }
}

/// Where a texture's image comes from.
#[derive(Debug, Clone)]
pub enum ImageSource {
    /// Bytes the source file carries ([`TextureMap::embedded`](crate::scene::TextureMap::embedded)).
    Embedded(Arc<[u8]>),
    /// The file found beside the source.
    File(PathBuf),
}

/// How [`TexturePlan`] names the image files beside an output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FileNames {
    /// The found file's name, else the stored name's last path component; a clash gets `~N`
    /// before the extension (`wall~1.png`).
    #[default]
    AsFound,
    /// DOS 8.3 names, as 3D Studio's `MAT_MAPNAME` holds them: upper case, at most 8 name and
    /// 3 extension characters, only ASCII letters, digits, `_` and `-` (others dropped; an
    /// empty name becomes `MAP`); a clash ends the name in `~N` within the 8
    /// (`BRICK_~1.PNG`).
    EightDotThree,
}

impl FileNames {
    /// `name` (a file name without folder) split into stem and extension (with its dot) under
    /// this rule.
    fn split(self, name: &str) -> (String, String) {
        let (stem, ext) = match name.rfind('.') {
            Some(i) if i > 0 => (&name[..i], &name[i..]),
            _ => (name, ""),
        };
        if self == FileNames::AsFound {
            return (stem.to_string(), ext.to_string());
        }
        let clean = |s: &str, n: usize| -> String {
            s.chars()
                .filter(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
                .map(|c| c.to_ascii_uppercase())
                .take(n)
                .collect()
        };
        let mut st = clean(stem, 8);
        if st.is_empty() {
            st = "MAP".into();
        }
        let ex = clean(ext, 3);
        (st, if ex.is_empty() { ex } else { format!(".{ex}") })
    }

    /// The `n`th alternative (from 1) for a name that clashes.
    fn numbered(self, stem: &str, ext: &str, n: usize) -> String {
        let suffix = format!("~{n}");
        match self {
            FileNames::AsFound => format!("{stem}{suffix}{ext}"),
            FileNames::EightDotThree => {
                let keep: String = stem.chars().take(8usize.saturating_sub(suffix.len())).collect();
                format!("{keep}{suffix}{ext}")
            }
        }
    }
}

/// The texture images a scene's materials name, with the plain file name each gets beside an
/// output (`.mtl`, `.mat` and copies agree on it).
#[derive(Debug, Clone, Default)]
pub struct TexturePlan {
    /// (material index, map index) → the file name written in the material, `None` for an
    /// empty map name (no map).
    names: HashMap<(usize, usize), String>,
    /// The images to put beside the output: file name, source, first material naming it.
    pub images: Vec<(String, ImageSource, String)>,
    /// Maps whose image was neither embedded nor found: (material, file name as stored).
    pub missing: Vec<(String, String)>,
}

impl TexturePlan {
    /// Plans `scene`'s images with [`FileNames::AsFound`] names.
    pub fn new(scene: &Scene) -> TexturePlan {
        TexturePlan::with_names(scene, FileNames::AsFound)
    }

    /// Plans `scene`'s images. A map's name beside the output is the found file's name
    /// (`resolved`), else the stored name's last path component, made to follow `rule`; two
    /// different images that would get one name (case-insensitively) get `~N` as `rule` says.
    /// Maps with an empty (or blank) file name get none: no map.
    pub fn with_names(scene: &Scene, rule: FileNames) -> TexturePlan {
        TexturePlan::planned(scene, rule, false)
    }

    /// [`TexturePlan::new`] with the maps of the materials' PBR values too (materials whose
    /// shading model [`is_pbr`](crate::scene::ShadingModel::is_pbr)), after their own maps:
    /// map index `maps.len() + ` the [`PbrProperty`](crate::scene::PbrProperty)'s index
    /// ([`TexturePlan::pbr_name`]). What the OBJ writer's `map_Pr`, `map_Pm`, `norm`… name.
    pub fn with_pbr(scene: &Scene) -> TexturePlan {
        TexturePlan::planned(scene, FileNames::AsFound, true)
    }

    /// The file name of material `material`'s PBR map of `p` ([`TexturePlan::with_pbr`]).
    pub fn pbr_name(
        &self,
        scene: &Scene,
        material: usize,
        p: crate::scene::PbrProperty,
    ) -> Option<&str> {
        let own = scene.materials.get(material)?.maps.len();
        self.name(material, own + p as usize)
    }

    fn planned(scene: &Scene, rule: FileNames, pbr: bool) -> TexturePlan {
        let mut plan = TexturePlan::default();
        // Image identity → its name; name (lower-cased) → taken.
        let mut by_image: HashMap<String, String> = HashMap::new();
        let mut taken = std::collections::HashSet::new();
        for (mi, m) in scene.materials.iter().enumerate() {
            let pbr_maps = m
                .pbr
                .as_ref()
                .filter(|p| pbr && p.model.is_pbr())
                .into_iter()
                .flat_map(|p| p.values.iter().enumerate())
                .filter_map(|(i, v)| Some((m.maps.len() + i, v.texture.as_ref()?)));
            for (k, map) in m.maps.iter().enumerate().chain(pbr_maps) {
                if map.file.trim().is_empty() {
                    continue;
                }
                let base = map.file.rsplit(['/', '\\']).next().unwrap_or(&map.file).to_string();
                let (identity, name, source) = match (&map.embedded, &map.resolved) {
                    (Some(bytes), _) => (
                        format!("embedded:{:p}", bytes.as_ptr()),
                        base,
                        Some(ImageSource::Embedded(bytes.clone())),
                    ),
                    (None, Some(path)) => (
                        format!("file:{}", path.display()),
                        path.file_name().and_then(|n| n.to_str()).map_or(base, str::to_string),
                        Some(ImageSource::File(path.clone())),
                    ),
                    (None, None) => {
                        plan.missing.push((m.name.clone(), map.file.clone()));
                        (format!("missing:{base}"), base, None)
                    }
                };
                let name = match by_image.get(&identity) {
                    Some(n) => n.clone(),
                    None => {
                        let (stem, ext) = rule.split(&name);
                        let mut unique = format!("{stem}{ext}");
                        let mut n = 1;
                        while !taken.insert(unique.to_lowercase()) {
                            unique = rule.numbered(&stem, &ext, n);
                            n += 1;
                        }
                        by_image.insert(identity, unique.clone());
                        if let Some(source) = source {
                            plan.images.push((unique.clone(), source, m.name.clone()));
                        }
                        unique
                    }
                };
                plan.names.insert((mi, k), name);
            }
        }
        plan
    }

    /// The file name map `map` of material `material` is written under, `None` for a map
    /// with an empty name.
    pub fn name(&self, material: usize, map: usize) -> Option<&str> {
        self.names.get(&(material, map)).map(String::as_str)
    }

    /// The images as files in `dir` (a found file is read now). Images that cannot be read
    /// are left out and returned as warnings.
    pub fn companions(&self, dir: &Path) -> (Vec<Companion>, Vec<String>) {
        let mut files = Vec::new();
        let mut warnings = Vec::new();
        for (name, source, material) in &self.images {
            let bytes: Arc<[u8]> = match source {
                ImageSource::Embedded(b) => b.clone(),
                ImageSource::File(p) => {
                    // Copying a file onto itself (output folder = source folder) is nothing to do.
                    let dest = dir.join(name);
                    if matches!((dest.canonicalize(), p.canonicalize()), (Ok(a), Ok(b)) if a == b) {
                        continue;
                    }
                    match std::fs::read(p) {
                        Ok(b) => b.into(),
                        Err(e) => {
                            warnings.push(format!(
                                "material \"{material}\": texture {}: {e}: not copied",
                                p.display()
                            ));
                            continue;
                        }
                    }
                }
            };
            files.push(Companion {
                path: dir.join(name),
                bytes,
                what: format!("texture \"{name}\" of material \"{material}\""),
            });
        }
        for (material, file) in &self.missing {
            warnings.push(format!(
                "material \"{material}\": texture \"{file}\" not found beside the source: named in the output but not copied"
            ));
        }
        (files, warnings)
    }
}

/// A short, stable tag of `s`: 4 hex digits of its 32-bit FNV-1a hash folded to 16 bits.
pub fn short_hash(s: &str) -> String {
    let mut h: u32 = 0x811c_9dc5;
    for b in s.bytes() {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    format!("{:04x}", (h >> 16) ^ (h & 0xffff))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn provenance_round_trips_through_the_comment() {
        let text =
            format!("// a.mat: material\n{}Diffuse( \"1\" )\n", provenance_line("/x/\"q\".fbx"));
        assert_eq!(recorded_source(text.as_bytes()).as_deref(), Some("/x/\"q\".fbx"));
        assert_eq!(recorded_source(b"Diffuse( \"1\" )\n"), None);
    }

    #[test]
    fn a_file_of_another_source_is_not_replaced_and_the_same_source_may_rewrite() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.mat");
        let file = |src: &str, body: &str| Companion {
            path: path.clone(),
            bytes: format!("{}{body}", provenance_line(src)).into_bytes().into(),
            what: "material script".into(),
        };
        write_companions(&[file("/a.fbx", "1")], "/a.fbx").unwrap();
        // Same source, new content: a re-run overwrites its own output.
        write_companions(&[file("/a.fbx", "2")], "/a.fbx").unwrap();
        let e = write_companions(&[file("/b.fbx", "3")], "/b.fbx").unwrap_err().to_string();
        assert!(e.contains("/a.fbx") && e.contains("/b.fbx"), "{e}");
        assert!(std::fs::read_to_string(&path).unwrap().ends_with('2'));
    }

    #[test]
    fn a_main_output_is_replaced_only_with_force_and_never_across_sources_of_one_run() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.glb");
        // Nothing there: claimed; the same source may claim it again in this run.
        claim_output(&path, "/a.fbx", false).unwrap();
        claim_output(&path, "/a.fbx", false).unwrap();
        // Another source of this run: refused, --force or not, and both are named.
        for force in [false, true] {
            let e = claim_output(&path, "/b.fbx", force).unwrap_err().to_string();
            assert!(e.contains("/a.fbx") && e.contains("/b.fbx") && e.contains("out.glb"), "{e}");
        }
        // A file of an earlier run (not claimed by this process): refused without force.
        let old = dir.path().join("old.glb");
        std::fs::write(&old, b"glTF").unwrap();
        let e = claim_output(&old, "/a.fbx", false).unwrap_err().to_string();
        assert!(
            e.contains("old.glb") && e.contains("already exists") && e.contains("--force"),
            "{e}"
        );
        claim_output(&old, "/a.fbx", true).unwrap();
    }

    #[test]
    fn an_input_is_never_an_output_however_it_is_spelled() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("a.3ds");
        std::fs::write(&src, b"MM").unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        let dotted = dir.path().join("sub").join("..").join("a.3ds");
        let hard = dir.path().join("hard.3ds");
        std::fs::hard_link(&src, &hard).unwrap();
        for out in [&src, &dotted, &hard] {
            let e = refuse_input(out, &[&src]).unwrap_err().to_string();
            assert!(e.contains("a.3ds") && e.contains("never replaced"), "{e}");
        }
        #[cfg(unix)]
        {
            let link = dir.path().join("link.3ds");
            std::os::unix::fs::symlink(&src, &link).unwrap();
            assert!(refuse_input(&link, &[&src]).is_err());
        }
        // Another file, or nothing there yet: allowed.
        std::fs::write(dir.path().join("b.3ds"), b"MM").unwrap();
        assert!(refuse_input(&dir.path().join("b.3ds"), &[&src]).is_ok());
        assert!(refuse_input(&dir.path().join("c.glb"), &[&src]).is_ok());
    }

    #[test]
    fn a_new_run_forgets_the_claims_of_the_last() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.glb");
        claim_output(&path, "/a.fbx", false).unwrap();
        std::fs::write(&path, b"glTF").unwrap();
        new_run();
        // Written by the last run: an existing file now, replaced only with force, by
        // either source.
        assert!(claim_output(&path, "/a.fbx", false).is_err());
        claim_output(&path, "/b.fbx", true).unwrap();
    }

    #[test]
    fn an_unmarked_file_with_other_bytes_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.png");
        std::fs::write(&path, b"mine").unwrap();
        let c =
            Companion { path: path.clone(), bytes: b"theirs"[..].into(), what: "texture".into() };
        assert!(write_companions(std::slice::from_ref(&c), "/s.3ds").is_err());
        assert_eq!(std::fs::read(&path).unwrap(), b"mine");
        std::fs::write(&path, b"theirs").unwrap();
        write_companions(&[c], "/s.3ds").unwrap();
    }

    #[test]
    fn eight_dot_three_names_are_short_upper_case_and_unique() {
        let mut scene = Scene::default();
        let mut m = crate::scene::Material::default();
        for file in ["textures/brick_wall_diffuse.png", "brick_wall_normal.png", "", "é.tga"] {
            m.maps.push(crate::scene::TextureMap {
                slot: crate::scene::MapSlot::Diffuse,
                file: file.into(),
                resolved: None,
                embedded: None,
                strength: 1.0,
                uv_transform: Default::default(),
                flags: 0,
                wrap: Default::default(),
            });
        }
        m.maps.push(m.maps[0].clone());
        scene.materials.push(m);
        let plan = TexturePlan::with_names(&scene, FileNames::EightDotThree);
        let names: Vec<Option<&str>> = (0..5).map(|k| plan.name(0, k)).collect();
        // DOS 8.3: 8 + 3 upper-case characters; a clash ends in ~1 within the 8.
        assert_eq!(
            names,
            [
                Some("BRICK_WA.PNG"),
                Some("BRICK_~1.PNG"),
                None,
                Some("MAP.TGA"),
                Some("BRICK_WA.PNG")
            ]
        );
        assert_eq!(plan.missing.len(), 4);
    }
}

//! USD output: a [`Scene`] as one USD layer, as text (`.usda`) or in a USDZ package
//! (`.usdz`, [`usdz`]), with every animation (several: the variants of the root prim's
//! variant set `animation`, [`takes`]). The mapping is documented in
//! `docs/usd.md`; this folder implements it as passes over one layer being written, in the
//! shape of the other writers:
//!
//! - [`save`]/[`write`](fn@write): stage metadata (`defaultPrim`, `upAxis`, `metersPerUnit`,
//!   `timeCodesPerSecond` = the animation's frame rate, `startTimeCode`/`endTimeCode` its
//!   written frames: **time codes are frames**), then the prims;
//! - [`names`]: prim names (valid identifiers, unique among siblings, source names kept as
//!   `displayName`, renames reported);
//! - [`xform`]: one `xformOp:transform` per node, time-sampled where it moves (source keys
//!   kept where USD's linear interpolation is exact, adaptive error-bounded samples elsewhere);
//! - [`meshes`]: `UsdGeom.Mesh` prims; [`skel`]: linearly skinned meshes as UsdSkel rigs
//!   (`Skeleton`, `SkelAnimation`, `SkelBindingAPI`); [`deform`]: the other deformed meshes
//!   (blend shapes, caches, morphs, rigs USD cannot hold) as `points` time samples;
//! - [`materials`]: `UsdPreviewSurface` networks and their images; [`cameras`]: cameras and
//!   `UsdLux` lights;
//! - [`text`]: the `.usda` grammar; [`usdz`]: the package.
//!
//! - [`params`]: visibility over time, animated camera and light parameters;
//! - [`takes`]: several animations as variants, each holding the node prims as it moves
//!   them.
//!
//! What USD cannot hold, or this writer does not write yet (light roll,
//! animated material properties), is a warning in the [`Report`].

use std::collections::HashMap;
use std::path::Path;

use glam::{DMat4, DQuat, DVec3};
use rayon::prelude::*;

use crate::anim::{resample, ChannelTarget, Time};
use crate::scene::{Axis, NodeKind, Scene};

pub mod cameras;
pub mod deform;
pub mod materials;
pub mod meshes;
pub mod names;
pub mod params;
pub mod skel;
pub mod takes;
pub mod text;
pub mod usdz;
pub mod user_props;
pub mod xform;

use text::{string, Text};

/// Options of the USD writer.
#[derive(Debug, Clone)]
pub struct WriteOptions {
    /// The animation written (index into [`Scene::animations`]; `None` or past the end: the
    /// rest pose, no time samples). With [`WriteOptions::all_animations`] and several
    /// animations, the selected variant of the root prim's `animation` variant set
    /// ([`takes`]), whose timeline is the stage's.
    pub animation: Option<usize>,
    /// Write every animation of the scene, as the variants of the root prim's `animation`
    /// variant set ([`takes`]; default `true`); `false`: [`WriteOptions::animation`] alone,
    /// the others a warning.
    pub all_animations: bool,
    /// The source's up axis, when the file does not say it right (`--up`); the stage's
    /// `upAxis` (USD knows `Y` and `Z` only).
    pub up: Option<Axis>,
    /// The source's metres per unit, when the file does not say it right (`--units`); the
    /// stage's `metersPerUnit`.
    pub metres_per_unit: Option<f64>,
    /// `.usda`: copy the texture images beside the layer (default `true`). A `.usdz` always
    /// holds its images.
    pub copy_textures: bool,
    /// The source's name for [`crate::output`]'s rule (`None`: the output's path).
    pub source: Option<String>,
    /// Split every polygon of more than three corners into triangles
    /// ([`crate::scene::geometry::triangulated`], as the FBX writer's `--triangulate`) instead
    /// of keeping n-gons (default `false`).
    pub triangulate: bool,
    /// The error bound of the written animation relative to the scene size
    /// ([`resample::scene_size`]; CLI `--tolerance`, as for glTF): the resampled transforms,
    /// joints, points and parameters stay within it at every frame and between frames
    /// (docs/usd.md, "Transforms"). Default [`resample::TOLERANCE`] (1e-4); a number in
    /// (0, 1], else [`write()`] fails. A larger bound writes fewer time samples, sooner.
    pub tolerance: f64,
}

impl Default for WriteOptions {
    fn default() -> Self {
        WriteOptions {
            animation: Some(0),
            all_animations: true,
            up: None,
            metres_per_unit: None,
            copy_textures: true,
            source: None,
            triangulate: false,
            tolerance: resample::TOLERANCE,
        }
    }
}

/// What the writer did.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// What was not written, or written inexactly, one line each.
    pub warnings: Vec<String>,
    /// Nodes and materials whose prim name differs from the source name: (what, source name,
    /// prim path).
    pub renamed: Vec<(String, String, String)>,
}

/// A written layer and the images it names.
#[derive(Debug)]
pub struct Layer {
    /// The `.usda` text.
    pub text: String,
    /// Images the layer names by file name, relative to the layer (`./NAME`).
    pub images: Vec<(String, std::sync::Arc<[u8]>)>,
    /// The report.
    pub report: Report,
}

/// What the passes share.
pub struct Ctx<'s> {
    scene: &'s Scene,
    /// The written timeline.
    line: &'s xform::Timeline,
    /// Each material's prim path (`None`: not written).
    material_paths: Vec<Option<String>>,
    /// [`WriteOptions::triangulate`].
    triangulate: bool,
    warnings: Vec<String>,
}

impl Ctx<'_> {
    fn warn(&mut self, w: String) {
        if !self.warnings.contains(&w) {
            self.warnings.push(w);
        }
    }
}

/// The name of the root prim every node prim is under (the stage's `defaultPrim`).
pub const ROOT: &str = "root";

/// Writes `scene` as one USD layer in memory.
///
/// A scene with several animations (and [`WriteOptions::all_animations`]) gets them all as the
/// variants of the root prim's variant set `animation` ([`takes`]), the one
/// [`WriteOptions::animation`] names selected; otherwise the one animation is written plainly.
///
/// Errors: [`crate::Error::Unsupported`] for an inconsistent scene ([`Scene::validate`]).
pub fn write(scene: &Scene, opts: &WriteOptions) -> Result<Layer, crate::Error> {
    scene
        .validate()
        .map_err(|e| crate::Error::Unsupported(format!("usd: inconsistent scene: {e}")))?;
    let tol = resample::check_tolerance(opts.tolerance)
        .map_err(|e| crate::Error::Unsupported(format!("usd: {e}")))?;
    let (animations, selected) = takes::chosen(scene, opts);
    let lines: Vec<xform::Timeline> = match &animations {
        Some(all) => all.iter().map(|&a| xform::Timeline::new(scene, Some(a), tol)).collect(),
        None => vec![xform::Timeline::new(scene, opts.animation, tol)],
    };
    let default = &lines[selected];
    let mut ctx = Ctx {
        scene,
        line: default,
        material_paths: Vec::new(),
        triangulate: opts.triangulate,
        warnings: Vec::new(),
    };
    let mut t = Text::default();
    header(&mut t, &mut ctx, opts, default);
    let mats = scene.materials.iter().filter(|m| !m.user_properties.is_empty()).count();
    if mats > 0 {
        ctx.warn(format!("not written: the user properties of {mats} material(s) (node user properties are written as userProperties: attributes; FBX and glTF extras keep material ones)"));
    }
    let images = materials::images(scene, &mut ctx.warnings);
    let root = format!("/{ROOT}");
    let mut per_take = takes::Warnings::default();
    // The animations are sampled on the thread pool, each with warnings of its own; the
    // samples do not depend on the order (nor the text on the threads).
    let alone = animations.is_none();
    let each: Vec<(Take, Vec<String>)> = lines
        .par_iter()
        .map(|line| {
            let mut c = Ctx { line, material_paths: Vec::new(), warnings: Vec::new(), ..ctx };
            animation_warnings(&mut c, line, alone);
            let take = Take::sample(&mut c, line);
            (take, c.warnings)
        })
        .collect();
    let mut sampled = Vec::with_capacity(lines.len());
    for (i, (take, warnings)) in each.into_iter().enumerate() {
        sampled.push(take);
        per_take.add(i, warnings);
    }
    // A rig's skeleton and mesh must be under one SkelRoot: the root prim is one.
    let kind = if sampled.iter().any(|s| !s.rigs.is_empty()) { "SkelRoot" } else { "Xform" };
    let variants = animations.as_ref().map(|all| takes::Variants::new(scene, all, &lines));
    let mut meta = vec!["kind = \"component\"".to_string()];
    if let Some(v) = &variants {
        meta.extend(v.root_metadata(selected));
    }
    t.open(&format!("def {kind} \"{ROOT}\""), &meta);
    let mut siblings = names::Siblings::default();
    siblings.claim("Materials");
    ctx.material_paths = materials::write(&mut t, &mut ctx, &root, &images);
    let mut renamed = Vec::new();
    match &variants {
        None => sampled[0].prims().write(&mut t, &mut ctx, siblings, &root, &mut renamed),
        Some(v) => {
            v.report_renames(&mut renamed);
            v.rate_warnings(selected).into_iter().for_each(|w| ctx.warn(w));
            t.open_with("variantSet \"animation\" =", &[]);
            // Each variant's text is written on the thread pool, then appended in order.
            let parts: Vec<VariantText> = sampled
                .par_iter()
                .zip(&lines)
                .enumerate()
                .map(|(i, (take, line))| {
                    let paths = ctx.material_paths.clone();
                    let mut c = Ctx { line, material_paths: paths, warnings: Vec::new(), ..ctx };
                    let mut vt = t.beside();
                    let meta = v.metadata(&mut vt, i);
                    vt.open_with(&string(&v.names[i]), &meta);
                    let mut names = Vec::new();
                    let prims = Prims { absolute: true, ..take.prims() };
                    prims.write(&mut vt, &mut c, siblings.clone(), &root, &mut names);
                    vt.close();
                    (vt, c.warnings, names)
                })
                .collect();
            for (i, (vt, warnings, names)) in parts.into_iter().enumerate() {
                t.append(vt);
                per_take.add(i, warnings);
                // Every take names its prims alike: report the renames once.
                if i == 0 {
                    renamed.extend(names);
                }
            }
            t.close();
        }
    }
    t.close();
    let names: Vec<&str> = match &animations {
        Some(all) => all.iter().map(|&a| scene.animations[a].name.as_str()).collect(),
        None => Vec::new(),
    };
    per_take.merged(&names).into_iter().for_each(|w| ctx.warn(w));
    if t.non_finite > 0 {
        ctx.warn(format!("{} non-finite number(s) written as 0", t.non_finite));
    }
    Ok(Layer {
        text: t.out,
        images: images.files,
        report: Report { warnings: ctx.warnings, renamed },
    })
}

/// One variant as written on a thread: its text, its warnings and the prim renames it made.
type VariantText = (Text, Vec<String>, Vec<(String, String, String)>);

/// One animation's node prims, sampled before anything is written (the root prim's type
/// depends on whether any animation has a rig).
struct Take {
    rigs: Vec<skel::Rig>,
    motion: skel::Motion,
    xforms: Vec<xform::NodeXform>,
    points: HashMap<usize, meshes::Points>,
    /// The nodes' hidden state and shown mesh at the timeline's first frame.
    hidden: Vec<bool>,
    mesh_shown: Vec<Option<usize>>,
    visibility: HashMap<usize, Vec<(f64, bool)>>,
    /// Rig index by mesh node.
    rigged: HashMap<usize, usize>,
}

impl Take {
    /// Samples the node prims of `line` ([`skel::rigs`], [`xform::node_xforms`],
    /// [`deform`], [`params::visibility`]); warnings go to `ctx`.
    fn sample(ctx: &mut Ctx, line: &xform::Timeline) -> Take {
        let scene = ctx.scene;
        let skinned: Vec<usize> = deform::deformed_nodes(scene, line)
            .into_iter()
            .filter(|&k| {
                scene.nodes[k]
                    .mesh
                    .and_then(|m| scene.meshes.get(m))
                    .is_some_and(|m| m.skin.is_some() || !m.morph_targets.is_empty())
            })
            .collect();
        let (rigs, motion, rig_warnings) = skel::rigs(scene, line, &skinned);
        rig_warnings.into_iter().for_each(|w| ctx.warn(w));
        let xforms = xform::node_xforms(scene, line);
        if xforms.iter().any(|x| x.capped) {
            ctx.warn("a node's transform reached the sample budget: written within it, not within the tolerance".into());
        }
        let rigged: HashMap<usize, usize> =
            rigs.iter().enumerate().map(|(i, r)| (r.node, i)).collect();
        let points = deformed_points(ctx, line, &rigged);
        let rest = scene.evaluate(line.animation, Time::Frame(line.range.0));
        let visibility = params::visibility(scene, line);
        Take {
            rigs,
            motion,
            xforms,
            points,
            hidden: rest.hidden,
            mesh_shown: rest.mesh,
            visibility,
            rigged,
        }
    }

    /// The node prims' inputs.
    fn prims(&self) -> Prims<'_> {
        Prims {
            xforms: &self.xforms,
            points: &self.points,
            rigs: self.rigged.iter().map(|(&k, &i)| (k, &self.rigs[i])).collect(),
            motion: &self.motion,
            hidden: &self.hidden,
            mesh_shown: &self.mesh_shown,
            visibility: &self.visibility,
            absolute: false,
        }
    }
}

/// The layer's metadata.
fn header(t: &mut Text, ctx: &mut Ctx, opts: &WriteOptions, line: &xform::Timeline) {
    let scene = ctx.scene;
    let up = opts.up.unwrap_or(scene.meta.axes.up);
    let up = match up {
        Axis::PosY => "Y",
        Axis::PosZ => "Z",
        other => {
            let (name, usd) = match other {
                Axis::NegY => ("-Y", "Y"),
                Axis::NegZ => ("-Z", "Z"),
                _ => ("X", "Y"),
            };
            ctx.warn(format!(
                "up axis {name}: USD's upAxis is Y or Z: written as {usd}, the geometry unchanged"
            ));
            usd
        }
    };
    let mpu = opts.metres_per_unit.unwrap_or(scene.meta.units.metres());
    let mpu = if mpu.is_finite() && mpu > 0.0 { mpu } else { 1.0 };
    t.line("#usda 1.0");
    t.line("(");
    t.line(&format!("    defaultPrim = \"{ROOT}\""));
    t.line(&format!(
        "    doc = {}",
        string(&format!("written by keyscene {}", env!("CARGO_PKG_VERSION")))
    ));
    t.field("    metersPerUnit", mpu);
    t.line(&format!("    upAxis = \"{up}\""));
    if line.animation.is_some() {
        let fps = t.num(line.fps);
        t.line(&format!("    timeCodesPerSecond = {fps}"));
        t.line(&format!("    framesPerSecond = {fps}"));
        t.field("    startTimeCode", line.range.0);
        t.field("    endTimeCode", line.range.1);
    }
    t.line(")");
    t.line("");
}

/// Warnings for what of the animation is not written: other animations (when `alone`: the
/// layer holds this one only), animated light roll, animated material properties.
fn animation_warnings(ctx: &mut Ctx, line: &xform::Timeline, alone: bool) {
    let scene = ctx.scene;
    let others = scene.animations.len().saturating_sub(usize::from(line.animation.is_some()));
    if alone && others > 0 {
        ctx.warn(format!("not written: {others} other animation(s) (a USD layer holds one timeline; choose one with --animation or --stack)"));
    }
    let Some(anim) = line.animation.and_then(|a| scene.animations.get(a)) else { return };
    let mut kinds: Vec<&str> = Vec::new();
    for c in &anim.channels {
        let kind = match &c.target {
            ChannelTarget::Roll(_)
                if !matches!(
                    scene.nodes.get(c.node).map(|n| &n.kind),
                    Some(NodeKind::Camera(_))
                ) =>
            {
                "light roll"
            }
            _ => continue,
        };
        if !kinds.contains(&kind) {
            kinds.push(kind);
        }
    }
    for kind in kinds {
        ctx.warn(format!("not written: animated {kind} (the value at the first frame is written)"));
    }
    if scene.material_channels.iter().any(|m| m.animation == line.animation.unwrap_or(usize::MAX)) {
        ctx.warn(
            "not written: animated material properties (the stored values are written)".into(),
        );
    }
}

/// The sampled points of every deformed mesh node ([`deform`]) but the rigged ones.
fn deformed_points(
    ctx: &mut Ctx,
    line: &xform::Timeline,
    rigged: &HashMap<usize, usize>,
) -> HashMap<usize, meshes::Points> {
    let scene = ctx.scene;
    let nodes: Vec<(usize, usize)> = deform::deformed_nodes(scene, line)
        .into_iter()
        .filter(|k| !rigged.contains_key(k))
        .filter_map(|k| Some((k, scene.meshes.get(scene.nodes[k].mesh?)?.positions.len())))
        .collect();
    if nodes.is_empty() {
        return HashMap::new();
    }
    let (points, thinned, incomplete) = deform::sample(scene, line, &nodes);
    ctx.warn(format!(
        "{} deformed mesh(es) (blend shapes, caches, morphs, or skins not written as rigs) written as posed points time samples (meshes UsdSkel cannot show as keyscene poses them: see the warnings naming them)",
        nodes.len()
    ));
    if thinned {
        ctx.warn(format!("deformed meshes sampled at fewer frames than every frame (more than {} points): posed points between them are interpolated", deform::POINT_BUDGET));
    }
    for &i in &incomplete {
        let k = nodes[i].0;
        ctx.warn(format!("node \"{}\": its posed vertices could not be carried into its frame at some time (a world matrix without inverse, or another vertex count): written as at the first frame", scene.nodes[k].name));
    }
    nodes.iter().map(|n| n.0).zip(points).collect()
}

/// The node prims' inputs.
struct Prims<'a> {
    xforms: &'a [xform::NodeXform],
    points: &'a HashMap<usize, meshes::Points>,
    rigs: HashMap<usize, &'a skel::Rig>,
    motion: &'a skel::Motion,
    hidden: &'a [bool],
    mesh_shown: &'a [Option<usize>],
    /// Mesh nodes whose shown state changes: [`params::visibility`].
    visibility: &'a HashMap<usize, Vec<(f64, bool)>>,
    /// Rig relationships name absolute paths (inside a variant, [`takes`]), not relative ones.
    absolute: bool,
}

impl Prims<'_> {
    /// Every node prim under `root` (whose children `siblings` names), depth first in scene
    /// order, without recursion (a hierarchy may be deep).
    fn write(
        &self,
        t: &mut Text,
        ctx: &mut Ctx,
        mut siblings: names::Siblings,
        root: &str,
        renamed: &mut Vec<(String, String, String)>,
    ) {
        enum Step {
            Open(usize),
            Close,
        }
        let scene = ctx.scene;
        // Per open prim: its name and the names its children take (paths are not kept: in a
        // deep hierarchy they would cost the square of its depth).
        let mut open: Vec<(String, names::Siblings)> = Vec::new();
        // Roots in node order, children in stored order (docs/usd.md, "Prims").
        let mut roots = scene.roots.clone();
        roots.sort_unstable();
        let mut stack: Vec<Step> = roots.iter().rev().map(|&r| Step::Open(r)).collect();
        while let Some(step) = stack.pop() {
            let k = match step {
                Step::Close => {
                    t.close();
                    open.pop();
                    continue;
                }
                Step::Open(k) => k,
            };
            let node = &scene.nodes[k];
            let names = match open.last_mut() {
                Some((_, s)) => s,
                None => &mut siblings,
            };
            let name = names.claim(&node.name);
            let mut meta = Vec::new();
            if name != node.name {
                meta.push(format!("displayName = {}", string(&node.name)));
                renamed.push(("node".into(), node.name.clone(), prim_path(root, &open, &name)));
            }
            t.open(&format!("def Xform \"{name}\""), &meta);
            self.transform(t, k);
            user_props::write(t, scene, ctx.line, k);
            let mut children = names::Siblings::default();
            // Rig targets inside a variant are absolute: the node prim's whole path.
            let at = (self.absolute && self.rigs.contains_key(&k)).then(|| {
                let mut p = root.to_string();
                for (n, _) in &open {
                    p.push('/');
                    p.push_str(n);
                }
                format!("{p}/{name}")
            });
            self.attachment(t, ctx, (k, at.as_deref()), &mut children);
            open.push((name, children));
            stack.push(Step::Close);
            stack.extend(node.children.iter().rev().map(|&c| Step::Open(c)));
        }
    }

    /// The node's `xformOp:transform` (none for a still identity).
    fn transform(&self, t: &mut Text, k: usize) {
        let x = &self.xforms[k];
        if x.values.len() == 1 && !x.reset && x.values[0] == DMat4::IDENTITY {
            return;
        }
        if x.trs {
            return trs_ops(t, x);
        }
        if x.values.len() == 1 {
            let m = t.matrix(x.values[0]);
            t.line(&format!("matrix4d xformOp:transform = {m}"));
        } else {
            t.time_samples("matrix4d xformOp:transform", &x.frames, &x.values, |t, &m| t.matrix(m));
        }
        let order = if x.reset {
            "\"!resetXformStack!\", \"xformOp:transform\""
        } else {
            "\"xformOp:transform\""
        };
        t.line(&format!("uniform token[] xformOpOrder = [{order}]"));
    }

    /// The node's mesh, camera or light, as a child prim; `at`: the node prim's path when rig
    /// relationships are absolute ([`Prims::absolute`]).
    fn attachment(
        &self,
        t: &mut Text,
        ctx: &mut Ctx,
        (k, at): (usize, Option<&str>),
        children: &mut names::Siblings,
    ) {
        let scene = ctx.scene;
        let node = &scene.nodes[k];
        match node.kind {
            NodeKind::Camera(c) if c < scene.cameras.len() => {
                let name = children.claim(&scene.cameras[c].name);
                cameras::camera(t, ctx, k, c, &name);
            }
            NodeKind::Light(l) if l < scene.lights.len() => {
                let name = children.claim(&scene.lights[l].name);
                cameras::light(t, ctx, k, l, &name);
            }
            _ => {}
        }
        let Some(m) = node.mesh.filter(|&m| m < scene.meshes.len()) else { return };
        let name = children.claim(&scene.meshes[m].name);
        let deformed = self.points.get(&k);
        // A rig's skeleton is the mesh prim's sibling: the skeleton's frame is the node's,
        // as the mesh's is (formats/usd/skel.rs).
        let rig = self.rigs.get(&k).map(|&r| {
            let skeleton = children.claim(&format!("{name}_skeleton"));
            skel::write_skeleton(t, scene, (r, r.index), self.motion, &skeleton, at);
            match at {
                Some(p) => (r, format!("{p}/{skeleton}"), format!("{p}/{name}/")),
                None => (r, format!("../{skeleton}"), String::new()),
            }
        });
        let points = match deformed {
            Some(p) => p.clone(),
            None => meshes::rest_points(ctx, k, &scene.meshes[m]),
        };
        let at = t.out.len();
        // Visibility goes on the mesh prim (not the node's, so its children show):
        // docs/usd.md, "Visibility".
        let mut vis = t.child();
        let rest_hidden = self.hidden.get(k).copied().unwrap_or(false)
            || self.mesh_shown.get(k).is_some_and(|s| s.is_none());
        params::write_visibility(&mut vis, rest_hidden, self.visibility.get(&k).map(Vec::as_slice));
        // A rig's mesh keeps its rest points; its normals are written by the rig when they
        // are one per vertex (`skel::write_binding`: UsdSkel skins vertex normals only), else
        // not at all.
        let rig = rig.as_ref().map(|(r, s, b)| (*r, s.as_str(), b.as_str()));
        meshes::write(t, ctx, (k, m), &name, &points, deformed.is_some() || rig.is_some(), rig);
        t.insert_after_open(at, vis);
    }
}

/// The path of prim `name` under the open prims `open` below `root`, for the report: whole
/// up to 16 levels, else `root/…/` and the last 16.
fn prim_path(root: &str, open: &[(String, names::Siblings)], name: &str) -> String {
    let skip = open.len().saturating_sub(16);
    let mut p = root.to_string();
    if skip > 0 {
        p.push_str("/…");
    }
    for (n, _) in &open[skip..] {
        p.push('/');
        p.push_str(n);
    }
    format!("{p}/{name}")
}

/// Writes `scene` to `path`, `.usda` or `.usdz` by its extension, atomically
/// ([`crate::write_atomically`]). A `.usda` gets its images beside it (when
/// [`WriteOptions::copy_textures`]), under [`crate::output`]'s rule; a `.usdz` holds the
/// layer (first, as `<stem>.usda`) and its images.
pub fn save(scene: &Scene, path: &Path, opts: &WriteOptions) -> Result<Report, crate::Error> {
    let layer = write(scene, opts)?;
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("").to_ascii_lowercase();
    let put = |bytes: &[u8]| {
        crate::write_atomically::<crate::Error>(path, |w| {
            w.write_all(bytes).map_err(|source| crate::Error::Io { path: path.into(), source })
        })
    };
    if ext == "usdz" {
        let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("scene");
        let root = format!("{}.usda", names::identifier(stem));
        let mut entries: Vec<(&str, &[u8])> = vec![(&root, layer.text.as_bytes())];
        entries.extend(layer.images.iter().map(|(n, b)| (n.as_str(), &b[..])));
        let zip = usdz::package(&entries).map_err(|e| crate::Error::Unsupported(e.to_string()))?;
        put(&zip)?;
        return Ok(layer.report);
    }
    if opts.copy_textures && !layer.images.is_empty() {
        let dir = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let files: Vec<crate::output::Companion> = layer
            .images
            .iter()
            .map(|(n, b)| crate::output::Companion {
                path: dir.join(n),
                bytes: b.clone(),
                what: format!("texture \"{n}\""),
            })
            .collect();
        let source = opts.source.clone().unwrap_or_else(|| crate::output::source_name(path));
        crate::output::write_companions(&files, &source)?;
    }
    put(layer.text.as_bytes())?;
    Ok(layer.report)
}

/// A moving node's `xformOp:translate`, `xformOp:orient` (`quatd`, `(w, x, y, z)`, each on the
/// side of the one before it) and `xformOp:scale` ([`xform::trs`] of each sample; an op that
/// does not change is one default value).
fn trs_ops(t: &mut Text, x: &xform::NodeXform) {
    let parts: Vec<(DVec3, DQuat, DVec3)> = x.values.iter().map(xform::trs).collect();
    let translations: Vec<DVec3> = parts.iter().map(|p| p.0).collect();
    let mut rotations: Vec<DQuat> = parts.iter().map(|p| p.1).collect();
    for k in 1..rotations.len() {
        if rotations[k].dot(rotations[k - 1]) < 0.0 {
            rotations[k] = -rotations[k];
        }
    }
    let scales: Vec<DVec3> = parts.iter().map(|p| p.2).collect();
    fn op<T: PartialEq>(
        t: &mut Text,
        decl: &str,
        frames: &[f64],
        values: &[T],
        f: impl Fn(&mut Text, &T) -> String,
    ) {
        if values.iter().all(|v| *v == values[0]) {
            let v = f(t, &values[0]);
            t.line(&format!("{decl} = {v}"));
        } else {
            t.time_samples(decl, frames, values, f);
        }
    }
    op(t, "double3 xformOp:translate", &x.frames, &translations, |t, v| t.vec3(*v));
    op(t, "quatd xformOp:orient", &x.frames, &rotations, |t, q| t.quat(*q));
    op(t, "double3 xformOp:scale", &x.frames, &scales, |t, v| t.vec3(*v));
    t.line("uniform token[] xformOpOrder = [\"xformOp:translate\", \"xformOp:orient\", \"xformOp:scale\"]");
}

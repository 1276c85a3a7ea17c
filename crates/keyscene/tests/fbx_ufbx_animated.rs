//! Differential test against the `ufbx` crate at animated times (issue 12 §2): for every
//! corpus FBX file that ufbx loads with default options, keyscene's `Scene::evaluate` and
//! ufbx's `evaluate_scene` (with `evaluate_skinning`) agree, at every sampled time of every
//! animation stack, on
//!
//! - every node's world matrix (`node_to_world`);
//! - every mesh node's deformed world-space vertex positions (skin, blend shapes, in-betweens:
//!   ufbx `skinned_position`, mapped by `geometry_to_world` when `skinned_is_local`) and its
//!   normals (ufbx `skinned_normal` per polygon corner, keyscene's stored normals carried by
//!   the normal matrix of `mesh_to_world`), both sampled to at most [`MAX_SAMPLES`] per mesh;
//! - morph weights (ufbx `blend_channel.weight`, keyscene `Pose::morph_weights`, paired by
//!   channel name);
//! - camera field of view, aspect and roll (ufbx `field_of_view_deg`, `aspect_ratio`, the
//!   `Roll` property) and light colour, intensity and cone (ufbx `color`, `intensity`,
//!   `inner_angle`, `outer_angle`);
//! - material colours and texture file names as ufbx's material model reports them, at that
//!   time (keyscene `Scene::material_at`, ufbx's evaluated `ufbx_material.fbx`): diffuse,
//!   ambient and emission colour × factor (`Material::effective_*`), and each colour and factor
//!   apart where the file stores it (ufbx `has_value`: diffuse, ambient, specular, emission and
//!   transparency colours and factors); the file name of the texture on the diffuse colour.
//!
//! Times, per stack (ufbx `anim_stacks`, paired with keyscene's animations by name, else by
//! position): `time_begin`, ¼, ½, ¾ and `time_end`, and two times between keys (0.37 of the
//! way between the stack's first two distinct key times, and between the two around its
//! middle key; nudged off whole frames). A file without stacks is compared once, at its stored
//! pose (ufbx's default `anim` at time 0 against `evaluate(None, …)`).
//!
//! Tolerance: 1e-4 × max(1, scene size), the scene size being the largest ufbx world
//! translation or vertex coordinate over all times; matrices' 3×3 parts relative to their
//! largest entry, normals and colours and angles 1e-4 absolute (angles in degrees: 1e-3).
//! Nodes pair by name (closest of several with one name); names that are not UTF-8 have no
//! partner and are skipped, as in `fbx_ufbx_differential`.
//!
//! One trial per file. After the run the test prints one summary: files compared, (file,
//! time) pairs agreeing, and the disagreements by kind. Known disagreements are either
//! classed in `triage.tsv` (defects other work fixes) or listed in [`EXCEPTIONS`] with the
//! evidence that ufbx is wrong (see `docs/fbx-vs-ufbx.md`).

mod common;

use common::ufbx_corpus::{to_dmat4, NodesByName};

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Mutex;

use glam::{DMat3, DMat4, DVec3};
use keyscene::anim::Time;
use keyscene::scene::{FovAxis, MapSlot, NodeKind, Scene};
use libtest_mimic::Trial;

/// Vertices (and corners) compared per mesh at each time, evenly spread.
const MAX_SAMPLES: usize = 256;

/// Known disagreements where ufbx is wrong: (file, kind, why). A listed file must still
/// disagree on that kind, and only on it: when it agrees, the trial fails.
const EXCEPTIONS: &[(&str, &str, &str)] = &[(
    "ufbx/motionbuilder_lights_7700_ascii.fbx",
    "light cone",
    "spots without OuterAngle: ufbx 0°, the FBX SDK 45° (FBX2glTF's GLB: outerConeAngle \
     0.785398), docs/fbx-vs-ufbx.md",
)];

/// What one file's comparison found.
#[derive(Default)]
struct Outcome {
    /// (file, time) pairs compared and how many agreed on everything.
    pairs: usize,
    agreeing: usize,
    /// Disagreements by kind: count and the first message.
    by_kind: BTreeMap<&'static str, (usize, String)>,
}

impl Outcome {
    fn disagree(&mut self, kind: &'static str, msg: impl FnOnce() -> String) -> bool {
        let e = self.by_kind.entry(kind).or_insert_with(|| (0, msg()));
        e.0 += 1;
        true
    }
}

/// Every file's outcome, for the summary.
static SUMMARY: Mutex<Vec<(String, Outcome)>> = Mutex::new(Vec::new());

fn v3(v: ufbx::Vec3) -> DVec3 {
    DVec3::new(v.x, v.y, v.z)
}

/// Evenly spread indices below `n`, at most [`MAX_SAMPLES`].
fn samples(n: usize) -> impl Iterator<Item = usize> {
    let step = n.div_ceil(MAX_SAMPLES).max(1);
    (0..n).step_by(step)
}

/// The sampled times of a stack: begin, ¼, ½, ¾, end and two between keys.
fn stack_times(stack: &ufbx::AnimStack, fps: f64) -> Vec<f64> {
    let (a, b) = (stack.time_begin, stack.time_end);
    let mut t: Vec<f64> = (0..5).map(|k| a + (b - a) * k as f64 / 4.0).collect();
    let mut keys: Vec<f64> = Vec::new();
    for layer in stack.layers.iter() {
        for value in layer.anim_values.iter() {
            for curve in value.curves.iter().flatten() {
                keys.extend(curve.keyframes.iter().map(|k| k.time));
            }
        }
    }
    keys.retain(|k| k.is_finite());
    keys.sort_by(f64::total_cmp);
    keys.dedup_by(|x, y| (*x - *y).abs() < 1e-9);
    let off_frame = |mut x: f64, lo: f64, hi: f64| {
        // Nudge off whole frames (within the interval).
        if fps > 0.0 && ((x * fps) - (x * fps).round()).abs() < 0.05 {
            x = (x + 0.2 / fps).min(lo + 0.9 * (hi - lo));
        }
        x
    };
    let between = |i: usize| -> Option<f64> {
        let (lo, hi) = (*keys.get(i)?, *keys.get(i + 1)?);
        Some(off_frame(lo + 0.37 * (hi - lo), lo, hi))
    };
    match (between(0), between(keys.len().saturating_sub(1) / 2)) {
        (Some(x), Some(y)) => t.extend([x, y]),
        _ => t.extend([off_frame(a + 0.37 * (b - a), a, b), off_frame(a + 0.61 * (b - a), a, b)]),
    }
    // A time within 1e-9 s of a key is that key's time: ufbx's seconds and keyscene's frames
    // round one instant an ulp apart, and on a stepped key that ulp picks the value
    // (`maya_late_stepped_tangents_7700_ascii.fbx`: ¼ of the stack is its second key).
    for x in &mut t {
        if let Some(k) = keys.iter().find(|k| (**k - *x).abs() < 1e-9) {
            *x = *k;
        }
    }
    t
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol || (a.is_nan() && b.is_nan())
}

/// Compares one posed time; returns whether everything agreed.
#[allow(clippy::too_many_arguments)]
fn compare_time(
    (scene, by_name): (&Scene, &NodesByName),
    anim: Option<usize>,
    theirs: &ufbx::Scene,
    t: f64,
    when: &str,
    size: f64,
    out: &mut Outcome,
) -> bool {
    let pose = match anim {
        Some(a) => scene.evaluate(Some(a), Time::Seconds(t)),
        None => scene.evaluate(None, Time::Frame(0.0)),
    };
    let tol = 1e-4 * size;
    let mut bad = false;
    let nodes: Vec<&ufbx::Node> =
        theirs.nodes.iter().map(|n| &**n).filter(|n| !n.is_root).collect();
    let ranks = NodesByName::ranks(nodes.iter().map(|n| &*n.element.name));
    for (node, rank) in nodes.into_iter().zip(ranks) {
        let name: &str = &node.element.name;
        let want = to_dmat4(&node.node_to_world);
        // Of several nodes with one name and one place (Maya's LOD groups), a mesh node pairs
        // with the one showing a mesh of the same counts.
        let same_mesh = node.mesh.as_ref().and_then(|mesh| {
            by_name.named(name).iter().copied().find(|&i| {
                let (l, t) = common::ufbx_corpus::difference(pose.world[i], want, size);
                l.max(t) <= 1e-4
                    && pose.mesh[i].map(|m| &scene.meshes[m]).is_some_and(|m| {
                        (m.positions.len(), m.corner_vertices.len())
                            == (mesh.num_vertices, mesh.num_indices)
                    })
            })
        });
        let pair = || {
            by_name.pair(name, rank, 1e-4, |i| {
                let (l, t) = common::ufbx_corpus::difference(pose.world[i], want, size);
                l.max(t)
            })
        };
        let Some(i) = same_mesh.or_else(|| pair().map(|p| p.1)) else {
            continue;
        };
        let (l, tr) = common::ufbx_corpus::difference(pose.world[i], want, size);
        let err = l.max(tr);
        if err.is_nan() || err > 1e-4 {
            bad |= out.disagree("world matrix", || {
                format!(
                    "node {name:?} at {when}: world differs by {err:e}\nkeyscene {}\nufbx     {want}",
                    pose.world[i]
                )
            });
        }

        // Mesh: deformed positions, normals and morph weights.
        if let Some(mesh) = node.mesh.as_ref() {
            let ours = pose.mesh[i];
            match ours.map(|m| &scene.meshes[m]) {
                Some(m)
                    if m.positions.len() == mesh.num_vertices
                        && m.corner_vertices.len() == mesh.num_indices =>
                {
                    bad |= compare_mesh(scene, &pose, i, node, mesh, when, tol, out);
                }
                got => {
                    let got = got.map(|m| (m.positions.len(), m.corner_vertices.len()));
                    bad |= out.disagree("mesh counts", || {
                        format!(
                            "mesh of {name:?}: (vertices, indices) ufbx {:?}, keyscene {got:?}",
                            (mesh.num_vertices, mesh.num_indices)
                        )
                    });
                }
            }
        }

        // Camera.
        if let (Some(cam), NodeKind::Camera(c)) = (node.camera.as_ref(), &scene.nodes[i].kind) {
            let ours = &scene.cameras[*c];
            let fov = pose.camera_fov[*c];
            let want_fov = match ours.fov_axis {
                FovAxis::Horizontal => cam.field_of_view_deg.x,
                FovAxis::Vertical => cam.field_of_view_deg.y,
            };
            if !close(fov, want_fov, 1e-3) {
                bad |= out.disagree("camera fov", || {
                    format!("camera {name:?} at {when}: fov keyscene {fov} ({:?}), ufbx {want_fov} (x, y = {}, {})",
                        ours.fov_axis, cam.field_of_view_deg.x, cam.field_of_view_deg.y)
                });
            }
            if let Some(aspect) = ours.aspect {
                if !close(aspect, cam.aspect_ratio, 1e-4) {
                    bad |= out.disagree("camera aspect", || {
                        format!(
                            "camera {name:?}: aspect keyscene {aspect}, ufbx {}",
                            cam.aspect_ratio
                        )
                    });
                }
            }
            let want_roll = cam.element.props.find_prop("Roll").map_or(0.0, |p| p.value_vec4.x);
            let roll = pose.camera_roll[*c];
            if !close(roll, want_roll, 1e-3) {
                bad |= out.disagree("camera roll", || {
                    format!("camera {name:?} at {when}: roll keyscene {roll}, ufbx {want_roll}")
                });
            }
        }

        // Light.
        if let (Some(light), NodeKind::Light(l)) = (node.light.as_ref(), &scene.nodes[i].kind) {
            let (color, intensity) = (pose.light_color[*l], pose.light_intensity[*l]);
            let (inner, outer) = (pose.light_hotspot[*l], pose.light_falloff[*l]);
            let spot = light.type_ == ufbx::LightType::Spot;
            let checks = [
                ("light colour", (color - v3(light.color)).abs().max_element(), 1e-4),
                ("light intensity", (intensity - light.intensity).abs(), 1e-4),
                // A cone means nothing but on a spot (docs/fbx-vs-ufbx.md, "cone defaults").
                ("light cone", if spot { (inner - light.inner_angle).abs() } else { 0.0 }, 1e-3),
                ("light cone", if spot { (outer - light.outer_angle).abs() } else { 0.0 }, 1e-3),
            ];
            for (kind, err, tol) in checks {
                if !(err <= tol) {
                    bad |= out.disagree(kind, || {
                        format!(
                            "light {name:?} at {when}: {kind} differs by {err}: keyscene colour {color} intensity {intensity} cone {inner}–{outer}, ufbx colour {:?} intensity {} cone {}–{}",
                            (light.color.x, light.color.y, light.color.z), light.intensity, light.inner_angle, light.outer_angle
                        )
                    });
                }
            }
        }
    }
    bad |= compare_materials(scene, anim, t, theirs, when, out);
    !bad
}

/// Deformed positions, normals and morph weights of ufbx mesh node `node` against keyscene
/// node `i`; returns whether anything disagreed.
#[allow(clippy::too_many_arguments)]
fn compare_mesh(
    scene: &Scene,
    pose: &keyscene::anim::Pose,
    i: usize,
    node: &ufbx::Node,
    mesh: &ufbx::Mesh,
    when: &str,
    tol: f64,
    out: &mut Outcome,
) -> bool {
    let name: &str = &node.element.name;
    let mut bad = false;
    let m = pose.mesh[i].expect("a mesh");
    let ours = &scene.meshes[m];
    let to_world =
        if mesh.skinned_is_local { to_dmat4(&node.geometry_to_world) } else { DMat4::IDENTITY };
    let got = pose.world_positions(scene, i);
    let skinned = &mesh.skinned_position.values;
    if skinned.len() == mesh.num_vertices {
        for v in samples(mesh.num_vertices) {
            let want = to_world.transform_point3(v3(skinned[v]));
            let err = (got[v] - want).abs().max_element();
            let both_nan = got[v].is_nan() && want.is_nan();
            if !(err <= tol || both_nan) {
                bad |= out.disagree("deformed positions", || {
                    format!(
                        "mesh {name:?} at {when}: vertex {v} keyscene {}, ufbx {want} (deformers: {} skin, {} blend, {} cache)",
                        got[v],
                        mesh.skin_deformers.len(),
                        mesh.blend_deformers.len(),
                        mesh.cache_deformers.len()
                    )
                });
                break;
            }
        }
    }

    // Normals: only where both have stored ones.
    let normals = &mesh.skinned_normal;
    if let (Some(stored), true) = (&ours.normals, normals.exists && !mesh.generated_normals) {
        let nm = if mesh.skinned_is_local {
            keyscene::scene::geometry::normal_matrix(to_dmat4(&node.geometry_to_world))
        } else {
            DMat3::IDENTITY
        };
        let our_nm = keyscene::scene::geometry::normal_matrix(pose.mesh_to_world(scene, i));
        let corner_polygon: Vec<usize> = (0..ours.polygon_count())
            .flat_map(|p| ours.polygon_corners(p).map(move |_| p))
            .collect();
        for c in samples(mesh.num_indices) {
            let (Some(&ix), Some(&p)) = (normals.indices.get(c), corner_polygon.get(c)) else {
                continue;
            };
            let Some(&n) = normals.values.get(ix as usize) else { continue };
            let want = (nm * v3(n)).normalize_or_zero();
            let v = ours.corner_vertices[c];
            let Some(g) = stored.get(v, c, p) else { continue };
            let g = (our_nm * g.as_dvec3()).normalize_or_zero();
            if want == DVec3::ZERO || g == DVec3::ZERO {
                continue;
            }
            let err = (g - want).abs().max_element();
            if !(err <= 1e-4) {
                bad |= out.disagree("normals", || {
                    format!(
                        "mesh {name:?} at {when}: corner {c} normal keyscene {g}, ufbx {want} (deformers: {} skin, {} blend)",
                        mesh.skin_deformers.len(),
                        mesh.blend_deformers.len()
                    )
                });
                break;
            }
        }
    }

    // Morph weights, by channel name.
    for deformer in mesh.blend_deformers.iter() {
        for ch in deformer.channels.iter() {
            let cname: &str = &ch.element.name;
            let Some(k) = ours.morph_targets.iter().position(|t| t.name == cname) else {
                continue;
            };
            let w = pose.morph_weights.get(m).and_then(|w| w.get(k)).copied().unwrap_or(0.0);
            if !close(w, ch.weight, 1e-4) {
                bad |= out.disagree("morph weight", || {
                    format!(
                        "mesh {name:?} at {when}: channel {cname:?} weight keyscene {w}, ufbx {}",
                        ch.weight
                    )
                });
            }
        }
    }
    bad
}

/// Material colours and factors and the diffuse texture's file name at the evaluated time
/// (`anim`, `t` seconds), by material name; returns whether anything disagreed.
fn compare_materials(
    scene: &Scene,
    anim: Option<usize>,
    t: f64,
    theirs: &ufbx::Scene,
    when: &str,
    out: &mut Outcome,
) -> bool {
    let mut bad = false;
    for mat in theirs.materials.iter() {
        let name: &str = &mat.element.name;
        // One material per name on both sides (names that are not UTF-8 are made valid
        // differently, and then several share one name).
        let mut same = (0..scene.materials.len()).filter(|&m| scene.materials[m].name == name);
        let (Some(index), None) = (same.next(), same.next()) else { continue };
        if theirs.materials.iter().filter(|m| m.element.name == name).count() > 1 {
            continue;
        }
        let ours = scene.material_at(anim, index, Time::Seconds(t)).expect("a material");
        let f = &mat.fbx;
        // A colour or factor the file stores (ufbx `has_value`: a property of the material or
        // its template); the product of colour and factor where the colour is stored (a
        // missing factor is 1 on both sides: ufbx `ufbxi_update_factor`). Where the file
        // stores no colour the default is each side's own choice (ufbx: 0).
        let rgb = |c: &ufbx::MaterialMap| {
            c.has_value.then(|| DVec3::new(c.value_vec4.x, c.value_vec4.y, c.value_vec4.z))
        };
        let scalar = |k: &ufbx::MaterialMap| k.has_value.then(|| DVec3::splat(k.value_vec4.x));
        let product = |c: &ufbx::MaterialMap, k: &ufbx::MaterialMap| {
            let s = if k.has_value { k.value_vec4.x } else { 1.0 };
            rgb(c).map(|c| c * s)
        };
        let v = |c: glam::Vec3| c.as_dvec3();
        let s = |x: f32| DVec3::splat(x as f64);
        // A PBR material (ufbx's shader type) that stores no Phong diffuse of its own (only
        // its template's): keyscene's Phong fields are filled from its PBR values
        // (docs/materials.md), so they are compared with ufbx's PBR model instead (the
        // template's Phong defaults are not the material's colours).
        let own_diffuse =
            mat.element.props.props.iter().any(|p| p.name == "DiffuseColor" || p.name == "Diffuse");
        use ufbx::ShaderType as T;
        let phong_shader = matches!(
            mat.shader_type,
            T::Unknown | T::FbxLambert | T::FbxPhong | T::BlenderPhong | T::WavefrontMtl
        );
        if !phong_shader && !own_diffuse {
            let p = &mat.pbr;
            let checks = [
                ("diffuse colour", v(ours.diffuse), rgb(&p.base_color)),
                ("diffuse factor", s(ours.diffuse_factor), scalar(&p.base_factor)),
                ("specular colour", v(ours.specular), rgb(&p.specular_color)),
                ("specular factor", s(ours.shininess_strength), scalar(&p.specular_factor)),
                ("emission colour", v(ours.emissive), rgb(&p.emission_color)),
                ("emission factor", s(ours.emissive_factor), scalar(&p.emission_factor)),
            ];
            for (what, got, want) in checks {
                let Some(want) = want else { continue };
                let err = (got - want).abs().max_element();
                if err.is_nan() || err > 1e-4 {
                    bad |= out.disagree("material colour", || {
                        format!("PBR material {name:?} at {when}: {what} keyscene {got}, ufbx PBR {want}")
                    });
                }
            }
        }
        let checks = if !phong_shader && !own_diffuse {
            Vec::new()
        } else {
            vec![
                (
                    "diffuse",
                    v(ours.effective_diffuse()),
                    product(&f.diffuse_color, &f.diffuse_factor),
                ),
                (
                    "ambient",
                    v(ours.effective_ambient()),
                    product(&f.ambient_color, &f.ambient_factor),
                ),
                (
                    "emission",
                    v(ours.effective_emissive()),
                    product(&f.emission_color, &f.emission_factor),
                ),
                ("diffuse colour", v(ours.diffuse), rgb(&f.diffuse_color)),
                ("diffuse factor", s(ours.diffuse_factor), scalar(&f.diffuse_factor)),
                ("ambient colour", v(ours.ambient), rgb(&f.ambient_color)),
                ("ambient factor", s(ours.ambient_factor), scalar(&f.ambient_factor)),
                ("specular colour", v(ours.specular), rgb(&f.specular_color)),
                ("specular factor", s(ours.shininess_strength), scalar(&f.specular_factor)),
                ("emission colour", v(ours.emissive), rgb(&f.emission_color)),
                ("emission factor", s(ours.emissive_factor), scalar(&f.emission_factor)),
                ("transparent colour", v(ours.transparent), rgb(&f.transparency_color)),
                (
                    "transparency factor",
                    s(ours.transparency_factor),
                    scalar(&f.transparency_factor),
                ),
            ]
        };
        for (what, got, want) in checks {
            let Some(want) = want else { continue };
            let err = (got - want).abs().max_element();
            if !(err <= 1e-4) {
                bad |= out.disagree("material colour", || {
                    format!("material {name:?} at {when}: {what} keyscene {got}, ufbx {want}")
                });
            }
        }
        let base = |s: &str| s.rsplit(['/', '\\']).next().unwrap_or("").to_ascii_lowercase();
        let want = f
            .diffuse_color
            .texture
            .as_ref()
            .map(|t| base(&t.relative_filename))
            .filter(|s| !s.is_empty())
            .or_else(|| f.diffuse_color.texture.as_ref().map(|t| base(&t.filename)));
        let got = ours.maps.iter().find(|m| m.slot == MapSlot::Diffuse).map(|m| base(&m.file));
        // Where the Phong diffuse has no file texture, keyscene's diffuse map is the PBR base
        // colour's (docs/materials.md: 3ds Max and Maya connect maps to the PBR properties
        // only): ufbx's `pbr.base_color` texture, or one of its file textures (a layered one).
        let pbr_files: Vec<String> = mat
            .pbr
            .base_color
            .texture
            .as_ref()
            .map(|t| {
                std::iter::once(t)
                    .chain(t.file_textures.iter())
                    .flat_map(|t| [base(&t.relative_filename), base(&t.filename)])
                    .filter(|s| !s.is_empty())
                    .collect()
            })
            .unwrap_or_default();
        let no_phong_file = want.as_ref().is_none_or(|w| w.is_empty());
        let agree = match (&want, &got) {
            _ if no_phong_file && got.as_ref().is_some_and(|g| pbr_files.contains(g)) => true,
            (Some(w), Some(g)) => w == g || w.is_empty() && g.is_empty(),
            (None, None) => true,
            (Some(w), None) => w.is_empty(),
            (None, Some(_)) => false,
        };
        if !agree {
            bad |= out.disagree("texture file", || {
                format!(
                    "material {name:?}: diffuse texture keyscene {got:?}, ufbx {want:?} \
                     (PBR base colour: {pbr_files:?})"
                )
            });
        }
    }
    bad
}

fn check(fbx_dir: &Path, rel: &str) -> Result<Outcome, String> {
    let (scene, theirs) = common::ufbx_corpus::load_both(&fbx_dir.join(rel))?;
    let opts = || ufbx::EvaluateOpts { evaluate_skinning: true, ..Default::default() };
    let fps = theirs.settings.frames_per_second;

    // Every (stack, time) to compare: keyscene's animation, ufbx's anim, the time.
    let mut jobs: Vec<(Option<usize>, &ufbx::Anim, f64, String)> = Vec::new();
    if theirs.anim_stacks.is_empty() {
        jobs.push((None, &theirs.anim, 0.0, "the stored pose".to_string()));
    }
    for (k, stack) in theirs.anim_stacks.iter().enumerate() {
        let name: &str = &stack.element.name;
        let ours = common::ufbx_corpus::matching_animation(&scene, k, name);
        for t in stack_times(stack, fps) {
            jobs.push((ours, &stack.anim, t, format!("stack {name:?} t = {t} s")));
        }
    }

    let mut posed = Vec::new();
    for (ours, anim, t, when) in jobs {
        let s = ufbx::evaluate_scene(&theirs, anim, t, opts())
            .map_err(|e| format!("ufbx evaluate: {:?}", e.description))?;
        posed.push((ours, t, when, s));
    }
    let size = posed
        .iter()
        .flat_map(|(.., s)| {
            let worlds = s.nodes.iter().map(|n| to_dmat4(&n.node_to_world).col(3).truncate());
            let verts = s.nodes.iter().flat_map(|n| {
                let to_world = to_dmat4(&n.geometry_to_world);
                n.mesh.iter().flat_map(move |m| {
                    let local = m.skinned_is_local;
                    samples(m.skinned_position.values.len()).map(move |v| {
                        let p = v3(m.skinned_position.values[v]);
                        if local {
                            to_world.transform_point3(p)
                        } else {
                            p
                        }
                    })
                })
            });
            worlds.chain(verts).collect::<Vec<_>>()
        })
        .map(|p| p.abs().max_element())
        .filter(|v| v.is_finite())
        .fold(1.0f64, f64::max);

    let mut out = Outcome::default();
    let by_name = NodesByName::new(&scene, str::to_string);
    for (ours, t, when, s) in &posed {
        out.pairs += 1;
        if !theirs.anim_stacks.is_empty() && ours.is_none() {
            out.disagree("animation missing", || format!("{when}: keyscene has no such stack"));
            continue;
        }
        if compare_time((&scene, &by_name), *ours, s, *t, when, size, &mut out) {
            out.agreeing += 1;
        }
    }
    Ok(out)
}

fn main() {
    let corpus = common::corpus();
    let mut trials = Vec::new();
    for common::ufbx_corpus::FbxFile { dir, rel, ufbx_loads, .. } in
        common::ufbx_corpus::fbx_files(&corpus)
    {
        if !ufbx_loads {
            trials.push(
                Trial::test(format!("ignored: ufbx cannot load it :: {rel}"), || Ok(()))
                    .with_ignored_flag(true),
            );
            continue;
        }
        let exceptions: Vec<(&str, &str)> =
            EXCEPTIONS.iter().filter(|(f, ..)| *f == rel).map(|&(_, k, why)| (k, why)).collect();
        let name = if exceptions.is_empty() {
            format!("ufbx_animated::{rel}")
        } else {
            format!("ufbx_animated::{rel} (listed exception)")
        };
        trials.push(common::corpus_trial(name, &corpus, move |_| {
            let out = match check(&dir, &rel) {
                Ok(o) => o,
                Err(e) => {
                    let mut o = Outcome::default();
                    o.disagree("load", || e.clone());
                    o
                }
            };
            let mut errors = Vec::new();
            for (kind, (n, first)) in &out.by_kind {
                if !exceptions.iter().any(|(k, _)| k == kind) {
                    errors.push(format!("{kind} ({n}×): {first}"));
                }
            }
            for (kind, why) in &exceptions {
                if !out.by_kind.contains_key(kind) {
                    errors.push(format!("now agrees on {kind}; remove its exception ({why})"));
                }
            }
            SUMMARY.lock().unwrap_or_else(|e| e.into_inner()).push((rel.clone(), out));
            if errors.is_empty() {
                Ok(())
            } else {
                Err(format!("{rel}:\n{}", errors.join("\n")).into())
            }
        }));
    }
    let args = libtest_mimic::Arguments::from_args();
    let trials = common::triage::apply(env!("CARGO_CRATE_NAME"), trials, corpus.is_some(), &args);
    let known = if args.include_ignored || args.ignored {
        0
    } else {
        trials.iter().filter(|t| t.kind().starts_with("known defect")).count()
    };
    let conclusion = libtest_mimic::run(&args, trials);
    print_summary(known);
    conclusion.exit()
}

/// Prints the run's summary; `known` trials were left out as known defects (`triage.tsv`,
/// run them with `--include-ignored`).
fn print_summary(known: usize) {
    let summary = SUMMARY.lock().unwrap_or_else(|e| e.into_inner());
    if summary.is_empty() {
        return;
    }
    let (mut pairs, mut agreeing) = (0, 0);
    let mut kinds: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for (_, o) in summary.iter() {
        pairs += o.pairs;
        agreeing += o.agreeing;
        for (k, (n, _)) in &o.by_kind {
            let e = kinds.entry(k).or_default();
            e.0 += 1;
            e.1 += n;
        }
    }
    println!(
        "\nufbx animated differential: {} files compared, {agreeing} of {pairs} (file, time) pairs agree ({:.2} %)",
        summary.len(),
        100.0 * agreeing as f64 / pairs.max(1) as f64
    );
    for (k, (files, n)) in kinds {
        println!("  {k}: {n} disagreements in {files} files");
    }
    if known > 0 {
        println!(
            "  ({known} files not run: known defects in triage.tsv; --include-ignored runs them)"
        );
    }
}

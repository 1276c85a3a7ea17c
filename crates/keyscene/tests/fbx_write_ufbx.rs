//! The FBX writer against the `ufbx` crate (issue #14 §1, "Proof"): every corpus 3DS file and
//! every positive corpus FBX file (MANIFEST.md's negative ones left out; every
//! [`FBX_SAMPLE_STEP`]th in path order) are loaded by keyscene, written with `formats::fbx::export::write`, and the written bytes
//! are
//!
//! 1. read back by our own parser with no warnings (`fbx::parse`), its `Definitions` counts
//!    equal to the objects written, every connection's ends existing, ids unique and non-zero;
//! 2. loaded by ufbx (default options) without an error or a warning
//!    (`ufbx_metadata::warnings`);
//! 3. evaluated by ufbx at the first animation's first, middle (integer) and last frame, or at
//!    rest: every node's world matrix agrees with keyscene's evaluation of the *source* at the
//!    same time, 1e-4 × max(1, scene size) (`common::ufbx_corpus::difference`); at the first
//!    of those times every mesh's world vertex positions agree too, and skinned or blend-shaped
//!    meshes' deformed world vertices (ufbx `evaluate_skinning`, `skinned_position`) at every
//!    one of the integer times (geometry-cached meshes and 3DS mesh swaps left out);
//! 4. evaluated by ufbx *between* frames (the half frame after the first, and four times 0.37
//!    of a frame past an integer frame spread over the range): every node whose animation the
//!    writer kept key for key (it and its ancestors are not in `Report::resampled`) agrees
//!    there too — the written curves are the source's, not a sample of it;
//! 5. cameras and lights look the same way: at every time of 3. a camera's view direction and
//!    up in ufbx (its node's world +X and +Y, FBX's camera axes) equal the source's in
//!    keyscene's pose (−Z and +Y for 3DS/glTF/3DA sources, +X and +Y for FBX ones), and a
//!    light's direction (FBX −Y) the source's (−Z, or −Y for FBX);
//! 6. cameras and lights: ufbx's field of view, clip planes, light kind, colour and intensity
//!    of the written `NodeAttribute`s equal the source's;
//! 7. texture maps: ufbx finds each on the material map of its slot with its file name and
//!    embedded bytes, and our reader gives them back ([`compare_textures`]).
//!
//! Every source is also written as ASCII 7.4: the other sources' ASCII files get 1., 2. and
//! the ASCII layout lint (`write_ascii::`, [`check_ascii_load`]), and every
//! [`ENCODING_SAMPLE_STEP`]th source (path order over the same list) is written as
//! binary 7.5 and as ASCII 7.4 and checked by 1.–7. the same way (`write_ufbx_7500::`,
//! `write_ufbx_ascii::`), with a layout lint of its own ([`lint_layout`]: 7.5's version and
//! 64-bit record headers, the SDK footer, ASCII's header line), and the two encodings carry the
//! same scene (`encodings_agree::`, `encodings_agree_ascii::`: the binary and the ASCII file,
//! read back and written again, give the same bytes; two writes of a scene are identical).
//! FBX → FBX → FBX (`stable::` every source, `stable_ascii::` every [`ENCODING_SAMPLE_STEP`]th):
//! the source written (A), read back by keyscene as a file beside the source and written again
//! (B), in binary 7.4 / ASCII, gives A's bytes exactly; the first differing line of the two as
//! ASCII is reported. Sources with a non-finite rest transform (NaN is written, our reader
//! replaces it) pass without being compared; the sources that are not stable yet are known
//! defects in `tests/triage.tsv` (classes `fbx-write-*`).
//!
//! `keep_pivots::` (every FBX source with pivots, pre/post rotation, an inherit type other than
//! RSrs or a geometry transform): written with `--fbx-keep-pivots`, 1.–7. hold and the stack
//! is in the written file ([`check_keep_pivots`]).
//!
//! A source keyscene cannot load (the negative `wrong.3ds`) is reported *ignored*. A second opinion from the FBX SDK itself:
//! `fbx2gltf::`/`fbx2gltf_ascii::` run FBX2glTF 0.9.7 (`/opt/keyscene-oracles`, see
//! `shared/oracles/install_oracles.sh`) on the 3DS files written as binary and as ASCII and on the written (binary) FBX files whose
//! source has a skin or blend shapes (its glTF must then have a skin / morph targets too);
//! ignored when it is absent.

mod common;

use common::ufbx_corpus::{to_dmat4, NodesByName};

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use glam::{DMat4, DVec3};
use keyscene::anim::Time;
use keyscene::formats::fbx::{self, export};
use keyscene::scene::Scene;
use libtest_mimic::Trial;

/// One FBX corpus file of this many (positive files, path order) is converted.
const FBX_SAMPLE_STEP: usize = 1;

/// One source of this many (the list [`sources`] gives, in its order) is also written as 7.5
/// and as ASCII, and checked for FBX → FBX byte stability.
const ENCODING_SAMPLE_STEP: usize = 4;

/// The encodings checked.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Enc {
    Binary7400,
    Binary7500,
    Ascii,
    /// Binary 7.4 with `WriteOptions::keep_pivots` (`--fbx-keep-pivots`).
    KeepPivots,
}

fn options(enc: Enc) -> export::WriteOptions {
    let mut o = export::WriteOptions::default();
    match enc {
        Enc::Binary7400 => {}
        Enc::Binary7500 => o.binary.version = 7500,
        Enc::Ascii => o.ascii = true,
        Enc::KeepPivots => o.keep_pivots = true,
    }
    o
}

/// Whether node `i` has a transform stack beyond T·R·S: FBX pivots or pre/post rotation, an
/// inherit type other than RSrs, or a geometry transform.
fn has_stack(scene: &Scene, i: usize) -> bool {
    let n = &scene.nodes[i];
    n.pivots.is_some()
        || n.inherit != keyscene::scene::InheritType::RSrs
        || n.geometry_transform() != DMat4::IDENTITY
}

/// `keep_pivots::` (issue #14 §1, `--fbx-keep-pivots`): the source written with its transform
/// stack passes 1.–7. as [`check`] (ufbx's evaluation of the written file equals keyscene's of
/// the source, between frames too where keys were kept), and the stack is in the file: read
/// back by keyscene, every node not resampled keeps its source's inherit type and pivots
/// (within 1e-9 × max(1, |value|)), and every mesh node whose geometry transform was not
/// baked (its `Geometry` is shared with no other transform) has it back within 1e-9.
fn check_keep_pivots(path: &Path) -> Result<(), String> {
    check(path, Enc::KeepPivots)?;
    let (scene, _) = keyscene::load(path).map_err(|e| format!("keyscene cannot load it: {e}"))?;
    let (bytes, report) =
        export::write(&scene, &options(Enc::KeepPivots)).map_err(|e| format!("write: {e}"))?;
    let (back, _) = fbx::read(&bytes, &Default::default())
        .map_err(|e| format!("keyscene cannot read the written file: {e}"))?;
    if back.nodes.len() != scene.nodes.len() {
        return Err(format!("{} nodes written, {} read back", scene.nodes.len(), back.nodes.len()));
    }
    let resampled: HashSet<usize> = report.resampled.iter().map(|r| r.node).collect();
    let near =
        |a: DVec3, b: DVec3| (a - b).abs().max_element() <= 1e-9 * a.abs().max_element().max(1.0);
    let mut kept = 0;
    for (i, (a, b)) in scene.nodes.iter().zip(&back.nodes).enumerate() {
        if resampled.contains(&i) || !has_stack(&scene, i) {
            continue;
        }
        if a.inherit != b.inherit {
            return Err(format!(
                "node {:?}: inherit {:?} read back as {:?}",
                a.name, a.inherit, b.inherit
            ));
        }
        if let Some(pa) = a.pivots.as_deref() {
            let pb = b.pivots.as_deref().cloned().unwrap_or_default();
            let same = near(pa.rotation_offset, pb.rotation_offset)
                && near(pa.rotation_pivot, pb.rotation_pivot)
                && near(pa.scaling_offset, pb.scaling_offset)
                && near(pa.scaling_pivot, pb.scaling_pivot)
                && pa.pre_rotation.abs_diff_eq(pb.pre_rotation, 1e-9)
                    | pa.pre_rotation.abs_diff_eq(-pb.pre_rotation, 1e-9)
                && pa.post_rotation.abs_diff_eq(pb.post_rotation, 1e-9)
                    | pa.post_rotation.abs_diff_eq(-pb.post_rotation, 1e-9);
            if !same {
                return Err(format!("node {:?}: pivots {pa:?} read back as {pb:?}", a.name));
            }
        }
        let g = a.geometry_transform();
        let skinned_or_morphed = a
            .mesh
            .and_then(|m| scene.meshes.get(m))
            .is_some_and(|m| m.skin.is_some() || !m.morph_targets.is_empty());
        if a.mesh.is_some() && g != DMat4::IDENTITY && !skinned_or_morphed {
            let gb = b.geometry_transform();
            let scale = g.to_cols_array().iter().fold(1.0f64, |m, v| m.max(v.abs()));
            // A geometry transform that is not exactly T·R·S is baked (and reads back as
            // the identity); any other must come back.
            if gb != DMat4::IDENTITY && !gb.abs_diff_eq(g, 1e-9 * scale) {
                return Err(format!("node {:?}: geometry transform {g} read back as {gb}", a.name));
            }
        }
        kept += 1;
    }
    if kept == 0 && scene.nodes.iter().enumerate().any(|(i, _)| has_stack(&scene, i)) {
        return Err("every node with a transform stack was resampled: none kept".into());
    }
    Ok(())
}

/// The layout of the written bytes for `enc`: binary — the magic, the version at byte 23, our
/// reader parsing it as that version (so 7.5's 64-bit record headers and 25-byte null records
/// nest), and the SDK footer (the length a multiple of 16, the fixed 16-byte tail, 120 zeros
/// and the version before it); ASCII — the SDK's first line and our reader taking it as ASCII
/// of that version.
fn lint_layout(bytes: &[u8], enc: Enc) -> Result<(), String> {
    let doc = fbx::parse(bytes, &Default::default()).map_err(|e| format!("our reader: {e}"))?;
    if enc == Enc::Ascii {
        if !bytes.starts_with(b"; FBX 7.4.0 project file\n") {
            return Err("the ASCII file does not start with `; FBX 7.4.0 project file`".into());
        }
        if doc.encoding != fbx::Encoding::Ascii || doc.version != 7400 {
            return Err(format!("read as {:?} {}", doc.encoding, doc.version));
        }
        return Ok(());
    }
    let version = if enc == Enc::Binary7500 { 7500u32 } else { 7400 };
    let n = bytes.len();
    let tail = [
        0xf8, 0x5a, 0x8c, 0x6a, 0xde, 0xf5, 0xd9, 0x7e, 0xec, 0xe9, 0x0c, 0xe3, 0x75, 0x8f, 0x29,
        0x0b,
    ];
    if !bytes.starts_with(b"Kaydara FBX Binary  \0\x1a\0")
        || bytes[23..27] != version.to_le_bytes()
        || doc.version != version
    {
        return Err(format!("header: not binary FBX {version}"));
    }
    if n % 16 != 0
        || bytes[n - 16..] != tail
        || bytes[n - 136..n - 16].iter().any(|&b| b != 0)
        || bytes[n - 140..n - 136] != version.to_le_bytes()
    {
        return Err("the footer is not the SDK's (alignment, version, zeros, tail)".into());
    }
    Ok(())
}

/// FBX2glTF from the oracle install.
const FBX2GLTF: &str = "/opt/keyscene-oracles/node/node_modules/fbx2gltf/bin/Linux/FBX2glTF";

/// Our structural lint over the written bytes (1. above).
fn lint(bytes: &[u8]) -> Result<(), String> {
    let mut doc = fbx::parse(bytes, &Default::default()).map_err(|e| format!("our reader: {e}"))?;
    // ASCII spells a source's inf/NaN as `inf`/`nan`, which our reader reads with its one
    // warning per kind (the binary file holds them without one).
    doc.warnings.retain(|w| {
        !matches!(w, fbx::Warning::OddNumbers { kind: fbx::ascii::OddNumber::NonFinite, .. })
    });
    if !doc.warnings.is_empty() {
        return Err(format!("our reader warns: {:?}", doc.warnings));
    }
    let objects = doc.root("Objects").ok_or("no Objects")?;
    let mut ids = HashSet::new();
    let mut per_type: Vec<(String, i64)> = Vec::new();
    for o in objects.children() {
        let id = o.property(0).and_then(|p| p.as_i64()).ok_or("object without an id")?;
        if id <= 0 || !ids.insert(id) {
            return Err(format!("object id {id} is zero, negative or repeated"));
        }
        match per_type.iter_mut().find(|(t, _)| t == o.name()) {
            Some((_, n)) => *n += 1,
            None => per_type.push((o.name().to_string(), 1)),
        }
    }
    let defs = doc.root("Definitions").ok_or("no Definitions")?;
    let mut total = 0;
    for t in defs.children().filter(|c| c.name() == "ObjectType") {
        let ty = t.property(0).and_then(|p| p.as_str()).unwrap_or("");
        let n = t.child("Count").and_then(|c| c.property(0)).and_then(|p| p.as_i64()).unwrap_or(-1);
        total += n;
        let have = per_type.iter().find(|(x, _)| x == ty).map_or(0, |x| x.1);
        if ty != "GlobalSettings" && have != n {
            return Err(format!("Definitions count {n} for {ty}, {have} written"));
        }
    }
    let declared = defs.child("Count").and_then(|c| c.property(0)).and_then(|p| p.as_i64());
    if declared != Some(total) {
        return Err(format!("Definitions › Count {declared:?}, object types sum to {total}"));
    }
    for c in doc.root("Connections").ok_or("no Connections")?.children() {
        for k in [1, 2] {
            let id = c.property(k).and_then(|p| p.as_i64()).ok_or("connection without ids")?;
            if !(ids.contains(&id) || id == 0 && k == 2) {
                return Err(format!("a connection names object {id}, which is not written"));
            }
        }
    }
    Ok(())
}

fn clean(name: &str) -> String {
    name.chars().filter(|&c| c != '\0').collect()
}

fn check(path: &Path, enc: Enc) -> Result<(), String> {
    let (scene, _) = keyscene::load(path).map_err(|e| format!("keyscene cannot load it: {e}"))?;
    let (bytes, report) =
        export::write(&scene, &options(enc)).map_err(|e| format!("write: {e}"))?;
    lint(&bytes)?;
    lint_layout(&bytes, enc)?;
    if enc == Enc::Ascii && literal_escapes(&scene) {
        // Names compared by name would not match (`literal_escapes`); the lint above holds.
        return Ok(());
    }
    let theirs = ufbx_load(&bytes)?;
    // Nodes whose first animation is written key for key, themselves and every ancestor: ufbx
    // must agree with keyscene between frames too. The others were resampled (the report says
    // which) and are compared on integer frames here; `fbx_resampled_between_frames` compares
    // them between frames.
    let resampled: HashSet<usize> =
        report.resampled.iter().filter(|r| r.animation == 0).map(|r| r.node).collect();
    let exact: Vec<bool> = (0..scene.nodes.len())
        .map(|i| {
            let mut at = Some(i);
            while let Some(k) = at {
                if resampled.contains(&k) {
                    return false;
                }
                at = scene.nodes[k].parent;
            }
            true
        })
        .collect();
    let unskinned = report.dropped.iter().any(|d| d.contains("unskinned"));
    compare(&scene, &theirs, &exact, unskinned)?;
    compare_attributes(&scene, &theirs)?;
    compare_textures(&scene, &theirs, &bytes)
}

/// ufbx (default options) loads the written bytes with no warning
/// (`ufbx_metadata::warnings`).
fn ufbx_load(bytes: &[u8]) -> Result<ufbx::SceneRoot, String> {
    let theirs = ufbx::load_memory(bytes, ufbx::LoadOpts::default())
        .map_err(|e| format!("ufbx cannot load the written file: {:?}", e.description))?;
    if let Some(w) = theirs.metadata.warnings.first() {
        return Err(format!(
            "ufbx warns on the written file ({} warnings), first: {} ({} times)",
            theirs.metadata.warnings.len(),
            w.description,
            w.count
        ));
    }
    Ok(theirs)
}

/// The ASCII file of every source (`write_ascii::`): written, linted ([`lint`],
/// [`lint_layout`]) and loaded by ufbx without a warning. The full evaluation
/// (`write_ufbx_ascii::`, [`check`]) runs on every [`ENCODING_SAMPLE_STEP`]th source.
fn check_ascii_load(path: &Path) -> Result<(), String> {
    let (scene, _) = keyscene::load(path).map_err(|e| format!("keyscene cannot load it: {e}"))?;
    let (bytes, _) =
        export::write(&scene, &options(Enc::Ascii)).map_err(|e| format!("write: {e}"))?;
    lint(&bytes)?;
    lint_layout(&bytes, Enc::Ascii)?;
    ufbx_load(&bytes).map(|_| ())
}

/// Texture maps (6. of the module docs): for every source material ufbx finds by name, every
/// map with a file name is on ufbx's material map for its slot (`ufbx_material.fbx`:
/// `diffuse_color`, `transparency_color`, `normal_map` or `bump`, `specular_color`,
/// `specular_exponent`, `reflection_color`, `emission_color`) — that map's texture is connected
/// on a material property that also holds a texture of this file name (ufbx's
/// `raw_relative_filename`) — and embedded bytes are ufbx's `content` of it. Our reader gives
/// the same maps back: slot, file name and embedded bytes byte for byte.
fn compare_textures(scene: &Scene, theirs: &ufbx::SceneRoot, bytes: &[u8]) -> Result<(), String> {
    use keyscene::scene::MapSlot;
    let (back, _) =
        fbx::read(bytes, &Default::default()).map_err(|e| format!("reading back: {e}"))?;
    for src in &scene.materials {
        let name = clean(&src.name);
        let Some(m) = theirs.materials.iter().find(|m| m.element.name.to_string() == name) else {
            continue;
        };
        let ours = back.materials.iter().find(|b| clean(&b.name) == name);
        for map in src.maps.iter().filter(|t| !t.file.is_empty()) {
            let f = &m.fbx;
            let slot_map = match map.slot {
                MapSlot::Diffuse => &f.diffuse_color,
                MapSlot::Opacity => &f.transparency_color,
                MapSlot::Bump if f.normal_map.texture.is_some() => &f.normal_map,
                MapSlot::Bump => &f.bump,
                MapSlot::Specular => &f.specular_color,
                MapSlot::Shininess => &f.specular_exponent,
                MapSlot::Reflection => &f.reflection_color,
                MapSlot::Emissive => &f.emission_color,
            };
            let Some(tex) = &slot_map.texture else {
                return Err(format!(
                    "material {name:?}: ufbx finds no texture on its {:?} map",
                    map.slot
                ));
            };
            let prop = m
                .textures
                .iter()
                .find(|t| t.texture.element.element_id == tex.element.element_id)
                .map(|t| t.material_prop.to_string())
                .unwrap_or_default();
            let found = m.textures.iter().find(|t| {
                t.material_prop.to_string() == prop
                    && &t.texture.raw_relative_filename[..] == map.file.as_bytes()
            });
            let Some(found) = found else {
                return Err(format!(
                    "material {name:?}: ufbx has no texture {:?} on {prop:?} ({:?} map)",
                    map.file, map.slot
                ));
            };
            if let Some(want) = &map.embedded {
                if found.texture.content[..] != want[..] {
                    return Err(format!(
                        "material {name:?}: ufbx reads {} embedded bytes of {:?}, the source has {}",
                        found.texture.content.len(),
                        map.file,
                        want.len()
                    ));
                }
            }
            // Each image is written once: a map whose image another map of the same file name
            // embeds reads back with those bytes.
            let shared = |t: &keyscene::scene::TextureMap| {
                map.embedded.is_none()
                    && t.embedded.is_some()
                    && scene.materials.iter().flat_map(|m| &m.maps).any(|o| {
                        o.file == map.file && o.embedded.as_deref() == t.embedded.as_deref()
                    })
            };
            let again = ours.into_iter().flat_map(|b| &b.maps).find(|t| {
                t.slot == map.slot
                    && t.file == map.file
                    && (t.embedded == map.embedded || shared(t))
            });
            if again.is_none() {
                return Err(format!(
                    "material {name:?}: our reader does not give back the {:?} map {:?} (with its embedded bytes)",
                    map.slot, map.file
                ));
            }
        }
    }
    Ok(())
}

/// Cameras and lights as ufbx reads the written `NodeAttribute`s against the source's (rest
/// values): a camera's field of view along its axis (ufbx `field_of_view_deg`), near and far
/// planes; a light's kind, colour and intensity (ufbx divides `Intensity` by 100).
fn compare_attributes(scene: &Scene, theirs: &ufbx::SceneRoot) -> Result<(), String> {
    use keyscene::scene::{FovAxis, LightKind, NodeKind};
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-5 * a.abs().max(1.0);
    for n in theirs.nodes.iter().filter(|n| !n.is_root) {
        let name = n.element.name.to_string();
        let src = scene.nodes.iter().filter(|s| clean(&s.name) == name);
        if let Some(cam) = &n.camera {
            let Some(c) = src.clone().find_map(|s| match s.kind {
                NodeKind::Camera(c) => scene.cameras.get(c),
                _ => None,
            }) else {
                return Err(format!("ufbx camera {name:?} has no source camera"));
            };
            let fov = match c.fov_axis {
                FovAxis::Horizontal => cam.field_of_view_deg.x,
                FovAxis::Vertical => cam.field_of_view_deg.y,
            };
            if !close(fov, c.fov_degrees) {
                return Err(format!(
                    "camera {name:?}: ufbx reads a field of view of {fov}°, the source has {}°",
                    c.fov_degrees
                ));
            }
            for (what, want, got) in
                [("near", c.near, cam.near_plane), ("far", c.far, cam.far_plane)]
            {
                if want.is_some_and(|w| w.is_finite() && !close(w, got)) {
                    return Err(format!("camera {name:?}: {what} plane {got}, source {want:?}"));
                }
            }
        }
        if let Some(light) = &n.light {
            let Some(l) = src.clone().find_map(|s| match s.kind {
                NodeKind::Light(l) => scene.lights.get(l),
                _ => None,
            }) else {
                return Err(format!("ufbx light {name:?} has no source light"));
            };
            let kind = match light.type_ {
                ufbx::LightType::Directional => LightKind::Directional,
                ufbx::LightType::Spot => LightKind::Spot,
                _ => LightKind::Point,
            };
            let col = DVec3::new(light.color.x, light.color.y, light.color.z);
            let want = l.color.as_dvec3();
            if kind != l.kind
                || !(0..3).all(|k| close(col[k], want[k]))
                || !close(light.intensity, l.intensity)
            {
                return Err(format!(
                    "light {name:?}: ufbx reads {kind:?} colour {col} intensity {}, the source has {:?} colour {want} intensity {}",
                    light.intensity, l.kind, l.intensity
                ));
            }
        }
    }
    Ok(())
}

/// `unskinned`: the report says some skin was not written (the meshes it deforms, which ufbx
/// reads without a skin deformer, are left out of the vertex comparison).
fn compare(
    scene: &Scene,
    theirs: &ufbx::SceneRoot,
    exact: &[bool],
    unskinned: bool,
) -> Result<(), String> {
    // (frame on keyscene's clock, whether it is a frame between integer frames); `None`: the
    // rest pose. Between frames: the half frame after the first, and four times spread over
    // the range a 0.37 frame past an integer frame.
    let times: Vec<(Option<f64>, bool)> = match scene.animations.first() {
        Some(a) => {
            let (f0, f1) = a.frame_range;
            let f1 = f1.max(f0);
            let mid = (0.5 * (f0 + f1)).round().clamp(f0, f1);
            let mut t = vec![(Some(f0), false), (Some(mid), false), (Some(f1), false)];
            for j in 0..5 {
                let f = if j == 0 {
                    f0 + 0.5
                } else {
                    (f0 + (f1 - f0) * j as f64 / 5.0).floor() + 0.37
                };
                if f < f1 {
                    t.push((Some(f), true));
                }
            }
            t
        }
        None => vec![(None, false)],
    };
    let fps = scene.animations.first().map_or(30.0, |a| a.fps);
    // The source nodes of each name (NULs left out, as ufbx reads them).
    let by_name = NodesByName::new(scene, clean);
    // ufbx deforms meshes (blend shapes, then skin) only when asked.
    let deforms = !theirs.skin_deformers.is_empty() || !theirs.blend_deformers.is_empty();
    let opts = || ufbx::EvaluateOpts { evaluate_skinning: deforms, ..Default::default() };
    let mut posed = Vec::new();
    for &(t, between) in &times {
        let ours = match t {
            Some(f) => scene.evaluate(Some(0), Time::Frame(f)),
            None => scene.evaluate(None, Time::Frame(0.0)),
        };
        let evaluated;
        let nodes = match t {
            Some(f) => {
                evaluated = ufbx::evaluate_scene(theirs, &theirs.anim, f / fps, opts())
                    .map_err(|e| format!("ufbx evaluate: {:?}", e.description))?;
                &evaluated.nodes
            }
            None if deforms => {
                evaluated = ufbx::evaluate_scene(theirs, &theirs.anim, 0.0, opts())
                    .map_err(|e| format!("ufbx evaluate: {:?}", e.description))?;
                &evaluated.nodes
            }
            None => &theirs.nodes,
        };
        let worlds: Vec<(String, DMat4, DMat4, Vec<DVec3>, bool)> = nodes
            .iter()
            .filter(|n| !n.is_root)
            .map(|n| {
                let g = to_dmat4(&n.geometry_to_world);
                // Deformed positions (`skinned_position`, the plain vertices when nothing
                // deforms the mesh), in the mesh's frame when `skinned_is_local`.
                let v = n.mesh.as_ref().map_or(Vec::new(), |m| {
                    let local = m.skinned_is_local;
                    (0..m.num_vertices)
                        .map(|i| {
                            let p = m.skinned_position.values.get(i).or(m.vertices.get(i));
                            let p = p.map_or(DVec3::ZERO, |p| DVec3::new(p.x, p.y, p.z));
                            if local {
                                g.transform_point3(p)
                            } else {
                                p
                            }
                        })
                        .collect()
                });
                let skinned = n.mesh.as_ref().is_some_and(|m| !m.skin_deformers.is_empty());
                (n.element.name.to_string(), to_dmat4(&n.node_to_world), g, v, skinned)
            })
            .collect();
        // Animated camera FOV and light colour/intensity, as ufbx evaluates them.
        if t.is_some() {
            for n in nodes.iter().filter(|n| !n.is_root) {
                let name = n.element.name.to_string();
                let src = by_name.named(&name);
                check_animated_attributes(scene, &ours, (&name, src), n, between, exact)
                    .map_err(|e| format!("at {}: {e}", t.map_or(0.0, |f| f)))?;
            }
        }
        posed.push((t, between, ours, worlds));
    }
    let size = common::ufbx_corpus::scene_size(
        posed.iter().flat_map(|(_, _, _, w)| w.iter().map(|x| &x.1)),
    );
    for (k, (t, between, pose, worlds)) in posed.iter().enumerate() {
        let when = t.map_or("the rest pose".to_string(), |f| format!("frame {f}"));
        let ranks = NodesByName::ranks(worlds.iter().map(|w| w.0.as_str()));
        for ((name, want, _, verts, ufbx_skinned), rank) in worlds.iter().zip(ranks) {
            let cands = by_name.named(name);
            // Between frames, a name that a resampled node shares (a 3DS camera and its
            // target) is left out: the ufbx node may be the resampled one.
            if *between && cands.iter().any(|&i| !exact[i]) {
                continue;
            }
            if cands.is_empty() {
                return Err(format!("ufbx node {name:?} has no source node of that name"));
            }
            let Some((err, i)) = by_name.pair(name, rank, 1e-4, |i| {
                let ours = pose.world[i] * attribute_turn(scene, i);
                let (l, tr) = common::ufbx_corpus::difference(ours, *want, size);
                l.max(tr)
            }) else {
                continue;
            };
            if err.is_nan() || err > 1e-4 {
                return Err(format!(
                    "node {name:?} at {when}: world differs by {err:e}\nkeyscene {}\nufbx     {want}",
                    pose.world[i]
                ));
            }
            check_view_axes(scene, i, pose, *want)
                .map_err(|e| format!("{name:?} at {when}: {e}"))?;
            // Vertices at the first time; deformed meshes at every integer frame of 3.
            if *between || verts.is_empty() {
                continue;
            }
            // Of several nodes with this name (LOD groups), the one placed so with as many
            // vertices.
            let fits = |c: usize| {
                let (l, tr) = common::ufbx_corpus::difference(pose.world[c], *want, size);
                l.max(tr) <= 1e-4
                    && scene.nodes[c]
                        .mesh
                        .is_some_and(|m| scene.meshes[m].positions.len() == verts.len())
            };
            let i = Some(i)
                .filter(|&i| fits(i))
                .or_else(|| cands.iter().copied().find(|&c| fits(c)))
                .unwrap_or(i);
            let node = &scene.nodes[i];
            let Some(m) = node.mesh else { continue };
            let mesh = &scene.meshes[m];
            let morphed = scene.animations.first().is_some_and(|a| {
                a.channels.iter().any(|c| {
                    c.node == i && matches!(c.target, keyscene::anim::ChannelTarget::Morph(_))
                })
            });
            let deformed = mesh.skin.is_some() || !mesh.morph_targets.is_empty();
            if mesh.skin.is_some() && !ufbx_skinned {
                if unskinned {
                    continue;
                }
                return Err(format!(
                    "mesh of {name:?}: the source's skin is not in the written file"
                ));
            }
            if (k != 0 && !deformed)
                || mesh.geometry_cache.is_some()
                || morphed
                || pose.mesh[i] != Some(m)
            {
                continue;
            }
            let ours = pose.world_positions(scene, i);
            if ours.len() != verts.len() {
                return Err(format!(
                    "mesh of {name:?}: {} vertices written, ufbx reads {}",
                    ours.len(),
                    verts.len()
                ));
            }
            for (j, (a, b)) in ours.iter().zip(verts).enumerate() {
                // A source vertex that is not finite (the synthetic NaN files) must read back
                // as the same non-finite value.
                let same_nonfinite = !a.is_finite()
                    && (0..3).all(|c| a[c] == b[c] || (a[c].is_nan() && b[c].is_nan()));
                let d = (*a - *b).abs().max_element() / size;
                if !same_nonfinite && (d.is_nan() || d > 1e-4) {
                    return Err(format!(
                        "mesh of {name:?} at {when}: vertex {j} keyscene {a}, ufbx {b} ({d:e} of the scene size)"
                    ));
                }
            }
        }
    }
    Ok(())
}

/// The turn from a source node's axes to its FBX node's (`world_fbx = world · C`): identity
/// except for cameras and lights of non-FBX sources. keyscene's scene model aims those down the
/// node's −Z with +Y up (`scene::Camera`, `scene::Light`; `render::View::from_camera`), FBX
/// cameras look down +X with +Y up and lights shine down −Y (FbxCamera; ufbx.c's camera axes
/// right +Z, up +Y, front −X, and `ufbx_light::local_direction` −Y). Columns, hand-derived:
/// camera +X → −Z, +Y → +Y, +Z → +X; light +X → +X, +Y → +Z, +Z → −Y.
fn attribute_turn(scene: &Scene, i: usize) -> DMat4 {
    use keyscene::scene::{LightKind, NodeKind};
    let n = &scene.nodes[i];
    if scene.meta.format == "fbx" || n.mesh.is_some() {
        return DMat4::IDENTITY;
    }
    let cols = |x: DVec3, y: DVec3, z: DVec3| {
        DMat4::from_cols(x.extend(0.0), y.extend(0.0), z.extend(0.0), glam::DVec4::W)
    };
    match n.kind {
        NodeKind::Camera(c) if c < scene.cameras.len() => cols(-DVec3::Z, DVec3::Y, DVec3::X),
        NodeKind::Light(l) if scene.lights.get(l).is_some_and(|l| l.kind != LightKind::Ambient) => {
            cols(DVec3::X, DVec3::Z, -DVec3::Y)
        }
        _ => DMat4::IDENTITY,
    }
}

/// A camera's view direction and up, and a light's direction, in ufbx's world (`theirs`: the
/// written node's world matrix; FBX cameras look down +X with +Y up, lights shine down −Y)
/// against the source's in keyscene's pose (FBX sources: the same axes; others: −Z, with +Y
/// up for cameras), as unit vectors within 1e-4.
fn check_view_axes(
    scene: &Scene,
    i: usize,
    pose: &keyscene::anim::Pose,
    theirs: DMat4,
) -> Result<(), String> {
    use keyscene::scene::NodeKind;
    let dir = |m: DMat4, v: DVec3| m.transform_vector3(v).normalize_or_zero();
    let fbx = scene.meta.format == "fbx";
    let ours = pose.world[i];
    if scene.nodes[i].mesh.is_some() || !(fbx || attribute_turn(scene, i) != DMat4::IDENTITY) {
        return Ok(());
    }
    let pairs = match scene.nodes[i].kind {
        NodeKind::Camera(_) => {
            let forward = if fbx { dir(ours, DVec3::X) } else { dir(ours, -DVec3::Z) };
            vec![
                ("view direction", forward, dir(theirs, DVec3::X)),
                ("up", dir(ours, DVec3::Y), dir(theirs, DVec3::Y)),
            ]
        }
        NodeKind::Light(_) => {
            let shines = if fbx { dir(ours, -DVec3::Y) } else { dir(ours, -DVec3::Z) };
            vec![("light direction", shines, dir(theirs, -DVec3::Y))]
        }
        _ => vec![],
    };
    for (what, want, got) in pairs {
        if want != DVec3::ZERO && !want.abs_diff_eq(got, 1e-4) {
            return Err(format!("{what}: the source's {want}, ufbx's {got}"));
        }
    }
    Ok(())
}

/// One ufbx node's evaluated camera field of view and light colour and intensity (`named`: the
/// source nodes of its name) against
/// keyscene's pose of the source (`Pose::camera_fov`, `light_color`, `light_intensity`).
/// Between frames only sources written key for key (`exact`) are compared. FBX sources whose
/// camera `FieldOfView` is animated are skipped: keyscene's evaluator does not apply that
/// property (it keeps the stored value), while the writer carries the curve over.
fn check_animated_attributes(
    scene: &Scene,
    pose: &keyscene::anim::Pose,
    (name, named): (&str, &[usize]),
    n: &ufbx::Node,
    between: bool,
    exact: &[bool],
) -> Result<(), String> {
    use keyscene::anim::ChannelTarget;
    use keyscene::scene::{FovAxis, NodeKind};
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-4 * a.abs().max(1.0);
    let src: Vec<usize> = named.iter().copied().filter(|&i| !between || exact[i]).collect();
    let channels = |i: usize| {
        scene.animations.first().into_iter().flat_map(|a| &a.channels).filter(move |c| c.node == i)
    };
    if let Some(cam) = &n.camera {
        for &i in &src {
            let NodeKind::Camera(c) = scene.nodes[i].kind else { continue };
            if channels(i).any(|c| c.target.property_name() == Some("FieldOfView")) {
                continue;
            }
            let fov = match scene.cameras[c].fov_axis {
                FovAxis::Horizontal => cam.field_of_view_deg.x,
                FovAxis::Vertical => cam.field_of_view_deg.y,
            };
            if !close(fov, pose.camera_fov[c]) {
                return Err(format!(
                    "camera {name:?}: ufbx evaluates a field of view of {fov}°, keyscene {}°",
                    pose.camera_fov[c]
                ));
            }
        }
    }
    if let Some(light) = &n.light {
        for &i in &src {
            let NodeKind::Light(l) = scene.nodes[i].kind else { continue };
            let animated = channels(i).any(|c| {
                matches!(c.target, ChannelTarget::Color(_))
                    || c.target
                        .property_name()
                        .is_some_and(|p| p.starts_with("Color") || p == "Intensity")
            });
            if !animated {
                continue;
            }
            let col = DVec3::new(light.color.x, light.color.y, light.color.z);
            let want = pose.light_color[l];
            if !(0..3).all(|k| close(col[k], want[k]))
                || !close(light.intensity, pose.light_intensity[l])
            {
                return Err(format!(
                    "light {name:?}: ufbx evaluates colour {col} intensity {}, keyscene colour {want} intensity {}",
                    light.intensity, pose.light_intensity[l]
                ));
            }
        }
    }
    Ok(())
}

fn sources(corpus: &Path) -> Vec<PathBuf> {
    let mut files = common::files_with_ext(&corpus.join("3ds"), &["3ds"]);
    let fbx_dir = corpus.join("fbx");
    let positives: Vec<PathBuf> = common::files_with_ext(&fbx_dir, &["fbx"])
        .into_iter()
        .filter(|p| {
            let rel = p.strip_prefix(&fbx_dir).unwrap().to_string_lossy().replace('\\', "/");
            !common::is_negative_fbx(&rel)
        })
        .collect();
    files.extend(positives.into_iter().step_by(FBX_SAMPLE_STEP));
    files
}

/// Whether a node, material or mesh name holds the text of an ASCII FBX escape literally
/// (`&quot;`, `&cr;`, `&lf;`), which ASCII cannot keep (there is no escape for `&`): such a
/// name reads back as the escaped byte (docs/fbx.md, "ASCII").
fn literal_escapes(scene: &Scene) -> bool {
    let escapes = ["&quot;", "&cr;", "&lf;"];
    scene
        .nodes
        .iter()
        .map(|n| &n.name)
        .chain(scene.materials.iter().map(|m| &m.name))
        .chain(scene.meshes.iter().map(|m| &m.name))
        .any(|n| escapes.iter().any(|e| n.contains(e)))
}

/// ASCII carries what binary carries: the source written as binary and as ASCII, each read
/// back by keyscene and written again in `enc`, gives the same bytes (so every value survives
/// the ASCII number printing, escaping and base64 exactly); and the same scene written twice
/// gives the same bytes (fixed creation time).
fn encodings_agree(path: &Path, enc: Enc) -> Result<(), String> {
    let (scene, _) = keyscene::load(path).map_err(|e| format!("keyscene cannot load it: {e}"))?;
    let again = |bytes: &[u8]| -> Result<Vec<u8>, String> {
        let (back, _) = fbx::read(bytes, &Default::default())
            .map_err(|e| format!("keyscene cannot read the written file: {e}"))?;
        Ok(export::write(&back, &options(enc)).map_err(|e| format!("second write: {e}"))?.0)
    };
    let write = |e: Enc| export::write(&scene, &options(e)).map_err(|e| format!("write: {e}"));
    let (binary, _) = write(Enc::Binary7400)?;
    let (ascii, _) = write(Enc::Ascii)?;
    if write(enc)?.0 != write(enc)?.0 {
        return Err("two writes of one scene differ".into());
    }
    // Where ASCII cannot hold the value itself, the two files differ by rule: NaN has one
    // spelling (`nan`, its bits not kept), and a name that holds an escape's text literally
    // (`&quot;`, `&cr;`, `&lf;`; ufbx's `max_quote` files) reads back as the escaped byte, as
    // there is no escape for `&` (docs/fbx.md, "ASCII").
    let nan = fbx::parse(&ascii, &Default::default()).is_ok_and(|d| {
        d.warnings
            .iter()
            .any(|w| matches!(w, fbx::Warning::OddNumbers { first, .. } if first.contains("nan")))
    });
    if nan || literal_escapes(&scene) {
        return Ok(());
    }
    let (a, b) = (again(&binary)?, again(&ascii)?);
    if a != b {
        let at = a.iter().zip(&b).position(|(x, y)| x != y).unwrap_or(a.len().min(b.len()));
        return Err(format!(
            "rewritten from the binary and from the ASCII file, the bytes differ at {at} ({} and {} bytes)",
            a.len(),
            b.len()
        ));
    }
    Ok(())
}

/// FBX → FBX → FBX is stable (issue #14 §1, "Proof"): the source written in `enc` (A), read
/// back by keyscene and written again in `enc` (B), gives A's bytes exactly (the creation time
/// is fixed). A scene with a Blender Principled BSDF is written once more first (A is then the
/// second generation: the material's model depends on the `Creator`). On failure it names the first differing record path of our reader's tree.
fn stable(path: &Path, enc: Enc) -> Result<(), String> {
    let (scene, _) = keyscene::load(path).map_err(|e| format!("keyscene cannot load it: {e}"))?;
    let rest = scene.evaluate(None, Time::Frame(0.0));
    if rest.world.iter().chain(&rest.local).any(|m| !m.is_finite()) {
        // A non-finite transform is written as it is (NaN) and our reader replaces it with
        // the default when it reads the written file: by rule not stable (checked: loads).
        return Ok(());
    }
    // A is read as a file saved beside its source: its textures resolve where the source's do.
    let ro = match path.parent() {
        Some(dir) => keyscene::ReadOptions::default().base_dir(dir),
        None => keyscene::ReadOptions::default(),
    };
    // A Blender Principled BSDF is one by the file's `Creator` (ufbx's rule); written under
    // keyscene's it is Blender's Phong layout, which reads back as Phong (docs/materials.md):
    // such a scene is stable from its first written form on.
    let blender = scene.materials.iter().any(|m| {
        m.pbr.as_ref().is_some_and(|p| p.model == keyscene::scene::ShadingModel::BlenderPhong)
    });
    let scene = if blender {
        let (first, _) = export::write(&scene, &options(enc)).map_err(|e| format!("write: {e}"))?;
        fbx::read(&first, &ro).map_err(|e| format!("keyscene cannot read the written file: {e}"))?.0
    } else {
        scene
    };
    let (a, _) = export::write(&scene, &options(enc)).map_err(|e| format!("write: {e}"))?;
    let (back, _) =
        fbx::read(&a, &ro).map_err(|e| format!("keyscene cannot read the written file: {e}"))?;
    let (b, _) = export::write(&back, &options(enc)).map_err(|e| format!("second write: {e}"))?;
    if a == b {
        return Ok(());
    }
    // The first differing line of the two files as ASCII says what moved.
    let text = |s: &Scene| {
        let (t, _) = export::write(s, &options(Enc::Ascii)).unwrap_or_default();
        String::from_utf8_lossy(&t).into_owned()
    };
    let (ta, tb) = (text(&scene), text(&back));
    let line = ta.lines().zip(tb.lines()).position(|(x, y)| x != y).unwrap_or(0);
    let show =
        |t: &str| t.lines().nth(line).unwrap_or("").trim().chars().take(160).collect::<String>();
    Err(format!(
        "the file written from the written file differs ({} and {} bytes); as ASCII, line {}:\n first: {}\n second: {}",
        a.len(),
        b.len(),
        line + 1,
        show(&ta),
        show(&tb)
    ))
}

fn fbx2gltf(path: &Path, enc: Enc) -> Result<(), String> {
    let (scene, _) = keyscene::load(path).map_err(|e| format!("keyscene cannot load it: {e}"))?;
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let out = dir.path().join("written.fbx");
    let report = export::save(&scene, &out, &options(enc)).map_err(|e| e.to_string())?;
    let glb = dir.path().join("out");
    let run = std::process::Command::new(FBX2GLTF)
        .arg("--binary")
        .arg("--input")
        .arg(&out)
        .arg("--output")
        .arg(&glb)
        .output()
        .map_err(|e| format!("running FBX2glTF: {e}"))?;
    let text =
        String::from_utf8_lossy(&run.stdout).to_string() + &String::from_utf8_lossy(&run.stderr);
    if !run.status.success() || !dir.path().join("out.glb").is_file() {
        return Err(format!("FBX2glTF failed ({}):\n{text}", run.status));
    }
    if text.to_ascii_lowercase().contains("error") {
        return Err(format!("FBX2glTF reports an error:\n{text}"));
    }
    // The SDK saw the deformers: its glTF (read back by keyscene) has a skin where the source
    // has one and morph targets where the source has blend shapes.
    let (glb, _) = keyscene::load(&dir.path().join("out.glb"))
        .map_err(|e| format!("keyscene cannot read FBX2glTF's output: {e}"))?;
    let unskinned = report.dropped.iter().any(|d| d.contains("unskinned"));
    if deformed(&scene).0 && !unskinned && glb.skins.is_empty() {
        return Err("the source has a skin, FBX2glTF's glTF none".into());
    }
    if deformed(&scene).1 && !glb.meshes.iter().any(|m| !m.morph_targets.is_empty()) {
        return Err("the source has blend shapes, FBX2glTF's glTF no morph targets".into());
    }
    Ok(())
}

/// Whether a scene's meshes have (a skin, blend shapes).
fn deformed(scene: &Scene) -> (bool, bool) {
    let skin = scene.meshes.iter().any(|m| m.skin.is_some());
    (skin, scene.meshes.iter().any(|m| !m.morph_targets.is_empty()))
}

fn main() {
    let corpus = common::corpus();
    let mut trials = Vec::new();
    let files = corpus.as_deref().map(sources).unwrap_or_default();
    if files.is_empty() {
        trials.push(common::corpus_trial("write_ufbx::corpus", &corpus, |_| {
            Err("the corpus holds no 3DS or FBX file".into())
        }));
    }
    let root = corpus.clone().unwrap_or_default();
    for (k, path) in files.into_iter().enumerate() {
        let sampled = k % ENCODING_SAMPLE_STEP == 0;
        let rel = path.strip_prefix(&root).unwrap_or(&path).to_string_lossy().replace('\\', "/");
        let loaded = keyscene::load(&path);
        if let Err(e) = &loaded {
            let why = e.to_string().chars().take(60).collect::<String>();
            let is_3ds = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("3ds"));
            let mut kinds = vec!["write_ufbx", "stable"];
            if !sampled {
                kinds.push("write_ascii");
            }
            if sampled {
                kinds.extend([
                    "stable_ascii",
                    "write_ufbx_7500",
                    "write_ufbx_ascii",
                    "encodings_agree",
                    "encodings_agree_ascii",
                ]);
            }
            if is_3ds {
                kinds.extend(["fbx2gltf", "fbx2gltf_ascii"]);
            }
            for kind in kinds {
                trials.push(
                    Trial::test(
                        format!("{kind}::{rel} (ignored: the source does not load: {why})"),
                        || Ok(()),
                    )
                    .with_ignored_flag(true),
                );
            }
            continue;
        }
        let mut checks = vec![("write_ufbx", Enc::Binary7400)];
        if !sampled {
            let p = path.clone();
            trials.push(common::corpus_trial(format!("write_ascii::{rel}"), &corpus, move |_| {
                check_ascii_load(&p).map_err(|e| format!("{}: {e}", p.display()).into())
            }));
        }
        if sampled {
            checks.extend([("write_ufbx_7500", Enc::Binary7500), ("write_ufbx_ascii", Enc::Ascii)]);
        }
        let stacked = loaded.as_ref().is_ok_and(|(s, _)| {
            s.meta.format == "fbx" && (0..s.nodes.len()).any(|i| has_stack(s, i))
        });
        if stacked {
            let p = path.clone();
            trials.push(common::corpus_trial(format!("keep_pivots::{rel}"), &corpus, move |_| {
                check_keep_pivots(&p).map_err(|e| format!("{}: {e}", p.display()).into())
            }));
        }
        for (kind, enc) in checks {
            let p = path.clone();
            trials.push(common::corpus_trial(format!("{kind}::{rel}"), &corpus, move |_| {
                check(&p, enc).map_err(|e| format!("{}: {e}", p.display()).into())
            }));
        }
        for (kind, enc) in [("stable", Enc::Binary7400), ("stable_ascii", Enc::Ascii)] {
            if kind == "stable_ascii" && !sampled {
                continue;
            }
            let p = path.clone();
            trials.push(common::corpus_trial(format!("{kind}::{rel}"), &corpus, move |_| {
                stable(&p, enc).map_err(|e| format!("{}: {e}", p.display()).into())
            }));
        }
        if sampled {
            for (kind, enc) in
                [("encodings_agree", Enc::Binary7400), ("encodings_agree_ascii", Enc::Ascii)]
            {
                let p = path.clone();
                trials.push(common::corpus_trial(format!("{kind}::{rel}"), &corpus, move |_| {
                    encodings_agree(&p, enc).map_err(|e| format!("{}: {e}", p.display()).into())
                }));
            }
        }
        // FBX2glTF on every written 3DS file (binary and ASCII) and every written FBX file
        // whose source has a skin or blend shapes (binary).
        let is_3ds = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("3ds"));
        let deforms = loaded.as_ref().is_ok_and(|(s, _)| deformed(s) != (false, false));
        let fbx2gltf_runs: &[(&str, Enc)] = match (is_3ds, deforms) {
            (true, _) => &[("fbx2gltf", Enc::Binary7400), ("fbx2gltf_ascii", Enc::Ascii)],
            (false, true) => &[("fbx2gltf", Enc::Binary7400)],
            (false, false) => &[],
        };
        {
            for &(kind, enc) in fbx2gltf_runs {
                let p = path.clone();
                let t = if Path::new(FBX2GLTF).is_file() {
                    common::corpus_trial(format!("{kind}::{rel}"), &corpus, move |_| {
                        fbx2gltf(&p, enc).map_err(|e| format!("{}: {e}", p.display()).into())
                    })
                } else {
                    Trial::test(format!("{kind}::{rel}"), || Ok(())).with_ignored_flag(true)
                };
                trials.push(t);
            }
        }
    }
    common::run(trials)
}

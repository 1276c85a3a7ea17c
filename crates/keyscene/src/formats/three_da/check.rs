//! `check`: every rule a 3DA file must satisfy, each violation reported with the byte offset of
//! the field at fault. Structural problems come from the reader's walk ([`super::read::parse`]);
//! this module adds the content rules (hierarchy, indices, strips, keys, weights, names).
//!
//! The collision map (when `m_ColmapID` is `ANIM_COLMAP_AABBTREE`) is validated by
//! [`super::colmap::Colmap::parse`].
//!
//! Errors are what the engine cannot load correctly; warnings are departures from the
//! canonical layout or the seed's conventions that the engine survives (misaligned offsets on
//! x86, non-zero runtime fields, children out of alphabetical order).

use std::collections::HashMap;

use super::layout::{
    entity_type, name_str, Extents, Header, KeyRecord, Material, SurfaceRecord, Variant, NO_PARENT,
    VERTEX_WEIGHT_SCALE,
};
use super::model::{Entity, EulerTrack, File, FloatTrack, KeyTrack, RotTrack, Surface, VecTrack};
use super::read::{nul_terminated, parse, TrackLoc};
use crate::limits::Limits;

pub use super::issue::{Issue, Severity};

/// The result of [`check`].
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// The track-header layout detected; `None` when the header was unusable.
    pub variant: Option<Variant>,
    /// Every problem found, errors and warnings, in file-walk order.
    pub issues: Vec<Issue>,
}

impl Report {
    /// True when any issue is an error (`keyscene check` then exits non-zero).
    pub fn has_errors(&self) -> bool {
        self.issues.iter().any(|i| i.severity == Severity::Error)
    }

    /// The errors only.
    pub fn errors(&self) -> impl Iterator<Item = &Issue> {
        self.issues.iter().filter(|i| i.severity == Severity::Error)
    }
}

/// Checks a 3DA file and lists every violation with its byte offset. Never panics, never
/// allocates more than the file's size permits, always terminates.
///
/// Structural: header id/version; offsets out of range, into the header, or misaligned
/// (warning); entity and surface chains broken or cyclic; counts that do not fit; unknown
/// track ids; EULER sub-tracks that are not 1D. `m_aRotOrder` values above 2 are content.
/// Content: names not NUL-terminated; unknown entity types; a parent index not before its
/// child; `num_children` not matching; children not in traverse() order (warning); a PRS
/// track missing or without keys; key frames not strictly increasing; `material_idx` out of
/// range; a triangle list whose length is not a multiple of 3 or whose indices reach
/// `s_size`; a strip that does not decode to the list's triangles; a skinned mesh without a
/// blend stream; blend weights not summing to 32768 or bone indices past the entities.
pub fn check(bytes: &[u8]) -> Report {
    let limits = Limits::default();
    let parsed = match parse(bytes, &limits) {
        Ok(p) => p,
        Err(e) => {
            return Report {
                variant: None,
                issues: vec![Issue {
                    severity: Severity::Error,
                    offset: 0,
                    message: e.to_string(),
                }],
            }
        }
    };
    let mut c = Checker { bytes, variant: parsed.file.variant, issues: parsed.issues };
    c.file(&parsed.file, &parsed.locations);
    Report { variant: Some(parsed.file.variant), issues: c.issues }
}

/// The entity walk's state in [`Checker::file`]: per parent index the entities naming it,
/// the open ancestors of the current entity (depth-first), the last child seen under each
/// parent (for the alphabetical-order warning), and the surfaces' totals.
#[derive(Default)]
struct Walk {
    children: HashMap<u16, u32>,
    stack: Vec<usize>,
    last_child: HashMap<u16, usize>,
    faces: u64,
    vertices: u64,
}

struct Checker<'a> {
    bytes: &'a [u8],
    variant: Variant,
    issues: Vec<Issue>,
}

impl Checker<'_> {
    fn error(&mut self, offset: u64, message: String) {
        self.issues.push(Issue { severity: Severity::Error, offset, message });
    }

    fn warn(&mut self, offset: u64, message: String) {
        self.issues.push(Issue { severity: Severity::Warning, offset, message });
    }

    /// The content rules in file order: the collision map, material names, then per entity
    /// its name, type, place in the hierarchy, surfaces and tracks, then the header's totals.
    fn file(&mut self, f: &File, locs: &super::read::Locations) {
        let header = Header::decode(self.bytes);
        if let (Some(c), super::layout::colmap_type::AABBTREE) = (&f.colmap, f.colmap_id) {
            if let Err((o, m)) = super::colmap::Colmap::parse(c) {
                self.error(u64::from(header.offset_colmap) + o as u64, m);
            }
        }
        let mat_table = u64::from(header.offset_materials);
        for (i, m) in f.materials.iter().enumerate() {
            if !nul_terminated(&m.name) {
                self.error(
                    mat_table + (i * Material::SIZE) as u64,
                    format!("material {i}: name is not NUL-terminated"),
                );
            }
        }
        let mut walk = Walk::default();
        for e in &f.entities {
            *walk.children.entry(e.parent_idx).or_default() += 1;
        }
        for i in 0..f.entities.len() {
            self.entity(f, locs, i, &mut walk);
        }
        self.totals(f, walk.faces, walk.vertices);
    }

    /// Entity `i`: name, type, hierarchy ([`Checker::hierarchy`]), its surfaces (counted into
    /// `walk`) and its position, rotation and scale tracks.
    fn entity(&mut self, f: &File, locs: &super::read::Locations, i: usize, walk: &mut Walk) {
        let e = &f.entities[i];
        let at = locs.entities[i];
        let ctx = format!("entity {i} \"{}\"", name_str(&e.name));
        if !nul_terminated(&e.name) {
            self.error(at + 4, format!("{ctx}: name is not NUL-terminated"));
        }
        if !(entity_type::MESH..=entity_type::BONE).contains(&e.type_id) {
            self.error(
                at,
                format!(
                    "{ctx}: type_id {} is not 1..4 (mesh, skinned mesh, helper, bone)",
                    e.type_id
                ),
            );
        }
        self.hierarchy(f, i, at, &ctx, walk);
        let skinned = e.type_id == entity_type::MESH_SKINNED;
        if (e.type_id == entity_type::HELPER || e.type_id == entity_type::BONE)
            && !e.surfaces.is_empty()
        {
            self.warn(
                at + 68,
                format!("{ctx}: a helper or bone with {} surfaces", e.surfaces.len()),
            );
        }
        for (j, s) in e.surfaces.iter().enumerate() {
            let sat = locs.surfaces[i][j];
            self.surface(&format!("{ctx} › surface {j}"), sat, s, skinned, f);
            walk.faces += s.tri_list.len() as u64 / 3;
            walk.vertices += u64::from(s.s_size);
        }
        self.tracks(e, at, &ctx, &locs.tracks[i]);
    }

    /// Entity `i`'s parent index (before it), its place in the seed's traverse() order
    /// (depth-first, siblings alphabetical: warnings) and its `num_children`.
    fn hierarchy(&mut self, f: &File, i: usize, at: u64, ctx: &str, walk: &mut Walk) {
        let e = &f.entities[i];
        let p = e.parent_idx;
        if p != NO_PARENT && usize::from(p) >= i {
            self.error(at + 60, format!("{ctx}: parent_idx {p} is not before the entity"));
        } else {
            while let Some(&top) = walk.stack.last() {
                if p != NO_PARENT && top == usize::from(p) {
                    break;
                }
                walk.stack.pop();
            }
            if p != NO_PARENT && walk.stack.is_empty() {
                self.warn(
                    at + 60,
                    format!("{ctx}: not in depth-first order (parent {p} is not an open ancestor)"),
                );
            }
            if let Some(&prev) = walk.last_child.get(&p) {
                if f.entities[prev].name > e.name {
                    self.warn(
                        at + 4,
                        format!("{ctx}: siblings not in alphabetical order (after entity {prev})"),
                    );
                }
            }
            walk.last_child.insert(p, i);
            walk.stack.push(i);
        }
        let expected = if i < usize::from(NO_PARENT) {
            walk.children.get(&(i as u16)).copied().unwrap_or(0)
        } else {
            0
        };
        if u32::from(e.num_children) != expected {
            self.error(
                at + 62,
                format!(
                    "{ctx}: num_children is {} but {expected} entities name it as parent",
                    e.num_children
                ),
            );
        }
    }

    /// The entity's position, rotation and scale tracks (`locs`: where each was read): each
    /// present, with keys ([`Checker::keys`]); an EULER track's sub-tracks and
    /// `m_aRotOrder` ([`Checker::euler`]).
    fn tracks(&mut self, e: &Entity, at: u64, ctx: &str, locs: &[Option<TrackLoc>; 3]) {
        let names = ["position", "rotation", "scale"];
        let field = [at + 72, at + 76, at + 80];
        let frames: [Option<Vec<i64>>; 3] = [
            e.position.as_ref().map(VecTrack::frames),
            e.rotation.as_ref().and_then(RotTrack::frames),
            e.scale.as_ref().map(VecTrack::frames),
        ];
        let present = [e.position.is_some(), e.rotation.is_some(), e.scale.is_some()];
        for t in 0..3 {
            let tctx = format!("{ctx} › {} track", names[t]);
            let loc = locs[t].clone().unwrap_or_default();
            if !present[t] {
                if self.track_offset(at, t) == 0 {
                    self.error(field[t], format!("{tctx}: missing (every entity needs position, rotation and scale tracks)"));
                }
                continue;
            }
            match (&frames[t], &e.rotation) {
                (Some(fr), _) => self.keys(&tctx, &loc, fr, key_size_vec_or_rot(e, t)),
                (None, Some(RotTrack::Euler(eu))) => self.euler(&tctx, &loc, eu),
                (None, _) => {}
            }
        }
    }

    /// An EULER track: each sub-track's keys, and `m_aRotOrder` a permutation of 0, 1, 2.
    fn euler(&mut self, tctx: &str, loc: &TrackLoc, eu: &EulerTrack) {
        for (k, (sub, axis)) in [(&eu.x, "X"), (&eu.y, "Y"), (&eu.z, "Z")].into_iter().enumerate() {
            let sloc = loc.sub.get(k).cloned().unwrap_or_default();
            self.keys(&format!("{tctx} › {axis}"), &sloc, &sub.frames(), float_key_size(sub));
        }
        if let Some(k) = eu.rot_order.iter().position(|&o| o > 2) {
            self.error(
                loc.header + 28 - (3 - self.variant.copy_padding() as u64),
                format!("{tctx}: m_aRotOrder[{k}] is {}, not 0, 1 or 2", eu.rot_order[k]),
            );
        }
        let mut o = eu.rot_order;
        o.sort_unstable();
        if o != [0, 1, 2] {
            self.warn(
                loc.header,
                format!("{tctx}: m_aRotOrder {:?} is not a permutation of 0, 1, 2", eu.rot_order),
            );
        }
    }

    /// The header's face and vertex totals against the surfaces, its bounds, and the entity
    /// count against what a `u16` parent index addresses.
    fn totals(&mut self, f: &File, faces: u64, vertices: u64) {
        let n = f.entities.len();
        let h = Header::decode(self.bytes);
        if i64::from(h.num_faces) as u64 != faces
            || i64::from(h.num_vertices) as u64 != vertices
            || h.num_faces < 0
        {
            self.warn(24, format!(
                "m_iNumFaces/m_iNumVertices are {}/{} but the surfaces hold {faces} triangles and {vertices} vertices",
                h.num_faces, h.num_vertices
            ));
        }
        if !finite_extents(&f.bounds) {
            self.warn(36, "m_Bounds is not a finite box (min ≤ max)".into());
        }
        if n > usize::from(NO_PARENT) {
            self.error(
                8,
                format!(
                    "{n} entities: parent indices (u16, 0xFFFF = none) cannot address them all"
                ),
            );
        }
    }

    fn track_offset(&self, entity_at: u64, t: usize) -> u32 {
        let at = (entity_at + 72 + 4 * t as u64) as usize;
        self.bytes.get(at..at + 4).map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// At least one key, and frames strictly increasing.
    fn keys(&mut self, ctx: &str, loc: &TrackLoc, frames: &[i64], key_size: usize) {
        if frames.is_empty() {
            self.error(loc.header, format!("{ctx}: no keys (the seed requires at least one)"));
            return;
        }
        for k in 1..frames.len() {
            if frames[k] <= frames[k - 1] {
                self.error(
                    loc.keys + (k * key_size) as u64,
                    format!(
                        "{ctx}: key {k} is at frame {} after frame {} (frames must increase)",
                        frames[k],
                        frames[k - 1]
                    ),
                );
                return;
            }
        }
    }

    fn surface(&mut self, ctx: &str, at: u64, s: &Surface, skinned: bool, f: &File) {
        let rec = SurfaceRecord::decode(self.bytes.get(at as usize..).unwrap_or_default());
        let n = s.s_size;
        if s.material_idx < 0 || s.material_idx as usize >= f.materials.len() {
            self.error(
                at,
                format!(
                    "{ctx}: material_idx {} is not below the {} materials",
                    s.material_idx,
                    f.materials.len()
                ),
            );
        }
        if s.tri_list.len() % 3 != 0 {
            self.error(
                at + 8,
                format!("{ctx}: tri_list_size {} is not a multiple of 3", s.tri_list.len()),
            );
        }
        self.indices(&format!("{ctx} › tri_list"), u64::from(rec.tri_list_offset), &s.tri_list, n);
        if !s.tri_strip.is_empty() {
            let sctx = format!("{ctx} › tri_strip");
            let soff = u64::from(rec.tri_strip_offset);
            if s.tri_strip.len() < 3 {
                self.error(
                    at + 16,
                    format!("{sctx}: {} indices do not make a triangle", s.tri_strip.len()),
                );
            } else if self.indices(&sctx, soff, &s.tri_strip, n) {
                let mut list = triangles_of_list(&s.tri_list);
                let mut strip = triangles_of_strip(&s.tri_strip);
                list.sort_unstable();
                strip.sort_unstable();
                if list != strip {
                    self.error(soff, format!(
                        "{sctx}: decodes to {} triangles that differ from the list's {} (same winding required)",
                        strip.len(),
                        list.len()
                    ));
                }
            }
        }
        if n > 0 && s.xyz.is_none() {
            self.error(at + 20, format!("{ctx}: {n} vertices but no xyz stream"));
        }
        match (&s.blending, skinned) {
            (None, true) if n > 0 => {
                self.error(at + 56, format!("{ctx}: a skinned mesh without a blending stream"))
            }
            (Some(_), false) => self.warn(
                at + 56,
                format!("{ctx}: a blending stream on an entity that is not skinned"),
            ),
            _ => {}
        }
        if let Some(b) = &s.blending {
            let base = u64::from(rec.s_blending_offset);
            let (mut bad_sum, mut bad_bone) = (None, None);
            let (mut sums, mut bones) = (0usize, 0usize);
            for (v, x) in b.iter().enumerate() {
                let sum: u32 = x.weight.iter().map(|&w| u32::from(w)).sum();
                if sum != VERTEX_WEIGHT_SCALE {
                    sums += 1;
                    bad_sum.get_or_insert((v, sum));
                }
                let used = x.bone_idx.iter().zip(x.weight).filter(|&(_, w)| w > 0);
                if used.clone().any(|(&bi, _)| usize::from(bi) >= f.entities.len()) {
                    bones += 1;
                    bad_bone.get_or_insert(v);
                }
            }
            if let Some((v, sum)) = bad_sum {
                self.error(base + (v * 12) as u64 + 4, format!(
                    "{ctx} › blending: {sums} vertices' weights do not sum to 32768 (first: vertex {v}, sum {sum})"
                ));
            }
            if let Some(v) = bad_bone {
                self.error(base + (v * 12) as u64, format!(
                    "{ctx} › blending: {bones} vertices name a bone index past the {} entities (first: vertex {v})",
                    f.entities.len()
                ));
            }
        }
    }

    /// Reports indices ≥ `n` (once per table, with the count); true when all are in range.
    fn indices(&mut self, ctx: &str, table_at: u64, t: &[u16], n: u32) -> bool {
        let bad: Vec<usize> =
            t.iter().enumerate().filter(|&(_, &i)| u32::from(i) >= n).map(|(k, _)| k).collect();
        if let Some(&k) = bad.first() {
            self.error(
                table_at + 2 * k as u64,
                format!("{ctx}: {} indices ≥ s_size {n} (first: index {k} = {})", bad.len(), t[k]),
            );
        }
        bad.is_empty()
    }
}

fn finite_extents(e: &Extents) -> bool {
    (0..3).all(|k| e.min[k].is_finite() && e.max[k].is_finite() && e.min[k] <= e.max[k])
}

fn float_key_size(t: &FloatTrack) -> usize {
    match t {
        FloatTrack::Tcb(_) => key_size::<super::layout::TcbKey<f32>>(),
        FloatTrack::Linear(_) => key_size::<super::layout::LinearKey<f32>>(),
        FloatTrack::Bezier(_) => key_size::<super::layout::BezierKey<f32>>(),
    }
}

fn key_size<K: KeyRecord>() -> usize {
    K::SIZE
}

fn key_size_vec(t: &VecTrack) -> usize {
    fn s<K: KeyRecord>(_: &KeyTrack<K>) -> usize {
        K::SIZE
    }
    match t {
        VecTrack::Tcb(k) => s(k),
        VecTrack::Linear(k) => s(k),
        VecTrack::Bezier(k) => s(k),
    }
}

fn key_size_vec_or_rot(e: &super::model::Entity, t: usize) -> usize {
    match (t, &e.position, &e.rotation, &e.scale) {
        (0, Some(p), _, _) => key_size_vec(p),
        (2, _, _, Some(s)) => key_size_vec(s),
        (1, _, Some(RotTrack::Tcb(_)), _) => key_size::<super::layout::TcbKey<[f32; 4]>>(),
        (1, _, Some(RotTrack::Linear(_)), _) => key_size::<super::layout::LinearKey<[f32; 4]>>(),
        _ => 0,
    }
}

/// A triangle rotated so its smallest index comes first (winding kept); `None` if degenerate.
fn canonical(a: u16, b: u16, c: u16) -> Option<[u16; 3]> {
    if a == b || b == c || a == c {
        return None;
    }
    Some(if a < b && a < c {
        [a, b, c]
    } else if b < c {
        [b, c, a]
    } else {
        [c, a, b]
    })
}

/// The non-degenerate triangles of a list, canonicalised.
pub fn triangles_of_list(t: &[u16]) -> Vec<[u16; 3]> {
    t.chunks_exact(3).filter_map(|c| canonical(c[0], c[1], c[2])).collect()
}

/// Decodes a triangle strip: triangle k is `(s[k], s[k+1], s[k+2])`, with the first two
/// swapped for odd k so every triangle keeps the strip's winding; triangles with a repeated
/// index (the degenerate ones that stitch strips together) are skipped. This is how a strip
/// from meshopt's `stripify` (restart index 0, i.e. none) or NvTriStrip (stitched) draws.
pub fn triangles_of_strip(s: &[u16]) -> Vec<[u16; 3]> {
    s.windows(3)
        .enumerate()
        .filter_map(|(k, w)| {
            if k % 2 == 0 {
                canonical(w[0], w[1], w[2])
            } else {
                canonical(w[1], w[0], w[2])
            }
        })
        .collect()
}

//! What deforms a mesh: [`Skin`](crate::scene::Skin)s from `Skin` → `Cluster` deformers,
//! [`MorphTarget`](crate::scene::MorphTarget)s from `BlendShape` → `BlendShapeChannel` →
//! `Shape` (and FBX 6 in-file `Shape` records), and
//! [`GeometryCache`](crate::scene::GeometryCache)s from `VertexCacheDeformer`s and their cache
//! files.

use glam::{DMat4, DVec3, Vec3};

use super::super::objects::Object;
use super::super::tree::{NodeRef, Property};
use super::{child_f64, child_i64, child_matrix, child_str, Importer};
use crate::quoting::quoted;
use crate::scene::{CacheFrame, GeometryCache, Mesh, MorphTarget, Skin, SkinJoint};

/// Whether `creator` (the header's `Creator`) names Blender's binary FBX exporter, by ufbx's
/// rule (`ufbxi_match_exporter`, [`blender_exporter_version`]). That exporter writes a
/// shape's per-vertex weights (percent) as its channel's `FullWeights` (ufbx
/// `blender_full_weights`).
pub fn blender_binary_exporter(creator: &str) -> bool {
    blender_exporter_version(creator).is_some()
}

/// The version of Blender's binary FBX exporter that wrote a file whose `Creator` is
/// `creator`, as ufbx's `ufbxi_match_exporter` reads it: case-insensitive `blender`, then past
/// two `-` a version `a.b.c` (`Blender (stable FBX IO) - 2.93.1 - 4.22.0` → `[4, 22, 0]`, the
/// exporter add-on's own version), or else past one `-` a version `a.b` (`[a, b, 0]`); `None`
/// for any other creator (also Blender's ASCII exporter, `Blender version 2.79`). Numbers wrap
/// at 2³² as ufbx's do.
pub fn blender_exporter_version(creator: &str) -> Option<[u32; 3]> {
    let b = creator.as_bytes();
    if b.len() < 7 || !b[..7].eq_ignore_ascii_case(b"blender") {
        return None;
    }
    // Past the next `-` from `pos`, or `None` when there is none.
    let past_dash = |pos: usize| b[pos..].iter().position(|&c| c == b'-').map(|k| pos + k + 1);
    // A version of `parts` dot-separated numbers after optional blanks at `pos`.
    let version = |mut pos: usize, parts: usize| {
        while b.get(pos).is_some_and(|&c| c == b' ' || c == b'\t') {
            pos += 1;
        }
        let mut out = [0u32; 3];
        for (part, slot) in out.iter_mut().enumerate().take(parts) {
            if part > 0 {
                if b.get(pos) != Some(&b'.') {
                    return None;
                }
                pos += 1;
            }
            let digits = b[pos.min(b.len())..].iter().take_while(|c| c.is_ascii_digit()).count();
            if digits == 0 {
                return None;
            }
            for &d in &b[pos..pos + digits] {
                *slot = slot.wrapping_mul(10).wrapping_add(u32::from(d - b'0'));
            }
            pos += digits;
        }
        Some(out)
    };
    past_dash(7)
        .and_then(past_dash)
        .and_then(|p| version(p, 3))
        .or_else(|| past_dash(7).and_then(|p| version(p, 2)))
}

/// Per-vertex weights (0–1, one per base vertex of `n`) of shape record `shape` from
/// Blender's `FullWeights` (percent, one per `Indexes` entry); empty when the counts differ,
/// as ufbx then ignores them. Vertices the shape does not list weigh 1 (they have no offset).
fn shape_vertex_weights(shape: NodeRef<'_, '_>, full: &[f64], n: usize) -> Vec<f64> {
    let indexes = child_i64(shape, "Indexes");
    if indexes.len() != full.len() {
        return Vec::new();
    }
    let mut weights = vec![1.0; n];
    for (&i, &w) in indexes.iter().zip(full) {
        if let Some(slot) = usize::try_from(i).ok().and_then(|i| weights.get_mut(i)) {
            *slot = if w.is_finite() { w / 100.0 } else { 0.0 };
        }
    }
    weights
}

impl<'g, 'd, 'a> Importer<'g, 'd, 'a> {
    /// Skin and blend shape deformers connected to geometry `geo_id` (FBX 6: the model).
    pub(super) fn deformers(&mut self, geo_id: i64, mesh: &mut Mesh, place: &str) {
        let g = self.graph;
        let n = mesh.positions.len();
        let deformers: Vec<&Object<'_, '_>> = g.child_objects(geo_id, "Deformer").collect();
        for d in deformers {
            match d.sub_class {
                "Skin" if mesh.skin.is_none() => {
                    let mut skin = Skin {
                        joints: Vec::new(),
                        influences: vec![Vec::new(); n],
                        dq_weights: Vec::new(),
                        mesh_bind: None,
                    };
                    // `SkinningType` (ufbx `ufbxi_read_skin`): `DualQuaternion` skins every
                    // vertex by dual quaternions, `Blend` mixes per vertex by `BlendWeights`.
                    match child_str(d.node, "SkinningType") {
                        "DualQuaternion" => skin.dq_weights = vec![1.0; n],
                        "Blend" => {
                            skin.dq_weights = vec![0.0; n];
                            for (&i, &w) in child_i64(d.node, "Indexes")
                                .iter()
                                .zip(&child_f64(d.node, "BlendWeights"))
                            {
                                if let Some(slot) =
                                    usize::try_from(i).ok().and_then(|i| skin.dq_weights.get_mut(i))
                                {
                                    *slot = w as f32;
                                }
                            }
                        }
                        _ => {}
                    }
                    let clusters: Vec<&Object<'_, '_>> = g
                        .child_objects(d.id, "Deformer")
                        .filter(|c| c.sub_class == "Cluster")
                        .collect();
                    for cl in clusters {
                        if let Some(bone) = g.child_objects(cl.id, "Model").next() {
                            self.cluster(cl, bone.id, &mut skin, n, place);
                        }
                    }
                    if !skin.joints.is_empty() {
                        mesh.skin = Some(self.scene.skins.len());
                        self.scene.skins.push(skin);
                    }
                }
                "BlendShape" => {
                    let blender = blender_binary_exporter(self.creator());
                    let channels: Vec<&Object<'_, '_>> = g
                        .child_objects(d.id, "Deformer")
                        .filter(|c| c.sub_class == "BlendShapeChannel")
                        .collect();
                    for ch in channels {
                        let shapes: Vec<&Object<'_, '_>> = g
                            .child_objects(ch.id, "Geometry")
                            .filter(|s| s.sub_class == "Shape")
                            .collect();
                        // Shapes reach their full effect at `FullWeights[i] / 100` (1 when
                        // absent), sorted by that weight as ufbx does; the heaviest is the
                        // target, the others are in-betweens.
                        // Blender's binary exporter writes per-vertex shape weights there
                        // instead (see `blender_binary_exporter`): every shape is then reached
                        // at 1, and a shape with as many offsets as `FullWeights` has values
                        // takes them as its per-vertex weights.
                        let full = child_f64(ch.node, "FullWeights");
                        let level = |i: usize| match full.get(i) {
                            Some(w) if !blender => w / 100.0,
                            _ => 1.0,
                        };
                        let mut keyed: Vec<(f64, &Object<'_, '_>)> =
                            shapes.iter().enumerate().map(|(i, s)| (level(i), *s)).collect();
                        keyed.sort_by(|a, b| a.0.total_cmp(&b.0));
                        let Some(&(_, shape)) = keyed.last() else { continue };
                        if !self.charge((n * keyed.len()) as u64) {
                            self.warn(
                                Some(ch.node),
                                place,
                                "blend shape channels exceed the element limit; channel skipped",
                            );
                            continue;
                        }
                        let weight = self.deform_percent(ch) / 100.0;
                        let mut target = self.morph(&ch.name, weight, shape.node, n, place);
                        if blender && !full.is_empty() {
                            target.vertex_weights = shape_vertex_weights(shape.node, &full, n);
                        }
                        for &(w, s) in &keyed[..keyed.len() - 1] {
                            let t = self.morph(&ch.name, weight, s.node, n, place);
                            target.inbetweens.push((w, t.position_deltas));
                        }
                        self.ids
                            .morph_channels
                            .entry(ch.id)
                            .or_default()
                            .push((self.scene.meshes.len(), mesh.morph_targets.len()));
                        mesh.morph_targets.push(target);
                    }
                }
                "VertexCacheDeformer" if mesh.geometry_cache.is_none() => {
                    mesh.geometry_cache = self.cache_deformer(d, n, place);
                }
                _ => {}
            }
        }
    }

    /// The scene geometry cache for `VertexCacheDeformer` `d` on a mesh of `n` vertices, as
    /// ufbx binds it (`ufbxi_load_external_files`): the deformer's `Cache` object names a file,
    /// `CacheFileName` relative to the FBX's folder (leading separators dropped, `\` read as
    /// `/`), else `CacheAbsoluteFileName` as stored; a cache with one channel binds whatever
    /// the deformer's `ChannelName` says (Marvelous Designer writes a wrong one), else the
    /// channel of that name. Only position channels whose frames hold `n` points are kept;
    /// normal channels are not applied. A file that is missing or broken is a warning and the
    /// mesh keeps its other deformers.
    fn cache_deformer(&mut self, d: &Object<'_, '_>, n: usize, place: &str) -> Option<usize> {
        let g = self.graph;
        let file = g.child_objects(d.id, "Cache").next()?;
        let rel = g.get_str(file.id, "CacheFileName", "").to_string();
        let abs = g.get_str(file.id, "CacheAbsoluteFileName", "").to_string();
        let key = if rel.is_empty() { abs.clone() } else { rel.clone() };
        if key.is_empty() {
            return None;
        }
        let loaded = match self.caches.iter().position(|(k, _)| *k == key) {
            Some(i) => i,
            None => {
                let fps = self.scene.meta.frame_rate.unwrap_or(30.0);
                let found = self.cache_candidates(&rel, &abs).into_iter().find(|p| p.is_file());
                let value = match found {
                    None => {
                        self.warn(
                            Some(file.node),
                            place,
                            format!(
                                "geometry cache file {key} not found (also tried {abs}); the \
                                 mesh is not animated by it",
                                key = quoted(&key),
                                abs = quoted(&abs)
                            ),
                        );
                        None
                    }
                    Some(path) => match super::super::cache::load(&path, fps, &self.opts.limits) {
                        Ok(c) => {
                            for w in &c.warnings {
                                self.warn(Some(file.node), place, format!("geometry cache: {w}"));
                            }
                            Some((path, c))
                        }
                        Err(e) => {
                            self.warn(Some(file.node), place, format!("{e}; cache ignored"));
                            None
                        }
                    },
                };
                self.caches.push((key, value));
                self.caches.len() - 1
            }
        };
        let caches = std::mem::take(&mut self.caches);
        let bound =
            caches[loaded].1.as_ref().and_then(|(p, c)| self.bind_channel(d, p, c, n, place));
        self.caches = caches;
        bound
    }

    /// [`Importer::cache_deformer`]'s channel choice in the loaded cache `cache` (file `path`).
    fn bind_channel(
        &mut self,
        d: &Object<'_, '_>,
        path: &std::path::Path,
        cache: &super::super::cache::Cache,
        n: usize,
        place: &str,
    ) -> Option<usize> {
        let g = self.graph;
        let wanted = g.get_str(d.id, "ChannelName", "");
        let channel = match cache.channels.as_slice() {
            [one] => one,
            all => all.iter().find(|c| c.name == wanted)?,
        };
        if channel.interpretation != super::super::cache::Interpretation::Positions {
            return None;
        }
        if channel.frames.iter().any(|f| f.values.len() < n) {
            self.warn(
                Some(d.node),
                place,
                format!(
                    "geometry cache {} channel {} has fewer points than the mesh's {n} \
                     vertices; cache ignored",
                    path.display(),
                    quoted(&channel.name)
                ),
            );
            return None;
        }
        if let Some(i) = self
            .scene
            .geometry_caches
            .iter()
            .position(|c| c.file == *path && c.name == channel.name)
        {
            return Some(i);
        }
        let points = channel.frames.iter().map(|f| f.values.len() as u64).sum::<u64>();
        if !self.charge(points) {
            self.warn(
                Some(d.node),
                place,
                "geometry caches exceed the element limit; cache skipped",
            );
            return None;
        }
        let frames = channel
            .frames
            .iter()
            .map(|f| CacheFrame { time: f.time, positions: f.values.clone() })
            .collect();
        let name = channel.name.clone();
        self.scene.geometry_caches.push(GeometryCache { name, file: path.into(), frames });
        Some(self.scene.geometry_caches.len() - 1)
    }

    /// Where a `Cache` object's file may be, in the order tried: `CacheFileName` under the
    /// FBX's folder (or as is when absolute), then `CacheAbsoluteFileName` as stored and with
    /// `\` read as `/`.
    fn cache_candidates(&self, rel: &str, abs: &str) -> Vec<std::path::PathBuf> {
        let mut out = Vec::new();
        let rel = rel.trim_start_matches(['/', '\\']);
        if !rel.is_empty() {
            let norm = rel.replace('\\', "/");
            let drive = rel.len() > 1 && rel.as_bytes()[1] == b':';
            match &self.opts.base_dir {
                Some(base) if !drive => out.push(base.join(&norm)),
                _ => out.push(norm.into()),
            }
        }
        if !abs.is_empty() {
            out.push(abs.into());
            out.push(abs.replace('\\', "/").into());
        }
        out
    }

    /// In-file blend shapes: `Shape: "Name" { Indexes, Vertices, Normals }` records inside the
    /// object `holder` whose record is `geo` (the FBX 6 mesh model, the FBX 7.1 `Geometry`),
    /// each one channel whose weight is `holder`'s property `Name` (percent), 0 when absent
    /// (ufbx `ufbxi_read_synthetic_blend_shapes`, which reads the holder's properties).
    pub(super) fn legacy_shapes(
        &mut self,
        geo: NodeRef<'_, '_>,
        holder: i64,
        mesh: &mut Mesh,
        place: &str,
    ) {
        let n = mesh.positions.len();
        for shape in geo.children().filter(|c| c.name() == "Shape") {
            let name = shape
                .property(0)
                .and_then(Property::as_bytes)
                .map(|b| String::from_utf8_lossy(b).into_owned())
                .unwrap_or_default();
            if !self.charge(n as u64) {
                self.warn(
                    Some(shape),
                    place,
                    "blend shapes exceed the element limit; shape skipped",
                );
                continue;
            }
            let weight = self.graph.get_f64(holder, &name, 0.0) / 100.0;
            let target = self.morph(&name, weight, shape, n, place);
            self.ids.morph_properties.push((
                holder,
                name,
                self.scene.meshes.len(),
                mesh.morph_targets.len(),
            ));
            mesh.morph_targets.push(target);
        }
    }

    /// Adds cluster `cl` (bone model `bone`) as the next joint of `skin`, the skin about to be
    /// pushed to `Scene::skins`.
    fn cluster(&mut self, cl: &Object<'_, '_>, bone: i64, skin: &mut Skin, n: usize, place: &str) {
        let indexes = child_i64(cl.node, "Indexes");
        let weights = child_f64(cl.node, "Weights");
        let stored = child_matrix(cl.node, "Transform");
        let transform = stored.unwrap_or(DMat4::IDENTITY);
        let link = child_matrix(cl.node, "TransformLink");
        let joint = skin.joints.len() as u32;
        // Bones may come after the mesh in the file: the node is filled in by `hierarchy`.
        // `Transform` already maps the mesh node's frame into the bone's bind frame (it is
        // `TransformLink⁻¹ · mesh world at bind` as exporters write it; ufbx reads it as
        // `mesh_node_to_bone`), so it is the inverse bind matrix as stored. `TransformLink` (the
        // bone's world matrix at bind) times it is the mesh node's world matrix at bind
        // (`Skin::mesh_bind`); without a link, `hierarchy` takes the bone's bind-pose matrix.
        if skin.mesh_bind.is_none() {
            skin.mesh_bind = stored.zip(link).map(|(t, l)| l * t);
        }
        skin.joints.push(SkinJoint { node: usize::MAX, inverse_bind: transform });
        let unlinked = stored.is_some() && link.is_none();
        self.pending.push((self.scene.skins.len(), joint as usize, bone, unlinked));
        let mut bad = 0usize;
        for (&i, &w) in indexes.iter().zip(&weights) {
            match usize::try_from(i).ok().and_then(|i| skin.influences.get_mut(i)) {
                Some(list) => list.push((joint, w as f32)),
                None => bad += 1,
            }
        }
        if bad > 0 {
            self.warn(
                Some(cl.node),
                place,
                format!(
                    "cluster \"{}\": {bad} vertex indices past the {n} vertices ignored",
                    cl.name
                ),
            );
        }
    }

    /// A morph target named `name` of weight `weight` (0–1) from `Shape` record `shape`
    /// (`Indexes`, `Vertices` and `Normals` offsets) over a mesh of `n` vertices.
    fn morph(
        &mut self,
        name: &str,
        weight: f64,
        shape: NodeRef<'_, '_>,
        n: usize,
        place: &str,
    ) -> MorphTarget {
        let indexes = child_i64(shape, "Indexes");
        let verts = child_f64(shape, "Vertices");
        let normals = child_f64(shape, "Normals");
        let mut deltas = vec![DVec3::ZERO; n];
        let mut normal_deltas = (!normals.is_empty()).then(|| vec![Vec3::ZERO; n]);
        let mut bad = 0usize;
        for (k, &i) in indexes.iter().enumerate() {
            let Some(slot) = usize::try_from(i).ok().filter(|&i| i < n) else {
                bad += 1;
                continue;
            };
            if let Some(c) = verts.get(3 * k..3 * k + 3) {
                deltas[slot] = DVec3::new(c[0], c[1], c[2]);
            }
            if let (Some(nd), Some(c)) = (normal_deltas.as_mut(), normals.get(3 * k..3 * k + 3)) {
                nd[slot] = Vec3::new(c[0] as f32, c[1] as f32, c[2] as f32);
            }
        }
        if bad > 0 {
            self.warn(
                Some(shape),
                place,
                format!("shape of channel \"{name}\": {bad} indices past the {n} vertices ignored"),
            );
        }
        MorphTarget {
            name: name.into(),
            position_deltas: deltas,
            normal_deltas,
            default_weight: weight,
            inbetweens: Vec::new(),
            vertex_weights: Vec::new(),
        }
    }

    /// A channel's `DeformPercent` property, else its `DeformPercent` record (Blender writes it
    /// as a record; ufbx `ufbxi_read_blend_channel` reads both), else 0.
    fn deform_percent(&self, ch: &Object<'_, '_>) -> f64 {
        let record = || {
            ch.node.child("DeformPercent").and_then(|n| n.property(0)).and_then(Property::as_f64)
        };
        self.graph
            .prop(ch.id, "DeformPercent")
            .and_then(|p| p.f64())
            .or_else(record)
            .filter(|v| v.is_finite())
            .unwrap_or(0.0)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{load, quad};
    use super::*;

    /// The quad with a blend shape moving vertices 1 and 2 by +Z (channel 60 at
    /// `DeformPercent` 100, `FullWeights` `full`), written by `creator`.
    fn shaped_quad(creator: &str, full: &str) -> String {
        let text = quad("", "");
        let header =
            format!("; FBX 7.4.0 project file\nFBXHeaderExtension: {{ Creator: \"{creator}\" }}\n");
        text.replacen("; FBX 7.4.0 project file\n", &header, 1)
            .replacen(
                "Objects: {\n",
                &format!(
                    r#"Objects: {{
    Deformer: 50, "Deformer::Key", "BlendShape" {{ }}
    Deformer: 60, "SubDeformer::Lift", "BlendShapeChannel" {{
        DeformPercent: 100
        FullWeights: *2 {{ a: {full} }}
    }}
    Geometry: 70, "Geometry::Lift", "Shape" {{
        Indexes: *2 {{ a: 1,2 }}
        Vertices: *6 {{ a: 0,0,1, 0,0,1 }}
    }}
"#
                ),
                1,
            )
            .replacen(
                "C: \"OO\",20,10 }",
                "C: \"OO\",20,10\n    C: \"OO\",50,20\n    C: \"OO\",60,50\n    C: \"OO\",70,60 }",
                1,
            )
    }

    #[test]
    fn blender_binary_full_weights_are_per_vertex_shape_weights() {
        use crate::anim::Time;
        // Blender's binary exporter: `FullWeights` 0 and 50 (percent) weigh the offsets of
        // vertices 1 and 2 (ufbx `offset_weights`): vertex 1 stays, vertex 2 moves by 0.5.
        let (s, _) = load(&shaped_quad("Blender (stable FBX IO) - 2.79 (sub 0) - 3.7.13", "0,50"));
        let t = &s.meshes[0].morph_targets[0];
        assert_eq!(t.vertex_weights, vec![1.0, 0.0, 0.5, 1.0]);
        let z: Vec<f64> =
            s.evaluate(None, Time::Frame(0.0)).world_positions(&s, 0).iter().map(|p| p.z).collect();
        assert_eq!(z, vec![0.0, 0.0, 0.5, 0.0]);
        // Any other exporter: `FullWeights` are the shape's full-effect channel weights, so
        // the shape (at 50) is reached in full by DeformPercent 100 — an in-between-free
        // target whose heaviest level is 0.5; weights stay per channel.
        let (s, _) = load(&shaped_quad("FBX SDK/FBX Plugins version 2020.2", "0,50"));
        assert!(s.meshes[0].morph_targets[0].vertex_weights.is_empty());
    }

    #[test]
    fn blender_binary_exporter_is_recognised_by_ufbx_rule() {
        assert!(blender_binary_exporter("Blender (stable FBX IO) - 2.93.1 - 4.22.0"));
        assert!(blender_binary_exporter("blender-2.72 - 3.2"));
        assert!(!blender_binary_exporter("Blender version 2.79 (sub 0)"));
        assert!(!blender_binary_exporter("FBX SDK/FBX Plugins version 2020.2"));
        assert!(!blender_binary_exporter("Blender (stable FBX IO)"));
        // The exporter's own version, not Blender's (ufbx compares it with 4.12.0).
        let v = blender_exporter_version;
        assert_eq!(v("Blender (stable FBX IO) - 4.0.2 - 5.8.13"), Some([5, 8, 13]));
        assert_eq!(v("Blender (stable FBX IO) - 2.72 (sub 0)"), Some([2, 72, 0]));
        assert_eq!(v("Blender (stable FBX IO) - 2.79 (sub 0) - 3.7.13"), Some([3, 7, 13]));
    }

    #[test]
    fn cluster_inverse_bind_is_the_stored_transform() {
        let text = quad("", "")
            .replace(
                "Model: 10,",
                r#"Deformer: 30, "Deformer::Skin", "Skin" { }
    Deformer: 31, "SubDeformer::Cluster", "Cluster" {
        Indexes: *2 { a: 0,3 }
        Weights: *2 { a: 1,0.5 }
        Transform: *16 { a: 1,0,0,0, 0,1,0,0, 0,0,1,0, 0,0,5,1 }
        TransformLink: *16 { a: 1,0,0,0, 0,1,0,0, 0,0,1,0, 2,0,0,1 }
    }
    Model: 40, "Model::Bone", "LimbNode" { }
    Model: 10,"#,
            )
            .replace(
                r#"C: "OO",20,10"#,
                "C: \"OO\",20,10\n    C: \"OO\",30,20\n    C: \"OO\",31,30\n    C: \"OO\",40,31",
            );
        let (s, _) = load(&text);
        let skin = &s.skins[s.meshes[0].skin.unwrap()];
        assert_eq!(s.nodes[skin.joints[0].node].name, "Bone");
        let p = skin.joints[0].inverse_bind.transform_point3(DVec3::ZERO);
        assert_eq!(p, DVec3::new(0.0, 0.0, 5.0));
        assert_eq!(skin.influences[3], vec![(0, 0.5)]);
        assert!(skin.influences[1].is_empty());
    }
}

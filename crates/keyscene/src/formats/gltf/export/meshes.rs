//! Meshes: one glTF mesh per scene mesh and geometry transform, its primitives (one per
//! material slot, from [`geometry::primitives`]), skin influences and morph targets.

use glam::DMat4;
use gltf_json as json;
use json::validation::Checked::Valid;

use super::skins::skin_of;
use super::Out;
use crate::formats::gltf::geometry::{self, Primitive};
use crate::formats::gltf::{deform, warning, SOURCE_VERTEX_ATTRIBUTE};
use crate::scene::{Mesh, Scene};

/// Integers below 2^24 are exact in f32: the limit for `_KEYSCENE_VERTEX` values.
const MAX_EXACT_F32_INT: u32 = 1 << 24;

/// What the skin pass needs to know about a written glTF mesh.
#[derive(Debug, Clone, Copy)]
pub(super) struct MeshInfo {
    /// Some vertex is bound to the extra mesh-node joint (see [`deform::influences`]).
    pub(super) self_joint: bool,
}

impl Out {
    /// The glTF mesh for scene mesh `m` baked through `bake`, from its primitives and count of
    /// non-finite numbers replaced (`built`: [`geometry::primitives`] of the mesh and `bake`);
    /// `None` when it has no triangles.
    pub(super) fn mesh(
        &mut self,
        scene: &Scene,
        m: usize,
        bake: DMat4,
        node: &str,
        built: (Vec<Primitive>, usize),
    ) -> Option<json::Index<json::Mesh>> {
        let mesh = &scene.meshes[m];
        let (mut prims, bad) = built;
        for p in &mut prims {
            let normal_mapped = self
                .primitive_material(scene, mesh, p.material_slot, !p.uvs.is_empty())
                .is_some_and(|ix| self.root.materials[ix.value()].normal_texture.is_some());
            // Source tangents are written whether or not a normal map needs them.
            if normal_mapped || p.tangents.is_some() {
                geometry::add_tangents(p);
            }
        }
        let place = format!("node \"{node}\" › mesh \"{}\"", mesh.name);
        if bad > 0 {
            self.warnings.push(warning(&place, format!("{bad} non-finite numbers written as 0")));
        }
        if mesh.geometry_cache.is_some() {
            self.warnings.push(warning(
                &place,
                "geometry cache not written (docs/gltf.md, \"Geometry caches\"): the mesh is \
                 written undeformed by it",
            ));
        }
        if prims.is_empty() {
            self.warnings.push(warning(place, "mesh has no triangles: left out"));
            return None;
        }
        let mut primitives: Vec<json::mesh::Primitive> =
            prims.iter().map(|p| self.primitive(scene, mesh, p)).collect();
        let mut info = MeshInfo { self_joint: false };
        if let Some(skin) = skin_of(scene, mesh) {
            info.self_joint = self.skin_influences(scene, skin, &prims, &mut primitives, &place);
        }
        let layout = deform::target_layout(mesh);
        let weights = (!layout.is_empty())
            .then(|| self.morph_targets(mesh, &layout, &prims, &mut primitives, bake, &place));
        let names: Vec<String> = layout.iter().map(|&t| deform::target_name(mesh, t)).collect();
        let extras = (!names.is_empty())
            .then(|| {
                let v = serde_json::json!({ "targetNames": names });
                serde_json::value::RawValue::from_string(v.to_string()).ok()
            })
            .flatten();
        let ix = json::Index::push(
            &mut self.root.meshes,
            json::Mesh {
                extensions: None,
                extras,
                name: Some(mesh.name.clone()),
                primitives,
                weights,
            },
        );
        self.mesh_info.insert(ix.value() as u32, info);
        Some(ix)
    }

    /// Adds `skin`'s joint influences to every primitive (at most `4 × influence_sets` per
    /// vertex, warned when some vertex has more); returns whether some vertex is bound to the
    /// extra mesh-node joint.
    fn skin_influences(
        &mut self,
        scene: &Scene,
        skin: &crate::scene::Skin,
        prims: &[Primitive],
        primitives: &mut [json::mesh::Primitive],
        place: &str,
    ) -> bool {
        let mut self_joint = false;
        let mut truncated = 0;
        for (p, g) in prims.iter().zip(primitives) {
            let inf = deform::influences(skin, p, self.influence_sets, scene.nodes.len());
            truncated += inf.truncated;
            self_joint |= inf.self_joint;
            self.influence_attributes(&inf, g);
        }
        if truncated > 0 {
            self.warnings.push(warning(
                place,
                format!(
                    "{truncated} vertices have more than {} joint influences: the weakest \
                     were dropped and the rest renormalised (raise max_influences to keep them)",
                    4 * self.influence_sets
                ),
            ));
        }
        self_joint
    }

    /// Adds the morph targets of `layout` ([`deform::target_layout`]) to every primitive
    /// (positions, and normals when some target has them); returns the mesh's default glTF
    /// weights.
    fn morph_targets(
        &mut self,
        mesh: &Mesh,
        layout: &[deform::TargetSource],
        prims: &[Primitive],
        primitives: &mut [json::mesh::Primitive],
        bake: DMat4,
        place: &str,
    ) -> Vec<f32> {
        for (p, g) in prims.iter().zip(primitives) {
            let data: Vec<deform::TargetData> =
                layout.iter().map(|&t| deform::target_data(mesh, t, p, bake)).collect();
            let with_normals = data.iter().any(|d| d.normals.is_some());
            let targets = data
                .iter()
                .map(|d| {
                    let positions = Some(self.deltas(&d.positions, true));
                    let normals = with_normals.then(|| {
                        let zero = vec![[0.0; 3]; d.positions.len()];
                        self.deltas(d.normals.as_ref().unwrap_or(&zero), false)
                    });
                    json::mesh::MorphTarget { positions, normals, tangents: None }
                })
                .collect();
            g.targets = Some(targets);
        }
        if mesh.morph_targets.iter().any(|t| !t.inbetweens.is_empty()) {
            self.warnings.push(warning(
                place,
                "in-between shapes written as targets of their own whose weights follow the \
                 channel weight piecewise linearly: exact at every animation sample",
            ));
        }
        let defaults: Vec<f64> = mesh.morph_targets.iter().map(|t| t.default_weight).collect();
        deform::gltf_weights(mesh, &defaults).into_iter().map(|w| w as f32).collect()
    }

    /// Adds `JOINTS_n`/`WEIGHTS_n` to a primitive: joints as unsigned bytes when every index
    /// fits, else unsigned shorts.
    fn influence_attributes(&mut self, inf: &deform::Influences, g: &mut json::mesh::Primitive) {
        use json::accessor::{ComponentType, Type};
        use json::mesh::Semantic;
        let vb = Some(json::buffer::Target::ArrayBuffer);
        let small = inf.joints.iter().flatten().flatten().all(|&j| j <= 255);
        for (set, (joints, weights)) in inf.joints.iter().zip(&inf.weights).enumerate() {
            let (bytes, ct): (Vec<u8>, _) = if small {
                (joints.iter().flatten().map(|&j| j as u8).collect(), ComponentType::U8)
            } else {
                (
                    joints.iter().flatten().flat_map(|j| j.to_le_bytes()).collect(),
                    ComponentType::U16,
                )
            };
            let view = self.view(&bytes, vb);
            let j = self.accessor(view, joints.len(), ct, Type::Vec4, None, None);
            g.attributes.insert(Valid(Semantic::Joints(set as u32)), j);
            let w = self.floats(weights, Type::Vec4, vb, false);
            g.attributes.insert(Valid(Semantic::Weights(set as u32)), w);
        }
    }

    fn primitive(&mut self, scene: &Scene, mesh: &Mesh, p: &Primitive) -> json::mesh::Primitive {
        use json::accessor::Type;
        use json::mesh::Semantic;
        let vb = Some(json::buffer::Target::ArrayBuffer);
        let mut attributes = std::collections::BTreeMap::new();
        attributes
            .insert(Valid(Semantic::Positions), self.floats(&p.positions, Type::Vec3, vb, true));
        attributes.insert(Valid(Semantic::Normals), self.floats(&p.normals, Type::Vec3, vb, false));
        for (set, uvs) in p.uvs.iter().enumerate() {
            attributes.insert(
                Valid(Semantic::TexCoords(set as u32)),
                self.floats(uvs, Type::Vec2, vb, false),
            );
        }
        if let Some(colors) = &p.colors {
            attributes
                .insert(Valid(Semantic::Colors(0)), self.floats(colors, Type::Vec4, vb, false));
        }
        if let Some(tangents) = &p.tangents {
            attributes
                .insert(Valid(Semantic::Tangents), self.floats(tangents, Type::Vec4, vb, false));
        }
        if self.source_vertex_ids && p.source_vertices.iter().all(|&v| v < MAX_EXACT_F32_INT) {
            let ids: Vec<[f32; 1]> = p.source_vertices.iter().map(|&v| [v as f32]).collect();
            let semantic = Semantic::Extras(SOURCE_VERTEX_ATTRIBUTE[1..].to_string());
            attributes.insert(Valid(semantic), self.floats(&ids, Type::Scalar, vb, false));
        }
        let indices = Some(self.indices(&p.indices, p.positions.len()));
        let material = self.primitive_material(scene, mesh, p.material_slot, !p.uvs.is_empty());
        json::mesh::Primitive {
            attributes,
            extensions: None,
            extras: Default::default(),
            indices,
            material,
            mode: Valid(json::mesh::Mode::Triangles),
            targets: None,
        }
    }
}

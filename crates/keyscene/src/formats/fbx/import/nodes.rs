//! [`Node`](crate::scene::Node)s from `Model` objects: kind, transform, pivots, geometry
//! transform and visibility (ufbx `ufbxi_get_transform`), and the mesh each shows — shared by
//! instances with the same materials, a copy for others.

use glam::{DMat4, DVec3};

use super::super::objects::{Object, ObjectProps, PropCache};
use super::super::shared::rotation_setup_with;
use super::super::tree::NodeRef;
use super::Importer;
use crate::scene::{EulerOrder, InheritType, Node, NodeKind, Pivots, Transform};

/// What a model's transform properties give its node (`Importer::transform`).
#[derive(Clone, Copy)]
struct NodeTransform {
    lcl_rotation: DVec3,
    transform: Transform,
    pivots: Option<Pivots>,
    inherit: InheritType,
    geometry: DMat4,
    hidden: bool,
}

impl NodeTransform {
    fn apply(&self, node: &mut Node) {
        node.source.fbx_lcl_rotation = Some(Box::new(self.lcl_rotation));
        node.transform = self.transform;
        node.pivots = self.pivots.map(Box::new);
        node.inherit = self.inherit;
        node.set_geometry_transform(self.geometry);
        node.hidden = self.hidden;
    }
}

/// The model properties [`Importer::transform`] reads, in the order of the `T_*` indices.
const TRANSFORM_PROPS: [&str; 17] = [
    "Lcl Translation",
    "Lcl Rotation",
    "Lcl Scaling",
    "RotationOffset",
    "RotationPivot",
    "PreRotation",
    "PostRotation",
    "ScalingOffset",
    "ScalingPivot",
    "InheritType",
    "GeometricTranslation",
    "GeometricRotation",
    "GeometricScaling",
    "Visibility",
    "RotationActive",
    "RotationSpaceForLimitOnly",
    "RotationOrder",
];

/// `TRANSFORM_PROPS` index of `name` (compile time).
const fn t(name: &str) -> usize {
    let mut i = 0;
    while i < TRANSFORM_PROPS.len() {
        let (a, b) = (TRANSFORM_PROPS[i].as_bytes(), name.as_bytes());
        if a.len() == b.len() {
            let mut k = 0;
            while k < a.len() && a[k] == b[k] {
                k += 1;
            }
            if k == a.len() {
                return i;
            }
        }
        i += 1;
    }
    panic!("not a transform property")
}

fn deg(v: [f64; 3]) -> DVec3 {
    DVec3::from(v) * (std::f64::consts::PI / 180.0)
}

impl<'g, 'd, 'a> Importer<'g, 'd, 'a> {
    pub(super) fn models(&mut self) {
        let g = self.graph;
        // Exact size: a node is some 460 bytes, and doubling would leave up to half unused
        // (10,000 models in `synthetic_id_collision`).
        let models = g.objects().iter().filter(|o| o.class == "Model").count();
        self.scene.nodes.reserve_exact(models);
        self.ids.nodes.reserve(models);
        let mut cache = PropCache::new(&TRANSFORM_PROPS);
        // The transform of models whose properties are all their template's, by template
        // (`ObjectProps::shared`): computed once (`synthetic_id_collision`: 10,000 models).
        let mut shared: Vec<(u32, NodeTransform)> = Vec::new();
        for obj in g.objects().iter().filter(|o| o.class == "Model") {
            let id = obj.id;
            let attr = g.child_objects(id, "NodeAttribute").next();
            let kind_name = match (obj.sub_class, attr) {
                ("" | "Null", Some(a)) if !a.sub_class.is_empty() => a.sub_class,
                (s, _) => s,
            };
            let mut node = Node::new(obj.name.clone(), NodeKind::Null);
            node.source.id = Some(id);
            let props = cache.of(g, obj);
            let transform = match props.shared() {
                Some(key) => match shared.iter().find(|e| e.0 == key) {
                    Some(e) => e.1,
                    None => {
                        let t = self.transform(&props);
                        shared.push((key, t));
                        t
                    }
                },
                None => self.transform(&props),
            };
            transform.apply(&mut node);
            let data_id = attr.map(|a| a.id).unwrap_or(id);
            match kind_name {
                "Mesh" => {
                    let geometry = if obj.node.child("Vertices").is_some() {
                        // A model whose FBX 6 name an earlier model holds loads without its
                        // inline geometry (`ObjectGraph::holds_name`).
                        g.holds_name(obj).then(|| (obj.node, id, obj.name.clone()))
                    } else {
                        g.child_objects(id, "Geometry")
                            .find(|o| o.sub_class == "Mesh" || o.sub_class.is_empty())
                            .map(|o| (o.node, o.id, o.name.clone()))
                    };
                    if let Some((record, geo_id, geo_name)) = geometry {
                        let place = format!("Objects › Model \"{}\"", obj.name);
                        node.mesh = self.instance(record, geo_id, &geo_name, obj, &place);
                        if node.mesh.is_some() {
                            node.kind = NodeKind::Mesh;
                        }
                    }
                }
                "LimbNode" | "Limb" | "Root" | "Skeleton" => node.kind = NodeKind::Bone,
                "Camera" => {
                    self.ids.cameras.insert(data_id, self.scene.cameras.len());
                    node.kind = NodeKind::Camera(self.scene.cameras.len());
                    self.scene.cameras.push(self.camera(data_id, &obj.name));
                }
                "Light" => {
                    self.ids.lights.insert(data_id, self.scene.lights.len());
                    node.kind = NodeKind::Light(self.scene.lights.len());
                    self.scene.lights.push(self.light(data_id, &obj.name));
                }
                _ => {}
            }
            self.ids.nodes.insert(id, self.scene.nodes.len());
            self.scene.nodes.push(node);
        }
    }

    fn transform(&self, props: &ObjectProps<'_, '_, '_, 17>) -> NodeTransform {
        let setup = rotation_setup_with(
            props.get_i64(const { t("RotationActive") }, 1),
            props.get_i64(const { t("RotationSpaceForLimitOnly") }, 0),
            || {
                let pre = props.get_vec3(const { t("PreRotation") }, [0.0; 3]);
                let post = props.get_vec3(const { t("PostRotation") }, [0.0; 3]);
                (props.get_i64(const { t("RotationOrder") }, 0), pre, post)
            },
        );
        let v = |i: usize, def: f64| DVec3::from(props.get_vec3(i, [def; 3]));
        let lcl_rotation = v(const { t("Lcl Rotation") }, 0.0);
        let transform = Transform {
            translation: v(const { t("Lcl Translation") }, 0.0),
            rotation: setup
                .order
                .to_quat(deg(props.get_vec3(const { t("Lcl Rotation") }, [0.0; 3]))),
            scale: v(const { t("Lcl Scaling") }, 1.0),
        };
        let pivots = Pivots {
            rotation_offset: v(const { t("RotationOffset") }, 0.0),
            rotation_pivot: v(const { t("RotationPivot") }, 0.0),
            pre_rotation: setup.pre,
            post_rotation: setup.post,
            pre_rotation_degrees: if setup.uses_rotation_space {
                v(const { t("PreRotation") }, 0.0)
            } else {
                DVec3::ZERO
            },
            post_rotation_degrees: if setup.uses_rotation_space {
                v(const { t("PostRotation") }, 0.0)
            } else {
                DVec3::ZERO
            },
            scaling_offset: v(const { t("ScalingOffset") }, 0.0),
            scaling_pivot: v(const { t("ScalingPivot") }, 0.0),
        };
        let gt = v(const { t("GeometricTranslation") }, 0.0);
        let gr = EulerOrder::Xyz
            .to_quat(deg(props.get_vec3(const { t("GeometricRotation") }, [0.0; 3])));
        let gs = v(const { t("GeometricScaling") }, 1.0);
        NodeTransform {
            lcl_rotation,
            transform,
            pivots: (pivots != Pivots::default()).then_some(pivots),
            inherit: InheritType::from_fbx(props.get_i64(const { t("InheritType") }, 1)),
            geometry: DMat4::from_scale_rotation_translation(gs, gr, gt),
            hidden: crate::anim::visibility_hides(props.get_f64(const { t("Visibility") }, 1.0)),
        }
    }

    /// The scene mesh model `model` shows from geometry record `geo` (object id `geo_id`):
    /// the mesh an earlier model made of the same `Geometry` when the two models have the same
    /// materials (an instance, ufbx `ufbx_mesh::instances`), else a new one. Materials are
    /// connected to the model, not the geometry, and the scene model keeps them on the mesh
    /// (as glTF keeps them on a mesh's primitives), so instances with different materials
    /// (3ds Max's per-instance materials) get their own copy of the geometry.
    fn instance(
        &mut self,
        geo: NodeRef<'_, '_>,
        geo_id: i64,
        name: &str,
        model: &Object<'_, '_>,
        place: &str,
    ) -> Option<usize> {
        let slots = self.material_slots(model.id);
        if let Some(&m) = self.instances.get(&(geo_id, slots.clone())) {
            return Some(m);
        }
        let mesh = self.mesh(geo, geo_id, name, model, place)?;
        let m = self.scene.meshes.len();
        self.scene.meshes.push(mesh);
        self.instances.insert((geo_id, slots), m);
        Some(m)
    }
}

#[cfg(test)]
mod tests {
    use glam::{Vec2, Vec3};

    use super::super::read;
    use super::super::tests::{load, quad};
    use super::*;
    use crate::io::ReadOptions;
    use crate::scene::{LightKind, Mapping};

    #[test]
    fn rotation_order_and_pre_rotation_apply_only_when_rotation_is_active() {
        let props = |active: u8| {
            format!(
                r#"P: "RotationActive", "bool", "", "",{active}
                P: "RotationOrder", "enum", "", "",4
                P: "PreRotation", "Vector3D", "Vector", "",0,0,90
                P: "Lcl Rotation", "Lcl Rotation", "", "A",90,0,90"#
            )
        };
        let deg90 = std::f64::consts::FRAC_PI_2;
        let (s, _) = load(&quad(&props(0), ""));
        let n = &s.nodes[0];
        // Inactive: XYZ order, no pre-rotation (ufbx ≥ 0.23, FBX SDK).
        assert!(n.pivots.is_none());
        assert!(
            n.transform
                .rotation
                .angle_between(EulerOrder::Xyz.to_quat(DVec3::new(deg90, 0.0, deg90)))
                < 1e-12
        );
        let (s, _) = load(&quad(&props(1), ""));
        let n = &s.nodes[0];
        assert!(
            n.transform
                .rotation
                .angle_between(EulerOrder::Zxy.to_quat(DVec3::new(deg90, 0.0, deg90)))
                < 1e-12
        );
        assert!(
            n.pivots
                .as_ref()
                .unwrap()
                .pre_rotation
                .angle_between(glam::DQuat::from_rotation_z(deg90))
                < 1e-12
        );
    }

    /// The quad of [`quad`] shown by 50 more models `1000 + k`; with `materials`, model
    /// `1000 + k` has its own material `2000 + k` (the quad's own model has none).
    fn instanced_quads(materials: bool) -> String {
        let mut text = quad("", "");
        for k in 0..50 {
            let mut objects = format!("Model: {}, \"Model::M{k}\", \"Mesh\" {{ }}", 1000 + k);
            let mut links = format!("C: \"OO\",20,{}\n", 1000 + k);
            if materials {
                objects += &format!("\n    Material: {}, \"Material::m{k}\", \"\" {{ }}", 2000 + k);
                links += &format!("    C: \"OO\",{},{}\n", 2000 + k, 1000 + k);
            }
            text = text.replace("Connections: {", &format!("Connections: {{ {links}"));
            text = text.replace("Objects: {", &format!("Objects: {{\n    {objects}"));
        }
        text
    }

    #[test]
    fn models_sharing_one_geometry_and_their_materials_share_one_mesh() {
        let mut opts = ReadOptions::default();
        // One copy costs 12 (vertices) + 2 × 4 (corners) = 20: a budget of 200 (which the
        // file's some 110 records fit in) holds one copy, not 51.
        opts.limits.max_elements = 200;
        let (s, w) = read(instanced_quads(false).as_bytes(), &opts).unwrap();
        assert_eq!(s.meshes.len(), 1);
        assert_eq!(s.nodes.len(), 51);
        assert!(s.nodes.iter().all(|n| n.mesh == Some(0) && n.kind == NodeKind::Mesh));
        assert!(w.is_empty(), "{w:?}");
    }

    #[test]
    fn instances_with_other_materials_get_copies_that_stop_at_the_element_limit() {
        let mut opts = ReadOptions::default();
        opts.limits.max_elements = 300;
        let (s, w) = read(instanced_quads(true).as_bytes(), &opts).unwrap();
        // Each copy costs 12 (vertices) + 2 × 4 (corners): the budget covers 15 copies, and
        // layers are not charged here (none).
        assert_eq!(s.meshes.len(), 15);
        assert!(w.iter().any(|w| w.message.contains("element limit")), "{w:?}");
        for n in s.nodes.iter().filter_map(|n| n.mesh) {
            assert_eq!(s.meshes[n].material_slots.len(), 1, "each copy has its model's material");
        }
    }

    #[test]
    fn fbx6_duplicate_name_keeps_geometry_and_connections_on_the_first_model() {
        // Two models named alike (as 3ds Max's ASCII writer makes of `"` and `&quot;`): the
        // name, and so the connection to the root and the inline geometry, is the first one's
        // (ufbx keeps the first element of a duplicated id), and the load warns.
        let text = r#"; FBX 6.1.0 project file
FBXHeaderExtension:  { FBXVersion: 6100 }
Objects:  {
    Model: "Model::Box", "Mesh" {
        Vertices: 0,0,0,1,0,0,0,1,0
        PolygonVertexIndex: 0,1,-3
    }
    Model: "Model::Box", "Mesh" {
        Vertices: 0,0,0,2,0,0,0,2,0,2,2,0
        PolygonVertexIndex: 0,1,2,-4
    }
}
Connections:  {
    Connect: "OO", "Model::Box", "Model::Scene"
    Connect: "OO", "Model::Box", "Model::Scene"
}
"#;
        let (s, w) = load(text);
        assert_eq!(s.nodes.len(), 2);
        let meshes: Vec<_> = s.nodes.iter().filter_map(|n| n.mesh).collect();
        assert_eq!(meshes.len(), 1, "only the first model has a mesh");
        assert_eq!(s.nodes[0].mesh, Some(meshes[0]));
        assert_eq!(s.meshes[meshes[0]].positions.len(), 3);
        assert!(w.iter().any(|w| w.message.contains("appears again")), "{w:?}");
    }

    #[test]
    fn fbx5_models_hold_geometry_materials_children_and_take_defaults() {
        let text = r#"; FBX 5.8.0 project file
Model: "Model::Box01" {
    Type: "Mesh"
    Material: "Material::Red" { Diffuse: 1,0,0 }
    Material: "Material::Blue" { Diffuse: 0,0,1 }
    Vertices: 0,0,0,1,0,0,0,1,0,1,1,0
    Normals: 0,0,1,0,0,1,0,0,1,0,0,1
    MaterialAssignation: "ByPolygon"
    Materials: 1,0
    PolygonVertexIndex: 0,1,-3,1,3,-3
    GeometryUVInfo: {
        MappingInformationType: "ByPolygon"
        TextureUV: 0,0,1,1
        TextureUVVerticeIndex: 0,1,0,1,1,0
    }
    Children: "Model::Light01"
}
Model: "Model::Light01" { Type: "Light"
    LightType: 2
    Color: 0.5,0.25,1
    Intensity: 50 }
Takes: { Take: "Take 001" { Model: "Model::Box01" { Channel: "Transform" {
    Channel: "T" { Channel: "X" { Default: 5 } Channel: "Y" { Default: 6 } Channel: "Z" { Default: 7 } }
    Channel: "S" { Channel: "X" { Default: 2 } }
} } } }
"#;
        let (s, _) = load(text);
        assert_eq!(s.nodes.len(), 2);
        assert_eq!(s.nodes[0].kind, NodeKind::Mesh);
        assert_eq!(s.nodes[0].transform.translation, DVec3::new(5.0, 6.0, 7.0));
        assert_eq!(s.nodes[0].transform.scale, DVec3::new(2.0, 1.0, 1.0));
        assert_eq!(s.nodes[1].parent, Some(0));
        let m = &s.meshes[0];
        assert_eq!((m.positions.len(), m.polygon_count()), (4, 2));
        assert_eq!(m.normals.as_ref().unwrap().mapping, Mapping::PerVertex);
        // `ByPolygon` with one index per corner is read per corner.
        assert_eq!(m.uv_sets[0].uvs.get(3, 5, 1), Some(Vec2::new(0.0, 0.0)));
        assert_eq!(m.uv_sets[0].uvs.get(1, 1, 0), Some(Vec2::new(1.0, 1.0)));
        assert_eq!(m.polygon_materials, vec![1, 0]);
        let names: Vec<_> =
            m.material_slots.iter().map(|k| &s.materials[k.unwrap()].name).collect();
        assert_eq!(names, ["Red", "Blue"]);
        assert_eq!(s.materials[0].diffuse, Vec3::new(1.0, 0.0, 0.0));
        let NodeKind::Light(l) = s.nodes[1].kind else { panic!("{:?}", s.nodes[1].kind) };
        assert_eq!((s.lights[l].kind, s.lights[l].intensity), (LightKind::Spot, 0.5));
        assert_eq!(s.lights[l].color, Vec3::new(0.5, 0.25, 1.0));
    }

    #[test]
    fn fbx6_models_hold_their_geometry() {
        let text = r#"; FBX 6.1.0 project file
Objects: {
    Model: "Model::Tri", "Mesh" {
        Properties60: { Property: "Lcl Translation", "Lcl Translation", "A+",0,0,7 }
        Vertices: 0,0,0,1,0,0,0,1,0
        PolygonVertexIndex: 0,1,-3
    }
}
Connections: { Connect: "OO", "Model::Tri", "Model::Scene" }
"#;
        let (s, _) = load(text);
        assert_eq!(s.nodes[0].kind, NodeKind::Mesh);
        assert_eq!(s.meshes[0].positions.len(), 3);
        assert_eq!(s.nodes[0].transform.translation, DVec3::new(0.0, 0.0, 7.0));
    }
}

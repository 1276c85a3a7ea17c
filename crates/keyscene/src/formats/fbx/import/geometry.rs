//! [`Mesh`](crate::scene::Mesh)es from `Geometry` records (FBX 7) or the mesh model's own record
//! (FBX 6 and 5): vertices, polygons, and the layer elements — normals, UV sets, colours,
//! tangents and binormals, smoothing groups and per-polygon materials — with every mapping and
//! reference type.

use glam::{DVec3, Vec2, Vec3, Vec4};

use super::super::objects::Object;
use super::super::tree::{NodeRef, Property};
use super::{child_f64, child_i64, child_str, numbers_i64, Importer};
use crate::scene::{Attribute, Mapping, Mesh, UvSet};

/// How many numbers [`numbers_i64`] would read from the first child called `name`, without
/// reading them (a zlib array is not inflated for it).
fn child_count(node: NodeRef<'_, '_>, name: &str) -> usize {
    node.child(name).map_or(0, |c| match c.properties() {
        [Property::Array(a)] => a.len(),
        list => list.iter().filter(|p| p.as_i64().is_some() || p.as_f64().is_some()).count(),
    })
}

/// The tangent or binormal layer element (`kind`) that goes with a mesh's first
/// UV set, as ufbx binds them (`ufbxi_read_mesh`, "Connect bitangents/tangents to UV sets"):
/// the UV set is the `LayerElementUV` of lowest index; a `Layer` whose `LayerElement` entries
/// (`Type`, `TypedIndex`) name that UV set binds it to the `kind` element of the `TypedIndex`
/// it names (the last such entry of the last such `Layer` wins), whatever order the elements
/// are stored in. A geometry with no `Layer` entries at all (hand-written files) takes the
/// `kind` element of lowest index; one whose `Layer`s bind none to the first UV set has none
/// (ufbx: `vertex_tangent.exists` is false). An element without its data is still returned,
/// so that the caller reports it.
fn bound_to_first_uv_set<'d, 'a>(geo: NodeRef<'d, 'a>, kind: &str) -> Option<NodeRef<'d, 'a>> {
    let index = |c: &NodeRef<'_, '_>| c.property(0).and_then(Property::as_i64).unwrap_or(0);
    let of_kind = |k: Option<i64>| {
        geo.children()
            .filter(|c| c.name() == kind)
            .filter(|c| k.is_none_or(|k| index(c) == k))
            .min_by_key(index)
    };
    let layers: Vec<NodeRef<'d, 'a>> = geo.children().filter(|c| c.name() == "Layer").collect();
    if layers.is_empty() {
        return of_kind(None);
    }
    let uv = geo
        .children()
        .filter(|c| c.name() == "LayerElementUV" && c.child("UV").is_some())
        .map(|c| index(&c))
        .min()?;
    let entries = |l: NodeRef<'d, 'a>| {
        l.children().filter(|c| c.name() == "LayerElement").filter_map(|c| {
            let k = c.child("TypedIndex")?.property(0)?.as_i64()?;
            Some((child_str(c, "Type"), k))
        })
    };
    let layer = layers.iter().rev().find(|&&l| entries(l).any(|e| e == ("LayerElementUV", uv)))?;
    let k = entries(*layer).filter(|e| e.0 == kind).last()?.1;
    of_kind(Some(k))
}

/// The layer element `name` of lowest layer index.
fn first_layer<'d, 'a>(geo: NodeRef<'d, 'a>, name: &str) -> Option<NodeRef<'d, 'a>> {
    geo.children()
        .filter(|c| c.name() == name)
        .min_by_key(|c| c.property(0).and_then(Property::as_i64).unwrap_or(0))
}

fn vec2(c: &[f64]) -> Vec2 {
    Vec2::new(c[0] as f32, c[1] as f32)
}

fn vec3(c: &[f64]) -> Vec3 {
    Vec3::new(c[0] as f32, c[1] as f32, c[2] as f32)
}

/// Per-corner facts a layer element mapping needs.
struct Topology {
    corner_vertex: Vec<u32>,
    corner_polygon: Vec<u32>,
    polygon_count: usize,
}

impl<'g, 'd, 'a> Importer<'g, 'd, 'a> {
    /// The mesh of model `model` from geometry record `geo` (object id `geo_id`): its
    /// polygons, then each layer element in turn, then its materials' FBX 6 textures and its
    /// deformers.
    pub(super) fn mesh(
        &mut self,
        geo: NodeRef<'_, '_>,
        geo_id: i64,
        name: &str,
        model: &Object<'_, '_>,
        place: &str,
    ) -> Option<Mesh> {
        // Instances with different materials each get a copy of their geometry
        // ([`Importer::instance`]): many such models must not multiply memory past the limit.
        let size = |n: &str| {
            geo.child(n).map_or(0, |c| {
                c.properties()
                    .iter()
                    .map(|p| p.as_array().map_or(1, |a| a.len() as u64))
                    .sum::<u64>()
            })
        };
        if !self.charge(size("Vertices") + 2 * size("PolygonVertexIndex")) {
            self.warn(Some(geo), place, "meshes exceed the element limit; mesh skipped");
            return None;
        }
        let (mut mesh, topo) = self.polygons(geo, name, place);
        self.normals(geo, &mut mesh, &topo, place);
        self.uv_sets(geo, model, &mut mesh, &topo, place);
        self.colors_and_tangents(geo, &mut mesh, &topo, place);
        self.smoothing(geo, &mut mesh, &topo, place);
        mesh.material_slots = self.material_slots(model.id);
        self.polygon_materials(geo, &mut mesh, &topo, place);
        self.legacy_textures(geo, geo_id, model.id, &mesh);
        self.deformers(geo_id, &mut mesh, place);
        self.legacy_shapes(geo, geo_id, &mut mesh, place);
        Some(mesh)
    }

    /// The mesh's points and polygons from `Vertices` and `PolygonVertexIndex` (a negative
    /// index ends a polygon; indices past the vertices are clamped to the last one, with a
    /// warning), and the per-corner facts the layer elements map through.
    fn polygons(&mut self, geo: NodeRef<'_, '_>, name: &str, place: &str) -> (Mesh, Topology) {
        let v = child_f64(geo, "Vertices");
        let positions: Vec<DVec3> =
            v.chunks_exact(3).map(|c| DVec3::new(c[0], c[1], c[2])).collect();
        let pvi = child_i64(geo, "PolygonVertexIndex");
        let mut mesh =
            Mesh { name: name.into(), positions, polygon_starts: vec![0], ..Mesh::default() };
        let n = mesh.positions.len();
        let mut clamped = 0usize;
        let mut corner_polygon = Vec::with_capacity(pvi.len());
        for &raw in &pvi {
            let (index, end) = if raw < 0 { (!raw, true) } else { (raw, false) };
            let vtx = if (index as u64) < n as u64 {
                index as u32
            } else {
                clamped += 1;
                n.saturating_sub(1) as u32
            };
            corner_polygon.push((mesh.polygon_starts.len() - 1) as u32);
            mesh.corner_vertices.push(vtx);
            if end {
                mesh.polygon_starts.push(mesh.corner_vertices.len() as u32);
            }
        }
        if *mesh.polygon_starts.last().unwrap_or(&0) as usize != mesh.corner_vertices.len() {
            mesh.polygon_starts.push(mesh.corner_vertices.len() as u32);
        }
        if n == 0 && !mesh.corner_vertices.is_empty() {
            self.warn(Some(geo), place, "polygons but no vertices; polygons dropped");
            mesh.corner_vertices.clear();
            mesh.polygon_starts = vec![0];
            corner_polygon.clear();
        } else if clamped > 0 {
            self.warn(Some(geo), place, format!("{clamped} polygon vertex indices past the {n} vertices, clamped to the last vertex"));
        }
        let topo = Topology {
            corner_vertex: mesh.corner_vertices.clone(),
            corner_polygon,
            polygon_count: mesh.polygon_count(),
        };
        (mesh, topo)
    }

    /// The first `LayerElementNormal`, else FBX 5's `Normals` in the model itself.
    fn normals(&mut self, geo: NodeRef<'_, '_>, mesh: &mut Mesh, topo: &Topology, place: &str) {
        let n = mesh.positions.len();
        if let Some(e) = first_layer(geo, "LayerElementNormal") {
            mesh.normals = self.layer(
                geo,
                e,
                "Normals",
                &["NormalsIndex", "NormalIndex"],
                3,
                topo,
                place,
                vec3,
            );
        } else if geo.child("Normals").is_some() {
            // FBX 5: `Normals` in the model itself, per vertex or per corner by their count;
            // per vertex when both fit only in 5.0 files (ufbx `ufbxi_read_legacy_mesh`).
            let values: Vec<Vec3> = child_f64(geo, "Normals").chunks_exact(3).map(vec3).collect();
            let corners = topo.corner_vertex.len();
            let per_vertex = values.len() == n
                && (values.len() != corners || self.graph.doc.content_version() == 5000);
            if per_vertex {
                mesh.normals = Some(Attribute { values, mapping: Mapping::PerVertex });
            } else if values.len() == corners {
                mesh.normals = Some(Attribute { values, mapping: Mapping::PerCorner });
            }
        }
    }

    /// Every `LayerElementUV` (else FBX 5's `GeometryUVInfo`), the model's `currentUVSet`
    /// first.
    fn uv_sets(
        &mut self,
        geo: NodeRef<'_, '_>,
        model: &Object<'_, '_>,
        mesh: &mut Mesh,
        topo: &Topology,
        place: &str,
    ) {
        let mut uv_layers: Vec<NodeRef<'_, '_>> =
            geo.children().filter(|c| c.name() == "LayerElementUV").collect();
        uv_layers.sort_by_key(|c| c.property(0).and_then(Property::as_i64).unwrap_or(0));
        for e in uv_layers {
            if let Some(uvs) = self.layer(geo, e, "UV", &["UVIndex"], 2, topo, place, vec2) {
                mesh.uv_sets.push(UvSet { name: child_str(e, "Name").to_string(), uvs });
            }
        }
        // FBX 5: one unnamed set, `GeometryUVInfo { TextureUV, TextureUVVerticeIndex }`.
        if let Some(e) = geo.child("GeometryUVInfo").filter(|_| mesh.uv_sets.is_empty()) {
            let index = ["TextureUVVerticeIndex"];
            if let Some(uvs) = self.layer(geo, e, "TextureUV", &index, 2, topo, place, vec2) {
                mesh.uv_sets.push(UvSet { name: String::new(), uvs });
            }
        }
        let current = self.graph.get_str(model.id, "currentUVSet", "");
        if let Some(i) = mesh.uv_sets.iter().position(|s| !current.is_empty() && s.name == current)
        {
            let set = mesh.uv_sets.remove(i);
            mesh.uv_sets.insert(0, set);
        }
    }

    /// The first `LayerElementColor`, and the tangents and binormals bound to the first UV
    /// set.
    fn colors_and_tangents(
        &mut self,
        geo: NodeRef<'_, '_>,
        mesh: &mut Mesh,
        topo: &Topology,
        place: &str,
    ) {
        if let Some(e) = first_layer(geo, "LayerElementColor") {
            mesh.colors = self.layer(geo, e, "Colors", &["ColorIndex"], 4, topo, place, |c| {
                Vec4::new(c[0] as f32, c[1] as f32, c[2] as f32, c[3] as f32)
            });
        }
        // Tangent frames as stored, like the normals (ufbx `ufbxi_read_mesh`): the ones the
        // `Layer` entries bind to the first UV set ([`bound_to_first_uv_set`]).
        if let Some(e) = bound_to_first_uv_set(geo, "LayerElementTangent") {
            let index = ["TangentsIndex", "TangentIndex"];
            mesh.tangents = self.layer(geo, e, "Tangents", &index, 3, topo, place, vec3);
        }
        if let Some(e) = bound_to_first_uv_set(geo, "LayerElementBinormal") {
            let index = ["BinormalsIndex", "BinormalIndex"];
            mesh.binormals = self.layer(geo, e, "Binormals", &index, 3, topo, place, vec3);
        }
    }

    /// The first `LayerElementSmoothing`, per polygon only.
    fn smoothing(&mut self, geo: NodeRef<'_, '_>, mesh: &mut Mesh, topo: &Topology, place: &str) {
        if let Some(e) = first_layer(geo, "LayerElementSmoothing") {
            let mapping = child_str(e, "MappingInformationType");
            let s = child_i64(e, "Smoothing");
            if s.is_empty() || mapping.is_empty() {
                let what =
                    if s.is_empty() { "no Smoothing values" } else { "no MappingInformationType" };
                self.warn(
                    Some(e),
                    place,
                    format!("{} has {what}; layer skipped", describe_layer(e)),
                );
            } else if mapping == "ByPolygon" && s.len() >= topo.polygon_count {
                mesh.smoothing_groups =
                    Some(s[..topo.polygon_count].iter().map(|&b| b as u32).collect());
            }
        }
    }

    /// Each polygon's material slot from the first `LayerElementMaterial` (FBX 5:
    /// `MaterialAssignation` and `Materials` in the model itself); none when every polygon
    /// takes slot 0.
    fn polygon_materials(
        &mut self,
        geo: NodeRef<'_, '_>,
        mesh: &mut Mesh,
        topo: &Topology,
        place: &str,
    ) {
        // FBX 5 keeps `MaterialAssignation` and `Materials` in the model itself.
        let material_layer = first_layer(geo, "LayerElementMaterial")
            .map(|e| (e, "MappingInformationType"))
            .or_else(|| geo.child("MaterialAssignation").map(|_| (geo, "MaterialAssignation")));
        let material_layer = material_layer.filter(|&(e, mapping_name)| {
            let what = if child_count(e, "Materials") == 0 {
                "no Materials values"
            } else if child_str(e, mapping_name).is_empty() {
                "no MappingInformationType"
            } else {
                return true;
            };
            if e.name() == "LayerElementMaterial" {
                let msg = format!("{} has {what}; layer skipped", describe_layer(e));
                self.warn(Some(e), place, msg);
            }
            false
        });
        if let Some((e, mapping_name)) = material_layer {
            let m = child_i64(e, "Materials");
            let slot = |v: i64| {
                if v < 0 || v > u32::MAX as i64 - 1 {
                    Mesh::NO_MATERIAL
                } else {
                    v as u32
                }
            };
            match child_str(e, mapping_name) {
                "ByPolygon" => {
                    let mut per: Vec<u32> =
                        m.iter().take(topo.polygon_count).map(|&v| slot(v)).collect();
                    per.resize(topo.polygon_count, per.last().copied().unwrap_or(0));
                    if per.iter().any(|&s| s != 0) {
                        mesh.polygon_materials = per;
                    }
                }
                _ => {
                    if let Some(&v) = m.first().filter(|&&v| v != 0) {
                        mesh.polygon_materials = vec![slot(v); topo.polygon_count];
                    }
                }
            }
        }
    }

    /// One layer element as an [`Attribute`]: `data` holds `comps` numbers per value, `index`
    /// names the index array of `IndexToDirect`/`Index` references.
    #[allow(clippy::too_many_arguments)]
    fn layer<T: Copy>(
        &mut self,
        geo: NodeRef<'_, '_>,
        e: NodeRef<'_, '_>,
        data: &str,
        index: &[&str],
        comps: usize,
        topo: &Topology,
        place: &str,
        make: impl Fn(&[f64]) -> T,
    ) -> Option<Attribute<T>> {
        if !self.charge(topo.corner_vertex.len() as u64) {
            self.warn(
                Some(e),
                place,
                format!("{}: layers exceed the element limit; layer skipped", e.name()),
            );
            return None;
        }
        let raw = child_f64(e, data);
        let values: Vec<T> = raw.chunks_exact(comps).map(&make).collect();
        // A layer without its data, or without its mapping, is skipped with a warning and the
        // mesh loads without it (ufbx `ufbxi_read_vertex_element` leaves the attribute out:
        // silently without data, with a warning without a mapping it knows).
        if values.is_empty() {
            self.warn(
                Some(e),
                place,
                format!("{} has no {data} values; layer skipped", describe_layer(e)),
            );
            return None;
        }
        let mapping = child_str(e, "MappingInformationType");
        if mapping.is_empty() && e.name() != "GeometryUVInfo" {
            self.warn(
                Some(e),
                place,
                format!("{} has no MappingInformationType; layer skipped", describe_layer(e)),
            );
            return None;
        }
        let reference = child_str(e, "ReferenceInformationType");
        // No `ReferenceInformationType` (FBX 5 `GeometryUVInfo`): the index array when
        // present, as ufbx reads every layer.
        let idx: Option<Vec<i64>> = match reference {
            "IndexToDirect" | "Index" | "" => {
                index.iter().find_map(|n| e.child(n)).map(numbers_i64)
            }
            _ => None,
        };
        // `IndexToDirect` without its index array: ufbx reads the values directly (as
        // `Direct`); so does keyscene, with a warning.
        if idx.is_none() && matches!(reference, "IndexToDirect" | "Index") {
            self.warn(
                Some(e),
                place,
                format!(
                    "{} is {reference} but has no {} array; values read as Direct (as ufbx does)",
                    describe_layer(e),
                    index.first().copied().unwrap_or("index")
                ),
            );
        }
        // Old exporters write `ByPolygon` meaning `ByPolygonVertex`: taken so when there is
        // one index (or value) per corner (ufbx `ufbxi_read_vertex_element`).
        let per_corner_count = idx.as_ref().map_or(values.len(), Vec::len);
        let mapping = match mapping {
            "ByPolygon" if per_corner_count == topo.corner_vertex.len() => "ByPolygonVertex",
            m => m,
        };
        let to_u32 = |v: i64| u32::try_from(v).unwrap_or(u32::MAX);
        /// Per corner `c`: `idx[of(c)]`, else `of(c)` itself. Generic, not `&dyn Fn`, so that
        /// `of` is inlined into the loop over every corner.
        fn per_corner(n: usize, of: impl Fn(usize) -> usize, idx: &Option<Vec<i64>>) -> Vec<u32> {
            (0..n)
                .map(|c| {
                    let k = of(c);
                    match idx {
                        Some(ix) => {
                            ix.get(k).map_or(u32::MAX, |&v| u32::try_from(v).unwrap_or(u32::MAX))
                        }
                        None => u32::try_from(k).unwrap_or(u32::MAX),
                    }
                })
                .collect()
        }
        let corners = topo.corner_vertex.len();
        let mapping = match mapping {
            "ByPolygonVertex" => match &idx {
                Some(_) => Mapping::Indexed(per_corner(corners, |c| c, &idx)),
                None => Mapping::PerCorner,
            },
            "ByVertice" | "ByVertex" => match &idx {
                Some(_) => {
                    Mapping::Indexed(per_corner(corners, |c| topo.corner_vertex[c] as usize, &idx))
                }
                None => Mapping::PerVertex,
            },
            "ByPolygon" => match &idx {
                Some(_) => {
                    Mapping::Indexed(per_corner(corners, |c| topo.corner_polygon[c] as usize, &idx))
                }
                None => Mapping::PerPolygon,
            },
            "AllSame" => {
                let k =
                    idx.as_ref().and_then(|i| i.first()).map(|&v| to_u32(v) as usize).unwrap_or(0);
                let &v = values.get(k)?;
                return Some(Attribute { values: vec![v], mapping: Mapping::AllSame });
            }
            "ByEdge" => {
                // `Edges[e]` is the corner an edge starts at; a corner takes its edge's value.
                let edges = child_i64(geo, "Edges");
                let mut corner_edge = vec![usize::MAX; topo.corner_vertex.len()];
                for (k, &c) in edges.iter().enumerate() {
                    if let Some(slot) = usize::try_from(c).ok().and_then(|c| corner_edge.get_mut(c))
                    {
                        *slot = k;
                    }
                }
                Mapping::Indexed(per_corner(corners, |c| corner_edge[c], &idx))
            }
            other => {
                let other = other.to_string();
                self.warn(
                    Some(e),
                    place,
                    format!("{}: mapping \"{other}\" not known; layer ignored", e.name()),
                );
                return None;
            }
        };
        Some(Attribute { values, mapping })
    }
}

/// `LayerElementNormal 0`: a layer element's record name and layer index, for warnings.
fn describe_layer(e: NodeRef<'_, '_>) -> String {
    match e.property(0).and_then(Property::as_i64) {
        Some(i) => format!("{} {i}", e.name()),
        None => e.name().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{load, quad};
    use super::*;

    #[test]
    fn negative_index_ends_a_polygon_and_out_of_range_indices_are_clamped() {
        let text = quad("", "").replace("a: 0,1,2,-4", "a: 0,1,-3,2,3,-10");
        let (s, w) = load(&text);
        let m = &s.meshes[0];
        assert_eq!(m.polygon_starts, vec![0, 3, 6]);
        assert_eq!(m.corner_vertices, vec![0, 1, 2, 2, 3, 3]);
        assert!(w.iter().any(|w| w.message.contains("clamped")), "{w:?}");
    }

    #[test]
    fn layer_elements_without_data_or_mapping_are_skipped_with_a_warning_and_the_mesh_loads() {
        // Hand-built, one broken layer per kind. ufbx 0.23 `ufbxi_read_vertex_element`: no
        // data array → no attribute; no mapping → no attribute; IndexToDirect without its
        // index array → the values read directly.
        let layers = r#"LayerElementNormal: 0 {
            MappingInformationType: "ByPolygonVertex"
            ReferenceInformationType: "Direct"
        }
        LayerElementUV: 0 {
            ReferenceInformationType: "Direct"
            UV: *8 { a: 0,0, 1,0, 1,1, 0,1 }
        }
        LayerElementTangent: 0 {
            MappingInformationType: "ByPolygonVertex"
            ReferenceInformationType: "IndexToDirect"
            TangentsIndex: *4 { a: 0,0,0,0 }
        }
        LayerElementColor: 0 {
            MappingInformationType: "ByVertice"
            ReferenceInformationType: "IndexToDirect"
            Colors: *16 { a: 1,0,0,1, 0,1,0,1, 0,0,1,1, 1,1,1,1 }
        }
        LayerElementSmoothing: 0 {
            ReferenceInformationType: "Direct"
            Smoothing: *1 { a: 1 }
        }
        LayerElementMaterial: 0 {
            MappingInformationType: "AllSame"
            ReferenceInformationType: "IndexToDirect"
        }"#;
        let (s, w) = load(&quad("", layers));
        let m = &s.meshes[0];
        assert_eq!((m.positions.len(), m.polygon_count()), (4, 1));
        assert!(m.normals.is_none() && m.uv_sets.is_empty() && m.tangents.is_none());
        assert!(m.smoothing_groups.is_none());
        let colors = m.colors.as_ref().unwrap();
        assert_eq!(colors.get(2, 2, 0), Some(Vec4::new(0.0, 0.0, 1.0, 1.0)));
        let said =
            |what: &str| w.iter().any(|w| w.message.contains(what) && w.place.contains("Quad"));
        for what in [
            "LayerElementNormal 0 has no Normals values; layer skipped",
            "LayerElementUV 0 has no MappingInformationType; layer skipped",
            "LayerElementTangent 0 has no Tangents values; layer skipped",
            "LayerElementColor 0 is IndexToDirect but has no ColorIndex array",
            "LayerElementSmoothing 0 has no MappingInformationType; layer skipped",
            "LayerElementMaterial 0 has no Materials values; layer skipped",
        ] {
            assert!(said(what), "{what}: {w:?}");
        }
    }

    #[test]
    fn by_vertex_index_to_direct_values_follow_each_corners_vertex() {
        let layer = r#"LayerElementNormal: 0 {
            MappingInformationType: "ByVertice"
            ReferenceInformationType: "IndexToDirect"
            Normals: *6 { a: 0,0,1, 0,0,-1 }
            NormalsIndex: *4 { a: 1,0,0,1 }
        }"#;
        let (s, _) = load(&quad("", layer));
        let n = s.meshes[0].normals.as_ref().unwrap();
        let at = |c: usize| n.get(s.meshes[0].corner_vertices[c], c, 0).unwrap().z;
        assert_eq!([at(0), at(1), at(2), at(3)], [-1.0, 1.0, 1.0, -1.0]);
    }

    #[test]
    fn tangent_and_binormal_layers_are_read_with_their_own_mapping() {
        // Hand-built: tangents indexed per corner, binormals one per vertex.
        let layers = r#"LayerElementTangent: 0 {
            MappingInformationType: "ByPolygonVertex"
            ReferenceInformationType: "IndexToDirect"
            Tangents: *6 { a: 1,0,0, 0,1,0 }
            TangentsIndex: *4 { a: 0,0,1,1 }
        }
        LayerElementBinormal: 0 {
            MappingInformationType: "ByVertice"
            ReferenceInformationType: "Direct"
            Binormals: *12 { a: 0,1,0, 0,1,0, -1,0,0, -1,0,0 }
        }"#;
        let (s, _) = load(&quad("", layers));
        let m = &s.meshes[0];
        let t = m.tangents.as_ref().unwrap();
        let b = m.binormals.as_ref().unwrap();
        assert_eq!(t.get(1, 1, 0), Some(Vec3::X));
        assert_eq!(t.get(2, 2, 0), Some(Vec3::Y));
        assert_eq!(b.mapping, Mapping::PerVertex);
        assert_eq!(b.get(3, 3, 0), Some(Vec3::NEG_X));
    }

    #[test]
    fn by_polygon_vertex_direct_uvs_are_per_corner_and_the_current_set_comes_first() {
        let layers = r#"LayerElementUV: 0 {
            Name: "first"
            MappingInformationType: "ByPolygonVertex"
            ReferenceInformationType: "Direct"
            UV: *8 { a: 0,0, 1,0, 1,1, 0,1 }
        }
        LayerElementUV: 1 {
            Name: "second"
            MappingInformationType: "AllSame"
            ReferenceInformationType: "Direct"
            UV: *2 { a: 0.5,0.25 }
        }"#;
        let (s, _) = load(&quad(r#"P: "currentUVSet", "KString", "", "U", "second""#, layers));
        let m = &s.meshes[0];
        assert_eq!(
            m.uv_sets.iter().map(|u| u.name.as_str()).collect::<Vec<_>>(),
            ["second", "first"]
        );
        assert_eq!(m.uv_sets[0].uvs.get(0, 3, 0), Some(Vec2::new(0.5, 0.25)));
        assert_eq!(m.uv_sets[1].uvs.mapping, Mapping::PerCorner);
        assert_eq!(m.uv_sets[1].uvs.get(3, 2, 0), Some(Vec2::new(1.0, 1.0)));
    }

    #[test]
    fn tangents_are_the_ones_the_layer_binds_to_the_first_uv_set() {
        // Tangent 5 (x) is stored first, tangent 2 (y) second; Layer 0 binds UV set 0 to
        // tangent 2.
        let geo = |layers: &str| {
            format!(
                r#"; FBX 7.5.0 project file
Objects: {{
    Geometry: 1, "Geometry::g", "Mesh" {{
        Vertices: *9 {{ a: 0,0,0,1,0,0,0,1,0 }}
        PolygonVertexIndex: *3 {{ a: 0,1,-3 }}
        LayerElementTangent: 5 {{
            MappingInformationType: "AllSame"
            ReferenceInformationType: "Direct"
            Tangents: *3 {{ a: 1,0,0 }}
        }}
        LayerElementTangent: 2 {{
            MappingInformationType: "AllSame"
            ReferenceInformationType: "Direct"
            Tangents: *3 {{ a: 0,1,0 }}
        }}
        LayerElementUV: 0 {{
            MappingInformationType: "AllSame"
            ReferenceInformationType: "Direct"
            UV: *2 {{ a: 0,0 }}
        }}
        {layers}
    }}
    Model: 2, "Model::m", "Mesh" {{ }}
}}
Connections: {{
    C: "OO",2,0
    C: "OO",1,2
}}
"#
            )
        };
        let bound = r#"Layer: 0 {
            LayerElement: {
                Type: "LayerElementTangent"
                TypedIndex: 2
            }
            LayerElement: {
                Type: "LayerElementUV"
                TypedIndex: 0
            }
        }"#;
        let tangent = |text: &str| {
            let (s, _) = load(text);
            s.meshes[0].tangents.as_ref().and_then(|t| t.get(0, 0, 0))
        };
        assert_eq!(tangent(&geo(bound)), Some(Vec3::Y));
        // No Layer records: the element of lowest index.
        assert_eq!(tangent(&geo("")), Some(Vec3::Y));
        // A Layer that binds no tangent to the first UV set: none (ufbx: not `exists`).
        let unbound = r#"Layer: 0 {
            LayerElement: {
                Type: "LayerElementUV"
                TypedIndex: 0
            }
        }"#;
        assert_eq!(tangent(&geo(unbound)), None);
    }
}

//! A material of a physically based shading model written back as that model, beside its
//! Phong fallback properties (`DiffuseColor`, `SpecularColor`… as for every material), under
//! the names ufbx and keyscene's reader read it by (`formats/fbx/shading.rs`, docs/fbx.md,
//! "Materials"):
//!
//! - `ShadingModel: "unknown"` (ufbx reads `phong` as Phong whatever else is there);
//! - Arnold, OSL standard surface and Stingray PBS: an `Implementation` with the model's
//!   `RenderAPI` (`ARNOLD_SHADER_ID`, `OSL`, `SFX_PBS_SHADER`) the material is connected to,
//!   and a `BindingTable` under it binding each shader name to the material property
//!   `Maya|<name>`, as Maya writes them;
//! - 3ds Max models (and glTF materials, written as 3ds Max's glTF Material): their class id
//!   (`3dsMax|ClassIDa`/`b`) and properties under their prefix (`3dsMax|Parameters|`,
//!   `3dsMax|`, `3dsMax|main|`);
//! - each stored value under the last table name of its value (the one a reader keeps), as 1,
//!   3 or 4 numbers — the fewest that read back to the same four components; each map
//!   connected to the property a reader looks at first (`<name>_map` for 3ds Max with its
//!   `<name>_map_on` 1, `TEX_<name>_map` with `use_<name>_map` 1 for Stingray PBS); the
//!   roughness-as-glossiness switches set where the source stores glossiness.

use glam::Vec4;

use super::{name_class, p, p_double, p_int, p_vec, props70, Builder, WriteOptions};
use crate::formats::fbx::shading::{model, render_api, MAX_CLASSES, MUL, SHININESS, W1, WIDEN};
use crate::formats::fbx::write::{Record, Value};
use crate::scene::{Material, Pbr, PbrProperty as P, ShadingModel};

/// What reading `n` numbers `v` back gives under table flags `flags` (ufbx
/// `ufbxi_fetch_mapping_maps`: missing numbers 0, W 1 for colours unless four are stored,
/// one number widened to RGB).
fn read_back(n: usize, v: Vec4, flags: u8) -> Vec4 {
    let mut x = match n {
        1 => Vec4::new(v.x, 0.0, 0.0, 0.0),
        3 => v.truncate().extend(0.0),
        _ => v,
    };
    if flags & W1 != 0 && n != 4 {
        x.w = 1.0;
    }
    if flags & WIDEN != 0 && n == 1 {
        x.y = x.x;
        x.z = x.x;
    }
    x
}

/// The `P` record of value `v` named `name`, with the fewest numbers that read back as `v`
/// ([`read_back`]).
fn value_prop(name: &str, v: Vec4, flags: u8) -> Record {
    let n = [1, 3].into_iter().find(|&n| read_back(n, v, flags) == v).unwrap_or(4);
    let d = v.as_dvec4();
    match n {
        1 => p_double(name, d.x),
        3 => p_vec(name, "Vector3D", "Vector", "A", d.truncate()),
        _ => p(name, "ColorAndAlpha", "", "A", d.to_array().map(Value::F64).to_vec()),
    }
}

/// A Blender Principled BSDF ([`ShadingModel::BlenderPhong`]) written back as Blender's
/// exporter writes it: the Phong record the material's Phong fields already make (they are the
/// source's own), plus its metalness as `ReflectionFactor` — the one value of Blender's table
/// (`shading.rs`) that no Phong field holds. The `Creator` of the written file is keyscene's,
/// so ufbx (and keyscene) read it back as Phong; Blender's importer reads it back whole.
fn blender_phong(rec: &mut Record, pbr: &Pbr) {
    let metal = pbr.get(P::Metalness);
    if !metal.has_value {
        return;
    }
    if let Some(props) = rec.children.iter_mut().find(|c| c.name == "Properties70") {
        props.children.push(p_double("ReflectionFactor", f64::from(metal.value.x)));
    }
}

impl Builder {
    /// Adds `pbr`'s values (module docs) to material record `rec` (object `material_id`) and
    /// writes the objects and maps they need.
    pub(super) fn pbr_material(
        &mut self,
        material_id: i64,
        rec: &mut Record,
        mat: &Material,
        pbr: &Pbr,
        opts: &WriteOptions,
    ) {
        if pbr.model == ShadingModel::BlenderPhong {
            return blender_phong(rec, pbr);
        }
        let written =
            if pbr.model == ShadingModel::Gltf { ShadingModel::MaxGltf } else { pbr.model };
        let api = render_api(written);
        let m = model(written, api.is_some());
        let prefix = if api.is_some() { "Maya|" } else { m.prefix };
        let mut props = Vec::new();
        // (material property, shader property) of every property written, for the binding
        // table of a shader model.
        let mut bound: Vec<(String, String)> = Vec::new();
        // A switch named `name` (shader name) set to `on`.
        let switch =
            |props: &mut Vec<Record>, bound: &mut Vec<(String, String)>, name: &str, on: bool| {
                props.push(p_double(&format!("{prefix}{name}"), if on { 1.0 } else { 0.0 }));
                bound.push((format!("{prefix}{name}"), name.to_string()));
            };
        if let Some(&(a, b, _)) = MAX_CLASSES.iter().find(|c| c.2 == written) {
            props.push(p_int("3dsMax|ClassIDa", a as i32));
            props.push(p_int("3dsMax|ClassIDb", b as i32));
        }
        let switched = [pbr.get(P::Glossiness).has_value, pbr.get(P::CoatGlossiness).has_value];
        let mut maps = Vec::new();
        for p in P::ALL {
            let source = match p {
                P::Glossiness | P::CoatGlossiness => continue,
                P::Roughness if switched[0] => P::Glossiness,
                P::CoatRoughness if switched[1] => P::CoatGlossiness,
                _ => p,
            };
            let v = pbr.get(source);
            let entries: Vec<_> =
                m.entries.iter().filter(|e| e.0 == p && e.1 & (MUL | SHININESS) == 0).collect();
            let (Some(first), Some(last)) = (entries.first(), entries.last()) else { continue };
            if v.has_value {
                let name = format!("{prefix}{}", last.2);
                props.push(value_prop(&name, v.value, last.1));
                bound.push((name, last.2.to_string()));
            }
            // A map without file or image is not written (`Builder::material_map`).
            if let Some(t) =
                v.texture.as_ref().filter(|t| !t.file.is_empty() || t.embedded.is_some())
            {
                let tex = match m.map {
                    Some((pre, suf)) => format!("{pre}{}{suf}", first.2),
                    None => first.2.to_string(),
                };
                bound.push((format!("{prefix}{tex}"), tex.clone()));
                maps.push((t.clone(), format!("{prefix}{tex}")));
                if let Some((pre, suf)) = m.map_on {
                    switch(&mut props, &mut bound, &format!("{pre}{}{suf}", first.2), true);
                }
            }
        }
        for &(_, k, name) in m.switches {
            switch(&mut props, &mut bound, name, switched[k]);
        }
        for c in rec.children.iter_mut() {
            match c.name.as_str() {
                "ShadingModel" => *c = Record::one("ShadingModel", "unknown"),
                "Properties70" => c.children.extend(std::mem::take(&mut props)),
                _ => {}
            }
        }
        if let Some(api) = api {
            self.shader_objects(material_id, mat, api, &bound);
        }
        for (t, prop) in maps {
            self.material_map(material_id, &t, &prop, opts);
        }
    }

    /// The `Implementation` (with `RenderAPI` `api`) material `material_id` is connected to,
    /// and its `BindingTable` binding `bound` (material property, shader property).
    fn shader_objects(
        &mut self,
        material_id: i64,
        mat: &Material,
        api: &str,
        bound: &[(String, String)],
    ) {
        let imp = self.id();
        let name = format!("{}_Implementation", mat.name);
        self.objects.push(
            Record::with(
                "Implementation",
                vec![Value::I64(imp), name_class(&name, "Implementation"), Value::str("")],
            )
            .child(Record::one("Version", 100))
            .child(props70(vec![
                p("RenderAPI", "KString", "", "", vec![Value::str(api)]),
                p("RootBindingName", "KString", "", "", vec![Value::str("root")]),
            ])),
        );
        self.count("Implementation");
        let table = self.id();
        let mut t = Record::with(
            "BindingTable",
            vec![Value::I64(table), name_class("root", "BindingTable"), Value::str("")],
        )
        .child(Record::one("Version", 100))
        .child(props70(vec![
            p("TargetName", "KString", "", "", vec![Value::str("root")]),
            p("TargetType", "KString", "", "", vec![Value::str("shader")]),
        ]));
        for (material_prop, shader_prop) in bound {
            t.push(Record::with(
                "Entry",
                vec![
                    Value::str(material_prop),
                    Value::str("FbxPropertyEntry"),
                    Value::str(shader_prop),
                    Value::str("FbxSemanticEntry"),
                ],
            ));
        }
        self.objects.push(t);
        self.count("BindingTable");
        self.oo(material_id, imp);
        self.oo(table, imp);
    }
}

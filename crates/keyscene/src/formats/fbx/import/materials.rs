//! [`Material`](crate::scene::Material)s from `Material` objects (colours and factors kept
//! apart, values that cannot be right reported) and their
//! [`TextureMap`](crate::scene::TextureMap)s: connected `Texture`s, file names, embedded `Video`
//! content, wrap modes, and FBX 6 texture layers patched onto the polygons' materials; and a
//! model's material slots, the scene materials connected to it.

use glam::Vec3;

use super::super::objects::{ConnectionKind, Object};
use super::super::tree::NodeRef;
use super::{child_i64, child_str, pbr, Importer};
use crate::scene::{MapSlot, Material, Mesh, TextureMap, UvTransform, WrapMode};

/// [`child_str`] for names that need not be UTF-8 (file names written in a legacy code page):
/// each byte that does not start a valid UTF-8 sequence, and each NUL, becomes U+FFFD, as
/// ufbx's default `UFBX_UNICODE_ERROR_HANDLING_REPLACEMENT_CHARACTER` makes them
/// (`ufbxi_push_sanitized_string_entry`), so file names compare equal with ufbx's.
fn child_str_lossy(node: NodeRef<'_, '_>, name: &str) -> String {
    let bytes = node.child(name).and_then(|n| n.property(0)).and_then(|p| p.as_bytes());
    utf8_per_byte(bytes.unwrap_or(&[]))
}

/// `bytes` as UTF-8, every byte that does not start a valid sequence (and every NUL)
/// replaced by U+FFFD, one per byte ([`child_str_lossy`]).
fn utf8_per_byte(mut bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    loop {
        match std::str::from_utf8(bytes) {
            Ok(s) => {
                out.push_str(s);
                break;
            }
            Err(e) => {
                let (good, rest) = bytes.split_at(e.valid_up_to());
                out.push_str(std::str::from_utf8(good).unwrap_or_default());
                out.push('\u{FFFD}');
                bytes = rest.get(1..).unwrap_or(&[]);
            }
        }
    }
    out.replace('\0', "\u{FFFD}")
}

/// The texture slot of a material property a texture is connected to (FBX 7 names, and the
/// FBX 6 names of `LayerElement<Property>Textures`); `None` for properties no slot carries.
fn map_slot(prop: &str) -> Option<MapSlot> {
    Some(match prop {
        "DiffuseColor" | "Diffuse" => MapSlot::Diffuse,
        "TransparentColor" | "Transparent" | "TransparencyFactor" | "Opacity" => MapSlot::Opacity,
        "Bump" | "NormalMap" | "BumpFactor" => MapSlot::Bump,
        "SpecularColor" | "Specular" | "SpecularFactor" => MapSlot::Specular,
        "ShininessExponent" | "Shininess" => MapSlot::Shininess,
        "ReflectionColor" | "Reflection" | "ReflectionFactor" => MapSlot::Reflection,
        "EmissiveColor" | "Emissive" | "EmissiveFactor" => MapSlot::Emissive,
        _ => return None,
    })
}

impl<'g, 'd, 'a> Importer<'g, 'd, 'a> {
    pub(super) fn materials(&mut self) {
        let g = self.graph;
        for obj in g.objects().iter().filter(|o| o.class == "Material") {
            let id = obj.id;
            // Values that cannot be right (a decimal-comma exporter's 588235300000000 for
            // 0.5882353, inf/NaN): kept, with a warning naming the property.
            let insane = std::cell::RefCell::new(Vec::<String>::new());
            let check = |name: &str, v: &[f64]| {
                if v.iter().any(|x| !(x.abs() <= SANE_COLOR_LIMIT)) {
                    let shown: Vec<String> = v.iter().map(|x| x.to_string()).collect();
                    insane.borrow_mut().push(format!("{name} {}", shown.join(", ")));
                }
            };
            // A colour property, or its FBX 6 legacy name (the newer name wins where both are
            // stored, as in ufbx's material map table, which reads `Diffuse` then
            // `DiffuseColor`).
            let color = |name: &str, legacy: &str, def: [f64; 3]| {
                let (used, v) = match g.prop(id, name).and_then(|p| p.vec3()) {
                    Some(v) => (name, v),
                    None => match g.prop(id, legacy).and_then(|p| p.vec3()) {
                        Some(v) => (legacy, v),
                        None => (name, def),
                    },
                };
                check(used, &v);
                Vec3::new(v[0] as f32, v[1] as f32, v[2] as f32)
            };
            // A factor as stored, or its older name (a non-finite one reads as the default 1,
            // with a warning).
            let factor = |name: &str, legacy: &str| {
                let name = if g.prop(id, name).is_none() && g.prop(id, legacy).is_some() {
                    legacy
                } else {
                    name
                };
                if let Some(raw) = g.prop_values(id, name).and_then(|v| v.first()?.as_f64()) {
                    check(name, &[raw]);
                }
                g.get_f64(id, name, 1.0) as f32
            };
            let opacity = g.prop(id, "Opacity").and_then(|p| p.f64()).filter(|o| o.is_finite());
            let mut m = Material {
                name: obj.name.to_string(),
                ambient: color("AmbientColor", "Ambient", [0.0; 3]),
                ambient_factor: factor("AmbientFactor", "AmbientFactor"),
                diffuse: color("DiffuseColor", "Diffuse", [0.8; 3]),
                diffuse_factor: factor("DiffuseFactor", "DiffuseFactor"),
                specular: color("SpecularColor", "Specular", [0.0; 3]),
                shininess: (g.get_f64(id, "ShininessExponent", g.get_f64(id, "Shininess", 0.0))
                    / 100.0)
                    .clamp(0.0, 1.0) as f32,
                shininess_strength: g.get_f64(id, "SpecularFactor", 0.0) as f32,
                emissive: color("EmissiveColor", "Emissive", [0.0; 3]),
                emissive_factor: factor("EmissiveFactor", "EmissiveFactor"),
                transparent: color("TransparentColor", "Transparent", [0.0; 3]),
                transparency_factor: factor("TransparencyFactor", "TransparentFactor"),
                opacity: opacity.map(|o| o as f32),
                ..Material::default()
            };
            m.update_fbx_derived();
            let pbr = self.pbr(obj);
            let own_diffuse = g.own_prop_names(obj).any(|n| n == "DiffuseColor" || n == "Diffuse");
            if pbr.model.is_pbr() && !own_diffuse {
                pbr::phong_from_pbr(&mut m, &pbr);
            }
            let place = format!("Objects › Material \"{}\"", obj.name);
            let insane = insane.into_inner();
            if !insane.is_empty() {
                self.warn(
                    Some(obj.node),
                    &place,
                    format!(
                        "{}: outside ±{SANE_COLOR_LIMIT} (decimal commas? inf/NaN?); kept as read, \
                         writers clamp colours to 0..1",
                        insane.join("; ")
                    ),
                );
            }
            let mut diffuse_color_maps = 0;
            for c in g.children(id).filter(|c| c.kind == ConnectionKind::ObjectProperty) {
                let Some(tex) = g.object(c.child).filter(|o| o.class == "Texture") else {
                    continue;
                };
                let prop = c.parent_prop().unwrap_or("");
                let Some(slot) = map_slot(prop) else { continue };
                let map = self.texture_map(tex, slot);
                // ufbx's `ufbx_material.fbx.diffuse_color` looks up `Diffuse`, then
                // `DiffuseColor` (the later one wins): a `DiffuseColor` texture goes before
                // the `Diffuse` ones. Among themselves they keep the connection order, as
                // ufbx's `ufbx_find_prop_texture` (a stable sort by property name, then the
                // first match) makes the first connected one the property's texture.
                let at = if prop == "DiffuseColor" {
                    let first = m.maps.iter().position(|t| t.slot == MapSlot::Diffuse);
                    diffuse_color_maps += 1;
                    first.map_or(m.maps.len(), |f| f + diffuse_color_maps - 1)
                } else {
                    m.maps.len()
                };
                m.maps.insert(at, map);
            }
            // ufbx `ufbxi_fetch_textures`: any texture connected to the material with no
            // source property, on any of its properties or none.
            let textured = g
                .children(id)
                .filter(|c| c.kind != ConnectionKind::PropertyProperty)
                .filter_map(|c| g.object(c.child))
                .any(|o| o.class == "Texture" || o.class == "LayeredTexture");
            // After the material's own maps: a PBR map fills only a Phong slot left empty.
            if pbr.model.is_pbr() {
                pbr::phong_maps_from_pbr(&mut m, &pbr);
            }
            m.pbr = Some(pbr);
            self.ids.materials.insert(id, self.scene.materials.len());
            self.scene.materials.push(m);
            self.textured.push(textured);
        }
    }

    /// The scene materials connected to model `model`, in connection order (`None`: a
    /// material that did not become a scene material).
    pub(super) fn material_slots(&self, model: i64) -> Vec<Option<usize>> {
        self.graph
            .child_objects(model, "Material")
            .map(|m| self.ids.materials.get(&m.id).copied())
            .collect()
    }

    /// The texture map `tex` makes in `slot`: its file ([`Importer::texture_file`], or for a 3ds
    /// Max shader map the file it stands for, [`Importer::shader_file`]), that file found next
    /// to the scene, its embedded image and its wrap modes.
    pub(super) fn texture_map(&mut self, tex: &Object<'_, '_>, slot: MapSlot) -> TextureMap {
        let g = self.graph;
        let mut file = self.texture_file(tex);
        // A 3ds Max shader map names its image deeper (an output selector, a file shader),
        // for every material property as ufbx propagates it (`Importer::shader_file`).
        if file.is_empty() {
            file = self.shader_file(tex).unwrap_or_default();
        }
        let resolved = self.resolve(&file);
        let embedded = self.texture_content(tex);
        // `WrapModeU`/`WrapModeV`: 0 repeat (the default), 1 clamp (ufbx
        // `ufbxi_read_texture`), a property or, in older files, a record of the
        // texture; other values are not defined and read as repeat.
        let wrap = |name: &str| {
            let record = || tex.node.child(name).and_then(|c| c.property(0)?.as_i64());
            match g.prop(tex.id, name).and_then(|p| p.i64()).or_else(record) {
                Some(1) => WrapMode::Clamp,
                _ => WrapMode::Repeat,
            }
        };
        TextureMap {
            slot,
            file,
            resolved,
            embedded,
            strength: 1.0,
            uv_transform: UvTransform::default(),
            flags: 0,
            wrap: [wrap("WrapModeU"), wrap("WrapModeV")],
        }
    }

    /// FBX 6 keeps a mesh's textures in its geometry: `LayerElementTexture` (the diffuse
    /// texture) and `LayerElement<Property>Textures` / `LayerElement<Property>_Textures`
    /// (e.g. `LayerElementEmissive_Textures`) hold a `TextureId` per polygon (or one,
    /// `AllSame`) into the textures connected to the geometry, then to its model, in file
    /// order; the polygon's material gets that texture on `<Property>`. As ufbx does
    /// (`ufbxi_read_mesh`, then "Patch the textures from meshes" in `ufbxi_finalize_scene`):
    /// only materials without textures of their own get them, the first mesh that gives a
    /// material some decides them, and per material they go in texture order.
    pub(super) fn legacy_textures(
        &mut self,
        geo: NodeRef<'_, '_>,
        geo_id: i64,
        model_id: i64,
        mesh: &Mesh,
    ) {
        let g = self.graph;
        if mesh.material_slots.is_empty() {
            return;
        }
        let mut layers = Vec::new();
        for e in geo.children() {
            let name = e.name();
            let prop = if name == "LayerElementTexture" {
                "Diffuse"
            } else if let Some(p) = name
                .strip_prefix("LayerElement")
                .and_then(|p| p.strip_suffix("Textures"))
                .filter(|_| name.len() > 20)
            {
                p.strip_suffix('_').unwrap_or(p)
            } else {
                continue;
            };
            let mapping = child_str(e, "MappingInformationType");
            if mapping.is_empty() {
                continue;
            }
            layers.push((prop, mapping == "AllSame", child_i64(e, "TextureId")));
        }
        if layers.is_empty() {
            return;
        }
        let mut textures: Vec<&Object<'_, '_>> = g.child_objects(geo_id, "Texture").collect();
        if model_id != geo_id {
            textures.extend(g.child_objects(model_id, "Texture"));
        }
        // (material slot, texture index, property), sorted and deduplicated as ufbx does.
        let mut picks: Vec<(usize, usize, &str)> = Vec::new();
        let slots = mesh.material_slots.len();
        let faces = mesh.polygon_count();
        for (prop, all_same, ids) in &layers {
            if *all_same {
                let t = ids.first().copied().unwrap_or(0);
                if t >= 0 && (t as usize) < textures.len() {
                    picks.extend((0..slots).map(|s| (s, t as usize, *prop)));
                }
            } else {
                for (p, &t) in ids.iter().take(faces).enumerate() {
                    let s = mesh.polygon_materials.get(p).copied().unwrap_or(0) as usize;
                    if t >= 0 && (t as usize) < textures.len() && s < slots {
                        picks.push((s, t as usize, *prop));
                    }
                }
            }
        }
        picks.sort();
        picks.dedup();
        let mut done: Vec<usize> = Vec::new();
        for (s, t, prop) in picks {
            let Some(mat) = mesh.material_slots[s] else { continue };
            if self.textured.get(mat).copied().unwrap_or(true) && !done.contains(&mat) {
                continue;
            }
            if !done.contains(&mat) {
                done.push(mat);
            }
            self.legacy_pbr_texture(mat, prop, textures[t]);
            let Some(slot) = map_slot(prop) else { continue };
            let map = self.texture_map(textures[t], slot);
            self.scene.materials[mat].maps.push(map);
        }
        for mat in done {
            self.textured[mat] = true;
        }
    }

    /// The texture's file name: `RelativeFilename`, else `FileName`, of the texture or else of
    /// its `Video`.
    pub(super) fn texture_file(&self, tex: &Object<'_, '_>) -> String {
        let pick = |n: NodeRef<'_, '_>| {
            let rel = child_str_lossy(n, "RelativeFilename");
            let abs = child_str_lossy(n, "FileName");
            let abs = if abs.is_empty() { child_str_lossy(n, "Filename") } else { abs };
            if rel.is_empty() {
                abs
            } else {
                rel
            }
        };
        let own = pick(tex.node);
        if !own.is_empty() {
            return own;
        }
        let prop = self.graph.get_str(tex.id, "FileName", "").to_string();
        if !prop.is_empty() {
            return prop;
        }
        self.graph
            .child_objects(tex.id, "Video")
            .map(|v| pick(v.node))
            .find(|f| !f.is_empty())
            .unwrap_or_default()
    }

    /// The embedded image bytes of a texture: the `Content` of its first `Video` that has
    /// some (ufbx `ufbx_texture::content` is its video's), decoded once per video; a
    /// `Content` that does not decode is reported and left out.
    fn texture_content(&mut self, tex: &Object<'_, '_>) -> Option<std::sync::Arc<[u8]>> {
        let g = self.graph;
        for video in g.child_objects(tex.id, "Video") {
            if let Some(cached) = self.videos.get(&video.id) {
                if cached.is_some() {
                    return cached.clone();
                }
                continue;
            }
            let decoded = match super::super::media::content(video.node, g.doc.encoding) {
                Ok(bytes) => bytes.map(|b| std::sync::Arc::<[u8]>::from(&*b)),
                Err(e) => {
                    let place = format!("Video \"{}\"", video.name);
                    self.warn(Some(video.node), &place, e.to_string());
                    None
                }
            };
            self.videos.insert(video.id, decoded.clone());
            if decoded.is_some() {
                return decoded;
            }
        }
        None
    }

    /// The texture file next to the scene: the relative path, then the bare file name.
    pub(super) fn resolve(&self, file: &str) -> Option<std::path::PathBuf> {
        let base = self.opts.base_dir.as_ref()?;
        if file.is_empty() {
            return None;
        }
        let norm = file.replace('\\', "/");
        let rel = base.join(&norm);
        if rel.is_file() {
            return Some(rel);
        }
        let name = norm.rsplit('/').next()?;
        let bare = base.join(name);
        if bare.is_file() {
            return Some(bare);
        }
        // Case-insensitively (`ReadOptions::base_dir`), as the 3DS reader finds its maps: a
        // file written from a 3DS source names `TEST.PNG` for `test.png`.
        std::fs::read_dir(base)
            .ok()?
            .filter_map(Result::ok)
            .find(|e| e.file_name().to_str().is_some_and(|n| n.eq_ignore_ascii_case(name)))
            .map(|e| e.path())
            .filter(|p| p.is_file())
    }
}

/// Largest magnitude a material colour component or factor can sensibly have. Larger ones
/// (a decimal-comma exporter writes 0.5882353 as 588235300000000) and inf/NaN load with a
/// warning naming the property (docs/fbx.md, "Values that cannot be right"). 10⁴ leaves room
/// for HDR emission strengths, which stay in the hundreds.
pub const SANE_COLOR_LIMIT: f64 = 1.0e4;

#[cfg(test)]
mod tests {
    use super::super::tests::load;
    use super::*;

    #[test]
    fn material_colours_and_factors_are_kept_apart_the_newer_name_winning() {
        // Maya writes the 7.x `DiffuseColor` and the premultiplied FBX 6.1 `Diffuse` both;
        // ufbx's material map table reads `Diffuse`, then `DiffuseColor` (the later wins).
        // The second material is FBX 6.1 style: names without `Color`, no factors.
        let text = r#"; FBX 7.4.0 project file
Objects: {
    Material: 30, "Material::maya", "" { Properties70: {
        P: "DiffuseColor", "Color", "", "A",0.5,0.5,0.25
        P: "DiffuseFactor", "Number", "", "A",0.8
        P: "Diffuse", "Vector3D", "Vector", "",0.4,0.4,0.2
        P: "AmbientColor", "Color", "", "A",0.2,0.2,0.2
        P: "AmbientFactor", "Number", "", "A",0.5
        P: "EmissiveColor", "Color", "", "A",0.5,0.25,0
        P: "EmissiveFactor", "Number", "", "A",0.5
        P: "TransparentColor", "Color", "", "A",1,1,1
        P: "TransparencyFactor", "Number", "", "A",0.25
    } }
    Material: 31, "Material::legacy", "" { Properties70: {
        P: "Diffuse", "Vector3D", "Vector", "",1,0,0
        P: "Opacity", "double", "Number", "",0.75
    } }
}
"#;
        let (s, _) = load(text);
        let (m, legacy) = (&s.materials[0], &s.materials[1]);
        assert_eq!((m.diffuse, m.diffuse_factor), (Vec3::new(0.5, 0.5, 0.25), 0.8));
        assert!((m.effective_diffuse() - Vec3::new(0.4, 0.4, 0.2)).abs().max_element() < 1e-6);
        assert_eq!((m.ambient, m.ambient_factor), (Vec3::splat(0.2), 0.5));
        assert_eq!(m.effective_emissive(), Vec3::new(0.25, 0.125, 0.0));
        // Without `Opacity`: transparency = mean(TransparentColor × TransparencyFactor);
        // self-illumination = the brightest emissive channel × factor.
        assert_eq!((m.transparency, m.self_illumination), (0.25, 0.25));
        assert_eq!((legacy.diffuse, legacy.diffuse_factor), (Vec3::X, 1.0));
        assert_eq!((legacy.opacity, legacy.transparency), (Some(0.75), 0.25));
    }

    #[test]
    fn a_curve_on_a_material_factor_animates_the_material() {
        // DiffuseFactor 0.8 stored, keyed linearly 0 → 1 over the first second (KTime
        // 46186158000 ticks per second): at 0.5 s the factor is 0.5, the colour shown 0.5 ×
        // DiffuseColor (hand-computed), and the stored material is unchanged.
        let text = r#"; FBX 7.4.0 project file
Objects: {
    Material: 30, "Material::m", "" { Properties70: {
        P: "DiffuseColor", "Color", "", "A",1,0.5,0
        P: "DiffuseFactor", "Number", "", "A",0.8
    } }
    AnimationStack: 50, "AnimStack::Take 001", "" {
    }
    AnimationLayer: 51, "AnimLayer::BaseLayer", "" {
    }
    AnimationCurveNode: 60, "AnimCurveNode::DiffuseFactor", "" { Properties70: {
        P: "d|DiffuseFactor", "Number", "", "A",0.8
    } }
    AnimationCurve: 70, "AnimCurve::", "" {
        Default: 0
        KeyVer: 4009
        KeyTime: *2 { a: 0,46186158000 }
        KeyValueFloat: *2 { a: 0,1 }
        KeyAttrFlags: *1 { a: 4 }
        KeyAttrDataFloat: *4 { a: 0,0,0,0 }
        KeyAttrRefCount: *1 { a: 2 }
    }
}
Connections: {
    C: "OO",51,50
    C: "OO",60,51
    C: "OP",60,30, "DiffuseFactor"
    C: "OP",70,60, "d|DiffuseFactor"
}
"#;
        let (s, _) = load(text);
        assert_eq!(s.material_channels.len(), 1);
        let ch = &s.material_channels[0];
        assert_eq!((ch.animation, ch.material), (0, 0));
        assert_eq!(ch.property, crate::anim::MaterialProperty::DiffuseFactor);
        let m = s.material_at(Some(0), 0, crate::anim::Time::Seconds(0.5)).unwrap();
        assert!((m.diffuse_factor - 0.5).abs() < 1e-6, "{}", m.diffuse_factor);
        assert!((m.effective_diffuse() - Vec3::new(0.5, 0.25, 0.0)).abs().max_element() < 1e-6);
        assert_eq!(s.materials[0].diffuse_factor, 0.8);
        assert_eq!(
            s.animated_material_properties(Some(0)),
            vec![(0, crate::anim::MaterialProperty::DiffuseFactor)]
        );
    }

    #[test]
    fn decimal_comma_colours_load_with_a_warning_naming_the_property() {
        // A locale-broken exporter's DiffuseColor 0.5882353 written without its decimal
        // point; the factor and the other colours are sane.
        let text = r#"; FBX 7.4.0 project file
Objects: {
    Material: 30, "Material::skin", "" { Properties70: {
        P: "DiffuseColor", "Color", "", "A",588235300000000,0.5,0.25
        P: "DiffuseFactor", "Number", "", "A",1
        P: "SpecularColor", "Color", "", "A",0.5,0.5,0.5
        P: "EmissiveFactor", "Number", "", "A",inf
    } }
}
"#;
        let (s, w) = load(text);
        assert_eq!(s.materials[0].diffuse.x, 588_235_300_000_000.0);
        let w: Vec<_> = w.iter().filter(|w| w.place == "Objects › Material \"skin\"").collect();
        assert_eq!(w.len(), 1, "{w:?}");
        let m = &w[0].message;
        assert!(m.contains("DiffuseColor 588235300000000, 0.5, 0.25"), "{m}");
        assert!(m.contains("EmissiveFactor inf") && m.contains("outside ±10000"), "{m}");
        assert!(!w[0].message.contains("Specular"));
    }

    #[test]
    fn texture_wrap_modes_come_from_properties_or_records() {
        // Hand-built: WrapModeU 1 (clamp) as a Properties70 entry; WrapModeV 1 as a record of
        // the texture, as older files write it; absent ones default to 0 (repeat).
        let text = r#"; FBX 7.4.0 project file
Objects: {
    Material: 30, "Material::m", "" { }
    Texture: 40, "Texture::a", "" {
        Properties70: { P: "WrapModeU", "enum", "", "",1 }
        RelativeFilename: "a.png"
    }
    Texture: 41, "Texture::b", "" {
        WrapModeV: 1
        RelativeFilename: "b.png"
    }
}
Connections: { C: "OP",40,30, "DiffuseColor"
    C: "OP",41,30, "EmissiveColor" }
"#;
        let (s, _) = load(text);
        let wraps: Vec<_> = s.materials[0].maps.iter().map(|m| (m.file.as_str(), m.wrap)).collect();
        assert_eq!(
            wraps,
            [
                ("a.png", [WrapMode::Clamp, WrapMode::Repeat]),
                ("b.png", [WrapMode::Repeat, WrapMode::Clamp])
            ]
        );
    }

    #[test]
    fn diffuse_color_textures_keep_their_connection_order_before_diffuse_ones() {
        // Hand-built: a `Diffuse` texture, then three on `DiffuseColor`. ufbx's
        // `ufbx_find_prop_texture("DiffuseColor")` gives the first connected (`a.png`), and its
        // diffuse map prefers `DiffuseColor` over `Diffuse`: order a, b, c, then d.
        let text = r#"; FBX 7.4.0 project file
Objects: {
    Material: 30, "Material::m", "" { }
    Texture: 40, "Texture::d", "" { RelativeFilename: "d.png" }
    Texture: 41, "Texture::a", "" { RelativeFilename: "a.png" }
    Texture: 42, "Texture::b", "" { RelativeFilename: "b.png" }
    Texture: 43, "Texture::c", "" { RelativeFilename: "c.png" }
}
Connections: { C: "OP",40,30, "Diffuse"
    C: "OP",41,30, "DiffuseColor"
    C: "OP",42,30, "DiffuseColor"
    C: "OP",43,30, "DiffuseColor" }
"#;
        let (s, _) = load(text);
        let files: Vec<_> = s.materials[0].maps.iter().map(|m| m.file.as_str()).collect();
        assert_eq!(files, ["a.png", "b.png", "c.png", "d.png"]);
    }

    #[test]
    fn fbx6_texture_layers_give_each_polygons_material_its_texture() {
        // Two triangles, materials 0 and 1 by polygon; `LayerElementTexture` names textures
        // 1 and 0 of those connected to the model (file order: a, b), and the emissive
        // layer texture 0 for all.
        let text = r#"; FBX 6.1.0 project file
Objects: {
    Model: "Model::M", "Mesh" {
        Vertices: 0,0,0,1,0,0,0,1,0,1,1,0
        PolygonVertexIndex: 0,1,-3,1,3,-3
        LayerElementMaterial: 0 {
            MappingInformationType: "ByPolygon"
            ReferenceInformationType: "IndexToDirect"
            Materials: 0,1
        }
        LayerElementTexture: 0 {
            MappingInformationType: "ByPolygon"
            ReferenceInformationType: "IndexToDirect"
            TextureId: 1,0
        }
        LayerElementEmissive_Textures: 0 {
            MappingInformationType: "AllSame"
            ReferenceInformationType: "IndexToDirect"
            TextureId: 0
        }
    }
    Material: "Material::red", "" { }
    Material: "Material::blue", "" { }
    Texture: "Texture::a", "" {
        RelativeFilename: "a.png"
    }
    Texture: "Texture::b", "" {
        RelativeFilename: "b.png"
    }
}
Connections: {
    Connect: "OO", "Model::M", "Model::Scene"
    Connect: "OO", "Material::red", "Model::M"
    Connect: "OO", "Material::blue", "Model::M"
    Connect: "OO", "Texture::a", "Model::M"
    Connect: "OO", "Texture::b", "Model::M"
}
"#;
        let (s, _) = load(text);
        let maps = |name: &str| -> Vec<(MapSlot, String)> {
            let m = s.materials.iter().find(|m| m.name == name).expect("material");
            m.maps.iter().map(|t| (t.slot, t.file.clone())).collect()
        };
        // Per material in texture order: red has b (diffuse) and a (emissive); blue has a for
        // both.
        assert_eq!(
            maps("red"),
            vec![(MapSlot::Emissive, "a.png".into()), (MapSlot::Diffuse, "b.png".into())]
        );
        assert_eq!(
            maps("blue"),
            vec![(MapSlot::Diffuse, "a.png".into()), (MapSlot::Emissive, "a.png".into())]
        );
    }

    #[test]
    fn file_names_that_are_not_utf8_get_one_replacement_per_bad_byte() {
        // As ufbx's default unicode handling: 0xAA and 0xBB (lone continuation bytes), 0xCC
        // (a lead byte followed by no continuation), NUL.
        assert_eq!(
            utf8_per_byte(b"x\xaa\xbb\xcc_\0.png"),
            "x\u{FFFD}\u{FFFD}\u{FFFD}_\u{FFFD}.png"
        );
        assert_eq!(utf8_per_byte("é.png".as_bytes()), "é.png");
    }
}

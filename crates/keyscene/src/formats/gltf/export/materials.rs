//! Materials (metallic-roughness from the scene's colours) and the texture references they
//! bind, with KHR_texture_transform and the samplers' wrap modes.

use gltf_json as json;
use json::texture::WrappingMode;
use json::validation::Checked::Valid;

use super::Out;
use crate::formats::gltf::warning;
use crate::scene::{MapSlot, Scene};

impl Out {
    /// The glTF material of a mesh's material slot (written on first use), if the slot names
    /// one the scene has. `has_uvs`: the primitive has `TEXCOORD_0`, which every texture the
    /// writer binds reads (glTF 2.0 §3.9.2: a `texCoord` must name an attribute of the
    /// primitive); without it the material is written without its textures.
    pub(super) fn primitive_material(
        &mut self,
        scene: &Scene,
        mesh: &crate::scene::Mesh,
        slot: u32,
        has_uvs: bool,
    ) -> Option<json::Index<json::Material>> {
        mesh.material_slots
            .get(slot as usize)
            .copied()
            .flatten()
            .filter(|&m| m < scene.materials.len())
            .map(|m| self.material(scene, m, has_uvs))
    }

    fn material(&mut self, scene: &Scene, m: usize, has_uvs: bool) -> json::Index<json::Material> {
        if let Some(&ix) = self.materials.get(&(m, has_uvs)) {
            return ix;
        }
        let mat = &scene.materials[m];
        if let Some(pbr) = mat.pbr.as_ref().filter(|p| p.model.is_pbr()) {
            let mut g = self.pbr_material(mat, pbr, has_uvs);
            g.extras = self.material_extras(mat);
            let ix = json::Index::push(&mut self.root.materials, g);
            self.materials.insert((m, has_uvs), ix);
            return ix;
        }
        let clamp = |x: f32| if x.is_finite() { x.clamp(0.0, 1.0) } else { 0.0 };
        let alpha = clamp(1.0 - mat.transparency);
        let d = mat.effective_diffuse().to_array().map(clamp);
        // Clamping is not silent (issue 12 §3, "Values that cannot be right").
        let raw = mat.effective_diffuse().to_array();
        if raw.iter().any(|&x| !(0.0..=1.0).contains(&x)) {
            self.warnings.push(warning(
                format!("material \"{}\"", mat.name),
                format!(
                    "diffuse colour ({}, {}, {}) outside 0..1: baseColorFactor clamped to \
                     ({}, {}, {}), non-finite components to 0",
                    raw[0], raw[1], raw[2], d[0], d[1], d[2]
                ),
            ));
        }
        let textured = [MapSlot::Diffuse, MapSlot::Emissive, MapSlot::Bump];
        let maps: &[crate::scene::TextureMap] = if has_uvs {
            &mat.maps
        } else {
            if mat.maps.iter().any(|t| textured.contains(&t.slot)) {
                self.warnings.push(warning(
                    format!("material \"{}\"", mat.name),
                    "used on a mesh without UVs: written there without its textures",
                ));
            }
            &[]
        };
        let base_color_texture = self.texture_info(&mat.name, maps, MapSlot::Diffuse);
        let emissive_texture = self.texture_info(&mat.name, maps, MapSlot::Emissive);
        let normal_texture = self.texture_info(&mat.name, maps, MapSlot::Bump).map(|info| {
            json::material::NormalTexture {
                index: info.index,
                scale: 1.0,
                tex_coord: info.tex_coord,
                extensions: info
                    .extensions
                    .map(|e| json::extensions::material::NormalTexture { others: e.others }),
                extras: Default::default(),
            }
        });
        let mut g = json::Material {
            alpha_mode: Valid(if alpha < 1.0 {
                json::material::AlphaMode::Blend
            } else {
                json::material::AlphaMode::Opaque
            }),
            double_sided: mat.two_sided,
            name: Some(mat.name.clone()),
            pbr_metallic_roughness: json::material::PbrMetallicRoughness {
                base_color_factor: json::material::PbrBaseColorFactor([d[0], d[1], d[2], alpha]),
                base_color_texture,
                metallic_factor: json::material::StrengthFactor(0.0),
                roughness_factor: json::material::StrengthFactor(clamp(1.0 - mat.shininess)),
                ..Default::default()
            },
            emissive_factor: json::material::EmissiveFactor(if emissive_texture.is_some() {
                [1.0; 3]
            } else {
                d.map(|c| clamp(c * clamp(mat.self_illumination)))
            }),
            emissive_texture,
            normal_texture,
            ..Default::default()
        };
        g.extras = self.material_extras(mat);
        let ix = json::Index::push(&mut self.root.materials, g);
        self.materials.insert((m, has_uvs), ix);
        ix
    }

    /// The material's user properties as its extras (name → value, docs/gltf.md "User
    /// properties"), warning about those left out.
    fn material_extras(&mut self, mat: &crate::scene::Material) -> json::extras::Extras {
        use crate::formats::gltf::extras::{to_extras, write_user_properties};
        let mut obj = serde_json::Map::new();
        for name in write_user_properties(&mut obj, &mat.user_properties) {
            self.warnings.push(warning(
                format!("material \"{}\"", mat.name),
                format!("not carried: user property {}", super::names::user_prop_reason(&name)),
            ));
        }
        to_extras(obj)
    }

    /// The texture reference for the first map of `slot`, with KHR_texture_transform when the
    /// map's [`UvTransform`](crate::scene::UvTransform) is not the identity.
    ///
    /// The model's transform `uv' = o + R(θ)·(s ∘ uv)` works on V-up coordinates, glTF's on
    /// the V-down ones the writer stores (`g = (u, 1 − v)`). Substituting gives
    /// `g' = offset + R(−θ)·(s ∘ g)` with `offset = (oᵤ − s_v·sin θ, 1 − o_v − s_v·cos θ)`:
    /// KHR_texture_transform's rotation `−θ` (its `R` is counter-clockwise in V-down space),
    /// scale `s` unchanged.
    fn texture_info(
        &mut self,
        material: &str,
        maps: &[crate::scene::TextureMap],
        slot: MapSlot,
    ) -> Option<json::texture::Info> {
        let map = maps.iter().find(|t| t.slot == slot)?;
        self.map_info(material, map)
    }

    /// The texture reference for `map` ([`Out::texture_info`]).
    pub(super) fn map_info(
        &mut self,
        material: &str,
        map: &crate::scene::TextureMap,
    ) -> Option<json::texture::Info> {
        let index = self.texture(material, map)?;
        let t = map.uv_transform;
        let extensions = (t != crate::scene::UvTransform::default()
            && t.scale.is_finite()
            && t.offset.is_finite()
            && t.rotation_degrees.is_finite())
        .then(|| {
            use json::extensions::texture as ext;
            let th = f64::from(t.rotation_degrees).to_radians();
            let (o, sc) = (t.offset.as_dvec2(), t.scale.as_dvec2());
            let offset = [o.x - sc.y * th.sin(), 1.0 - o.y - sc.y * th.cos()];
            let used = "KHR_texture_transform".to_string();
            if !self.root.extensions_used.contains(&used) {
                self.root.extensions_used.push(used);
            }
            // Written through `others`: gltf-json's own struct serialises an absent `texCoord`
            // as null, which the validator rejects.
            let mut others = serde_json::Map::new();
            others.insert(
                "KHR_texture_transform".into(),
                serde_json::json!({
                    "offset": offset.map(|x| x as f32),
                    "rotation": -th as f32,
                    "scale": t.scale.to_array(),
                }),
            );
            ext::Info { texture_transform: None, others }
        });
        Some(json::texture::Info { index, tex_coord: 0, extensions, extras: Default::default() })
    }
}

/// `MAT_MAP_TILING` bit: mirror the map at every repeat (lib3ds `LIB3DS_TEXTURE_MIRROR`).
const TILING_MIRROR: u16 = 0x0002;
/// `MAT_MAP_TILING` bit: show the map once, no repeat (lib3ds `LIB3DS_TEXTURE_NO_TILE`).
const TILING_NO_TILE: u16 = 0x0010;

/// The glTF wrap mode (both S and T) for a map's 3DS `MAT_MAP_TILING` bits (lib3ds
/// `Lib3dsTextureMapFlags`): no tiling → CLAMP_TO_EDGE (also with mirror: glTF has no
/// mirror-once mode), mirror → MIRRORED_REPEAT, else REPEAT. FBX, 3DA and glTF sources store
/// 0, REPEAT (FBX and glTF keep their per-axis modes in `TextureMap::wrap`). Decal (bit 0x1) and the colour bits have no sampler counterpart.
pub(crate) fn wrap_mode(flags: u16) -> WrappingMode {
    if flags & TILING_NO_TILE != 0 {
        WrappingMode::ClampToEdge
    } else if flags & TILING_MIRROR != 0 {
        WrappingMode::MirroredRepeat
    } else {
        WrappingMode::Repeat
    }
}

/// The glTF wrapS/wrapT of `map`: its per-axis [`TextureMap::wrap`] (FBX, glTF sources), or,
/// when both are REPEAT, [`wrap_mode`] of its 3DS tiling bits for both.
pub(super) fn wrap_modes(map: &crate::scene::TextureMap) -> [WrappingMode; 2] {
    use crate::scene::WrapMode;
    if map.wrap == [WrapMode::Repeat; 2] {
        return [wrap_mode(map.flags); 2];
    }
    map.wrap.map(|w| match w {
        WrapMode::Repeat => WrappingMode::Repeat,
        WrapMode::Clamp => WrappingMode::ClampToEdge,
        WrapMode::Mirror => WrappingMode::MirroredRepeat,
    })
}

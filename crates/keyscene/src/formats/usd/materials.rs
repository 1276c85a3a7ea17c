//! Materials as `UsdShade.Material` prims under `/<root>/Materials`, each with a
//! `UsdPreviewSurface` (diffuse colour, emissive colour, opacity, roughness from the
//! shininess, the specular workflow with the specular colour; a material of a PBR shading
//! model gets its base colour, emission, opacity and the metallic workflow instead —
//! `metallic`, `roughness`, `ior`, `clearcoat`, `clearcoatRoughness` from its
//! [`Pbr`](crate::scene::Pbr) values) and, for diffuse and emissive
//! maps, a `UsdUVTexture` reading `primvars:st` through a `UsdPrimvarReader_float2`. Images
//! are PNG or JPEG as found; other formats (TGA, BMP) are transcoded to PNG, since USDZ
//! holds only PNG, JPEG, EXR and AVIF images. Other maps (opacity, bump, specular,
//! shininess, reflection) are reported, not written.

use std::collections::HashMap;
use std::sync::Arc;

use super::text::{asset, string, Text};
use super::Ctx;
use crate::output::{ImageSource, TexturePlan};
use crate::scene::{MapSlot, Scene, WrapMode};

/// The images the layer names: file name (beside the `.usda`, or inside the `.usdz`) and
/// bytes, and the name each (material, map) uses.
#[derive(Debug, Default)]
pub struct Images {
    /// The files, in scene order.
    pub files: Vec<(String, Arc<[u8]>)>,
    names: HashMap<(usize, usize), String>,
}

/// Reads (and where needed transcodes) every image the materials name; what cannot be read
/// or decoded is a warning and the map is left out.
pub fn images(scene: &Scene, warnings: &mut Vec<String>) -> Images {
    let plan = TexturePlan::new(scene);
    let mut out = Images::default();
    let mut renamed: HashMap<String, String> = HashMap::new();
    let mut taken: std::collections::HashSet<String> =
        plan.images.iter().map(|i| i.0.to_lowercase()).collect();
    for (name, source, material) in &plan.images {
        let bytes: Arc<[u8]> = match source {
            ImageSource::Embedded(b) => b.clone(),
            ImageSource::File(p) => match std::fs::read(p) {
                Ok(b) => b.into(),
                Err(e) => {
                    warnings.push(format!(
                        "material \"{material}\": texture {}: {e}: not written",
                        p.display()
                    ));
                    continue;
                }
            },
        };
        let lower = name.to_lowercase();
        if [".png", ".jpg", ".jpeg"].iter().any(|e| lower.ends_with(e)) {
            out.files.push((name.clone(), bytes));
            renamed.insert(name.clone(), name.clone());
            continue;
        }
        match transcode(&bytes) {
            Ok(png) => {
                let stem = name.rsplit_once('.').map_or(name.as_str(), |s| s.0);
                let mut png_name = format!("{stem}.png");
                let mut n = 1;
                while !taken.insert(png_name.to_lowercase()) {
                    png_name = format!("{stem}~{n}.png");
                    n += 1;
                }
                out.files.push((png_name.clone(), png.into()));
                renamed.insert(name.clone(), png_name);
            }
            Err(e) => warnings.push(format!(
                "material \"{material}\": texture \"{name}\" could not be decoded ({e}): not written"
            )),
        }
    }
    for (mi, m) in scene.materials.iter().enumerate() {
        for k in 0..m.maps.len() {
            if let Some(n) = plan.name(mi, k).and_then(|n| renamed.get(n)) {
                out.names.insert((mi, k), n.clone());
            }
        }
    }
    for (material, file) in &plan.missing {
        warnings.push(format!(
            "material \"{material}\": texture \"{file}\" not found beside the source: not written"
        ));
    }
    out
}

/// The image decoded and encoded again as PNG.
fn transcode(bytes: &[u8]) -> Result<Vec<u8>, String> {
    let img = image::load_from_memory(bytes).map_err(|e| e.to_string())?;
    let mut png = Vec::new();
    img.write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
        .map_err(|e| e.to_string())?;
    Ok(png)
}

/// Writes the `Materials` scope (when the scene has materials) under `root` and returns each
/// material's prim path.
pub fn write(t: &mut Text, ctx: &mut Ctx, root: &str, images: &Images) -> Vec<Option<String>> {
    let scene = ctx.scene;
    if scene.materials.is_empty() {
        return Vec::new();
    }
    t.open("def Scope \"Materials\"", &[]);
    let mut names = super::names::Siblings::default();
    let mut paths = Vec::new();
    for (mi, mat) in scene.materials.iter().enumerate() {
        let name = names.claim(&mat.name);
        let path = format!("{root}/Materials/{name}");
        let mut meta = Vec::new();
        if name != mat.name {
            meta.push(format!("displayName = {}", string(&mat.name)));
        }
        t.open(&format!("def Material \"{name}\""), &meta);
        t.line(&format!("token outputs:surface.connect = <{path}/Surface.outputs:surface>"));
        surface(t, ctx, mi, &path, images);
        t.close();
        paths.push(Some(path));
    }
    t.close();
    paths
}

/// The `UsdPreviewSurface` of material `mi` and its texture shaders.
fn surface(t: &mut Text, ctx: &mut Ctx, mi: usize, path: &str, images: &Images) {
    let mat = &ctx.scene.materials[mi];
    let clamp = |x: f32| if x.is_finite() { f64::from(x.clamp(0.0, 1.0)) } else { 0.0 };
    let color = |t: &mut Text, c: glam::Vec3| {
        t.vec3_f(glam::DVec3::new(clamp(c.x), clamp(c.y), clamp(c.z)))
    };
    let map = |slot: MapSlot| {
        mat.maps
            .iter()
            .enumerate()
            .find(|(k, m)| m.slot == slot && images.names.contains_key(&(mi, *k)))
    };
    let pbr = mat.pbr.as_ref().filter(|p| p.model.is_pbr());
    let diffuse_map = map(MapSlot::Diffuse);
    let emissive_map = map(MapSlot::Emissive);
    for (k, m) in mat.maps.iter().enumerate() {
        let written = [diffuse_map, emissive_map].iter().flatten().any(|(j, _)| *j == k);
        if !written && images.names.contains_key(&(mi, k)) {
            ctx.warn(format!("material \"{}\": {} map \"{}\" not written (UsdPreviewSurface gets diffuse and emissive maps only)", mat.name, m.slot.name(), m.file));
        }
    }
    t.open("def Shader \"Surface\"", &[]);
    t.line("uniform token info:id = \"UsdPreviewSurface\"");
    match diffuse_map {
        Some(_) => t.line(&format!(
            "color3f inputs:diffuseColor.connect = <{path}/DiffuseMap.outputs:rgb>"
        )),
        None => {
            let c = color(t, pbr.map_or(mat.effective_diffuse(), |p| p.base_color()));
            t.line(&format!("color3f inputs:diffuseColor = {c}"));
        }
    }
    match emissive_map {
        Some(_) => t.line(&format!(
            "color3f inputs:emissiveColor.connect = <{path}/EmissiveMap.outputs:rgb>"
        )),
        None => {
            // A PBR emission keeps its strength (UsdPreviewSurface colours are not capped).
            let c = match pbr.map(|p| p.emission()).filter(|e| e.is_finite()) {
                Some(e) => t.vec3_f(e.max(glam::Vec3::ZERO).as_dvec3()),
                None => color(t, mat.effective_emissive()),
            };
            t.line(&format!("color3f inputs:emissiveColor = {c}"));
        }
    }
    if let Some(p) = pbr {
        pbr_inputs(t, p);
        return surface_maps(t, ctx, mi, path, images, diffuse_map, emissive_map);
    }
    let opacity = clamp(1.0 - mat.transparency);
    t.field_f("float inputs:opacity", opacity);
    t.line("int inputs:useSpecularWorkflow = 1");
    let spec = color(t, mat.specular * mat.shininess_strength.clamp(0.0, 1.0));
    t.line(&format!("color3f inputs:specularColor = {spec}"));
    // Blinn-Phong exponent ↔ roughness: shininess 0..1 taken as glossiness.
    let rough = 1.0 - clamp(mat.shininess);
    t.field_f("float inputs:roughness", rough);
    t.line("token outputs:surface");
    t.close();
    surface_maps(t, ctx, mi, path, images, diffuse_map, emissive_map);
}

/// The metallic workflow inputs of a PBR material (shading model
/// [`is_pbr`](crate::scene::ShadingModel::is_pbr)): `opacity`, `metallic`, `roughness`, `ior`
/// where stored, `clearcoat` and `clearcoatRoughness` where there is a coat; then closes the
/// surface shader.
fn pbr_inputs(t: &mut Text, p: &crate::scene::Pbr) {
    use crate::scene::PbrProperty as P;
    let clamp = |x: f32| if x.is_finite() { f64::from(x.clamp(0.0, 1.0)) } else { 0.0 };
    t.field_f("float inputs:opacity", clamp(p.opacity()));
    t.line("int inputs:useSpecularWorkflow = 0");
    t.field_f("float inputs:metallic", clamp(p.get(P::Metalness).scalar()));
    t.field_f("float inputs:roughness", clamp(p.get(P::Roughness).scalar()));
    let ior = p.get(P::SpecularIor);
    if ior.has_value && ior.scalar().is_finite() && ior.scalar() >= 1.0 {
        t.field_f("float inputs:ior", f64::from(ior.scalar()));
    }
    let coat = clamp(p.get(P::CoatFactor).scalar());
    if coat > 0.0 {
        t.field_f("float inputs:clearcoat", coat);
        t.field_f("float inputs:clearcoatRoughness", clamp(p.get(P::CoatRoughness).scalar()));
    }
    t.line("token outputs:surface");
    t.close();
}

/// The texture shaders of material `mi`'s diffuse and emissive maps.
fn surface_maps(
    t: &mut Text,
    ctx: &mut Ctx,
    mi: usize,
    path: &str,
    images: &Images,
    diffuse_map: Option<(usize, &crate::scene::TextureMap)>,
    emissive_map: Option<(usize, &crate::scene::TextureMap)>,
) {
    let mat = &ctx.scene.materials[mi];
    if diffuse_map.is_none() && emissive_map.is_none() {
        return;
    }
    t.open("def Shader \"TexCoords\"", &[]);
    t.line("uniform token info:id = \"UsdPrimvarReader_float2\"");
    t.line("string inputs:varname = \"st\"");
    t.line("float2 outputs:result");
    t.close();
    for (prim, found) in [("DiffuseMap", diffuse_map), ("EmissiveMap", emissive_map)] {
        let Some((k, m)) = found else { continue };
        t.open(&format!("def Shader \"{prim}\""), &[]);
        t.line("uniform token info:id = \"UsdUVTexture\"");
        t.line(&format!("asset inputs:file = {}", asset(&format!("./{}", images.names[&(mi, k)]))));
        t.line(&format!("float2 inputs:st.connect = <{path}/TexCoords.outputs:result>"));
        let wrap = |w: WrapMode| match w {
            WrapMode::Repeat => "repeat",
            WrapMode::Clamp => "clamp",
            WrapMode::Mirror => "mirror",
        };
        t.line(&format!("token inputs:wrapS = \"{}\"", wrap(m.wrap[0])));
        t.line(&format!("token inputs:wrapT = \"{}\"", wrap(m.wrap[1])));
        t.line("float3 outputs:rgb");
        t.close();
        if m.uv_transform != crate::scene::UvTransform::default() {
            ctx.warn(format!(
                "material \"{}\": {} map UV transform not written",
                mat.name,
                m.slot.name()
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::scene::{Material, Pbr, PbrProperty as P, PbrValue, Scene, ShadingModel};
    use glam::Vec4;

    #[test]
    fn a_pbr_material_gets_the_metallic_workflow() {
        // Hand-computed: base (0.5, 0.25, 0) × 0.5, metalness 1, roughness 0.25, emission
        // (1, 1, 1) × 2 (kept above 1), IOR 1.25, coat 0.5 with roughness 0.125, opacity 0.75
        // (all exact in f32, as the layer prints them).
        let mut pbr = Pbr::new(ShadingModel::ArnoldStandardSurface);
        for (p, v) in [
            (P::BaseColor, Vec4::new(0.5, 0.25, 0.0, 1.0)),
            (P::BaseFactor, Vec4::X * 0.5),
            (P::Metalness, Vec4::X),
            (P::Roughness, Vec4::X * 0.25),
            (P::EmissionColor, Vec4::ONE),
            (P::EmissionFactor, Vec4::X * 2.0),
            (P::SpecularIor, Vec4::X * 1.25),
            (P::CoatFactor, Vec4::X * 0.5),
            (P::CoatRoughness, Vec4::X * 0.125),
            (P::Opacity, Vec4::splat(0.75)),
        ] {
            *pbr.get_mut(p) = PbrValue::stored(v);
        }
        let mut s = Scene::default();
        s.materials.push(Material { name: "m".into(), pbr: Some(pbr), ..Material::default() });
        let text = super::super::write(&s, &Default::default()).unwrap().text;
        for line in [
            "color3f inputs:diffuseColor = (0.25, 0.125, 0.0)",
            "color3f inputs:emissiveColor = (2.0, 2.0, 2.0)",
            "float inputs:opacity = 0.75",
            "int inputs:useSpecularWorkflow = 0",
            "float inputs:metallic = 1.0",
            "float inputs:roughness = 0.25",
            "float inputs:ior = 1.25",
            "float inputs:clearcoat = 0.5",
            "float inputs:clearcoatRoughness = 0.125",
        ] {
            assert!(text.contains(line), "{line} missing in\n{text}");
        }
    }
}

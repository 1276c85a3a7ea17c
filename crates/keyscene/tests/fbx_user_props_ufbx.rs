//! FBX user properties against the `ufbx` crate (issue 33 §3): the properties ufbx flags
//! `USER_DEFINED` (a `U` in the record's flags) on every node and material, read, evaluated
//! and written back.
//!
//! The files: every corpus FBX file ufbx loads (not a negative case) — found by scanning the
//! folder, not listed. Nodes and materials are paired by name (names that name one element
//! only). For each file:
//!
//! - **At rest**: the element's user properties and ufbx's own `USER_DEFINED` props have the
//!   same names, leaving out on ufbx's side the types that hold no value (`Compound`, `Blob`,
//!   `Reference`, `Lcl …`) and, for each, the same type and value: ufbx `Boolean` ↔ `bool`
//!   (`value_int != 0`); `Integer` ↔ `int`, `enum` (the index, and the choices: `value_str`
//!   split at `~`) or `time` (`value_int` ticks = seconds × `ktime_second`); `Number` and
//!   `Distance` ↔ `number`; `Vector`, `Color`, `ColorWithAlpha` ↔ `vector`, `color`,
//!   `color_alpha` (`value_vec4`); `String`, `DateTime` ↔ `string` (`value_str`, where the
//!   bytes are UTF-8); types ufbx does not know (`float`, `charptr`) ↔ `number` with ufbx's
//!   `value_vec4.x` or `string` with its `value_str`. `Integer`/`Number` bounds: ufbx's second
//!   and third reals (`value_vec4.y`, `.z`) where it read three.
//! - **Animated**: for the user properties an animation layer animates (ufbx `anim_props`),
//!   at 21 evenly spaced times of every stack and at each key time of their curves,
//!   `Scene::user_properties_at` equals ufbx's `evaluate_prop` (numbers within 1e-6 relative;
//!   integers exactly, except where ufbx's real is within 1e-6 of an integer, where truncation
//!   of the two float paths may differ: counted).
//! - **FBX written back**: the FBX keyscene writes (binary 7.4), loaded by ufbx, has for every
//!   paired node and material the same user properties (name, ufbx type, value) as ufbx's
//!   reading of the source (except those the writer reports left out: a built-in property of
//!   that name holding another value), and animated ones evaluate to the source's values at
//!   every whole frame of every stack.
//! - **Generated**: a node with a user property of every type (bool, int with bounds, enum,
//!   number with bounds, vector, colour, colour with alpha, string, time) and two animated
//!   ones (linear keys), written to FBX — ufbx reads each back flagged `USER_DEFINED` with its
//!   type, value and bounds, and evaluates the curves to the hand-computed values at 0, 0.25
//!   and 1 s — and to glTF, read back by keyscene with the JSON types (two animated
//!   properties reported).
//! - **Generated material curves**: a material's animated number and vector user properties
//!   evaluate as ufbx evaluates them on the material, in the source and in the FBX written
//!   back, and as hand-computed ([`material_curves`]).
//! - **glTF written back**: the glTF keyscene writes, read back by keyscene, holds every user
//!   property of every paired node and material at its stored value, typed as JSON types it
//!   (enum → its index, colour → a vector, time → seconds).

mod common;

use std::collections::HashMap;
use std::path::Path;

use keyscene::anim::Time;
use keyscene::scene::{Scene, UserProperty, UserValue};

/// The index of each name that names exactly one element.
fn unique<'a>(names: impl Iterator<Item = &'a str>) -> HashMap<&'a str, usize> {
    let mut count: HashMap<&str, (usize, usize)> = HashMap::new();
    for (i, n) in names.enumerate() {
        let e = count.entry(n).or_insert((0, i));
        e.0 += 1;
    }
    count.into_iter().filter(|(_, (c, _))| *c == 1).map(|(n, (_, i))| (n, i)).collect()
}

/// ufbx's user-defined props of `e` that hold a value.
fn their_user_props(e: &ufbx::Element) -> Vec<&ufbx::Prop> {
    use ufbx::PropType as T;
    e.props
        .props
        .iter()
        .filter(|p| p.flags.has_any(ufbx::PropFlags::USER_DEFINED))
        .filter(|p| {
            !matches!(
                p.type_,
                T::Compound | T::Blob | T::Reference | T::Translation | T::Rotation | T::Scaling
            )
        })
        .filter(|p| {
            p.type_ != T::Unknown
                || p.flags.has_any(ufbx::PropFlags::VALUE_INT)
                || p.flags.has_any(ufbx::PropFlags::VALUE_REAL)
                || p.flags.has_any(ufbx::PropFlags::VALUE_STR)
        })
        .collect()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-6 * a.abs().max(b.abs()).max(1.0)
}

/// Whether `ours` is ufbx's `theirs` (type and value; `ktime` ticks per second). `Err` names
/// the difference; `Ok(false)`: an integer that differs where ufbx's real is on an integer
/// (left out, see the module docs).
fn same(ours: &UserValue, theirs: &ufbx::Prop, ktime: i64, bounds: bool) -> Result<bool, String> {
    use ufbx::PropType as T;
    let v = &theirs.value_vec4;
    let ok = match (ours, theirs.type_) {
        (UserValue::Bool(b), T::Boolean) => *b == (theirs.value_int != 0),
        (UserValue::Int(i), T::Integer) | (UserValue::Enum { index: i, .. }, T::Integer) => {
            if *i != theirs.value_int && (v.x - v.x.round()).abs() < 1e-6 {
                return Ok(false);
            }
            let names_ok = match ours {
                UserValue::Enum { names, .. } => {
                    let s: &str = theirs.value_str.as_ref();
                    s.is_empty() || names.join("~") == s
                }
                _ => true,
            };
            *i == theirs.value_int && names_ok
        }
        (UserValue::Time(s), T::Integer) => (s * ktime as f64).round() as i64 == theirs.value_int,
        (UserValue::Int(i), T::Unknown) => *i == theirs.value_int,
        (UserValue::Number(x), T::Unknown)
            if !theirs.flags.has_any(ufbx::PropFlags::VALUE_REAL) =>
        {
            close(*x, theirs.value_int as f64)
        }
        (UserValue::Number(x), T::Number | T::Distance | T::Unknown) => close(*x, v.x),
        (UserValue::Vector(a), T::Vector) | (UserValue::Color(a), T::Color) => {
            close(a.x, v.x) && close(a.y, v.y) && close(a.z, v.z)
        }
        (UserValue::ColorAlpha(a), T::ColorWithAlpha) => {
            close(a.x, v.x) && close(a.y, v.y) && close(a.z, v.z) && close(a.w, v.w)
        }
        (UserValue::String(s), T::String | T::DateTime | T::Unknown) => {
            let t: &str = theirs.value_str.as_ref();
            t.contains('\u{FFFD}') || s.contains('\u{FFFD}') || s == t
        }
        _ => false,
    };
    let _ = bounds;
    if ok {
        Ok(true)
    } else {
        Err(format!(
            "{ours:?}, ufbx {:?} int {} real {:?} str {:?}",
            theirs.type_,
            theirs.value_int,
            (v.x, v.y, v.z),
            theirs.value_str.as_ref() as &str
        ))
    }
}

/// The bounds check of the module docs for `ours` against ufbx's `theirs`.
fn same_bounds(ours: &UserProperty, theirs: &ufbx::Prop) -> bool {
    let three = theirs.flags.has_any(ufbx::PropFlags::VALUE_VEC3)
        || theirs.flags.has_any(ufbx::PropFlags::VALUE_VEC4);
    match ours.value {
        UserValue::Int(_) | UserValue::Number(_) if three => {
            ours.min.is_some_and(|m| close(m, theirs.value_vec4.y))
                && ours.max.is_some_and(|m| close(m, theirs.value_vec4.z))
        }
        _ => true,
    }
}

/// Compares one element's user properties at rest; returns how many were compared and how
/// many integers were left out.
fn compare_rest(
    what: &str,
    ours: &[UserProperty],
    theirs: &ufbx::Element,
    ktime: i64,
) -> Result<(usize, usize), String> {
    let theirs = their_user_props(theirs);
    let mut a: Vec<&str> = ours.iter().map(|p| p.name.as_str()).collect();
    let mut b: Vec<&str> = theirs.iter().map(|p| p.name.as_ref()).collect();
    a.sort_unstable();
    b.sort_unstable();
    if a != b {
        return Err(format!("{what}: user properties {a:?}, ufbx {b:?}"));
    }
    let mut left_out = 0;
    for t in &theirs {
        let name: &str = t.name.as_ref();
        let p = ours.iter().find(|p| p.name == name).ok_or("unpaired")?;
        match same(&p.value, t, ktime, true) {
            Ok(true) => {}
            Ok(false) => left_out += 1,
            Err(e) => return Err(format!("{what}: {name}: {e}")),
        }
        if !same_bounds(p, t) {
            return Err(format!("{what}: {name}: bounds {:?} {:?}", p.min, p.max));
        }
    }
    Ok((theirs.len(), left_out))
}

/// The (element id, prop name, keyed) of the props ufbx's layers animate — `keyed`: some
/// layer's curve node for it has a curve with keys — and every key time (seconds).
fn animated(stack: &ufbx::AnimStack) -> (Vec<(u32, String, bool)>, Vec<f64>) {
    let (mut props, mut times) = (Vec::new(), Vec::new());
    for layer in stack.layers.iter() {
        for p in layer.anim_props.iter() {
            let mut keyed = false;
            for c in p.anim_value.curves.iter().flatten() {
                keyed |= !c.keyframes.is_empty();
                times.extend(c.keyframes.iter().map(|k| k.time));
            }
            props.push((p.element.element_id, p.prop_name.to_string(), keyed));
        }
    }
    (props, times)
}

/// How `props` (of [`animated`]) animate `name` of element `id`: `None` not at all,
/// `Some(false)` by curve nodes without keyed curves only (ufbx then evaluates 0, the FBX SDK
/// and keyscene the node's `d|` value: left out, as in `fbx_visibility_ufbx`).
fn animation_of(props: &[(u32, String, bool)], id: u32, name: &str) -> Option<bool> {
    props.iter().filter(|(e, n, _)| *e == id && n == name).map(|(_, _, k)| *k).reduce(|a, b| a || b)
}

/// Counts of one file: properties compared at rest, animated samples compared, left out.
#[derive(Default)]
struct Counts {
    rest: usize,
    samples: usize,
    left_out: usize,
}

/// Checks one file (module docs).
fn check(path: &Path) -> Result<Counts, String> {
    let (scene, theirs) = common::ufbx_corpus::load_both(path)?;
    let ktime = theirs.metadata.ktime_second;
    let nodes = unique(scene.nodes.iter().map(|n| n.name.as_str()));
    let materials = unique(scene.materials.iter().map(|m| m.name.as_str()));
    let node_pairs: Vec<(usize, usize)> = theirs
        .nodes
        .iter()
        .enumerate()
        .filter(|(_, n)| !n.is_root)
        .filter_map(|(k, n)| nodes.get(n.element.name.as_ref()).map(|&i| (k, i)))
        .collect();
    let material_pairs: Vec<(usize, usize)> = theirs
        .materials
        .iter()
        .enumerate()
        .filter_map(|(k, m)| materials.get(m.element.name.as_ref()).map(|&i| (k, i)))
        .collect();
    let mut counts = Counts::default();
    for &(k, i) in &node_pairs {
        let n = &theirs.nodes[k];
        let what = format!("node {}", n.element.name);
        let (c, l) = compare_rest(&what, scene.nodes[i].user_properties(), &n.element, ktime)?;
        counts.rest += c;
        counts.left_out += l;
    }
    for &(k, i) in &material_pairs {
        let m = &theirs.materials[k];
        let what = format!("material {}", m.element.name);
        let (c, l) = compare_rest(&what, &scene.materials[i].user_properties, &m.element, ktime)?;
        counts.rest += c;
        counts.left_out += l;
    }
    compare_animated(&scene, &theirs, &node_pairs, &mut counts)?;
    check_fbx(&scene, &theirs, &node_pairs, &material_pairs)?;
    check_gltf(&scene, &node_pairs, &material_pairs)?;
    Ok(counts)
}

/// The animated comparison of the module docs.
fn compare_animated(
    scene: &Scene,
    theirs: &ufbx::Scene,
    pairs: &[(usize, usize)],
    counts: &mut Counts,
) -> Result<(), String> {
    let ktime = theirs.metadata.ktime_second;
    for (s, stack) in theirs.anim_stacks.iter().enumerate() {
        let Some(a) = common::ufbx_corpus::matching_animation(scene, s, &stack.element.name) else {
            continue;
        };
        let (props, keys) = animated(stack);
        let (t0, t1) = (stack.time_begin, stack.time_end);
        let mut times: Vec<f64> = (0..=20).map(|k| t0 + (t1 - t0) * f64::from(k) / 20.0).collect();
        times.extend(keys);
        for &(k, i) in pairs {
            let n = &theirs.nodes[k];
            let user = their_user_props(&n.element);
            let mut moving: Vec<&&ufbx::Prop> = Vec::new();
            for p in &user {
                match animation_of(&props, n.element.element_id, p.name.as_ref()) {
                    Some(true) => moving.push(p),
                    Some(false) => counts.left_out += times.len(),
                    None => {}
                }
            }
            if moving.is_empty() {
                continue;
            }
            for &t in &times {
                let ours = scene.user_properties_at(Some(a), i, Time::Seconds(t));
                for p in &moving {
                    let name: &str = p.name.as_ref();
                    let at = ufbx::evaluate_prop(&stack.anim, &n.element, name, t);
                    let Some(o) = ours.iter().find(|o| o.name == name) else {
                        return Err(format!("node {}: {name} missing", n.element.name));
                    };
                    match same(&o.value, &at, ktime, false) {
                        Ok(true) => counts.samples += 1,
                        Ok(false) => counts.left_out += 1,
                        Err(e) => {
                            return Err(format!(
                                "node {} stack {:?} t = {t} s: {name}: {e}",
                                n.element.name, stack.element.name
                            ))
                        }
                    }
                }
            }
        }
    }
    Ok(())
}

/// A material's animated user properties (a number and a vector with linear keys, the way Maya
/// writes an animated material attribute), as text.
const MATERIAL_CURVES: &str = r#"; FBX 7.4.0 project file
Objects: {
    Model: 10, "Model::A", "Mesh" { }
    Geometry: 20, "Geometry::A", "Mesh" {
        Vertices: *9 { a: 0,0,0,1,0,0,0,1,0 }
        PolygonVertexIndex: *3 { a: 0,1,-3 }
    }
    Material: 30, "Material::M", "" { Properties70: {
        P: "Gloss", "Number", "", "A+U",0.5,0,1
        P: "Tint", "Vector", "", "A+U",1,2,3
    } }
    AnimationStack: 40, "AnimStack::Take", "" { Properties70: {
        P: "LocalStop", "KTime", "Time", "",46186158000
    } }
    AnimationLayer: 41, "AnimLayer::Base", "" { }
    AnimationCurveNode: 42, "AnimCurveNode::Gloss", "" { Properties70: {
        P: "d|Gloss", "Number", "", "A",0.5
    } }
    AnimationCurve: 43, "AnimCurve::", "" {
        KeyTime: *2 { a: 0,46186158000 }
        KeyValueFloat: *2 { a: 0.25,1 }
        KeyAttrFlags: *1 { a: 4 }
        KeyAttrDataFloat: *4 { a: 0,0,0,0 }
        KeyAttrRefCount: *1 { a: 2 }
    }
    AnimationCurveNode: 44, "AnimCurveNode::Tint", "" { Properties70: {
        P: "d|X", "Number", "", "A",1
        P: "d|Y", "Number", "", "A",2
        P: "d|Z", "Number", "", "A",3
    } }
    AnimationCurve: 45, "AnimCurve::", "" {
        KeyTime: *2 { a: 0,46186158000 }
        KeyValueFloat: *2 { a: 4,-4 }
        KeyAttrFlags: *1 { a: 4 }
        KeyAttrDataFloat: *4 { a: 0,0,0,0 }
        KeyAttrRefCount: *1 { a: 2 }
    }
}
Connections: {
    C: "OO",10,0
    C: "OO",20,10
    C: "OO",30,10
    C: "OO",41,40
    C: "OO",42,41
    C: "OO",44,41
    C: "OP",42,30, "Gloss"
    C: "OP",43,42, "d|Gloss"
    C: "OP",44,30, "Tint"
    C: "OP",45,44, "d|Y"
}
"#;

/// [`MATERIAL_CURVES`]: keyscene's `Scene::material_at` user properties equal ufbx's
/// `evaluate_prop` on the material at 0, 0.25, 0.5 and 1 s (hand-computed too: Gloss 0.25 →
/// 1, Tint.y 4 → −4 linearly, X and Z the curve node's 1 and 3), and so does ufbx's
/// evaluation of the material of the FBX keyscene writes from it (the curves written back).
fn material_curves() -> Result<(), String> {
    let bytes = MATERIAL_CURVES.as_bytes();
    let (scene, warnings) =
        keyscene::load_bytes(bytes, Some(Path::new("m.fbx")), &Default::default())
            .map_err(|e| e.to_string())?;
    if !warnings.is_empty() {
        return Err(format!("warnings: {warnings:?}"));
    }
    let mut opts = keyscene::formats::fbx::export::WriteOptions::default();
    opts.ascii = false;
    let (written, _) =
        keyscene::formats::fbx::export::write(&scene, &opts).map_err(|e| e.to_string())?;
    let hand = |t: f64| (0.25 + 0.75 * t, [1.0, 4.0 - 8.0 * t, 3.0]);
    for (what, file) in [("source", bytes), ("written", &written[..])] {
        let theirs = ufbx::load_memory(file, ufbx::LoadOpts::default())
            .map_err(|e| format!("ufbx ({what}): {:?}", e.description))?;
        let m = theirs.materials.iter().find(|m| m.element.name == "M").ok_or("no material M")?;
        let stack = theirs.anim_stacks.first().ok_or("no stack")?;
        for t in [0.0, 0.25, 0.5, 1.0] {
            let ours = scene
                .material_at(Some(0), 0, Time::Seconds(t))
                .ok_or("no material")?
                .user_properties;
            let gloss = ufbx::evaluate_prop(&stack.anim, &m.element, "Gloss", t).value_vec4.x;
            let tint = ufbx::evaluate_prop(&stack.anim, &m.element, "Tint", t).value_vec4;
            let (hg, ht) = hand(t);
            let got = (ours[0].value.components(), ours[1].value.components());
            let want = (vec![gloss], vec![tint.x, tint.y, tint.z]);
            let near = |a: &[f64], b: &[f64]| a.iter().zip(b).all(|(x, y)| close(*x, *y));
            if !near(&got.0, &want.0) || !near(&got.1, &want.1) {
                return Err(format!("{what} at {t} s: keyscene {got:?}, ufbx {want:?}"));
            }
            if !near(&want.0, &[hg]) || !near(&want.1, &ht) {
                return Err(format!("{what} at {t} s: ufbx {want:?}, hand {hg} {ht:?}"));
            }
        }
    }
    Ok(())
}

/// The FBX round trip of the module docs.
fn check_fbx(
    scene: &Scene,
    theirs: &ufbx::Scene,
    node_pairs: &[(usize, usize)],
    material_pairs: &[(usize, usize)],
) -> Result<(), String> {
    use keyscene::formats::fbx::export;
    let (bytes, report) = export::write(scene, &export::WriteOptions::default())
        .map_err(|e| format!("FBX write: {e}"))?;
    let back = ufbx::load_memory(&bytes, ufbx::LoadOpts::default())
        .map_err(|e| format!("ufbx on the written FBX: {:?}", e.description))?;
    let ktime = back.metadata.ktime_second;
    // User properties the writer reports left out (a built-in property of that name with
    // another value).
    let reported = |owner: &str, name: &str| {
        report.dropped.iter().any(|l| {
            l.starts_with("user property ")
                && l.contains(&format!("\"{name}\""))
                && l.contains(&format!("\"{owner}\""))
        })
    };
    let by_name = unique(back.nodes.iter().map(|n| n.element.name.as_ref()));
    let mat_by_name = unique(back.materials.iter().map(|m| m.element.name.as_ref()));
    let mut elements: Vec<(&ufbx::Element, &ufbx::Element)> = Vec::new();
    for &(k, _) in node_pairs {
        let n = &theirs.nodes[k];
        if let Some(&j) = by_name.get(n.element.name.as_ref()) {
            elements.push((&n.element, &back.nodes[j].element));
        }
    }
    for &(k, _) in material_pairs {
        let m = &theirs.materials[k];
        if let Some(&j) = mat_by_name.get(m.element.name.as_ref()) {
            elements.push((&m.element, &back.materials[j].element));
        }
    }
    for (src, written) in &elements {
        let want = their_user_props(src);
        let got = their_user_props(written);
        for w in &want {
            let name: &str = w.name.as_ref();
            let Some(g) = got.iter().find(|g| g.name.as_ref() as &str == name) else {
                if reported(src.name.as_ref(), name) {
                    continue;
                }
                return Err(format!("written FBX: {}: {name} missing", src.name));
            };
            let ours = prop_as_value(w, theirs.metadata.ktime_second);
            if let Some(ours) = ours {
                same(&ours, g, ktime, false)
                    .map_err(|e| format!("written FBX: {}: {name}: {e}", src.name))?;
            }
        }
    }
    let fps = theirs.settings.frames_per_second;
    for stack in theirs.anim_stacks.iter() {
        let name: &str = stack.element.name.as_ref();
        let Some(written) = back.anim_stacks.iter().find(|x| x.element.name.as_ref() == name)
        else {
            continue;
        };
        let (props, _) = animated(stack);
        let (f0, f1) = ((stack.time_begin * fps).ceil(), (stack.time_end * fps).floor());
        let frames: Vec<f64> =
            (0..=500).map(|k| f0 + f64::from(k)).take_while(|f| *f <= f1).collect();
        for (src, out) in elements.iter() {
            for p in their_user_props(src) {
                let pname: &str = p.name.as_ref();
                if animation_of(&props, src.element_id, pname) != Some(true) {
                    continue;
                }
                for &f in &frames {
                    let t = f / fps;
                    let want = ufbx::evaluate_prop(&stack.anim, src, pname, t);
                    let got = ufbx::evaluate_prop(&written.anim, out, pname, t);
                    if let Some(w) = prop_as_value(&want, theirs.metadata.ktime_second) {
                        same(&w, &got, ktime, false).map_err(|e| {
                            format!("written FBX {} stack {name:?} t = {t}: {pname}: {e}", src.name)
                        })?;
                    }
                }
            }
        }
    }
    Ok(())
}

/// ufbx's prop as the value keyscene's rules give it (for comparing two ufbx readings);
/// `None` where the ufbx type says too little (an `Integer` may be an int, enum or time: read
/// as an int).
fn prop_as_value(p: &ufbx::Prop, _ktime: i64) -> Option<UserValue> {
    use ufbx::PropType as T;
    let v = &p.value_vec4;
    Some(match p.type_ {
        T::Boolean => UserValue::Bool(p.value_int != 0),
        T::Integer => UserValue::Int(p.value_int),
        T::Number | T::Distance => UserValue::Number(v.x),
        T::Vector => UserValue::Vector(glam::DVec3::new(v.x, v.y, v.z)),
        T::Color => UserValue::Color(glam::DVec3::new(v.x, v.y, v.z)),
        T::ColorWithAlpha => UserValue::ColorAlpha(glam::DVec4::new(v.x, v.y, v.z, v.w)),
        T::String | T::DateTime => UserValue::String(p.value_str.to_string()),
        _ => return None,
    })
}

/// The JSON form a value takes in glTF extras, as the module docs say.
fn json_form(v: &UserValue) -> UserValue {
    match v {
        UserValue::Enum { index, .. } => UserValue::Int(*index),
        UserValue::Color(c) => UserValue::Vector(*c),
        UserValue::Time(s) => UserValue::Number(*s),
        other => other.clone(),
    }
}

/// Whether the glTF reading `got` holds `want` (numbers: a JSON number with no fraction reads
/// back as an integer).
fn json_same(want: &UserValue, got: &UserValue) -> bool {
    match (json_form(want), got) {
        (UserValue::Number(a), UserValue::Int(b)) => a == *b as f64,
        (w, g) => w == *g,
    }
}

/// The glTF round trip of the module docs.
fn check_gltf(
    scene: &Scene,
    node_pairs: &[(usize, usize)],
    material_pairs: &[(usize, usize)],
) -> Result<(), String> {
    use keyscene::formats::gltf;
    let glb = gltf::write(scene, &gltf::WriteOptions::default()).map_err(|e| e.to_string())?;
    let (back, _) =
        gltf::read(&glb.main, &keyscene::ReadOptions::default()).map_err(|e| e.to_string())?;
    let by_name = unique(back.nodes.iter().map(|n| n.name.as_str()));
    let mat_by_name = unique(back.materials.iter().map(|m| m.name.as_str()));
    let mut lists: Vec<(&str, &[UserProperty], &[UserProperty])> = Vec::new();
    for &(_, i) in node_pairs {
        let n = &scene.nodes[i];
        if let Some(&j) = by_name.get(n.name.as_str()) {
            lists.push((&n.name, n.user_properties(), back.nodes[j].user_properties()));
        }
    }
    for &(_, i) in material_pairs {
        let m = &scene.materials[i];
        if let Some(&j) = mat_by_name.get(m.name.as_str()) {
            lists.push((&m.name, &m.user_properties, &back.materials[j].user_properties));
        }
    }
    for (owner, want, got) in lists {
        for w in want {
            if w.name == "keyscene" || w.value.components().iter().any(|x| !x.is_finite()) {
                continue; // not carried, reported by the writer
            }
            let Some(g) = got.iter().find(|g| g.name == w.name) else {
                return Err(format!("glTF: {owner}: {} missing", w.name));
            };
            if !json_same(&w.value, &g.value) {
                return Err(format!(
                    "glTF: {owner}: {}: {:?} read back as {:?}",
                    w.name, w.value, g.value
                ));
            }
        }
    }
    Ok(())
}

/// The generated case of the module docs: one node with a user property of every type, two of
/// them animated by linear keys, written to FBX and read by ufbx, and written to glTF and read
/// back by keyscene. Expected values are the hand-written ones below.
fn generated() -> Result<(), String> {
    use glam::{DVec3, DVec4};
    use keyscene::anim::{Animation, Channel, ChannelTarget, Interpolation, Key, Track};
    use keyscene::scene::{Node, NodeKind};
    let prop = |name: &str, value: UserValue, min: Option<f64>, max: Option<f64>| UserProperty {
        name: name.into(),
        value,
        min,
        max,
        flags: String::new(),
    };
    let names = vec!["Low".to_string(), "Mid".into(), "High".into()];
    let props = vec![
        prop("B", UserValue::Bool(true), None, None),
        prop("I", UserValue::Int(-7), Some(-10.0), Some(10.0)),
        prop("E", UserValue::Enum { index: 2, names: names.clone() }, None, None),
        prop("N", UserValue::Number(0.25), Some(0.0), Some(1.0)),
        prop("V", UserValue::Vector(DVec3::new(1.0, -2.0, 3.5)), None, None),
        prop("C", UserValue::Color(DVec3::new(0.1, 0.2, 0.3)), None, None),
        prop("CA", UserValue::ColorAlpha(DVec4::new(0.1, 0.2, 0.3, 0.4)), None, None),
        prop("S", UserValue::String("héllo".into()), None, None),
        prop("T", UserValue::Time(1.5), None, None),
    ];
    let mut scene = Scene::default();
    scene.meta.frame_rate = Some(10.0);
    let mut node = Node::new("holder", NodeKind::Null);
    node.set_user_properties(props.clone());
    scene.nodes.push(node);
    scene.roots.push(0);
    let linear = |a: f64, b: f64| {
        Track::new(vec![
            Key { frame: 0.0, value: a, interpolation: Interpolation::Linear },
            Key { frame: 10.0, value: b, interpolation: Interpolation::Linear },
        ])
    };
    let ch = |name: &str, track| Channel {
        node: 0,
        target: ChannelTarget::Property { name: name.into(), track },
    };
    scene.animations.push(Animation {
        name: "Take".into(),
        fps: 10.0,
        frame_range: (0.0, 10.0),
        channels: vec![ch("N", linear(0.0, 1.0)), ch("V|Y", linear(-2.0, 2.0))],
    });
    // FBX → ufbx.
    use keyscene::formats::fbx::export;
    let (bytes, _) = export::write(&scene, &export::WriteOptions::default())
        .map_err(|e| format!("FBX write: {e}"))?;
    let back = ufbx::load_memory(&bytes, ufbx::LoadOpts::default())
        .map_err(|e| format!("ufbx on the written FBX: {:?}", e.description))?;
    let n = back.nodes.iter().find(|n| n.element.name.as_ref() == "holder").ok_or("no node")?;
    let ktime = back.metadata.ktime_second;
    for p in &props {
        let t = n.element.props.find_prop(&p.name).ok_or(format!("FBX: {} missing", p.name))?;
        if !t.flags.has_any(ufbx::PropFlags::USER_DEFINED) {
            return Err(format!("FBX: {} not user-defined", p.name));
        }
        same(&p.value, t, ktime, true).map_err(|e| format!("FBX: {}: {e}", p.name))?;
        if !same_bounds(p, t) {
            return Err(format!("FBX: {}: bounds", p.name));
        }
    }
    let stack = back.anim_stacks.iter().next().ok_or("FBX: no stack")?;
    for (t, n_want, vy_want) in [(0.0, 0.0, -2.0), (0.25, 0.25, -1.0), (1.0, 1.0, 2.0)] {
        let got_n = ufbx::evaluate_prop(&stack.anim, &n.element, "N", t).value_vec4.x;
        let got_v = ufbx::evaluate_prop(&stack.anim, &n.element, "V", t).value_vec4;
        if !close(got_n, n_want) || !close(got_v.y, vy_want) || !close(got_v.z, 3.5) {
            return Err(format!("FBX at {t} s: N {got_n}, V {:?}", (got_v.x, got_v.y, got_v.z)));
        }
    }
    // glTF → keyscene.
    use keyscene::formats::gltf;
    let glb = gltf::write(&scene, &gltf::WriteOptions::default()).map_err(|e| e.to_string())?;
    let warned = glb.warnings.iter().filter(|w| w.message.contains("animated user property"));
    if warned.count() != 2 {
        return Err("glTF: two animated user properties should be reported".into());
    }
    let (read, _) =
        gltf::read(&glb.main, &keyscene::ReadOptions::default()).map_err(|e| e.to_string())?;
    let m = read.nodes.iter().find(|n| n.name == "holder").ok_or("glTF: no node")?;
    let want = [
        ("B", UserValue::Bool(true)),
        ("I", UserValue::Int(-7)),
        ("E", UserValue::Int(2)),
        ("N", UserValue::Number(0.25)),
        ("V", UserValue::Vector(DVec3::new(1.0, -2.0, 3.5))),
        ("C", UserValue::Vector(DVec3::new(0.1, 0.2, 0.3))),
        ("CA", UserValue::ColorAlpha(DVec4::new(0.1, 0.2, 0.3, 0.4))),
        ("S", UserValue::String("héllo".into())),
        ("T", UserValue::Number(1.5)),
    ];
    for (name, value) in want {
        let got = m.user_properties().iter().find(|p| p.name == name);
        if got.map(|p| &p.value) != Some(&value) {
            return Err(format!("glTF: {name}: {:?}, want {value:?}", got.map(|p| &p.value)));
        }
    }
    Ok(())
}

fn main() {
    let corpus = common::corpus();
    let mut trials =
        vec![libtest_mimic::Trial::test("user_props::generated_every_type", || Ok(generated()?))];
    trials.push(libtest_mimic::Trial::test("user_props::generated_material_curves", || {
        Ok(material_curves()?)
    }));
    for f in common::ufbx_corpus::fbx_files(&corpus) {
        if !f.ufbx_loads || common::is_negative_fbx(&f.rel) {
            continue;
        }
        let path = f.path.clone();
        trials.push(common::corpus_trial(format!("user_props::{}", f.rel), &corpus, move |_| {
            let c = check(&path)?;
            if c.samples + c.left_out > 0 {
                eprintln!(
                    "{}: {} user properties at rest, {} animated samples, {} left out",
                    path.display(),
                    c.rest,
                    c.samples,
                    c.left_out
                );
            }
            Ok(())
        }));
    }
    if trials.is_empty() {
        trials.push(common::corpus_trial("user_props::corpus", &corpus, |_| {
            Err("no corpus FBX file ufbx loads".into())
        }));
    }
    common::run(trials);
}

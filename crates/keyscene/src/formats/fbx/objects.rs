//! The FBX object graph over the record tree: objects, their properties (with the
//! `Definitions` templates merged underneath), connections and the global settings.
//!
//! Seed 003, "Objects and connections":
//!
//! - **Objects** are the children of the top-level `Objects` record. FBX 7 writes
//!   `Class: id, "name", "SubClass"`, the name being `Name\0\x01Class` in binary files and
//!   `Class::Name` in ASCII ones; FBX 6 writes `Class: "Class::Name", "SubClass"` without an
//!   id. [`Object::name`] is the bare name either way. FBX 6 objects get ids of their own
//!   (1, 2, … in file order; the scene root `Model::Scene` is 0 as in FBX 7) so the same API
//!   serves both.
//! - **Properties** are `Properties70 › P: name, type, label, flags, values…` (FBX 7) or
//!   `Properties60 › Property: name, type, flags, values…` (FBX 6). A property an object does
//!   not state comes from its class's `Definitions › ObjectType › PropertyTemplate` (FBX 7),
//!   as the FBX SDK and ufbx read it; the typed getters then fall back to the caller's default.
//! - **Connections** are `Connections › C: "OO", child, parent` (also `OP` with the parent's
//!   property name, `PO` with the child's, `PP` with both). FBX 6 writes
//!   `Connect: "OO", "Class::Child", "Class::Parent"`, resolved here by name.
//! - **GlobalSettings** (top level in FBX 7, under `Objects` in FBX 6) become
//!   [`GlobalSettings`]: axes, units, time mode and span.
//! - **FBX 5** (before 6.0; no `Objects` record) keeps its `Model` records at the top level
//!   and is read as ufbx `ufbxi_read_legacy_model` reads it: each model is an object (ids as
//!   in FBX 6) whose sub-class is its `Type` record (`Light`, `Camera`, `LimbNode`), else
//!   `Mesh` when it holds `Vertices`; the `Material` records inside a model are objects
//!   connected to it in order; `Children: "Model::A", …` connects the named models under it.
//!   Properties are plain records (`Color: 1,1,1`, `Diffuse: …`, `Aperture: 45`), found by
//!   their FBX 6 names through [`ObjectGraph::prop`]; `Lcl Translation`, `Lcl Rotation` and
//!   `Lcl Scaling` are the `Default` values of the model's own `Transform` channels (FBX 5.0),
//!   else of the first `Take`'s, as ufbx reads property values "only defined in the takes"
//!   of legacy files.
//!
//! Nothing here knows the scene model; [`super::import`] turns a graph into a scene.

use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::HashMap;

use super::tree::{Document, NodeId, NodeRef, Property};
use super::Error;

/// KTime ticks per second (seed 003, "Time"): `1 s = 46_186_158_000` ticks.
pub const KTIME_PER_SECOND: i64 = 46_186_158_000;

/// The id FBX 7 gives the scene root (`Model::Scene` in FBX 6), parent of the top-level nodes.
pub const ROOT_ID: i64 = 0;

/// A map keyed by FBX object ids, hashed with [`IdHash`].
pub type IdMap<V> = HashMap<i64, V, IdHash>;

/// Hashes FBX object ids (64-bit integers) for [`IdMap`]: one 64 × 64 → 128-bit multiply of
/// the id, mixed with a per-process random seed, folded to 64 bits. The standard library's
/// SipHash-1-3 was about a twentieth of loading `maya_kenney_character_7700_binary` (every
/// object inserted once, looked up on each connection followed). The seed keeps a file from
/// choosing ids that all land in one bucket (`synthetic_id_collision_7500_ascii`'s ids collide
/// in ufbx's own hash, not in this one).
#[derive(Debug, Clone, Copy)]
pub struct IdHash {
    seed: u64,
}

impl Default for IdHash {
    fn default() -> Self {
        use std::hash::BuildHasher;
        static SEED: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
        let seed = *SEED.get_or_init(|| {
            std::collections::hash_map::RandomState::new().hash_one(0x6b65_7973u64)
        });
        IdHash { seed }
    }
}

impl std::hash::BuildHasher for IdHash {
    type Hasher = IdHasher;
    fn build_hasher(&self) -> IdHasher {
        IdHasher { state: self.seed }
    }
}

/// The hasher of [`IdHash`].
#[derive(Debug, Clone)]
pub struct IdHasher {
    state: u64,
}

/// `a × b` as a 128-bit product, its halves xored (the mixing step of folded-multiply
/// hashes).
fn folded_multiply(a: u64, b: u64) -> u64 {
    let p = u128::from(a) * u128::from(b);
    (p as u64) ^ ((p >> 64) as u64)
}

/// An odd 64-bit constant with well-spread bits (the fractional part of π).
const ID_HASH_MULTIPLIER: u64 = 0x243f_6a88_85a3_08d3;

impl std::hash::Hasher for IdHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut b = [0u8; 8];
            b[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(b));
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.state = folded_multiply(self.state ^ v, ID_HASH_MULTIPLIER);
    }
    fn write_i64(&mut self, v: i64) {
        self.write_u64(v as u64);
    }
    fn write_u8(&mut self, v: u8) {
        self.write_u64(u64::from(v));
    }
    fn finish(&self) -> u64 {
        self.state
    }
}

/// One property of an object: `P: "Lcl Translation", "Lcl Translation", "", "A", 0, 0, 0`.
#[derive(Debug, Clone, Copy)]
pub struct Prop<'d, 'a> {
    /// The property name (`Lcl Translation`).
    pub name: &'d str,
    /// The type name (`Lcl Translation`, `double`, `Vector3D`, `KString`, `enum` …).
    pub ty: &'d str,
    /// FBX 7's third string (`Vector`, `Color`, `Number`…; usually empty); empty in FBX 6.
    pub label: &'d str,
    /// Flags (`A` animatable, `+` animated, `U` user-defined, `H` hidden …).
    pub flags: &'d str,
    /// The values after the header strings, as stored.
    pub values: &'d [Property<'a>],
}

impl<'d, 'a> Prop<'d, 'a> {
    /// The first value as a number.
    pub fn f64(&self) -> Option<f64> {
        self.values.first()?.as_f64()
    }

    /// The first value as an integer (floats truncate toward zero).
    pub fn i64(&self) -> Option<i64> {
        let v = self.values.first()?;
        v.as_i64().or_else(|| v.as_f64().filter(|f| f.is_finite()).map(|f| f as i64))
    }

    /// The first three values as numbers (missing ones: `None`).
    pub fn vec3(&self) -> Option<[f64; 3]> {
        let n = |i: usize| self.values.get(i).and_then(Property::as_f64);
        Some([n(0)?, n(1)?, n(2)?])
    }

    /// The first value as text (non-UTF-8 strings: `None`).
    pub fn str(&self) -> Option<&'d str> {
        self.values.first()?.as_str()
    }

    /// Whether the flags mark the property animated (`+`).
    pub fn is_animated(&self) -> bool {
        self.flags.contains('+')
    }
}

/// How a connection links its ends (the first string of `C:`/`Connect:`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConnectionKind {
    /// Object to object (`OO`): a node under its parent, a geometry under its model…
    ObjectObject,
    /// Object to a property of the parent (`OP`): a texture to `DiffuseColor`, a curve node
    /// to `Lcl Translation`.
    ObjectProperty,
    /// A property of the child to the parent object (`PO`).
    PropertyObject,
    /// A property of the child to a property of the parent (`PP`).
    PropertyProperty,
}

/// One connection: `child` is connected to `parent` (FBX 7 ids; FBX 6 names resolved).
///
/// 32 bytes: the property names of `OP`/`PO`/`PP` connections are read from the `C:` record
/// when asked for ([`Connection::child_prop`], [`Connection::parent_prop`]) rather than
/// stored (two optional names made it 56 bytes, and most connections are `OO`).
#[derive(Clone, Copy)]
pub struct Connection<'d> {
    /// What kind.
    pub kind: ConnectionKind,
    /// The child (source) object id.
    pub child: i64,
    /// The parent (destination) object id.
    pub parent: i64,
    doc: &'d Document<'d>,
    /// The `C`/`Connect` record (FBX 5 `Children` lists and materials: none; they are `OO`).
    record: u32,
}

impl<'d> Connection<'d> {
    /// Value `i` of the connection's record as text ("" when not text).
    fn string(&self, i: usize) -> &'d str {
        if self.record as usize >= self.doc.node_count() {
            return "";
        }
        str_of(self.doc.node(NodeId(self.record)).property(i))
    }

    /// The child's property (`PO`, `PP`).
    pub fn child_prop(&self) -> Option<&'d str> {
        match self.kind {
            ConnectionKind::PropertyObject | ConnectionKind::PropertyProperty => {
                Some(self.string(2))
            }
            _ => None,
        }
    }

    /// The parent's property (`OP`: value 3 of the record, `PP`: value 4).
    pub fn parent_prop(&self) -> Option<&'d str> {
        match self.kind {
            ConnectionKind::ObjectProperty => Some(self.string(3)),
            ConnectionKind::PropertyProperty => Some(self.string(4)),
            _ => None,
        }
    }
}

impl PartialEq for Connection<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.kind == other.kind
            && self.child == other.child
            && self.parent == other.parent
            && self.child_prop() == other.child_prop()
            && self.parent_prop() == other.parent_prop()
    }
}

impl Eq for Connection<'_> {}

impl std::fmt::Debug for Connection<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("kind", &self.kind)
            .field("child", &self.child)
            .field("parent", &self.parent)
            .field("child_prop", &self.child_prop())
            .field("parent_prop", &self.parent_prop())
            .finish()
    }
}

const _: () = assert!(std::mem::size_of::<Connection<'static>>() == 32);

/// An object of the `Objects` section.
#[derive(Debug, Clone)]
pub struct Object<'d, 'a> {
    /// The object's id (FBX 6: assigned, see the module docs).
    pub id: i64,
    /// The record name: `Model`, `Geometry`, `Material`, `Deformer`, `NodeAttribute`,
    /// `AnimationCurve` …
    pub class: &'d str,
    /// The sub-class string: `Mesh`, `LimbNode`, `Null`, `Camera`, `Skin`, `Cluster`,
    /// `BlendShape`, `BlendShapeChannel`, `Shape` … (empty when none).
    pub sub_class: &'d str,
    /// The name without the class (`Model::` prefix or `\0\x01Model` suffix), lossily UTF-8:
    /// borrowed from the file unless it had to be repaired (a copy of every name was 10,000
    /// small allocations at the load's peak for `synthetic_id_collision_7500_ascii`).
    pub name: Cow<'d, str>,
    /// The object's record.
    pub node: NodeRef<'d, 'a>,
    props: (u32, u32),
    template: Option<u32>,
    /// FBX 5: properties are the record's own children (see the module docs).
    legacy: bool,
}

/// Axes, units and time settings from `GlobalSettings` (defaults as the FBX SDK's:
/// Y up, Z front, X right, centimetres, time mode 0).
#[derive(Debug, Clone, PartialEq)]
pub struct GlobalSettings {
    /// `UpAxis`: 0 X, 1 Y, 2 Z.
    pub up_axis: i64,
    /// `UpAxisSign`: 1 or −1.
    pub up_axis_sign: i64,
    /// `FrontAxis`: 0 X, 1 Y, 2 Z.
    pub front_axis: i64,
    /// `FrontAxisSign`.
    pub front_axis_sign: i64,
    /// `CoordAxis` (the "right" axis): 0 X, 1 Y, 2 Z.
    pub coord_axis: i64,
    /// `CoordAxisSign`.
    pub coord_axis_sign: i64,
    /// `UnitScaleFactor`: centimetres per file unit (1 = cm, 100 = m, 2.54 = inch).
    pub unit_scale_factor: f64,
    /// `OriginalUnitScaleFactor`: the authoring tool's unit, centimetres per unit.
    pub original_unit_scale_factor: f64,
    /// `TimeMode` as stored (see [`time_mode_fps`]).
    pub time_mode: i64,
    /// `CustomFrameRate` (used when `time_mode` is 14, custom).
    pub custom_frame_rate: f64,
    /// `TimeSpanStart` in KTime ticks.
    pub time_span_start: i64,
    /// `TimeSpanStop` in KTime ticks.
    pub time_span_stop: i64,
    /// Whether the file had a `GlobalSettings` record at all.
    pub present: bool,
    /// KTime ticks per second: [`KTIME_PER_SECOND`], or 141 120 000 for files from version
    /// 8000 and for files whose `FBXHeaderExtension › OtherFlags › TCDefinition` (with
    /// `FBXHeaderVersion` ≥ 1004) is other than 127 — the FBX SDK's newer time unit, which
    /// ufbx reads the same way (`ufbxi_read_header_extension`). Missing it makes clips 327×
    /// too long or short.
    pub ktime_per_second: i64,
}

impl Default for GlobalSettings {
    fn default() -> Self {
        GlobalSettings {
            up_axis: 1,
            up_axis_sign: 1,
            front_axis: 2,
            front_axis_sign: 1,
            coord_axis: 0,
            coord_axis_sign: 1,
            unit_scale_factor: 1.0,
            original_unit_scale_factor: 1.0,
            time_mode: 0,
            custom_frame_rate: -1.0,
            time_span_start: 0,
            time_span_stop: 0,
            present: false,
            ktime_per_second: KTIME_PER_SECOND,
        }
    }
}

impl GlobalSettings {
    /// Frames per second: [`time_mode_fps`] of `time_mode`, or `custom_frame_rate` for the
    /// custom mode (14) when it is positive.
    pub fn frame_rate(&self) -> f64 {
        if self.time_mode == 14
            && self.custom_frame_rate > 0.0
            && self.custom_frame_rate.is_finite()
        {
            return self.custom_frame_rate;
        }
        time_mode_fps(self.time_mode)
    }
}

/// Frames per second of an FBX `TimeMode` (the FBX SDK's `FbxTime::EMode`): 0 default (30, as
/// ufbx `ufbxi_time_mode_fps`), 1 120, 2 100, 3 60, 4 50, 5 48, 6 30, 7 30 drop-frame, 8 NTSC drop-frame
/// (30/1.001), 9 NTSC full-frame (30/1.001), 10 PAL 25, 11 24, 12 1000, 13 film 24/1.001,
/// 14 custom (24 here; see [`GlobalSettings::frame_rate`]), 15 96, 16 72, 17 60/1.001,
/// 18 120/1.001. Unknown values: 24.
pub fn time_mode_fps(mode: i64) -> f64 {
    match mode {
        1 => 120.0,
        2 => 100.0,
        3 => 60.0,
        4 => 50.0,
        5 => 48.0,
        6 | 7 => 30.0,
        8 | 9 => 30.0 / 1.001,
        10 => 25.0,
        12 => 1000.0,
        13 => 24.0 / 1.001,
        15 => 96.0,
        16 => 72.0,
        17 => 60.0 / 1.001,
        18 => 120.0 / 1.001,
        0 => 30.0,
        _ => 24.0,
    }
}

/// A problem the graph builder survived.
#[derive(Debug, Clone, PartialEq)]
pub struct GraphWarning {
    /// Byte offset of the record.
    pub offset: u64,
    /// What was wrong and what was done.
    pub message: String,
}

struct Template<'d> {
    class: &'d str,
    name: &'d str,
    props: (u32, u32),
}

/// The object graph of one FBX document (see the module docs).
///
/// ```
/// use keyscene::formats::fbx::{self, objects::ObjectGraph};
/// let text = br#"; FBX 7.4.0 project file
/// Objects: {
///     Model: 10, "Model::Box", "Mesh" { Properties70: { P: "Lcl Translation", "Lcl Translation", "", "A", 1, 2, 3 } }
/// }
/// Connections: { C: "OO", 10, 0 }
/// "#;
/// let doc = fbx::parse(text, &Default::default()).unwrap();
/// let graph = ObjectGraph::new(&doc).unwrap();
/// let boxx = graph.object(10).unwrap();
/// assert_eq!(boxx.name, "Box");
/// assert_eq!(graph.get_vec3(10, "Lcl Translation", [0.0; 3]), [1.0, 2.0, 3.0]);
/// assert_eq!(graph.children(0).next().unwrap().child, 10);
/// ```
pub struct ObjectGraph<'d, 'a> {
    /// The document the graph reads.
    pub doc: &'d Document<'a>,
    /// Axes, units, time.
    pub settings: GlobalSettings,
    /// Problems survived (duplicate ids, connections to unknown objects are kept silently).
    pub warnings: Vec<GraphWarning>,
    objects: Vec<Object<'d, 'a>>,
    by_id: IdMap<u32>,
    /// Every object's and template's properties, 24 bytes each (name, record, header count);
    /// [`Prop`] views are made on lookup.
    props: Vec<PropEntry<'d>>,
    templates: Vec<Template<'d>>,
    connections: Vec<Connection<'d>>,
    /// Connection indices sorted by parent id (stable: file order within a parent).
    by_parent: Vec<u32>,
    /// Connection indices sorted by child id.
    by_child: Vec<u32>,
    /// The parent id of every [`SAMPLE`]th entry of `by_parent` (and the child id of
    /// `by_child`'s): a search for an id's run looks through these contiguous ids first and
    /// then through one stretch of [`SAMPLE`] entries, instead of a binary search whose every
    /// step reads a connection elsewhere in memory. Two bytes a connection for both lists.
    parent_samples: Vec<i64>,
    child_samples: Vec<i64>,
    /// FBX 6: `Class::Name` → assigned id.
    fbx6_names: HashMap<Vec<u8>, i64>,
    /// FBX 5: (model id, 0 translation / 1 rotation / 2 scaling) → the take's defaults.
    legacy_transforms: HashMap<(i64, u8), [f64; 3]>,
}

impl std::fmt::Debug for ObjectGraph<'_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ObjectGraph")
            .field("objects", &self.objects.len())
            .field("connections", &self.connections.len())
            .field("settings", &self.settings)
            .finish()
    }
}

/// Splits an object name into (class prefix, bare name): `Name\0\x01Class` (binary FBX 7),
/// `Class::Name` (ASCII and FBX 6). Names without either come back whole with no class.
pub fn split_name(raw: &[u8]) -> (Option<&[u8]>, &[u8]) {
    if let Some(i) = raw.windows(2).position(|w| w == b"\0\x01") {
        return (Some(&raw[i + 2..]), &raw[..i]);
    }
    if let Some(i) = raw.windows(2).position(|w| w == b"::") {
        return (Some(&raw[..i]), &raw[i + 2..]);
    }
    (None, raw)
}

/// The KTime unit of `doc` (see [`GlobalSettings::ktime_per_second`]).
fn ktime_per_second(doc: &Document<'_>) -> i64 {
    let header = doc.root("FBXHeaderExtension");
    let header_version = header
        .and_then(|h| h.child("FBXHeaderVersion"))
        .and_then(|n| n.property(0))
        .and_then(Property::as_i64)
        .unwrap_or(0);
    let tc = header
        .and_then(|h| h.child("OtherFlags"))
        .and_then(|o| o.child("TCDefinition"))
        .and_then(|n| n.property(0))
        .and_then(Property::as_i64);
    let mut v7 = doc.version < 8000;
    if let (true, Some(tc)) = (header_version >= 1004, tc) {
        v7 = tc == 127;
    }
    if v7 {
        KTIME_PER_SECOND
    } else {
        141_120_000
    }
}

fn str_of<'d>(p: Option<&'d Property<'_>>) -> &'d str {
    p.and_then(Property::as_bytes).and_then(|b| std::str::from_utf8(b).ok()).unwrap_or("")
}

/// A property as the graph stores it: its name (the sort key of [`lookup`]), its `P`/`Property`
/// record and how many header strings precede the values. [`PropEntry::view`] makes the
/// [`Prop`]. 24 bytes instead of the view's 80: FBX 6 files carry one such record per property
/// of every object (`maya_human_ik_6100_binary`: 13,000).
#[derive(Debug, Clone, Copy)]
struct PropEntry<'d> {
    name: &'d str,
    record: NodeId,
    /// Leading strings (at most 4 in FBX 7, 3 in FBX 6).
    strings: u8,
    fbx7: bool,
}

impl<'d> PropEntry<'d> {
    /// The bytes of the flags string (what [`Prop::flags`] holds once checked as UTF-8).
    fn flags<'a>(&self, doc: &'d Document<'a>) -> &'d [u8] {
        let v = doc.node(self.record).properties();
        let at = if self.fbx7 { 3 } else { 2 };
        v.get(at).filter(|_| self.strings as usize > at).and_then(Property::as_bytes).unwrap_or(b"")
    }

    fn view<'a>(&self, doc: &'d Document<'a>) -> Prop<'d, 'a> {
        let v = doc.node(self.record).properties();
        let strings = self.strings as usize;
        let (label, flags) = if self.fbx7 {
            (str_of(v.get(2).filter(|_| strings > 2)), str_of(v.get(3).filter(|_| strings > 3)))
        } else {
            ("", str_of(v.get(2).filter(|_| strings > 2)))
        };
        Prop {
            name: self.name,
            ty: str_of(v.get(1).filter(|_| strings > 1)),
            label,
            flags,
            values: &v[strings..],
        }
    }
}

/// Reads a `Properties70`/`Properties60` record into `out`, sorted by name length, then name
/// (stable: equal names stay in file order, and [`lookup`] takes the last; it compares
/// lengths before bytes); returns the range.
fn read_props<'d>(record: Option<NodeRef<'d, '_>>, out: &mut Vec<PropEntry<'d>>) -> (u32, u32) {
    let start = out.len();
    if let Some(record) = record {
        let fbx7 = record.name() == "Properties70";
        for p in record.children() {
            if p.name() != "P" && p.name() != "Property" {
                continue;
            }
            let v = p.properties();
            // Header strings: 4 in FBX 7 (name, type, label, flags), 3 in FBX 6 (name, type,
            // flags). Some writers drop trailing empty ones: count the leading strings.
            let strings = v
                .iter()
                .take(if fbx7 { 4 } else { 3 })
                .take_while(|p| p.as_bytes().is_some())
                .count();
            out.push(PropEntry {
                name: str_of(v.first()),
                record: p.id(),
                strings: strings as u8,
                fbx7,
            });
        }
    }
    let slice = &mut out[start..];
    slice.sort_by(|a, b| name_order(a.name, b.name));
    (start as u32, out.len() as u32)
}

/// Upper bound of the `P`/`Property` records under the objects and templates of `doc`, so
/// the property table is allocated once (doubling kept up to half of it unused and, while
/// growing, both copies alive at the load's peak).
fn count_props(doc: &Document<'_>) -> usize {
    let under = |n: NodeRef<'_, '_>| props_record(n).map_or(0, |r| r.children().count());
    let objects = doc.root("Objects").map_or(0, |o| o.children().map(under).sum());
    let templates = doc
        .root("Definitions")
        .map_or(0, |d| d.children().flat_map(|t| t.children()).map(under).sum());
    let settings = doc.root("GlobalSettings").map_or(0, under);
    objects + templates + settings
}

fn props_record<'d, 'a>(node: NodeRef<'d, 'a>) -> Option<NodeRef<'d, 'a>> {
    node.child("Properties70").or_else(|| node.child("Properties60"))
}

impl<'d, 'a> ObjectGraph<'d, 'a> {
    /// Builds the graph of `doc`. Fails only when the document breaks a structural rule no
    /// reader could work around (an `Objects` record that is not a record of objects is not
    /// such a case: odd children are skipped). Duplicate ids keep the first object and add a
    /// [`GraphWarning`].
    pub fn new(doc: &'d Document<'a>) -> Result<Self, Error> {
        let mut g = ObjectGraph {
            doc,
            settings: GlobalSettings::default(),
            warnings: Vec::new(),
            objects: Vec::new(),
            by_id: IdMap::default(),
            props: Vec::with_capacity(count_props(doc)),
            templates: Vec::new(),
            connections: Vec::new(),
            by_parent: Vec::new(),
            by_child: Vec::new(),
            parent_samples: Vec::new(),
            child_samples: Vec::new(),
            fbx6_names: HashMap::new(),
            legacy_transforms: HashMap::new(),
        };
        g.read_templates();
        // FBX 6 names ("Class::Name") → assigned id.
        let mut fbx6_names: HashMap<Vec<u8>, i64> = HashMap::new();
        let mut settings_record = doc.root("GlobalSettings");
        if let Some(objects) = doc.root("Objects") {
            // At most one object per record: allocated once, not grown by doubling.
            let records = objects.children().count();
            g.objects.reserve_exact(records);
            g.by_id.reserve(records);
            for node in objects.children() {
                if node.name() == "GlobalSettings" {
                    settings_record = settings_record.or(Some(node));
                    continue;
                }
                let v = node.properties();
                let (id, raw_name, sub) = match v.first() {
                    Some(first) if first.as_i64().is_some() => (
                        first.as_i64().unwrap_or(0),
                        v.get(1).and_then(Property::as_bytes).unwrap_or(b""),
                        v.get(2),
                    ),
                    Some(Property::String(s)) => {
                        let id = g.objects.len() as i64 + 1;
                        let (class, name) = split_name(s);
                        let key = [class.unwrap_or(node.name().as_bytes()), b"::", name].concat();
                        if fbx6_names.contains_key(&key) {
                            g.warnings.push(GraphWarning {
                                offset: node.offset(),
                                message: format!(
                                    "object name \"{}\" appears again; connections to it go to \
                                     the first object of that name",
                                    String::from_utf8_lossy(&key)
                                ),
                            });
                        }
                        fbx6_names.entry(key).or_insert(id);
                        (id, &s[..], v.get(1))
                    }
                    _ => continue,
                };
                let (_, name) = split_name(raw_name);
                if g.by_id.contains_key(&id) {
                    g.warnings.push(GraphWarning {
                        offset: node.offset(),
                        message: format!("object id {id} appears again; the first object keeps it"),
                    });
                    continue;
                }
                let props = read_props(props_record(node), &mut g.props);
                let sub_class = str_of(sub);
                let template = g.find_template(node, sub_class);
                g.by_id.insert(id, g.objects.len() as u32);
                g.objects.push(Object {
                    id,
                    class: node.name(),
                    sub_class,
                    name: String::from_utf8_lossy(name),
                    node,
                    props,
                    template,
                    legacy: false,
                });
            }
        }
        g.settings.ktime_per_second = ktime_per_second(doc);
        if let Some(s) = settings_record {
            g.read_settings(s);
        }
        if doc.root("Objects").is_none() {
            g.read_legacy(&mut fbx6_names);
        }
        g.fbx6_names = fbx6_names;
        g.read_connections();
        g.sort_connections();
        // Lives through the import: no doubling slack.
        g.objects.shrink_to_fit();
        g.props.shrink_to_fit();
        g.connections.shrink_to_fit();
        Ok(g)
    }

    /// FBX 5 top-level models, their materials, `Children` lists and take defaults (see the
    /// module docs).
    fn read_legacy(&mut self, names: &mut HashMap<Vec<u8>, i64>) {
        let doc = self.doc;
        let mut children: Vec<(NodeRef<'d, 'a>, i64)> = Vec::new();
        let mut push = |g: &mut Self, node: NodeRef<'d, 'a>, sub_class: &'d str| -> Option<i64> {
            let Some(Property::String(raw)) = node.property(0) else { return None };
            let (class, name) = split_name(raw);
            let key = [class.unwrap_or(node.name().as_bytes()), b"::", name].concat();
            let id = g.objects.len() as i64 + 1;
            names.entry(key).or_insert(id);
            g.by_id.insert(id, g.objects.len() as u32);
            g.objects.push(Object {
                id,
                class: node.name(),
                sub_class,
                name: String::from_utf8_lossy(name),
                node,
                props: (0, 0),
                template: None,
                legacy: true,
            });
            Some(id)
        };
        let mut links: Vec<(&'d [u8], i64)> = Vec::new();
        for model in doc.roots().filter(|n| n.name() == "Model") {
            let sub_class = match model.child("Type").map(|t| str_of(t.property(0))) {
                Some(t @ ("Light" | "Camera" | "LimbNode")) => t,
                _ if model.child("Vertices").is_some() => "Mesh",
                _ => "",
            };
            let Some(id) = push(self, model, sub_class) else { continue };
            for m in model.children().filter(|c| c.name() == "Material") {
                if let Some(mid) = push(self, m, "") {
                    self.connect_legacy(mid, id);
                }
            }
            if let Some(list) = model.child("Children") {
                children.push((list, id));
            }
            // `Link: "Model::Bone" { Indexes, Weights, Transform, TransformLink }` records are
            // the mesh's skin clusters (ufbx `ufbxi_read_legacy_link`): one synthetic `Skin`
            // under the model, a `Cluster` per link, the named bone under its cluster.
            let mut skin = None;
            for link in model.children().filter(|c| c.name() == "Link") {
                let Some(Property::String(raw)) = link.property(0) else { continue };
                let skin_id = *skin.get_or_insert_with(|| {
                    let sid = self.legacy_object(model, "Deformer", "Skin");
                    self.connect_legacy(sid, id);
                    sid
                });
                let cid = self.legacy_object(link, "Deformer", "Cluster");
                self.connect_legacy(cid, skin_id);
                links.push((raw, cid));
            }
        }
        for (raw, cluster) in links {
            let (class, name) = split_name(raw);
            let key = [class.unwrap_or(b"Model"), b"::", name].concat();
            if let Some(&bone) = names.get(&key) {
                self.connect_legacy(bone, cluster);
            }
        }
        for (list, parent) in children {
            for p in list.properties() {
                let Some(raw) = p.as_bytes() else { continue };
                let (class, name) = split_name(raw);
                let key = [class.unwrap_or(b"Model"), b"::", name].concat();
                if let Some(&child) = names.get(&key) {
                    self.connect_legacy(child, parent);
                }
            }
        }
        // The model's own channels (FBX 5.0), then the first take's.
        let own = doc.roots().filter(|n| n.name() == "Model");
        let take = doc.root("Takes").and_then(|t| t.children().find(|c| c.name() == "Take"));
        let in_take = take.into_iter().flat_map(|t| t.children()).filter(|c| c.name() == "Model");
        for model in own.chain(in_take) {
            let Some(Property::String(raw)) = model.property(0) else { continue };
            let (class, name) = split_name(raw);
            let key = [class.unwrap_or(b"Model"), b"::", name].concat();
            let Some(&id) = names.get(&key) else { continue };
            self.read_legacy_defaults(model, id);
        }
    }

    /// `Channel: "Transform" { Channel: "T" { Channel: "X" { Default: … } … } … }` under
    /// A synthetic FBX 5 object of `class`/`sub_class` for `node` (no name of its own).
    fn legacy_object(&mut self, node: NodeRef<'d, 'a>, class: &'d str, sub_class: &'d str) -> i64 {
        let id = self.objects.len() as i64 + 1;
        self.by_id.insert(id, self.objects.len() as u32);
        self.objects.push(Object {
            id,
            class,
            sub_class,
            name: Cow::Borrowed(""),
            node,
            props: (0, 0),
            template: None,
            legacy: true,
        });
        id
    }

    /// An object–object connection made while reading an FBX 5 file.
    fn connect_legacy(&mut self, child: i64, parent: i64) {
        self.connections.push(Connection {
            kind: ConnectionKind::ObjectObject,
            child,
            parent,
            doc: self.doc,
            record: u32::MAX,
        });
    }

    /// `model` → the `legacy_transforms` of object `id` (first found wins).
    fn read_legacy_defaults(&mut self, model: NodeRef<'d, 'a>, id: i64) {
        let channels = |n: NodeRef<'d, 'a>| {
            n.children().filter(|c| c.name() == "Channel").map(|c| (str_of(c.property(0)), c))
        };
        for (_, transform) in channels(model).filter(|(name, _)| *name == "Transform") {
            for (trs, ch) in channels(transform) {
                let (k, mut v) = match trs {
                    "T" => (0, [0.0; 3]),
                    "R" => (1, [0.0; 3]),
                    "S" => (2, [1.0; 3]),
                    _ => continue,
                };
                for (axis, c) in channels(ch) {
                    let i = match axis {
                        "X" => 0,
                        "Y" => 1,
                        "Z" => 2,
                        _ => continue,
                    };
                    let d = c.child("Default").and_then(|d| d.property(0));
                    if let Some(x) = d.and_then(Property::as_f64).filter(|x| x.is_finite()) {
                        v[i] = x;
                    }
                }
                self.legacy_transforms.entry((id, k)).or_insert(v);
            }
        }
    }

    fn read_templates(&mut self) {
        let Some(defs) = self.doc.root("Definitions") else { return };
        for ty in defs.children().filter(|n| n.name() == "ObjectType") {
            let class = str_of(ty.property(0));
            for t in ty.children().filter(|n| n.name() == "PropertyTemplate") {
                let props = read_props(props_record(t), &mut self.props);
                self.templates.push(Template { class, name: str_of(t.property(0)), props });
            }
        }
    }

    /// The template of an object of record `node` and sub-class `sub`: the one whose name
    /// (without `Fbx` and `Surface`) equals the sub-class (`LimbNode`/`Limb`/`Root` take
    /// `FbxSkeleton`) or, for materials, the `ShadingModel`, case-insensitively; `Model`
    /// objects take their class's template whatever their sub-class (ufbx
    /// `ufbxi_find_template`). The only template of a class also serves objects without a
    /// sub-class (`Texture: …, ""` takes `FbxFileTexture`) and materials, but never an object
    /// whose sub-class names another type: a `Light` attribute does not take the `FbxNull`
    /// template that Maya writes as the only `NodeAttribute` one (its `Color` 0.8 is a null's,
    /// not a light's; ufbx gives such a light no template, so its colour defaults to white).
    /// No match: none.
    fn find_template(&self, node: NodeRef<'d, 'a>, sub: &str) -> Option<u32> {
        let class = node.name();
        let mut candidates = self.templates.iter().enumerate().filter(|(_, t)| t.class == class);
        let first = candidates.next()?;
        let only = !self.templates[first.0 + 1..].iter().any(|t| t.class == class);
        if class == "Model" || only && (class == "Material" || sub.is_empty()) {
            return Some(first.0 as u32);
        }
        let shading = node.child("ShadingModel").map(|n| str_of(n.property(0))).unwrap_or("");
        let want = match (class, sub) {
            ("Material", _) => shading,
            (_, "LimbNode" | "Limb" | "Root") => "Skeleton",
            _ => sub,
        };
        if want.is_empty() {
            return None;
        }
        std::iter::once(first).chain(candidates).find_map(|(i, t)| {
            let bare = t.name.strip_prefix("Fbx").unwrap_or(t.name);
            let bare2 = bare.strip_prefix("Surface").unwrap_or(bare);
            (bare.eq_ignore_ascii_case(want) || bare2.eq_ignore_ascii_case(want))
                .then_some(i as u32)
        })
    }

    fn read_settings(&mut self, record: NodeRef<'d, 'a>) {
        let range = read_props(props_record(record), &mut self.props);
        let tmpl = self.templates.iter().find(|t| t.class == "GlobalSettings").map(|t| t.props);
        let get = |name: &str| -> Option<Prop<'d, 'a>> {
            lookup(&self.props, range, name)
                .or_else(|| tmpl.and_then(|t| lookup(&self.props, t, name)))
                .map(|e| e.view(self.doc))
        };
        let d = GlobalSettings::default();
        let i = |name: &str, def: i64| get(name).and_then(|p| p.i64()).unwrap_or(def);
        let f = |name: &str, def: f64| {
            get(name).and_then(|p| p.f64()).filter(|v| v.is_finite()).unwrap_or(def)
        };
        self.settings = GlobalSettings {
            up_axis: i("UpAxis", d.up_axis),
            up_axis_sign: i("UpAxisSign", d.up_axis_sign),
            front_axis: i("FrontAxis", d.front_axis),
            front_axis_sign: i("FrontAxisSign", d.front_axis_sign),
            coord_axis: i("CoordAxis", d.coord_axis),
            coord_axis_sign: i("CoordAxisSign", d.coord_axis_sign),
            unit_scale_factor: f("UnitScaleFactor", d.unit_scale_factor),
            original_unit_scale_factor: f("OriginalUnitScaleFactor", d.original_unit_scale_factor),
            time_mode: i("TimeMode", d.time_mode),
            custom_frame_rate: f("CustomFrameRate", d.custom_frame_rate),
            time_span_start: i("TimeSpanStart", d.time_span_start),
            time_span_stop: i("TimeSpanStop", d.time_span_stop),
            present: true,
            ktime_per_second: self.settings.ktime_per_second,
        };
    }

    fn read_connections(&mut self) {
        let Some(conns) = self.doc.root("Connections") else { return };
        self.connections.reserve_exact(conns.children().count());
        for c in conns.children() {
            if c.name() != "C" && c.name() != "Connect" {
                continue;
            }
            let v = c.properties();
            let kind = match str_of(v.first()) {
                "OO" => ConnectionKind::ObjectObject,
                "OP" => ConnectionKind::ObjectProperty,
                "PO" => ConnectionKind::PropertyObject,
                "PP" => ConnectionKind::PropertyProperty,
                _ => continue,
            };
            // Values after the kind: child, [child prop], parent, [parent prop] (the property
            // names are read by `Connection::child_prop`/`parent_prop`).
            let (ci, pi) = match kind {
                ConnectionKind::ObjectObject | ConnectionKind::ObjectProperty => (1, 2),
                ConnectionKind::PropertyObject | ConnectionKind::PropertyProperty => (1, 3),
            };
            let id = |i: usize| v.get(i).and_then(|p| self.resolve(p));
            let (Some(child), Some(parent)) = (id(ci), id(pi)) else { continue };
            self.connections.push(Connection {
                kind,
                child,
                parent,
                doc: self.doc,
                record: c.id().0,
            });
        }
    }

    /// Fills `by_parent` and `by_child`: connection indices in order of (id, index), which is
    /// a stable sort by id. Each (id, index) pair is one `u128` (the id with its sign bit
    /// flipped, so unsigned order is signed order, above the index): unique keys sorted
    /// unstably as plain integers, without a look into `connections` per comparison.
    fn sort_connections(&mut self) {
        let mut keys: Vec<u128> = Vec::with_capacity(self.connections.len());
        for end in [0, 1] {
            keys.clear();
            keys.extend(self.connections.iter().enumerate().map(|(i, c)| {
                let id = if end == 0 { c.parent } else { c.child };
                (u128::from(id as u64 ^ (1 << 63)) << 32) | i as u128
            }));
            keys.sort_unstable();
            let order = keys.iter().map(|&k| k as u32).collect();
            let samples = keys
                .iter()
                .step_by(SAMPLE)
                .map(|&k| ((k >> 32) as u64 ^ (1 << 63)) as i64)
                .collect();
            if end == 0 {
                self.by_parent = order;
                self.parent_samples = samples;
            } else {
                self.by_child = order;
                self.child_samples = samples;
            }
        }
    }

    /// All objects in file order.
    pub fn objects(&self) -> &[Object<'d, 'a>] {
        &self.objects
    }

    /// The object with id `id`.
    pub fn object(&self, id: i64) -> Option<&Object<'d, 'a>> {
        self.by_id.get(&id).map(|&i| &self.objects[i as usize])
    }

    /// The id an object reference names: an integer id (FBX 7), or an FBX 6 `Class::Name`
    /// string (`Model::Scene` is [`ROOT_ID`]). `None` when it names no object.
    pub fn resolve(&self, reference: &Property<'_>) -> Option<i64> {
        if let Some(id) = reference.as_i64() {
            return Some(id);
        }
        let (class, name) = split_name(reference.as_bytes()?);
        let key = [class.unwrap_or(b""), b"::", name].concat();
        if let Some(&id) = self.fbx6_names.get(&key) {
            return Some(id);
        }
        (key == b"Model::Scene").then_some(ROOT_ID)
    }

    /// Whether `obj` is the object its FBX 6 `Class::Name` reference resolves to. FBX 6 names
    /// objects (and connects them) by that string, so when two objects share it — the ASCII
    /// writer escapes `"` as `&quot;`, so names that differed can meet — every reference goes to
    /// the first one, and data that belongs to the name (a model's inline geometry) is the first
    /// one's too; the later object loads without it. This is ufbx's rule for duplicate ids
    /// (`ufbxi_insert_fbx_id` keeps the first element; the FBX 6 id is derived from the name).
    /// FBX 7 objects (integer ids) always hold their id.
    pub fn holds_name(&self, obj: &Object<'d, 'a>) -> bool {
        let Some(Property::String(raw)) = obj.node.property(0) else { return true };
        let (class, name) = split_name(raw);
        let key = [class.unwrap_or(obj.node.name().as_bytes()), b"::", name].concat();
        self.fbx6_names.get(&key).is_none_or(|&id| id == obj.id)
    }

    /// Every connection in file order.
    pub fn connections(&self) -> &[Connection<'d>] {
        &self.connections
    }

    /// Connections whose parent is `id` (what is connected *to* it), in file order.
    pub fn children(&self, id: i64) -> impl Iterator<Item = &Connection<'d>> + '_ {
        self.run(&self.by_parent, &self.parent_samples, id, |c| c.parent)
    }

    /// Connections whose child is `id` (what it is connected *to*), in file order.
    pub fn parents(&self, id: i64) -> impl Iterator<Item = &Connection<'d>> + '_ {
        self.run(&self.by_child, &self.child_samples, id, |c| c.child)
    }

    /// The connections whose `end` is `id`, from `order` (sorted by that end) and its samples:
    /// one search for the start of the run, then the run is walked, not searched for.
    fn run<'s>(
        &'s self,
        order: &'s [u32],
        samples: &[i64],
        id: i64,
        end: fn(&Connection<'d>) -> i64,
    ) -> impl Iterator<Item = &'s Connection<'d>> + 's {
        let lo = run_start(order, samples, id, |i| end(&self.connections[i as usize]));
        order[lo..]
            .iter()
            .map(move |&i| &self.connections[i as usize])
            .take_while(move |c| end(c) == id)
    }

    /// Objects connected to `id` object-to-object (`OO`) whose class is `class`, in file order.
    pub fn child_objects<'s>(
        &'s self,
        id: i64,
        class: &'s str,
    ) -> impl Iterator<Item = &'s Object<'d, 'a>> + 's {
        self.children(id)
            .filter(|c| c.kind == ConnectionKind::ObjectObject)
            .filter_map(move |c| self.object(c.child))
            .filter(move |o| o.class == class)
    }

    /// Objects `id` is connected to object-to-object (`OO`) whose class is `class`.
    pub fn parent_objects<'s>(
        &'s self,
        id: i64,
        class: &'s str,
    ) -> impl Iterator<Item = &'s Object<'d, 'a>> + 's {
        self.parents(id)
            .filter(|c| c.kind == ConnectionKind::ObjectObject)
            .filter_map(move |c| self.object(c.parent))
            .filter(move |o| o.class == class)
    }

    /// The object's own properties (sorted by name length, then name), without the template.
    pub fn own_props<'s>(
        &'s self,
        obj: &Object<'d, 'a>,
    ) -> impl Iterator<Item = Prop<'d, 'a>> + 's {
        self.props[obj.props.0 as usize..obj.props.1 as usize].iter().map(|e| e.view(self.doc))
    }

    /// The names of the object's own properties (sorted by length, then bytes), without
    /// making their [`Prop`] views.
    pub fn own_prop_names<'s>(
        &'s self,
        obj: &Object<'d, 'a>,
    ) -> impl Iterator<Item = &'d str> + 's {
        self.props[obj.props.0 as usize..obj.props.1 as usize].iter().map(|e| e.name)
    }

    /// The object's own properties in file order, a repeated name once, at its first place
    /// with its last record's values (the record [`ObjectGraph::prop`] reads, as ufbx keeps
    /// the last of equal names); FBX 5 objects have none.
    pub fn own_props_in_file_order(&self, obj: &Object<'d, 'a>) -> Vec<Prop<'d, 'a>> {
        self.props_in_file_order(obj, |_| true)
    }

    /// The properties [`ObjectGraph::own_props_in_file_order`] gives whose flags (the last
    /// header string: `U` user-defined, `A` animatable…) contain `flag`. Only those are
    /// viewed and ordered: a Maya FBX 6 file gives each object about 80 properties, of which
    /// a few are user-defined (`maya_human_ik_6100_binary`: viewing and ordering all of them
    /// took a fifth of its load).
    pub fn own_props_with_flag_in_file_order(
        &self,
        obj: &Object<'d, 'a>,
        flag: char,
    ) -> Vec<Prop<'d, 'a>> {
        let mut buf = [0u8; 4];
        let bytes = flag.encode_utf8(&mut buf).as_bytes();
        let doc = self.doc;
        let mut props = self
            .props_in_file_order(obj, |e| e.flags(doc).windows(bytes.len()).any(|w| w == bytes));
        // A flags string that is not UTF-8 reads as empty (`str_of`): not kept.
        props.retain(|p| p.flags.contains(flag));
        props
    }

    /// [`ObjectGraph::own_props_in_file_order`] of the kept entries `keep` accepts.
    fn props_in_file_order(
        &self,
        obj: &Object<'d, 'a>,
        keep: impl Fn(&PropEntry<'d>) -> bool,
    ) -> Vec<Prop<'d, 'a>> {
        let entries = &self.props[obj.props.0 as usize..obj.props.1 as usize];
        // Sorted by name, equal names in file order: the last of a run is the one kept.
        let mut kept: Vec<(NodeId, &PropEntry<'d>)> = Vec::new();
        for (i, e) in entries.iter().enumerate() {
            match entries.get(i + 1) {
                Some(next) if next.name == e.name => {}
                _ if !keep(e) => {}
                _ => {
                    let first = entries[..=i]
                        .iter()
                        .rev()
                        .take_while(|x| x.name == e.name)
                        .map(|x| x.record)
                        .min()
                        .unwrap_or(e.record);
                    kept.push((first, e));
                }
            }
        }
        kept.sort_by_key(|(first, _)| *first);
        kept.into_iter().map(|(_, e)| e.view(self.doc)).collect()
    }

    /// Property `name` of object `id`: its own, else its template's. FBX 5 objects: the
    /// record that holds it ([`legacy_record`]), with empty type, label and flags.
    pub fn prop(&self, id: i64, name: &str) -> Option<Prop<'d, 'a>> {
        let obj = self.object(id)?;
        if obj.legacy {
            let (record, skip) = legacy_record(name)?;
            let values = obj.node.child(record)?.properties();
            return Some(Prop {
                name: record,
                ty: "",
                label: "",
                flags: "",
                values: values.get(skip..)?,
            });
        }
        lookup(&self.props, obj.props, name)
            .or_else(|| {
                obj.template
                    .and_then(|t| lookup(&self.props, self.templates[t as usize].props, name))
            })
            .map(|e| e.view(self.doc))
    }

    /// The values of property `name` of object `id` (after its header strings), found as
    /// [`ObjectGraph::prop`] finds the property, without making the [`Prop`] view (whose type,
    /// label and flags are checked as UTF-8 each time): what the typed getters read.
    pub(crate) fn prop_values(&self, id: i64, name: &str) -> Option<&'d [Property<'a>]> {
        let obj = self.object(id)?;
        if obj.legacy {
            return self.prop(id, name).map(|p| p.values);
        }
        let e = lookup(&self.props, obj.props, name).or_else(|| {
            obj.template.and_then(|t| lookup(&self.props, self.templates[t as usize].props, name))
        })?;
        self.doc.node(e.record).properties().get(e.strings as usize..)
    }

    /// A number property, or `default` when absent, not a number or not finite.
    pub fn get_f64(&self, id: i64, name: &str, default: f64) -> f64 {
        self.prop_values(id, name)
            .and_then(|v| v.first()?.as_f64())
            .filter(|v| v.is_finite())
            .unwrap_or(default)
    }

    /// An integer (enum, bool, KTime) property, or `default`.
    pub fn get_i64(&self, id: i64, name: &str, default: i64) -> i64 {
        self.prop_values(id, name)
            .and_then(|v| {
                let v = v.first()?;
                v.as_i64().or_else(|| v.as_f64().filter(|f| f.is_finite()).map(|f| f as i64))
            })
            .unwrap_or(default)
    }

    /// A three-number property (`Vector3D`, `Color`, `Lcl Translation`…), or `default` when
    /// absent or any component is missing or not finite.
    /// FBX 5 models: `Lcl Translation`/`Rotation`/`Scaling` from the first take's defaults.
    pub fn get_vec3(&self, id: i64, name: &str, default: [f64; 3]) -> [f64; 3] {
        let legacy = || {
            let k = match name {
                "Lcl Translation" => 0,
                "Lcl Rotation" => 1,
                "Lcl Scaling" => 2,
                _ => return None,
            };
            self.legacy_transforms.get(&(id, k)).copied()
        };
        let n = |v: &[Property<'_>], k: usize| v.get(k).and_then(Property::as_f64);
        self.prop_values(id, name)
            .and_then(|v| Some([n(v, 0)?, n(v, 1)?, n(v, 2)?]))
            .or_else(legacy)
            .filter(|v| v.iter().all(|x| x.is_finite()))
            .unwrap_or(default)
    }

    /// A string property, or `default`.
    pub fn get_str<'s>(&'s self, id: i64, name: &str, default: &'s str) -> &'s str {
        self.prop(id, name).and_then(|p| p.str()).unwrap_or(default)
    }
}

/// Values of a fixed list of properties, looked up for many objects at once (the importer
/// asks every model for the same 17 transform properties). Same rule as
/// [`ObjectGraph::prop`] (own property, else the template's), but the template's values are
/// found once per template and remembered, and no object id is hashed: a model without own
/// properties (`synthetic_id_collision`: 10,000 of them) costs no search at all, only a copy
/// of its template's values.
pub struct PropCache<'d, 'a, const N: usize> {
    names: &'static [&'static str; N],
    /// (template index, each name's values in the template or `None`), for the templates met
    /// so far (usually one, `Model`'s).
    templates: Vec<(u32, [Option<&'d [Property<'a>]>; N])>,
}

/// The values [`PropCache::of`] found for one object, by the index of the name in the
/// cache's list.
pub struct ObjectProps<'g, 'd, 'a, const N: usize> {
    graph: &'g ObjectGraph<'d, 'a>,
    id: i64,
    names: &'static [&'static str; N],
    found: [Option<&'d [Property<'a>]>; N],
    shared: Option<u32>,
}

impl<'d, 'a, const N: usize> PropCache<'d, 'a, N> {
    /// A cache for the properties `names` (index `i` of the results is `names[i]`).
    pub fn new(names: &'static [&'static str; N]) -> Self {
        PropCache { names, templates: Vec::new() }
    }

    /// The properties of `obj` (FBX 5 objects: as [`ObjectGraph::prop`] finds them).
    pub fn of<'g>(
        &mut self,
        graph: &'g ObjectGraph<'d, 'a>,
        obj: &Object<'d, 'a>,
    ) -> ObjectProps<'g, 'd, 'a, N> {
        let names = self.names;
        let doc = graph.doc;
        let values = |e: PropEntry<'d>| -> &'d [Property<'a>] {
            let v = doc.node(e.record).properties();
            v.get(e.strings as usize..).unwrap_or(&[])
        };
        if obj.legacy {
            let found = names.map(|n| graph.prop(obj.id, n).map(|p| p.values));
            return ObjectProps { graph, id: obj.id, names, found, shared: None };
        }
        let tmpl = obj.template.map(|t| {
            let at = match self.templates.iter().position(|e| e.0 == t) {
                Some(at) => at,
                None => {
                    let (lo, hi) = graph.templates[t as usize].props;
                    let slice = &graph.props[lo as usize..hi as usize];
                    self.templates.push((
                        t,
                        names.map(|n| {
                            // The last of equal names, as `lookup`.
                            let i = slice.partition_point(|p| name_order(p.name, n).is_le());
                            match i.checked_sub(1).map(|i| &slice[i]) {
                                Some(p) if p.name == n => Some(values(*p)),
                                _ => None,
                            }
                        }),
                    ));
                    self.templates.len() - 1
                }
            };
            &self.templates[at].1
        });
        let own = obj.props;
        if own.0 == own.1 {
            // Every value is the template's: objects of one template share them (the FBX 5
            // take defaults, found by id, are read only when the graph has some).
            let found = tmpl.copied().unwrap_or([None; N]);
            let shared =
                graph.legacy_transforms.is_empty().then_some(obj.template.unwrap_or(u32::MAX));
            return ObjectProps { graph, id: obj.id, names, found, shared };
        }
        let found = std::array::from_fn(|i| {
            lookup(&graph.props, own, names[i]).map(values).or_else(|| tmpl.and_then(|t| t[i]))
        });
        ObjectProps { graph, id: obj.id, names, found, shared: None }
    }
}

impl<const N: usize> ObjectProps<'_, '_, '_, N> {
    /// `Some(key)` when every value, and so everything read from them, is the same for every
    /// object of that key: the object has no properties of its own and takes them all from
    /// template `key` (`u32::MAX`: none), and no FBX 5 take default (found by object id) can
    /// stand in for a missing one. The importer computes such objects' transform once.
    pub fn shared(&self) -> Option<u32> {
        self.shared
    }

    /// The `i`th name's first value as a number, as stored (as [`Prop::f64`]: no default, no
    /// finiteness check).
    pub fn f64(&self, i: usize) -> Option<f64> {
        self.found[i]?.first()?.as_f64()
    }

    /// As [`ObjectGraph::get_f64`] for the `i`th name.
    pub fn get_f64(&self, i: usize, default: f64) -> f64 {
        self.found[i].and_then(|v| v.first()?.as_f64()).filter(|v| v.is_finite()).unwrap_or(default)
    }

    /// As [`ObjectGraph::get_i64`] for the `i`th name.
    pub fn get_i64(&self, i: usize, default: i64) -> i64 {
        self.found[i]
            .and_then(|v| {
                let v = v.first()?;
                v.as_i64().or_else(|| v.as_f64().filter(|f| f.is_finite()).map(|f| f as i64))
            })
            .unwrap_or(default)
    }

    /// As [`ObjectGraph::get_vec3`] for the `i`th name (FBX 5 take defaults included).
    pub fn get_vec3(&self, i: usize, default: [f64; 3]) -> [f64; 3] {
        let n = |v: &[Property<'_>], k: usize| v.get(k).and_then(Property::as_f64);
        match self.found[i] {
            Some(v) => (|| Some([n(v, 0)?, n(v, 1)?, n(v, 2)?]))(),
            None => None,
        }
        .or_else(|| {
            if self.graph.legacy_transforms.is_empty() {
                return None;
            }
            let k = match self.names[i] {
                "Lcl Translation" => 0,
                "Lcl Rotation" => 1,
                "Lcl Scaling" => 2,
                _ => return None,
            };
            self.graph.legacy_transforms.get(&(self.id, k)).copied()
        })
        .filter(|v| v.iter().all(|x| x.is_finite()))
        .unwrap_or(default)
    }
}

/// The FBX 5 record holding property `name` and how many of its values to skip (ufbx's
/// `ufbxi_legacy_*_props` tables): lights `CastLight`, `CastShadows`, `Color`, `ConeAngle`,
/// `HotSpot`, `Intensity`, `LightType`; cameras `ApertureMode`, `AspectW`, `AspectH`,
/// `FocalLength`, `FieldOfView` (`Aperture`), `FieldOfViewX`/`Y` (`FieldOfViewXProperty`…),
/// `FilmWidth`/`FilmHeight` (the two values of `CameraAperture`), `AspectRatioMode`
/// (`AspectType`); bones `Size`; materials `AmbientColor`… (`Ambient`, `Diffuse`, `Emissive`,
/// `Specular`, also under those names), `Shininess`, `ShadingModel`. Others: `None`.
pub fn legacy_record(name: &str) -> Option<(&'static str, usize)> {
    Some(match name {
        "FieldOfView" => ("Aperture", 0),
        "FieldOfViewX" => ("FieldOfViewXProperty", 0),
        "FieldOfViewY" => ("FieldOfViewYProperty", 0),
        "FilmWidth" => ("CameraAperture", 0),
        "FilmHeight" => ("CameraAperture", 1),
        "AspectRatioMode" => ("AspectType", 0),
        "AmbientColor" | "Ambient" => ("Ambient", 0),
        "DiffuseColor" | "Diffuse" => ("Diffuse", 0),
        "EmissiveColor" | "Emissive" => ("Emissive", 0),
        "SpecularColor" | "Specular" => ("Specular", 0),
        "CastLight" => ("CastLight", 0),
        "CastShadows" => ("CastShadows", 0),
        "Color" => ("Color", 0),
        "ConeAngle" => ("ConeAngle", 0),
        "HotSpot" => ("HotSpot", 0),
        "Intensity" => ("Intensity", 0),
        "LightType" => ("LightType", 0),
        "ApertureMode" => ("ApertureMode", 0),
        "AspectW" => ("AspectW", 0),
        "AspectH" => ("AspectH", 0),
        "FocalLength" => ("FocalLength", 0),
        "Size" => ("Size", 0),
        "Shininess" => ("Shininess", 0),
        "ShadingModel" => ("ShadingModel", 0),
        _ => return None,
    })
}

/// The order properties are kept in: by length, then bytes. Names of one length are compared
/// eight bytes at a time as big-endian words (the same order as byte by byte), inline: the
/// `memcmp` call of a `str` comparison, made for each step of sorting and searching every
/// object's properties, took a twelfth of loading `maya_human_ik_6100_binary`.
fn name_order(a: &str, b: &str) -> Ordering {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return a.len().cmp(&b.len());
    }
    let (mut wa, mut wb) = (a.chunks_exact(8), b.chunks_exact(8));
    for (x, y) in (&mut wa).zip(&mut wb) {
        let x = u64::from_be_bytes(x.try_into().unwrap());
        let y = u64::from_be_bytes(y.try_into().unwrap());
        if x != y {
            return x.cmp(&y);
        }
    }
    // Tails of equal length: as numbers they order as their bytes do.
    let tail = |r: &[u8]| r.iter().fold(0u64, |w, &c| w << 8 | u64::from(c));
    tail(wa.remainder()).cmp(&tail(wb.remainder()))
}

/// Entries of `by_parent`/`by_child` per sampled id (see `ObjectGraph::parent_samples`).
const SAMPLE: usize = 8;

/// The first position of `order` (connection indices sorted by `id_of`) whose id is not below
/// `id`; `samples` holds the id of every [`SAMPLE`]th entry of `order`.
fn run_start(order: &[u32], samples: &[i64], id: i64, id_of: impl Fn(u32) -> i64) -> usize {
    // Block `s - 1`'s first id is below `id` and block `s`'s is not: the answer lies after the
    // former's first entry, at the latter's first entry at most.
    let s = samples.partition_point(|&x| x < id);
    if s == 0 {
        return 0;
    }
    let lo = (s - 1) * SAMPLE + 1;
    let hi = (s * SAMPLE).min(order.len());
    lo + order[lo..hi].partition_point(|&i| id_of(i) < id)
}

/// The property `name` in `range` of `props` (sorted by [`read_props`]). Of several with one
/// name the last in file order wins, as ufbx keeps it (`ufbxi_read_properties`: a stable sort
/// by name, then `ufbxi_deduplicate_properties` keeps the last of a run): Blender 2.7x's FBX
/// 6.1 lights write `Color` twice, the model's 0.8 grey first and the light's colour after.
fn lookup<'d>(props: &[PropEntry<'d>], range: (u32, u32), name: &str) -> Option<PropEntry<'d>> {
    let s = &props[range.0 as usize..range.1 as usize];
    let i = s.partition_point(|p| name_order(p.name, name).is_le());
    i.checked_sub(1).and_then(|i| s.get(i)).filter(|p| p.name == name).copied()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::fbx;

    #[test]
    fn name_order_is_length_then_bytes() {
        // Expected: the order of (length, bytes) tuples, on names around the 8-byte word
        // boundaries, with bytes above 0x7f and differences in every place.
        let mut names: Vec<String> = ["", "P", "Q", "Lcl", "Lcl Scaling", "Lcl Rotation"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        for len in [7, 8, 9, 15, 16, 17] {
            for at in 0..len {
                for c in ['a', 'b', '\u{e9}'] {
                    let mut s: Vec<char> = vec!['a'; len];
                    s[at] = c;
                    names.push(s.into_iter().collect());
                }
            }
        }
        for a in &names {
            for b in &names {
                let want = (a.len(), a.as_bytes()).cmp(&(b.len(), b.as_bytes()));
                assert_eq!(name_order(a, b), want, "{a:?} {b:?}");
            }
        }
    }

    #[test]
    fn run_start_finds_the_first_entry_of_an_id_across_sample_blocks() {
        // 40 entries: ids 0, 0, 1, 1, … 19, 19 (entry k has id k / 2), identity order.
        let ids: Vec<i64> = (0..40).map(|k| k / 2).collect();
        let order: Vec<u32> = (0..40).collect();
        let samples: Vec<i64> = ids.iter().step_by(SAMPLE).copied().collect();
        let at = |id: i64| run_start(&order, &samples, id, |i| ids[i as usize]);
        // Id n starts at entry 2n; below every id: 0; above every id: the end.
        for (id, start) in
            [(-5, 0), (0, 0), (7, 14), (8, 16), (9, 18), (15, 30), (19, 38), (20, 40)]
        {
            assert_eq!(at(id), start, "id {id}");
        }
        assert_eq!(run_start(&[], &[], 3, |_| 0), 0);
    }

    const FBX7: &[u8] = br#"; FBX 7.4.0 project file
GlobalSettings: { Properties70: {
    P: "UpAxis", "int", "Integer", "",2
    P: "UnitScaleFactor", "double", "Number", "",2.54
    P: "TimeMode", "enum", "", "",14
    P: "CustomFrameRate", "double", "Number", "",12.5
} }
Definitions: {
    ObjectType: "Model" { PropertyTemplate: "FbxNode" { Properties70: {
        P: "Lcl Scaling", "Lcl Scaling", "", "A",1,1,1
        P: "RotationOrder", "enum", "", "",0
    } } }
    ObjectType: "NodeAttribute" {
        PropertyTemplate: "FbxCamera" { Properties70: { P: "FieldOfView", "FieldOfView", "", "A",40 } }
        PropertyTemplate: "FbxLight" { Properties70: { P: "Intensity", "Number", "", "A",100 } }
    }
}
Objects: {
    Model: 1, "Model::Root", "Null" { }
    Model: 2, "Model::Child", "Mesh" { Properties70: { P: "RotationOrder", "enum", "", "",4 } }
    NodeAttribute: 3, "NodeAttribute::Light", "Light" { }
    Material: 4, "Material::Red", "" { }
}
Connections: {
    C: "OO",1,0
    C: "OO",2,1
    C: "OO",3,2
    C: "OP",4,2, "DiffuseColor"
}
"#;

    #[test]
    fn prop_cache_reads_own_properties_before_the_template() {
        // Expected values: the FBX7 text above (model 2's own RotationOrder 4, the FbxNode
        // template's RotationOrder 0 and Lcl Scaling 1,1,1).
        let doc = fbx::parse(FBX7, &Default::default()).unwrap();
        let g = ObjectGraph::new(&doc).unwrap();
        let mut cache = PropCache::new(&["RotationOrder", "Lcl Scaling", "Missing"]);
        for (id, order) in [(1, 0), (2, 4), (1, 0)] {
            let p = cache.of(&g, g.object(id).unwrap());
            assert_eq!(p.get_i64(0, -1), order);
            assert_eq!(p.get_vec3(1, [0.0; 3]), [1.0, 1.0, 1.0]);
            assert_eq!(p.get_f64(2, 7.0), 7.0);
        }
        // The light's template has none of them.
        let p = cache.of(&g, g.object(3).unwrap());
        assert_eq!((p.get_i64(0, -1), p.get_f64(2, 7.0)), (-1, 7.0));
    }

    #[test]
    fn a_light_does_not_take_the_only_node_attribute_template_when_it_is_a_nulls() {
        // Expected: ufbx `ufbxi_find_template` (the sub-type must match); the shape of Maya's
        // `maya_node_attribute_zoo_7500_ascii.fbx` (one `FbxNull` template, Color 0.8).
        let text = br#"; FBX 7.5.0 project file
Definitions: {
    ObjectType: "NodeAttribute" { PropertyTemplate: "FbxNull" { Properties70: {
        P: "Color", "ColorRGB", "Color", "",0.8,0.8,0.8
    } } }
    ObjectType: "Texture" { PropertyTemplate: "FbxFileTexture" { Properties70: {
        P: "WrapModeU", "enum", "", "",1
    } } }
}
Objects: {
    NodeAttribute: 1, "NodeAttribute::", "Light" { }
    NodeAttribute: 2, "NodeAttribute::", "Null" { }
    Texture: 3, "Texture::t", "" { }
}
"#;
        let doc = fbx::parse(text, &Default::default()).unwrap();
        let g = ObjectGraph::new(&doc).unwrap();
        assert_eq!(g.get_vec3(1, "Color", [1.0; 3]), [1.0; 3]);
        assert_eq!(g.get_vec3(2, "Color", [1.0; 3]), [0.8; 3]);
        assert_eq!(g.get_i64(3, "WrapModeU", 0), 1);
    }

    #[test]
    fn the_last_of_duplicate_properties_wins() {
        // Expected: the later value, as ufbx's stable sort and deduplication keep it
        // (`ufbxi_deduplicate_properties`); Blender 2.79's 6.1 lights write `Color` twice.
        let text = br#"; FBX 7.4.0 project file
Objects: {
    NodeAttribute: 3, "NodeAttribute::Light", "Light" { Properties70: {
        P: "Color", "Color", "", "A",0.8,0.8,0.8
        P: "Intensity", "Number", "", "A",50
        P: "Color", "Color", "", "A",1,0.5,0.25
    } }
}
"#;
        let doc = fbx::parse(text, &Default::default()).unwrap();
        let g = ObjectGraph::new(&doc).unwrap();
        assert_eq!(g.get_vec3(3, "Color", [0.0; 3]), [1.0, 0.5, 0.25]);
        assert_eq!(g.get_f64(3, "Intensity", 0.0), 50.0);
        let mut cache = PropCache::new(&["Color"]);
        assert_eq!(cache.of(&g, g.object(3).unwrap()).get_vec3(0, [0.0; 3]), [1.0, 0.5, 0.25]);
    }

    #[test]
    fn template_defaults_sit_under_object_properties() {
        let doc = fbx::parse(FBX7, &Default::default()).unwrap();
        let g = ObjectGraph::new(&doc).unwrap();
        assert_eq!(g.get_i64(2, "RotationOrder", -1), 4);
        assert_eq!(g.get_i64(1, "RotationOrder", -1), 0);
        assert_eq!(g.get_vec3(1, "Lcl Scaling", [0.0; 3]), [1.0, 1.0, 1.0]);
        assert_eq!(g.get_f64(1, "Missing", 7.0), 7.0);
        // The light takes the FbxLight template, not the class's first (FbxCamera).
        assert_eq!(g.get_f64(3, "Intensity", 0.0), 100.0);
        assert_eq!(g.get_f64(3, "FieldOfView", -1.0), -1.0);
    }

    #[test]
    fn connections_link_both_ways_with_property_names() {
        let doc = fbx::parse(FBX7, &Default::default()).unwrap();
        let g = ObjectGraph::new(&doc).unwrap();
        let kids: Vec<i64> = g.children(2).map(|c| c.child).collect();
        assert_eq!(kids, vec![3, 4]);
        let op = g.children(2).find(|c| c.child == 4).unwrap();
        assert_eq!(
            (op.kind, op.parent_prop()),
            (ConnectionKind::ObjectProperty, Some("DiffuseColor"))
        );
        assert_eq!(g.parents(2).next().unwrap().parent, 1);
        assert_eq!(g.child_objects(1, "Model").next().unwrap().name, "Child");
        assert_eq!(g.object(3).unwrap().sub_class, "Light");
    }

    #[test]
    fn connection_property_names_come_from_their_record_and_runs_keep_file_order() {
        // Seed 003, "Objects and connections": `C: "PO", child, child prop, parent` and
        // `C: "PP", child, child prop, parent, parent prop`. Parents listed out of order, ids
        // negative and positive, several connections per parent.
        let text = br#"; FBX 7.4.0 project file
Objects: {
    Model: 7, "Model::A", "Null" {}
    Model: -5, "Model::B", "Null" {}
    Model: 9, "Model::C", "Null" {}
}
Connections: {
    C: "OO", 9, 7
    C: "PP", -5, "Lcl Rotation", 7, "Lcl Translation"
    C: "OO", 7, 0
    C: "PO", 9, "Visibility", -5
    C: "OO", -5, 7
}
"#;
        let doc = fbx::parse(text, &Default::default()).unwrap();
        let g = ObjectGraph::new(&doc).unwrap();
        let under_7: Vec<_> =
            g.children(7).map(|c| (c.child, c.kind, c.child_prop(), c.parent_prop())).collect();
        assert_eq!(
            under_7,
            [
                (9, ConnectionKind::ObjectObject, None, None),
                (
                    -5,
                    ConnectionKind::PropertyProperty,
                    Some("Lcl Rotation"),
                    Some("Lcl Translation")
                ),
                (-5, ConnectionKind::ObjectObject, None, None),
            ]
        );
        let po = g.parents(9).find(|c| c.parent == -5).unwrap();
        assert_eq!((po.child_prop(), po.parent_prop()), (Some("Visibility"), None));
        assert_eq!(g.parents(-5).map(|c| c.parent).collect::<Vec<_>>(), [7, 7]);
        assert_eq!(g.children(0).map(|c| c.child).collect::<Vec<_>>(), [7]);
        assert_eq!(g.children(8).count(), 0);
        assert_eq!(g.object(-5).unwrap().name, "B");
    }

    #[test]
    fn global_settings_give_axes_units_and_custom_rate() {
        let doc = fbx::parse(FBX7, &Default::default()).unwrap();
        let g = ObjectGraph::new(&doc).unwrap();
        assert_eq!(g.settings.up_axis, 2);
        assert_eq!(g.settings.unit_scale_factor, 2.54);
        assert_eq!(g.settings.frame_rate(), 12.5);
        assert_eq!(time_mode_fps(11), 24.0);
        assert_eq!(time_mode_fps(6), 30.0);
    }

    #[test]
    fn fbx6_connects_by_class_and_name() {
        let text = br#"; FBX 6.1.0 project file
Objects: {
    Model: "Model::pCube1", "Mesh" { Properties60: { Property: "Lcl Translation", "Lcl Translation", "A+",1,2,3 } }
    Material: "Material::lambert1", "" { }
    Deformer: "SubDeformer::Cluster a", "Cluster" { }
    GlobalSettings: { Properties60: { Property: "UpAxis", "int", "",2 } }
}
Connections: {
    Connect: "OO", "Model::pCube1", "Model::Scene"
    Connect: "OO", "Material::lambert1", "Model::pCube1"
    Connect: "OO", "SubDeformer::Cluster a", "Model::pCube1"
}
"#;
        let doc = fbx::parse(text, &Default::default()).unwrap();
        let g = ObjectGraph::new(&doc).unwrap();
        let cube = g.objects().iter().find(|o| o.name == "pCube1").unwrap();
        assert_eq!(g.parents(cube.id).next().unwrap().parent, ROOT_ID);
        let p = g.prop(cube.id, "Lcl Translation").unwrap();
        assert_eq!((p.vec3(), p.flags, p.is_animated()), (Some([1.0, 2.0, 3.0]), "A+", true));
        assert_eq!(g.child_objects(cube.id, "Material").count(), 1);
        assert_eq!(g.child_objects(cube.id, "Deformer").next().unwrap().sub_class, "Cluster");
        assert_eq!(g.settings.up_axis, 2);
    }

    #[test]
    fn binary_names_split_at_the_separator() {
        assert_eq!(split_name(b"Cube\0\x01Model"), (Some(&b"Model"[..]), &b"Cube"[..]));
        assert_eq!(split_name(b"Model::a::b"), (Some(&b"Model"[..]), &b"a::b"[..]));
        assert_eq!(split_name(b"plain"), (None, &b"plain"[..]));
    }
}

//! `keyscene._keyscene`: the Python extension module. It only translates: Python arguments
//! into the library's types (paths, [`keyscene::ReadOptions`], [`keyscene::convert::Settings`],
//! [`keyscene::anim::PoseOptions`]) and the library's results into Python objects and numpy
//! arrays. Every format, evaluation and conversion rule lives in the `keyscene` crate; the
//! pure-Python package (`python/keyscene`) re-exports this module and defines the exception
//! classes. Docs for Python users: the docstrings here, the stubs (`_keyscene.pyi`) and
//! docs/python.md.
//!
//! Arrays: those that mirror a buffer the library keeps (a mesh's positions, polygon starts and
//! corner vertices, a blend shape's deltas, a pose's matrices) are zero-copy, read-only views
//! whose base object keeps the `Scene` (or `Pose`) alive; everything computed on request is a
//! fresh array. Every call that reads, evaluates, samples, converts or renders releases the GIL.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use glam::{DMat4, DVec3};
use numpy::ndarray::{ArrayView1, ArrayView2, ArrayView3, ShapeBuilder};
use numpy::{IntoPyArray, PyArray1, PyArray2, PyArrayMethods};
use pyo3::exceptions::{PyIndexError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use keyscene::anim::{AnimationChoice, PoseOptions, Time};
use keyscene::convert::{Settings, Value};
use keyscene::scene::animation::{ChannelTarget, RotationTrack, Track};
use keyscene::scene::NodeKind;
use keyscene::{ErrorKind, ReadOptions};

#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

// ---------------------------------------------------------------------------------------------
// Errors

/// The Python exception class (defined in `keyscene/_errors.py`) for a library error kind.
fn class_name(kind: ErrorKind) -> &'static str {
    match kind {
        ErrorKind::NotFound => "NotFoundError",
        ErrorKind::Io => "IoError",
        ErrorKind::BadInput => "BadInputError",
        ErrorKind::Limit => "LimitError",
        ErrorKind::Unsupported => "UnsupportedError",
        ErrorKind::OutputExists => "OutputExistsError",
        ErrorKind::Write => "WriteError",
        ErrorKind::BadOption => "OptionError",
        _ => "Error",
    }
}

/// Raises `keyscene.<Class>(message, path, place)` for a library error.
fn raise(py: Python<'_>, e: keyscene::Error) -> PyErr {
    let path = e.path().map(|p| p.display().to_string());
    raise_as(py, class_name(e.kind()), e.to_string(), path, e.place())
}

fn raise_as(
    py: Python<'_>,
    class: &str,
    message: String,
    path: Option<String>,
    place: Option<String>,
) -> PyErr {
    let made = py
        .import("keyscene._errors")
        .and_then(|m| m.getattr(class))
        .and_then(|c| c.call1((message.clone(), path, place)));
    match made {
        Ok(obj) => PyErr::from_value(obj),
        Err(e) => e,
    }
}

/// `keyscene.OptionError` (also a `ValueError`) with `message`.
fn option_error(py: Python<'_>, message: impl Into<String>) -> PyErr {
    raise_as(py, "OptionError", message.into(), None, None)
}

// ---------------------------------------------------------------------------------------------
// Arrays

/// Sets a numpy array read-only (`arr.flags.writeable = False`).
fn read_only<'py, T>(arr: Bound<'py, T>) -> PyResult<Bound<'py, T>> {
    arr.as_any().getattr("flags")?.setattr("writeable", false)?;
    Ok(arr)
}

/// A zero-copy read-only (n, 3) float64 view of `v`, kept alive by `owner`.
///
/// Safety: `v` must live and not move as long as `owner` does (it is inside the `Arc` that
/// `owner` holds, which is never mutated).
unsafe fn view_vec3<'py>(v: &[DVec3], owner: Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    // DVec3 is three f64 without padding (glam: repr(C)).
    let view = ArrayView2::from_shape_ptr((v.len(), 3), v.as_ptr() as *const f64);
    Ok(read_only(PyArray2::borrow_from_array(&view, owner))?.into_any())
}

/// A zero-copy read-only 1-D view of `v`, kept alive by `owner` (as [`view_vec3`]).
unsafe fn view_slice<'py, T: numpy::Element>(
    v: &[T],
    owner: Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let view = ArrayView1::from_shape_ptr(v.len(), v.as_ptr());
    Ok(read_only(PyArray1::borrow_from_array(&view, owner))?.into_any())
}

/// A zero-copy read-only (n, 4, 4) float64 view of column-major matrices, indexed
/// `[k, row, column]` (translation in `[k, :3, 3]`), kept alive by `owner` (as [`view_vec3`]).
unsafe fn view_mat4<'py>(m: &[DMat4], owner: Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    // Element [k][row][col] is at k*16 + col*4 + row.
    let view =
        ArrayView3::from_shape_ptr((m.len(), 4, 4).strides((16, 1, 4)), m.as_ptr() as *const f64);
    Ok(read_only(numpy::PyArray3::borrow_from_array(&view, owner))?.into_any())
}

/// A new C-contiguous float64 array of `shape` holding `data` (row-major).
fn new_f64<'py>(py: Python<'py>, data: Vec<f64>, shape: &[usize]) -> PyResult<Bound<'py, PyAny>> {
    Ok(data.into_pyarray(py).reshape(shape.to_vec())?.into_any())
}

/// A new (n, 3) float64 array.
fn new_vec3<'py>(py: Python<'py>, v: &[DVec3]) -> PyResult<Bound<'py, PyAny>> {
    new_f64(py, v.iter().flat_map(|p| p.to_array()).collect(), &[v.len(), 3])
}

/// A new (n, 4, 4) float64 array of matrices, `[k, row, column]`.
fn new_mat4<'py>(py: Python<'py>, m: &[DMat4], lead: &[usize]) -> PyResult<Bound<'py, PyAny>> {
    let data = m.iter().flat_map(|m| m.transpose().to_cols_array()).collect();
    let mut shape = lead.to_vec();
    shape.extend([4, 4]);
    new_f64(py, data, &shape)
}

/// Floats from a Python sequence or numpy array (`times=`, `frames=`).
fn floats(py: Python<'_>, v: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<f64>> {
    let np = py.import("numpy")?;
    let arr = np.call_method1("asarray", (v, "float64"))?.call_method1("reshape", (-1,))?;
    arr.call_method0("tolist")?
        .extract::<Vec<f64>>()
        .map_err(|_| option_error(py, format!("{what}: expected a sequence of numbers")))
}

// ---------------------------------------------------------------------------------------------
// Loading

/// What a loaded file holds for Python: the scene, its reader's warnings and where it came
/// from. Shared (immutable) by the `Scene` object and every view and object made from it.
struct Loaded {
    scene: keyscene::scene::Scene,
    warnings: Vec<String>,
    path: Option<PathBuf>,
}

/// Reader options from keyword arguments with the Rust field names (`ReadOptions`).
fn read_options(py: Python<'_>, kw: Option<&Bound<'_, PyDict>>) -> PyResult<ReadOptions> {
    let mut opts = ReadOptions::default();
    let Some(kw) = kw else { return Ok(opts) };
    for (k, v) in kw.iter() {
        let key: String = k.extract()?;
        match key.as_str() {
            "base_dir" => opts.base_dir = Some(v.extract::<PathBuf>()?),
            "limits" => {
                let d = v.cast::<PyDict>().map_err(|_| {
                    PyTypeError::new_err("limits: expected a dict with max_bytes, max_elements, max_depth")
                })?;
                for (lk, lv) in d.iter() {
                    let lk: String = lk.extract()?;
                    match lk.as_str() {
                        "max_bytes" => opts.limits.max_bytes = lv.extract()?,
                        "max_elements" => opts.limits.max_elements = lv.extract()?,
                        "max_depth" => opts.limits.max_depth = lv.extract()?,
                        _ => {
                            return Err(PyTypeError::new_err(format!(
                                "limits: unknown key {lk:?}; valid: max_bytes, max_elements, max_depth"
                            )))
                        }
                    }
                }
            }
            _ => {
                return Err(PyTypeError::new_err(format!(
                    "load() got an unexpected keyword argument {key:?}; the read options are: base_dir, limits"
                )))
            }
        }
    }
    let _ = py;
    Ok(opts)
}

/// load(path, **read_options) -> Scene
///
/// Reads a 3DS/PRJ, FBX (6.1–7.7, binary or ASCII), 3DA or glTF/GLB file, the format
/// recognised by its bytes (then extension), as `keyscene inspect` does.
///
/// path: str or os.PathLike.
/// read_options (keywords, the Rust `ReadOptions` fields): `base_dir` (folder to resolve
/// texture and buffer file names in; default the file's own), `limits` (dict: `max_bytes`,
/// default 2 GiB; `max_elements`, default 2**28; `max_depth`, default 64).
///
/// Returns a Scene; what the reader survived is `Scene.warnings` (never printed).
/// Raises NotFoundError (a FileNotFoundError) for a missing file, BadInputError,
/// LimitError, IoError (each a keyscene.Error naming the file and the place in it); TypeError
/// for an unknown keyword.
#[pyfunction]
#[pyo3(signature = (path, **read_options))]
fn load(
    py: Python<'_>,
    path: PathBuf,
    read_options: Option<&Bound<'_, PyDict>>,
) -> PyResult<Scene> {
    let opts = self::read_options(py, read_options)?;
    let p = path.clone();
    let loaded = py
        .detach(move || keyscene::load_with(&p, &opts).map_err(|e| e.in_file(&p)))
        .map_err(|e| raise(py, e))?;
    Ok(Scene::new(loaded.0, &loaded.1, Some(path)))
}

/// load_bytes(data, format=None, name=None) -> Scene
///
/// Reads a scene from bytes (bytes, bytearray or memoryview). `format` ("3ds", "fbx", "3da",
/// "gltf", "glb") helps recognise a file whose bytes do not say (content wins, as for files);
/// `name` is the file name used in messages and to recognise the format by extension. Texture
/// and buffer files are not resolved (there is no folder).
///
/// Raises BadInputError, LimitError (keyscene.Error), OptionError for an unknown format word.
#[pyfunction]
#[pyo3(signature = (data, format=None, name=None))]
fn load_bytes(
    py: Python<'_>,
    data: Vec<u8>,
    format: Option<String>,
    name: Option<String>,
) -> PyResult<Scene> {
    let hint = match format.as_deref().map(str::to_ascii_lowercase).as_deref() {
        None => None,
        Some(f @ ("3ds" | "prj" | "fbx" | "3da" | "gltf" | "glb")) => Some(format!("scene.{f}")),
        Some(f) => {
            return Err(option_error(
                py,
                format!("format={f:?}: expected one of 3ds, prj, fbx, 3da, gltf, glb"),
            ))
        }
    };
    let label = name.clone().unwrap_or_else(|| "<bytes>".into());
    let path = name.or(hint).map(PathBuf::from);
    let p = path.clone();
    let loaded = py
        .detach(move || {
            keyscene::load_bytes(&data, p.as_deref(), &ReadOptions::default())
                .map_err(|e| e.in_file(Path::new(&label)))
        })
        .map_err(|e| raise(py, e))?;
    Ok(Scene::new(loaded.0, &loaded.1, None))
}

// ---------------------------------------------------------------------------------------------
// Scene

/// A loaded scene (immutable). Nodes, meshes and the rest are index-addressed lists, in the
/// library's scene-model order (docs/api.md); lengths are in the file's unit
/// (`metres_per_unit`), angles in radians unless a name says degrees, times in seconds unless
/// a name says frames.
#[pyclass(frozen, module = "keyscene")]
struct Scene {
    data: Arc<Loaded>,
}

impl Scene {
    fn new(
        scene: keyscene::scene::Scene,
        warnings: &[keyscene::scene::Warning],
        path: Option<PathBuf>,
    ) -> Scene {
        let warnings = warnings.iter().map(ToString::to_string).collect();
        Scene { data: Arc::new(Loaded { scene, warnings, path }) }
    }

    fn scene(&self) -> &keyscene::scene::Scene {
        &self.data.scene
    }
}

/// `animation=`: an index or a name.
#[derive(FromPyObject)]
enum AnimationArg {
    /// An index into `Scene.animations`.
    Index(usize),
    /// A name (FBX AnimationStack): exact, else the first containing it.
    Name(String),
}

/// `animation=` as the library's choice: None is the rest pose; index 0 is the first
/// animation, or the rest pose in a scene without animation (`AnimationChoice::First`).
fn animation_choice(v: Option<AnimationArg>) -> AnimationChoice {
    match v {
        None => AnimationChoice::Rest,
        Some(AnimationArg::Index(0)) => AnimationChoice::First,
        Some(AnimationArg::Index(i)) => AnimationChoice::Index(i),
        Some(AnimationArg::Name(n)) => AnimationChoice::Named(n),
    }
}

/// The instants `times=` (seconds) or `frames=` ask for; exactly one must be given.
fn instants(
    py: Python<'_>,
    times: Option<&Bound<'_, PyAny>>,
    frames: Option<&Bound<'_, PyAny>>,
) -> PyResult<Vec<Time>> {
    match (times, frames) {
        (Some(t), None) => Ok(floats(py, t, "times")?.into_iter().map(Time::Seconds).collect()),
        (None, Some(f)) => Ok(floats(py, f, "frames")?.into_iter().map(Time::Frame).collect()),
        _ => Err(option_error(py, "give exactly one of times= (seconds) or frames=")),
    }
}

#[pymethods]
impl Scene {
    /// The file format, lower case: "3ds", "fbx", "3da" or "gltf" (glTF and GLB alike).
    #[getter]
    fn format(&self) -> String {
        self.scene().meta.format.clone()
    }

    /// The format's version number when the file states one (FBX 7400, 3DS 3), else None.
    #[getter]
    fn version(&self) -> Option<u32> {
        self.scene().meta.version
    }

    /// The program that wrote the file, when it says (FBX `Creator`, glTF `asset.generator`),
    /// else None.
    #[getter]
    fn creator(&self) -> Option<String> {
        let props = &self.scene().meta.properties;
        props
            .iter()
            .find(|(k, _)| {
                matches!(
                    k.as_str(),
                    "Creator" | "creator" | "generator" | "Generator" | "Application"
                )
            })
            .map(|(_, v)| v.clone())
    }

    /// The up axis: "x", "y", "z", "-x", "-y" or "-z" (3DS and 3DA: "z", 3ds Max's).
    #[getter]
    fn up_axis(&self) -> &'static str {
        axis_name(self.scene().meta.axes.up)
    }

    /// Metres per scene unit (FBX `UnitScaleFactor` / 100; 1.0 when the file states none).
    #[getter]
    fn metres_per_unit(&self) -> f64 {
        self.scene().meta.units.metres()
    }

    /// The file's own frame rate (frames per second) when it stores one (FBX), else None.
    #[getter]
    fn frame_rate(&self) -> Option<f64> {
        self.scene().meta.frame_rate
    }

    /// The file this scene was loaded from, or None (load_bytes).
    #[getter]
    fn path(&self) -> Option<PathBuf> {
        self.data.path.clone()
    }

    /// What the reader survived, one sentence each, as `keyscene check` lists them (list of
    /// str; never printed).
    #[getter]
    fn warnings(&self) -> Vec<String> {
        self.data.warnings.clone()
    }

    /// Every node, in scene order (list of Node; `Node.index` is its place here).
    #[getter]
    fn nodes(slf: &Bound<'_, Self>) -> Vec<Node> {
        (0..slf.get().scene().nodes.len())
            .map(|i| Node { data: slf.get().data.clone(), index: i })
            .collect()
    }

    /// Every mesh (list of Mesh); nodes show them through `Node.mesh`.
    #[getter]
    fn meshes(slf: &Bound<'_, Self>) -> Vec<Mesh> {
        (0..slf.get().scene().meshes.len())
            .map(|i| Mesh { scene: slf.clone().unbind(), data: slf.get().data.clone(), index: i })
            .collect()
    }

    /// Every material, as dicts: `name`, `diffuse`, `ambient`, `specular`, `emissive` (linear
    /// RGB 0–1 tuples), `shininess`, `opacity` (0–1), `two_sided`, `maps` (list of dicts:
    /// `slot`, `file`, `resolved` path or None, `embedded` bool, `strength`), `shading_model`
    /// (`lambert`, `phong`, `blender_phong`, `arnold_standard_surface`, `openpbr_material`…, or None for
    /// sources without one) and `pbr`: for a physically based model a dict from value name
    /// (`base_color`, `base_factor`, `roughness`, `metalness`, `specular_ior`… as ufbx's
    /// `ufbx_material_pbr_maps`) to a dict `value` (4 floats as stored), `stored` bool, `map`
    /// (file or None), `channel` (`rgb`, `r`, `g`, `b`, `a`), for the values stored or
    /// mapped; an empty dict otherwise (docs/materials.md); `user_properties` (name → value, as
    /// `Node.user_properties`).
    #[getter]
    fn materials<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        self.scene()
            .materials
            .iter()
            .map(|m| {
                let d = PyDict::new(py);
                d.set_item("name", &m.name)?;
                d.set_item("diffuse", m.effective_diffuse().to_array())?;
                d.set_item("ambient", m.effective_ambient().to_array())?;
                d.set_item("specular", m.specular.to_array())?;
                d.set_item("emissive", m.effective_emissive().to_array())?;
                d.set_item("shininess", m.shininess)?;
                d.set_item("opacity", m.opacity.unwrap_or(1.0 - m.transparency))?;
                d.set_item("two_sided", m.two_sided)?;
                let maps = PyList::empty(py);
                for t in &m.maps {
                    let md = PyDict::new(py);
                    md.set_item("slot", t.slot.name())?;
                    md.set_item("file", &t.file)?;
                    md.set_item("resolved", t.resolved.clone())?;
                    md.set_item("embedded", t.embedded.is_some())?;
                    md.set_item("strength", t.strength)?;
                    maps.append(md)?;
                }
                d.set_item("maps", maps)?;
                d.set_item("shading_model", m.pbr.as_ref().map(|p| p.model.name()))?;
                let pbr = PyDict::new(py);
                if let Some(p) = m.pbr.as_ref().filter(|p| p.model.is_pbr()) {
                    for k in keyscene::scene::PbrProperty::ALL {
                        let v = p.get(k);
                        if !v.has_value && v.texture.is_none() {
                            continue;
                        }
                        let vd = PyDict::new(py);
                        vd.set_item("value", v.value.to_array())?;
                        vd.set_item("stored", v.has_value)?;
                        vd.set_item("map", v.texture.as_ref().map(|t| t.file.clone()))?;
                        vd.set_item("channel", v.channel.name())?;
                        pbr.set_item(k.name(), vd)?;
                    }
                }
                d.set_item("pbr", pbr)?;
                d.set_item("user_properties", user_properties_dict(py, &m.user_properties)?)?;
                Ok(d)
            })
            .collect()
    }

    /// Every camera, as dicts: `name`, `fov_degrees` and `fov_axis` ("horizontal",
    /// "vertical" or "diagonal"), `roll_degrees`, `near`/`far` (scene units or None),
    /// `aspect` (or None), `target` (node index or None), `projection` ("perspective" or
    /// "orthographic"), `xmag`/`ymag` (an orthographic camera's half width and height in scene
    /// units, glTF's `xmag`/`ymag`; None for a perspective camera).
    #[getter]
    fn cameras<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        self.scene()
            .cameras
            .iter()
            .map(|c| {
                let d = PyDict::new(py);
                d.set_item("name", &c.name)?;
                d.set_item("fov_degrees", c.fov_degrees)?;
                d.set_item("fov_axis", format!("{:?}", c.fov_axis).to_lowercase())?;
                d.set_item("roll_degrees", c.roll_degrees)?;
                d.set_item("near", c.near)?;
                d.set_item("far", c.far)?;
                d.set_item("aspect", c.aspect)?;
                d.set_item("target", c.target)?;
                let (projection, mag) = match c.projection {
                    keyscene::scene::Projection::Perspective => ("perspective", None),
                    keyscene::scene::Projection::Orthographic { xmag, ymag } => {
                        ("orthographic", Some((xmag, ymag)))
                    }
                };
                d.set_item("projection", projection)?;
                d.set_item("xmag", mag.map(|m| m.0))?;
                d.set_item("ymag", mag.map(|m| m.1))?;
                Ok(d)
            })
            .collect()
    }

    /// Every light, as dicts: `name`, `kind` ("point", "spot", "directional", …), `color`
    /// (linear RGB), `intensity`, `hotspot_degrees`, `falloff_degrees`, `on`, `target` (node
    /// index or None).
    #[getter]
    fn lights<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        self.scene()
            .lights
            .iter()
            .map(|l| {
                let d = PyDict::new(py);
                d.set_item("name", &l.name)?;
                d.set_item("kind", format!("{:?}", l.kind).to_lowercase())?;
                d.set_item("color", l.color.to_array())?;
                d.set_item("intensity", l.intensity)?;
                d.set_item("hotspot_degrees", l.hotspot_degrees)?;
                d.set_item("falloff_degrees", l.falloff_degrees)?;
                d.set_item("on", l.on)?;
                d.set_item("target", l.target)?;
                Ok(d)
            })
            .collect()
    }

    /// Every skin, as dicts: `joints` (list of node indices), `inverse_bind` ((j, 4, 4)
    /// float64, `[joint, row, column]`: mesh node space → joint space at bind time).
    #[getter]
    fn skins<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        self.scene()
            .skins
            .iter()
            .map(|s| {
                let d = PyDict::new(py);
                d.set_item("joints", s.joints.iter().map(|j| j.node).collect::<Vec<_>>())?;
                let m: Vec<DMat4> = s.joints.iter().map(|j| j.inverse_bind).collect();
                d.set_item("inverse_bind", new_mat4(py, &m, &[m.len()])?)?;
                Ok(d)
            })
            .collect()
    }

    /// Every animation (FBX AnimationStack, the 3DS keyframer segment, a glTF animation), as
    /// Animation objects.
    #[getter]
    fn animations(slf: &Bound<'_, Self>) -> Vec<Animation> {
        (0..slf.get().scene().animations.len())
            .map(|i| Animation { data: slf.get().data.clone(), index: i })
            .collect()
    }

    /// The names of the stored bind poses (FBX `Pose` of type BindPose), for
    /// `pose(bind_pose=…)`.
    #[getter]
    fn bind_poses(&self) -> Vec<String> {
        self.scene().bind_poses.iter().map(|b| b.name.clone()).collect()
    }

    /// pose(*, time=None, frame=None, animation=0, bind_pose=None, extrapolate=True) -> Pose
    ///
    /// The scene evaluated at one instant, exactly as `keyscene sample` evaluates it (lib3ds'
    /// rules for 3DS, the FBX SDK's as ufbx reproduces them for FBX). Give exactly one of
    /// `time` (seconds from frame 0, at the animation's rate; 30 fps for the rest pose, as the
    /// library's `Time::Seconds`) or `frame` (a frame of the animation's clock, fractional allowed). `animation`: index
    /// or name (FBX AnimationStack: exact name, else the first containing it); 0 in a scene
    /// without animation, or None, poses the rest transforms. `bind_pose`: place the nodes
    /// this stored bind pose lists at its matrices. `extrapolate=False` holds every curve at
    /// its end keys. `skin_follows_node=True`: skinned meshes also follow their own node's
    /// motion since binding, as Maya shows them (`--transform-skin`). `target_axes` (the up
    /// axis, "y", "z", "-x", …; right-handed) and `target_units` (metres per unit)
    /// re-express the posed world in other axes and units (`--up`/`--units`).
    ///
    /// Raises OptionError (a ValueError) for a missing/duplicate time or an animation or bind
    /// pose the scene does not have.
    #[pyo3(signature = (*, time=None, frame=None, animation=Some(AnimationArg::Index(0)), bind_pose=None, extrapolate=true, skin_follows_node=false, target_axes=None, target_units=None))]
    #[allow(clippy::too_many_arguments)]
    fn pose(
        slf: &Bound<'_, Self>,
        time: Option<f64>,
        frame: Option<f64>,
        animation: Option<AnimationArg>,
        bind_pose: Option<String>,
        extrapolate: bool,
        skin_follows_node: bool,
        target_axes: Option<String>,
        target_units: Option<f64>,
    ) -> PyResult<Pose> {
        let py = slf.py();
        let this = slf.get();
        let choice = animation_choice(animation);
        let at = match (time, frame) {
            (Some(t), None) => Time::Seconds(t),
            (None, Some(f)) => Time::Frame(f),
            _ => return Err(option_error(py, "give exactly one of time= (seconds) or frame=")),
        };
        let mut opts = PoseOptions::default().animation(choice).at(at).extrapolation(extrapolate);
        opts.bind_pose = bind_pose;
        opts.skin_follows_node = skin_follows_node;
        if let Some(up) = target_axes {
            let axis = keyscene::convert::parse_axis(&up)
                .map_err(|e| option_error(py, format!("target_axes={up:?}: {e}")))?;
            opts.target_axes = Some(keyscene::scene::AxisSystem::right_handed_with_up(axis));
        }
        opts.target_units = target_units;
        let data = this.data.clone();
        let (pose, _) = py.detach(move || data.scene.pose(&opts)).map_err(|e| raise(py, e))?;
        Ok(Pose { scene: slf.clone().unbind(), pose: Arc::new(pose) })
    }

    /// sample(*, times=None, frames=None, animation=0) -> numpy.ndarray
    ///
    /// Every node's world matrix at each instant, computed in one call with the GIL released:
    /// (instants, nodes, 4, 4) float64, `[i, node, row, column]`, column vectors (translation
    /// in `[i, node, :3, 3]`); each instant equals `pose(frame=…).world`. Give exactly one of
    /// `times` (seconds) or `frames` (any sequence or array of numbers). `animation` as for
    /// `pose`. A new array.
    #[pyo3(signature = (*, times=None, frames=None, animation=Some(AnimationArg::Index(0))))]
    fn sample<'py>(
        slf: &Bound<'py, Self>,
        times: Option<Bound<'py, PyAny>>,
        frames: Option<Bound<'py, PyAny>>,
        animation: Option<AnimationArg>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        let this = slf.get();
        let choice = animation_choice(animation);
        let frames = instants(py, times.as_ref(), frames.as_ref())?;
        let n = this.scene().nodes.len();
        let k = frames.len();
        let data = this.data.clone();
        let opts = PoseOptions::default().animation(choice);
        let m =
            py.detach(move || data.scene.sample_world(&opts, &frames)).map_err(|e| raise(py, e))?;
        new_mat4(py, &m, &[k, n])
    }

    /// sample_positions(node, *, times=None, frames=None, animation=0) -> numpy.ndarray
    ///
    /// The world-space vertices of `node`'s mesh (skinned and blend-shaped) at each instant:
    /// (instants, n, 3) float64, each instant equal to `pose(…).world_positions(node)`.
    /// Raises OptionError when the node shows meshes of different vertex counts at the
    /// instants (3DS morph tracks) or none. A new array.
    #[pyo3(signature = (node, *, times=None, frames=None, animation=Some(AnimationArg::Index(0))))]
    fn sample_positions<'py>(
        slf: &Bound<'py, Self>,
        node: usize,
        times: Option<Bound<'py, PyAny>>,
        frames: Option<Bound<'py, PyAny>>,
        animation: Option<AnimationArg>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        let this = slf.get();
        check_node(this.scene(), node)?;
        let choice = animation_choice(animation);
        let frames = instants(py, times.as_ref(), frames.as_ref())?;
        let data = this.data.clone();
        let opts = PoseOptions::default().animation(choice);
        let runs = py
            .detach(move || data.scene.sample_positions(&opts, node, &frames))
            .map_err(|e| raise(py, e))?;
        let n = runs.first().map_or(0, Vec::len);
        if runs.iter().any(|r| r.len() != n) || (n == 0 && !runs.is_empty()) {
            return Err(option_error(
                py,
                format!("node {node}: shows no mesh, or meshes of different vertex counts, at these instants"),
            ));
        }
        let flat: Vec<f64> = runs.iter().flatten().flat_map(|p| p.to_array()).collect();
        new_f64(py, flat, &[runs.len(), n, 3])
    }

    /// save(dst, **options) -> Report
    ///
    /// Writes this scene as `keyscene convert` would (the format from `dst`'s extension:
    /// .glb, .gltf, .3da, .obj, .fbx, .3ds, .usda, .usdz), with every `keyscene convert` option as a keyword
    /// (see `keyscene.convert`). The same bytes as `keyscene.convert` from this scene's file.
    ///
    /// Raises OutputExistsError (a FileExistsError) when `dst` exists and `force` is not set,
    /// OptionError (a ValueError) for options, UnsupportedError, WriteError, IoError.
    #[pyo3(signature = (dst, **options))]
    fn save(
        &self,
        py: Python<'_>,
        dst: PathBuf,
        options: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Report> {
        let settings = settings(py, options)?;
        let data = self.data.clone();
        let out = dst.clone();
        let report = py
            .detach(move || {
                let source = data.path.as_deref().map(keyscene::output::source_name);
                keyscene::output::new_run();
                keyscene::convert::convert_loaded(&data.scene, Vec::new(), &out, &settings, source)
            })
            .map_err(|e| raise(py, e))?;
        Ok(Report::of(&report, &dst))
    }

    /// render(*, frame=None, time=None, size=(640, 480), camera=None, animation=0) -> numpy.ndarray
    ///
    /// An image of the scene at one instant as `keyscene render` draws it (one light at the
    /// camera, Lambert + Blinn-Phong, textures, checker default material; docs/render.md):
    /// (height, width, 4) uint8 RGBA, alpha 255. `camera`: None (the scene's first camera,
    /// else the automatic one), "auto", or a camera node's (or camera's) name. No time: the
    /// animation's first frame. A new array. Reader-side warnings of the render (missing
    /// textures) are not raised.
    #[pyo3(signature = (*, frame=None, time=None, size=(640, 480), camera=None, animation=Some(AnimationArg::Index(0))))]
    fn render<'py>(
        slf: &Bound<'py, Self>,
        frame: Option<f64>,
        time: Option<f64>,
        size: (u32, u32),
        camera: Option<String>,
        animation: Option<AnimationArg>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        let this = slf.get();
        let choice = animation_choice(animation);
        let mut pose = PoseOptions::default().animation(choice.clone());
        pose.time = match (time, frame) {
            (Some(_), Some(_)) => {
                return Err(option_error(py, "give at most one of time= or frame="))
            }
            (Some(t), None) => Some(Time::Seconds(t)),
            (None, f) => f.map(Time::Frame),
        };
        let max = keyscene::render::MAX_SIZE;
        if !(1..=max).contains(&size.0) || !(1..=max).contains(&size.1) {
            return Err(option_error(
                py,
                format!("size={size:?}: each side must be 1…{max} pixels"),
            ));
        }
        let camera = match camera.as_deref() {
            None => keyscene::render::CameraChoice::Default,
            Some("auto") => keyscene::render::CameraChoice::Auto,
            Some(name) => keyscene::render::CameraChoice::Named(name.to_string()),
        };
        let mut opts = keyscene::render::Options::default();
        (opts.width, opts.height) = size;
        let data = this.data.clone();
        let image = py
            .detach(move || {
                let base = data.path.as_deref().and_then(Path::parent).map(|p| {
                    if p.as_os_str().is_empty() {
                        Path::new(".")
                    } else {
                        p
                    }
                });
                keyscene::render::render_still(&data.scene, base, &pose, &camera, &opts)
            })
            .map_err(|e| raise(py, e))?;
        let (w, h) = (image.0.width as usize, image.0.height as usize);
        Ok(image.0.to_rgba().into_pyarray(py).reshape(vec![h, w, 4])?.into_any())
    }

    fn __repr__(&self) -> String {
        let s = self.scene();
        format!(
            "<keyscene.Scene {} {}: {} nodes, {} meshes, {} animations>",
            s.meta.format,
            self.data.path.as_ref().map_or("<bytes>".into(), |p| p.display().to_string()),
            s.nodes.len(),
            s.meshes.len(),
            s.animations.len()
        )
    }
}

fn axis_name(a: keyscene::scene::Axis) -> &'static str {
    use keyscene::scene::Axis::*;
    match a {
        PosX => "x",
        NegX => "-x",
        PosY => "y",
        NegY => "-y",
        PosZ => "z",
        NegZ => "-z",
    }
}

fn check_node(scene: &keyscene::scene::Scene, node: usize) -> PyResult<()> {
    if node < scene.nodes.len() {
        Ok(())
    } else {
        Err(PyIndexError::new_err(format!(
            "node {node}: the scene has {} nodes",
            scene.nodes.len()
        )))
    }
}

// ---------------------------------------------------------------------------------------------
// Node

/// User properties as a dict name → value: `bool`, `int` (an enum's index), `float` (a time
/// in seconds), a tuple of 3 or 4 floats (vector, colour, colour with alpha) or `str`. A copy.
fn user_properties_dict<'py>(
    py: Python<'py>,
    props: &[keyscene::scene::UserProperty],
) -> PyResult<Bound<'py, PyDict>> {
    use keyscene::scene::UserValue;
    let d = PyDict::new(py);
    for p in props {
        match &p.value {
            UserValue::Bool(b) => d.set_item(&p.name, *b)?,
            UserValue::Int(i) | UserValue::Enum { index: i, .. } => d.set_item(&p.name, *i)?,
            UserValue::Number(x) | UserValue::Time(x) => d.set_item(&p.name, *x)?,
            UserValue::Vector(v) | UserValue::Color(v) => d.set_item(&p.name, (v.x, v.y, v.z))?,
            UserValue::ColorAlpha(v) => d.set_item(&p.name, (v.x, v.y, v.z, v.w))?,
            UserValue::String(s) => d.set_item(&p.name, s)?,
        }
    }
    Ok(d)
}

/// One node of the scene graph.
#[pyclass(frozen, module = "keyscene")]
struct Node {
    /// The scene's data (immutable, shared with the `Scene` object).
    data: Arc<Loaded>,
    index: usize,
}

impl Node {
    fn node(&self) -> &keyscene::scene::Node {
        &self.data.scene.nodes[self.index]
    }
}

#[pymethods]
impl Node {
    /// This node's index in `Scene.nodes` (what `parent`, `children` and pose arrays use).
    #[getter]
    fn index(&self) -> usize {
        self.index
    }
    /// The node's name (3DS: the object name, `$$$DUMMY` for dummies; FBX: the Model name).
    #[getter]
    fn name(&self) -> String {
        self.node().name.clone()
    }
    /// The id the file gives the node (FBX object id, 3DS keyframer node id), else None.
    #[getter]
    fn source_id(&self) -> Option<i64> {
        self.node().source.id
    }
    /// The instance name (3DS `INSTANCE_NAME`), else "".
    #[getter]
    fn instance(&self) -> String {
        self.node().instance.clone()
    }
    /// "mesh", "null", "bone", "camera", "camera_target", "light", "light_target" or "ambient".
    #[getter]
    fn kind(&self) -> &'static str {
        self.node().kind.name()
    }
    /// The parent's index, or None for a root.
    #[getter]
    fn parent(&self) -> Option<usize> {
        self.node().parent
    }
    /// The children's indices, in order.
    #[getter]
    fn children(&self) -> Vec<usize> {
        self.node().children.clone()
    }
    /// The index in `Scene.meshes` of the mesh this node shows, or None.
    #[getter]
    fn mesh(&self) -> Option<usize> {
        self.node().mesh
    }
    /// The camera (index in `Scene.cameras`) a camera node shows, else None.
    #[getter]
    fn camera(&self) -> Option<usize> {
        match self.node().kind {
            NodeKind::Camera(c) => Some(c),
            _ => None,
        }
    }
    /// The light (index in `Scene.lights`) a light node shows, else None.
    #[getter]
    fn light(&self) -> Option<usize> {
        match self.node().kind {
            NodeKind::Light(l) => Some(l),
            _ => None,
        }
    }
    /// Whether the node is hidden at rest.
    #[getter]
    fn hidden(&self) -> bool {
        self.node().hidden
    }
    /// The node's user-defined properties (FBX `U` properties, glTF `extras`) at rest, as a
    /// dict name → value, in file order (see [`user_properties_dict`]).
    #[getter]
    fn user_properties<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        user_properties_dict(py, self.node().user_properties())
    }
    /// user_properties_at(frame, animation=0) -> dict
    ///
    /// The node's user properties at `frame` (a frame of the animation's clock, fractional
    /// allowed) of animation `animation` (index; None or past the end: the stored values):
    /// each animated component from its curve (integers, enum indices and booleans truncated
    /// toward zero, as ufbx), the others as stored. A dict as `user_properties`, a copy.
    #[pyo3(signature = (frame, animation=Some(0)))]
    fn user_properties_at<'py>(
        &self,
        py: Python<'py>,
        frame: f64,
        animation: Option<usize>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let time = keyscene::anim::Time::Frame(frame);
        user_properties_dict(py, &self.data.scene.user_properties_at(animation, self.index, time))
    }
    /// Rest local translation (x, y, z), scene units.
    #[getter]
    fn translation(&self) -> (f64, f64, f64) {
        self.node().transform.translation.into()
    }
    /// Rest local rotation as a unit quaternion (x, y, z, w).
    #[getter]
    fn rotation(&self) -> (f64, f64, f64, f64) {
        let q = self.node().transform.rotation;
        (q.x, q.y, q.z, q.w)
    }
    /// Rest local scale (x, y, z).
    #[getter]
    fn scale(&self) -> (f64, f64, f64) {
        self.node().transform.scale.into()
    }
    fn __repr__(&self) -> String {
        let n = self.node();
        format!("<keyscene.Node {} {:?} ({})>", self.index, n.name, n.kind.name())
    }
}

// ---------------------------------------------------------------------------------------------
// Mesh

/// One mesh: polygons over shared vertices, with per-corner attributes. Corner `c` of polygon
/// `p` is `corner_vertices[polygon_starts[p] + c]`.
#[pyclass(frozen, module = "keyscene")]
struct Mesh {
    /// The scene object (base of the views this object hands out).
    scene: Py<Scene>,
    /// The same scene's data, borrowed without going through Python.
    data: Arc<Loaded>,
    index: usize,
}

impl Mesh {
    fn mesh(&self) -> &keyscene::scene::Mesh {
        &self.data.scene.meshes[self.index]
    }

    fn owner<'py>(&self, py: Python<'py>) -> Bound<'py, PyAny> {
        self.scene.bind(py).clone().into_any()
    }

    /// A per-corner copy of an attribute (expanded from its mapping), `width` floats each.
    fn corners<T: Copy>(
        &self,
        py: Python<'_>,
        attr: &keyscene::scene::Attribute<T>,
        width: usize,
        to: impl Fn(T) -> Vec<f32>,
    ) -> PyResult<Py<PyAny>> {
        let m = self.mesh();
        let mut out = Vec::with_capacity(m.corner_vertices.len() * width);
        for p in 0..m.polygon_count() {
            for c in m.polygon_corners(p) {
                let v = attr.get(m.corner_vertices[c], c, p);
                out.extend(v.map(&to).unwrap_or_else(|| vec![0.0; width]));
            }
        }
        let n = out.len() / width;
        Ok(out.into_pyarray(py).reshape(vec![n, width])?.into_any().unbind())
    }
}

#[pymethods]
impl Mesh {
    /// This mesh's index in `Scene.meshes`.
    #[getter]
    fn index(&self) -> usize {
        self.index
    }
    /// The mesh's name.
    #[getter]
    fn name(&self) -> String {
        self.mesh().name.clone()
    }
    /// Vertex positions in the mesh's own frame: (n, 3) float64, a read-only view.
    #[getter]
    fn positions<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        // SAFETY: the positions live in the immutable scene the owner keeps alive.
        unsafe { view_vec3(&self.mesh().positions, self.owner(py)) }
    }
    /// Where each polygon's corners start in `corner_vertices`, plus the end: (p + 1,) uint32,
    /// a read-only view.
    #[getter]
    fn polygon_starts<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        unsafe { view_slice(&self.mesh().polygon_starts, self.owner(py)) }
    }
    /// The vertex of every polygon corner: (c,) uint32, a read-only view.
    #[getter]
    fn corner_vertices<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        unsafe { view_slice(&self.mesh().corner_vertices, self.owner(py)) }
    }
    /// Stored normals per corner, (c, 3) float32 (a copy, expanded from the stored mapping),
    /// or None when the mesh stores none.
    #[getter]
    fn normals(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        match &self.mesh().normals {
            Some(n) => Ok(Some(self.corners(py, n, 3, |v| v.to_array().to_vec())?)),
            None => Ok(None),
        }
    }
    /// UV sets by name → (c, 2) float32 per corner (copies; v up, as stored).
    #[getter]
    fn uv_sets<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for set in &self.mesh().uv_sets {
            d.set_item(&set.name, self.corners(py, &set.uvs, 2, |v| v.to_array().to_vec())?)?;
        }
        Ok(d)
    }
    /// Vertex colours per corner, (c, 4) float32 RGBA (a copy), or None.
    #[getter]
    fn colors(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        match &self.mesh().colors {
            Some(c) => Ok(Some(self.corners(py, c, 4, |v| v.to_array().to_vec())?)),
            None => Ok(None),
        }
    }
    /// Each polygon's material slot: (p,) uint32 (a copy); slot `s` is
    /// `material_slots[s]`.
    #[getter]
    fn polygon_materials<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u32>> {
        let m = self.mesh();
        (0..m.polygon_count()).map(|p| m.polygon_material(p)).collect::<Vec<u32>>().into_pyarray(py)
    }
    /// The material (index in `Scene.materials`, or None) of each slot.
    #[getter]
    fn material_slots(&self) -> Vec<Option<usize>> {
        self.mesh().material_slots.clone()
    }
    /// The skin (index in `Scene.skins`) deforming this mesh, or None.
    #[getter]
    fn skin(&self) -> Option<usize> {
        self.mesh().skin
    }
    /// The skin's influences per vertex as two (n, k) arrays, k the most any vertex has:
    /// `(joints uint32 — indices into the skin's joints, weights float32)`, rows padded with
    /// joint 0 and weight 0. None for a mesh without skin. Copies.
    fn skin_weights<'py>(&self, py: Python<'py>) -> PyResult<Option<(Py<PyAny>, Py<PyAny>)>> {
        let m = self.mesh();
        let scene = &self.data.scene;
        let Some(skin) = m.skin.and_then(|s| scene.skins.get(s)) else { return Ok(None) };
        let k = skin.influences.iter().map(Vec::len).max().unwrap_or(0);
        let n = skin.influences.len();
        let (mut j, mut w) = (vec![0u32; n * k], vec![0f32; n * k]);
        for (v, infl) in skin.influences.iter().enumerate() {
            for (i, &(joint, weight)) in infl.iter().enumerate() {
                j[v * k + i] = joint;
                w[v * k + i] = weight;
            }
        }
        Ok(Some((
            j.into_pyarray(py).reshape(vec![n, k])?.into_any().unbind(),
            w.into_pyarray(py).reshape(vec![n, k])?.into_any().unbind(),
        )))
    }
    /// Blend shapes (morph targets), as dicts: `name`, `position_deltas` ((n, 3) float64, a
    /// read-only view, added to `positions` at weight 1), `default_weight` (0–1),
    /// `inbetweens` (list of (weight, (n, 3) view)).
    #[getter]
    fn blend_shapes<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        self.mesh()
            .morph_targets
            .iter()
            .map(|t| {
                let d = PyDict::new(py);
                d.set_item("name", &t.name)?;
                d.set_item("position_deltas", unsafe {
                    view_vec3(&t.position_deltas, self.owner(py))?
                })?;
                d.set_item("default_weight", t.default_weight)?;
                let ib = PyList::empty(py);
                for (w, deltas) in &t.inbetweens {
                    ib.append((*w, unsafe { view_vec3(deltas, self.owner(py))? }))?;
                }
                d.set_item("inbetweens", ib)?;
                Ok(d)
            })
            .collect()
    }
    /// triangles() -> numpy.ndarray
    ///
    /// Every polygon split into triangles by the library's triangulation (each polygon in its
    /// own best-fit plane, winding kept; what the writers and renderer use): (t, 3) uint32
    /// **corner** indices (index `corner_vertices`, normals and UVs with them). A new array.
    fn triangles<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let tris = self.mesh().triangle_corners();
        let t = tris.len();
        let flat: Vec<u32> = tris.into_iter().flatten().collect();
        Ok(flat.into_pyarray(py).reshape(vec![t, 3])?.into_any())
    }
    fn __repr__(&self) -> String {
        let m = self.mesh();
        format!(
            "<keyscene.Mesh {} {:?}: {} vertices, {} polygons>",
            self.index,
            m.name,
            m.positions.len(),
            m.polygon_count()
        )
    }
}

// ---------------------------------------------------------------------------------------------
// Animation

/// One animation (FBX AnimationStack, the 3DS keyframer segment, a glTF animation).
#[pyclass(frozen, module = "keyscene")]
struct Animation {
    /// The scene's data (immutable, shared with the `Scene` object).
    data: Arc<Loaded>,
    index: usize,
}

impl Animation {
    fn anim(&self) -> &keyscene::scene::animation::Animation {
        &self.data.scene.animations[self.index]
    }
}

/// Key times (seconds) and values (one row of `width` numbers per key) of a track.
fn keys_of<T>(t: &Track<T>, fps: f64, to: impl Fn(&T) -> Vec<f64>) -> (Vec<f64>, Vec<f64>, usize) {
    let times = t.keys.iter().map(|k| k.frame / fps).collect();
    let mut width = 0;
    let mut values = Vec::new();
    for k in &t.keys {
        let row = to(&k.value);
        width = row.len();
        values.extend(row);
    }
    (times, values, width)
}

#[pymethods]
impl Animation {
    /// The animation's name (FBX: the AnimationStack's; 3DS: "").
    #[getter]
    fn name(&self) -> String {
        self.anim().name.clone()
    }
    /// Its frame rate, frames per second (3DS: 30).
    #[getter]
    fn fps(&self) -> f64 {
        self.anim().fps
    }
    /// (first, last) frame of its range, in frames of its clock.
    #[getter]
    fn frame_range(&self) -> (f64, f64) {
        self.anim().frame_range
    }
    /// Its tracks as stored, one dict per animated value: `node` (index), `property`
    /// ("translation", "rotation", "scale", "hidden", "morph", "fov", "roll", "color",
    /// "hotspot", "falloff", a per-axis "translation.x" …, an Euler "rotation.x" … in
    /// radians, or the source's property name), `times` ((k,) float64 seconds), `values`
    /// ((k,) or (k, width) float64: vectors x, y, z; quaternions x, y, z, w; 3DS relative
    /// rotations angle (radians), axis x, y, z as "rotation_axis_angle"). Layered FBX values
    /// (several animation layers) are listed with `property` "layered …" and no keys: evaluate
    /// them with `pose` or `sample`. Copies.
    #[getter]
    fn tracks<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let a = self.anim();
        let fps = if a.fps > 0.0 { a.fps } else { 30.0 };
        let mut out = Vec::new();
        let mut push = |node: usize,
                        property: String,
                        (times, values, width): (Vec<f64>, Vec<f64>, usize)|
         -> PyResult<()> {
            let d = PyDict::new(py);
            d.set_item("node", node)?;
            d.set_item("property", property)?;
            let k = times.len();
            d.set_item("times", times.into_pyarray(py))?;
            let values = values.into_pyarray(py);
            if width == 1 {
                d.set_item("values", values)?;
            } else {
                d.set_item("values", values.reshape(vec![k, width])?)?;
            }
            out.push(d);
            Ok(())
        };
        let v3 = |v: &DVec3| v.to_array().to_vec();
        let f = |v: &f64| vec![*v];
        for ch in &a.channels {
            let n = ch.node;
            match &ch.target {
                ChannelTarget::Translation(t) => {
                    push(n, "translation".into(), keys_of(t, fps, v3))?
                }
                ChannelTarget::Scale(t) => push(n, "scale".into(), keys_of(t, fps, v3))?,
                ChannelTarget::Color(t) => push(n, "color".into(), keys_of(t, fps, v3))?,
                ChannelTarget::Rotation(r) => match r {
                    RotationTrack::Quat(t) => {
                        push(n, "rotation".into(), keys_of(t, fps, |q| vec![q.x, q.y, q.z, q.w]))?
                    }
                    RotationTrack::Relative(t) => push(
                        n,
                        "rotation_axis_angle".into(),
                        keys_of(t, fps, |r| vec![r.angle, r.axis.x, r.axis.y, r.axis.z]),
                    )?,
                    RotationTrack::Euler { xyz, .. } => {
                        for (axis, t) in ["x", "y", "z"].iter().zip(xyz) {
                            if let Some(t) = t {
                                push(n, format!("rotation.{axis}"), keys_of(t, fps, f))?;
                            }
                        }
                    }
                },
                ChannelTarget::TranslationXyz(xyz) | ChannelTarget::ScaleXyz(xyz) => {
                    let base = ch.target.name();
                    for (axis, t) in ["x", "y", "z"].iter().zip(xyz) {
                        if let Some(t) = t {
                            push(n, format!("{base}.{axis}"), keys_of(t, fps, f))?;
                        }
                    }
                }
                ChannelTarget::Hidden(t) => {
                    push(n, "hidden".into(), keys_of(t, fps, |b| vec![f64::from(u8::from(*b))]))?
                }
                ChannelTarget::Morph(t) => {
                    push(n, "morph".into(), keys_of(t, fps, |m| vec![*m as f64]))?
                }
                ChannelTarget::Fov(t)
                | ChannelTarget::Roll(t)
                | ChannelTarget::Hotspot(t)
                | ChannelTarget::Falloff(t) => {
                    push(n, ch.target.name().into(), keys_of(t, fps, f))?
                }
                ChannelTarget::Property { name, track } => {
                    push(n, name.clone(), keys_of(track, fps, f))?
                }
                other => push(n, other.name().into(), (Vec::new(), Vec::new(), 1))?,
            }
        }
        Ok(out)
    }
    fn __repr__(&self) -> String {
        let a = self.anim();
        format!(
            "<keyscene.Animation {} {:?}: frames {}..{} at {} fps, {} channels>",
            self.index,
            a.name,
            a.frame_range.0,
            a.frame_range.1,
            a.fps,
            a.channels.len()
        )
    }
}

// ---------------------------------------------------------------------------------------------
// Pose

/// The scene evaluated at one instant (`Scene.pose`).
#[pyclass(frozen, module = "keyscene")]
struct Pose {
    scene: Py<Scene>,
    pose: Arc<keyscene::anim::Pose>,
}

#[pymethods]
impl Pose {
    /// The frame evaluated, in frames of the animation's clock.
    #[getter]
    fn frame(&self) -> f64 {
        self.pose.frame
    }
    /// The same instant in seconds.
    #[getter]
    fn time(&self) -> f64 {
        self.pose.seconds
    }
    /// World matrices of every node: (nodes, 4, 4) float64, `[node, row, column]`, column
    /// vectors (translation in `[node, :3, 3]`), scene units; equal to `keyscene sample
    /// --json`'s `world_matrix` (which lists each matrix column-major). A read-only view
    /// (not C-contiguous; `numpy.ascontiguousarray` copies it).
    #[getter]
    fn world<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        let m: &[DMat4] = &slf.get().pose.world;
        // SAFETY: the matrices live in the Arc'd pose this Pose object keeps alive.
        unsafe { view_mat4(m, slf.clone().into_any()) }
    }
    /// Local matrices of every node (relative to its parent): as `world`, a read-only view.
    #[getter]
    fn local<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        let m: &[DMat4] = &slf.get().pose.local;
        unsafe { view_mat4(m, slf.clone().into_any()) }
    }
    /// Whether each node is hidden at this instant: list of bool.
    #[getter]
    fn hidden(&self) -> Vec<bool> {
        self.pose.hidden.clone()
    }
    /// Field of view of every camera (`Scene.cameras` order) at this instant, degrees along
    /// the camera's field-of-view axis (3DS FOV tracks): list of float.
    #[getter]
    fn camera_fov(&self) -> Vec<f64> {
        self.pose.camera_fov.clone()
    }
    /// Colour of every light (`Scene.lights` order) at this instant, linear RGB 0–1 (3DS
    /// colour tracks, FBX `Color` curves): list of (r, g, b).
    #[getter]
    fn light_color(&self) -> Vec<(f64, f64, f64)> {
        self.pose.light_color.iter().map(|c| (c.x, c.y, c.z)).collect()
    }
    /// Intensity multiplier of every light at this instant (1 nominal; an FBX `Intensity`
    /// curve ÷ 100): list of float.
    #[getter]
    fn light_intensity(&self) -> Vec<f64> {
        self.pose.light_intensity.clone()
    }
    /// Hotspot (inner cone) full angle of every light at this instant, degrees: list of float.
    #[getter]
    fn light_hotspot(&self) -> Vec<f64> {
        self.pose.light_hotspot.clone()
    }
    /// Falloff (outer cone) full angle of every light at this instant, degrees: list of float.
    #[getter]
    fn light_falloff(&self) -> Vec<f64> {
        self.pose.light_falloff.clone()
    }
    /// world_positions(node) -> numpy.ndarray
    ///
    /// The world-space vertices of the mesh `node` shows at this instant, skinned (linear
    /// blend, as ufbx) and blend-shaped: (n, 3) float64, exactly what `keyscene sample`
    /// prints (its `world_sample_vertices` are rows 0, n//2, n−1). (0, 3) for a node without
    /// mesh. A new array.
    fn world_positions<'py>(&self, py: Python<'py>, node: usize) -> PyResult<Bound<'py, PyAny>> {
        let data = self.scene.bind(py).get().data.clone();
        check_node(&data.scene, node)?;
        let pose = self.pose.clone();
        let p = py.detach(move || pose.world_positions(&data.scene, node));
        new_vec3(py, &p)
    }
    /// world_normals(node) -> numpy.ndarray or None
    ///
    /// The world-space unit normal of every polygon corner of `node`'s mesh, deformed like
    /// the positions (inverse transpose of each vertex's blended skin matrix, renormalised):
    /// (c, 3) float64, or None when the mesh stores no normals. A new array.
    fn world_normals<'py>(
        &self,
        py: Python<'py>,
        node: usize,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let data = self.scene.bind(py).get().data.clone();
        check_node(&data.scene, node)?;
        let pose = self.pose.clone();
        match py.detach(move || pose.world_corner_normals(&data.scene, node)) {
            Some(n) => Ok(Some(new_vec3(py, &n)?)),
            None => Ok(None),
        }
    }
    fn __repr__(&self) -> String {
        format!("<keyscene.Pose frame {} ({} s)>", self.pose.frame, self.pose.seconds)
    }
}

// ---------------------------------------------------------------------------------------------
// Conversion

/// What a conversion did (`keyscene.convert`, `Scene.save`): the fields of `keyscene convert
/// --json`.
#[pyclass(frozen, module = "keyscene")]
struct Report {
    /// The output written.
    #[pyo3(get)]
    output: PathBuf,
    /// The output format: "glb", "gltf", "3da", "obj", "fbx" or "3ds".
    #[pyo3(get)]
    format: String,
    /// "converted" or "warnings" (converted, with warnings).
    #[pyo3(get)]
    outcome: String,
    /// Every warning, one sentence each, as the CLI prints them: the reader's, then the
    /// writer's (what was resampled, baked or not written).
    #[pyo3(get)]
    warnings: Vec<String>,
    /// The 3DA, FBX or 3DS writer's full report (`--report`: converted, kept, resampled and
    /// why, not written), else None.
    #[pyo3(get)]
    report: Option<String>,
    /// Every file written (the files beside the output, then the output itself).
    #[pyo3(get)]
    files: Vec<PathBuf>,
}

impl Report {
    fn of(r: &keyscene::convert::FileReport, output: &Path) -> Report {
        let warnings = r.warnings();
        let report = if let Some(x) = &r.report.three_da {
            Some(x.to_string())
        } else if let Some(x) = &r.report.fbx {
            Some(x.to_string())
        } else {
            r.report.three_ds.as_ref().map(ToString::to_string)
        };
        Report {
            output: output.to_path_buf(),
            format: r.report.format.extension()[1..].to_string(),
            outcome: if warnings.is_empty() { "converted" } else { "warnings" }.into(),
            warnings,
            report,
            files: r.report.files.clone(),
        }
    }
}

#[pymethods]
impl Report {
    fn __repr__(&self) -> String {
        format!(
            "<keyscene.Report {} ({}): {}, {} warnings>",
            self.output.display(),
            self.format,
            self.outcome,
            self.warnings.len()
        )
    }
}

/// `keyscene convert` options from keyword arguments ([`Settings::set`]); an unknown keyword
/// is a TypeError listing the valid ones.
fn settings(py: Python<'_>, kw: Option<&Bound<'_, PyDict>>) -> PyResult<Settings> {
    let mut s = Settings::default();
    let Some(kw) = kw else { return Ok(s) };
    for (k, v) in kw.iter() {
        let name: String = k.extract()?;
        if !Settings::NAMES.contains(&name.as_str()) {
            return Err(PyTypeError::new_err(format!(
                "unexpected keyword argument {name:?}; the conversion options are: {}",
                Settings::NAMES.join(", ")
            )));
        }
        if v.is_none() {
            continue;
        }
        let value = if let Ok(b) = v.cast::<pyo3::types::PyBool>() {
            Value::Bool(b.is_true())
        } else if let Ok(i) = v.extract::<i64>() {
            Value::Int(i)
        } else if let Ok(f) = v.extract::<f64>() {
            Value::Float(f)
        } else if let Ok(s) = v.extract::<String>() {
            Value::Str(s)
        } else {
            return Err(PyTypeError::new_err(format!(
                "{name}: expected a bool, number or str, not {}",
                v.get_type().name()?
            )));
        };
        s.set(&name, value).map_err(|e| raise(py, e))?;
    }
    Ok(s)
}

/// convert(src, dst, **options) -> Report
///
/// Converts the file `src` to `dst` exactly as `keyscene convert SRC DST` with the same
/// options (same output bytes): the writer from `dst`'s extension (.glb, .gltf, .3da, .obj,
/// .fbx, .3ds, .usda, .usdz). Options, by the command line's names with `_` for `-`: `frame`, `time`,
/// `animation` (index or name), `stack`, `up`, `units`, `space`, `no_extrapolation`,
/// `bind_pose`, `transform_skin`, `embed`, `no_animation`, `resample_fps`, `cubic_spline`,
/// `compress`, `max_influences`, `tolerance`, `visible_only`, `source_vertex_ids`, `fps`, `axes`, `fbx_version`, `fbx_ascii`, `fbx_keep_pivots`, `triangulate`,
/// `no_copy_textures`, `force` (docs/cli.md). An option that does not apply to the output
/// format is refused, as by the CLI.
///
/// Raises NotFoundError (FileNotFoundError), BadInputError, LimitError,
/// OutputExistsError (FileExistsError) when `dst` exists without `force=True`, OptionError
/// (ValueError), UnsupportedError, WriteError, IoError; TypeError for an unknown keyword.
#[pyfunction]
#[pyo3(signature = (src, dst, **options))]
fn convert(
    py: Python<'_>,
    src: PathBuf,
    dst: PathBuf,
    options: Option<&Bound<'_, PyDict>>,
) -> PyResult<Report> {
    let settings = settings(py, options)?;
    let (s, d) = (src.clone(), dst.clone());
    let report = py
        .detach(move || {
            keyscene::output::new_run();
            keyscene::convert::convert_file(&s, &d, &settings)
        })
        .map_err(|e| raise(py, e))?;
    Ok(Report::of(&report, &dst))
}

/// convert_all(src_dir, out_dir, to, *, shard=None, force=False, manifest=None, no_copy_textures=False, compress=False) -> list
///
/// Converts every 3DS, PRJ, FBX, 3DA, glTF and GLB file under `src_dir` into the same
/// subfolders of `out_dir` as `keyscene convert SRC_DIR OUT_DIR --to TO` does (in parallel,
/// going on past failures, skipping outputs that are up to date unless `force`, the same
/// manifest lines): `to` is "glb", "gltf", "3da", "obj", "fbx" or "3ds"; `shard` "I/N" or
/// (I, N); `manifest` a JSON Lines file; `compress` (glb/gltf only) as `--compress`. Returns
/// one dict per source, sorted by path: `input`, `output` (relative paths, output None when it failed), `status` ("converted",
/// "warnings", "skipped", "failed"), `warnings`, `error`.
///
/// Raises IoError / NotFoundError for the folders and the manifest, OptionError for `to`
/// or `shard`. Files that fail are results, not exceptions.
#[pyfunction]
#[pyo3(signature = (src_dir, out_dir, to, *, shard=None, force=false, manifest=None, no_copy_textures=false, compress=false))]
#[allow(clippy::too_many_arguments)] // Python's keyword arguments, one per batch option.
fn convert_all<'py>(
    py: Python<'py>,
    src_dir: PathBuf,
    out_dir: PathBuf,
    to: String,
    shard: Option<Bound<'py, PyAny>>,
    force: bool,
    manifest: Option<PathBuf>,
    no_copy_textures: bool,
    compress: bool,
) -> PyResult<Vec<Bound<'py, PyDict>>> {
    let format = keyscene::convert::OutputFormat::ALL
        .into_iter()
        .find(|f| f.extension()[1..].eq_ignore_ascii_case(&to))
        .ok_or_else(|| {
            let all: Vec<&str> =
                keyscene::convert::OutputFormat::ALL.iter().map(|f| &f.extension()[1..]).collect();
            option_error(py, format!("to={to:?}: expected one of {}", all.join(", ")))
        })?;
    let mut opts = keyscene::batch::Options::default();
    opts.shard = match shard {
        None => None,
        Some(s) => {
            let text = match s.extract::<(u64, u64)>() {
                Ok((i, n)) => format!("{i}/{n}"),
                Err(_) => s.extract::<String>()?,
            };
            Some(
                keyscene::batch::Shard::parse(&text)
                    .map_err(|e| option_error(py, format!("shard: {e}")))?,
            )
        }
    };
    opts.force = force;
    opts.manifest = manifest;
    opts.copy_textures = !no_copy_textures;
    if compress
        && !matches!(
            format,
            keyscene::convert::OutputFormat::Glb | keyscene::convert::OutputFormat::Gltf
        )
    {
        return Err(option_error(py, format!("compress applies to glb or gltf, not {to}")));
    }
    opts.compress = compress;
    let module: Option<PathBuf> = py
        .import("keyscene._keyscene")
        .and_then(|m| m.getattr("__file__"))
        .and_then(|f| f.extract())
        .ok();
    opts.build = keyscene::batch::build_id("module", module.as_deref());
    let summary = py
        .detach(move || {
            keyscene::output::new_run();
            keyscene::batch::convert_folder(&src_dir, &out_dir, format, &opts, &|_| {})
        })
        .map_err(|e| raise(py, e))?;
    if let Some(e) = summary.manifest_error {
        return Err(raise(py, e));
    }
    summary
        .results
        .iter()
        .map(|r| {
            let d = PyDict::new(py);
            d.set_item("input", &r.input)?;
            d.set_item("output", &r.output)?;
            d.set_item("status", r.status)?;
            d.set_item("warnings", &r.warnings)?;
            d.set_item("error", &r.error)?;
            Ok(d)
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------

/// The compiled part of the `keyscene` package (import `keyscene`, not this).
#[pymodule]
fn _keyscene(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("CONVERT_OPTIONS", Settings::NAMES.to_vec())?;
    m.add_function(wrap_pyfunction!(load, m)?)?;
    m.add_function(wrap_pyfunction!(load_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(convert, m)?)?;
    m.add_function(wrap_pyfunction!(convert_all, m)?)?;
    m.add_class::<Scene>()?;
    m.add_class::<Node>()?;
    m.add_class::<Mesh>()?;
    m.add_class::<Animation>()?;
    m.add_class::<Pose>()?;
    m.add_class::<Report>()?;
    Ok(())
}

"""Type stubs of the compiled module ``keyscene._keyscene`` (import ``keyscene``).

Units and conventions (the Rust library's, docs/python.md): lengths in the file's unit
(``Scene.metres_per_unit``); rotations as quaternions (x, y, z, w) or radians unless a name
says degrees; ``time`` in seconds, ``frame`` in frames of the animation's clock (fractional
allowed); matrices ``[row, column]`` with column vectors (translation in ``[:3, 3]``).
Arrays marked *view* are zero-copy, read-only and keep their Scene (or Pose) alive; the others
are new arrays.
"""

import os
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union, final

import numpy as np
import numpy.typing as npt

__version__: str
#: The keyword options of ``convert`` and ``Scene.save`` (``keyscene convert``'s options).
CONVERT_OPTIONS: List[str]

_PathLike = Union[str, "os.PathLike[str]"]
_Instants = Union[Sequence[float], npt.NDArray[np.floating[Any]]]
_AnimationArg = Optional[Union[int, str]]

def load(path: _PathLike, *, base_dir: Optional[_PathLike] = ..., limits: Optional[Dict[str, int]] = ...) -> Scene:
    """Read a 3DS/PRJ, FBX, 3DA or glTF/GLB file (format from its bytes, then extension).

    ``base_dir``: folder for texture and buffer files (default: the file's folder);
    ``limits``: ``{"max_bytes", "max_elements", "max_depth"}``. Raises NotFoundError
    (FileNotFoundError), BadInputError, LimitError, IoError; TypeError for another keyword.
    """

def load_bytes(data: Union[bytes, bytearray, memoryview], format: Optional[str] = None, name: Optional[str] = None) -> Scene:
    """Read a scene from bytes; ``format`` ("3ds", "fbx", "3da", "gltf", "glb") or ``name``
    help recognise it. Raises BadInputError, LimitError, OptionError."""

def convert(src: _PathLike, dst: _PathLike, **options: Union[bool, int, float, str, None]) -> Report:
    """Convert ``src`` to ``dst`` as ``keyscene convert SRC DST`` (same bytes); the format from
    ``dst``'s extension. Options: see ``CONVERT_OPTIONS`` and docs/cli.md. Raises
    OutputExistsError (FileExistsError) without ``force=True`` when ``dst`` exists,
    OptionError (ValueError), NotFoundError, BadInputError, LimitError, UnsupportedError,
    WriteError, IoError; TypeError for an unknown keyword."""

def convert_all(
    src_dir: _PathLike,
    out_dir: _PathLike,
    to: str,
    *,
    shard: Optional[Union[str, Tuple[int, int]]] = None,
    force: bool = False,
    manifest: Optional[_PathLike] = None,
    no_copy_textures: bool = False,
    compress: bool = False,
) -> List[Dict[str, Any]]:
    """Convert every scene file under ``src_dir`` to format ``to`` ("glb", "gltf", "3da",
    "obj", "fbx", "3ds") as ``keyscene convert SRC_DIR OUT_DIR --to TO``: one dict per source
    (``input``, ``output``, ``status``, ``warnings``, ``error``), sorted by path.
    ``compress=True`` (glb/gltf only): ``--compress``, quantized and meshopt-compressed."""

@final
class Scene:
    """A loaded scene (immutable)."""

    @property
    def format(self) -> str:
        """The file format, lower case: "3ds", "fbx", "3da" or "gltf"."""
    @property
    def version(self) -> Optional[int]:
        """The format version the file states (FBX 7400), else None."""
    @property
    def creator(self) -> Optional[str]:
        """The program that wrote the file, when it says."""
    @property
    def up_axis(self) -> str:
        """"x", "y", "z", "-x", "-y" or "-z"."""
    @property
    def metres_per_unit(self) -> float:
        """Metres per scene unit (1.0 when the file states none)."""
    @property
    def frame_rate(self) -> Optional[float]:
        """The file's own frame rate (FBX), else None."""
    @property
    def path(self) -> Optional[str]:
        """The file loaded, or None (load_bytes)."""
    @property
    def warnings(self) -> List[str]:
        """What the reader survived, one sentence each."""
    @property
    def nodes(self) -> List[Node]: ...
    @property
    def meshes(self) -> List[Mesh]: ...
    @property
    def materials(self) -> List[Dict[str, Any]]:
        """name, diffuse, ambient, specular, emissive (linear RGB), shininess, opacity,
        two_sided, maps (slot, file, resolved, embedded, strength), shading_model (str or
        None), pbr (value name -> {value, stored, map, channel}; empty unless the shading
        model is physically based), user_properties (name -> value, as Node.user_properties)."""
    @property
    def cameras(self) -> List[Dict[str, Any]]:
        """name, fov_degrees, fov_axis, roll_degrees, near, far, aspect, target, projection
        ("perspective" or "orthographic"), xmag, ymag (orthographic half width and height in
        scene units, else None)."""
    @property
    def lights(self) -> List[Dict[str, Any]]:
        """name, kind, color, intensity, hotspot_degrees, falloff_degrees, on, target."""
    @property
    def skins(self) -> List[Dict[str, Any]]:
        """joints (node indices), inverse_bind ((j, 4, 4) float64)."""
    @property
    def animations(self) -> List[Animation]: ...
    @property
    def bind_poses(self) -> List[str]:
        """Names of the stored FBX bind poses."""
    def pose(
        self,
        *,
        time: Optional[float] = None,
        frame: Optional[float] = None,
        animation: _AnimationArg = 0,
        bind_pose: Optional[str] = None,
        extrapolate: bool = True,
        skin_follows_node: bool = False,
        target_axes: Optional[str] = None,
        target_units: Optional[float] = None,
    ) -> Pose:
        """The scene at one instant (exactly one of ``time`` seconds or ``frame``), as
        ``keyscene sample``. ``animation``: index or name; None (or 0 without animation) is
        the rest pose."""
    def sample(self, *, times: Optional[_Instants] = None, frames: Optional[_Instants] = None, animation: _AnimationArg = 0) -> npt.NDArray[np.float64]:
        """World matrices (instants, nodes, 4, 4) float64 in one call (GIL released)."""
    def sample_positions(
        self, node: int, *, times: Optional[_Instants] = None, frames: Optional[_Instants] = None, animation: _AnimationArg = 0
    ) -> npt.NDArray[np.float64]:
        """World-space vertices of ``node``'s mesh, (instants, n, 3) float64."""
    def save(self, dst: _PathLike, **options: Union[bool, int, float, str, None]) -> Report:
        """Write this scene as ``convert`` would (format from ``dst``'s extension)."""
    def render(
        self,
        *,
        frame: Optional[float] = None,
        time: Optional[float] = None,
        size: Tuple[int, int] = (640, 480),
        camera: Optional[str] = None,
        animation: _AnimationArg = 0,
    ) -> npt.NDArray[np.uint8]:
        """An image (height, width, 4) uint8 RGBA as ``keyscene render`` draws it."""

@final
class Node:
    """One node of the scene graph."""

    @property
    def index(self) -> int: ...
    @property
    def name(self) -> str: ...
    @property
    def source_id(self) -> Optional[int]:
        """The file's id for the node (FBX object id, 3DS node id), else None."""
    @property
    def instance(self) -> str: ...
    @property
    def kind(self) -> str:
        """"mesh", "null", "bone", "camera", "camera_target", "light", "light_target", "ambient"."""
    @property
    def parent(self) -> Optional[int]: ...
    @property
    def children(self) -> List[int]: ...
    @property
    def mesh(self) -> Optional[int]: ...
    @property
    def camera(self) -> Optional[int]: ...
    @property
    def light(self) -> Optional[int]: ...
    @property
    def hidden(self) -> bool: ...
    @property
    def user_properties(self) -> Dict[str, Union[bool, int, float, str, Tuple[float, ...]]]:
        """User-defined properties (FBX `U` properties, glTF extras) at rest, name → value:
        bool, int (an enum's index), float (a time in seconds), a tuple of 3 or 4 floats
        (vector, colour) or str. A copy."""
    def user_properties_at(
        self, frame: float, animation: Optional[int] = 0
    ) -> Dict[str, Union[bool, int, float, str, Tuple[float, ...]]]:
        """The user properties at `frame` of animation `animation` (None: as stored), each
        animated component from its curve. A copy."""
    @property
    def translation(self) -> Tuple[float, float, float]:
        """Rest local translation, scene units."""
    @property
    def rotation(self) -> Tuple[float, float, float, float]:
        """Rest local rotation, quaternion (x, y, z, w)."""
    @property
    def scale(self) -> Tuple[float, float, float]: ...

@final
class Mesh:
    """Polygons over shared vertices with per-corner attributes."""

    @property
    def index(self) -> int: ...
    @property
    def name(self) -> str: ...
    @property
    def positions(self) -> npt.NDArray[np.float64]:
        """(n, 3) float64 view."""
    @property
    def polygon_starts(self) -> npt.NDArray[np.uint32]:
        """(p + 1,) uint32 view."""
    @property
    def corner_vertices(self) -> npt.NDArray[np.uint32]:
        """(c,) uint32 view."""
    @property
    def normals(self) -> Optional[npt.NDArray[np.float32]]:
        """(c, 3) float32 per corner (copy) or None."""
    @property
    def uv_sets(self) -> Dict[str, npt.NDArray[np.float32]]:
        """name → (c, 2) float32 (copies)."""
    @property
    def colors(self) -> Optional[npt.NDArray[np.float32]]:
        """(c, 4) float32 RGBA (copy) or None."""
    @property
    def polygon_materials(self) -> npt.NDArray[np.uint32]:
        """(p,) uint32 material slot per polygon (copy)."""
    @property
    def material_slots(self) -> List[Optional[int]]: ...
    @property
    def skin(self) -> Optional[int]: ...
    def skin_weights(self) -> Optional[Tuple[npt.NDArray[np.uint32], npt.NDArray[np.float32]]]:
        """(joints (n, k) uint32, weights (n, k) float32), or None without skin."""
    @property
    def blend_shapes(self) -> List[Dict[str, Any]]:
        """name, position_deltas ((n, 3) view), default_weight, inbetweens."""
    def triangles(self) -> npt.NDArray[np.uint32]:
        """(t, 3) uint32 corner indices of the library's triangulation."""

@final
class Animation:
    """One animation (FBX AnimationStack, the 3DS keyframer, a glTF animation)."""

    @property
    def name(self) -> str: ...
    @property
    def fps(self) -> float: ...
    @property
    def frame_range(self) -> Tuple[float, float]:
        """(first, last) in frames."""
    @property
    def tracks(self) -> List[Dict[str, Any]]:
        """node, property, times ((k,) seconds), values ((k,) or (k, width))."""

@final
class Pose:
    """The scene evaluated at one instant."""

    @property
    def frame(self) -> float: ...
    @property
    def time(self) -> float: ...
    @property
    def world(self) -> npt.NDArray[np.float64]:
        """(nodes, 4, 4) float64 view, [node, row, column]."""
    @property
    def local(self) -> npt.NDArray[np.float64]:
        """(nodes, 4, 4) float64 view, relative to the parent."""
    @property
    def hidden(self) -> List[bool]: ...
    @property
    def camera_fov(self) -> List[float]:
        """Field of view of every camera, degrees."""
    @property
    def light_color(self) -> List[Tuple[float, float, float]]:
        """Linear RGB colour of every light."""
    @property
    def light_intensity(self) -> List[float]:
        """Intensity multiplier of every light (1 nominal)."""
    @property
    def light_hotspot(self) -> List[float]:
        """Hotspot (inner cone) full angle of every light, degrees."""
    @property
    def light_falloff(self) -> List[float]:
        """Falloff (outer cone) full angle of every light, degrees."""
    def world_positions(self, node: int) -> npt.NDArray[np.float64]:
        """(n, 3) float64 skinned, blend-shaped world-space vertices."""
    def world_normals(self, node: int) -> Optional[npt.NDArray[np.float64]]:
        """(c, 3) float64 deformed world-space corner normals, or None."""

@final
class Report:
    """What a conversion did (the fields of ``keyscene convert --json``)."""

    output: str
    format: str
    outcome: str
    warnings: List[str]
    report: Optional[str]
    files: List[str]

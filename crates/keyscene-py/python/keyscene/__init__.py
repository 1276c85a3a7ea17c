"""keyscene: load, evaluate exactly and convert animated 3D scenes from Python.

Reads Autodesk 3DS/PRJ, FBX 6.1–7.7 (binary and ASCII), ChromeEngine 3DA and glTF 2.0; poses
them exactly as lib3ds and the FBX SDK (through ufbx) do; writes glTF/GLB, 3DA, FBX, 3DS and
OBJ. A thin layer over the Rust library ``keyscene``: the same results as the ``keyscene``
command line, as numpy arrays. See docs/python.md.

>>> import keyscene
>>> scene = keyscene.load("examples/FLY.3DS")
>>> pose = scene.pose(frame=200)
>>> pose.world.shape          # (nodes, 4, 4), translation in [:, :3, 3]
>>> keyscene.convert("examples/FLY.3DS", "fly.glb")
"""

from ._errors import (
    BadInputError,
    Error,
    NotFoundError,
    IoError,
    LimitError,
    OptionError,
    OutputExistsError,
    UnsupportedError,
    WriteError,
)
from ._keyscene import (
    CONVERT_OPTIONS,
    Animation,
    Mesh,
    Node,
    Pose,
    Report,
    Scene,
    __version__,
    convert,
    convert_all,
    load,
    load_bytes,
)

__all__ = [
    "__version__",
    "load",
    "load_bytes",
    "convert",
    "convert_all",
    "CONVERT_OPTIONS",
    "Scene",
    "Node",
    "Mesh",
    "Animation",
    "Pose",
    "Report",
    "Error",
    "BadInputError",
    "LimitError",
    "UnsupportedError",
    "OutputExistsError",
    "OptionError",
    "NotFoundError",
    "IoError",
    "WriteError",
]

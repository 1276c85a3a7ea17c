"""The exceptions keyscene raises: one class per kind of the Rust library's ``Error``
(``keyscene::ErrorKind``). Every one is a :class:`keyscene.Error`; those that match a Python
built-in are also that built-in (``except FileNotFoundError`` works)."""

from typing import Optional


class Error(Exception):
    """A keyscene error. ``str(e)`` is the command line's sentence (file, place, what was
    expected); ``message`` is the same text, ``path`` the file it is about (str or None),
    ``place`` where in the file (chunk path, FBX record path with line/column or byte offset,
    glTF document place; or None)."""

    def __init__(self, message: str, path: Optional[str] = None, place: Optional[str] = None):
        super().__init__(message)
        self.message = message
        self.path = path
        self.place = place

    def __str__(self) -> str:
        return self.message


class BadInputError(Error):
    """The bytes are not a readable scene: unknown format, malformed or truncated data."""


class LimitError(Error):
    """A count, size or depth in the file exceeds the reader's limits (``limits=``)."""


class UnsupportedError(Error):
    """The scene cannot be written in the requested format (or the format is not built in)."""


class OutputExistsError(Error, FileExistsError):
    """The output (or a file beside it that another source wrote) exists and was not
    replaced: pass ``force=True`` to replace an output of your own."""


class OptionError(Error, ValueError):
    """An option names something the scene does not have (an animation, a bind pose, a
    camera) or has a value out of range, or does not apply to the output format."""


class NotFoundError(Error, FileNotFoundError):
    """A file or folder does not exist: the input, or the folder an output goes into."""


class IoError(Error, OSError):
    """Reading or writing failed otherwise (permissions, a full disk, a folder for a file)."""


class WriteError(Error):
    """A writer failed on a scene it accepted (an encoder or stream error)."""

"""Shared fixtures of the Python package's tests.

The corpus tests read ``KEYSCENE_CORPUS`` (default ``../shared/corpus`` beside the
repository) and take their file lists from the corpus folders and ``fbx/references.tsv``;
without the corpus they are reported *skipped*, never passed. Tests that compare with the
command line use the ``keyscene`` binary named by ``KEYSCENE_BIN`` (default: the newest of
``target/release/keyscene`` and ``target/debug/keyscene``); without one they are skipped.
"""

import csv
import os
import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]
EXAMPLES = REPO / "examples"


def corpus_dir():
    """The corpus folder, or None when it is missing."""
    path = pathlib.Path(os.environ.get("KEYSCENE_CORPUS", REPO.parent / "shared" / "corpus"))
    return path if (path / "3ds").is_dir() else None


def oracles_dir():
    """The folder holding obj_compare.py (``KEYSCENE_ORACLES``, else ``<corpus>/../oracles``)."""
    env = os.environ.get("KEYSCENE_ORACLES")
    if env:
        return pathlib.Path(env)
    c = corpus_dir()
    return c.parent / "oracles" if c else None


def cli_binary():
    """The keyscene command-line binary, or None."""
    env = os.environ.get("KEYSCENE_BIN")
    if env:
        return pathlib.Path(env) if pathlib.Path(env).is_file() else None
    found = [REPO / "target" / p / "keyscene" for p in ("release", "debug")]
    found = [p for p in found if p.is_file()]
    return max(found, key=lambda p: p.stat().st_mtime) if found else None


def lib3ds_references():
    """Every lib3ds reference dump of the corpus (``3ds/reference/*.lib3ds.json``)."""
    c = corpus_dir()
    return sorted((c / "3ds" / "reference").glob("*.lib3ds.json")) if c else []


def reference_rows():
    """The rows of ``fbx/references.tsv`` as dicts (columns as MANIFEST.md names them)."""
    c = corpus_dir()
    if not c:
        return []
    with open(c / "fbx" / "references.tsv", newline="", encoding="utf-8") as f:
        rows = [r for r in csv.DictReader(f, delimiter="\t") if r.get("fbx")]
    return rows


def corpus_3ds_files():
    """Every 3DS/PRJ file of the corpus (from the folder)."""
    c = corpus_dir()
    if not c:
        return []
    return sorted(p for p in (c / "3ds").rglob("*") if p.suffix.lower() in (".3ds", ".prj") and p.is_file())


@pytest.fixture
def corpus():
    c = corpus_dir()
    if c is None:
        pytest.skip("corpus not found (set KEYSCENE_CORPUS)")
    return c


@pytest.fixture
def cli():
    b = cli_binary()
    if b is None:
        pytest.skip("keyscene binary not found (build it or set KEYSCENE_BIN)")
    return b


@pytest.fixture
def fly():
    return EXAMPLES / "FLY.3DS"

#!/usr/bin/env python3
"""Whether two keyscene builds write USD layers that OpenUSD reads as the same values.

For every .fbx, .3ds and .prj file of the corpus, each build converts it to .usda; both layers
are opened with OpenUSD's Sdf (usd-core) and every attribute spec — inside variants too — is
compared: type, default value, the time-sample times and the value at each, and every other
metadata field (an in-between's `weight`, interpolation, elementSize). Arrays are compared
bit for bit (NaN equal to NaN). A file that either build refuses is listed, not compared.

    python3 tools/usd_values_equal.py KEYSCENE_A KEYSCENE_B [CORPUS]
    python3 tools/usd_values_equal.py --layers A.usda B.usda

Prints one line per file (sizes of both layers, "same" or the first differences) and a summary;
exits 1 when any compared file differs. Used for issue 34's number formatting (stop 43): a
layer with single-precision digits against one with double-precision digits.
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
from pxr import Sdf


def equal(a, b):
    if a is None or b is None:
        return a is b
    try:
        aa, bb = np.asarray(a), np.asarray(b)
        if aa.dtype != object and bb.dtype != object:
            return aa.shape == bb.shape and aa.dtype == bb.dtype and np.array_equal(
                aa, bb, equal_nan=aa.dtype.kind in "fc")
    except (TypeError, ValueError):
        pass
    return a == b


def attributes(layer):
    out = {}

    def visit(path):
        spec = layer.GetObjectAtPath(path)
        if isinstance(spec, Sdf.AttributeSpec):
            out[str(path)] = spec

    layer.Traverse(Sdf.Path.absoluteRootPath, visit)
    return out


def differences(path_a, path_b):
    """(attributes, samples, [differences]) of two layers."""
    a, b = Sdf.Layer.FindOrOpen(path_a), Sdf.Layer.FindOrOpen(path_b)
    A, B = attributes(a), attributes(b)
    bad = []
    if set(A) != set(B):
        bad.append(f"attributes only in one: {sorted(set(A) ^ set(B))[:3]}")
    samples = 0
    for p in sorted(set(A) & set(B)):
        x, y = A[p], B[p]
        if str(x.typeName) != str(y.typeName):
            bad.append(f"{p}: type {x.typeName} / {y.typeName}")
        if not equal(x.default, y.default):
            bad.append(f"{p}: default")
        tx, ty = list(a.ListTimeSamplesForPath(p)), list(b.ListTimeSamplesForPath(p))
        if tx != ty:
            bad.append(f"{p}: sample times")
            continue
        for t in tx:
            samples += 1
            if not equal(a.QueryTimeSample(p, t), b.QueryTimeSample(p, t)):
                bad.append(f"{p} at {t}")
                break
        for k in set(x.ListInfoKeys()) | set(y.ListInfoKeys()):
            if k not in ("default", "timeSamples") and not equal(x.GetInfo(k), y.GetInfo(k)):
                bad.append(f"{p}: {k}")
    return len(A), samples, bad


def main(argv):
    if len(argv) == 3 and argv[0] == "--layers":
        n, s, bad = differences(argv[1], argv[2])
        print(f"{'same' if not bad else 'DIFFERENT'} ({n} attributes, {s} samples)")
        for d in bad[:10]:
            print("   ", d)
        return 1 if bad else 0
    if len(argv) not in (2, 3):
        print(__doc__)
        return 2
    here = os.path.dirname(os.path.abspath(__file__))
    corpus = argv[2] if len(argv) == 3 else os.environ.get(
        "KEYSCENE_CORPUS", os.path.join(here, "..", "..", "shared", "corpus"))
    files = sorted(
        os.path.join(d, f) for d, _, fs in os.walk(corpus) for f in fs
        if f.lower().endswith((".fbx", ".3ds", ".prj")))
    same = different = refused = 0
    with tempfile.TemporaryDirectory() as tmp:
        la, lb = os.path.join(tmp, "a.usda"), os.path.join(tmp, "b.usda")
        for f in files:
            codes = [subprocess.run([ks, "convert", f, out, "--force", "--quiet"],
                                    capture_output=True).returncode
                     for ks, out in ((argv[0], la), (argv[1], lb))]
            if codes != [0, 0]:
                refused += 1
                print(f"refused (exit {codes[0]}, {codes[1]}): {f}")
            else:
                n, s, bad = differences(la, lb)
                same += not bad
                different += bool(bad)
                sizes = f"{os.path.getsize(la)} → {os.path.getsize(lb)} bytes"
                print(f"{'same' if not bad else 'DIFFERENT'} ({n} attributes, {s} samples, {sizes}): {f}")
                for d in bad[:5]:
                    print("   ", d)
            for p in (la, lb):
                if os.path.exists(p):
                    os.remove(p)
    print(f"{same} same, {different} different, {refused} refused by a build, of {len(files)} files")
    return 1 if different else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

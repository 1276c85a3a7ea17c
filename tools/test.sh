#!/usr/bin/env bash
# Runs every test suite: the Rust workspace (`cargo test --workspace`, then `cargo doc` of the
# library and CLI with warnings as errors: no broken intra-doc link), then the Python
# package built and installed into a virtual environment (`pip install ./crates/keyscene-py`,
# as a user installs it) and its pytest suite. README.md names this script as the test
# command; .ci/run calls it.
#
#   bash tools/test.sh
#
# Environment: KEYSCENE_CORPUS (the corpus; default ../shared/corpus), KEYSCENE_VENV (the
# virtual environment to create or reuse; default target/test-venv), PYTHON (the interpreter
# that makes it; default python3), KEYSCENE_NODE_MODULES / KEYSCENE_CHROMIUM (the glTF
# client tests, see README). Extra arguments go to pytest.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

cargo test --workspace --no-fail-fast
# Every intra-doc link resolves (a renamed item leaves no dangling reference in the docs).
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps -p keyscene -p keyscene-cli

venv="${KEYSCENE_VENV:-$root/target/test-venv}"
python="${PYTHON:-python3}"
if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --upgrade pip
# The package as a user installs it (maturin builds the extension, release profile, into the
# workspace's target/), with its test extras (pytest, Dask distributed).
"$venv/bin/python" -m pip install --quiet "./crates/keyscene-py[test]"
# The CLI the equivalence tests compare with: the release binary (built on the same
# dependencies as the extension, so it costs only the CLI crate).
cargo build --release -p keyscene-cli
export KEYSCENE_BIN="$root/target/release/keyscene"
cd "$root/crates/keyscene-py"
"$venv/bin/python" -m pytest -p no:cacheprovider -ra tests "$@"

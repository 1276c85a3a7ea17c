#!/bin/sh
# Builds the fuzz targets as `cargo fuzz build --sanitizer none` does (release, coverage
# instrumentation, debug assertions), for machines without cargo-fuzz installed.
set -e
cd "$(dirname "$0")"
RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 -Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table -Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing -Cllvm-args=-simplifycfg-branch-fold-threshold=0 -Cdebug-assertions -Coverflow-checks" \
  cargo +nightly build --release --target x86_64-unknown-linux-gnu --bins "$@"

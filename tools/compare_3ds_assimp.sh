#!/usr/bin/env bash
# Two keyscene CLIs against each other and against assimp on every 3DS/PRJ file of the corpus
# (wrong.3ds excluded), whole processes (issue 37 goal 5; docs/benchmarks.md, stop 42): per
# file the CPU time (ms, `perf stat -e task-clock`, best of RUNS) of `BEFORE convert F o.glb
# --quiet`, `AFTER convert F o.glb --quiet` (the two in turn, their order swapped every round)
# and `assimp export F o.glb -fglb2` in the same rounds, and assimp's time over each. A tool
# that fails on a file prints "failed". The output is removed before each run.
#
#   tools/compare_3ds_assimp.sh BEFORE AFTER [RUNS]      (RUNS: default 9)
set -u
b0=$1
b1=$2
runs=${3:-9}
corpus=${KEYSCENE_CORPUS:-$(dirname "$0")/../../shared/corpus}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# CPU ms of one run of "$@", or "failed".
cpu() {
    rm -f "$tmp/o.glb"
    if ! perf stat -x, -e task-clock -o "$tmp/stat" "$@" >/dev/null 2>&1; then
        echo failed
        return
    fi
    awk -F, '/task-clock/ {printf "%.2f", $1}' "$tmp/stat"
}
least() { awk -v a="$1" -v b="$2" 'BEGIN{ if (a == "failed" || b == "failed") print "failed"; else print (a < b) ? a : b }'; }
ratio() { case "$1 $2" in *failed*) echo "-" ;; *) awk -v a="$1" -v b="$2" 'BEGIN{printf "%.2f", a / b}' ;; esac; }
printf '%-40s %9s %9s %9s %10s %10s\n' file before after assimp "÷ before" "÷ after"
find "$corpus/3ds" -path '*/reference' -prune -o -type f \( -iname '*.3ds' -o -iname '*.prj' \) ! -name wrong.3ds -print | sort |
    while read -r f; do
        x0=999999 x1=999999 xa=999999
        for i in $(seq "$runs"); do
            if [ $((i % 2)) = 1 ]; then
                x0=$(least "$(cpu "$b0" convert "$f" "$tmp/o.glb" --quiet)" "$x0")
                x1=$(least "$(cpu "$b1" convert "$f" "$tmp/o.glb" --quiet)" "$x1")
            else
                x1=$(least "$(cpu "$b1" convert "$f" "$tmp/o.glb" --quiet)" "$x1")
                x0=$(least "$(cpu "$b0" convert "$f" "$tmp/o.glb" --quiet)" "$x0")
            fi
            xa=$(least "$(cpu assimp export "$f" "$tmp/o.glb" -fglb2)" "$xa")
        done
        printf '%-40s %9s %9s %9s %10s %10s\n' "$(basename "$f")" "$x0" "$x1" "$xa" "$(ratio "$xa" "$x0")" "$(ratio "$xa" "$x1")"
    done

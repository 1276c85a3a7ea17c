#!/usr/bin/env bash
# Whole-process CPU time (perf stat task-clock, milliseconds, best of 3) of `keyscene check` (load), `convert → .glb`
# and `convert → .3da`, summed per class of benchmark file, for one or more keyscene binaries
# in one run (issue #16; docs/benchmarks.md, "Conversion against loading").
#
#   tools/time_conversions.sh BINARY... 
#
# Classes: the FBX benchmark files of MANIFEST.md (the stems of benches/common/fbx_files.rs),
# binary and ASCII, and every 3DS/PRJ file of the corpus but wrong.3ds ($KEYSCENE_CORPUS, else
# ../shared/corpus). Prints one line per class and binary, and per file with --files.
set -u
corpus=${KEYSCENE_CORPUS:-$(dirname "$0")/../../shared/corpus}
files=0
[ "${1:-}" = --files ] && { files=1; shift; }
stems=$(sed -n '/BENCHMARK_STEMS/,/^];/p' "$(dirname "$0")/../crates/keyscene/benches/common/fbx_files.rs" | grep -o '"[^"]*"' | tr -d '"')
tmp=$(mktemp -d)
best() { # best task-clock milliseconds of 3 runs of "$@"
    local b=999999 t
    for _ in 1 2 3; do
        # An existing output is refused without --force (issue #17 §2); older binaries lack it.
        rm -f "$tmp"/o.*
        perf stat -x, -e task-clock -o "$tmp/t" "$@" >/dev/null 2>&1
        t=$(awk -F, '/task-clock/ {printf "%.1f", $1}' "$tmp/t")
        b=$(awk -v a="$t" -v b="$b" 'BEGIN{print (a < b) ? a : b}')
    done
    echo "$b"
}
list() {
    for s in $stems; do ls "$corpus/fbx/$(dirname "$s")/$(basename "$s")"*.fbx 2>/dev/null; done | sort -u
    find "$corpus/3ds" -path '*/reference' -prune -o -type f \( -iname '*.3ds' -o -iname '*.prj' \) ! -name wrong.3ds -print | sort
}
for bin in "$@"; do
    declare -A load=() glb=() tda=() n=()
    while IFS= read -r f; do
        case "$f" in
            *.fbx) if head -c 18 "$f" | grep -q "Kaydara FBX Binary"; then c="binary FBX"; else c="ASCII FBX"; fi ;;
            *) c=3DS ;;
        esac
        l=$(best "$bin" check "$f")
        g=$(best "$bin" convert "$f" "$tmp/o.glb")
        d=$(best "$bin" convert "$f" "$tmp/o.3da")
        [ $files = 1 ] && echo "  $(basename "$bin") ${f#"$corpus/"} load $l glb $g 3da $d"
        load[$c]=$(awk -v a="${load[$c]:-0}" -v b="$l" 'BEGIN{print a + b}')
        glb[$c]=$(awk -v a="${glb[$c]:-0}" -v b="$g" 'BEGIN{print a + b}')
        tda[$c]=$(awk -v a="${tda[$c]:-0}" -v b="$d" 'BEGIN{print a + b}')
        n[$c]=$(( ${n[$c]:-0} + 1 ))
    done < <(list)
    for c in "binary FBX" "ASCII FBX" 3DS; do
        echo "$(basename "$bin") | $c (${n[$c]:-0} files) | load ${load[$c]:-0} ms | load+GLB ${glb[$c]:-0} ms | load+3DA ${tda[$c]:-0} ms"
    done
    unset load glb tda n
done
rm -rf "$tmp"

#!/usr/bin/env bash
# Whole processes against the tools users pick (issue #16 goal 7): for every benchmark file,
# `keyscene convert F o.glb --quiet`, `assimp export F o.glb -fglb2` (Debian assimp-utils) and,
# for FBX files, `FBX2glTF --binary --input F --output o` (npm fbx2gltf 0.9.7, the Autodesk FBX
# SDK inside; ../shared/oracles/install_oracles.sh installs both). Prints per file the CPU time
# (milliseconds, `perf stat -e task-clock`, best of RUNS) and peak RSS (KB, `/usr/bin/time -f %M`,
# lowest of RUNS) of each, and keyscene's speed-up over each (their CPU ÷ keyscene's).
#
#   tools/compare_tools.sh KEYSCENE_BINARY [RUNS]      (RUNS: default 5)
#
# Files: the FBX benchmark files of MANIFEST.md (the stems of benches/common/fbx_files.rs) and
# every 3DS/PRJ file of the corpus but wrong.3ds ($KEYSCENE_CORPUS, else ../shared/corpus). The
# output is removed before each run (keyscene refuses to replace a file without --force). A
# tool that fails on a file prints "failed". CPU time is what the machine was asked to do, so
# it is less sensitive than wall time to another process on the other core; run it on a quiet
# machine all the same.
set -u
ks=$1
runs=${2:-5}
corpus=${KEYSCENE_CORPUS:-$(dirname "$0")/../../shared/corpus}
fbx2gltf=${FBX2GLTF:-/opt/keyscene-oracles/node/node_modules/fbx2gltf/bin/Linux/FBX2glTF}
stems=$(sed -n '/BENCHMARK_STEMS/,/^];/p' "$(dirname "$0")/../crates/keyscene/benches/common/fbx_files.rs" | grep -o '"[^"]*"' | tr -d '"')
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# "CPU_MS RSS_KB" of "$@": best CPU and lowest peak RSS of $runs runs, or "failed".
measure() {
    local cpu=999999999 rss=999999999 t r
    for _ in $(seq "$runs"); do
        rm -rf "$tmp"/o*
        if ! perf stat -x, -e task-clock -o "$tmp/stat" "$@" >/dev/null 2>&1; then
            echo failed
            return
        fi
        t=$(awk -F, '/task-clock/ {printf "%.2f", $1}' "$tmp/stat")
        rm -rf "$tmp"/o*
        /usr/bin/time -f %M -o "$tmp/rss" "$@" >/dev/null 2>&1
        r=$(tail -1 "$tmp/rss")
        cpu=$(awk -v a="$t" -v b="$cpu" 'BEGIN{print (a < b) ? a : b}')
        rss=$(awk -v a="$r" -v b="$rss" 'BEGIN{print (a < b) ? a : b}')
    done
    echo "$cpu $rss"
}
ratio() { # $1 theirs, $2 ours ("CPU RSS" or failed)
    case "$1 $2" in *failed*) echo "-" ;; *) awk -v a="${1%% *}" -v b="${2%% *}" 'BEGIN{printf "%.2f", a / b}' ;; esac
}
list() {
    for s in $stems; do ls "$corpus/fbx/$(dirname "$s")/$(basename "$s")"*.fbx 2>/dev/null; done | sort -u
    find "$corpus/3ds" -path '*/reference' -prune -o -type f \( -iname '*.3ds' -o -iname '*.prj' \) ! -name wrong.3ds -print | sort
}
printf '%-58s %18s %18s %18s %8s %8s\n' file "keyscene ms/KB" "assimp ms/KB" "FBX2glTF ms/KB" "÷assimp" "÷FBX2glTF"
while IFS= read -r f; do
    k=$(measure "$ks" convert "$f" "$tmp/o.glb" --quiet)
    a=$(measure assimp export "$f" "$tmp/o.glb" -fglb2)
    g="-"
    case "$f" in *.fbx) [ -x "$fbx2gltf" ] && g=$(measure "$fbx2gltf" --binary --input "$f" --output "$tmp/o") ;; esac
    gr="-"
    [ "$g" != "-" ] && gr=$(ratio "$g" "$k")
    printf '%-58s %18s %18s %18s %8s %8s\n' "${f#"$corpus/"}" "${k/ //}" "${a/ //}" "${g/ //}" "$(ratio "$a" "$k")" "$gr"
done < <(list)

#!/usr/bin/env bash
# Converts every corpus scene to GLB and to 3DA with two keyscene binaries and compares the
# outputs byte for byte (`cmp`): the check that a speed change leaves every output identical.
#
#   tools/compare_conversions.sh OLD_BINARY NEW_BINARY [CORPUS] [WORKDIR]
#
# CORPUS defaults to $KEYSCENE_CORPUS (else ../shared/corpus), WORKDIR to a fresh temporary
# folder. An output folder that already exists under WORKDIR (old-glb, old-3da, ...) is
# reused, so the old binary's outputs can be made once. Prints the number of files compared,
# the differing ones, and files only one side wrote; exits non-zero on any difference.
# KEYSCENE_COMPARE_TO="3ds fbx" compares other targets (default "glb 3da"; any `--to` value).
set -u
targets=${KEYSCENE_COMPARE_TO:-glb 3da}
old=$1
new=$2
corpus=${3:-${KEYSCENE_CORPUS:-$(dirname "$0")/../../shared/corpus}}
work=${4:-$(mktemp -d)}
mkdir -p "$work"
for side in old new; do
    bin=$old
    [ "$side" = new ] && bin=$new
    for to in $targets; do
        dir="$work/$side-$to"
        if [ ! -d "$dir" ]; then
            "$bin" convert "$corpus" "$dir" --to "$to" --json >"$work/$side-$to.json" 2>&1
        fi
    done
done
status=0
compared=0
for to in $targets; do
    while IFS= read -r -d '' f; do
        rel=${f#"$work/old-$to/"}
        if [ ! -f "$work/new-$to/$rel" ]; then
            echo "only old: $to/$rel"
            status=1
            continue
        fi
        compared=$((compared + 1))
        if ! cmp -s "$f" "$work/new-$to/$rel"; then
            echo "differs: $to/$rel"
            status=1
        fi
    done < <(find "$work/old-$to" -type f -print0)
    while IFS= read -r -d '' f; do
        rel=${f#"$work/new-$to/"}
        [ -f "$work/old-$to/$rel" ] || { echo "only new: $to/$rel"; status=1; }
    done < <(find "$work/new-$to" -type f -print0)
done
echo "compared $compared output files (work folder $work)"
exit $status

#!/bin/sh
# Per output format (FBX, 3DS): how many corpus files convert, and the writers' report lines
# ("resampled: …", "not written: …") counted by reason over the corpus (issue #14 "Done when" 3).
#
#   tools/writer_counts.sh [KEYSCENE_BINARY] [CORPUS]
#
# Each file is converted alone, as `keyscene convert FILE OUT.fbx|OUT.3ds --report`, into a
# temporary folder. Numbers in a reason ("12 node parts") are summed per reason.
set -eu
K=${1:-target/release/keyscene}
C=${2:-${KEYSCENE_CORPUS:-../shared/corpus}}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
find "$C" -type f \( -iname '*.3ds' -o -iname '*.prj' -o -iname '*.fbx' -o -iname '*.3da' \
  -o -iname '*.gltf' -o -iname '*.glb' \) | sort > "$T/list"
for ext in fbx 3ds; do
  ok=0; failed=0; n=0
  : > "$T/lines"; : > "$T/summary"; : > "$T/refused"
  while IFS= read -r f; do
    n=$((n + 1))
    # A folder per file: texture images copied beside one output must not meet the next's.
    mkdir -p "$T/out$n"
    if "$K" convert "$f" "$T/out$n/out.$ext" --report > "$T/o" 2> "$T/e"; then
      ok=$((ok + 1))
      grep -E '^(resampled|not written):' "$T/o" >> "$T/lines" || true
      grep -E '^(fbx|3ds): ' "$T/o" >> "$T/summary" || true
    else
      failed=$((failed + 1))
      head -n 1 "$T/e" >> "$T/refused"
    fi
    rm -rf "$T/out$n"
  done < "$T/list"
  echo "== .$ext: $ok of $n files converted, $failed refused"
  # The report's first line: curves kept key for key, node animations resampled.
  awk '{ if (match($0, /[0-9]+ curves written key for key/)) k += substr($0, RSTART, RLENGTH) + 0
         if (match($0, /[0-9]+ node animations resampled/)) { r += substr($0, RSTART, RLENGTH) + 0; rf++ }
         if ($0 ~ /3DS keys written exactly/) x++ }
       END { printf "%d curves written key for key (FBX); %d files with 3DS keys written exactly (3DS); %d node animations resampled, in %d files\n", k, x, r, rf }' \
    "$T/summary"
  # "resampled: 3 node parts: REASON": 3 summed under "resampled: N node parts: REASON" (the
  # line's numbers written N, quoted names "…"), with the number of files that gave the line.
  sed -E 's/"[^"]*"/"…"/g; s/(^|[ (-])[0-9]+(\.[0-9]+)?([^0-9A-Za-z.]|$)/\1N\3/g' "$T/lines" > "$T/keys"
  paste "$T/lines" "$T/keys" | awk -F'\t' '
    { n = 1; rest = $1; sub(/^[a-z ]+: /, "", rest)
      if (match(rest, /^[0-9]+ /)) n = substr(rest, 1, RLENGTH - 1) + 0
      files[$2]++; total[$2] += n }
    END { for (k in files) printf "%6d files %8d  %s\n", files[k], total[k], k }' | sort -rn | head -40
  echo "refused, by the error's first words:"
  sed -E 's/^keyscene: error: [^:]*: //; s/"[^"]*"/"…"/g; s/(^|[ (-])[0-9]+(\.[0-9]+)?([^0-9A-Za-z.]|$)/\1N\3/g' "$T/refused" | cut -c1-90 |
    sort | uniq -c | sort -rn | head -15
done

#!/usr/bin/env bash
# Times `keyscene view`'s /pose route end to end (issue 15 §4: a pose request for the largest
# skinned corpus file takes ≤ 5 ms): starts BIN view FILE --no-open --port 0, asks /pose at N
# frames spread over the first animation's range (one HTTP request each, curl's time_total, on
# loopback), and prints the median, 90th percentile and largest time in milliseconds.
#
#   tools/bench_view_pose.sh target/release/keyscene FILE [N]
set -euo pipefail
bin=$1
file=$2
n=${3:-200}
log=$(mktemp)
"$bin" view "$file" --no-open --port 0 >"$log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true; rm -f "$log"' EXIT
url=
for _ in $(seq 1 600); do
    url=$(grep -o 'http://127.0.0.1:[0-9]*/' "$log" | head -1 || true)
    [ -n "$url" ] && break
    sleep 0.1
done
[ -n "$url" ] || { echo "no URL from keyscene view:" >&2; cat "$log" >&2; exit 1; }
range=$(curl -s "${url}scene" | python3 -c '
import json, sys
d = json.load(sys.stdin)
a = d["animations"][d["animation"]] if d["animation"] is not None else {"frame_range": [0, 0]}
print(*a["frame_range"])')
read -r a b <<<"$range"
curl -s -o /dev/null "${url}pose?frame=$a"   # warm-up
times=()
for k in $(seq 0 $((n - 1))); do
    f=$(python3 -c "print($a + ($b - $a) * $k / max(1, $n - 1))")
    times+=("$(curl -s -o /dev/null -w '%{time_total}' "${url}pose?frame=$f")")
done
printf '%s\n' "${times[@]}" | python3 -c '
import sys
t = sorted(float(x) * 1000 for x in sys.stdin)
print(f"{len(t)} /pose requests: median {t[len(t)//2]:.2f} ms, p90 {t[int(len(t)*0.9)]:.2f} ms, max {t[-1]:.2f} ms")'

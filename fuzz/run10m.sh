#!/bin/sh
# Runs each fuzz target named to 10 million executions at nice 19 (issue #17 §5), on its
# merged seeds in min/TARGET (docs/fuzzing.md, "Setting up"), going on after a crash with the
# executions left (at most 6 runs). Logs: artifacts/TARGET_N.log; crashes: artifacts/TARGET/.
#   sh fuzz/run10m.sh read_3ds read_gltf        # one process per call: one core
cd "$(dirname "$0")"
B=target/x86_64-unknown-linux-gnu/release
for t in "$@"; do
  mkdir -p artifacts/$t
  left=10000000; n=0
  while [ $left -gt 0 ] && [ $n -lt 6 ]; do
    n=$((n+1))
    start=$(date +%s)
    nice -n 19 $B/$t min/$t -runs=$left -max_len=16384 -rss_limit_mb=2048 -timeout=10 \
      -artifact_prefix=artifacts/$t/ -print_final_stats=1 > artifacts/${t}_$n.log 2>&1
    rc=$?
    done_=$(grep -a 'stat::number_of_executed_units' artifacts/${t}_$n.log | awk '{print $2}')
    peak=$(grep -a 'stat::peak_rss_mb' artifacts/${t}_$n.log | awk '{print $2}')
    echo "$t run $n rc=$rc executed=${done_:-?} seconds=$(( $(date +%s)-start )) peak_rss_mb=${peak:-?} $(date +%H:%M)"
    [ -n "$done_" ] && left=$((left-done_))
    [ $rc -eq 0 ] && break
  done
done

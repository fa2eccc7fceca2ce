#!/usr/bin/env bash
# make sanitize: every GPU test binary under compute-sanitizer's memcheck, racecheck, synccheck
# and initcheck. WARPKIT_QUICK=1 shrinks the sweeps (the tools slow kernels down 10-100x).
# The (tool, binary) runs go WARPKIT_SANITIZE_JOBS at a time (default 4): each uses a small part
# of a GPU, and one after the other they take longer than the rest of the test cycle together.
set -u
CS=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null || true)
if [ -z "$CS" ]; then echo "sanitize: compute-sanitizer not found"; exit 1; fi
if ! nvidia-smi -L >/dev/null 2>&1; then echo "sanitize: skipped: no CUDA device"; exit 0; fi
export WARPKIT_QUICK=1
BUILD=${BUILD:-build}
jobs=${WARPKIT_SANITIZE_JOBS:-4}

run_one() { # tool binary: writes binary.tool.log and binary.tool.rc
  local tool=$1 bin=$2 extra=""
  [ "$tool" = memcheck ] && extra="--leak-check full"
  "$CS" --tool "$tool" $extra --error-exitcode 99 --require-cuda-init no --target-processes all "$bin" -S \
    > "$bin.$tool.log" 2>&1
  echo $? > "$bin.$tool.rc"
}

running=0
for tool in memcheck racecheck synccheck initcheck; do
  for bin in "$@"; do
    rm -f "$bin.$tool.rc"
    run_one "$tool" "$bin" &
    running=$((running + 1))
    if [ "$running" -ge "$jobs" ]; then wait -n; running=$((running - 1)); fi
  done
done
wait

pass=0 fail=0
for tool in memcheck racecheck synccheck initcheck; do
  for bin in "$@"; do
    name=${bin#"$BUILD"/tests/}
    log="$bin.$tool.log"
    rc=$(cat "$bin.$tool.rc" 2>/dev/null || echo 1)
    summary=$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -n 1)
    if [ "$rc" -eq 0 ]; then pass=$((pass + 1)); echo "  PASS  $tool $name: $summary"
    else fail=$((fail + 1)); echo "  FAIL  $tool $name (exit $rc): $summary"; grep -m 5 -E '=========' "$log"; fi
  done
done
echo "sanitize: $pass passed, $fail failed"
[ $fail -eq 0 ]

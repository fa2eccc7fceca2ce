#!/usr/bin/env bash
# make sanitize: every GPU test binary under compute-sanitizer's memcheck, racecheck, synccheck
# and initcheck. WARPKIT_QUICK=1 shrinks the sweeps (the tools slow kernels down 10-100x).
set -u
CS=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null || true)
if [ -z "$CS" ]; then echo "sanitize: compute-sanitizer not found"; exit 1; fi
if ! nvidia-smi -L >/dev/null 2>&1; then echo "sanitize: skipped: no CUDA device"; exit 0; fi
export WARPKIT_QUICK=1
pass=0 fail=0
for tool in memcheck racecheck synccheck initcheck; do
  for bin in "$@"; do
    log="$bin.$tool.log"
    extra=""; [ "$tool" = memcheck ] && extra="--leak-check full"
    "$CS" --tool "$tool" $extra --error-exitcode 99 --require-cuda-init no --target-processes all "$bin" -S > "$log" 2>&1
    rc=$?
    summary=$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -n 1)
    if [ $rc -eq 0 ]; then pass=$((pass + 1)); echo "  PASS  $tool $(basename "$bin"): $summary"
    else fail=$((fail + 1)); echo "  FAIL  $tool $(basename "$bin") (exit $rc): $summary"; grep -m 5 -E '=========' "$log"; fi
  done
done
echo "sanitize: $pass passed, $fail failed"
[ $fail -eq 0 ]

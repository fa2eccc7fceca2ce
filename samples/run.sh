#!/usr/bin/env bash
# make demo: run every sample; each prints its check against the CPU and exits non-zero on a mismatch.
set -u
if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "demo: no CUDA device: the samples are built (build/samples/) but need a GPU to run"; exit 0
fi
pass=0 fail=0
for bin in "$@"; do
  echo "== $(basename "$bin")"
  if "$bin"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "  FAILED: $(basename "$bin")"; fi
done
echo "demo: $pass passed, $fail failed"
[ "$fail" -eq 0 ]

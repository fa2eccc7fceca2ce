#!/usr/bin/env bash
# make bench: run every benchmark; each prints its table and writes build/bench/<name>.csv.
set -u
if ! nvidia-smi -L >/dev/null 2>&1; then echo "bench: no CUDA device: nothing to time"; exit 0; fi
rc=0
for bin in "$@"; do
  echo "== $(basename "$bin")"
  "$bin" "$bin.csv" || { rc=1; echo "  FAILED: $(basename "$bin")"; }
done
# Optional peers written in Python (e.g. torch): each script skips itself cleanly when its
# framework is missing, and writes build/bench/<name>.csv.
for py in bench/*.py; do  # bench/_*.py are helpers the scripts import
  [ -f "$py" ] && [ "${py#bench/_}" = "$py" ] || continue
  echo "== $(basename "$py")"
  PYTHONUNBUFFERED=1 python3 "$py" "${BUILD:-build}/bench/$(basename "$py" .py).csv" || { rc=1; echo "  FAILED: $(basename "$py")"; }
done
exit $rc

#!/usr/bin/env bash
# make sanitize: every GPU test under compute-sanitizer's memcheck, racecheck, synccheck and
# initcheck. WARPKIT_QUICK=1 shrinks the sweeps (the tools slow kernels down 10-100x).
# Each (tool, test) pair runs as its own process, WARPKIT_SANITIZE_JOBS at a time (default: the
# CPU count): one uses a small part of a GPU and, under racecheck, can take minutes, so the
# slowest single test, not the slowest binary, bounds the wall time. The device tests (the
# longest) start first; the synccheck runs come after all the others (see below). The runs are
# spread over every visible GPU (gpus, below).
# WARPKIT_SANITIZE_TOOLS picks tools (default: all four), and WARPKIT_SANITIZE_ONLY (an extended
# regex on "binary.tool.test", e.g. 'device_norm\.racecheck') picks runs.
# WARPKIT_SANITIZE_OUT (default BUILD/sanitize) is where the logs go: give each concurrent run its own.
set -u
CS=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null || true)
if [ -z "$CS" ]; then echo "sanitize: compute-sanitizer not found"; exit 1; fi
if ! nvidia-smi -L >/dev/null 2>&1; then echo "sanitize: skipped: no CUDA device"; exit 0; fi
export WARPKIT_QUICK=1
BUILD=${BUILD:-build}
jobs=${WARPKIT_SANITIZE_JOBS:-$(nproc 2>/dev/null || echo 4)}
tools=${WARPKIT_SANITIZE_TOOLS:-memcheck racecheck synccheck initcheck}
out=${WARPKIT_SANITIZE_OUT:-$BUILD/sanitize} # logs; one directory per concurrent sanitize.sh
rm -rf "$out"; mkdir -p "$out"

# "suite/test" filters of a Criterion binary, from its --list tree.
list_tests() { "$1" --list 2>/dev/null | awk '/: [0-9]+ tests?$/ {s = $1; sub(":$", "", s); next} {print s "/" $NF}'; }
# The GPUs the runs are spread over (CUDA_VISIBLE_DEVICES's list, else every GPU nvidia-smi lists):
# a tool's run i puts GPU i % count first, where a test's work goes, and keeps the others visible
# after it for the two-GPU tests. The synccheck runs still meet only each other on any GPU (below).
gpus=${CUDA_VISIBLE_DEVICES:-$(nvidia-smi --query-gpu=index --format=csv,noheader | paste -sd, -)}
[ -n "$gpus" ] || gpus=0
# One run: its number, tool, binary, filter; writes $out/<binary>.<tool>.<test>.log and .rc.
run_one() {
  local i=$1 tool=$2 bin=$3 filter=$4 extra="" log t0 d k vis
  IFS=, read -ra d <<<"$gpus"
  k=$((i % ${#d[@]}))
  vis=$(IFS=,; v=("${d[@]:k}" "${d[@]:0:k}"); echo "${v[*]}")
  log="$out/$(echo "${bin#"$BUILD"/tests/}" | tr / _).$tool.${filter#*/}"
  [ "$tool" = memcheck ] && extra="--leak-check full"
  t0=$(date +%s)
  # racecheck, by far the slowest tool, runs the thinned sweeps (tests/common.cuh, wk_thin).
  CUDA_VISIBLE_DEVICES=$vis WARPKIT_QUICK=$([ "$tool" = racecheck ] && echo 2 || echo 1) "$CS" --tool "$tool" $extra --error-exitcode 99 \
    --require-cuda-init no --target-processes all \
    "$bin" -S -j1 --filter "$filter" > "$log.log" 2>&1
  echo $? > "$log.rc"
  echo $(( $(date +%s) - t0 )) > "$log.time"
}
export -f run_one; export CS BUILD out gpus

ordered=$(printf '%s\n' "$@" | grep '/device/'; printf '%s\n' "$@" | grep -v '/device/')
# The runs of the given tools, one "tool binary test" line each.
runs() {
  for bin in $ordered; do
    for t in $(list_tests "$bin"); do
      for tool in "$@"; do
        name="$(echo "${bin#"$BUILD"/tests/}" | tr / _).$tool.${t#*/}"
        [ -n "${WARPKIT_SANITIZE_ONLY:-}" ] && ! grep -qE -- "$WARPKIT_SANITIZE_ONLY" <<<"$name" && continue
        printf '%s %s %s\n' "$tool" "$bin" "$t"
      done
    done
  done
}
# synccheck runs last, beside other synccheck runs only. Beside racecheck and memcheck runs, whose
# slowed kernels share the GPU by time slices with ours, synccheck on H100 (2025.3.1) reported a
# "Missing wait" at a cluster exchange's mbarrier arrive, or stopped a kernel with an illegal
# address and no finding, in 7 of 492 runs of device_softmax/concurrent (its cluster kernels);
# the same test under the same load ran clean natively (184 of 184) and under memcheck (92 of 92),
# and synccheck runs beside each other only ran clean (400 of 400).
# Alone, synccheck reports the same "Missing wait" at clusterExchangeInit's arm when clusters run
# in waves, a cluster starting on SMs whose blocks of an earlier cluster have exited
# (device_norm/block_columns: 144 blocks of 16-block clusters; 3 of 3 runs). By reading, every
# armed phase is waited on before its block exits. A test of the exchange alone in waves (branch
# wk-sync's tests/cluster/waves.cu; H100, 2026-11-27) passes natively, and synccheck reports it
# with the library's exchange and with variants that end with a cluster barrier, invalidate the
# mbarrier before exit or arrive with release semantics; arming after the cluster wait instead
# drew the second form above. The report follows the reuse of the SMs, not the protocol. The tool
# stops the kernel at the report, so the test then fails on that launch's error. A synccheck run
# whose every finding is that report counts as "known" below (printed, not passed; make test
# checks the test's results natively); any other finding fails.
start=$(date +%s)
all=$(runs $tools)
grep -v '^synccheck ' <<<"$all" | awk 'NF {print c[$1]++, $0}' | xargs -r -P "$jobs" -L 1 bash -c 'run_one "$@"' _
grep '^synccheck ' <<<"$all" | awk 'NF {print c[$1]++, $0}' | xargs -r -P "$jobs" -L 1 bash -c 'run_one "$@"' _

# Whether a synccheck log holds only the known report above: each finding is a "Missing wait"
# whose first device frame is clusterExchangeInit's, and each failed assertion is the launch error
# the tool leaves when it stops the kernel at that report (an illegal address, or an unspecified
# launch failure: device_topk/argmax_argmin_reference, 78 such findings, H100, 2026-11-27).
known_sync() {
  local n m
  n=$(grep -c 'Barrier error detected' "$1")
  m=$(grep -A 6 'Barrier error detected. Missing wait' "$1" | grep -c 'Device Frame: .*clusterExchangeInit')
  [ "$n" -gt 0 ] && [ "$n" -eq "$m" ] && ! grep -q 'Crashing: [1-9]' "$1" &&
    [ "$(grep -c 'Assertion Failed' "$1")" -eq "$(grep -cE 'an illegal memory access was encountered|unspecified launch failure' "$1")" ]
}
pass=0 fail=0 known=0
for log in "$out"/*.log; do
  [ -f "$log" ] || continue
  name=$(basename "$log" .log)
  rc=$(cat "${log%.log}.rc" 2>/dev/null || echo 1)
  summary=$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -n 1)
  if [ "$rc" -eq 0 ] && ! grep -q 'Failing: [1-9]\|Crashing: [1-9]' "$log"; then pass=$((pass + 1))
  elif [[ $name == *.synccheck.* ]] && known_sync "$log"; then
    known=$((known + 1)); echo "  KNOWN $name: $summary (clusterExchangeInit's arm, see tests/sanitize.sh)"
  else fail=$((fail + 1)); echo "  FAIL  $name (exit $rc): $summary"; grep -m 5 -E '=========|\[FAIL\]|\[ERR' "$log"; fi
done
echo "slowest runs:"
for f in "$out"/*.time; do [ -f "$f" ] && echo "$(cat "$f") $(basename "$f" .time)"; done |
  sort -rn | head -n 5 | sed 's/^/  /'
echo "sanitize: $pass passed, $fail failed, $known known ($tools; one run per tool and test; $(( $(date +%s) - start )) s)"
[ $fail -eq 0 ] && [ $pass -gt 0 ]

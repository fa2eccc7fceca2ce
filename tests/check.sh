#!/usr/bin/env bash
# warpkit's test driver (make test). Runs, and counts, five kinds of check:
#   1. the Criterion test binaries given as arguments (GPU tests skip with "no CUDA device");
#   2. resources: ptxas reports of every test and sample kernel show no spills, no stack frame;
#   3. compile-fail: each tests/compile_fail/*.cu must fail to compile with its expected message;
#   4. PTX and SASS shape: tests/ptx/*.cu and tests/sass/*.cu directives (see those files);
#   5. consumers: make install to a temporary prefix, then tests/consumer built with CMake
#      (find_package, add_subdirectory, FetchContent) and with nvcc $(pkg-config --cflags warpkit),
#      then make uninstall.
# The compiles of 3, 4 and 5 run in the background, JOBS at a time (default: the CPU count),
# while the test binaries run; each section then reports in order.
# Ends with one line: "warpkit: N passed, N failed, N skipped"; exits non-zero on any failure.
set -u
NVCC=${NVCC:-nvcc}
BUILD=${BUILD:-build}
CHECK_ARCH=${CHECK_ARCH:-sm_90}
MAKE=${MAKE:-make}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
pass=0 fail=0 skip=0
failed_names=()
ok()   { pass=$((pass + 1)); printf '  PASS  %s\n' "$1"; }
bad()  {
  fail=$((fail + 1)); failed_names+=("$1"); printf '  FAIL  %s\n' "$1"
  [ $# -gt 1 ] && printf '        %s\n' "${@:2}"
}
skp()  { skip=$((skip + 1)); printf '  SKIP  %s: %s\n' "$1" "$2"; }

# Background compiles: `spawn OUT CMD...` runs CMD with its output in OUT.log and its exit code
# in OUT.rc; at most JOBS run at once. `collect OUT` waits for OUT.rc and prints the exit code.
spawn() {
  local out=$1; shift
  while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n; done
  rm -f "$out.rc"
  { "$@" > "$out.log" 2>&1; echo $? > "$out.rc"; } &
}
collect() {
  while [ ! -s "$1.rc" ] && kill -0 "$bg" 2>/dev/null; do sleep 0.2; done
  cat "$1.rc" 2>/dev/null || echo 255
}
case $BUILD in /*) abs_build=$BUILD;; *) abs_build=$PWD/$BUILD;; esac

# The compile-fail, PTX and SASS compiles. sm_90 unless a file says otherwise.
ptx_arch() { local a; a=$(sed -n 's|^// @arch ||p' "$1" | head -n 1); echo "${a:-sm_90}"; }
ptx_out()  { echo "$BUILD/ptx/$(basename "$1" .cu).$(ptx_arch "$1").ptx"; }
mkdir -p "$BUILD/compile_fail" "$BUILD/ptx" "$BUILD/sass"
rm -f "$BUILD"/compile_fail/*.rc "$BUILD"/ptx/*.rc "$BUILD"/sass/*.rc

# Consumers (section 5): the install runs now (it only copies files); the builds run in the
# background. Each CMake build configures tests/consumer one way, builds it and runs it (it
# prints "no CUDA device" and exits 0 without a GPU).
croot="$abs_build/consumer"
prefix="$croot/prefix"
rm -rf "$croot"; mkdir -p "$croot"
MAKEFLAGS= "$MAKE" --no-print-directory install PREFIX="$prefix" DESTDIR= > "$croot/install.log" 2>&1
install_rc=$?
nvcc_path=$(command -v "$NVCC")
cmake_consumer() { # WAY [cmake -D options]
  local way=$1; shift
  cmake -S tests/consumer -B "$croot/$way" -DWARPKIT_CONSUME="$way" -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_CUDA_COMPILER="$nvcc_path" -DCMAKE_CUDA_ARCHITECTURES="${CHECK_ARCH#sm_}" "$@" &&
    cmake --build "$croot/$way" && "$croot/$way/consumer"
}
pkgconfig_consumer() {
  local cflags version
  cflags=$(PKG_CONFIG_LIBDIR="$prefix/lib/pkgconfig" pkg-config --cflags warpkit) &&
    version=$(PKG_CONFIG_LIBDIR="$prefix/lib/pkgconfig" pkg-config --modversion warpkit) &&
    echo "pkg-config: warpkit $version, cflags: $cflags" &&
    mkdir -p "$croot/pkgconfig" &&
    "$NVCC" $cflags -arch="$CHECK_ARCH" tests/consumer/consumer.cu -o "$croot/pkgconfig/consumer" &&
    "$croot/pkgconfig/consumer"
}
# FetchContent downloads an archive of the sources, as a user's FetchContent of a release would
# (the files git tracks or would track; the listed package files where git is not there).
source_archive() {
  local files
  if files=$(git ls-files -co --exclude-standard 2>/dev/null) && [ -n "$files" ]; then
    printf '%s\n' "$files" | while read -r f; do [ -f "$f" ] && printf '%s\n' "$f"; done |
      tar -czf "$croot/warpkit-src.tar.gz" --transform 's|^|warpkit/|' -T -
  else
    tar -czf "$croot/warpkit-src.tar.gz" --transform 's|^|warpkit/|' \
      CMakeLists.txt cmake include warpkit.pc.in LICENSE CHANGELOG.md
  fi
}
have_cmake=0; command -v cmake >/dev/null && have_cmake=1
have_pkgconfig=0; command -v pkg-config >/dev/null && have_pkgconfig=1

(
  for src in tests/compile_fail/*.cu; do
    [ -f "$src" ] || continue
    spawn "$BUILD/compile_fail/$(basename "$src" .cu)" "$NVCC" -std=c++17 -Iinclude -arch=sm_90 -ptx "$src" -o /dev/null
  done
  for src in tests/ptx/*.cu; do
    [ -f "$src" ] || continue
    ptx=$(ptx_out "$src")
    spawn "$ptx" "$NVCC" -std=c++17 -Iinclude -arch="$(ptx_arch "$src")" -ptx "$src" -o "$ptx"
    grep -q '^// @nospill' "$src" &&
      spawn "${ptx%.ptx}.cubin" "$NVCC" -std=c++17 -Iinclude -arch="$(ptx_arch "$src")" -Xptxas -v -cubin "$src" \
        -o "${ptx%.ptx}.cubin"
  done
  for src in tests/sass/*.cu; do
    [ -f "$src" ] || continue
    cubin="$BUILD/sass/$(basename "$src" .cu).cubin"
    spawn "$cubin" "$NVCC" -std=c++17 -Iinclude -arch=sm_90 -cubin "$src" -o "$cubin"
  done
  if [ "$install_rc" -eq 0 ]; then
    if [ "$have_cmake" = 1 ]; then
      find_version=$(sed -n 's/^#define WARPKIT_VERSION_\(MAJOR\|MINOR\) *\([0-9]*\).*/\2/p' \
                       include/warpkit/version.cuh | paste -sd.)
      spawn "$croot/find_package" cmake_consumer find_package -DCMAKE_PREFIX_PATH="$prefix" \
        -DWARPKIT_FIND_VERSION="$find_version"
      spawn "$croot/subdirectory" cmake_consumer subdirectory -DWARPKIT_SOURCE_DIR="$PWD"
      source_archive &&
        spawn "$croot/fetchcontent" cmake_consumer fetchcontent -DWARPKIT_ARCHIVE="$croot/warpkit-src.tar.gz"
    fi
    [ "$have_pkgconfig" = 1 ] && spawn "$croot/pkgconfig" pkgconfig_consumer
  fi
  wait
) &
bg=$!

# 1. Criterion binaries ----------------------------------------------------------------------
# The binaries run TEST_JOBS at a time (default: a quarter of the CPUs, at least 1), each with
# Criterion's own -j set so that about one test process runs per CPU; the device tests (the
# longest) start first. Each binary's output, TAP and XML report (per-test times) land beside it;
# the reports are then read in the order given.
TEST_JOBS=${TEST_JOBS:-$(( JOBS / 4 > 0 ? JOBS / 4 : 1 ))}
crit_jobs=$(( JOBS / TEST_JOBS > 0 ? JOBS / TEST_JOBS : 1 ))
run_test_bin() { # binary: writes binary.out, .tap, .xml, .rc, .time
  local bin=$1 t0 t1
  rm -f "$bin.tap" "$bin.xml" "$bin.rc" "$bin.time"
  t0=$(date +%s.%N)
  "$bin" --tap="$bin.tap" --xml="$bin.xml" -S -j"$crit_jobs" > "$bin.out" 2>&1
  echo $? > "$bin.rc"
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f\n", b - a }' > "$bin.time"
}
export -f run_test_bin; export crit_jobs
t_start=$(date +%s)
{ printf '%s\n' "$@" | grep '/device/'; printf '%s\n' "$@" | grep -v '/device/'; } |
  xargs -r -P "$TEST_JOBS" -I{} bash -c 'run_test_bin "$1"' _ {}
echo "== Criterion binaries: $# ran in $(( $(date +%s) - t_start )) s, $TEST_JOBS at a time (-j$crit_jobs each)"
for bin in "$@"; do
  name=${bin#"$BUILD"/tests/}
  echo "== $name ($(cat "$bin.time" 2>/dev/null || echo ?) s)"
  tap="$bin.tap"
  rc=$(cat "$bin.rc" 2>/dev/null || echo 255)
  cat "$bin.out" 2>/dev/null
  if [ ! -s "$tap" ]; then bad "$name (no report, exit $rc)"; continue; fi
  p=$(grep -c '^ok .*' "$tap" | tr -d ' '); s=$(grep -c '^ok .*# SKIP' "$tap" | tr -d ' ')
  f=$(grep -c '^not ok' "$tap" | tr -d ' ')
  pass=$((pass + p - s)); skip=$((skip + s)); fail=$((fail + f))
  grep '# SKIP' "$tap" | sed 's/^ok - /  SKIP  /'
  if [ "$f" -gt 0 ]; then failed_names+=($(grep '^not ok' "$tap" | awk '{print $4}')); fi
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then bad "$name (exit $rc with no failing test)"; fi
done
# The slowest tests (from the XML reports), to show where the time goes.
echo "== slowest tests"
for bin in "$@"; do
  [ -f "$bin.xml" ] &&
    sed -n 's|.*<testcase name="\([^"]*\)".* time="\([0-9.]*\)".*|\2 '"${bin#"$BUILD"/tests/}"'::\1|p' "$bin.xml"
done | sort -rn | head -n 8 | awk '{ printf "  %6.1f s  %s\n", $1, $2 }'

# 2. Resource reports ------------------------------------------------------------------------
echo "== resources (ptxas -v: no spills, no stack frame)"
for res in "$BUILD"/tests/*.res "$BUILD"/tests/*/*.res "$BUILD"/samples/*.res; do
  [ -f "$res" ] || continue
  name=${res#"$BUILD"/}; name=${name%.res}
  # Only the newest target's report is judged (CHECK_ARCH): on sm_80 three large block-test
  # kernels get an 8-byte stack frame.
  offenders=$(awk -v a="$CHECK_ARCH" \
      '/Compiling entry function/ {on = index($0, "for '"'"'" a "'"'"'") > 0} on' "$res" |
    grep -E 'bytes stack frame' |
    grep -vE '^\s*(ptxas info\s*:\s*)?0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads' | head -n 3)
  if [ -n "$offenders" ]; then bad "resources: $name" "$offenders"; else ok "resources: $name"; fi
done

# 3. Compile-fail checks ---------------------------------------------------------------------
echo "== compile-fail (static_assert messages)"
for src in tests/compile_fail/*.cu; do
  [ -f "$src" ] || continue
  name=compile_fail/$(basename "$src" .cu)
  want=$(sed -n 's|^// expect: ||p' "$src" | head -n 1)
  rc=$(collect "$BUILD/$name"); out=$(cat "$BUILD/$name.log" 2>/dev/null)
  if [ "$rc" -eq 0 ]; then bad "$name" "compiled, but should have failed with: $want"
  elif [ -z "$want" ] || ! grep -qF -- "$want" <<<"$out"; then
    bad "$name" "error did not mention: $want" "$(grep -m1 error <<<"$out")"
  else ok "$name"; fi
done

# 4a. PTX shape --------------------------------------------------------------------------------
# Directives in tests/ptx/*.cu:
#   // @arch sm_XX                      target (default sm_90)
#   // @expect KERNEL OP N PATTERN      the .entry KERNEL holds N lines matching PATTERN (OP: == <= >=)
#   // @nolocal                         no .local state space anywhere in the file's PTX
#   // @nospill                         ptxas -v for the target: no kernel spills or has a stack frame
#                                       (the resource check of section 2 judges only CHECK_ARCH)
# Kernels are extern "C", so their PTX names are the source names.
echo "== ptx"
# The body ends at the brace that closes the entry (inline asm puts its own { } lines inside).
ptx_body() {
  awk -v k="$2" '$0 ~ "^.visible .entry "k"\\(" {on=1} !on {next} {print}
    /^[ \t]*\{[ \t]*$/ {d++} /^[ \t]*\}[ \t]*$/ {if (--d == 0) exit}' "$1"
}
for src in tests/ptx/*.cu; do
  [ -f "$src" ] || continue
  arch=$(ptx_arch "$src"); ptx=$(ptx_out "$src")
  if [ "$(collect "$ptx")" -ne 0 ]; then
    bad "ptx: $src does not compile" "$(head -n 3 "$ptx.log")"; continue
  fi
  if grep -q '^// @nolocal' "$src"; then
    if grep -q '\.local' "$ptx"; then bad "ptx: $(basename "$src") uses .local"
    else ok "ptx: $(basename "$src") has no .local"; fi
  fi
  if grep -q '^// @nospill' "$src"; then
    cubin=${ptx%.ptx}.cubin
    if [ "$(collect "$cubin")" -ne 0 ]; then bad "ptxas $arch: $src does not compile" "$(head -n 3 "$cubin.log")"
    else
      offenders=$(grep -E 'bytes stack frame' "$cubin.log" |
        grep -vE '^\s*(ptxas info\s*:\s*)?0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads' | head -n 3)
      if [ -n "$offenders" ]; then bad "ptxas $arch: $(basename "$src") spills" "$offenders"
      else ok "ptxas $arch: $(basename "$src") has no spills, no stack frame"; fi
    fi
  fi
  while read -r kern op n pat; do
    body=$(ptx_body "$ptx" "$kern")
    if [ -z "$body" ]; then bad "ptx: $kern not found in $ptx"; continue; fi
    got=$(grep -cE -- "$pat" <<<"$body")
    case $op in
      '==') [ "$got" -eq "$n" ];; '<=') [ "$got" -le "$n" ];; '>=') [ "$got" -ge "$n" ];; *) false;;
    esac && ok "ptx $arch: $kern has $got x '$pat' ($op $n)" || bad "ptx $arch: $kern has $got x '$pat', want $op $n"
  done < <(sed -n 's|^// @expect ||p' "$src")
done

# 4b. SASS shape -------------------------------------------------------------------------------
# Directives in tests/sass/*.cu:   // @le KERNEL_A KERNEL_B   (A has no more SASS instructions than B)
#                                  // @loadsfirst PATTERN N   (in every kernel whose name matches
#   PATTERN, at least N 16-byte loads from the first one up to the first instruction reading its registers)
# cuobjdump/nvdisasm come with the toolkit; where they are missing, pip's NVIDIA wheels supply them.
echo "== sass"
find_cuobjdump() {
  command -v cuobjdump >/dev/null && command -v nvdisasm >/dev/null && return 0
  local nvbin; nvbin=$(dirname "$(command -v "$NVCC")")
  [ -x "$nvbin/cuobjdump" ] && [ -x "$nvbin/nvdisasm" ] && PATH="$nvbin:$PATH" && return 0
  local tools="$BUILD/tools"
  if [ ! -x "$tools/nvidia/cu13/bin/cuobjdump" ]; then
    python3 -m pip install -q --disable-pip-version-check --target "$tools" \
      nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm >/dev/null 2>&1 || return 1
  fi
  PATH="$(cd "$tools/nvidia/cu13/bin" && pwd):$PATH"
  command -v cuobjdump >/dev/null && command -v nvdisasm >/dev/null
}
sass_count() { # instructions in function $2 of cubin $1
  cuobjdump -sass -fun "$2" "$1" 2>/dev/null | grep -cE '^\s+/\*[0-9a-f]{4}\*/'
}
sass_loads_first() { # per function of cubin $1 matching $2: "name count" (see @loadsfirst)
  cuobjdump -sass "$1" 2>/dev/null | awk -v pat="$2" '
    function report() { if (name ~ pat) print name, (first ? run : 0) }
    /Function : / { report(); name = $3; first = 0; run = 0; done = 0; next }
    !/^[ \t]+\/\*[0-9a-f][0-9a-f][0-9a-f][0-9a-f]\*\// || done { next }
    { line = $0; sub(/^[ \t]+\/\*[0-9a-f][0-9a-f][0-9a-f][0-9a-f]\*\/[ \t]+/, "", line); sub(/[ \t]*;.*$/, "", line) }
    first {
      ops = line; sub(/^@!?P[0-9T] +/, "", ops); sub(/^[^ ]+ +[^ ,]+/, "", ops) # drop the guard, opcode, destination
      for (r = reg; r < reg + 4; ++r) if (ops ~ ("(^|[^0-9A-Z])R" r "([^0-9]|$)")) { done = 1; next }
    }
    line ~ /LDG[.A-Z]*\.128/ { ++run; if (!first) { first = 1; d = line; sub(/^[^ ]+ +R/, "", d); reg = d + 0 } }
    END { report() }'
}
if ls tests/sass/*.cu >/dev/null 2>&1; then
  if ! find_cuobjdump; then
    skp "sass" "no cuobjdump/nvdisasm (install the CUDA toolkit's, or pip nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm)"
  else
    for src in tests/sass/*.cu; do
      cubin="$BUILD/sass/$(basename "$src" .cu).cubin"
      if [ "$(collect "$cubin")" -ne 0 ]; then
        bad "sass: $src does not compile" "$(head -n 3 "$cubin.log")"; continue
      fi
      while read -r a b; do
        na=$(sass_count "$cubin" "$a"); nb=$(sass_count "$cubin" "$b")
        if [ "${na:-0}" -gt 0 ] && [ "${nb:-0}" -gt 0 ] && [ "$na" -le "$nb" ]; then
          ok "sass sm_90: $a $na <= $b $nb instructions"
        else bad "sass sm_90: $a ${na:-?} instructions vs $b ${nb:-?}"; fi
      done < <(sed -n 's|^// @le ||p' "$src")
      while read -r pat n; do
        res=$(sass_loads_first "$cubin" "$pat")
        if [ -z "$res" ]; then bad "sass sm_90: no kernel matches $pat"; continue; fi
        while read -r fn got; do
          if [ "$got" -ge "$n" ]; then ok "sass sm_90: $pat: $got 16-byte loads before the first use (>= $n)"
          else bad "sass sm_90: $pat ($fn): $got 16-byte loads before the first use, want >= $n"; fi
        done <<<"$res"
      done < <(sed -n 's|^// @loadsfirst ||p' "$src")
    done
  fi
fi

# 5. Consumers --------------------------------------------------------------------------------
echo "== consumer (make install, then tests/consumer built against it; make uninstall)"
consumer_log() { tail -n 5 "$1.log" 2>/dev/null | sed 's/^/        /'; }
if [ "$install_rc" -ne 0 ]; then
  bad "consumer: make install PREFIX=$prefix" "$(tail -n 3 "$croot/install.log")"
else
  missing=""
  for f in include/warpkit.cuh include/warpkit/version.cuh include/warpkit/warp/reduce.cuh \
           lib/pkgconfig/warpkit.pc lib/cmake/warpkit/warpkitConfig.cmake \
           lib/cmake/warpkit/warpkitConfigVersion.cmake share/doc/warpkit/LICENSE; do
    [ -f "$prefix/$f" ] || missing="$missing $f"
  done
  if [ -n "$missing" ]; then bad "consumer: make install" "missing:$missing"
  else
    ok "consumer: make install ($(find "$prefix" -type f | wc -l | tr -d ' ') files under $BUILD/consumer/prefix)"
  fi
  consumer_check() { # OUT NAME
    if [ "$(collect "$1")" -ne 0 ]; then bad "$2" "$(consumer_log "$1")"
    elif grep -q '^consumer: ok' "$1.log"; then ok "$2: built, ran ok"
    else ok "$2: built (no CUDA device: not run)"; fi
  }
  if [ "$have_cmake" = 1 ]; then
    consumer_check "$croot/find_package" "consumer: CMake find_package(warpkit CONFIG) from the install"
    if ! grep -q "warpkit [0-9.]* from $prefix/lib/cmake/warpkit" "$croot/find_package.log"; then
      bad "consumer: find_package found a warpkit other than $prefix" \
        "$(grep -m1 'warpkit .* from' "$croot/find_package.log")"
    fi
    consumer_check "$croot/subdirectory" "consumer: CMake add_subdirectory(warpkit)"
    consumer_check "$croot/fetchcontent" "consumer: CMake FetchContent of a source archive"
  else
    skp "consumer: CMake" "no cmake (apt-get install -y cmake)"
  fi
  if [ "$have_pkgconfig" = 1 ]; then
    consumer_check "$croot/pkgconfig" "consumer: nvcc \$(pkg-config --cflags warpkit)"
  else
    skp "consumer: pkg-config" "no pkg-config (apt-get install -y pkg-config)"
  fi
  wait "$bg" 2>/dev/null
  if ! MAKEFLAGS= "$MAKE" --no-print-directory uninstall PREFIX="$prefix" DESTDIR= > "$croot/uninstall.log" 2>&1; then
    bad "consumer: make uninstall" "$(tail -n 3 "$croot/uninstall.log")"
  elif left=$(find "$prefix" -type f | head -n 3) && [ -n "$left" ]; then
    bad "consumer: make uninstall left files" "$left"
  else ok "consumer: make uninstall"; fi
fi
wait "$bg" 2>/dev/null

echo
if [ "$fail" -gt 0 ]; then echo "failed: ${failed_names[*]}"; fi
echo "warpkit: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]

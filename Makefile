# warpkit: header-only CUDA warp/block primitives.
#   make            build samples, tests and benchmarks
#   make demo       build and run every sample (each checks itself against the CPU)
#   make test       build and run every test; GPU tests skip with "no CUDA device" where none is
#   make sanitize   run the GPU tests under compute-sanitizer (memcheck, racecheck, synccheck, initcheck)
#   make bench      build and run the benchmarks (tables on stdout, CSV in build/bench/)
# Variables:
#   ARCH=sm_90            target(s), comma separated; default: the installed GPU, else sm_75,sm_80,sm_90
#   CRITERION_PREFIX=dir  use a Criterion installed under dir (include/ and lib/)
#   NVCC=path             the CUDA compiler

NVCC  ?= nvcc
BUILD ?= build
comma := ,

# --- target architectures -------------------------------------------------------------------
GPU_CC := $(shell nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1 | tr -d ' .\r')
ifeq ($(strip $(ARCH)),)
  ifneq ($(filter 7% 8% 9% 10% 11% 12%,$(GPU_CC)),)
    ARCH := sm_$(GPU_CC)
  else
    # No GPU: compile for a fixed list. CUDA 13 dropped sm_70; it is added when the compiler has it.
    ARCH := $(if $(shell $(NVCC) --list-gpu-arch 2>/dev/null | grep -x compute_70),sm_70$(comma))sm_75,sm_80,sm_90
  endif
endif
ARCH_LIST  := $(subst $(comma), ,$(ARCH))
DEPFLAGS   = -MD -MP -MF $@.d
ARCH_FLAGS := $(foreach a,$(ARCH_LIST),-gencode arch=compute_$(patsubst sm_%,%,$(a)),code=$(a))
# Newest listed architecture: PTX and SASS checks read its code.
CHECK_ARCH := $(lastword $(sort $(ARCH_LIST)))

CXXSTD   := -std=c++17
# -O sets the HOST optimisation level only (device code is always optimised): tests use -O1,
# which halves their build time; samples and benchmarks use -O3.
NVFLAGS  := $(CXXSTD) -lineinfo -Iinclude $(ARCH_FLAGS) -Xcompiler -Wall,-Wextra -Xptxas -v $(EXTRA_NVFLAGS)

# --- Criterion ------------------------------------------------------------------------------
ifneq ($(strip $(CRITERION_PREFIX)),)
  CRIT_DIR   := $(abspath $(CRITERION_PREFIX))
  CRIT_FLAGS := -I$(CRIT_DIR)/include -L$(CRIT_DIR)/lib -Xlinker -rpath-link=$(CRIT_DIR)/lib \
                -Xlinker --disable-new-dtags -Xlinker -rpath=$(CRIT_DIR)/lib
  CRIT_HEADER := $(CRIT_DIR)/include/criterion/criterion.h
else
  CRIT_FLAGS :=
  CRIT_HEADER := /usr/include/criterion/criterion.h
endif

# Criterion tests: tests/*.cu and one level of folders mirroring include/warpkit/ (tests/device/...);
# tests/ptx, tests/sass and tests/compile_fail hold inputs of tests/check.sh, not Criterion tests.
TEST_SRCS   := $(wildcard tests/*.cu) $(filter-out tests/ptx/% tests/sass/% tests/compile_fail/% tests/consumer/%,$(wildcard tests/*/*.cu))
SAMPLE_SRCS := $(wildcard samples/*.cu)
BENCH_SRCS  := $(wildcard bench/*.cu)
HEADERS     := $(wildcard include/*.cuh include/warpkit/*.cuh include/warpkit/*/*.cuh)
TEST_BINS   := $(patsubst tests/%.cu,$(BUILD)/tests/%,$(TEST_SRCS))
SAMPLE_BINS := $(patsubst samples/%.cu,$(BUILD)/samples/%,$(SAMPLE_SRCS))
BENCH_BINS  := $(patsubst bench/%.cu,$(BUILD)/bench/%,$(BENCH_SRCS))
HEADER_OBJS := $(patsubst include/%.cuh,$(BUILD)/headers/%.o,$(filter-out include/warpkit/detail/%,$(HEADERS)))

.PHONY: all test demo bench sanitize headers criterion clean
.DELETE_ON_ERROR:

all: $(SAMPLE_BINS) $(TEST_BINS) $(BENCH_BINS)

# Criterion: install it from Debian's packages when missing and we are root, else say how.
criterion:
	@if [ ! -f "$(CRIT_HEADER)" ]; then \
	  if [ -n "$(CRITERION_PREFIX)" ]; then echo "warpkit: no Criterion under CRITERION_PREFIX=$(CRITERION_PREFIX)"; exit 1; fi; \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "warpkit: installing Criterion (apt-get install -y libcriterion-dev)"; \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libcriterion-dev) >/dev/null || exit 1; \
	  else \
	    echo "warpkit: Criterion is missing; install it with: sudo apt-get install -y libcriterion-dev"; exit 1; \
	  fi; \
	fi

# Every object keeps its ptxas resource report (.res) so tests/check.sh can prove no spills
# and no local memory.
$(BUILD)/tests/%: tests/%.cu tests/common.cuh $(HEADERS) | criterion
	@mkdir -p $(@D)
	$(NVCC) -O1 $(NVFLAGS) $(DEPFLAGS) $(CRIT_FLAGS) $< -o $@ -lcriterion > $@.res 2>&1 || { cat $@.res; exit 1; }

$(BUILD)/samples/%: samples/%.cu $(HEADERS)
	@mkdir -p $(@D)
	$(NVCC) -O3 $(NVFLAGS) $(DEPFLAGS) $< -o $@ > $@.res 2>&1 || { cat $@.res; exit 1; }

$(BUILD)/bench/%: bench/%.cu bench/bench.cuh $(HEADERS)
	@mkdir -p $(@D)
	$(NVCC) -O3 $(NVFLAGS) $(DEPFLAGS) $< -o $@ > $@.res 2>&1 || { cat $@.res; exit 1; }

# Every public header compiles on its own.
# (a one-line .cu that includes it, exactly as a user's file would)
$(BUILD)/headers/%.o: include/%.cuh $(HEADERS)
	@mkdir -p $(@D)
	@echo '#include <$*.cuh>' > $(@:.o=.cu)
	$(NVCC) $(CXXSTD) -Iinclude -arch=$(CHECK_ARCH) -Xcompiler -Wall,-Wextra -c $(@:.o=.cu) -o $@

headers: $(HEADER_OBJS)

# Dependencies written by nvcc (-MD): a bench or test that includes a sample is rebuilt when the
# sample changes.
-include $(wildcard $(BUILD)/tests/*.d $(BUILD)/tests/*/*.d $(BUILD)/samples/*.d $(BUILD)/bench/*.d)

test: headers $(TEST_BINS) $(SAMPLE_BINS)
	@NVCC="$(NVCC)" CHECK_ARCH="$(CHECK_ARCH)" BUILD="$(BUILD)" bash tests/check.sh $(TEST_BINS)

sanitize: $(TEST_BINS)
	@BUILD="$(BUILD)" bash tests/sanitize.sh $(TEST_BINS)

demo: $(SAMPLE_BINS)
	@bash samples/run.sh $(SAMPLE_BINS)

bench: $(BENCH_BINS)
	@BUILD="$(BUILD)" bash bench/run.sh $(BENCH_BINS)

clean:
	rm -rf $(BUILD)

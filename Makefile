# warpkit: header-only CUDA C toolkit. This Makefile is the project's own build (samples, tests,
# benchmarks) and its installer; CMake consumers use CMakeLists.txt. `make help` lists the
# targets and variables.

NVCC    ?= nvcc
BUILD   ?= build
PREFIX  ?= /usr/local
DESTDIR ?=
V       ?= 0
comma   := ,

# Goals that compile nothing skip the GPU and compiler probes below.
NOBUILD_GOALS := help install uninstall clean
ifneq ($(strip $(MAKECMDGOALS)),)
  ifeq ($(filter-out $(NOBUILD_GOALS),$(MAKECMDGOALS)),)
    NOBUILD := 1
  endif
endif

# --- target architectures -------------------------------------------------------------------
# ARCH: the installed GPU, else a fixed list. Test binaries (TEST_ARCH) run only on a GPU: with
# none they are compiled for the newest listed target alone, while the samples and the
# header checks still compile for every listed target.
ifndef NOBUILD
  ifeq ($(strip $(ARCH)),)
    GPU_CC := $(shell nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1 | tr -d ' .\r')
    ifneq ($(filter 7% 8% 9% 10% 11% 12%,$(GPU_CC)),)
      ARCH := sm_$(GPU_CC)
    else
      # No GPU: a fixed list. CUDA 13 dropped sm_70; it is added when the compiler has it.
      ARCH := $(if $(shell $(NVCC) --list-gpu-arch 2>/dev/null | grep -x compute_70),sm_70$(comma))sm_75,sm_80,sm_90
      NO_GPU := 1
    endif
  endif
endif
ARCH_LIST  := $(subst $(comma), ,$(ARCH))
# Newest listed architecture (by number: sm_100 is newer than sm_90): the resource check judges
# its code and the consumer checks build for it.
CHECK_ARCH := $(if $(ARCH_LIST),$(shell printf '%s\n' $(ARCH_LIST) | sort -t_ -k2 -n | tail -n 1))
ifeq ($(strip $(TEST_ARCH)),)
  TEST_ARCH := $(if $(NO_GPU),$(CHECK_ARCH),$(ARCH))
endif
gencode     = $(foreach a,$(subst $(comma), ,$(1)),-gencode arch=compute_$(patsubst sm_%,%,$(a)),code=$(a))
ARCH_FLAGS := $(call gencode,$(ARCH))
TEST_FLAGS := $(call gencode,$(TEST_ARCH))
DEPFLAGS    = -MD -MP -MF $@.d

CXXSTD := -std=c++17
# -O sets the HOST optimisation level only (device code is always optimised): tests use -O1,
# which halves their build time; samples and benchmarks use -O3. -lineinfo maps device code to
# source lines for compute-sanitizer and profilers; -Xptxas -v writes the resource report.
NVFLAGS := $(CXXSTD) -lineinfo -Iinclude -Xcompiler -Wall,-Wextra -Xptxas -v $(EXTRA_NVFLAGS)

# --- output: one line per built file; V=1 shows the commands ----------------------------------
ifeq ($(V),1)
  Q :=
  say = @true
else
  Q := @
  say = @printf '  %-7s %s\n'
endif

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

# --- NCCL (optional) -------------------------------------------------------------------------
# The multi-GPU programs (NCCL_BINS) use NCCL where nccl.h is found: under NCCL_HOME (include/,
# lib/), else in the Python package nvidia-nccl (PyTorch's); without it they build as stubs that
# say why they skip. warpkit's headers never include nccl.h.
ifndef NOBUILD
  ifeq ($(strip $(NCCL_HOME)),)
    NCCL_HOME := $(shell python3 -c 'import nvidia.nccl as m; print(list(m.__path__)[0])' 2>/dev/null)
  endif
endif
NCCL_LIB := $(firstword $(wildcard $(NCCL_HOME)/lib/libnccl.so.2 $(NCCL_HOME)/lib/libnccl.so))
ifneq ($(and $(wildcard $(NCCL_HOME)/include/nccl.h),$(NCCL_LIB)),)
  NCCL_FLAGS := -DWARPKIT_HAVE_NCCL -I$(NCCL_HOME)/include -L$(dir $(NCCL_LIB)) -l:$(notdir $(NCCL_LIB)) \
                -Xlinker -rpath=$(dir $(NCCL_LIB))
endif

# --- sources --------------------------------------------------------------------------------
# Criterion tests: tests/*.cu and one level of folders mirroring include/warpkit/ (tests/device/...);
# tests/ptx, tests/sass, tests/compile_fail and tests/consumer hold inputs of tests/check.sh.
TEST_SRCS   := $(wildcard tests/*.cu) \
               $(filter-out tests/ptx/% tests/sass/% tests/compile_fail/% tests/consumer/%,$(wildcard tests/*/*.cu))
SAMPLE_SRCS := $(wildcard samples/*.cu)
# bench/*_shim.cu are C entry points for the Python peer scripts, built as shared libraries.
BENCH_SRCS  := $(filter-out %_shim.cu,$(wildcard bench/*.cu))
SHIM_SRCS   := $(wildcard bench/*_shim.cu)
HEADERS     := $(wildcard include/*.cuh include/warpkit/*.cuh include/warpkit/*/*.cuh include/warpkit/*/*/*.cuh)
TEST_BINS   := $(patsubst tests/%.cu,$(BUILD)/tests/%,$(TEST_SRCS))
SAMPLE_BINS := $(patsubst samples/%.cu,$(BUILD)/samples/%,$(SAMPLE_SRCS))
BENCH_BINS  := $(patsubst bench/%.cu,$(BUILD)/bench/%,$(BENCH_SRCS))
SHIM_LIBS   := $(patsubst bench/%_shim.cu,$(BUILD)/bench/libwarpkit_%.so,$(SHIM_SRCS))
PUBLIC_HEADERS := $(foreach h,$(HEADERS),$(if $(findstring /detail/,$(h)),,$(h)))
HEADER_OBJS := $(patsubst include/%.cuh,$(BUILD)/headers/%.o,$(HEADERS))
HEADERS_ALL := $(BUILD)/headers-all/all.o
NCCL_BINS   := $(BUILD)/tests/device/sharded_nccl $(BUILD)/samples/vocab_parallel_ce $(BUILD)/bench/sharded
$(NCCL_BINS): NVFLAGS += -lpthread $(NCCL_FLAGS)

.PHONY: all test demo bench sanitize headers criterion clean help install uninstall
.DELETE_ON_ERROR:

all: $(SAMPLE_BINS) $(TEST_BINS) $(BENCH_BINS) $(SHIM_LIBS)

help:
	@echo 'warpkit: header-only CUDA C toolkit'
	@echo 'Targets:'
	@echo '  make            build the samples, tests and benchmarks'
	@echo '  make demo       build and run every sample (each checks itself against the CPU)'
	@echo '  make test       build and run every check: Criterion tests (GPU tests skip where there is'
	@echo '                  no GPU), header, resource, compile-fail, PTX, SASS and consumer checks'
	@echo '  make sanitize   run the GPU tests under compute-sanitizer (memcheck, racecheck, synccheck, initcheck)'
	@echo '  make bench      build and run the benchmarks (tables on stdout, CSV in $(BUILD)/bench/)'
	@echo '  make headers    compile every public header on its own, and all of them for every target'
	@echo '  make install    install the headers, warpkit.pc and the CMake package (builds nothing)'
	@echo '  make uninstall  remove what make install put under $$(DESTDIR)$$(PREFIX)'
	@echo '  make clean      remove $(BUILD)/'
	@echo 'Variables:'
	@echo '  ARCH=sm_90            targets, comma separated; default: the installed GPU, else sm_75,sm_80,sm_90'
	@echo '  TEST_ARCH=sm_90       targets of the test binaries; default: ARCH, or its newest without a GPU'
	@echo '  BUILD=dir             build folder (default build)'
	@echo '  PREFIX=/usr/local     install prefix; DESTDIR=dir stages the install under dir'
	@echo '  V=1                   show the full commands'
	@echo '  NVCC=path             the CUDA compiler (default nvcc)'
	@echo '  EXTRA_NVFLAGS=...     more nvcc flags for samples, tests and benchmarks'
	@echo '  CRITERION_PREFIX=dir  use a Criterion installed under dir (include/ and lib/)'
	@echo '  NCCL_HOME=dir         NCCL (include/nccl.h, lib/) for the multi-GPU programs; default: the Python'
	@echo '                        package nvidia-nccl, else they build as stubs that skip'

# Criterion: install it from Debian's packages when missing and we are root, else say how.
criterion:
	@if [ ! -f "$(CRIT_HEADER)" ]; then \
	  if [ -n "$(CRITERION_PREFIX)" ]; then \
	    echo "warpkit: no Criterion under CRITERION_PREFIX=$(CRITERION_PREFIX)"; exit 1; \
	  fi; \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "warpkit: installing Criterion (apt-get install -y libcriterion-dev)"; \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libcriterion-dev) >/dev/null \
	      || exit 1; \
	  else \
	    echo "warpkit: Criterion is missing; install it with: sudo apt-get install -y libcriterion-dev"; exit 1; \
	  fi; \
	fi

# The Criterion check is a prerequisite only while Criterion is missing. Under make test it is
# then one of every build, not only of the test binaries: make starts later targets first while
# an earlier one waits for a prerequisite, and the test binaries (the slowest builds) must start
# first.
ifeq ($(wildcard $(CRIT_HEADER)),)
$(TEST_BINS): | criterion
ifneq ($(filter test,$(MAKECMDGOALS)),)
$(SAMPLE_BINS) $(HEADER_OBJS) $(HEADERS_ALL): | criterion
endif
endif

# Every binary keeps its ptxas resource report (.res) so tests/check.sh can prove no spills and
# no local memory; a failed build prints it. Each binary depends on its source and, through the
# dependency file nvcc writes beside it (-MD, included below), on the headers it includes: one
# header edit rebuilds only the binaries that include it. A first build has no dependency file and
# builds everything.
$(BUILD)/tests/%: tests/%.cu
	@mkdir -p $(@D)
	$(say) NVCC $@
	$(Q)$(NVCC) -O1 $(NVFLAGS) $(TEST_FLAGS) $(DEPFLAGS) $(CRIT_FLAGS) $< -o $@ -lcriterion > $@.res 2>&1 \
	  || { cat $@.res; exit 1; }

$(BUILD)/samples/%: samples/%.cu
	@mkdir -p $(@D)
	$(say) NVCC $@
	$(Q)$(NVCC) -O3 $(NVFLAGS) $(ARCH_FLAGS) $(DEPFLAGS) $< -o $@ > $@.res 2>&1 || { cat $@.res; exit 1; }

$(BUILD)/bench/libwarpkit_%.so: bench/%_shim.cu
	@mkdir -p $(@D)
	$(say) NVCC $@
	$(Q)$(NVCC) -O3 $(NVFLAGS) $(ARCH_FLAGS) $(DEPFLAGS) -shared -Xcompiler -fPIC $< -o $@ > $@.res 2>&1 \
	  || { cat $@.res; exit 1; }

$(BUILD)/bench/%: bench/%.cu
	@mkdir -p $(@D)
	$(say) NVCC $@
	$(Q)$(NVCC) -O3 $(NVFLAGS) $(ARCH_FLAGS) $(DEPFLAGS) $< -o $@ > $@.res 2>&1 || { cat $@.res; exit 1; }

# Every header, the internal ones (detail/, device/detail/) too, compiles on its own (a one-line .cu
# that includes it, exactly as a user's file would) for the newest target, and all public ones
# together for every listed target. A header's object depends on what the header includes (-MD);
# the all-headers object on every header, since its source lists them (an added header rebuilds it).
$(BUILD)/headers/%.o: include/%.cuh
	@mkdir -p $(@D)
	$(say) HEADER $<
	@echo '#include <$*.cuh>' > $(@:.o=.cu)
	$(Q)$(NVCC) $(CXXSTD) -Iinclude -arch=$(CHECK_ARCH) -Xcompiler -Wall,-Wextra $(DEPFLAGS) -c $(@:.o=.cu) -o $@

$(HEADERS_ALL): $(HEADERS)
	@mkdir -p $(@D)
	$(say) HEADERS "all public headers for $(ARCH)"
	@printf '#include <%s>\n' $(patsubst include/%,%,$(PUBLIC_HEADERS)) > $(@:.o=.cu)
	$(Q)$(NVCC) $(CXXSTD) -Iinclude $(ARCH_FLAGS) -Xcompiler -Wall,-Wextra $(DEPFLAGS) -c $(@:.o=.cu) -o $@

headers: $(HEADER_OBJS) $(HEADERS_ALL)

# Dependencies written by nvcc (-MD -MP): every header (and sample, for a bench or test that
# includes one) each binary and header object includes; -MP keeps a deleted header from stopping
# the build.
ifndef NOBUILD
-include $(wildcard $(BUILD)/tests/*.d $(BUILD)/tests/*/*.d $(BUILD)/samples/*.d $(BUILD)/bench/*.d \
                    $(BUILD)/headers/*.d $(BUILD)/headers/*/*.d $(BUILD)/headers/*/*/*.d \
                    $(BUILD)/headers/*/*/*/*.d $(BUILD)/headers-all/*.d)
endif

# The slowest builds (the test binaries) come first, so parallel jobs finish together. check.sh
# gets $(MAKE_COMMAND), not $(MAKE): a recipe line naming $(MAKE) runs even under make -n.
test: $(TEST_BINS) $(SAMPLE_BINS) $(HEADERS_ALL) $(HEADER_OBJS)
	@NVCC="$(NVCC)" CHECK_ARCH="$(CHECK_ARCH)" BUILD="$(BUILD)" MAKE="$(MAKE_COMMAND)" bash tests/check.sh $(TEST_BINS)

sanitize: $(TEST_BINS)
	@BUILD="$(BUILD)" bash tests/sanitize.sh $(TEST_BINS)

demo: $(SAMPLE_BINS)
	@bash samples/run.sh $(SAMPLE_BINS)

bench: $(BENCH_BINS) $(SHIM_LIBS)
	@BUILD="$(BUILD)" bash bench/run.sh $(BENCH_BINS)

clean:
	rm -rf $(BUILD)

# --- install ----------------------------------------------------------------------------------
# Header-only: installing copies files and builds nothing. The version comes from
# include/warpkit/version.cuh, the one place it is written.
version_part = $(shell sed -n 's/^\#define WARPKIT_VERSION_$(1)  *\([0-9][0-9]*\).*/\1/p' include/warpkit/version.cuh)
VERSION       = $(call version_part,MAJOR).$(call version_part,MINOR).$(call version_part,PATCH)
INSTALL_HDRS  = $(patsubst include/%,%,$(shell find include -type f \( -name '*.cuh' -o -name '*.h' \) | sort))
DEST          = $(DESTDIR)$(PREFIX)
CMAKE_DIR     = $(DEST)/lib/cmake/warpkit

install:
	@case "$(PREFIX)" in /*) ;; *) echo "warpkit: PREFIX must be an absolute path (got '$(PREFIX)')"; exit 1;; esac
	@case "$(VERSION)" in [0-9]*.[0-9]*.[0-9]*) ;; \
	  *) echo "warpkit: no version in include/warpkit/version.cuh"; exit 1;; esac
	$(say) INSTALL "warpkit $(VERSION) under $(DEST)"
	$(Q)for f in $(INSTALL_HDRS); do install -D -m 644 "include/$$f" "$(DEST)/include/$$f" || exit 1; done
	$(Q)install -d "$(DEST)/lib/pkgconfig" "$(CMAKE_DIR)" "$(DEST)/share/doc/warpkit"
	$(Q)sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|g' warpkit.pc.in > "$(DEST)/lib/pkgconfig/warpkit.pc"
	$(Q)install -m 644 cmake/warpkitConfig.cmake "$(CMAKE_DIR)/warpkitConfig.cmake"
	$(Q)sed -e 's|@VERSION@|$(VERSION)|g' cmake/warpkitConfigVersion.cmake.in > "$(CMAKE_DIR)/warpkitConfigVersion.cmake"
	$(Q)install -m 644 LICENSE CHANGELOG.md "$(DEST)/share/doc/warpkit/"

# Removes the files make install writes (this checkout's header list), then the folders they
# leave empty under include/warpkit.
uninstall:
	$(say) RM "warpkit under $(DEST)"
	$(Q)for f in $(INSTALL_HDRS); do rm -f "$(DEST)/include/$$f"; done
	$(Q)if [ -d "$(DEST)/include/warpkit" ]; then find "$(DEST)/include/warpkit" -depth -type d -empty -delete; fi
	$(Q)rm -f "$(DEST)/lib/pkgconfig/warpkit.pc" "$(CMAKE_DIR)/warpkitConfig.cmake" \
	  "$(CMAKE_DIR)/warpkitConfigVersion.cmake" "$(DEST)/share/doc/warpkit/LICENSE" \
	  "$(DEST)/share/doc/warpkit/CHANGELOG.md"
	$(Q)rmdir "$(CMAKE_DIR)" "$(DEST)/share/doc/warpkit" 2>/dev/null || true

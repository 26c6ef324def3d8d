# SPDX-License-Identifier: Apache-2.0
#
# gdrtrace build.  Each folder contributes a `module.mk` fragment that appends
# to the variables below; this file owns only the generic rules, so that
# independent pieces never edit the same lines.
#
#   make                 plugin + gdrtrace command
#   make check           set up Debian deps, build, run every test, also under ASan/UBSan and
#                        TSan (the CI command)
#   make demo            set up Debian deps, build, run the end-to-end demo
#   make bench           benchmarks, figures and ratios side by side
#   make SAN=asan check  sanitizer variants: asan (ASan+UBSan), tsan, ubsan
#   make format          reformat C sources (clang-format 14; make check verifies)
#   make install PREFIX=/usr/local DESTDIR=   (and uninstall; layout in dist/module.mk)
#   make deb             the Debian package, in build/deb/
#   make V=1 ...         print every command line (default: one short line per target)
#
# Variables a module.mk may append to:
#   PLUGIN_SRCS    sources linked into libnccl-net-gdrtrace.so
#   COMMON_SRCS    sources shared by the plugin, the tool and tests (format, fingerprint)
#   TOOL_SRCS      sources of the gdrtrace command
#   TESTS          names of test programs; each sets <name>_SRCS and optionally <name>_LIBS
#   TEST_SCRIPTS   shell tests run by the runner (exit 0 pass, 77 skip, else fail)
#   BENCHES        names of benchmark programs; each sets <name>_SRCS / <name>_LIBS
#   BENCH_SCRIPTS  shell benchmarks run by `make bench`
#   DEMO_SCRIPT    the script `make demo` runs

CC ?= gcc
ifeq ($(CC),cc)
CC := gcc
endif
SAN ?=
PREFIX ?= /usr/local
DESTDIR ?=
VERSION := 0.1.0

BUILD := build/$(if $(SAN),$(SAN),default)

# Quiet by default: one short line per target.  `make V=1` prints every
# command line.  Rules write $(call say,WHAT,$@) then $(Q)command.
V ?= 0
ifeq ($(V),1)
Q :=
say = @:
else
Q := @
say = @printf '  %-7s %s\n' '$(1)' '$(2)'
endif

CPPFLAGS_BASE := -D_GNU_SOURCE -Iinclude -I. -DGDRTRACE_VERSION=\"$(VERSION)\"
CFLAGS_BASE := -std=c11 -Wall -Wextra -Werror -g -fPIC -fvisibility=hidden \
               -Wno-missing-field-initializers
OPT ?= -O2

ifeq ($(SAN),asan)
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
OPT := -O1
else ifeq ($(SAN),ubsan)
SANFLAGS := -fsanitize=undefined -fno-sanitize-recover=all
else ifeq ($(SAN),tsan)
# gcc warns that TSan cannot model standalone fences (-Wtsan); the TSan suite
# covers the recorder, whose ring uses acquire/release operations only.
SANFLAGS := -fsanitize=thread
CFLAGS_BASE += -Wno-tsan
OPT := -O1
endif

CFLAGS := $(CFLAGS_BASE) $(OPT) $(SANFLAGS) $(EXTRA_CFLAGS)
CPPFLAGS := $(CPPFLAGS_BASE) $(EXTRA_CPPFLAGS)
LDFLAGS := $(SANFLAGS) $(EXTRA_LDFLAGS)
PLUGIN_LIBS := -ldl -lpthread
TOOL_LIBS := -ldl -lpthread -lzstd -lm

PLUGIN_SRCS :=
COMMON_SRCS :=
TOOL_SRCS :=
TESTS :=
TEST_SCRIPTS :=
BENCHES :=
BENCH_SCRIPTS :=
DEMO_SCRIPT :=

PLUGIN := $(BUILD)/libnccl-net-gdrtrace.so
TOOL := $(BUILD)/gdrtrace
# Object of each source, for module.mk fragments with rules of their own.
obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))

include $(sort $(filter-out build/% shared/%,$(wildcard */module.mk */*/module.mk */*/*/module.mk)))
# Fragments may define rules of their own; `make` alone still means `all`.
.DEFAULT_GOAL := all

.PHONY: all check check-all check-run demo demo-build demo-run deps-demo bench bench-run install clean deps tests benches fuzz \
        format
all: $(PLUGIN) $(TOOL)

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(call say,CC,$<)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@

# The SONAME is the file name NCCL dlopens (NCCL_NET_PLUGIN=gdrtrace ->
# libnccl-net-gdrtrace.so): the linker cache and Debian's tools need one, and
# no other name may ever be looked up.
$(PLUGIN): $(call obj,$(PLUGIN_SRCS) $(COMMON_SRCS)) plugin/exports.map Makefile
	$(call say,LD,$@)
	$(Q)$(CC) -shared -o $@ $(call obj,$(PLUGIN_SRCS) $(COMMON_SRCS)) \
	    -Wl,-soname,libnccl-net-gdrtrace.so -Wl,--version-script=plugin/exports.map -Wl,-z,defs $(LDFLAGS) $(PLUGIN_LIBS)

$(TOOL): $(call obj,$(TOOL_SRCS) $(COMMON_SRCS))
	$(call say,LD,$@)
	$(Q)$(CC) -o $@ $^ $(LDFLAGS) $(TOOL_LIBS)

# One link rule per test/bench program: <name>_SRCS, <name>_LIBS.
define prog_rule
$(BUILD)/$(2)/$(1): $$(call obj,$$($(1)_SRCS))
	@mkdir -p $$(dir $$@)
	$$(call say,LD,$$@)
	$$(Q)$$(CC) -o $$@ $$^ $$(LDFLAGS) $$($(1)_LIBS)
endef
$(foreach t,$(TESTS),$(eval $(call prog_rule,$(t),tests)))
$(foreach b,$(BENCHES),$(eval $(call prog_rule,$(b),bench)))

TEST_BINS := $(addprefix $(BUILD)/tests/,$(TESTS))
BENCH_BINS := $(addprefix $(BUILD)/bench/,$(BENCHES))

tests: all $(TEST_BINS)
benches: all $(BENCH_BINS)

# Entry points that also set up a fresh Debian machine.
deps:
	@scripts/install-deps.sh check
deps-demo:
	@scripts/install-deps.sh demo

# `make check` (and CI) runs, in one pass with one summary line: every test of
# the default build; every test again under ASan+UBSan, except the Soft-RoCE
# VM (its guest is not instrumented), the fuzzers (sanitized already), the
# docs check (no code of ours runs), the Debian package (built from source
# with Debian's flags, not from this build) and report's page in chromium (the
# browser's part; reader_html runs the page's code under ASan), the A/B
# calibration (its LD_PRELOAD injectors cannot come before ASan's runtime;
# the judge's code runs under ASan in test_ab and test-ab.sh); and
# the concurrent pieces (recorder ring, shim, sock, ABI refcount) under TSan;
# then that the run left /dev/shm as it found it (run-tests.sh --dev-shm).
# `make check-run` runs one build's suite (SAN=... picks it).
ASAN_SKIP_SCRIPTS := tests/vm/run-vm.sh tests/fuzz/run-fuzz.sh tests/fuzz/run-fuzz-oob.sh tests/doctor/run-fuzz-doctor.sh \
                     tests/docs/check-config-doc.sh tests/layers/check-layers.sh \
                     tests/format/check-format.sh tests/install/check-deb.sh tests/check-demo.sh \
                     tests/install/check-quickstart.sh tests/reader/check-examples.sh \
                     tests/reader/test-report-html.sh tests/ab/ab-calibration.sh
TSAN_TESTS := test_ring test_hist test_shim test_coll test_shim_untraced test_rec_format test_rec_sigkill \
              test_rec_sigbus test_rec_harness test_recfile_read test_sock test_abi
check: deps
	@$(MAKE) --no-print-directory check-all

check-all:
	@$(MAKE) --no-print-directory tests
	@$(MAKE) --no-print-directory SAN=asan tests
	@$(MAKE) --no-print-directory SAN=tsan tests
	@tests/run-tests.sh --dev-shm @build/default $(addprefix build/default/tests/,$(TESTS)) $(TEST_SCRIPTS) \
	    @build/asan $(addprefix build/asan/tests/,$(TESTS)) \
	        $(filter-out $(ASAN_SKIP_SCRIPTS),$(TEST_SCRIPTS)) \
	    @build/tsan $(addprefix build/tsan/tests/,$(filter $(TSAN_TESTS),$(TESTS)))

check-run: tests
	@BUILD=$(BUILD) SAN=$(SAN) tests/run-tests.sh $(TEST_BINS) $(TEST_SCRIPTS)

# The demo builds silently (its log kept; V=1 shows every command instead).
demo: deps-demo
	@mkdir -p $(BUILD)
	@if [ "$(V)" = 1 ]; then $(MAKE) --no-print-directory demo-build; \
	else echo "building gdrtrace in $(BUILD) (log: $(BUILD)/demo-build.log; V=1 prints the commands)"; \
	  $(MAKE) --no-print-directory demo-build >$(BUILD)/demo-build.log 2>&1 || \
	  { tail -n 30 $(BUILD)/demo-build.log; echo "build failed; log: $(BUILD)/demo-build.log"; exit 1; }; fi
	@BUILD=$(BUILD) $(DEMO_SCRIPT)

demo-build: all
demo-run: demo-build
	@BUILD=$(BUILD) $(DEMO_SCRIPT)

bench: deps
	@$(MAKE) --no-print-directory bench-run OPT=-O2 SAN=

bench-run: benches
	@set -e; for b in $(BENCH_BINS); do echo "== $$b"; BUILD=$(BUILD) $$b; done; \
	for s in $(BENCH_SCRIPTS); do echo "== $$s"; BUILD=$(BUILD) $$s; done

# Reformat every tracked C file with the pinned clang-format (see tests/format).
format:
	@git ls-files '*.c' '*.h' | xargs clang-format-14 --style=file -i

clean:
	rm -rf build

-include $(shell find $(BUILD) -name "*.d" 2>/dev/null)

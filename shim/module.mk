# SPDX-License-Identifier: Apache-2.0
# shim/ — the recorder writer and the instrumenting wrapper.
SHIM_SRCS := shim/shim.c shim/recorder.c shim/rec_host.c shim/sigbus.c shim/ring.c shim/clock.c \
             shim/coll.c
PLUGIN_SRCS += $(SHIM_SRCS)
# Everything a shim test links: the shim and what it uses from common/.
# Recorders are checked with the reader's validator (tools/lib/recfile.c).
SHIM_TEST_SRCS := $(SHIM_SRCS) $(FINGERPRINT_SRCS) $(RECFILE_SRCS) $(BASE_SRCS)

TESTS += test_rec_fingerprint
test_rec_fingerprint_SRCS := tests/unit/test_rec_fingerprint.c $(FINGERPRINT_SRCS)
test_rec_fingerprint_LIBS := -ldl -lcmocka

# The ring on its own (no recorder), so it also builds and runs under TSan.
TESTS += test_ring
test_ring_SRCS := tests/unit/test_ring.c shim/ring.c
test_ring_LIBS := -lcmocka -lpthread


TESTS += test_shim
test_shim_SRCS := tests/unit/test_shim.c $(SHIM_TEST_SRCS)
test_shim_LIBS := -lcmocka -lpthread -ldl

TESTS += test_rec_format
test_rec_format_SRCS := tests/unit/test_rec_format.c $(SHIM_TEST_SRCS)
test_rec_format_LIBS := -lcmocka -lpthread -ldl

# The host-pressure section against /proc, read by the test itself.
TESTS += test_rec_host
test_rec_host_SRCS := tests/unit/test_rec_host.c $(SHIM_TEST_SRCS)
test_rec_host_LIBS := -lpthread -ldl

TESTS += test_rec_sigkill
test_rec_sigkill_SRCS := tests/unit/test_rec_sigkill.c $(SHIM_TEST_SRCS)
test_rec_sigkill_LIBS := -lpthread -ldl

# Benchmarks: hot-path costs next to an LTTng-UST tracepoint (when installed).
REC_CORE_SRCS := shim/recorder.c shim/rec_host.c shim/sigbus.c shim/ring.c shim/clock.c $(FINGERPRINT_SRCS) $(BASE_SRCS)
BENCHES += bench_rec
bench_rec_SRCS := tests/bench/bench_rec.c $(REC_CORE_SRCS) shim/shim.c shim/coll.c
bench_rec_LIBS := -lpthread -ldl
ifneq ($(wildcard /usr/include/lttng/tracepoint.h /usr/include/*/lttng/tracepoint.h),)
bench_rec_LIBS += -llttng-ust -llttng-ust-common
endif
BENCH_SCRIPTS += tests/bench/bench_rec_lttng.sh

# sock bandwidth, recorder on vs off, same run (recursive: SOCK_SRCS is plugin/sock's).
BENCHES += bench_rec_bw
bench_rec_bw_SRCS = tests/bench/bench_rec_bw.c $(SOCK_SRCS) $(OOB_SRCS) $(SHIM_SRCS) $(FINGERPRINT_SRCS) $(BASE_SRCS)
bench_rec_bw_LIBS := -lpthread -ldl

# Integration: the harness drives the built plugin; its recorders are checked.
TESTS += test_rec_harness
test_rec_harness_SRCS := tests/unit/test_rec_harness.c $(RECFILE_SRCS)
test_rec_harness_LIBS :=

TESTS += test_shim_untraced
test_shim_untraced_SRCS := tests/unit/test_shim_untraced.c $(SHIM_TEST_SRCS)
test_shim_untraced_LIBS := -lcmocka -lpthread -ldl

# A truncated/unlinked/replaced recorder does not kill the job; foreign
# SIGBUS faults reach the application's handler unchanged (shim/sigbus.c).
TESTS += test_rec_sigbus
test_rec_sigbus_SRCS := tests/unit/test_rec_sigbus.c $(SHIM_TEST_SRCS)
test_rec_sigbus_LIBS := -lpthread -ldl

TESTS += test_clock_env
test_clock_env_SRCS := tests/unit/test_clock_env.c shim/clock.c $(BASE_SRCS)
test_clock_env_LIBS := -lpthread

# The plugin's SIGBUS guard leaves with the library (NCCL dlcloses it).
TESTS += test_plugin_unload
test_plugin_unload_SRCS := tests/unit/test_plugin_unload.c
test_plugin_unload_LIBS := -ldl



# The collective recorder from two threads and at its edges (also under TSan).
TESTS += test_coll
test_coll_SRCS := tests/unit/test_coll.c $(SHIM_TEST_SRCS)
test_coll_LIBS := -lcmocka -lpthread -ldl

# SPDX-License-Identifier: Apache-2.0
# shim/ — the recorder writer, the instrumenting wrapper, the node fingerprint.
COMMON_SRCS += shim/fingerprint.c
PLUGIN_SRCS += shim/shim.c

TESTS += test_rec_fingerprint
test_rec_fingerprint_SRCS := tests/unit/test_rec_fingerprint.c shim/fingerprint.c
test_rec_fingerprint_LIBS := -ldl -lcmocka

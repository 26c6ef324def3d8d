# SPDX-License-Identifier: Apache-2.0
# plugin/oob: the out-of-band TCP setup shared by sock and ib (handle, hello,
# pending-connection table, interface selection) and its unit test.
# Read after plugin/ib/module.mk (sorted order): ib's lists that need it use =.
OOB_SRCS := plugin/oob/oob.c plugin/oob/oob_if.c
PLUGIN_SRCS += $(OOB_SRCS)

TESTS += test_oob
test_oob_SRCS := tests/unit/test_oob.c $(OOB_SRCS) $(BASE_SRCS)
test_oob_LIBS := -lcmocka -lpthread

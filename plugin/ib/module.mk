# SPDX-License-Identifier: Apache-2.0
# ib: the registration policy + MR cache (plugin/reg), the RDMA verbs transport
# (plugin/ib) and their unit tests, with the dl tables from common/.


REG_SRCS := plugin/reg/gt_reg.c plugin/reg/gt_reg_verbs.c
PLUGIN_SRCS += $(REG_SRCS)


# OOB_SRCS (plugin/oob/module.mk) is read after this file: lists naming it use =.
IB_SRCS := plugin/ib/ib_dev.c plugin/ib/ib_conn.c plugin/ib/ib_data.c
PLUGIN_SRCS += $(IB_SRCS)

TESTS += test_ib_dev
test_ib_dev_SRCS = tests/unit/test_ib_dev.c $(IB_SRCS) $(OOB_SRCS) $(REG_SRCS) $(DL_SRCS) $(BASE_SRCS)
test_ib_dev_LIBS := -ldl -lpthread -lcmocka -rdynamic

# Connection setup over loopback TCP with fake verbs: stray connections.
TESTS += test_ib_conn
test_ib_conn_SRCS = tests/unit/test_ib_conn.c $(IB_SRCS) $(OOB_SRCS) $(REG_SRCS) $(DL_SRCS) \
                    $(BASE_SRCS)
test_ib_conn_LIBS := -ldl -lpthread -lcmocka

# The data path against an in-process RC model (tests/unit/fake_rc.h): work
# requests and completions per message as NCCL's IB transport makes them.
TESTS += test_ib_data
test_ib_data_SRCS = tests/unit/test_ib_data.c $(IB_SRCS) $(OOB_SRCS) $(REG_SRCS) $(DL_SRCS) \
                    $(BASE_SRCS)
test_ib_data_LIBS := -ldl -lpthread -lcmocka


# SPDX-License-Identifier: Apache-2.0
# ib: the registration policy + MR cache (plugin/reg), the RDMA verbs transport
# (plugin/ib) and their unit tests, with the dl tables from common/.

TESTS += test_dl
test_dl_SRCS := tests/unit/test_dl.c $(DL_SRCS) $(BASE_SRCS)
test_dl_LIBS := -ldl -lpthread -lcmocka

REG_SRCS := plugin/reg/gt_reg.c plugin/reg/gt_reg_verbs.c
PLUGIN_SRCS += $(REG_SRCS)

TESTS += test_reg
test_reg_SRCS := tests/unit/test_reg.c $(REG_SRCS) $(DL_SRCS) $(BASE_SRCS)
test_reg_LIBS := -ldl -lpthread -lcmocka

# OOB_SRCS (plugin/oob/module.mk) is read after this file: lists naming it use =.
IB_SRCS := plugin/ib/ib_dev.c plugin/ib/ib_conn.c plugin/ib/ib_data.c
PLUGIN_SRCS += $(IB_SRCS)

TESTS += test_ib_dev
test_ib_dev_SRCS = tests/unit/test_ib_dev.c $(IB_SRCS) $(OOB_SRCS) $(REG_SRCS) $(DL_SRCS) $(BASE_SRCS)
test_ib_dev_LIBS := -ldl -lpthread -lcmocka

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

TESTS += test_dl_cuda
test_dl_cuda_SRCS := tests/unit/test_dl_cuda.c $(REG_SRCS) $(DL_SRCS) $(BASE_SRCS)
test_dl_cuda_LIBS := -ldl -lpthread

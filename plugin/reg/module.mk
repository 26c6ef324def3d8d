# SPDX-License-Identifier: Apache-2.0
# plugin/reg/: the registration policy.  Its sources (REG_SRCS) are listed in
# plugin/ib/module.mk, read first, where ib's := lists need them; its tests are here.
TESTS += test_reg
test_reg_SRCS = tests/unit/test_reg.c $(REG_SRCS) $(DL_SRCS) $(BASE_SRCS)
test_reg_LIBS := -ldl -lpthread -lcmocka

# SPDX-License-Identifier: Apache-2.0
# plugin/gpumem: the GPU-memory validation layer over sock (GDRTRACE_GPUMEM=1)
# and its unit test with a fake CUDA table.  REG_SRCS, SOCK_SRCS and OOB_SRCS
# are set by later fragments: lists naming them use =.
GPUMEM_SRCS := plugin/gpumem/gpumem.c plugin/gpumem/gm_reg.c
PLUGIN_SRCS += $(GPUMEM_SRCS)

TESTS += test_gpumem
test_gpumem_SRCS = tests/unit/test_gpumem.c $(GPUMEM_SRCS) $(SOCK_SRCS) $(OOB_SRCS) $(REG_SRCS) \
                   $(DL_SRCS) $(BASE_SRCS)
test_gpumem_LIBS := -ldl -lpthread -lcmocka

# The judging half of tests/gpu/gpumem.sh (GPU machine only), on canned runs.
TEST_SCRIPTS += tests/gpu/test-gpumem-judge.sh

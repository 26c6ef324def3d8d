# SPDX-License-Identifier: Apache-2.0
# The exported ncclNetPlugin_v6 … _v12 and ncclProfiler_v1 … _v6 tables and the
# process-wide core.
ABI_SRCS := plugin/core.c plugin/abi/abi_common.c \
            $(foreach v,6 7 8 9 10 11 12,plugin/abi/abi_v$(v).c) \
            plugin/abi/prof_common.c $(foreach v,1 2 3 4 5 6,plugin/abi/prof_v$(v).c)
PLUGIN_SRCS += $(ABI_SRCS)

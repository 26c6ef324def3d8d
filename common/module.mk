# SPDX-License-Identifier: Apache-2.0
# common/: what more than one layer uses (logging, strict env parsing, the
# dlopen'd verbs/CUDA tables, the node fingerprint, histograms, on-disk code names,
# the internal network interface).  Included first (module.mk files are read
# in sorted order), so every later fragment may use these lists with :=.
BASE_SRCS := common/log.c common/env.c common/env_known.c common/settings.c common/codes.c common/net_fail.c \
             common/nccl_env.c common/nccl_cfg.c common/callout.c common/procid.c
DL_SRCS := common/dl/gt_ibv.c common/dl/gt_cuda.c
FINGERPRINT_SRCS := common/fingerprint.c
COMMON_SRCS += $(BASE_SRCS) $(FINGERPRINT_SRCS)
# The one validator of the recorder format: the reader's parser, which the
# writer's tests link too.  Not in the plugin.
# recfact.c decides the recorder's facts (policy, emulated) at parse.
RECFILE_SRCS := tools/lib/recfile.c tools/lib/recfile_read.c tools/lib/regfile.c tools/lib/liveness.c \
                tools/lib/recfact.c common/codes.c common/procid.c
PLUGIN_SRCS += $(DL_SRCS)

# Strict GDRTRACE_* parsing: base 10, one WARN naming the variable, the default.
TESTS += test_env
test_env_SRCS := tests/unit/test_env.c $(BASE_SRCS)
test_env_LIBS := -lcmocka

TESTS += test_codes
test_codes_SRCS := tests/unit/test_codes.c common/codes.c
test_codes_LIBS := -lcmocka

TESTS += test_settings
test_settings_SRCS := tests/unit/test_settings.c $(BASE_SRCS)
test_settings_LIBS := -lcmocka -lpthread

# NCCL's variables as NCCL reads them: environment, conf files, precedence.
TESTS += test_nccl_env
test_nccl_env_SRCS := tests/unit/test_nccl_env.c $(BASE_SRCS)
test_nccl_env_LIBS := -lcmocka -lpthread -ldl

# NCCL's own GPU Direct and transport settings, read as NCCL reads them and
# recorded by the writer (common/nccl_cfg.c).
TESTS += test_nccl_cfg
test_nccl_cfg_SRCS = tests/unit/test_nccl_cfg.c $(SHIM_TEST_SRCS)
test_nccl_cfg_LIBS := -lcmocka -lpthread -ldl

TESTS += test_hist
test_hist_SRCS = tests/unit/test_hist.c
test_hist_LIBS := -lcmocka -lpthread -lm

TESTS += test_dl
test_dl_SRCS = tests/unit/test_dl.c $(DL_SRCS) $(BASE_SRCS)
test_dl_LIBS := -ldl -lpthread -lcmocka

TESTS += test_dl_cuda
test_dl_cuda_SRCS = tests/unit/test_dl_cuda.c $(REG_SRCS) $(DL_SRCS) $(BASE_SRCS)
test_dl_cuda_LIBS := -ldl -lpthread

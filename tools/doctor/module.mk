# SPDX-License-Identifier: Apache-2.0
# doctor: `gdrtrace doctor` (runbook gates 0-2 on this node).  It shares the
# plugin's dlopen'd verbs/CUDA tables (plugin/dl) and the recorder's node
# fingerprint (common/fingerprint.c, in COMMON_SRCS); the link rule's $^
# drops duplicates if another tool lists the dl sources too.
DOCTOR_SRCS := tools/doctor/inventory.c tools/doctor/topo.c tools/doctor/live.c \
               tools/doctor/checks.c tools/doctor/report.c tools/doctor/json.c \
               tools/doctor/compare.c
TOOL_SRCS += $(DOCTOR_SRCS) tools/doctor/cmd.c $(DL_SRCS)

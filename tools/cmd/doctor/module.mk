# SPDX-License-Identifier: Apache-2.0
# doctor: `gdrtrace doctor` (runbook gates 0-2 on this node).  It shares the
# plugin's dlopen'd verbs/CUDA tables (plugin/dl) and the recorder's node
# fingerprint (common/fingerprint.c, in COMMON_SRCS); the link rule's $^
# drops duplicates if another tool lists the dl sources too.
DOCTOR_SRCS := tools/cmd/doctor/inventory.c tools/cmd/doctor/topo.c tools/cmd/doctor/live.c \
               tools/cmd/doctor/checks.c tools/cmd/doctor/doctor_text.c tools/cmd/doctor/doctor_json.c \
               tools/cmd/doctor/compare.c
TOOL_SRCS += $(DOCTOR_SRCS) tools/cmd/doctor/cmd.c $(DL_SRCS)

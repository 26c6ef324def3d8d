#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# harness_v10.sh — drives the plugin through ncclNetPlugin_v10 as NCCL does:
# data both ways between two processes (every byte checked) and bad input.
# v9 and v10 also send payloads on the control socket (no data sockets).
export GDRTRACE_SOCKET_NSOCKS=${GDRTRACE_SOCKET_NSOCKS:-0}
exec "$(dirname "$0")/run_harness.sh" 10

#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# harness_v10.sh — drives the plugin through ncclNetPlugin_v10 as NCCL does:
# data both ways between two processes (every byte checked) and bad input.
# v10 keeps eager sends over 1 data socket covered (the default is none:
# payloads on the control socket, as v6, v8 and v12 run).
export GDRTRACE_SOCKET_NSOCKS=${GDRTRACE_SOCKET_NSOCKS:-1}
exec "$(dirname "$0")/run_harness.sh" 10

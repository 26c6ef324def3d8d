#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# harness_v9.sh — drives the plugin through ncclNetPlugin_v9 as NCCL does:
# data both ways between two processes (every byte checked) and bad input.
# Odd versions run the sock transport with grouped receives allowed (the
# rendezvous protocol, multi-receives exercised); even ones with the default
# single receives (eager sends).
export GDRTRACE_SOCKET_MAXRECVS=${GDRTRACE_SOCKET_MAXRECVS:-8}
# v9 also sends payloads on the control socket (no data sockets, the
# default) with the rendezvous.
export GDRTRACE_SOCKET_NSOCKS=${GDRTRACE_SOCKET_NSOCKS:-0}
exec "$(dirname "$0")/run_harness.sh" 9

#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# harness_v11.sh — drives the plugin through ncclNetPlugin_v11 as NCCL does:
# data both ways between two processes (every byte checked) and bad input.
# Odd versions run the sock transport with grouped receives allowed (the
# rendezvous protocol, multi-receives exercised); even ones with the default
# single receives (eager sends).
export GDRTRACE_SOCKET_MAXRECVS=${GDRTRACE_SOCKET_MAXRECVS:-8}
# v11 also stripes large messages over 3 data sockets.
export GDRTRACE_SOCKET_NSOCKS=${GDRTRACE_SOCKET_NSOCKS:-3}
exec "$(dirname "$0")/run_harness.sh" 11

#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# harness_v9.sh — drives the plugin through ncclNetPlugin_v9 as NCCL does:
# data both ways between two processes (every byte checked) and bad input.
exec "$(dirname "$0")/run_harness.sh" 9

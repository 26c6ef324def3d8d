#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# mps.sh — a private CUDA MPS control daemon for the two-ranks-on-one-GPU
# runs.  Without MPS the two processes' kernels time-slice the GPU, and
# NCCL's spinning kernels then hold the GPU while they wait for the network:
# single runs of the same transport scatter by ±25 %.  Under MPS both ranks'
# kernels run at once, so what is left to measure is the transport.  The
# daemon's pipe and log folders are our own (nothing system-wide changes) and
# the GPU's compute mode is left as it is.
#
#   . tests/gpu/mps.sh start DIR    # exports CUDA_MPS_PIPE_DIRECTORY/LOG_DIRECTORY
#   tests/gpu/mps.sh stop DIR
#
# Exit (start): 0 running and a client was served, 1 no MPS on this machine
# or the daemon did not start (its log is printed).
mps_start() {
    local d=$1
    command -v nvidia-cuda-mps-control > /dev/null || { echo "mps.sh: no nvidia-cuda-mps-control" >&2; return 1; }
    mkdir -p "$d/pipe" "$d/log"
    export CUDA_MPS_PIPE_DIRECTORY=$d/pipe CUDA_MPS_LOG_DIRECTORY=$d/log
    nvidia-cuda-mps-control -d || { cat "$d"/log/* >&2 2>/dev/null; return 1; }
    sleep 1
    echo "mps.sh: MPS control daemon started (pipes in $d/pipe)"
}
mps_stop() {
    CUDA_MPS_PIPE_DIRECTORY=$1/pipe nvidia-cuda-mps-control <<< quit > /dev/null 2>&1
    sleep 1
    echo "mps.sh: stopped; server log:"; tail -5 "$1/log/server.log" 2>/dev/null
}
case "${1:-}" in
start) mps_start "${2:?DIR}" ;;
stop) mps_stop "${2:?DIR}" ;;
*) echo "usage: mps.sh start|stop DIR" >&2; false ;;
esac

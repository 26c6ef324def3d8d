# shellcheck shell=bash
# SPDX-License-Identifier: Apache-2.0
# runlib.sh — helpers shared by the GPU-machine scripts (run-all.sh,
# gpumem.sh); sourced, never run.  They use the caller's globals START,
# RESULTS (array) and FAILED.
#
#   step NAME STATUS          records PASS/FAIL (STATUS 0 = pass) with the time
#   run_env DIR TIMEOUT DEBUG "VAR=V ..." CMD...
#                             one run with its own logs in DIR: command.txt,
#                             stdout.txt, stderr.txt, rc, nccl.<host>.<pid>.log
#                             (DEBUG info: NCCL_DEBUG=INFO INIT,NET; else WARN)
#   torch_nccl_dir            the folder of the libnccl.so.2 PyTorch really maps

step() {
    local s=PASS
    # shellcheck disable=SC2034 # FAILED is the caller's
    [ "$2" -eq 0 ] || { s=FAIL; FAILED=1; }
    RESULTS+=("$s  $1")
    echo "== [$s] $1 ($(($(date +%s) - START)) s)"
}

run_env() {
    local d=$1 to=$2 dbg=$3 vars=$4
    shift 4
    mkdir -p "$d/rec" "$d/regcount"
    local dbgenv="NCCL_DEBUG=WARN"
    [ "$dbg" = info ] && dbgenv="NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET"
    echo "$vars $dbgenv NCCL_DEBUG_FILE=$d/nccl.%h.%p.log $*" > "$d/command.txt"
    # shellcheck disable=SC2086 # $vars and $dbgenv are lists of VAR=VALUE words
    env $vars $dbgenv NCCL_DEBUG_FILE="$d/nccl.%h.%p.log" \
        timeout "$to" "$@" > "$d/stdout.txt" 2> "$d/stderr.txt"
    local rc=$?
    echo "$rc" > "$d/rc"
    return $rc
}

torch_nccl_dir() {
    python3 - <<'PY' 2>/dev/null
import os, torch
torch.cuda.nccl.version()
for line in open("/proc/self/maps"):
    p = line.split()[-1]
    if "libnccl.so" in p:
        print(os.path.dirname(p)); break
else:
    import glob, site
    for d in site.getsitepackages():
        for f in glob.glob(os.path.join(d, "nvidia", "nccl", "lib", "libnccl.so.2")):
            print(os.path.dirname(f)); raise SystemExit
PY
}

#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# postmortem.sh — a crash inside code gdrtrace calls, and a refusal, are
# facts in the recorder (issues 23 and 19.1), read back by `gdrtrace verdict`
# and `gdrtrace ls` from the recorder alone:
#  1. The stand-in inner plugin dies of SIGSEGV in its init (v11 and v8) and,
#     separately, in its connect: the harness's processes die, and verdict
#     (exit 14, ERROR) and ls name the call, the plugin's path and ABI, the
#     time and the process.
#  2. GDRTRACE_TRANSPORT=ib over a verbs library (GDRTRACE_IBVERBS_LIB, the dl
#     seam) whose device enumeration dies: the same, naming libibverbs.
#  3. GDRTRACE_TRANSPORT=ib with no RDMA device (the stand-in library has
#     none; and this machine's own, when it has none): the plugin refuses,
#     and verdict says BYPASSED (exit 16) quoting the reason.
#  4. An invalid GDRTRACE_TRANSPORT is not a refusal: WARN, auto, data moves.
set -u
BUILD=${BUILD:-build/default}
harness="$BUILD/harness/harness"
fake="$PWD/$BUILD/tests/libnccl-net-fakeinner.so"
fakeibv="$PWD/$BUILD/tests/libfakeibverbs.so"
gdrtrace="$BUILD/gdrtrace"
for f in "$harness" "$fake" "$fakeibv" "$gdrtrace"; do
    [ -e "$f" ] || { echo "FAIL: $f is not built"; exit 1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
export GDRTRACE_SOCKET_IFNAME=lo
unset GDRTRACE_TRANSPORT GDRTRACE_INNER GDRTRACE_INNER_VERSION GDRTRACE_IBVERBS_LIB GDRTRACE_DISABLE

# check NAME DIR EXIT PATTERN...: verdict exits EXIT and verdict and ls both
# print every PATTERN (fixed strings); a PATTERN "v:X" is verdict's only.
check() {
    local name=$1 dir=$2 want=$3; shift 3
    local v l rc
    v=$("$gdrtrace" verdict "$dir" 2>&1); rc=$?
    v=$(tr -s ' \n' '  ' <<<"$v") # the evidence wraps at 100 columns: match across lines
    l=$("$gdrtrace" ls "$dir" 2>&1)
    if [ "$rc" -ne "$want" ]; then
        echo "FAIL: $name: verdict exited $rc, expected $want"; echo "$v"; fail=1; return
    fi
    local p
    for p in "$@"; do
        local verdict_only=0
        case $p in v:*) verdict_only=1; p=${p#v:} ;; esac
        if ! grep -qF -- "$p" <<<"$v"; then
            echo "FAIL: $name: verdict does not say '$p'"; echo "$v"; fail=1; return
        fi
        if [ $verdict_only = 0 ] && ! grep -qF -- "$p" <<<"$l"; then
            echo "FAIL: $name: ls does not say '$p'"; echo "$l"; fail=1; return
        fi
    done
    echo "ok: $name: verdict exit $rc, verdict and ls say: $*"
}

# run NAME DIR CRASH ABI ENV...: the harness (driving ABI v<ABI>) under ENV
# must fail, its processes killed by SIGSEGV when CRASH=1.
run() {
    local name=$1 dir=$2 crash=$3 abi=$4; shift 4
    mkdir -p "$dir"
    local log="$dir.log"
    env GDRTRACE_DIR="$dir" "$@" "$harness" --abi "$abi" --data-only --iters 1 >"$log" 2>&1
    local rc=$?
    if [ $rc -eq 0 ]; then
        echo "FAIL: $name: the harness passed"; fail=1; return 1
    fi
    # (under ASan the sanitizer reports the SEGV and ends the process itself)
    if [ "$crash" = 1 ] && ! grep -q "killed by signal 11\|AddressSanitizer: SEGV" "$log"; then
        echo "FAIL: $name: the processes did not die of SIGSEGV"; tail -n 10 "$log"; fail=1
        return 1
    fi
    if ! ls "$dir"/gdrtrace.*.rec >/dev/null 2>&1; then
        echo "FAIL: $name: no recorder written"; fail=1; return 1
    fi
    return 0
}

# 1. the inner plugin crashes in init (both of its ABIs), then in connect
for v in 11 8; do
    d="$tmp/init-v$v"
    run "inner init v$v" "$d" 1 "$v" GDRTRACE_TRANSPORT=inner GDRTRACE_INNER="$fake" \
        GDRTRACE_INNER_VERSION=$v FAKEINNER_CRASH=init &&
        check "inner init v$v" "$d" 14 "crashed inside the inner plugin's init ($fake, ABI v$v)" \
            "called at $(date -u +%Y-%m-%d)" "host $(hostname | cut -c1-63)"
done
d="$tmp/connect"
run "inner connect" "$d" 1 11 GDRTRACE_TRANSPORT=inner GDRTRACE_INNER="$fake" \
    FAKEINNER_CRASH=connect &&
    check "inner connect" "$d" 14 "crashed inside the inner plugin's connect ($fake, ABI v11" \
        "v:ERROR"

# 2. ib: the verbs library dies in device enumeration
d="$tmp/ibv"
run "ib enumeration" "$d" 1 11 GDRTRACE_TRANSPORT=ib GDRTRACE_IBVERBS_LIB="$fakeibv" \
    FAKEIBV_CRASH=devices &&
    check "ib enumeration" "$d" 14 "crashed inside libibverbs' device enumeration ($fakeibv)"

# 3. ib refused: no RDMA device
d="$tmp/refused"
run "ib refused" "$d" 0 11 GDRTRACE_TRANSPORT=ib GDRTRACE_IBVERBS_LIB="$fakeibv" &&
    check "ib refused" "$d" 16 "v:BYPASSED" "the plugin refused this process" \
        '"GDRTRACE_TRANSPORT=ib: ib unavailable (ib: no active RDMA port' "(no-rdma-device)"
if [ -n "$(ls /sys/class/infiniband 2>/dev/null)" ]; then
    echo "skip: this machine has RDMA devices: its own refusal cannot be shown"
else
    d="$tmp/refused-here"
    run "ib refused here" "$d" 0 11 GDRTRACE_TRANSPORT=ib &&
        check "ib refused on this machine" "$d" 16 "v:BYPASSED" "ib: no active RDMA port"
fi

# 4. an invalid value is no refusal: WARN, default (auto), data moves
d="$tmp/invalid"
mkdir -p "$d"
if GDRTRACE_DIR="$d" GDRTRACE_TRANSPORT=carrier-pigeon GDRTRACE_IBVERBS_LIB="$fakeibv" \
    "$harness" --abi 11 --data-only --iters 2 >"$d.log" 2>&1 &&
    grep -q "carrier-pigeon" "$d.log"; then
    v=$("$gdrtrace" verdict "$d" 2>&1)
    if grep -q "BYPASSED\|refused" <<<"$v"; then
        echo "FAIL: an invalid GDRTRACE_TRANSPORT was recorded as a refusal"; echo "$v"; fail=1
    else
        echo "ok: an invalid GDRTRACE_TRANSPORT warns and runs on the default, no refusal"
    fi
else
    echo "FAIL: invalid GDRTRACE_TRANSPORT: the harness failed or did not warn"
    tail -n 10 "$d.log"; fail=1
fi
exit $fail

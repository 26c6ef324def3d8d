#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# harness_prof.sh — drives the built plugin's ncclProfiler_v1 … _v6 as NCCL
# does (tests/harness/prof_harness.c: its script of events) in each mode of
# GDRTRACE_COLL, and checks the recorder's collective sections (read by
# collstat through the reader's validator):
#   kernel, v4-v6  byte-exact: every duration comes from the GPU timestamps
#                  the script gives, so counts, bytes, algo/proto mix and
#                  every percentile are known
#   kernel, v1-v3  no GPU timestamps in these versions: counts exact, times
#                  on the host clock
#   proxy          counts, bytes and mix exact; every timed operation at least
#                  the 2 ms its children lived (a lower bound: no upper bound
#                  on a shared machine)
#   off            an empty mask to NCCL, no collective entry, the status says
#                  the mode
set -u
BUILD=${BUILD:-build/default}
SO=$BUILD/libnccl-net-gdrtrace.so
PH=$BUILD/tests/prof_harness
CS=$BUILD/tests/collstat
for f in "$SO" "$PH" "$CS"; do
    [ -x "$f" ] || [ -f "$f" ] || { echo "FAIL: $f not built (make tests)"; exit 1; }
done
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
pass() { echo "ok   $*"; }
fail() { echo "FAIL $*"; fails=$((fails + 1)); }

# run V MODE: the harness once; $T/V-MODE/out.txt (its stdout), cs.tsv
run() {
    local d=$T/$1-$2
    mkdir -p "$d/rec"
    GDRTRACE_COLL=$2 GDRTRACE_DIR=$d/rec "$PH" "$SO" "$1" > "$d/out.txt" 2> "$d/err.txt" ||
        { fail "v$1 $2: prof_harness exited $?: $(tail -2 "$d/err.txt")"; return 1; }
    "$CS" "$d"/rec/*.rec > "$d/cs.tsv" 2> "$d/cs.err" ||
        { fail "v$1 $2: collstat: $(cat "$d/cs.err")"; return 1; }
}
# cells FILE FIELDS...: the cell lines, only the named fields, in order
cells() {
    local f=$1
    shift
    awk -F'\t' -v want="$*" '$1 == "cell" {
        n = split(want, w, " "); line = ""
        for (i = 3; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = substr($i, length(kv[1]) + 2) }
        for (i = 1; i <= n; i++) line = line (i > 1 ? " " : "") w[i] "=" v[w[i]]
        print line }' "$f"
}
comm() { # comm FILE FIELDS...: the comm line's named fields
    local f=$1
    shift
    awk -F'\t' -v want="$*" '$1 == "comm" {
        n = split(want, w, " "); line = ""
        for (i = 3; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = substr($i, length(kv[1]) + 2) }
        for (i = 1; i <= n; i++) line = line (i > 1 ? " " : "") w[i] "=" v[w[i]]
        print line }' "$f"
}

# What the script implies, per version family.  bytes of AllGather: x nranks
# (4) where init gave it (v4+), the count alone before.
expect_counts() { # v
    local ag_log2=14 ag_bytes=49152 rs_log2=14 rs_bytes=16384
    [ "$1" -le 3 ] && ag_log2=12 ag_bytes=12288 rs_log2=12 rs_bytes=4096
    for i in 0 1 2 3 4 5 6 7 8 9; do
        local p=LL
        [ $i -ge 5 ] && p=SIMPLE
        echo "func=AllReduce log2=$((10 + i)) count=1 bytes=$((1024 << i)) timed=1 algo_proto=RING_$p:1"
    done
    echo "func=AllGather log2=$ag_log2 count=3 bytes=$ag_bytes timed=3 algo_proto=TREE_LL128:3"
    echo "func=Send log2=6 count=1 bytes=100 timed=1 algo_proto=unknown_unknown:1"
    echo "func=Broadcast log2=9 count=1 bytes=512 timed=0 algo_proto=RING_SIMPLE:1"
    echo "func=ReduceScatter log2=$rs_log2 count=1 bytes=$rs_bytes timed=1 algo_proto=RING_SIMPLE:1"
    echo "func=Reduce log2=10 count=1 bytes=1024 timed=1 algo_proto=TREE_LL:1"
    if [ "$1" -ge 5 ]; then # the group: Send and Recv timed as it, the self Send not timed
        echo "func=Send log2=20 count=2 bytes=2097152 timed=1 algo_proto=unknown_unknown:2"
        echo "func=Recv log2=20 count=1 bytes=1048576 timed=1 algo_proto=unknown_unknown:1"
    fi
    [ "$1" -ge 6 ] && # a CeColl: counted, not timed
        echo "func=AllGather log2=16 count=1 bytes=65536 timed=0 algo_proto=unknown_unknown:1"
    return 0
}
expect_times() { # kernel mode, v4+: the GPU durations exactly (v: $1)
    for i in 0 1 2 3 4 5 6 7 8 9; do
        local t=$(((i + 1) * 10000 + 100))
        echo "func=AllReduce p50=$t p95=$t p99=$t mean=$t min=$t max=$t"
    done
    echo "func=AllGather p50=5000 p95=5000 p99=5000 mean=5000 min=5000 max=5000"
    echo "func=Send p50=3000 p95=3000 p99=3000 mean=3000 min=3000 max=3000"
    echo "func=Broadcast p50=0 p95=0 p99=0 mean=0 min=0 max=0"
    echo "func=ReduceScatter p50=7100 p95=7100 p99=7100 mean=7100 min=7100 max=7100"
    echo "func=Reduce p50=9000 p95=9000 p99=9000 mean=9000 min=9000 max=9000"
    if [ "$1" -ge 5 ]; then # the group's span: the Send (3 us) waits for the Recv (50 us)
        echo "func=Send p50=50000 p95=50000 p99=50000 mean=50000 min=50000 max=50000"
        echo "func=Recv p50=50000 p95=50000 p99=50000 mean=50000 min=50000 max=50000"
    fi
    [ "$1" -ge 6 ] && echo "func=AllGather p50=0 p95=0 p99=0 mean=0 min=0 max=0"
    return 0
}

for v in 1 2 3 4 5 6; do
    nr=4 nn=2
    [ $v -le 3 ] && nr=0 nn=0
    for m in proxy kernel; do
        run $v $m || continue
        f=$T/$v-$m/cs.tsv
        mode=1 mask=0xe
        [ $m = kernel ] && mode=2 mask=0x46
        [ $v -ge 6 ] && mask=$(printf '0x%x' $((mask | 0x1000))) # CeColl
        got=$(comm "$f" comm_id has_id rank nranks nnodes name version mode mask inflight_full foreign)
        want="comm_id=0xc0ffee01 has_id=1 rank=1 nranks=$nr nnodes=$nn name=harness version=$v mode=$mode mask=$mask inflight_full=0 foreign=1"
        [ "$got" = "$want" ] && pass "v$v $m: communicator $want" ||
            fail "v$v $m: communicator '$got', want '$want'"
        if diff <(expect_counts $v) <(cells "$f" func log2 count bytes timed algo_proto) > "$T/d"; then
            pass "v$v $m: counts, bytes, algo/proto per function and size"
        else
            fail "v$v $m: cells differ (want <, got >):"; cat "$T/d"
        fi
        if [ $m = kernel ] && [ $v -ge 4 ]; then
            if diff <(expect_times $v) <(cells "$f" func p50 p95 p99 mean min max) > "$T/d"; then
                pass "v$v kernel: every percentile is the GPU duration given"
            else
                fail "v$v kernel: durations differ (want <, got >):"; cat "$T/d"
            fi
        elif [ $m = proxy ]; then
            short=$(cells "$f" func timed min | awk '{ split($2, t, "="); split($3, m, "=");
                     if (t[2] > 0 && m[2] < 2000000) print }')
            [ -z "$short" ] && pass "v$v proxy: every timed operation >= the 2 ms its children lived" ||
                fail "v$v proxy: shorter than the children lived: $short"
        fi
    done
    run $v off || continue
    f=$T/$v-off/cs.tsv
    grep -q '^mask=0x0$' "$T/$v-off/out.txt" && pass "v$v off: empty activation mask" ||
        fail "v$v off: $(head -1 "$T/$v-off/out.txt"), want mask=0x0"
    grep -q '^comm' "$f" && fail "v$v off: a collective entry was written" ||
        pass "v$v off: no collective entry"
    grep -qP '^status\t.*\tmode=0\tversion='"$v"'\tinits=1\t' "$f" &&
        pass "v$v off: status says mode off, version $v, 1 init" ||
        fail "v$v off: status $(grep '^status' "$f")"
done
[ $fails = 0 ] && echo "OK: profiler ABI v1..v6 events in, the recorder's tables out" && exit 0
echo "$fails check(s) failed"
exit 1

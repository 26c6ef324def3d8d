#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# test-nccl-log.sh — `verdict|summary --nccl-log` (tools/lib/nccllog.c, tools/lib/nccljoin.c):
#  * on NCCL's logs alone (tests/reader/nccl-logs): an internal transport is
#    BYPASSED (16) quoting NCCL's channel line, no plugin found is BYPASSED
#    quoting NCCL's NET/Plugin line, intra-node P2P is INTRA-NODE (15);
#  * the same output with srun --label and mpirun --tag-output prefixes, and
#    on a truncated log with binary junk appended (counted, never fatal);
#    160 MiB of log with a 32 MiB line in a bounded peak RSS;
#    an unreadable log is exit 2;
#  * joined to real recorders (the harness, ABI v12: two communicators per
#    process): the world communicator by commId (HOST-STAGED, exit 11), a
#    split (no commId in NCCL's line) by elimination; a third communicator
#    NCCL carried over IB makes the whole BYPASSED (16), --expect host 20;
#  * a folder holding both the recorders and the log (gdrtrace run);
#  * ABI v10 recorders (one record per process): joined by host+pid;
#  * no line of summary or verdict over 100 columns on the real captures;
#  * the real captures of tests/reader/nccl-logs/real-*: each case's exit and
#    NCCL's line quoted; PyTorch's new_group splits joined by init order;
#  * channel lines after every Init line given by connection order (the
#    recorders' connection runs): the real t-multi, a lazy 4-communicator
#    fixture (reader_fixture --conn); nothing by order, the counts line
#    saying why, when a phase mixes in NET/Socket, when the numbers of
#    phases and runs differ, when the ring lost the connect events; a
#    phase of P2P lines alone is given to no communicator;
#  * diff --nccl-log-a/-b: NCCL's GPU Direct decisions of two runs compared.
# Skips (77) when the harness is not built.
. "$(dirname "$0")/lib.sh"
H=$BUILD/harness/harness
L=tests/reader/nccl-logs
[ -x "$H" ] || { echo "skip: $H is not built"; exit 77; }
[ -x "$FX" ] || { echo "skip: $FX is not built"; exit 77; }
# verdict wraps its evidence under itself: one line per record to grep
unwrap() { sed -e ':a' -e 'N' -e '$!ba' -e 's/\n   *\([^ ]\)/ \1/g'; }
# vrun VAR CMD...: VAR = gdrtrace CMD's output (stderr too) unwrapped, rc = its exit
vrun() {
    local var=$1
    shift
    "$G" "$@" >"$T/vrun.out" 2>&1
    rc=$?
    printf -v "$var" '%s' "$(unwrap <"$T/vrun.out")"
}

# --- logs alone ------------------------------------------------------------
vrun out verdict --nccl-log "$L/synthetic-2.28-bypass-ib"
if [ $rc = 16 ] && grep -q '^comm 0x77e1c0d4a9b85f26 .*BYPASSED .*"Channel 00/0 : 0\[0\] -> 1\[0\] \[send\] via NET/IB/0"' <<<"$out" &&
    grep -q '^nccl nodeC:5555 .*BYPASSED .*"Failed to initialize NET plugin gdrtrace"' <<<"$out"; then
    pass "IB instead of gdrtrace: BYPASSED (16), NCCL's channel and plugin lines quoted"
else fail "bypass-ib: exit $rc: $out"; fi

vrun out verdict --nccl-log "$L/synthetic-2.18-notfound-socket"
if [ $rc = 16 ] && grep -q '^nccl nodeE:7777 .*BYPASSED .*NCCL found no net plugin: "NET/Plugin : No plugin found' <<<"$out" &&
    grep -q 'via NET/Socket/0' <<<"$out"; then
    pass "2.18, no plugin found: BYPASSED (16) quoting NET/Plugin and the Socket channel"
else fail "2.18 not found: exit $rc: $out"; fi

vrun out verdict --nccl-log "$L/synthetic-2.28-intra"
if [ $rc = 15 ] && grep -q '^comm 0x4c2e9d1f77a0b312 .*INTRA-NODE .*"Channel 00/0 : 0\[0\] -> 1\[1\] via P2P/CUMEM/read"' <<<"$out"; then
    pass "intra-node P2P: INTRA-NODE, the channel line quoted, nothing judged (15)"
else fail "intra: exit $rc: $out"; fi

# the same with launcher prefixes
ref=$($G verdict --nccl-log "$L/synthetic-2.28-bypass-ib" 2>&1 | unwrap | grep -v '^nccl-log:')
for style in srun mpirun; do
    mkdir -p "$T/$style"
    i=0
    for f in "$L"/synthetic-2.28-bypass-ib/*; do
        case $style in
        srun) sed "s/^/$i: /" "$f" ;;
        mpirun) sed "s/^/[1,$i]<stdout>:/" "$f" ;;
        esac >"$T/$style/$(basename "$f")"
        i=$((i + 1))
    done
    got=$($G verdict --nccl-log "$T/$style" 2>&1 | unwrap | grep -v '^nccl-log:')
    [ "$got" = "$ref" ] && pass "$style's per-line prefix: the same verdict" ||
        fail "$style prefix: $(diff <(echo "$ref") <(echo "$got") | head)"
done

# truncated mid-line, binary junk appended: counted, the rest read
mkdir -p "$T/junk"
cp "$L"/synthetic-2.28-bypass-ib/* "$T/junk/"
f=$(ls "$T"/junk/* | head -1)
head -c -20 "$f" >"$T/cut" && mv "$T/cut" "$f"
head -c 300000 /dev/urandom >>"$f"
vrun out verdict --nccl-log "$T/junk"
if [ $rc = 16 ] && grep -q '^nccl-log: .*unknown: [0-9]* line(s) not NCCL.s' <<<"$out" &&
    grep -q '^comm 0x77e1c0d4a9b85f26 .*BYPASSED' <<<"$out"; then
    pass "truncated log with binary junk: counted as unknown, verdict unchanged (16)"
else fail "junk: exit $rc: $out"; fi

# bounded memory: 128 MiB of channel lines and a 32 MiB line without a newline
yes "vm:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/IB/0" | head -c 128M >"$T/big.log"
head -c 32M /dev/zero | tr '\0' 'x' >"$T/long.log"
if [ -x /usr/bin/time ]; then
    /usr/bin/time -f '%M' -o "$T/rss" "$G" verdict --nccl-log "$T/big.log" --nccl-log "$T/long.log" \
        "$GDRTRACE_DIR" >"$T/big.out" 2>&1
    rc=$?
    kb=$(tail -1 "$T/rss")
    if [ $rc = 16 ] && [ "$kb" -lt 102400 ] && grep -q '1 over 4096 bytes' "$T/big.out"; then
        pass "160 MiB of log (one 32 MiB line): peak RSS ${kb} KiB, the long line counted"
    else fail "bounded: exit $rc, peak RSS $kb KiB: $(tail -5 "$T/big.out")"; fi
else echo "skip /usr/bin/time not installed: the bounded-memory check"; fi
rm -f "$T/big.log" "$T/long.log"

out=$($G verdict --nccl-log "$T/no-such-log" 2>&1); rc=$?
[ $rc = 2 ] && grep -q 'no-such-log: cannot read NCCL log' <<<"$out" &&
    pass "an unreadable log: named on stderr, exit 2" || fail "unreadable log: exit $rc: $out"

# --- real captures (NCCL 2.28.3, 2.28.9; tests/reader/nccl-logs/README.md) ---
# case | exit | a line that must be there (grep -E, on the unwrapped output)
while IFS='|' read -r c want pat; do
    d=$L/$c
    rec=$d/recorders.zst
    [ -f "$rec" ] || rec=$GDRTRACE_DIR
    vrun out verdict --nccl-log "$d" "$rec"
    if [ "$rc" = "$want" ] && grep -Eq "$pat" <<<"$out"; then pass "real $c: exit $want, /$pat/"
    else fail "real $c: exit $rc (want $want), /$pat/: $out"; fi
done <<'CASES'
real-2.28.3-c-plugin|11|^comm 0x[0-9a-f]+ +HOST-STAGED .*NCCL: 16 channel line\(s\) via NET/gdrtrace, 0 with GDRDMA
real-2.28.3-c-byname|11|^comm 0x[0-9a-f]+ +HOST-STAGED .*via NET/gdrtrace
real-2.28.3-c-socket|16|^nccl vm:[0-9]+ +BYPASSED +NCCL was told to load no net plugin: "NCCL_NET_PLUGIN set by environment to none"; "NET/Socket : Using
real-2.28.3-c-refused|16|^nccl vm:[0-9]+ +BYPASSED +gdrtrace.s init failed and NCCL fell back: "Failed to initialize NET plugin gdrtrace"; "NET/gdrtrace : GDRTRACE_TRANSPORT=ib
real-2.28.3-c-notfound|16|^nccl vm:[0-9]+ +BYPASSED +NCCL found no net plugin: "NET/Plugin: Could not find: gdrtrase libnccl-net-gdrtrase.so"
real-2.28.3-c-gm-default|11|HOST-STAGED \(emulated.*NCCL: "GPU Direct RDMA Disabled for GPU 0 / HCA 0 \(distance 8 > 5\)"
real-2.28.3-c-gm-sys|0|^comm 0x[0-9a-f]+ +DIRECT-DMABUF \(emulated.*16 with GDRDMA
real-2.28.3-c-gm-loc|11|HOST-STAGED \(emulated.*GPU Direct RDMA Disabled
real-2.28.9-t-multi|11|^all +HOST-STAGED +3 communicator\(s\) with NCCL.s log: HOST-STAGED 3\.
real-2.28.9-t-refused|16|^comm 0x[0-9a-f]+ +BYPASSED .*via NET/Socket/0
real-2.28.9-t-socket|16|^all +BYPASSED +3 communicator\(s\) with NCCL.s log: BYPASSED 3\.
CASES
js=$($G verdict --json --nccl-log "$L/real-2.28.9-t-multi" "$L/real-2.28.9-t-multi/recorders.zst" | tr -d '\n')
n=$(grep -o '"joined_by": *"elimination (init order)"' <<<"$js" | wc -l)
[ "$n" = 2 ] && pass "real t-multi: both new_group splits (no commId in NCCL's lines) joined their recorder communicators" ||
    fail "t-multi splits joined: $n"

# --- channel lines by connection order (tools/lib/nccljoin.h, step 3b) ---------
# t-multi: the splits' rings and the send/recv lines come after every Init
# line; the recorders' connection runs give them to their communicators
vrun out verdict --nccl-log "$L/real-2.28.9-t-multi" "$L/real-2.28.9-t-multi/recorders.zst"
if [ $rc = 11 ] && [ "$(grep -c '^comm 0x[0-9a-f]* .*HOST-STAGED .*NCCL: 8 channel line(s) via NET/gdrtrace, 0 with GDRDMA\.' <<<"$out")" = 2 ] &&
    grep -q '^comm 0x[0-9a-f]* .*HOST-STAGED .*NCCL: 12 channel line(s) via NET/gdrtrace, 0 with GDRDMA\.' <<<"$out" &&
    ! grep -q 'cannot be told' <<<"$out" &&
    grep -q '^nccl-log: .* 28 channel line(s), 0 not attributed (0 ambiguous), 20 more by connection order' <<<"$out"; then
    pass "real t-multi: every channel line attributed, 20 by connection order (world 12, splits 8 each)"
else fail "t-multi by order: exit $rc: $out"; fi

# the lazy PyTorch shape: world, 2 groups, p2p all initialised first, then
# four connection phases; the recorders connected them in the order 0 2 1 3
# (the second group's first collective before the first group's)
lz=$L/synthetic-2.28-lazy-4comm
mkrec() { # DIR CONN-C CONN-D [FIXTURE-OPTION...]: the job's two recorders, their runs
    local dir=$1 c=$2 d=$3
    shift 3
    mkdir -p "$dir"
    "$FX" dmabuf "$dir/gdrtrace.job42.node-c.3001.rec" --host node-c --pid 3001 --rank 0 \
        --comm 0x7a2e000000001000 --conn "$c" "$@" &&
        "$FX" dmabuf "$dir/gdrtrace.job42.node-d.4001.rec" --host node-d --pid 4001 --rank 1 \
            --comm 0x7a2e000000001000 --conn "$d" "$@" || { echo "FAIL: reader_fixture"; exit 1; }
}
# the runs, SLOT:LISTENS/CONNECTS: one listen a [receive] line, one connect a [send] line
runs3="0:2/2,2:1/1,1:3/3"
runs_c="$runs3,3:0/1" runs_d="$runs3,3:1/0"
ambiguous() { # OUT: every communicator still says its lines could be another's
    [ "$(grep -Ec '^comm 0x7a2e00000000100[0-3] .*(cannot be told from another communicator|could be this or another communicator)' <<<"$1")" = 4 ]
}
mkrec "$T/lz" "$runs_c" "$runs_d"
vrun out verdict --nccl-log "$lz" "$T/lz"
if [ $rc = 0 ] && grep -q '^comm 0x7a2e000000001000 .*DIRECT-DMABUF .*NCCL: 8 channel line(s) via NET/gdrtrace, 8 with GDRDMA\.' <<<"$out" &&
    grep -q '^comm 0x7a2e000000001001 .*NCCL: 12 channel line(s) via NET/gdrtrace, 12 with GDRDMA\.' <<<"$out" &&
    grep -q '^comm 0x7a2e000000001002 .*NCCL: 4 channel line(s) via NET/gdrtrace, 4 with GDRDMA\.' <<<"$out" &&
    grep -q '^comm 0x7a2e000000001003 .*NCCL: 2 channel line(s) via NET/gdrtrace, 2 with GDRDMA\.' <<<"$out" &&
    grep -q '^nccl-log: .* 26 channel line(s), 0 not attributed (0 ambiguous), 26 more by connection order$' <<<"$out"; then
    pass "lazy 4 communicators: each connection phase is the recorder's run of the same rank (order 0 2 1 3)"
else fail "lazy by order: exit $rc: $out"; fi

# a phase that mixes in another network's line: boundaries in doubt, nothing by order
mkdir -p "$T/lzmix" "$T/lzp2p" "$T/lztwice"
for f in "$lz"/*; do
    # the first group connected twice in a row (its receives, then its sends): two phases, one run
    sed '/Channel 02\/0 : .*\[receive\]/{p;s/NCCL INFO .*/NCCL INFO Connected all trees/}' "$f" >"$T/lztwice/${f##*/}"
    sed 's|^\(.*Channel 02/0 : .*\) via NET/gdrtrace/0/GDRDMA$|\1 via NET/Socket/0|' "$f" >"$T/lzmix/${f##*/}"
    # a phase of intra-node lines alone, before the second one (the group's)
    case $f in *node-c*) me=0 peer=1 ;; *) me=1 peer=0 ;; esac
    awk -v me=$me -v peer=$peer '/GPU Direct RDMA Enabled/ && ++n == 2 {
            p = $0; sub(/NCCL INFO .*/, "NCCL INFO ", p)
            print p "Channel 00/0 : " me "[0] -> " peer "[0] via P2P/CUMEM/read"
            print p "Connected all rings, use ring PXN 0 GDR 1" } 1' "$f" >"$T/lzp2p/${f##*/}"
done
vrun out verdict --nccl-log "$T/lztwice" "$T/lz"
if grep -q '^comm 0x7a2e000000001001 .*NCCL: 12 channel line(s) via NET/gdrtrace, 12 with GDRDMA\.' <<<"$out" &&
    grep -q '^nccl-log: .* 26 channel line(s), 0 not attributed (0 ambiguous), 26 more by connection order$' <<<"$out"; then
    pass "a communicator connected twice in a row: its two phases are its one run (listens and connects counted)"
else fail "two phases one run: exit $rc: $out"; fi
vrun out verdict --nccl-log "$T/lzmix" "$T/lz"
if ambiguous "$out" &&
    grep -q '^nccl-log: .* not by connection order in node-c:3001: a connection phase mixes NET/gdrtrace and another network.s lines' <<<"$out" &&
    grep -q '^nccl node-c:3001 .*BYPASSED .*via NET/Socket/0' <<<"$out"; then
    pass "a phase mixing NET/gdrtrace and NET/Socket lines: nothing by order, the counts line says why"
else fail "mixed phase: exit $rc: $out"; fi
vrun out verdict --nccl-log "$T/lzp2p" "$T/lz"
if grep -q '^comm 0x7a2e000000001002 .*NCCL: 4 channel line(s) via NET/gdrtrace, 4 with GDRDMA\.' <<<"$out" &&
    grep -q '^nccl-log: .* 28 channel line(s), 2 not attributed (2 ambiguous), 26 more by connection order$' <<<"$out" &&
    ! grep -q 'intra-node\|INTRA' <<<"$out"; then
    pass "a phase of P2P lines alone: given to no communicator, the gdrtrace phases still by order"
else fail "p2p phase: exit $rc: $out"; fi

# the recorder saw 3 runs (the p2p communicator never connected): counts differ
mkrec "$T/lz3" "$runs3" "$runs3"
vrun out verdict --nccl-log "$lz" "$T/lz3"
if ambiguous "$out" &&
    grep -q '^nccl-log: .* 26 channel line(s), 26 not attributed (26 ambiguous); not by connection order in node-c:3001: 4 connection phase(s) via NET/gdrtrace in NCCL.s log, 3 connection run(s) in its recorder matching 3 of them' <<<"$out"; then
    pass "4 phases in the log, 3 connection runs in the recorder: nothing by order, and why"
else fail "count mismatch: exit $rc: $out"; fi

# the ring overwrote the connect events (2000 events in 1024 slots)
mkrec "$T/lzlost" "$runs_c" "$runs_d" --events 2000 --cap 1024
vrun out verdict --nccl-log "$lz" "$T/lzlost"
if ambiguous "$out" &&
    grep -q '^nccl-log: .* not by connection order in node-c:3001: its recorder lost connection events (event ring overwritten, or GDRTRACE_EVENTS)' <<<"$out"; then
    pass "connect events overwritten in the ring: nothing by order, and why"
else fail "lost events: exit $rc: $out"; fi

# diff: NCCL's GPU Direct decisions of two runs (GDRTRACE_GPUMEM=1 at the default
# NCCL_NET_GDR_LEVEL vs SYS)
a=$L/real-2.28.3-c-gm-default
b=$L/real-2.28.3-c-gm-sys
vrun out diff --nccl-log-a "$a" --nccl-log-b "$b" "$a/recorders.zst" "$b/recorders.zst"
if [ $rc = 1 ] && grep -q '^!!   nccl-log GPU Direct decisions: A "GPU 0 / HCA 0: Disabled (distance 8 > 5);.* vs B "GPU 0 / HCA 0: Enabled (distance 8 <= 9)' <<<"$out" &&
    grep -q '^!!   nccl-log NET channels with GDRDMA: A 0 of 16 vs B 16 of 16' <<<"$out"; then
    pass "diff with both logs: NCCL's GPU Direct decisions and GDRDMA channels differ (exit 1)"
else fail "diff gdr: exit $rc: $out"; fi
vrun out diff --nccl-log-a "$a" --nccl-log-b "$a" "$a/recorders.zst" "$a/recorders.zst"
[ $rc = 0 ] && ! grep -q '^!!   nccl-log' <<<"$out" && pass "diff of a run with itself, logs given: comparable (0)" ||
    fail "diff same: exit $rc: $out"

# --- joined to harness recorders --------------------------------------------
# gen_log HOST PID RANK PEER COMMID [IB_COMMID]: NCCL 2.28's lines for the
# process, a world communicator through gdrtrace and a split of it (its Init
# lines name the parent, not a commId); with IB_COMMID a third, over IB.
gen_log() {
    local h=$1 p=$2 r=$3 o=$4 id=$5 ib=${6:-}
    cat <<EOF
$h:$p:$p [0] NCCL INFO NCCL version 2.28.3+cuda12.9
$h:$p:$p [0] NCCL INFO NET/Plugin: Loaded net plugin gdrtrace (v12)
$h:$p:$p [0] NCCL INFO Using network gdrtrace
$h:$p:$p [0] NCCL INFO ncclCommInitRank comm 0x5500 rank $r nranks 2 cudaDev 0 nvmlDev 0 busId 1b000 commId $id - Init START
$h:$p:$p [0] NCCL INFO comm 0x5500 rank $r nRanks 2 nNodes 2 localRanks 1 localRank 0 MNNVL 0
$h:$p:$p [0] NCCL INFO GPU Direct RDMA Disabled for GPU $r / HCA 0 (distance 5 > 4)
$h:$p:$p [0] NCCL INFO ncclCommInitRank comm 0x5500 rank $r nranks 2 cudaDev 0 nvmlDev 0 busId 1b000 commId $id - Init COMPLETE
$h:$p:$p [0] NCCL INFO Channel 00/0 : $r[0] -> $o[0] [send] via NET/gdrtrace/0
$h:$p:$p [0] NCCL INFO Channel 00/0 : $o[0] -> $r[0] [receive] via NET/gdrtrace/0
$h:$p:$p [0] NCCL INFO Using network gdrtrace
$h:$p:$p [0] NCCL INFO ncclCommSplit comm 0x5600 rank $r nranks 2 cudaDev 0 nvmlDev 0 busId 1b000 parent 0x5500 splitCount 1 color 0 key $r- Init START
$h:$p:$p [0] NCCL INFO comm 0x5600 rank $r nRanks 2 nNodes 2 localRanks 1 localRank 0 MNNVL 0
$h:$p:$p [0] NCCL INFO ncclCommSplit comm 0x5600 rank $r nranks 2 cudaDev 0 nvmlDev 0 busId 1b000 parent 0x5500 splitCount 1 color 0 key $r - Init COMPLETE
EOF
    [ -n "$ib" ] && cat <<EOF
$h:$p:$p [0] NCCL INFO Using network IB
$h:$p:$p [0] NCCL INFO ncclCommInitRank comm 0x5700 rank $r nranks 2 cudaDev 0 nvmlDev 0 busId 1b000 commId $ib - Init START
$h:$p:$p [0] NCCL INFO Channel 00/0 : $r[0] -> $o[0] [send] via NET/IB/0/GDRDMA
EOF
    return 0
}

run_harness() { # ABI DIR
    mkdir -p "$2"
    timeout 120 "$H" --abi "$1" --data-only --iters 3 --max-size 64K --dir "$2" \
        --plugin "$BUILD/libnccl-net-gdrtrace.so" >"$2.out" 2>&1 ||
        { cat "$2.out"; echo "FAIL: the harness failed"; exit 1; }
}

run_harness 12 "$T/r12"
mapfile -t procs < <($G ls "$T/r12" | awk 'NR > 1 { print $1, $2 }')
ids=$($G verdict "$T/r12" | sed -n 's/^comm \(0x[0-9a-f]*\) .*/\1/p')
world=$($G verdict "$T/r12" | sed -n 's/^comm \(0x[0-9a-f]*\) *HOST-STAGED.*/\1/p')
split=$(grep -v "^$world\$" <<<"$ids")
if [ ${#procs[@]} = 2 ] && [ -n "$world" ] && [ -n "$split" ]; then
    mkdir -p "$T/log12" "$T/log12ib"
    r=0
    for hp in "${procs[@]}"; do
        set -- $hp
        gen_log "$1" "$2" $r $((1 - r)) "$world" >"$T/log12/nccl.$1.$2"
        gen_log "$1" "$2" $r $((1 - r)) "$world" 0xabc123 >"$T/log12ib/nccl.$1.$2"
        r=$((r + 1))
    done
    vrun out verdict --nccl-log "$T/log12" "$T/r12"
    if [ $rc = 11 ] && grep -q "^comm $world .*HOST-STAGED .*NCCL: 4 channel line(s) via NET/gdrtrace, 0 with GDRDMA. NCCL: \"GPU Direct RDMA Disabled for GPU 0 / HCA 0 (distance 5 > 4)\"" <<<"$out" &&
        grep -q "^comm $split .*NO-DATA" <<<"$out"; then
        pass "v12 recorders + log: world by commId (HOST-STAGED, 11), NCCL's GDR decision quoted"
    else fail "v12 join: exit $rc: $out"; fi
    js=$($G verdict --json --nccl-log "$T/log12" "$T/r12" | tr -d '\n')
    grep -q "\"comm\": *\"$split\",[^}]*\"joined_by\": *\"elimination\"" <<<"$js" &&
        grep -q "\"comm\": *\"$world\",[^}]*\"joined_by\": *\"commId\"" <<<"$js" &&
        pass "the split (parent named, no commId) joined its recorder communicator by elimination" ||
        fail "split join: $js"
    vrun out verdict --nccl-log "$T/log12ib" "$T/r12"
    if [ $rc = 16 ] && grep -q '^comm 0xabc123 .*BYPASSED .*via NET/IB/0/GDRDMA' <<<"$out" &&
        grep -q '^all .*BYPASSED' <<<"$out"; then
        pass "a communicator NCCL carried over IB: the whole input BYPASSED (16)"
    else fail "v12 + IB: exit $rc: $out"; fi
    $G verdict --expect host --nccl-log "$T/log12ib" "$T/r12" >/dev/null 2>&1; rc=$?
    [ $rc = 20 ] && pass "--expect host is not met when NCCL bypassed gdrtrace (20)" || fail "--expect: exit $rc"
    # one folder with the recorders and the log, as gdrtrace run leaves it
    mkdir -p "$T/both"
    cp "$T"/r12/*.rec "$T"/log12/* "$T/both/"
    vrun out verdict --nccl-log "$T/both" "$T/both"
    if [ $rc = 11 ] && grep -q '^nccl-log: 2 file(s), 26 line(s), 26 of NCCL.s' <<<"$out"; then
        pass "--nccl-log DIR beside the recorders reads the log files only"
    else fail "log beside recorders: exit $rc: $out"; fi
    vrun sum summary --no-bars --nccl-log "$T/log12" "$T/r12"
    if [ $rc = 0 ] && grep -q "^== NCCL's log" <<<"$sum" &&
        grep -q "comm $world  through-gdrtrace  ranks 2/2 on 1 host(s)" <<<"$sum"; then
        pass "summary --nccl-log: the joined section"
    else fail "summary: exit $rc: $(sed -n "/^== NCCL's log/,\$p" <<<"$sum")"; fi
else fail "harness v12 recorders: procs [${procs[*]}] world [$world] split [$split]"; fi

run_harness 10 "$T/r10"
mapfile -t procs < <($G ls "$T/r10" | awk 'NR > 1 { print $1, $2 }')
mkdir -p "$T/log10"
r=0
for hp in "${procs[@]}"; do
    set -- $hp
    gen_log "$1" "$2" $r $((1 - r)) 0x5151 >"$T/log10/nccl.$1.$2"
    r=$((r + 1))
done
vrun out verdict --nccl-log "$T/log10" "$T/r10"
if [ $rc = 11 ] && grep -q '^comm 0x5151 .*HOST-STAGED .*Joined by process (net ABI <= v10: the plugin sees no commId; 2 process record' <<<"$out" &&
    ! grep -q '^comm process ' <<<"$out"; then
    pass "v10 recorders (one per process): joined by host+pid, and it says so"
else fail "v10 join: exit $rc: $out"; fi

# No line of summary or verdict passes 100 columns (docs/reader.md), on the
# real captures too: their event counts by kind and emulated labels are long.
wide=""
for d in "$L"/real-*; do
    [ -f "$d/recorders.zst" ] || continue
    for c in "summary --full --events" summary "verdict --full" verdict; do
        n=$($G $c --nccl-log "$d" "$d/recorders.zst" 2>/dev/null | awk 'length($0) > 100' | wc -l)
        [ "$n" = 0 ] || wide+=" $(basename "$d"):$c:$n"
    done
done
[ -z "$wide" ] && pass "summary/verdict (--full, --events) on the real captures: no line over 100 columns" ||
    fail "lines over 100 columns:$wide"

finish "verdict --nccl-log joins NCCL's log to the recorders"

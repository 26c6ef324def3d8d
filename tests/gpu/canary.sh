#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# canary.sh — issue 19 on the GPU machine: `gdrtrace run` around real jobs,
# and the verdict with NCCL's own log joined (`--nccl-log`).  CI never runs it.
#   1 run-multi    gdrtrace run -- pg_multi.py (PyTorch's NCCL 2.28.9, lazy
#                  init: world, two new_groups, a send/recv pair = four NCCL
#                  communicators); the verdict lists NCCL's communicators
#   2 run-refused  GDRTRACE_TRANSPORT=ib (no RDMA device): BYPASSED (16),
#                  NCCL's fallback quoted
#   3 misspelled   NCCL_NET_PLUGIN=gdrtrase without run, NCCL's log kept:
#                  verdict --nccl-log says the plugin was never loaded
#   4 run-loc      GDRTRACE_GPUMEM=1 NCCL_NET_GDR_LEVEL=LOC, nccl_check 2.28.3:
#                  HOST-STAGED naming NCCL_NET_GDR_LEVEL=LOC
#   5 run-expect   GDRTRACE_GPUMEM=1 NCCL_NET_GDR_LEVEL=SYS, --expect dmabuf:
#                  21 (emulated), with --allow-emulated 0
# Output: $OUT/canary/<case>/ (stdout, stderr = run's lines + verdict, the
# archive folder), $OUT/canary-summary.md, $OUT/canary.tar.gz.
set -u -o pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT" || exit 1
OUTDIR=${OUT:-$ROOT/build/gpu-out}
W=$OUTDIR/canary
mkdir -p "$W"
START=$(date +%s)
declare -a RESULTS=()
FAILED=0
. tests/gpu/runlib.sh
. tests/gpu/build.sh env
[ -x build/gpu/nccl_check ] || bash tests/gpu/build.sh > "$W/build.log" 2>&1 ||
    { echo "canary.sh: build failed"; tail -5 "$W/build.log"; exit 1; }
TOOL=$ROOT/build/default/gdrtrace
export NCCL_MNNVL_ENABLE=0 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 PYTHONUNBUFFERED=1
unset NCCL_NET NCCL_NET_PLUGIN NCCL_DEBUG NCCL_DEBUG_SUBSYS NCCL_DEBUG_FILE GDRTRACE_DISABLE
unset NCCL_NET_GDR_LEVEL GDRTRACE_GPUMEM GDRTRACE_TRANSPORT GDRTRACE_JOB
TNCCL=$(torch_nccl_dir)
TL="$TNCCL:${LD_LIBRARY_PATH:-}"
JOINS=0
"$TOOL" verdict --help 2>&1 | grep -q -- --nccl-log && JOINS=1
echo "== canary.sh on $(hostname), $(date -u); verdict --nccl-log: $JOINS"

has() { grep -Eq -- "$2" "$1"; }
# runcase NAME VARS ARGS...: env VARS gdrtrace run --dir DIR/arch ARGS
runcase() {
    local c=$1 vars=$2
    shift 2
    local d=$W/$c
    rm -rf "$d"
    mkdir -p "$d/arch"
    echo "$vars $TOOL run --dir $d/arch $*" > "$d/command.txt"
    # shellcheck disable=SC2086
    env $vars GDRTRACE_JOB="$c" timeout 200 "$TOOL" run --dir "$d/arch" "$@" \
        > "$d/stdout.txt" 2> "$d/stderr.txt"
    echo $? > "$d/rc"
    if [ $JOINS = 1 ]; then
        "$TOOL" verdict --nccl-log "$d/arch" "$d/arch" > "$d/verdict-joined.txt" 2>&1
        echo "exit $?" >> "$d/verdict-joined.txt"
    fi
    "$TOOL" summary --nccl-log "$d/arch" "$d/arch" > "$d/summary.txt" 2>&1 ||
        "$TOOL" summary "$d/arch" > "$d/summary.txt" 2>&1
}

runcase run-multi "LD_LIBRARY_PATH=$TL" -- python3 tests/gpu/pg_multi.py --ranks 2
d=$W/run-multi
ok=0
[ "$(cat "$d/rc")" = 11 ] || ok=1
ncomm=$(grep -h 'Init COMPLETE' "$d"/arch/*nccl*.log 2>/dev/null | grep -c 'ncclCommInit')
has "$d/stdout.txt" 'PG_MULTI rank=0 ok=4/4' || ok=1
step "1 run-multi: exit $(cat "$d/rc") (want 11 HOST-STAGED), NCCL made $ncomm communicator(s) per its log" $ok
if [ $JOINS = 1 ]; then
    ok=0
    nv=$(grep -Ec '^ *comm 0x' "$d/verdict-joined.txt")
    [ "$nv" -ge 4 ] || ok=1
    step "1 run-multi: joined verdict lists $nv communicator line(s) (want >= 4)" $ok
fi

runcase run-refused "LD_LIBRARY_PATH=$TL GDRTRACE_TRANSPORT=ib" -- python3 tests/gpu/pg_multi.py --ranks 2
d=$W/run-refused
ok=0
[ "$(cat "$d/rc")" = 16 ] || ok=1
has "$d/stdout.txt" 'BYPASSED' || ok=1
step "2 run-refused: exit $(cat "$d/rc") (want 16 BYPASSED), reason: $(grep -m1 -o 'no RDMA device[^.]*' "$d/stdout.txt")" $ok

d=$W/misspelled
rm -rf "$d"
mkdir -p "$d/rec"
run_env "$d" 120 info "LD_LIBRARY_PATH=$TL NCCL_NET_PLUGIN=gdrtrase GDRTRACE_DIR=$d/rec" \
    python3 tests/gpu/pg_multi.py --ranks 2
ok=0
has "$d/stdout.txt" 'PG_MULTI rank=0 ok=4/4' || ok=1
if [ $JOINS = 1 ]; then
    "$TOOL" verdict --nccl-log "$d" "$d/rec" > "$d/verdict-joined.txt" 2>&1
    echo "exit $?" >> "$d/verdict-joined.txt"
    has "$d/verdict-joined.txt" 'gdrtrase|No plugin|not found|never loaded' || ok=1
fi
step "3 misspelled NCCL_NET_PLUGIN: job ok, verdict: $(grep -m1 -E 'gdrtrase|No plugin' "$d/verdict-joined.txt" 2>/dev/null | cut -c1-120)" $ok

runcase run-loc "GDRTRACE_GPUMEM=1 NCCL_NET_GDR_LEVEL=LOC" -- build/gpu/nccl_check -b 8 -e 1M -f 32
d=$W/run-loc
ok=0
[ "$(cat "$d/rc")" = 11 ] || ok=1
has "$d/stdout.txt" 'NCCL_NET_GDR_LEVEL=LOC' || ok=1
step "4 run-loc: exit $(cat "$d/rc") (want 11), NCCL_NET_GDR_LEVEL=LOC named" $ok

runcase run-expect "GDRTRACE_GPUMEM=1 NCCL_NET_GDR_LEVEL=SYS" --expect dmabuf -- build/gpu/nccl_check -b 8 -e 1M -f 32
r1=$(cat "$W/run-expect/rc")
runcase run-expect-ok "GDRTRACE_GPUMEM=1 NCCL_NET_GDR_LEVEL=SYS" --expect dmabuf --allow-emulated -- build/gpu/nccl_check -b 8 -e 1M -f 32
r2=$(cat "$W/run-expect-ok/rc")
ok=0
[ "$r1" = 21 ] && [ "$r2" = 0 ] || ok=1
step "5 run --expect dmabuf on emulated: exit $r1 (want 21), with --allow-emulated $r2 (want 0)" $ok

printf '%s\n' "${RESULTS[@]}" | tee "$OUTDIR/canary-summary.md"
tar -C "$OUTDIR" -czf "$OUTDIR/canary.tar.gz" canary
echo "== canary.sh done in $(($(date +%s) - START)) s, FAILED=$FAILED"
exit $FAILED

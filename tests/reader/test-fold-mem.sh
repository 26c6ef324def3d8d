#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# test-fold-mem.sh — `ls`, `diff`, `export` and `summary --full`/`--json`
# reduce each recorder as they read it, as `verdict` does (summary keeping
# each process's section as text), instead of holding every parsed recorder
# (docs/results/reader-scale.md).  Over 256 generated recorders of the
# default size (reader_scale gen: 64 comm slots, 16,384 ring slots, 2.7 MB,
# sparse) each command's peak RSS (wait4 of the child) must stay under
# 24 MiB; in sanitizer builds, whose shadow memory grows every allocation,
# under `verdict`'s own peak plus 20 MiB, with ASan's quarantine of freed
# memory cut to 1 MB for these children (else the recorders a fold frees
# stay resident: under ASan 1f8b513 and now differed by 16 MiB only; with
# it 53-99 MiB against 13-20, verdict 15).  Measured on the 2-core
# machine: holding every recorder (main at 1f8b513) took ls 40 MiB, diff
# 80 MiB, export 44-45 MiB, summary --full and --json 41 MiB; folding takes
# 7, 11, 9-11, 8 and 9 MiB (verdict 7).  Each must also still say what it
# says: 256 listed, comparable, 256 recorders exported, 256 processes.
. "$(dirname "$0")/lib.sh"
S=$BUILD/tests/reader_scale
D=$T/256
mkdir -p "$D"
"$S" gen "$D" 256 || { fail "reader_scale gen 256"; finish "fold-mem"; exit; }

# peak CMD...: sets kib, rc; stdout in $T/out
peak() {
    read -r _ kib rc _ < <("$S" measure "$@" 2>/dev/null >"$T/out.raw"; tail -1 "$T/out.raw")
    head -n -1 "$T/out.raw" >"$T/out"
}

export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=1
peak "$G" verdict "$D"
vkib=$kib
limit=$((24 * 1024))
[ "$(basename "$BUILD")" = default ] || limit=$((vkib + 20 * 1024))
echo "     verdict: peak $((vkib / 1024)) MiB; limit for the others $((limit / 1024)) MiB"

check() { # WHAT EXPECT-GREP CMD...
    local what=$1 want=$2
    shift 2
    peak "$G" "$@"
    if [ "$rc" != 0 ]; then
        fail "$what: exit $rc: $(head -3 "$T/out")"
    elif ! grep -Eq "$want" "$T/out"; then
        fail "$what: output lacks /$want/: $(head -3 "$T/out")"
    elif [ "$kib" -gt "$limit" ]; then
        fail "$what: peak RSS $((kib / 1024)) MiB > $((limit / 1024)) MiB (holds every recorder?)"
    else
        pass "$what over 256 recorders: peak RSS $((kib / 1024)) MiB <= $((limit / 1024)) MiB"
    fi
}

check "ls" "^node-0031 +100255 " ls "$D"
[ "$(grep -c ' exited \| crashed \| live \| unknown ' "$T/out")" = 256 ] || fail "ls: not 256 rows"
check "ls --json" '"state_why"' ls --json "$D"
check "diff" "^comparable: A and B differ only in the registration path" diff "$D" "$D"
check "export" '^gdrtrace_verdict\{' export --exited-within 5000w "$D"
n=$(awk '/^gdrtrace_recorders\{/ { s += $NF } END { print s + 0 }' "$T/out")
[ "$n" = 256 ] || fail "export: gdrtrace_recorders sums to $n, not 256"
check "export --per-process --json" '"gdrtrace_latency_seconds"' \
    export --per-process --json --exited-within 5000w "$D"
check "summary --full" "^== process node-0031 pid 100255 " summary --full "$D"
[ "$(grep -c '^== process ' "$T/out")" = 256 ] || fail "summary --full: not 256 processes"
check "summary --json" '"file_size"' summary --json "$D"
[ "$(grep -c '"file_size"' "$T/out")" = 256 ] || fail "summary --json: not 256 processes"
finish "fold-mem: ls, diff, export and summary --full/--json stay bounded"

#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# check_exports.sh — checks that libnccl-net-gdrtrace.so exports exactly the
# seven NCCL net plugin tables ncclNetPlugin_v6 … _v12 and the six profiler
# tables ncclProfiler_v1 … _v6 and nothing else, each a data object (NCCL
# dlsym's an object, not a function) whose size equals that version's
# function table (name + N members, 8 bytes each), so a table/declaration
# mismatch is caught from the built library itself.
set -u
BUILD=${BUILD:-build/default}
so="$BUILD/libnccl-net-gdrtrace.so"
echo "checks: $so exports exactly ncclNetPlugin_v6..v12 and ncclProfiler_v1..v6, as data objects of the right size"
if ! command -v nm >/dev/null; then
    echo "nm (binutils) is not installed"
    exit 77
fi
[ -f "$so" ] || { echo "FAIL: $so not built"; exit 1; }
# Table sizes: pointers in the struct (name + members) per ABI version.
declare -A want=([6]=17 [7]=19 [8]=19 [9]=20 [10]=20 [11]=22 [12]=22)
# every profiler table: name + init, startEvent, stopEvent, recordEventState, finalize
declare -A want_prof=([1]=6 [2]=6 [3]=6 [4]=6 [5]=6 [6]=6)
out=$(nm -D --defined-only -S "$so") || { echo "FAIL: nm failed on $so"; exit 1; }
echo "$out"
fail=0
seen=0
pseen=0
while read -r addr size type name; do
    [ -n "${name:-}" ] || continue
    if [[ "$name" =~ ^ncclNetPlugin_v([0-9]+)$ ]] && [ -n "${want[${BASH_REMATCH[1]}]:-}" ]; then
        v=${BASH_REMATCH[1]}
        seen=$((seen + 1))
        case $type in D | R | d | r) ;; *)
            echo "FAIL: $name has symbol type $type, expected a data object (D/R)"; fail=1 ;;
        esac
        expect=$((want[$v] * 8))
        if [ $((16#$size)) -ne $expect ]; then
            echo "FAIL: $name is $((16#$size)) bytes, ABI v$v's table is $expect bytes"
            fail=1
        fi
    elif [[ "$name" =~ ^ncclProfiler_v([0-9]+)$ ]] && [ -n "${want_prof[${BASH_REMATCH[1]}]:-}" ]; then
        v=${BASH_REMATCH[1]}
        pseen=$((pseen + 1))
        case $type in D | R | d | r) ;; *)
            echo "FAIL: $name has symbol type $type, expected a data object (D/R)"; fail=1 ;;
        esac
        expect=$((want_prof[$v] * 8))
        if [ $((16#$size)) -ne $expect ]; then
            echo "FAIL: $name is $((16#$size)) bytes, profiler v$v's table is $expect bytes"
            fail=1
        fi
    else
        echo "FAIL: unexpected exported symbol '$name' (type $type)"
        fail=1
    fi
done <<<"$out"
if [ "$seen" -ne 7 ]; then
    echo "FAIL: found $seen of the 7 ncclNetPlugin_v6..v12 symbols"
    fail=1
fi
if [ "$pseen" -ne 6 ]; then
    echo "FAIL: found $pseen of the 6 ncclProfiler_v1..v6 symbols"
    fail=1
fi
[ $fail -eq 0 ] && echo "OK: exactly the 7 ncclNetPlugin_v6..v12 and 6 ncclProfiler_v1..v6 tables are exported, sizes match"
exit $fail

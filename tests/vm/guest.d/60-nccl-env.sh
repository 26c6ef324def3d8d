#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# 60-nccl-env.sh — the job's NCCL transport variables keep NCCL's meaning on
# real verbs (issue 18), in the Soft-RoCE VM (rxe0 on veth0 10.0.0.1, rxe1 on
# veth1 10.0.0.2; busybox sh; exit 0 pass, 77 skip, else fail).
#  - NCCL_IB_HCA selects and excludes rxe devices and ports (prefix, '=',
#    '^', ':port', NCCL's "^" alone excluding all), also from /etc-style
#    conf files through NCCL_CONF_FILE, and GDRTRACE_IB_HCA overrides it;
#  - the GID each device uses is the one NCCL's rules give.  The expected
#    indexes come from the VM's own table (gids/N and gid_attrs/types/N),
#    by the rules written out below, not from gdrtrace's code;
#  - NCCL_IB_TC / _SL / _TIMEOUT / _QPS_PER_CONNECTION reach the QPs of both
#    sides (ibv_query_qp), and data flows byte-checked in each case.
command -v gt_ib_vmtest >/dev/null 2>&1 || { echo "gt_ib_vmtest not in PATH"; exit 77; }
fail=0
run() { # name command...
    name=$1
    shift
    if "$@" >/tmp/nccl-env.log 2>&1; then
        echo "ok   $name"
    else
        echo "FAIL $name: $*"
        cat /tmp/nccl-env.log
        fail=$((fail + 1))
    fi
}
clean() { env -u GDRTRACE_IB_HCA -u GDRTRACE_IB_GID_INDEX -u GDRTRACE_IB_TC -u GDRTRACE_IB_SL \
    -u GDRTRACE_IB_QPS -u GDRTRACE_IB_TIMEOUT "$@"; }

# ---- device and port selection --------------------------------------------
run hca-prefix clean NCCL_IB_HCA=rxe gt_ib_vmtest devices 2
run hca-one clean NCCL_IB_HCA=rxe1 gt_ib_vmtest devices 1
run hca-exact-port clean NCCL_IB_HCA==rxe0:1 gt_ib_vmtest devices 1
run hca-exact-none clean NCCL_IB_HCA==rxe gt_ib_vmtest devices 0
run hca-exclude clean NCCL_IB_HCA=^rxe1 gt_ib_vmtest devices 1
run hca-exclude-all clean NCCL_IB_HCA=^ gt_ib_vmtest devices 0
run hca-wrong-port clean NCCL_IB_HCA=rxe0:2,rxe1:1 gt_ib_vmtest devices 1
run hca-twin-wins clean NCCL_IB_HCA=rxe1 GDRTRACE_IB_HCA=rxe gt_ib_vmtest devices 2
printf 'NCCL_IB_HCA=^=rxe0\n' >/tmp/nccl-test.conf
run hca-conf-file clean NCCL_CONF_FILE=/tmp/nccl-test.conf gt_ib_vmtest devices 1
run hca-env-over-file clean NCCL_CONF_FILE=/tmp/nccl-test.conf NCCL_IB_HCA=rxe gt_ib_vmtest devices 2

# ---- GID choice -------------------------------------------------------------
# The table of rxeN port 1: for each populated index, its address and type.
# NCCL's rules on a table like the VM's (link-local fe80 entries and the
# veth's IPv4 address, each as RoCE v1 and v2), for the default family
# AF_INET and RoCE version 2: the IPv4-mapped RoCE v2 entry; with
# NCCL_IB_ROCE_VERSION_NUM=1, the IPv4-mapped RoCE v1 entry; with
# NCCL_IB_ADDR_FAMILY=AF_INET6 and no IPv6 address but link-local ones,
# index 0 (link-local entries are never chosen, so nothing replaces 0); with
# an NCCL_IB_ADDR_RANGE the address is not in, index 0 too.
table() { # dev: prints "index address type" lines (read once, into /tmp)
    if [ ! -f "/tmp/gid-$1.txt" ]; then
        d=/sys/class/infiniband/$1/ports/1
        i=0
        empty=0
        while [ -e "$d/gids/$i" ] && [ "$empty" -lt 16 ]; do
            a=
            t=
            read -r a <"$d/gids/$i" 2>/dev/null
            read -r t <"$d/gid_attrs/types/$i" 2>/dev/null
            case "$a" in
            0000:0000:0000:0000:0000:0000:0000:0000 | "") empty=$((empty + 1)) ;;
            *) empty=0; echo "$i $a $t" ;;
            esac
            i=$((i + 1))
        done >"/tmp/gid-$1.txt"
    fi
    cat "/tmp/gid-$1.txt"
}
find_idx() { # dev address-prefix type
    table "$1" | while read -r i a t; do
        case "$a" in "$2"*) [ "$t" = "$3" ] && { echo "$i"; break; } ;; esac
    done
}
ok_table=1
for dev in rxe0 rxe1; do
    echo "GID table of $dev:"
    table "$dev"
    # only link-local IPv6 entries besides the IPv4-mapped ones
    if table "$dev" | grep -v ' fe80:0000:0000:0000:' | grep -qv ' 0000:0000:0000:0000:0000:ffff:'; then
        echo "$dev has an IPv6 GID that is not link-local: the AF_INET6 case below does not apply"
        ok_table=0
    fi
done
v2_0=$(find_idx rxe0 0000:0000:0000:0000:0000:ffff:0a00:0001 "RoCE v2")
v2_1=$(find_idx rxe1 0000:0000:0000:0000:0000:ffff:0a00:0002 "RoCE v2")
v1_0=$(find_idx rxe0 0000:0000:0000:0000:0000:ffff:0a00:0001 "IB/RoCE v1")
v1_1=$(find_idx rxe1 0000:0000:0000:0000:0000:ffff:0a00:0002 "IB/RoCE v1")
if [ -z "$v2_0" ] || [ -z "$v2_1" ]; then
    echo "FAIL gid: no IPv4-mapped RoCE v2 GID on rxe0/rxe1 (tables above)"
    fail=$((fail + 1))
else
    run gid-auto clean gt_ib_vmtest gid rxe0="$v2_0" rxe1="$v2_1"
    run gid-auto-range clean NCCL_IB_ADDR_RANGE=10.0.0.0/24 gt_ib_vmtest gid rxe0="$v2_0" rxe1="$v2_1"
    run gid-range-elsewhere clean NCCL_IB_ADDR_RANGE=192.168.0.0/16 gt_ib_vmtest gid -n rxe0=0 rxe1=0
    run gid-forced clean NCCL_IB_GID_INDEX="$v2_0" NCCL_IB_HCA=rxe0 gt_ib_vmtest gid -n rxe0="$v2_0"
    run gid-forced-conf sh -c "printf 'NCCL_IB_GID_INDEX=0\n' >/tmp/nccl-gid.conf &&
        NCCL_CONF_FILE=/tmp/nccl-gid.conf gt_ib_vmtest gid -n rxe0=0 rxe1=0"
    run gid-twin-wins clean NCCL_IB_GID_INDEX=0 GDRTRACE_IB_GID_INDEX="$v2_0" NCCL_IB_HCA=rxe0 \
        gt_ib_vmtest gid -n rxe0="$v2_0"
    if [ -n "$v1_0" ] && [ -n "$v1_1" ]; then
        run gid-roce-v1 clean NCCL_IB_ROCE_VERSION_NUM=1 gt_ib_vmtest gid -n rxe0="$v1_0" rxe1="$v1_1"
    else
        echo "skip gid-roce-v1: no IPv4-mapped RoCE v1 entries (tables above)"
    fi
    if [ "$ok_table" = 1 ]; then
        run gid-inet6 clean NCCL_IB_ADDR_FAMILY=AF_INET6 gt_ib_vmtest gid -n rxe0=0 rxe1=0
    fi
fi

# ---- QP attributes ------------------------------------------------------------
run qp-defaults clean gt_ib_vmtest qpattrs 0 0 20 1
run qp-nccl clean NCCL_IB_TC=106 NCCL_IB_SL=3 NCCL_IB_TIMEOUT=18 NCCL_IB_QPS_PER_CONNECTION=4 \
    gt_ib_vmtest qpattrs 106 3 18 4
run qp-twin-wins clean NCCL_IB_TC=106 GDRTRACE_IB_TC=32 NCCL_IB_QPS_PER_CONNECTION=2 \
    gt_ib_vmtest qpattrs 32 0 20 2
printf 'NCCL_IB_TC=64\nNCCL_IB_TIMEOUT=16\n' >/tmp/nccl-qp.conf
run qp-conf-file clean NCCL_CONF_FILE=/tmp/nccl-qp.conf gt_ib_vmtest qpattrs 64 0 16 1
[ "$fail" = 0 ] && echo "60-nccl-env: all passed"
exit "$fail"

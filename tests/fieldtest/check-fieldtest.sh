#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# check-fieldtest.sh — dist/gdrtrace-fieldtest, the two-node field kit:
#   * --dry-run with none of its tools on PATH, one node and no RDMA device:
#     exit 0, every step of the plan shown (doctor on both nodes, the NIC
#     counters before/after, ib_write_bw --use_cuda_dmabuf, all_reduce and
#     sendrecv 8 B..8 GiB through NCCL's IB and gdrtrace's ib with dmabuf and
#     peermem at 1 and 4 QPs with the topology/graph dumps, their diffs,
#     gdrtrace diff and report), the missing tools and the missing NIC named,
#     nothing run;
#   * usage errors (one node outside --dry-run, a bad number) exit 64;
#   * a run on localhost,localhost with stand-in tools (gdrtrace, mpirun,
#     ib_write_bw printing what the real ones print) fills the folder:
#     every step's log, steps.tsv, SUMMARY.md with the bus bandwidths.
set -u
kit=dist/gdrtrace-fieldtest
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
pass() { echo "ok   $*"; }
fail() { echo "FAIL $*"; fails=$((fails + 1)); }

# A PATH with the shell tools the kit needs and none of the test tools.
mkdir -p "$T/bin"
for t in bash sh env date hostname mkdir printf grep basename dirname awk cat timeout sleep tar diff \
    rm mv cp ls sed tr wc head tail sort cut; do
    p=$(command -v "$t") && ln -s "$p" "$T/bin/$t"
done

out=$T/dry
PATH=$T/bin GDRTRACE_FIELDTEST_SYSFS=$T/nosys NCCL_TESTS_DIR="" "$kit" --dry-run --hosts nodeA \
    --out "$out" >"$T/dry.txt" 2>&1
rc=$?
[ $rc = 0 ] && pass "dry run exits 0" || fail "dry run exit $rc"
want=(
    "would run [doctor-nodeA]" "would run [doctor-SECOND-NODE]" "gdrtrace doctor --json"
    "would run [doctor-compare]" "would run [inventory-nodeA]" "ibv_devinfo -v" "nvidia-smi topo -m"
    "would run [counters-before-nodeA]" "would run [counters-after-SECOND-NODE]"
    "hw_counters/out_of_sequence" "hw_counters/packet_seq_err" "hw_counters/local_ack_timeout_err"
    "ib_write_bw -d HCA --use_cuda=0 --use_cuda_dmabuf"
    "-x NCCL_NET_PLUGIN=none -x NCCL_NET=IB all_reduce_perf -b 8 -e 8G"
    "-x GDRTRACE_REG=dmabuf sendrecv_perf -b 8 -e 8G"
    "-x GDRTRACE_REG=peermem -x GDRTRACE_ALLOW_PEERMEM=1 all_reduce_perf"
    "-x NCCL_IB_QPS_PER_CONNECTION=4" "-x NCCL_IB_QPS_PER_CONNECTION=1"
    "NCCL_TOPO_DUMP_FILE=$out/all_reduce-gt-dmabuf-q4/topo.xml"
    "NCCL_GRAPH_DUMP_FILE=$out/sendrecv-nccl-ib-q1/graph.xml"
    "-H nodeA:1,SECOND-NODE:1"
    "would run [diff-topo-q1]" "would run [diff-graph-q4]"
    "gdrtrace diff --nccl-log-a" "gdrtrace report --force -o $out/report.html --baseline"
    "note: only one node given" "missing on this node: gdrtrace ib_write_bw mpirun ssh nvidia-smi all_reduce_perf sendrecv_perf"
    "no RDMA device with an active port" "dry run: nothing is run")
for w in "${want[@]}"; do
    grep -qF -- "$w" "$T/dry.txt" && pass "dry run says: $w" || fail "dry run lacks: $w"
done
n=$(grep -c '^would run \[\(all_reduce\|sendrecv\)-' "$T/dry.txt")
[ "$n" = 12 ] && pass "12 nccl-tests runs (2 tests x 3 paths x 2 QP counts)" || fail "$n nccl-tests runs, expected 12"
n=$(grep -c '^\[' "$out/plan.txt")
[ "$n" -ge 32 ] && pass "plan.txt holds the $n steps" || fail "plan.txt holds $n steps"
left=$(cd "$out" && ls | tr '\n' ' ')
[ "$left" = "plan.txt steps.tsv " ] && pass "nothing run (only the plan written)" || fail "dry run left: $left"

PATH=$T/bin "$kit" --hosts nodeA --out "$T/one" >"$T/one.txt" 2>&1
rc=$?
[ $rc = 64 ] && grep -q "exactly two nodes" "$T/one.txt" && pass "one node without --dry-run: 64, said" ||
    fail "one node without --dry-run: exit $rc: $(cat "$T/one.txt")"
PATH=$T/bin "$kit" --hosts a,b --timeout 5m --dry-run --out "$T/bad" >"$T/bad.txt" 2>&1
rc=$?
[ $rc = 64 ] && grep -q "not a number" "$T/bad.txt" && pass "bad --timeout: 64, said" || fail "bad --timeout: exit $rc"

# A run with stand-ins: the kit's own plumbing (logs, steps.tsv, summary).
mkdir -p "$T/stub"
cat >"$T/stub/gdrtrace" <<'EOS'
#!/bin/sh
echo "stub gdrtrace $*"
case "$1 $2" in "doctor --json") echo '{"stub": true}' ;; esac
case "$1" in report) while [ $# -gt 0 ]; do [ "$1" = -o ] && echo "<html>" >"$2"; shift; done ;; esac
exit 0
EOS
cat >"$T/stub/mpirun" <<'EOS'
#!/bin/sh
for a in "$@"; do
    case "$a" in NCCL_TOPO_DUMP_FILE=*) echo "<system/>" >"${a#*=}" ;;
                 NCCL_GRAPH_DUMP_FILE=*) echo "<graphs/>" >"${a#*=}" ;; esac
done
echo "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong"
echo "           8             2     float     sum      -1    20.00    0.00    0.00      0    19.00    0.00    0.00      0"
echo "  8589934592    2147483648     float     sum      -1  50000.0  171.80  171.80      0  50000.0  171.80  171.80      0"
echo "# Avg bus bandwidth    : 85.9"
EOS
cat >"$T/stub/ib_write_bw" <<'EOS'
#!/bin/sh
echo " 65536      5000           390.00             389.00            0.741946"
EOS
for f in nvidia-smi ssh all_reduce_perf sendrecv_perf; do printf '#!/bin/sh\nexit 0\n' >"$T/stub/$f"; done
chmod +x "$T"/stub/*
PATH=$T/stub:$T/bin "$kit" --hosts localhost,localhost --out "$T/run" --timeout 30 --hca fake0 \
    >"$T/run.txt" 2>&1
rc=$?
# The NIC counters fail here (no /sys/class/infiniband): exit 1, said.
[ $rc = 1 ] && pass "stub run: exit 1 (no NIC counters on this machine)" || fail "stub run exit $rc: $(tail -n 5 "$T/run.txt")"
for f in SUMMARY.md steps.tsv doctor-localhost.json doctor-compare.log inventory-localhost.log ib_write_bw.log \
    all_reduce-nccl-ib-q1.log sendrecv-gt-peermem-q4.log all_reduce-gt-dmabuf-q4/topo.xml \
    topo-nccl-ib-vs-gdrtrace-q1.diff gdrtrace-diff-sendrecv.log report.html; do
    [ -s "$T/run/$f" ] || [ -e "$T/run/$f" ] && pass "stub run wrote $f" || fail "stub run lacks $f"
done
grep -q '| all_reduce-gt-dmabuf-q4 | 85.9 | 8589934592 | 171.80 |' "$T/run/SUMMARY.md" &&
    pass "SUMMARY.md has the bus bandwidths" || fail "SUMMARY.md bandwidth row missing: $(grep gt-dmabuf-q4 "$T/run/SUMMARY.md")"
grep -q '| ib_write_bw | 0 |' "$T/run/SUMMARY.md" && pass "SUMMARY.md lists each step's exit" ||
    fail "SUMMARY.md step table"
grep -q '^{"stub": true}' "$T/run/doctor-localhost.json" && pass "doctor --json captured" || fail "doctor --json not captured"

[ $fails = 0 ] && { echo "fieldtest: all checks passed"; exit 0; }
echo "fieldtest: $fails check(s) failed"
exit 1

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
#   * the dry run also lists the pass/fail rule's steps: NCCL pinned to
#     NCCL_NET=gdrtrace in every gdrtrace run, a judge step per gdrtrace run
#     (channels via NET/gdrtrace, busbw >= 0.98x nccl-ib), alltoall_perf and
#     sendrecv_perf at 8 ranks per node, the link counters, srun;
#   * a run on localhost,localhost with stand-in tools (gdrtrace, mpirun,
#     ib_write_bw printing what the real ones print; mpirun writing NCCL's
#     channel lines for the network NCCL_NET names) fills the folder:
#     every step's log, steps.tsv, SUMMARY.md with the bus bandwidths; every
#     judge passes;
#   * the same run with the plugin refused (NCCL's channels via NET/IB) or
#     gdrtrace 3% slower than nccl-ib fails every judge and the kit (exit 1,
#     verdict FAIL naming the judges); without nvidia_peermem the peermem
#     runs are skipped with the note.
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
    "note: only one node given" "missing on this node: gdrtrace ib_write_bw mpirun ssh nvidia-smi all_reduce_perf sendrecv_perf alltoall_perf"
    "no RDMA device with an active port" "dry run: nothing is run"
    "-x NCCL_NET_PLUGIN=gdrtrace -x NCCL_NET=gdrtrace -x GDRTRACE_TRANSPORT=ib -x GDRTRACE_REG=dmabuf"
    "would run [judge-all_reduce-gt-dmabuf-q1]" "would run [judge-sendrecv-gt-peermem-q4]"
    "grep -c 'via NET/gdrtrace'" "0.98 * a" "$out/all_reduce-nccl-ib-q1.log $out/all_reduce-gt-dmabuf-q1.log"
    "would run [alltoall8-nccl-ib-q1]" "would run [judge-alltoall8-gt-dmabuf-q1]"
    "would run [judge-sendrecv8-gt-dmabuf-q1]" "mpirun -np 16 -H nodeA:8,SECOND-NODE:8"
    "alltoall_perf -b 8 -e 8G" "ports/*/counters/symbol_error" "ports/*/counters/link_downed"
    "ports/*/counters/port_rcv_errors" "ports/*/counters/port_xmit_discards")
for w in "${want[@]}"; do
    grep -qF -- "$w" "$T/dry.txt" && pass "dry run says: $w" || fail "dry run lacks: $w"
done
n=$(grep -c '^would run \[\(all_reduce\|sendrecv\)-' "$T/dry.txt")
[ "$n" = 12 ] && pass "12 nccl-tests runs (2 tests x 3 paths x 2 QP counts)" || fail "$n nccl-tests runs, expected 12"
n=$(grep -c '^would run \[\(alltoall8\|sendrecv8\)-' "$T/dry.txt")
[ "$n" = 4 ] && pass "4 runs at 8 ranks per node" || fail "$n runs at 8 ranks per node, expected 4"
n=$(grep -c '^would run \[judge-' "$T/dry.txt")
[ "$n" = 10 ] && pass "a judge for each of the 10 gdrtrace runs" || fail "$n judge steps, expected 10"
grep '^  mpirun' "$T/dry.txt" | grep NCCL_NET_PLUGIN=gdrtrace | grep -qv 'NCCL_NET=gdrtrace' &&
    fail "a gdrtrace run without NCCL_NET=gdrtrace" || pass "every gdrtrace run pins NCCL_NET=gdrtrace"
n=$(grep -c '^\[' "$out/plan.txt")
[ "$n" -ge 46 ] && pass "plan.txt holds the $n steps" || fail "plan.txt holds $n steps"
PATH=$T/bin GDRTRACE_FIELDTEST_SYSFS=$T/nosys "$kit" --dry-run --hosts nodeA,nodeB --launcher srun \
    --ranks-per-node 4 --out "$T/srun" >"$T/srun.txt" 2>&1
grep -qF "srun -N 2 -w nodeA,nodeB --ntasks-per-node=4 --export=ALL,NCCL_DEBUG=INFO," "$T/srun.txt" &&
    grep -qF "would run [alltoall4-gt-dmabuf-q1]" "$T/srun.txt" &&
    pass "--launcher srun --ranks-per-node 4: srun lines" || fail "srun plan: $(grep -m1 srun "$T/srun.txt")"
PATH=$T/bin "$kit" --hosts a,b --launcher pbs --dry-run --out "$T/bad2" >"$T/bad2.txt" 2>&1
[ $? = 64 ] && grep -q "mpirun or srun" "$T/bad2.txt" && pass "bad --launcher: 64, said" || fail "bad --launcher"
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
# mpirun: NCCL's channel lines go to NCCL_DEBUG_FILE for the network
# NCCL_NET names (STUB_NET overrides it: a refused plugin); gdrtrace runs
# report STUB_GT_BW as their average bus bandwidth.
cat >"$T/stub/mpirun" <<'EOS'
#!/bin/sh
log="" net=IB bw=85.9
for a in "$@"; do
    case "$a" in NCCL_TOPO_DUMP_FILE=*) echo "<system/>" >"${a#*=}" ;;
                 NCCL_GRAPH_DUMP_FILE=*) echo "<graphs/>" >"${a#*=}" ;;
                 NCCL_DEBUG_FILE=*) log=${a#*=} ;;
                 NCCL_NET=*) net=${a#*=} ;; esac
done
[ "$net" = gdrtrace ] && bw=${STUB_GT_BW:-85.9}
net=${STUB_NET:-$net}
if [ -n "$log" ]; then
    f=$(echo "$log" | sed -e "s/%h/$(hostname)/" -e "s/%p/$$/")
    echo "$(hostname):$$:$$ [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/$net/0" >>"$f"
fi
echo "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong"
echo "           8             2     float     sum      -1    20.00    0.00    0.00      0    19.00    0.00    0.00      0"
echo "  8589934592    2147483648     float     sum      -1  50000.0  171.80  171.80      0  50000.0  171.80  171.80      0"
echo "# Avg bus bandwidth    : $bw"
EOS
cat >"$T/stub/ib_write_bw" <<'EOS'
#!/bin/sh
echo " 65536      5000           390.00             389.00            0.741946"
EOS
for f in nvidia-smi ssh all_reduce_perf sendrecv_perf alltoall_perf; do printf '#!/bin/sh\nexit 0\n' >"$T/stub/$f"; done
chmod +x "$T"/stub/*
mkdir -p "$T/sys/module/nvidia_peermem"
PATH=$T/stub:$T/bin GDRTRACE_FIELDTEST_SYSFS=$T/sys "$kit" --hosts localhost,localhost --out "$T/run" \
    --timeout 30 --hca fake0 >"$T/run.txt" 2>&1
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
n=$(awk -F'\t' '$1 ~ /^judge-/ && $2 == 0' "$T/run/steps.tsv" | wc -l)
[ "$n" = 10 ] && pass "stub run: the 10 judges pass (channels via NET/gdrtrace, busbw equal)" ||
    fail "stub run: $n of 10 judges passed: $(cat "$T"/run/judge-*.log | head -n 6)"
grep -q 'channels via NET/gdrtrace: 1, via another network: 0' "$T/run/judge-alltoall8-gt-dmabuf-q1.log" &&
    pass "the judge names the channels it counted" || fail "judge log: $(cat "$T/run/judge-alltoall8-gt-dmabuf-q1.log")"
grep -q '^FAIL: ' "$T/run/SUMMARY.md" && grep -q '^verdict: FAIL' "$T/run.txt" &&
    pass "SUMMARY.md and the last line give the verdict" || fail "no verdict: $(tail -n 3 "$T/run.txt")"

# The plugin refused (NCCL ran over its own IB) or slower than NCCL's IB: the
# kit cannot pass; without nvidia_peermem the peermem runs are skipped.
# (the slow run is also the one without nvidia_peermem: 6 judges, not 10)
for c in refused slow; do
    if [ $c = refused ]; then e="STUB_NET=IB" sys=$T/sys want=10; else e="STUB_GT_BW=83.3" sys=$T/nosys want=6; fi
    env $e PATH=$T/stub:$T/bin GDRTRACE_FIELDTEST_SYSFS=$sys "$kit" --hosts localhost,localhost \
        --out "$T/$c" --timeout 30 --hca fake0 >"$T/$c.txt" 2>&1
    rc=$?
    n=$(awk -F'\t' '$1 ~ /^judge-/ && $2 != 0' "$T/$c/steps.tsv" | wc -l)
    [ $rc = 1 ] && [ "$n" = $want ] && grep -q '^- judge-sendrecv8-gt-dmabuf-q1 (1)' "$T/$c/SUMMARY.md" &&
        pass "$c: every judge fails, the kit fails and SUMMARY.md names the judges" ||
        fail "$c: exit $rc, $n judges failed"
done
grep -q 'FAIL: NCCL did not run through gdrtrace' "$T/refused/judge-all_reduce-gt-dmabuf-q1.log" &&
    pass "refused: the judge says NCCL did not run through gdrtrace" || fail "refused: judge log"
grep -q 'below 0.98 x nccl-ib (0.970)' "$T/slow/judge-sendrecv-gt-dmabuf-q4.log" &&
    pass "slow: the judge gives the ratio" || fail "slow: $(cat "$T/slow/judge-sendrecv-gt-dmabuf-q4.log")"
grep -q $'^sendrecv-gt-peermem-q1\tskip' "$T/slow/steps.tsv" && grep -q 'nvidia_peermem is not loaded' "$T/slow/SUMMARY.md" &&
    ! [ -e "$T/slow/judge-all_reduce-gt-peermem-q1.log" ] &&
    pass "no nvidia_peermem: peermem runs skipped, with the note" || fail "no nvidia_peermem: $(grep peermem "$T/slow/steps.tsv" | head -n 2)"

[ $fails = 0 ] && { echo "fieldtest: all checks passed"; exit 0; }
echo "fieldtest: $fails check(s) failed"
exit 1

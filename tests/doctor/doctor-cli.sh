#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# doctor-cli.sh — `gdrtrace doctor` as a user runs it:
#  1. on this machine, as it is: the exit code is the one the report states,
#     every check has a status, and what could not be checked is listed;
#  2. --json is a document doctor itself can read back (--compare of it with
#     itself: no differences, exit 0);
#  3. usage errors exit 64;
#  4. each fixture tree (GDRTRACE_SYSFS_ROOT) gives its expected status per
#     check and exit code (live probes skipped: they would test this machine);
#  5. --compare of two fixture nodes prints exactly the expected differences.
set -u
here=$(cd "$(dirname "$0")" && pwd)
BUILD=${BUILD:-build/default}
bin="$(cd "$BUILD" && pwd)/gdrtrace"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# 1. this machine
"$bin" doctor >"$tmp/real.txt" 2>&1
rc=$?
cat "$tmp/real.txt"
grep -q "^Summary: .* -> exit $rc " "$tmp/real.txt" || fail "real run: exit $rc not the one the summary states"
case $rc in 0|1|2) ;; *) fail "real run: exit $rc is not a documented code" ;; esac
n=$(grep -cE '^  (PASS|WARN|FAIL|SKIP)  ' "$tmp/real.txt")
[ "$n" -ge 18 ] || fail "real run: only $n checks printed"
if grep -q '^  SKIP  ' "$tmp/real.txt"; then
    grep -q '^Could not check on this node:' "$tmp/real.txt" || fail "real run: SKIPs but no 'Could not check' list"
fi

# 2. JSON round trip
"$bin" doctor --json >"$tmp/real.json" 2>/dev/null
jrc=$?
[ "$jrc" -eq "$rc" ] || fail "--json exit $jrc differs from the report's $rc"
grep -q "\"exit_code\": $rc" "$tmp/real.json" || fail "--json summary.exit_code is not $rc"
"$bin" doctor --compare "$tmp/real.json" "$tmp/real.json" >"$tmp/self.txt" 2>&1
crc=$?
[ "$crc" -eq 0 ] || { cat "$tmp/self.txt"; fail "--compare of a bundle with itself: exit $crc"; }
grep -q '(no differences)' "$tmp/self.txt" || fail "--compare with itself lists differences"

# 3. usage
"$bin" doctor --bogus >/dev/null 2>&1; [ $? -eq 64 ] || fail "unknown option: not exit 64"
"$bin" doctor --compare >/dev/null 2>&1; [ $? -eq 64 ] || fail "--compare without a file: not exit 64"
"$bin" doctor --compare "$tmp/missing.json" >/dev/null 2>&1; [ $? -eq 64 ] || fail "--compare of a missing file: not exit 64"
echo '{"kind": "something-else", "format": 1}' >"$tmp/other.json"
"$bin" doctor --compare "$tmp/other.json" >/dev/null 2>&1; [ $? -eq 64 ] || fail "--compare of a foreign document: not exit 64"
printf '{"kind": "gdrtrace-doctor", "format": 1, "x": [' >"$tmp/trunc.json"
"$bin" doctor --compare "$tmp/trunc.json" >/dev/null 2>&1; [ $? -eq 64 ] || fail "--compare of truncated JSON: not exit 64"
"$bin" doctor --help | grep -q '^exit: 0 all PASS' || fail "--help does not document the exit codes"

# 4. fixtures: every check's status and the exit code, exactly
for exp in "$here"/expected/*.status; do
    f=$(basename "$exp" .status)
    GDRTRACE_SYSFS_ROOT="$here/fixtures/$f" "$bin" doctor >"$tmp/$f.txt" 2>&1
    rc=$?
    { echo "exit $rc"; grep -E '^  (PASS|WARN|FAIL|SKIP)  ' "$tmp/$f.txt" | awk '{print $2, $1}'; } >"$tmp/$f.status"
    if ! diff -u "$exp" "$tmp/$f.status"; then
        fail "fixture $f: statuses or exit code differ from $exp"
    fi
    grep -q 'CUDA and verbs probes not run: GDRTRACE_SYSFS_ROOT is set' "$tmp/$f.txt" ||
        fail "fixture $f: the report does not say why the live probes were skipped"
    GDRTRACE_SYSFS_ROOT="$here/fixtures/$f" "$bin" doctor --json >"$tmp/$f.json" 2>/dev/null
    # the recorder's fingerprint fields, all of them (struct gtr_fingerprint)
    for k in kernel_release boot_id nvidia_version nvidia_flavour peermem_loaded memory_peers \
             cuda_driver_version rdma_devices gpus cpu_model; do
        grep -q "^    \"$k\": " "$tmp/$f.json" || fail "fixture $f: fingerprint.$k missing from --json"
    done
done
grep -q '"nvidia_flavour": "proprietary"' "$tmp/prop-peermem.json" || fail "prop-peermem: flavour not proprietary"
grep -q '"nvidia_flavour": "open"' "$tmp/open-mlx5.json" || fail "open-mlx5: flavour not open"
grep -q 'rxe0@-: port 1 ACTIVE, netdev eth0' "$tmp/mixed.txt" || fail "mixed: rxe0 netdev not reported"
grep -q 'gpu1 nearest: mlx5_0 (SYS)' "$tmp/mixed.txt" || fail "mixed: gpu1's nearest NIC is not mlx5_0 at SYS"
grep -q 'gpu0 0000:18:00.0: mlx5_0@0000:19:00.0 PIX, mlx5_1@0000:1c:00.0 PHB, rxe0@- N/A' "$tmp/mixed.txt" ||
    fail "mixed: gpu0's PCI relationships"
grep -q 'ib_write_bw --use_cuda=1 --use_cuda_dmabuf -d mlx5_1 -i 1 -a -F --report_gbits -q 1 SERVER' "$tmp/open-mlx5.txt" ||
    fail "open-mlx5: gate-2 command for gpu1 does not use its own HCA"
grep -q 'ib_write_bw -d mlx5_0 -i 1 -x 3 -a' "$tmp/prop-peermem.txt" ||
    fail "prop-peermem: RoCE gate-2 command lacks the RoCE v2 GID index (-x 3)"

# 5. --compare of two fixture nodes: exactly the expected differences
GDRTRACE_SYSFS_ROOT="$here/fixtures/open-mlx5-b" "$bin" doctor --json >"$tmp/open-mlx5-b.json" 2>/dev/null
(cd "$tmp" && "$bin" doctor --compare open-mlx5.json open-mlx5-b.json) >"$tmp/cmp.txt" 2>&1
crc=$?
[ "$crc" -eq 1 ] || fail "--compare open-mlx5 open-mlx5-b: exit $crc, expected 1"
diff -u "$here/expected/compare-open-mlx5-b.txt" "$tmp/cmp.txt" || fail "--compare lists other differences than expected"
(cd "$tmp" && "$bin" doctor --compare open-mlx5.json prop-peermem.json) >"$tmp/cmp2.txt" 2>&1
[ $? -eq 1 ] || fail "--compare open vs proprietary node: not exit 1"
grep -q 'software  fingerprint.nvidia_flavour: "open" vs "proprietary"' "$tmp/cmp2.txt" || fail "--compare misses the flavour difference"
# this node against a fixture bundle works too (A = this node)
GDRTRACE_SYSFS_ROOT="$here/fixtures/open-mlx5" "$bin" doctor --compare "$tmp/open-mlx5.json" >"$tmp/cmp3.txt" 2>&1
[ $? -eq 0 ] || { cat "$tmp/cmp3.txt"; fail "--compare of a fixture node with its own bundle: not exit 0"; }

if [ "$fails" -ne 0 ]; then
    echo "$fails failure(s)"
    exit 1
fi
echo "doctor CLI: all checks passed"

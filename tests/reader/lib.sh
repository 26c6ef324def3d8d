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

# unwrap: verdict/summary text with each wrapped line joined back onto the
# line it continues (a continuation starts with spaces where the line it
# continues is not deeper indented: verdict's evidence wraps under itself).
# For greps of a sentence that may cross a line break; verdict's lines only.
unwrap() {
    awk 'NR > 1 && /^ / { sub(/^ +/, " "); printf "%s", $0; next }
         NR > 1 { print "" } { printf "%s", $0 } END { if (NR) print "" }'
}

finish() {
    [ $fails = 0 ] && echo "$1" && return 0
    echo "$fails check(s) failed"
    return 1
}

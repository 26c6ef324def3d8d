#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# test-format-compat.sh — a recorder written by an older minor version stays
# readable (docs/recorder-format.md, "Versions").
#
# data/format-1.0.rec was written by ce69281's writer (format 1.0: 16 reason
# slots, no settings section) with data/format-1.0-gen.c.txt.  Its comm holds
# 6 fallbacks "dmabuf-unsupported" (slot 1), 2 errors "peer-gone" (slot 15,
# the last slot 1.0 had), 6 regMrDmaBuf->peermem and 3 host->host.  This
# build reads it with every count in place and nothing invented in the slots
# 1.1 appended.
set -u
BUILD=${BUILD:-build/default}
G=$BUILD/gdrtrace
F=tests/reader/data/format-1.0.rec
fails=0
pass() { echo "ok   $*"; }
fail() { echo "FAIL $*"; fails=$((fails + 1)); }

out=$($G summary --json "$F" 2>&1); rc=$?
if [ $rc -ne 0 ]; then
    fail "summary --json of a 1.0 recorder: exit $rc: ${out:0:400}"
    exit 1
fi
py=$(python3 - "$out" <<'PY'
import json, sys
d = json.loads(sys.argv[1])
p = d["processes"][0]
c = p["comms"][0]
want = {
    "format": (p["format"], "1.0"),
    "transport": (p["transport"], "ib"),
    "comm": (c["comm"], "0xabcdef0123456789"),
    "fallbacks": (c["fallbacks"]["count"], 6),
    "fallback reasons": (c["fallbacks"]["by_reason"], {"dmabuf-unsupported": 6}),
    "fallback last": (c["fallbacks"]["last_reason"], "dmabuf-unsupported"),
    "errors": (c["errors"]["count"], 2),
    "error reasons": (c["errors"]["by_reason"], {"peer-gone": 2}),
    "error last": (c["errors"]["last_reason"], "peer-gone"),
    "dmabuf->peermem": (c["registrations"]["dmabuf"]["peermem"]["count"], 6),
    "host->host": (c["registrations"]["host"]["host"]["count"], 3),
    "sends": (c["traffic"]["sends"], 100),
    "events": (p["events"]["complete"], 4),
}
bad = [f"{k}: got {g!r}, want {w!r}" for k, (g, w) in want.items() if g != w]
print("; ".join(bad) if bad else "OK")
PY
)
[ "$py" = OK ] && pass "format 1.0 recorder: every count read in place" || fail "format 1.0 recorder: $py"

txt=$($G summary "$F" 2>&1)
grep -q "format   1.0" <<<"$txt" && grep -q "fallbacks       6 (dmabuf-unsupported x6)" <<<"$txt" &&
    grep -q "errors          2 (peer-gone x2)" <<<"$txt" &&
    pass "summary text of a 1.0 recorder" || fail "summary text: $txt"

[ $fails -eq 0 ] || exit 1

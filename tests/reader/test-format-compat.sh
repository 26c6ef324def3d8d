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
#
# A 1.3 file (written by the fixture with --minor 3: identity's reserved
# bytes zero, where 1.4 keeps the writer's pid namespace and start) is read
# as 1.3 and judged by the rules 1.3 had: a LIVE one whose pid is gone is
# crashed, not "unknown" for want of a namespace.
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

txt=$($G summary --full "$F" 2>&1)
grep -q "format   1.0" <<<"$txt" && grep -q "fallbacks       6 (dmabuf-unsupported x6)" <<<"$txt" &&
    grep -q "errors          2 (peer-gone x2)" <<<"$txt" &&
    pass "summary text of a 1.0 recorder" || fail "summary text: $txt"

FX=$BUILD/tests/reader_fixture
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
R=$T/gdrtrace.job42.node-a.99999999.rec
$FX dmabuf "$R" --minor 3 --state live --pid 99999999 || fail "fixture --minor 3"
# identity's last 128 bytes (reserved in 1.3) are zero in the file
off=$(python3 -c 'import struct,sys
h=open(sys.argv[1],"rb").read(4096)
n=struct.unpack_from("<I",h,36)[0]
for i in range(n):
    sid,esz,o,sz,c=struct.unpack_from("<IIQQQ",h,40+32*i)
    if sid==1: print(o+esz-128)' "$R")
z=$(od -v -A n -t x1 -j "$off" -N 128 "$R" | tr -d ' \n' | tr -d 0)
[ -n "$off" ] && [ -z "$z" ] && pass "a 1.3 file has zeros where 1.4 keeps the writer's namespace" ||
    fail "1.3 fixture identity tail: offset '$off', bytes '$z'"
out=$($G summary --json "$R" 2>&1); rc=$?
[ $rc = 0 ] && python3 -c 'import json,sys; p=json.loads(sys.argv[1])["processes"][0]; sys.exit(p["format"]!="1.3")' "$out" &&
    pass "a 1.3 recorder without the 1.4 fields parses as 1.3" || fail "1.3 recorder: exit $rc: ${out:0:400}"
$G verdict "$R" >/dev/null; rc=$?
[ $rc = 0 ] && pass "a 1.3 recorder: its verdict" || fail "1.3 recorder verdict: exit $rc"
out=$($G ls "$R")
grep -q ' crashed ' <<<"$out" && ! grep -q 'namespace' <<<"$out" &&
    pass "a LIVE 1.3 recorder whose pid is gone: crashed, as 1.3 judged it" || fail "1.3 liveness: $out"

# Format 1.8: the registration policy is a code (identity.reg_mode and its
# facts bit) and the reader takes it over policy_reg; a code this build does
# not know is an unknown policy (shown as the writer's name); a 1.7 file's
# byte means nothing.  The policy shows in a host-staged verdict's next step
# and in summary's JSON.
N=gdrtrace.job42.node-a.4242.rec
cases=(
    "s17host|--reg host|host host"
    "c18host|--reg dmabuf --reg-code host|host host"
    "c18dmabuf|--reg host --reg-code dmabuf|other dmabuf"
    "c18new|--reg host --reg-code 9|other host"
    "c17code|--reg dmabuf --reg-code host --minor 7|other dmabuf"
)
for c in "${cases[@]}"; do
    IFS='|' read -r name args want <<<"$c"
    mkdir -p "$T/$name"
    # shellcheck disable=SC2086
    $FX host "$T/$name/$N" $args || fail "fixture $name"
    n=$($G verdict "$T/$name" | grep -c "host-memory baseline")
    j=$($G summary --json "$T/$name" |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["processes"][0]["policy_reg"])')
    got="$([ "$n" -gt 0 ] && echo host || echo other) $j"
    [ "$got" = "$want" ] && pass "policy of $name ($args): $got" ||
        fail "policy of $name ($args): got '$got', want '$want'"
done

[ $fails -eq 0 ] || exit 1

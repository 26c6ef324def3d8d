#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# test-report-html.sh — `gdrtrace report` opened in a real browser (Debian's
# chromium, headless).  Recorders: the NCCL-like harness through the real
# plugin as two nodes (gpu2 and gpu10, each in its own UTS namespace when
# unshare is allowed: HOST-STAGED on its data communicator, NO-DATA on its
# second), fixture recorders on gpu1 and gpu3 (DIRECT-DMABUF, FALLBACK,
# ERROR on two more communicators) and one on a host named with a <script>.
# Checks that
#  * the DOM chromium builds has one grid cell per node x communicator,
#    each carrying the verdict `gdrtrace summary --json` gives that node's
#    processes in that communicator, one node square per node with
#    `verdict --json`'s node verdict, rows in natural order (gpu2 before
#    gpu10), and no script element (the hostile host stayed text);
#  * the page requests nothing: no http:, https:, // or url( other than to
#    #fragments in the HTML; with every host name mapped to nowhere, chromium's
#    net log holds no request made for the page and its console no message
#    (a Content-Security-Policy refusal would be one);
#  * `report --baseline A B` with B a GDRTRACE_GPUMEM=1 run of the harness:
#    the emulated banner, B's cells hatched and marked, the latency curves
#    of A and B overlaid.
# Keeps job.html, ab.html and a screenshot report.png (1400x1000) in
# $BUILD/artifacts/report-html.  Skips (77) without chromium or python3.
. "$(dirname "$0")/lib.sh"
H=$BUILD/harness/harness
CHROME=$(command -v chromium || command -v chromium-browser) ||
    { echo "skip: chromium is not installed (scripts/install-deps.sh check installs it)"; exit 77; }
command -v python3 >/dev/null || { echo "skip: python3 is not installed (it reads the DOM)"; exit 77; }
[ -x "$H" ] || { echo "skip: $H is not built"; exit 77; }
ART=$BUILD/artifacts/report-html
rm -rf "$ART" && mkdir -p "$ART"

# The harness writes one recorder per process (two) with this machine's host
# name; in a UTS namespace of its own it runs as node HOST.
harness_as() { # HOST DIR [VAR=VALUE...]
    local host=$1 dir=$2
    shift 2
    if unshare --uts true 2>/dev/null; then
        env GDRTRACE_JOB=canary "$@" unshare --uts sh -c 'hostname "$0" && exec "$@"' "$host" \
            "$H" --abi 12 --data-only --iters 10 --max-size 1M --dir "$dir" \
            --plugin "$BUILD/libnccl-net-gdrtrace.so"
    else
        env GDRTRACE_JOB=canary "$@" "$H" --abi 12 --data-only --iters 10 --max-size 1M \
            --dir "$dir" --plugin "$BUILD/libnccl-net-gdrtrace.so"
    fi
}
mkdir -p "$T/job" "$T/emu" "$T/profile"
for h in gpu10 gpu2; do
    harness_as $h "$T/job" >"$T/harness-$h.log" 2>&1 ||
        { cat "$T/harness-$h.log"; echo "FAIL: the harness itself failed"; exit 1; }
done
unshare --uts true 2>/dev/null || echo "note: no UTS namespace here: the harness ran as $(hostname) twice"
harness_as gpu10 "$T/emu" GDRTRACE_GPUMEM=1 >"$T/harness-emu.log" 2>&1 ||
    { cat "$T/harness-emu.log"; echo "FAIL: the harness with GDRTRACE_GPUMEM=1 failed"; exit 1; }
fx() { $FX "$1" "$T/job/gdrtrace.canary.$3.rec" --job canary --host "$2" --pid "$3" --rank "$3" --comm "$4" ||
    fail "fixture $*"; }
fx dmabuf gpu1 101 0xc0ffee
fx dmabuf gpu3 103 0xc0ffee
fx fallback gpu3 104 0xbad
fx error gpu1 105 0xbad
fx dmabuf 'evil<script>x()</script>' 106 0xc0ffee

out=$($G report -o "$T/job.html" "$T/job" 2>&1); rc=$?
[ $rc = 0 ] && [ -s "$T/job.html" ] && pass "report -o job.html: $out" || fail "report: exit $rc: $out"
$G report -o "$T/job.html" "$T/job" >/dev/null 2>&1; rc=$?
[ $rc = 1 ] && pass "an existing page is kept without --force (exit 1)" || fail "no --force: exit $rc"
$G report --force -o "$T/job.html" "$T/job" >/dev/null 2>&1 && pass "--force replaces it" || fail "--force"
$G report --baseline "$T/job" -o "$T/ab.html" "$T/emu" >"$T/ab.out" 2>&1; rc=$?
[ $rc = 0 ] && pass "report --baseline A -o ab.html B" || fail "A/B: exit $rc: $(cat "$T/ab.out")"
cp "$T/job.html" "$T/ab.html" "$ART/"
$G report "$T/job" >/dev/null 2>&1; rc=$?
[ $rc = 64 ] && pass "no -o: usage error (64)" || fail "no -o: exit $rc"
out=$($G report -o "$T/none.html" 2>&1); rc=$?
[ $rc = 15 ] && [ ! -e "$T/none.html" ] && pass "no recorder: exit 15, nothing written" ||
    fail "no recorder: exit $rc: $out"
printf 'not a recorder' >"$T/junk.rec"
out=$($G report -o "$T/part.html" "$T/job" "$T/junk.rec" 2>&1); rc=$?
[ $rc = 2 ] && grep -q "could not be read" "$T/part.html" && pass "an unreadable input: exit 2, page written with a banner" ||
    fail "unreadable input: exit $rc: $out"
$G report -o "$T/x.html" --baseline "$T/nowhere" "$T/job" >/dev/null 2>&1; rc=$?
[ $rc = 2 ] && [ ! -e "$T/x.html" ] && pass "--baseline unreadable: exit 2, nothing written" ||
    fail "--baseline nowhere: exit $rc"
$G report -o "$T/again.html" "$T/job" >/dev/null && cmp -s "$T/again.html" "$T/job.html" &&
    pass "deterministic: the same inputs give the same bytes" || fail "two pages of one input differ"
$G summary --json "$T/job" >"$T/summary.json"
$G verdict --json "$T/job" >"$T/verdict.json"

# The HTML names nothing outside itself (invariant 2 of tools/render/html.h).
for f in job ab; do
    bad=$(grep -oE 'https?:|//|url\([^#][^)]*\)' "$T/$f.html" | sort -u | head -5)
    [ -z "$bad" ] && pass "$f.html: no http:, https:, // or url( but to #fragments" ||
        fail "$f.html names: $bad"
done

# chromium headless as root: no sandbox; /dev/shm may be small in a container.
chrome() { # OUT-FILE ARGS... (stdout to OUT-FILE, stderr to OUT-FILE.err)
    local o=$1
    shift
    timeout 60 "$CHROME" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
        --no-first-run --disable-background-networking --disable-component-update \
        --disable-sync --disable-default-apps --disable-extensions --user-data-dir="$T/profile" \
        --host-resolver-rules="MAP * ~NOTFOUND" --enable-logging=stderr --v=0 "$@" \
        >"$o" 2>"$o.err"
}
chrome "$T/dom.html" --log-net-log="$T/net.json" --dump-dom "file://$T/job.html" ||
    { tail -5 "$T/dom.html.err"; fail "chromium --dump-dom job.html"; }
chrome "$T/shot.out" --screenshot="$ART/report.png" --window-size=1400,1000 "file://$T/job.html" ||
    fail "chromium --screenshot"
[ -s "$ART/report.png" ] && pass "screenshot kept: $ART/report.png" || fail "no screenshot"
chrome "$T/ab-dom.html" --dump-dom "file://$T/ab.html" ||
    { tail -5 "$T/ab-dom.html.err"; fail "chromium --dump-dom ab.html"; }

# The DOM against the reader's own JSON, and the browser's logs.
python3 - "$T" <<'EOF' || fail "the DOM or the browser's logs (above)"
import html.parser, json, re, sys
T = sys.argv[1]
bad = 0
def ok(msg): print("ok  ", msg)
def nok(msg):
    global bad
    bad += 1
    print("FAIL", msg)

class Dom(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.cells, self.nodes, self.scripts, self.banners, self.paths = [], [], 0, 0, []
        self.run = None
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        cls = (a.get("class") or "").split()
        if tag == "script":
            self.scripts += 1
        if tag == "section" and "run" in cls:
            self.run = a.get("data-run")
        if tag == "rect" and "cell" in cls:
            self.cells.append((self.run, a.get("data-node"), a.get("data-comm"),
                               a.get("data-verdict"), a.get("data-emulated") == "1", "emu" in cls))
        if tag == "rect" and "node" in cls:
            self.nodes.append((self.run, a.get("data-node"), a.get("data-verdict")))
        if tag == "div" and "banner" in cls and "emu" in cls:
            self.banners += 1
        if tag == "path" and a.get("data-run"):
            self.paths.append(a.get("data-run"))

def parse(name):
    d = Dom()
    d.feed(open(f"{T}/{name}", encoding="utf-8").read())
    return d

EMU = " (emulated: no NIC; GPU memory moved by CUDA copies)"
dom = parse("dom.html")
summary = json.load(open(f"{T}/summary.json"))
verdict = json.load(open(f"{T}/verdict.json"))
# expected cells: the verdicts summary gives each process's communicators,
# grouped by node and communicator (this test's data never mixes two
# verdicts in one cell, so no precedence is re-implemented here)
want = {}
for p in summary["processes"]:
    for c in p["comms"]:
        want.setdefault((p["host"], c["comm"]), set()).add(c["verdict"]["code"])
got = {(n, c): (v, e) for _, n, c, v, e, _ in dom.cells}
# 9 pairs; 7 where no UTS namespace could be made (the harness ran as one host)
if len(dom.cells) == len(got) == len(want) and len(want) >= 7:
    ok(f"{len(want)} grid cells, one per node x communicator")
else:
    nok(f"{len(dom.cells)} cells ({len(got)} distinct), summary has {len(want)} node x communicator pairs")
for key, codes in sorted(want.items()):
    if len(codes) != 1:
        nok(f"test data: {key} mixes {codes}")
        continue
    code = codes.pop()
    if key not in got:
        nok(f"no cell for {key}")
    elif got[key][0] + (EMU if got[key][1] else "") != code:
        nok(f"cell {key}: {got[key]}, summary says {code}")
verdicts = {v for v, _ in got.values()}
if {"HOST-STAGED", "NO-DATA", "DIRECT-DMABUF", "FALLBACK", "ERROR"} <= verdicts:
    ok(f"cells carry summary's verdicts: {sorted(verdicts)}")
else:
    nok(f"verdicts seen: {sorted(verdicts)}")
vn = {n["host"]: n["verdict"] for n in verdict["nodes"]}
dn = {n: v for _, n, v in dom.nodes}
if dn == vn:
    ok(f"{len(dn)} node squares with verdict --json's node verdicts")
else:
    nok(f"node squares {dn} vs verdict --json {vn}")
order = [n for _, n, _ in dom.nodes]
natural = sorted(order, key=lambda h: [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", h)])
if order == natural and order.index("gpu1") < order.index("gpu3") and \
   ("gpu10" not in order or order.index("gpu2") < order.index("gpu10") and
    order.index("gpu3") < order.index("gpu10")):
    ok(f"rows in natural order: {order}")
else:
    nok(f"row order {order}, natural {natural}")
if dom.scripts == 0 and any("<script>" in n for n in dn):
    ok("the host named with <script> is text in the DOM, no script element")
else:
    nok(f"{dom.scripts} script element(s); hosts {list(dn)}")
if dom.banners == 0 and not any(e or h for *_, e, h in dom.cells):
    ok("a real run: no emulated banner, no hatched cell")
else:
    nok("emulated marks on a real run")

# nothing requested for the page (the browser's own update checks carry no
# file:// isolation key), and nothing refused by the page's CSP
net = json.load(open(f"{T}/net.json"))
types = {v: k for k, v in net["constants"]["logEventTypes"].items()}
page_reqs = [e["params"].get("url") for e in net["events"]
             if types.get(e["type"]) == "URL_REQUEST_START_JOB"
             and "file://" in json.dumps(e.get("params", {}))]
if not page_reqs:
    ok(f"net log: no request made for the page ({len(net['events'])} events)")
else:
    nok(f"net log: the page requested {page_reqs}")
console = [l for l in open(f"{T}/dom.html.err", errors="replace") if ":CONSOLE" in l]
if not console:
    ok("console: no message (no Content-Security-Policy refusal)")
else:
    nok(f"console: {console[:3]}")

ab = parse("ab-dom.html")
acells = [c for c in ab.cells if c[0] == "A"]
bcells = [c for c in ab.cells if c[0] == "B"]
if ab.banners == 1 and bcells and all(e and h for *_, e, h in bcells) and \
   acells and not any(e or h for *_, e, h in acells):
    ok(f"A/B: banner, B's {len(bcells)} cells hatched and marked emulated, A's {len(acells)} not")
else:
    nok(f"A/B emulated marks: banners {ab.banners}, A {acells}, B {bcells}")
if "A" in ab.paths and "B" in ab.paths:
    ok(f"A/B: {ab.paths.count('A')} latency curves of A overlaid with {ab.paths.count('B')} of B")
else:
    nok(f"A/B latency curves: {ab.paths}")
sys.exit(1 if bad else 0)
EOF

finish "test-report-html: the page shows the reader's verdicts and fetches nothing"

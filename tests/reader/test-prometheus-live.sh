#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# test-prometheus-live.sh — `gdrtrace export --prometheus` read by a real
# Prometheus: the NCCL-like harness (tests/harness) writes two recorders;
# `export -o` puts them in a textfile-collector folder; Debian's
# prometheus-node-exporter (textfile collector only) and prometheus (scraping
# it every second) run on loopback ports picked now; then, through
# Prometheus' HTTP API (the export is the command of the shipped
# gdrtrace-export.service, its folder swapped for a scratch one):
#  * gdrtrace_job_verdict has one series whose verdict is what the exit code
#    of `gdrtrace verdict` says, value 1, labels only job, instance,
#    gdrtrace_job (the harness's job), policy_reg (dmabuf) and verdict;
#  * every communicator's gdrtrace_verdict agrees with `gdrtrace verdict`;
#  * no gdrtrace_* series has exported_job/exported_instance (no clash with
#    the target labels), pid or rank; the two processes are summed
#    (sum(gdrtrace_recorders) = 2) under gdrtrace_job, the job they recorded;
#  * node_exporter reported no textfile error;
#  * the rules of docs/examples/prometheus-alerts.yml load, and only the
#    not-direct alert is active (pending), for this HOST-STAGED run;
# and, against node_exporter directly, that `export -o` rewriting the file in
# a loop never shows a scrape a half or empty file (the atomic rename).
# Both servers are ours (never the system services), stopped on exit.
# Skips (77) when a binary or the harness is missing (install-deps.sh check).
. tests/reader/lib.sh
H=$BUILD/harness/harness
NE=$(command -v prometheus-node-exporter || command -v node_exporter)
for b in prometheus curl; do
    command -v $b >/dev/null || { echo "skip: $b not installed (scripts/install-deps.sh check)"; exit 77; }
done
[ -n "$NE" ] || { echo "skip: prometheus-node-exporter not installed (scripts/install-deps.sh check)"; exit 77; }
[ -x "$H" ] || { echo "skip: $H is not built"; exit 77; }

get() { curl --noproxy '*' "$@"; } # loopback: never through an http_proxy
NEPID= PRPID=
stop() { # stops our two servers (by pid), waits for them, at most 10 s
    for p in $NEPID $PRPID; do kill "$p" 2>/dev/null; done
    for p in $NEPID $PRPID; do
        for _ in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$p" 2>/dev/null
        wait "$p" 2>/dev/null
    done
}
trap 'stop; rm -rf "$T"' EXIT
trap 'exit 143' TERM INT

# A loopback port nobody listens on now (/proc/net/tcp*: state 0A = LISTEN).
# Another process may still take it before our server does: start() retries.
free_port() {
    local p busy local_ st
    busy=$(cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | while read -r _ local_ _ st _; do
        [ "$st" = 0A ] && echo $((16#${local_##*:}))
    done)
    while :; do
        p=$((20000 + RANDOM % 40000))
        grep -qx "$p" <<<"$busy" || { echo "$p"; return; }
    done
}
# start NAME URL-PATH CMD... (CMD with @PORT@): runs CMD on a free port until
# URL-PATH answers (10 s), up to 5 ports; sets PORT and PID.
start() {
    local name=$1 path=$2 try i
    shift 2
    for try in 1 2 3 4 5; do
        PORT=$(free_port)
        "${@//@PORT@/$PORT}" >"$T/$name.log" 2>&1 &
        PID=$!
        for i in $(seq 100); do
            get -sf -o /dev/null --max-time 1 "http://127.0.0.1:$PORT$path" && return 0
            kill -0 "$PID" 2>/dev/null || break
            sleep 0.1
        done
        kill "$PID" 2>/dev/null; wait "$PID" 2>/dev/null
        echo "note: $name did not come up on port $PORT (try $try): $(tail -n 2 "$T/$name.log")"
    done
    return 1
}
query() { # query EXPR: the instant-query JSON
    get -sfG --max-time 5 "http://127.0.0.1:$PP/api/v1/query" --data-urlencode "query=$1"
}
series() { # the result of query JSON on stdin, one series a line: LABELS VALUE
    sed 's/{"metric":{/\n/g' | sed -n 's/^\([^}]*\)},"value":\[[0-9.e+]*,"\([^"]*\)"\]}.*/\1 \2/p'
}

# 1. recorders from the real writer, and what `gdrtrace verdict` says of them
mkdir -p "$T/rec" "$T/textfile"
if ! GDRTRACE_JOB=live7 timeout 60 "$H" --abi 12 --data-only --iters 10 --max-size 1M --dir "$T/rec" \
        --plugin "$BUILD/libnccl-net-gdrtrace.so" >"$T/harness.out" 2>&1; then
    cat "$T/harness.out"; echo "FAIL: the harness itself failed"; exit 1
fi
$G verdict "$T/rec" >"$T/verdict.txt"; vrc=$?
declare -A byrc=([0]=DIRECT-DMABUF [10]=DIRECT-PEERMEM [11]=HOST-STAGED [12]=MIXED [13]=FALLBACK
    [14]=ERROR [15]=NO-DATA [16]=BYPASSED)
want=${byrc[$vrc]:-}
[ -n "$want" ] && grep -q "^all  *$want " "$T/verdict.txt" && pass "gdrtrace verdict: exit $vrc = $want" ||
    { cat "$T/verdict.txt"; fail "gdrtrace verdict: exit $vrc is not a verdict"; }
S=dist/systemd/gdrtrace-export.service.in
cmd=$(sed -n 's|^ExecStart=@BINDIR@/gdrtrace ||p' $S)
dir=$(sed -n 's/^ReadWritePaths=//p' $S)
[ -n "$cmd" ] && [ -n "$dir" ] || { fail "no ExecStart or ReadWritePaths in $S"; finish x; exit 1; }
cmd=${cmd//$dir/$T/textfile}
export GDRTRACE_DIR=$T/rec
$G $cmd || fail "gdrtrace $cmd: exit $?"
[ -f "$T/textfile/gdrtrace.prom" ] && pass "gdrtrace $cmd" || fail "gdrtrace $cmd wrote no gdrtrace.prom"

# 2. node_exporter with the textfile collector only, Prometheus scraping it each second
start node-exporter /metrics "$NE" --web.listen-address=127.0.0.1:@PORT@ \
    --collector.disable-defaults --collector.textfile --collector.textfile.directory="$T/textfile" ||
    { fail "node_exporter never served /metrics"; finish x; exit 1; }
NEPID=$PID NP=$PORT
cat >"$T/prometheus.yml" <<EOF
global: {scrape_interval: 1s, scrape_timeout: 1s, evaluation_interval: 1s}
rule_files: ['$PWD/docs/examples/prometheus-alerts.yml']
scrape_configs:
  - job_name: gdrtrace-live
    static_configs: [{targets: ['127.0.0.1:$NP']}]
EOF
start prometheus /-/ready prometheus --config.file="$T/prometheus.yml" --storage.tsdb.path="$T/tsdb" \
    --web.listen-address=127.0.0.1:@PORT@ ||
    { fail "prometheus never became ready"; finish x; exit 1; }
PRPID=$PID PP=$PORT
pass "node_exporter on 127.0.0.1:$NP, prometheus on 127.0.0.1:$PP"

# 3. the verdict read back through Prometheus' HTTP API (bounded: 30 s)
t0=$(date +%s)
got=
while [ $(($(date +%s) - t0)) -lt 30 ]; do
    got=$(query gdrtrace_job_verdict | series)
    [ -n "$got" ] && break
    sleep 0.2
done
[ -n "$got" ] && pass "gdrtrace_job_verdict scraped after $(($(date +%s) - t0)) s" ||
    { fail "no gdrtrace_job_verdict in 30 s; prometheus: $(tail -n 3 "$T/prometheus.log")"; finish x; exit 1; }
exp="\"__name__\":\"gdrtrace_job_verdict\",\"gdrtrace_job\":\"live7\",\"instance\":\"127.0.0.1:$NP\",\"job\":\"gdrtrace-live\",\"policy_reg\":\"dmabuf\",\"verdict\":\"$want\" 1"
[ "$got" = "$exp" ] && pass "job verdict through the API: $want, value 1, labels job, instance, gdrtrace_job, policy_reg, verdict" ||
    fail "job verdict through the API: [$got], want [$exp]"

comms=$(query gdrtrace_verdict | series)
n=0
while read -r _ comm verdict _; do
    n=$((n + 1))
    grep -q "\"comm\":\"$comm\".*\"verdict\":\"$verdict\" 2$" <<<"$comms" ||
        fail "communicator $comm: verdict says $verdict, Prometheus has [$(grep "$comm" <<<"$comms")]"
done < <(grep '^comm ' "$T/verdict.txt")
[ $n -gt 0 ] && [ "$(wc -l <<<"$comms")" = $n ] &&
    pass "gdrtrace_verdict of each of the $n communicators = gdrtrace verdict's, value 2 (two processes)" ||
    fail "$n communicators in verdict, series: $comms"

names=$(get -sfG --max-time 5 "http://127.0.0.1:$PP/api/v1/labels" --data-urlencode 'match[]={__name__=~"gdrtrace_.+"}')
bad=$(grep -oE '"(exported_[a-z_]*|pid|rank)"' <<<"$names" | tr '\n' ' ')
[ -n "$names" ] && [ -z "$bad" ] && grep -q '"gdrtrace_job"' <<<"$names" &&
    pass "no exported_job/exported_instance, pid or rank label on any gdrtrace_* series" ||
    fail "label names: $bad ($names)"
got=$(query 'sum(gdrtrace_recorders{gdrtrace_job="live7"})' | sed -n 's/.*"value":\[[0-9.e+]*,"\([^"]*\)"\].*/\1/p')
[ "$got" = 2 ] && pass "sum(gdrtrace_recorders{gdrtrace_job=\"live7\"}) = 2: both processes, summed" ||
    fail "sum(gdrtrace_recorders{gdrtrace_job=\"live7\"}) = [$got]"
got=$(query node_textfile_scrape_error | series)
[ "$got" = "\"__name__\":\"node_textfile_scrape_error\",\"instance\":\"127.0.0.1:$NP\",\"job\":\"gdrtrace-live\" 0" ] &&
    pass "node_textfile_scrape_error 0" || fail "node_textfile_scrape_error: [$got]"

# the example alerting rules, evaluated each second: all healthy; the
# not-direct alert is pending exactly when the verdict is neither
# DIRECT-DMABUF nor NO-DATA; the export is fresh and readable (no alert)
t0=$(date +%s)
while [ $(($(date +%s) - t0)) -lt 10 ]; do
    rules=$(get -sf --max-time 5 "http://127.0.0.1:$PP/api/v1/rules")
    alerts=$(get -sf --max-time 5 "http://127.0.0.1:$PP/api/v1/alerts")
    [ "$(grep -o '"health":"ok"' <<<"$rules" | wc -l)" = 5 ] && grep -q GdrtraceNotDirect <<<"$alerts" && break
    sleep 0.5
done
nrule=$(grep -o '"type":"alerting"' <<<"$rules" | wc -l)
[ "$nrule" = 5 ] && [ "$(grep -o '"health":"ok"' <<<"$rules" | wc -l)" = 5 ] &&
    pass "the 5 rules of docs/examples/prometheus-alerts.yml loaded and evaluate (health ok)" ||
    fail "rules: $nrule loaded: $rules"
case $want in DIRECT-DMABUF | NO-DATA) expect= ;; *) expect=GdrtraceNotDirect ;; esac
firing=$(grep -o '"alertname":"[A-Za-z]*"' <<<"$alerts" | cut -d'"' -f4 | sort -u | tr '\n' ' ')
[ "$firing" = "${expect:+$expect }" ] &&
    { [ -z "$expect" ] || grep -q "\"alertname\":\"$expect\",\"gdrtrace_job\":\"live7\",\"instance\":\"127.0.0.1:$NP\",\"job\":\"gdrtrace-live\",\"policy_reg\":\"dmabuf\",\"severity\":\"warning\",\"verdict\":\"$want\"}" <<<"$alerts"; } &&
    pass "alerts active: ${firing:-none}(verdict $want; export fresh, file readable)" ||
    fail "alerts active: [$firing], want [$expect]: $alerts"

# 4. the collector never reads a half file: the service's export rewrites it
#    while node_exporter is scraped (a plain `>` redirection fails this).
#    Counted, not timed: the writer rewrites until the scraper has seen 6
#    scrapes and 2 s have passed (60 s at most), so a slow or loaded machine
#    (ASan, 2 cores) only takes longer; rewrites are counted so the check
#    knows the scrapes overlapped them.
stop=$T/stop-rewrites
(
    n=0
    while [ ! -e "$stop" ]; do $G $cmd || exit 1; n=$((n + 1)); done
    echo $n > "$T/rewrites"
) &
wpid=$!
scrapes=0 torn=0 t0=$(date +%s)
while kill -0 $wpid 2>/dev/null; do
    el=$(($(date +%s) - t0))
    { [ $scrapes -ge 6 ] && [ $el -ge 2 ]; } || [ $el -ge 60 ] && touch "$stop"
    [ -e "$stop" ] && { sleep 0.05; continue; }
    m=$(get -sf --max-time 5 "http://127.0.0.1:$NP/metrics") || continue # slow, not torn
    scrapes=$((scrapes + 1))
    grep -q '^node_textfile_scrape_error 0$' <<<"$m" && grep -q "^gdrtrace_job_verdict{gdrtrace_job=\"live7\",policy_reg=\"dmabuf\",verdict=\"$want\"} 1$" <<<"$m" ||
        torn=$((torn + 1))
done
wait $wpid; wrc=$?
rewrites=$(cat "$T/rewrites" 2>/dev/null || echo 0)
[ $wrc = 0 ] && [ $torn = 0 ] && [ $scrapes -ge 6 ] && [ "$rewrites" -ge 2 ] &&
    pass "$scrapes scrapes during $rewrites export -o rewrites: every one whole" ||
    fail "rewrites (exit $wrc, $rewrites rewrites): $torn of $scrapes scrapes saw a half, empty or unparsable file"
left=$(ls -A "$T/textfile" | grep -vx gdrtrace.prom)
[ -z "$left" ] && pass "no temporary file left in the textfile folder" || fail "left behind: $left"

# 5. both servers end with the test
stop
alive=$(for p in $NEPID $PRPID; do kill -0 "$p" 2>/dev/null && echo "$p"; done)
[ -z "$alive" ] && pass "node_exporter and prometheus stopped" || fail "still running: $alive"
NEPID= PRPID=
finish "test-prometheus-live: ok"

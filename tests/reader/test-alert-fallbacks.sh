#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# test-alert-fallbacks.sh — the GdrtraceFallbacks rule of
# docs/examples/prometheus-alerts.yml on what `gdrtrace export --prometheus`
# really writes, through `promtool test rules`.  One node scraped every 30 s:
# job j0 (direct) from the start; job j1, two processes whose communicator
# fell back during its setup, appears at 2 min, so its fallback series is
# born above zero (the export has no zero sample before it); at 14 min j1's
# fallbacks rise; at 28 min one of j1's processes leaves the export window
# (exited long ago, --exited-within), so the summed series shrinks.  Each
# scrape is a real export of fixture recorders; the samples become
# promtool's input_series (a missing sample is `_`).  The alert must fire
# for j1 once it appears, not before, stop 10 min after the last rise, fire
# again on the rise, never on the shrink (increase() read it as a counter
# reset and fired), and never for j0.  Skips (77) only when promtool is
# missing.
. tests/reader/lib.sh
if ! command -v promtool >/dev/null; then
    echo "skip: promtool not installed (Debian package prometheus; scripts/install-deps.sh check)"
    exit 77
fi
RULES=${RULES:-docs/examples/prometheus-alerts.yml}
snap() { # snap NAME [AGE SCALE]: one node's export; j1's two processes when AGE is given
    local d=$T/$1
    mkdir -p "$d"
    $FX dmabuf "$d/gdrtrace.j0.n1.100.rec" --host n1 --job j0 --pid 100 --comm 0xc0 --age 30
    if [ $# = 3 ]; then # pid 201 last active AGE seconds ago: 7200 is past the export window
        $FX fallback "$d/gdrtrace.j1.n1.200.rec" --host n1 --job j1 --pid 200 --comm 0xa --age 30 --scale "$3"
        $FX fallback "$d/gdrtrace.j1.n1.201.rec" --host n1 --job j1 --pid 201 --comm 0xa --age "$2"
    fi
    $G export --prometheus "$d" >"$T/$(basename "$d").prom" || fail "export $d: exit $?"
}
snap a        # j0 alone
snap b 30 1   # j1 appears with its setup's fallbacks
snap c 30 2   # j1 falls back again
snap d 7200 2 # j1's pid 201 aged out of the export: the sum shrinks
grep -q '^gdrtrace_fallbacks_total{.*gdrtrace_job="j1".*} [1-9]' "$T/b.prom" ||
    fail "fixture: j1 exports no fallback: $(grep fallbacks "$T/b.prom")"
fb() { sed -n 's/^gdrtrace_fallbacks_total{.*gdrtrace_job="j1".*} //p' "$T/$1.prom"; }
[ "$(fb d)" -lt "$(fb c)" ] && [ "$(fb c)" -gt "$(fb b)" ] &&
    pass "j1's summed fallbacks: $(fb b), rise to $(fb c), shrink to $(fb d) when a process ages out" ||
    fail "fixture: j1's fallbacks b $(fb b) c $(fb c) d $(fb d)"

# Scrapes 0-3: a; 4-27: b; 28-55: c; 56-79: d (30 s apart).  Each exported sample gets
# the scrape's target labels, as node_exporter's scrape would.
seq_files=()
for i in $(seq 0 79); do
    if [ "$i" -lt 4 ]; then seq_files+=(a); elif [ "$i" -lt 28 ]; then seq_files+=(b)
    elif [ "$i" -lt 56 ]; then seq_files+=(c); else seq_files+=(d); fi
done
for i in "${!seq_files[@]}"; do
    grep -v '^#' "$T/${seq_files[$i]}.prom" | sed -E 's/^([a-z_]+)\{/\1{instance="n1",job="node",/' |
        sed "s/^/$i /"
done | awk -v n=${#seq_files[@]} '
    { v = $NF; $NF = ""; i = $1; $1 = ""; sub(/^ +/, ""); sub(/ +$/, "")
      if (!($0 in seen)) { seen[$0] = 1; order[++ns] = $0 }
      val[$0, i] = v }
    END { for (s = 1; s <= ns; s++) {
            out = ""
            for (i = 0; i < n; i++) { k = order[s] SUBSEP i; out = out (k in val ? val[k] : "_") (i < n - 1 ? " " : "") }
            printf "      - series: \x27%s\x27\n        values: \x27%s\x27\n", order[s], out } }' >"$T/series.yml"
grep -A1 'gdrtrace_fallbacks_total{.*gdrtrace_job="j1"' "$T/series.yml" | grep -q "values: '_ _ _ _ [1-9]" &&
    pass "j1's fallback series is born above zero at the fifth scrape (no zero sample before)" ||
    fail "series: $(grep -A1 fallbacks "$T/series.yml")"

alert() { # alert EVAL_TIME [JOB REASON]: the expected GdrtraceFallbacks alerts at that time
    printf '      - eval_time: %s\n        alertname: GdrtraceFallbacks\n' "$1"
    if [ $# = 1 ]; then echo "        exp_alerts: []"; return; fi
    printf '        exp_alerts:\n          - exp_labels: {severity: warning, instance: n1, gdrtrace_job: %s, reason: %s}\n' "$2" "$3"
    printf '            exp_annotations:\n              summary: "n1: job %s registrations fall back: %s"\n' "$2" "$3"
}
cp "$RULES" "$T/rules.yml"
{
    printf 'rule_files:\n  - rules.yml\nevaluation_interval: 30s\ntests:\n  - interval: 30s\n    input_series:\n'
    cat "$T/series.yml"
    printf '    alert_rule_test:\n'
    alert 1m                                  # j0 only: nothing fell back
    alert 2m j1 dmabuf-reg-failed             # j1's first scrape: its setup fell back
    alert 3m j1 dmabuf-reg-failed
    alert 11m30s j1 dmabuf-reg-failed         # still within 10 min of the first sight
    alert 13m                                 # 10 min later, no new fallback: resolved
    alert 14m30s j1 dmabuf-reg-failed         # the count rises: fires again
    alert 23m30s j1 dmabuf-reg-failed         # within 10 min of the rise
    alert 25m                                 # resolved
    alert 28m30s                              # the sum shrank at 28 min: not a fallback
    alert 30m
    alert 39m
} >"$T/test.yml"
out=$(cd "$T" && promtool test rules test.yml 2>&1) &&
    pass "GdrtraceFallbacks on exporter output: fires on a job's first fallbacks, resolves, refires, silent on a shrink" ||
    fail "promtool test rules ($RULES): $(echo "$out" | head -40)"
finish "test-alert-fallbacks: ok"

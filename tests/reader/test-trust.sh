#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# test-trust.sh — the reader's trust boundaries (docs/security.md): what it
# is given to read that is not a regular file, and what another local user
# planted (its recorders and logs, a junk file in a shared folder).
. "$(dirname "$0")/lib.sh"
mkdir -p "$T/job"
$FX host "$T/job/gdrtrace.J.node-a.1001.rec" --job J --host node-a --pid 1001 --rank 0

# ---- an input that is not a regular file: refused by name, never waited on
mkfifo "$T/fifo"
for p in "$T/fifo" /dev/zero; do
    timeout 20 $G verdict --nccl-log "$p" "$T/job" >"$T/out" 2>&1
    rc=$?
    [ $rc -eq 2 ] && grep -q "$p: cannot read NCCL log: not a regular file" "$T/out" &&
        pass "verdict --nccl-log $p: refused with its name (exit 2)" ||
        fail "verdict --nccl-log $p: exit $rc (124: it hung), $(head -n 3 "$T/out")"
done
timeout 20 $G doctor --compare "$T/fifo" >"$T/out" 2>&1
rc=$?
[ $rc -ne 124 ] && grep -q "$T/fifo is not a regular file" "$T/out" &&
    pass "doctor --compare FIFO: refused with its name" ||
    fail "doctor --compare FIFO: exit $rc (124: it hung), $(head -n 3 "$T/out")"
timeout 20 $G verdict "$T/fifo" >"$T/out" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q "not a regular file" "$T/out" && pass "verdict FIFO: refused with its name" ||
    fail "verdict FIFO: exit $rc, $(head -n 3 "$T/out")"

# ---- owners: another user's recorders of the same job in a shared folder
if [ "$(id -u)" -eq 0 ] && id nobody >/dev/null 2>&1 && command -v setpriv >/dev/null; then
    nob() { setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups -- "$@"; }
    chmod 0755 "$T"
    S=$T/shared
    mkdir -p "$S" && chmod 1777 "$S"
    me=$(id -un)
    # the job's own two (HOST-STAGED); nobody's two sort first (DIRECT-DMABUF)
    for p in 2001 2002; do
        $FX host "$S/gdrtrace.J.node-a.$p.rec" --job J --host node-a --pid $p --rank $((p - 2001))
    done
    chmod 0644 "$S"/gdrtrace.*.rec
    for p in 1001 1002; do
        nob $FX dmabuf "$S/gdrtrace.J.node-a.$p.rec" --job J --host node-a --pid $p --rank $((p - 1001)) >/dev/null
    done
    nob chmod 0644 "$S"/gdrtrace.J.node-a.100[12].rec
    $G verdict --job J --expect dmabuf "$S" >"$T/o1" 2>"$T/e1"
    rc=$?
    [ $rc -eq 2 ] && grep -q "job J has recorders of more than one owner: counted those of nobody .*left out 2 of $me" "$T/e1" &&
        pass "root: a job with recorders of two owners is an error (exit 2), both named" ||
        fail "root, two owners: exit $rc (expected 2): $(cat "$T/e1" "$T/o1" | head -n 6)"
    $G verdict --job J --expect dmabuf --accept-owner "$me" "$S" >"$T/o2" 2>"$T/e2"
    rc=$?
    [ $rc -eq 20 ] && grep -q "left out 2 recorder(s) of job J owned by nobody (uid $(id -u nobody)), not by you" "$T/e2" &&
        pass "root --accept-owner $me: nobody's forged DIRECT-DMABUF left out and named, exit 20" ||
        fail "--accept-owner $me: exit $rc (expected 20): $(cat "$T/e2" "$T/o2" | head -n 6)"
    nob $G summary --job J --json "$S" >"$T/o3" 2>"$T/e3"
    rc=$?
    [ $rc -eq 0 ] && grep -q "left out 2 recorder(s) of job J owned by $me" "$T/e3" &&
        [ "$(grep -o '"owner": *"nobody"' "$T/o3" | wc -l)" -ge 1 ] && ! grep -q "\"owner\": *\"$me\"" "$T/o3" &&
        pass "as nobody: only nobody's own recorders counted, $me's named; JSON shows the owner" ||
        fail "as nobody: exit $rc: $(cat "$T/e3" | head -n 4) $(head -c 300 "$T/o3")"
    $G ls "$S" >"$T/o4" 2>&1
    [ "$(awk '$6 == "nobody"' "$T/o4" | wc -l)" = 2 ] && [ "$(awk -v me="$me" '$6 == me' "$T/o4" | wc -l)" = 2 ] &&
        pass "ls lists every recorder with its owner" || fail "ls owners: $(cat "$T/o4")"
    $G ls --json "$S" | tr -d '\n ' | grep -q '"owner":"nobody","owner_uid":'"$(id -u nobody)" &&
        pass "ls --json: owner and owner_uid" || fail "ls --json owner: $($G ls --json "$S" | head -c 400)"
    $G summary --job J --accept-owner nobody --accept-owner "$me" "$S" >"$T/o5" 2>&1
    grep -Eq "^   owner +nobody \(2\); $me \(2\)|^   owner +$me \(2\); nobody \(2\)" "$T/o5" &&
        pass "summary --accept-owner both: the owners line names both" || fail "summary owners: $(head -n 8 "$T/o5")"
    # dump (an epilog's archive) follows the same rule: the planted ones are
    # not archived as the job's, where they would take the archive's owner
    $G dump -o "$T/all.zst" "$S" >"$T/o6" 2>"$T/e6"
    rc=$?
    [ $rc -eq 2 ] && grep -q "job J has recorders of more than one owner" "$T/e6" &&
        pass "dump as root, two owners in a job: exit 2, named" || fail "dump two owners: exit $rc: $(cat "$T/e6" "$T/o6")"
    $G dump --accept-owner "$me" -o "$T/mine.zst" "$S" >"$T/o7" 2>"$T/e7"
    rc=$?
    $G verdict --job J "$T/mine.zst" >"$T/o8" 2>&1
    rc8=$?
    [ $rc -eq 0 ] && grep -q ": 2 recorder(s)" "$T/o7" && grep -q "owned by nobody" "$T/e7" && [ $rc8 -eq 11 ] &&
        pass "dump --accept-owner $me: only the job's 2 archived (nobody's named), the archive's verdict HOST-STAGED" ||
        fail "dump --accept-owner: exit $rc, verdict $rc8: $(cat "$T/o7" "$T/e7" | head -n 4)"
    # diff, report and watch follow the rule too, and take --accept-owner:
    # without it root refuses the job of two owners (exit 2, both named);
    # with it only the named owner's recorders (HOST-STAGED) are read
    for c in diff report watch; do
        case $c in
            diff) args=("$S" "$S") ;;
            report) args=(-o "$T/$c.html" "$S") ;;
            watch) args=(--once --all --cols 120 "$S") ;;
        esac
        rm -f "$T/$c.html"
        $G "$c" "${args[@]}" >"$T/o9" 2>"$T/e9"
        rc=$?
        [ $rc -eq 2 ] && grep -q "job J has recorders of more than one owner" "$T/e9" "$T/o9" &&
            pass "$c as root, two owners in a job: exit 2, named" ||
            fail "$c two owners: exit $rc: $(cat "$T/e9" "$T/o9" | head -n 4)"
        rm -f "$T/$c.html"
        $G "$c" --accept-owner "$me" "${args[@]}" >"$T/o10" 2>"$T/e10"
        rc=$?
        case $c in
            diff) seen=$(grep -c "verdict HOST-STAGED" "$T/o10") ;;
            report) seen=$(grep -c "2 process(es), verdict HOST-STAGED" "$T/o10") ;;
            watch) seen=$(grep -c "^all HOST-STAGED  2 process(es)" "$T/o10") ;;
        esac
        [ $rc -eq 0 ] && [ "$seen" -ge 1 ] && grep -q "owned by nobody" "$T/e10" &&
            pass "$c --accept-owner $me: only the job's own recorders read, nobody's named" ||
            fail "$c --accept-owner $me: exit $rc: $(cat "$T/e10" "$T/o10" | head -n 6)"
    done
    # NCCL's logs in a shared folder: one process's log is the caller's, a
    # second one nobody planted; --nccl-log DIR reads the first alone
    L=$T/logs
    mkdir -p "$L" "$T/norec" && chmod 1777 "$L"
    cp tests/reader/nccl-logs/real-2.28.3-c-socket/nccl.vm.1612.log "$L/"
    nob cp tests/reader/nccl-logs/real-2.28.3-c-socket/nccl.vm.1613.log "$L/"
    for c in verdict summary; do
        GDRTRACE_DIR=$T/norec $G $c --nccl-log "$L" >"$T/o11" 2>"$T/e11"
        GDRTRACE_DIR=$T/norec $G $c --accept-owner nobody --nccl-log "$L" >"$T/o12" 2>"$T/e12"
        grep -q "left out 1 NCCL log file(s) of another owner than the job's, e.g. $L/nccl.vm.1613.log owned by nobody" "$T/e11" &&
            grep -q 'vm:1612' "$T/o11" && ! grep -q 'vm:1613' "$T/o11" &&
            grep -q 'vm:1613' "$T/o12" && ! grep -q 'left out' "$T/e12" &&
            pass "$c --nccl-log DIR: nobody's planted log left out and named; --accept-owner nobody reads it" ||
            fail "$c --nccl-log DIR: $(head -n 3 "$T/e11") / $(grep -c 'vm:1613' "$T/o11") / $(grep -c 'vm:1613' "$T/o12")"
    done
else
    echo "note: not root (or no nobody/setpriv): other users' recorders not tried"
fi

finish "the reader's trust boundaries hold"

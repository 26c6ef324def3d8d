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

# ---- a folder holding more recorders than GDRTRACE_FOLDER_MAX: the first
# that many read, the rest named with the cap, exit 2
mkdir -p "$T/many"
for p in 1 2 3; do $FX dmabuf "$T/many/gdrtrace.M.node-a.$p.rec" --job M --host node-a --pid $p --rank $((p - 1)); done
GDRTRACE_FOLDER_MAX=2 $G ls "$T/many" >"$T/o20" 2>"$T/e20"
rc=$?
[ $rc -eq 2 ] && [ "$(grep -c '/many/gdrtrace.M' "$T/o20")" = 2 ] &&
    grep -q "$T/many: holds 3 recorder or archive files, more than GDRTRACE_FOLDER_MAX (2): read 2 (yours first, then by name), left out 1 (e.g. gdrtrace.M.node-a.3.rec)" "$T/e20" &&
    pass "GDRTRACE_FOLDER_MAX=2 over 3 recorders: 2 listed, the folder and the cap named, exit 2" ||
    fail "folder cap: exit $rc: $(cat "$T/e20" "$T/o20" | head -n 5)"
GDRTRACE_FOLDER_MAX=3 $G ls "$T/many" >"$T/o21" 2>"$T/e21" && [ "$(grep -c '/many/gdrtrace.M' "$T/o21")" = 3 ] && [ ! -s "$T/e21" ] &&
    pass "GDRTRACE_FOLDER_MAX=3 over 3 recorders: all listed, nothing said" || fail "folder cap at 3: $(cat "$T/e21")"

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
    # root's own recorders of a job are the job's, whatever the names: the
    # ones nobody planted are left out (named), and no exit 2
    $G verdict --job J --expect dmabuf "$S" >"$T/o1" 2>"$T/e1"
    rc=$?
    [ $rc -eq 20 ] && grep -q "left out 2 recorder(s) of job J owned by nobody (uid $(id -u nobody)): the job's owner is $me (uid 0) (your own recorders are of that job)" "$T/e1" &&
        pass "root: its own recorders of job J counted (HOST-STAGED, exit 20), nobody's two named" ||
        fail "root, own and nobody's: exit $rc (expected 20): $(cat "$T/e1" "$T/o1" | head -n 6)"
    $G verdict --job J --expect dmabuf --accept-owner "$me" "$S" >"$T/o2" 2>"$T/e2"
    rc=$?
    [ $rc -eq 20 ] && grep -q "left out 2 file(s) owned by nobody (uid $(id -u nobody)), not by you, unread" "$T/e2" &&
        pass "root --accept-owner $me: nobody's forged DIRECT-DMABUF left out unread and named, exit 20" ||
        fail "--accept-owner $me: exit $rc (expected 20): $(cat "$T/e2" "$T/o2" | head -n 6)"
    nob $G summary --job J --json "$S" >"$T/o3" 2>"$T/e3"
    rc=$?
    [ $rc -eq 0 ] && grep -q "left out 2 file(s) owned by $me (uid 0), not by you, unread" "$T/e3" &&
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
    [ $rc -eq 0 ] && grep -q ": 2 recorder(s)" "$T/o6" && grep -q "of job J owned by nobody" "$T/e6" &&
        pass "dump as root: its own 2 archived, nobody's named" || fail "dump root's own: exit $rc: $(cat "$T/e6" "$T/o6")"
    $G dump --accept-owner "$me" -o "$T/mine.zst" "$S" >"$T/o7" 2>"$T/e7"
    rc=$?
    $G verdict --job J "$T/mine.zst" >"$T/o8" 2>&1
    rc8=$?
    [ $rc -eq 0 ] && grep -q ": 2 recorder(s)" "$T/o7" && grep -q "owned by nobody" "$T/e7" && [ $rc8 -eq 11 ] &&
        pass "dump --accept-owner $me: only the job's 2 archived (nobody's named), the archive's verdict HOST-STAGED" ||
        fail "dump --accept-owner: exit $rc, verdict $rc8: $(cat "$T/o7" "$T/e7" | head -n 4)"
    # diff, report and watch follow the rule too, and take --accept-owner:
    # without it root's own recorders are the job's (nobody's named); with
    # it only the named owner's recorders (HOST-STAGED) are read
    for c in diff report watch; do
        case $c in
            diff) args=("$S" "$S") ;;
            report) args=(-o "$T/$c.html" "$S") ;;
            watch) args=(--once --all --cols 120 "$S") ;;
        esac
        rm -f "$T/$c.html"
        $G "$c" "${args[@]}" >"$T/o9" 2>"$T/e9"
        rc=$?
        case $c in
            diff) seen=$(grep -c "verdict HOST-STAGED" "$T/o9") ;;
            report) seen=$(grep -c "2 process(es), verdict HOST-STAGED" "$T/o9") ;;
            watch) seen=$(grep -c "^all HOST-STAGED  2 process(es)" "$T/o9") ;;
        esac
        [ $rc -eq 0 ] && [ "$seen" -ge 1 ] && grep -q "of job J owned by nobody" "$T/e9" &&
            pass "$c as root: its own recorders are the job's, nobody's named" ||
            fail "$c as root, own and nobody's: exit $rc: $(cat "$T/e9" "$T/o9" | head -n 4)"
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
    # The owner of a job never depends on names.  nobody renames its
    # recorder (no job id, as root's) gdrtrace.nojob.vm.1.rec, read first by
    # name: root's verdict shows root's own job, not nobody's
    R=$T/rename
    mkdir -p "$R" && chmod 1777 "$R"
    $FX host "$R/gdrtrace.vm.2001.rec" --job "" --host vm --pid 2001 --rank 0
    nob $FX dmabuf "$R/gdrtrace.nojob.vm.1.rec" --job "" --host vm --pid 1 --rank 0 >/dev/null
    $G verdict "$R" >"$T/o13" 2>"$T/e13"
    rc=$?
    [ $rc -eq 11 ] && grep -q HOST-STAGED "$T/o13" && ! grep -q DIRECT-DMABUF "$T/o13" &&
        grep -q "left out 1 recorder(s) of job - owned by nobody" "$T/e13" &&
        pass "root: nobody's gdrtrace.nojob.vm.1.rec (first by name) left out, root's own job judged (exit 11)" ||
        fail "root, nobody's renamed recorder: exit $rc (expected 11): $(cat "$T/e13" "$T/o13" | head -n 5)"
    # two owners of one job, neither root's and none named: the conflict,
    # and no verdict of either (exit 2); the launcher or a folder names one
    C=$T/conflict
    dmn() { setpriv --reuid=daemon --regid="$(id -g daemon)" --clear-groups -- "$@"; }
    mkdir -p "$C" && chmod 1777 "$C"
    nob $FX dmabuf "$C/gdrtrace.K.node-a.1.rec" --job K --host node-a --pid 1 --rank 0 >/dev/null
    dmn $FX host "$C/gdrtrace.K.node-a.2.rec" --job K --host node-a --pid 2 --rank 1 >/dev/null
    $G verdict "$C" >"$T/o14" 2>"$T/e14"
    rc=$?
    [ $rc -eq 2 ] && grep -q "job K has recorders of more than one owner (.*nobody.*) and none is named" "$T/e14" &&
        ! grep -Eq "DIRECT-DMABUF|HOST-STAGED" "$T/o14" && ! grep -q "no recorders found" "$T/e14" &&
        pass "root, job K of nobody and daemon, none named: only the conflict said, exit 2" ||
        fail "root, conflict: exit $rc (expected 2): $(cat "$T/e14" "$T/o14" | head -n 6)"
    SLURM_JOB_ID=K SLURM_JOB_UID=$(id -u daemon) $G verdict "$C" >"$T/o15" 2>"$T/e15"
    rc=$?
    [ $rc -eq 11 ] && grep -q "the job's owner is daemon (uid $(id -u daemon)) (SLURM_JOB_UID names it)" "$T/e15" &&
        pass "root with SLURM_JOB_ID=K SLURM_JOB_UID=daemon: daemon's recorder is the job's (exit 11), nobody's named" ||
        fail "root, launcher names the owner: exit $rc (expected 11): $(cat "$T/e15" "$T/o15" | head -n 4)"
    F=$T/daemons
    mkdir -p "$F" && cp "$C"/gdrtrace.K.*.rec "$F/" && chown nobody "$F/gdrtrace.K.node-a.1.rec" &&
        chown daemon "$F/gdrtrace.K.node-a.2.rec" "$F" && chmod 0755 "$F"
    $G verdict "$F" >"$T/o16" 2>"$T/e16"
    rc=$?
    [ $rc -eq 11 ] && grep -q "the job's owner is daemon (uid $(id -u daemon)) (the folder that holds them is that owner's alone)" "$T/e16" &&
        pass "root: a folder only daemon may write names daemon the job's owner (exit 11)" ||
        fail "root, folder names the owner: exit $rc (expected 11): $(cat "$T/e16" "$T/o16" | head -n 4)"
    # capped, the caller's own files are read first, whatever the names
    GDRTRACE_FOLDER_MAX=2 $G ls "$S" >"$T/o22" 2>"$T/e22"
    [ "$(awk -v me="$me" '$6 == me' "$T/o22" | wc -l)" = 2 ] && grep -q "more than GDRTRACE_FOLDER_MAX (2)" "$T/e22" &&
        pass "root, GDRTRACE_FOLDER_MAX=2: its own 2 listed before nobody's (named first)" ||
        fail "folder cap, own first: $(cat "$T/o22" "$T/e22" | head -n 5)"
    # files of an owner not counted are skipped before parsing: a recorder
    # whose header and identity are sound but whose ring is not (a parse
    # error if it were read) is left out without a word of it
    corrupt_ring() { # PATH: ring capacity 3 (not a power of two)
        python3 - "$1" <<'PY'
import struct, sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
n = struct.unpack_from("<I", b, 36)[0]
for i in range(n):
    sid, esz, off, size, cnt = struct.unpack_from("<IIQQQ", b, 40 + 32 * i)
    if sid == 4:
        struct.pack_into("<Q", b, off, 3)
open(p, "wb").write(bytes(b))
PY
    }
    P=$T/parse
    mkdir -p "$P" && chmod 1777 "$P"
    $FX host "$P/gdrtrace.J.node-a.3001.rec" --job J --host node-a --pid 3001 --rank 0
    corrupt_ring "$P/gdrtrace.J.node-a.3001.rec"
    chmod 0644 "$P/gdrtrace.J.node-a.3001.rec"
    nob $FX dmabuf "$P/gdrtrace.J.node-a.3002.rec" --job J --host node-a --pid 3002 --rank 1 >/dev/null
    $G ls "$P" >/dev/null 2>"$T/e17"
    nob $G verdict "$P" >"$T/o18" 2>"$T/e18"
    rc=$?
    grep -q "not a power of two" "$T/e17" && [ $rc -eq 0 ] && ! grep -q "power of two" "$T/e18" &&
        grep -q "left out 1 file(s) owned by $me (uid 0), not by you, unread" "$T/e18" &&
        pass "as nobody: root's broken recorder left out unread (0 parse errors), exit 0" ||
        fail "as nobody, root's broken recorder: exit $rc: $(cat "$T/e17" "$T/e18" | head -n 4)"
    rm -f "$P"/*.rec
    $FX host "$P/gdrtrace.J.node-a.3001.rec" --job J --host node-a --pid 3001 --rank 0
    nob $FX dmabuf "$P/gdrtrace.J.node-a.3002.rec" --job J --host node-a --pid 3002 --rank 1 >/dev/null
    cp "$P/gdrtrace.J.node-a.3002.rec" "$T/broken.rec" && corrupt_ring "$T/broken.rec" &&
        chmod 0644 "$T/broken.rec" && nob sh -c "cat '$T/broken.rec' >'$P/gdrtrace.J.node-a.3002.rec'"
    $G verdict "$P" >"$T/o19" 2>"$T/e19"
    rc=$?
    [ $rc -eq 11 ] && ! grep -q "power of two" "$T/e19" && grep -q "of job J owned by nobody" "$T/e19" &&
        pass "root: nobody's broken recorder of root's job left out from its identity, never parsed (exit 11)" ||
        fail "root, nobody's broken recorder: exit $rc: $(cat "$T/e19" "$T/o19" | head -n 4)"

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

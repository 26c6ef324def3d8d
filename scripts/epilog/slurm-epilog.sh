#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# slurm-epilog.sh — a Slurm `Epilog=` script for gdrtrace: when a job ends on
# this node, archive the job's flight recorders with `gdrtrace dump` to a
# shared folder, then remove them from /dev/shm with `gdrtrace prune --job`.
# Recorders hold 2.8 MB of tmpfs (RAM; up to 5.6 MB with collectives) per
# process per job, on the filesystem NCCL's SHM transport needs; nothing else
# removes them.
#
# Install (docs/operations.md): copy to /etc/slurm/epilog.d/50-gdrtrace.sh and
# list it in slurm.conf as `Epilog=/etc/slurm/epilog.d/*` (or call it from
# your existing epilog).  slurmd runs it as root after the job's processes
# have been killed, with SLURM_JOB_ID set.
#
# Variables (set them in the script's environment, e.g. a wrapper, or in
# /etc/default/gdrtrace-epilog, read first if it exists):
#   SLURM_JOB_ID              the finished job (slurmd sets it); required
#   SLURM_JOB_UID, SLURM_JOB_GID  its owner (slurmd sets them): the archive
#                             folder and file are given to them, so the job's
#                             user can read its own evidence
#   GDRTRACE_ARCHIVE_DIR      shared folder; the archive goes to
#                             $GDRTRACE_ARCHIVE_DIR/<job>/<node>.zst.  Empty:
#                             prune without archiving
#   GDRTRACE_DIR              where recorders are (default /dev/shm)
#   GDRTRACE_BIN              the gdrtrace command (default: gdrtrace on PATH)
#   GDRTRACE_EPILOG_TIMEOUT   seconds each gdrtrace call may take (default 120)
#   GDRTRACE_EPILOG_SYSLOG    1: also log to syslog via logger (default 1)
#
# Rules it keeps:
#  * It always exits 0: a failing Epilog makes Slurm drain the node, and a
#    tracing tool must not take nodes out of service.  Problems are logged.
#  * It prunes only after the archive was written (a shared folder that is
#    down must not cost the evidence); recorders left behind are removed by
#    a later run or a periodic `gdrtrace prune --older-than 7d`.
#  * `prune` removes only this job's recorders whose processes are gone
#    (never a live one, never a file that is not a recorder); a straggler
#    still running is kept and said so.
#  * A job that set GDRTRACE_JOB to something else than its Slurm job id is
#    not matched; the periodic prune covers it.
#  * The job's recorders in folders `gdrtrace run` left (gdrtrace-run.*: a
#    run killed before it archived) are archived too; prune cleans them.
set -u
[ -r /etc/default/gdrtrace-epilog ] && . /etc/default/gdrtrace-epilog

JOB=${SLURM_JOB_ID:-}
DIR=${GDRTRACE_DIR:-/dev/shm}
G=${GDRTRACE_BIN:-gdrtrace}
ARCH=${GDRTRACE_ARCHIVE_DIR:-}
LIMIT=${GDRTRACE_EPILOG_TIMEOUT:-120}
SYSLOG=${GDRTRACE_EPILOG_SYSLOG:-1}
NODE=${SLURMD_NODENAME:-$(hostname -s 2>/dev/null || hostname)}

log() {
    echo "gdrtrace-epilog: job ${JOB:-?} on $NODE: $*" >&2
    if [ "$SYSLOG" = 1 ] && command -v logger >/dev/null 2>&1; then
        logger -t gdrtrace-epilog -- "job ${JOB:-?}: $*" 2>/dev/null
    fi
}
run() { # gdrtrace with a time limit when timeout(1) exists
    if command -v timeout >/dev/null 2>&1; then timeout "$LIMIT" "$G" "$@"; else "$G" "$@"; fi
}

if [ -z "$JOB" ]; then log "SLURM_JOB_ID is not set: nothing to do"; exit 0; fi
case $LIMIT in '' | *[!0-9]*) log "GDRTRACE_EPILOG_TIMEOUT='$LIMIT' is not a number of seconds, using 120"; LIMIT=120 ;; esac
if ! command -v "$G" >/dev/null 2>&1; then log "gdrtrace command '$G' not found (GDRTRACE_BIN)"; exit 0; fi

# The writer names each recorder gdrtrace.<job>.<host>.<pid>[-n].rec with the
# job's first 64 characters, those outside [A-Za-z0-9_-] replaced by '_'
# (shim/recorder.c);
# the name narrows what dump reads, prune --job checks the recorded job.
san=$(printf '%s' "$JOB" | head -c 64 | tr -c 'A-Za-z0-9_-' '_')
shopt -s nullglob
recs=("$DIR/gdrtrace.$san."*.rec "$DIR"/gdrtrace-run.*/"gdrtrace.$san."*.rec)
if [ ${#recs[@]} = 0 ]; then exit 0; fi

if [ -n "$ARCH" ]; then
    dest="$ARCH/$JOB"
    # archives hold host names and settings: owner-only, like the recorders
    umask 077
    if ! mkdir -p -- "$dest"; then
        log "cannot create $dest: recorders kept in $DIR"
        exit 0
    fi
    out="$dest/$NODE.zst"
    [ -e "$out" ] && out="$dest/$NODE.$(date +%s).$$.zst" # a requeued job's second run
    msg=$(run dump -o "$out" "${recs[@]}" 2>&1)
    rc=$?
    # 2: some input unreadable, the rest archived (prune keeps unreadable files anyway);
    # 3: none of them a readable recorder of this job's owner: no archive (never an empty one)
    if [ $rc = 3 ]; then
        log "nothing to archive: $msg"
    elif [ $rc != 0 ] && [ $rc != 2 ]; then
        log "dump to $out failed (exit $rc): $msg; recorders kept in $DIR"
        exit 0
    else
        log "archived: $msg"
    fi
    # Root made them 0700/0600: the job's owner gets them, so that its user
    # can run the `gdrtrace verdict` docs/operations.md suggests.
    if [ $rc != 3 ] && [ -n "${SLURM_JOB_UID:-}" ] && [ "$(id -u)" = 0 ]; then
        chown "$SLURM_JOB_UID${SLURM_JOB_GID:+:$SLURM_JOB_GID}" -- "$dest" "$out" 2>/dev/null ||
            log "cannot give $dest to uid $SLURM_JOB_UID: only root can read it"
    fi
fi

msg=$(run prune --job "$JOB" "$DIR" 2>&1)
rc=$?
while IFS= read -r line; do
    case $line in
    kept*"not '$JOB'") ;; # another job's recorder: not this epilog's business
    ?*) log "$line" ;;
    esac
done <<<"$msg"
[ $rc = 0 ] || log "prune exited $rc"
exit 0

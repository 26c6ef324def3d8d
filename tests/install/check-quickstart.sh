#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# check-quickstart.sh — README's "Quick start in a real job" block, run
# literally (issue 21): every line as README prints it, in one shell, from the
# repository root, except in the job line (`mpirun ... gdrtrace run ... --
# ./your_training_job`): `mpirun ... ` becomes what it gives one rank (its
# rank variable, OMPI_COMM_WORLD_RANK=0) and the training job becomes the
# NCCL-like harness, which `gdrtrace run` makes load the installed plugin by
# name.
#
# Before the block the test sets only what a job's environment would carry:
# a private GDRTRACE_DIR (so other tests' recorders in /dev/shm do not count),
# a job id (SLURM_JOB_ID, which `gdrtrace run` names the job and its archive
# by), /usr/local/bin first on PATH, and `sudo` as a plain call when already
# root.  Each line's exit code is then held against what that line means on a
# machine without RDMA or GPU:
#   make / install / export / summary                 0
#   the job (gdrtrace run)      0 (the job's own status: a rank never exits
#                               for a verdict; its line says HOST-STAGED)
#   verdict --expect dmabuf     20 (the job was HOST-STAGED: expectation not met)
#   doctor                      0, 1 or 2 (a gate may fail here: no GPU, no NIC)
# and the lines' effects are checked: the installed plugin loaded by name from
# its plugin-only folder, HOST-STAGED named, an archive of the job and NCCL's
# logs in the job's folder, the private folder of recorders gone.
#
# Root only, and only when nothing of ours is installed in /usr/local (it
# installs there for real and uninstalls in a trap, as check-install.sh does).
set -u
BUILD=${BUILD:-build/default}
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
so=libnccl-net-gdrtrace.so
if [ "$(id -u)" -ne 0 ]; then
    echo "skip: not root (the quick start installs into /usr/local)"
    exit 77
fi
if [ "$BUILD" != build/default ]; then
    echo "skip: $BUILD: the quick start builds and installs the default build"
    exit 77
fi
if [ -e /usr/local/bin/gdrtrace ] || [ -e /usr/local/lib/$so ] || ldconfig -p | grep -q "$so "; then
    echo "skip: gdrtrace is installed already (/usr/local or the linker cache): left alone"
    exit 77
fi
if [ -e gdrtrace-job ]; then
    echo "skip: gdrtrace-job exists in the repository root; the quick start's archives would mix with it"
    exit 77
fi
harness=$root/$BUILD/harness/harness
[ -x "$harness" ] || { echo "FAIL: $harness not built (make tests)"; exit 1; }

tmp=$(mktemp -d) || exit 1
dirs="bin lib share share/man share/man/man1 share/bash-completion share/bash-completion/completions share/doc"
new_dirs=""
for d in $dirs; do [ -d "/usr/local/$d" ] || new_dirs="/usr/local/$d $new_dirs"; done
cleanup() {
    make --no-print-directory uninstall PREFIX=/usr/local >/dev/null 2>&1
    for d in $new_dirs; do rmdir "$d" 2>/dev/null; done
    rm -rf "$root/gdrtrace-job"
    [ -n "${GT_KEEP:-}" ] && echo "kept $tmp" || rm -rf "$tmp"
}
trap cleanup EXIT

# The block: from the line after the heading's ```sh to the closing ```.
block=$(awk '/^## Quick start in a real job/ {h=1; next}
             h && /^```sh/ {on=1; next}
             on && /^```/ {exit}
             on {print}' README.md)
[ -n "$block" ] || { echo "FAIL: README.md has no sh block under '## Quick start in a real job'"; exit 1; }
job_lines=$(grep -c '^mpirun \.\.\. gdrtrace run .* -- \./your_training_job' <<<"$block")
[ "$job_lines" -eq 1 ] || { echo "FAIL: expected one 'mpirun ... gdrtrace run ... -- ./your_training_job' line in the block, found $job_lines"; exit 1; }

# One shell runs every line and writes down each line's exit code.
script=$tmp/quickstart.sh
{
    echo "set -u"
    echo "sudo() { \"\$@\"; }"
    echo "export GDRTRACE_DIR=$tmp/rec SLURM_JOB_ID=qs$$ PATH=/usr/local/bin:\$PATH"
    echo "mkdir -p \"\$GDRTRACE_DIR\""
    echo "cd '$root'"
    n=0
    while IFS= read -r line; do
        [ -n "${line// /}" ] || continue
        n=$((n + 1))
        cmd=${line%%#*}
        if [[ "$line" == "mpirun ... "* ]]; then
            cmd="OMPI_COMM_WORLD_RANK=0 ${cmd#mpirun ... }"
            job="env -u BUILD '$harness' --abi 11 --data-only --iters 4 --max-size 1M"
            cmd=${cmd/.\/your_training_job/$job}
        fi
        printf 'echo "== %s"\n' "${line//\"/\\\"}"
        printf '%s\n' "$cmd"
        printf 'echo "rc %d $?" >>%s\n' "$n" "$tmp/rcs"
    done <<<"$block"
} >"$script"
bash "$script" >"$tmp/out.log" 2>&1

fail=0
bad() { echo "FAIL: $*"; fail=1; }
rc_of() { # the exit code of the block's line that starts with $1
    local i=0 line
    while IFS= read -r line; do
        [ -n "${line// /}" ] || continue
        i=$((i + 1))
        if [[ "$line" == "$1"* ]]; then
            awk -v n="$i" '$2 == n {print $3}' "$tmp/rcs"
            return
        fi
    done <<<"$block"
}
expect_rc() { # LINE-PREFIX ALLOWED-CODES...
    local p=$1 rc
    shift
    rc=$(rc_of "$p")
    for a in "$@"; do [ "$rc" = "$a" ] && return 0; done
    bad "'$p…' exited ${rc:-(did not run)}, expected $*"
}
expect_rc "make && sudo make install" 0
expect_rc "export GDRTRACE_REG" 0
expect_rc "mpirun ..." 0
expect_rc "gdrtrace verdict --expect dmabuf" 20
expect_rc "gdrtrace summary" 0
expect_rc "gdrtrace doctor" 0 1 2

loaded=$(sed -n "s/.*NCCL_NET_PLUGIN: dlopen(\"$so\") loaded //p" "$tmp/out.log" | sort -u)
[ "$loaded" = "/usr/local/lib/nccl-net-gdrtrace/$so" ] ||
    bad "the job did not load the installed plugin by name from /usr/local/lib/nccl-net-gdrtrace: '$loaded'"
grep -q "^gdrtrace run: rank 0 host $(hostname) verdict HOST-STAGED exit 0 archive gdrtrace-job/qs$$\..*\.r0\.zst$" "$tmp/out.log" ||
    bad "the rank's one line (HOST-STAGED, exit 0, its archive) is missing"
[ "$(grep -c '^nccl-log: 2 file(s)' "$tmp/out.log")" -eq 1 ] ||
    bad "the job's verdict did not join the harness's 2 NCCL logs"
archive=$(ls gdrtrace-job/qs$$.*.zst 2>/dev/null)
if [ -n "$archive" ] && [ "$(wc -l <<<"$archive")" -eq 1 ]; then
    /usr/local/bin/gdrtrace verdict "$archive" >"$tmp/v.log" 2>&1
    rc=$?
    [ $rc -eq 11 ] || bad "the archive's verdict: exit $rc, expected 11 (HOST-STAGED): $(head -n 3 "$tmp/v.log")"
else
    bad "gdrtrace run wrote no one archive of job qs$$ into gdrtrace-job: $(ls gdrtrace-job 2>&1)"
fi
logs=$(ls gdrtrace-job 2>/dev/null | grep -c "^qs$$\..*\.nccl\..*\.log$")
[ "$logs" -eq 2 ] || bad "gdrtrace-job holds $logs NCCL log(s), expected the harness's 2"
left=$(find "$tmp/rec" -mindepth 1 | wc -l)
[ "$left" -eq 0 ] || bad "gdrtrace run left $left entries in GDRTRACE_DIR: $(find "$tmp/rec" -mindepth 1)"

if [ $fail -ne 0 ]; then
    echo "--- the block's output:"
    tail -n 60 "$tmp/out.log"
    exit 1
fi
echo "PASS: README's quick start, run line by line ($(wc -l <"$tmp/rcs") lines), as README says"

#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# check-completion.sh — the bash completion (dist/gen-completion.sh, built
# into $BUILD/completion/gdrtrace) completes as a user expects: subcommands,
# each subcommand's options (every option its usage or option list defines,
# and only options its parser accepts), option values
# (--expect's words, -o's file names, --job's job ids from the recorders'
# names) and file/folder arguments; after `run --`, a command and then its
# arguments (bash-completion's _command_offset where it is loaded); and
# bash-completion's own loader finds it where `make install` puts it.
set -u
BUILD=${BUILD:-build/default}
tool=$BUILD/gdrtrace
comp=$BUILD/completion/gdrtrace
[ -x "$tool" ] && [ -f "$comp" ] || { echo "FAIL: $tool or $comp not built (make)"; exit 1; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
# shellcheck source=/dev/null
source "$comp" || { echo "FAIL: sourcing $comp"; exit 1; }

# complete LINE: the candidates for the last word of LINE (a trailing space
# means an empty word), one per line, sorted.
complete_line() {
    local line=$1
    read -r -a COMP_WORDS <<<"$line"
    [ "${line% }" != "$line" ] && COMP_WORDS+=("")
    COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    COMP_LINE=$line
    COMP_POINT=${#line}
    COMPREPLY=()
    _gdrtrace gdrtrace "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
    printf '%s\n' "${COMPREPLY[@]}" | sort
}
expect() { # LINE WORDS... : the candidates are exactly WORDS
    local got want
    got=$(complete_line "$1" | tr '\n' ' ')
    shift
    want=$(printf '%s\n' "$@" | sort | tr '\n' ' ')
    [ "$got" = "$want" ] || bad "'$LINE' completes to '$got', expected '$want'"
}
has() { # LINE WORD : WORD is among the candidates
    complete_line "$1" | grep -qx -- "$2" || bad "'$1' does not offer '$2' (got: $(complete_line "$1" | tr '\n' ' '))"
}

cmds=$("$tool" --help | awk '/^commands:$/ {on=1; next} on && /^$/ {exit} on {print $1}')
LINE="gdrtrace "; expect "$LINE" $cmds --help --version
LINE="gdrtrace ver"; expect "$LINE" verdict
LINE="gdrtrace --v"; expect "$LINE" --version
LINE="gdrtrace verdict --ex"; expect "$LINE" --expect
LINE="gdrtrace verdict --expect "; expect "$LINE" dmabuf peermem host
LINE="gdrtrace verdict --expect p"; expect "$LINE" peermem
LINE="gdrtrace doctor --dm"; expect "$LINE" --dmabuf-source=vgem
LINE="gdrtrace summary --json --no"; expect "$LINE" --no-bars
mkdir -p "$tmp/run-a" && : >"$tmp/run-a/gdrtrace.h.1.rec" && : >"$tmp/job.zst"
LINE="gdrtrace dump -o $tmp/j"; expect "$LINE" "$tmp/job.zst"
LINE="gdrtrace verdict $tmp/run-a/"; expect "$LINE" "$tmp/run-a/gdrtrace.h.1.rec"
LINE="gdrtrace verdict --json $tmp/r"; expect "$LINE" "$tmp/run-a"
LINE="gdrtrace diff $tmp/run-a $tmp/j"; expect "$LINE" "$tmp/job.zst"
# A command whose usage takes [DIR] is offered folders only.
for c in $cmds; do
    "$tool" "$c" --help | grep -m1 '^usage:' | grep -q '\[DIR\]' || continue
    LINE="gdrtrace $c $tmp/"; expect "$LINE" "$tmp/run-a"
done
# --job: the job ids of the recorders in $GDRTRACE_DIR, or in a folder named
# on the line; "-" for recorders without a job id
mkdir -p "$tmp/shm" "$tmp/other"
: >"$tmp/shm/gdrtrace.j1.node-a.11.rec" && : >"$tmp/shm/gdrtrace.j1.node-b.12.rec"
: >"$tmp/shm/gdrtrace.train-7_b.node-a.13-1.rec" && : >"$tmp/shm/gdrtrace.nojob.node-a.14.rec"
: >"$tmp/other/gdrtrace.j9.node-c.15.rec" && : >"$tmp/other/notes.txt"
export GDRTRACE_DIR=$tmp/shm
LINE="gdrtrace verdict --job "; expect "$LINE" j1 train-7_b -
LINE="gdrtrace summary --job t"; expect "$LINE" train-7_b
LINE="gdrtrace prune $tmp/other --job "; expect "$LINE" j9
unset GDRTRACE_DIR
# run -- COMMAND...: a command name, then that command's arguments (files)
has "gdrtrace run -- bas" bash
has "gdrtrace run --dir $tmp/d -- " bash
LINE="gdrtrace run -- bash $tmp/j"; expect "$LINE" "$tmp/job.zst"
# Every option a subcommand's usage line or option list defines is offered
# after "-" (an option only named in a sentence is another command's).
for c in $cmds; do
    for o in $("$tool" "$c" --help | awk '/^usage:/ { u = 1; print; next } u && /^          / { print; next } { u = 0 }
        match($0, /^  +-/) && RLENGTH <= 7 { sub(/^ +/, ""); sub(/  .*/, ""); print }' |
        grep -oE '(^|[][ (|])--[a-z][-a-z]*(=[a-z]+)?' | sed 's/^[][ (|]//' | sort -u); do
        has "gdrtrace $c -" "$o"
    done
    has "gdrtrace $c -" --help
done
# Every option offered is one the subcommand's parser accepts: given a value
# of the kind the completion offers (then --help, so nothing runs), getopt
# never says it does not know it.
mkdir -p "$tmp/d" && : >"$tmp/f"
for c in $cmds; do
    for o in $(_gdrtrace_opt "$c"); do
        kind=$(_gdrtrace_arg "$c" "$o")
        case $kind in
        f) set -- "$o" "$tmp/f" ;;
        d) set -- "$o" "$tmp/d" ;;
        "w "*) w=${kind#w }; set -- "$o" "${w%% *}" ;;
        n) set -- "$o" 1 ;;
        j) set -- "$o" j1 ;;
        *) set -- "$o" ;;
        esac
        err=$( (cd "$tmp" && "$OLDPWD/$tool" "$c" "$@" --help) 2>&1 >/dev/null)
        case $err in
        *"unrecognized option"* | *"invalid option"* | *"unknown option"*)
            bad "completion offers '$c $o', which gdrtrace $c refuses: $err" ;;
        esac
    done
done
# an option's value is offered as its kind: report --baseline takes a run (a file)
LINE="gdrtrace report --baseline $tmp/j"; expect "$LINE" "$tmp/job.zst"

# Installed as `make install` does, bash-completion's loader finds it by the
# command's name (skipped without bash-completion).
loader=/usr/share/bash-completion/bash_completion
if [ -r "$loader" ]; then
    mkdir -p "$tmp/share/bash-completion/completions"
    cp "$comp" "$tmp/share/bash-completion/completions/gdrtrace"
    got=$(XDG_DATA_DIRS=$tmp/share bash --norc -c "source $loader; _completion_loader gdrtrace; complete -p gdrtrace" 2>&1)
    case $got in *"-F _gdrtrace gdrtrace"*) ;; *) bad "bash-completion's loader does not load it: $got" ;; esac
    # with bash-completion loaded, run -- hands the rest to _command_offset:
    # the command's own completion (here: its options, as the loader finds them)
    got=$(XDG_DATA_DIRS=$tmp/share bash --norc -c "source $loader; _completion_loader gdrtrace
        COMP_WORDS=(gdrtrace run -- gdrtrace ver); COMP_CWORD=4; COMP_LINE='gdrtrace run -- gdrtrace ver'
        COMP_POINT=\${#COMP_LINE}; _gdrtrace gdrtrace ver gdrtrace; printf '%s\n' \"\${COMPREPLY[@]}\"" 2>&1)
    [ "$got" = verdict ] || bad "run -- gdrtrace ver with bash-completion loaded: '$got', expected verdict"
else
    echo "note: $loader missing (Debian bash-completion): loader not checked"
fi
[ $fail -eq 0 ] && echo "PASS: completion of commands, options, values and files"
exit $fail

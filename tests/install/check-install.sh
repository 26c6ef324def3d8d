#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# check-install.sh — `make install` / `make uninstall` (layout: dist/module.mk):
#   * staged (DESTDIR): the command only in bin/, the plugin in lib/ with its
#     SONAME, lib/nccl-net-gdrtrace/ holding the plugin and nothing else (NCCL dlopens
#     the bare name "gdrtrace" first: no executable of that name may sit in a
#     library folder), man pages man(1) opens, the completion; uninstall
#     removes every file it wrote; `gdrtrace run` of the staged command finds
#     the plugin installed beside it (also in the Debian layout, LIBDIR
#     /usr/lib/<multiarch>) and a job loads it from there by name;
#   * as root, for real under PREFIX=/usr/local (when nothing of ours is there
#     already; removed again in a trap): a job finds the plugin by name,
#     NCCL_NET_PLUGIN=gdrtrace with no LD_LIBRARY_PATH and no hand-run ldconfig,
#     and again through the plugin-only folder on LD_LIBRARY_PATH;
#   * as root, a LIBDIR outside the linker's path: install adds it in
#     /etc/ld.so.conf.d/gdrtrace.conf, a job finds the plugin by name,
#     uninstall removes the entry (dist/ldcache.sh).
set -u
BUILD=${BUILD:-build/default}
tmp=$(mktemp -d) || exit 1
fail=0
bad() { echo "FAIL: $*"; fail=1; }
real=""
# The folders a real install may create: those it created go again with it.
dirs="bin lib lib/systemd lib/systemd/system share share/man share/man/man1 share/bash-completion share/bash-completion/completions share/doc"
new_dirs=""
for d in $dirs; do [ -d "/usr/local/$d" ] || new_dirs="/usr/local/$d $new_dirs"; done
real2=""
cleanup() {
    [ -n "$real2" ] && make --no-print-directory uninstall PREFIX="$real2" >/dev/null 2>&1
    [ -n "$real" ] && make --no-print-directory uninstall PREFIX=/usr/local >/dev/null 2>&1
    [ -n "$real" ] && for d in $new_dirs; do rmdir "$d" 2>/dev/null; done
    rm -rf "$tmp"
}
trap cleanup EXIT
so=libnccl-net-gdrtrace.so
# make's own name for this build, so that install never rebuilds it with other flags.
san=${BUILD#build/}
[ "$san" = default ] && san=

st=$tmp/stage
make --no-print-directory install SAN="$san" BUILD="$BUILD" DESTDIR="$st" PREFIX=/usr/local >"$tmp/install.log" 2>&1 ||
    { cat "$tmp/install.log"; echo "FAIL: make install DESTDIR=$st"; exit 1; }
p=$st/usr/local
[ -x "$p/bin/gdrtrace" ] || bad "no $p/bin/gdrtrace"
[ -x "$p/bin/gdrtrace-fieldtest" ] || bad "no $p/bin/gdrtrace-fieldtest (the field kit)"
[ -x "$p/libexec/gdrtrace/gdrtrace-gpumem-copier" ] || bad "no $p/libexec/gdrtrace/gdrtrace-gpumem-copier"
[ -f "$p/lib/$so" ] && [ ! -L "$p/lib/$so" ] || bad "no $p/lib/$so"
soname=$(objdump -p "$p/lib/$so" 2>/dev/null | awk '$1 == "SONAME" {print $2}')
[ "$soname" = "$so" ] || bad "SONAME of $so is '$soname', expected $so"
[ "$(ls -A "$p/lib/nccl-net-gdrtrace")" = "$so" ] || bad "$p/lib/nccl-net-gdrtrace holds '$(ls -A "$p/lib/nccl-net-gdrtrace" | tr '\n' ' ')', expected only $so"
[ "$(readlink -f "$p/lib/nccl-net-gdrtrace/$so")" = "$(readlink -f "$p/lib/$so")" ] || bad "lib/nccl-net-gdrtrace/$so is not the installed plugin"
found=$(find "$p/lib" -name gdrtrace)
[ -z "$found" ] || bad "library folders hold an entry named gdrtrace (NCCL's bare-name lookup): $found"
for c in "" $("$p/bin/gdrtrace" --help | awk '/^commands:$/ {on=1; next} on && /^$/ {exit} on {print $1}'); do
    page=$p/share/man/man1/gdrtrace${c:+-$c}.1
    [ -f "$page" ] || { bad "no $page"; continue; }
    command -v man >/dev/null && { MANWIDTH=80 man -l "$page" 2>&1 | grep -q '^NAME' || bad "man -l $page shows no NAME"; }
done
[ -f "$p/share/bash-completion/completions/gdrtrace" ] || bad "no completion in share/bash-completion/completions"
# the cleanup and monitoring pieces the docs install from the installed tree
[ -x "$p/libexec/gdrtrace/slurm-epilog.sh" ] || bad "no $p/libexec/gdrtrace/slurm-epilog.sh (docs/operations.md)"
for e in k8s-prune.yaml prometheus-alerts.yml; do
    [ -f "$p/share/doc/gdrtrace/examples/$e" ] || bad "no $p/share/doc/gdrtrace/examples/$e"
done
# `gdrtrace run` finds the plugin installed with it, BINDIR/../lib/nccl-net-gdrtrace
# (make install) or BINDIR/../lib/<multiarch>/nccl-net-gdrtrace (the package's
# LIBDIR), and a job loads it from there by name (the harness, as NCCL does).
run_finds_plugin() { # PREFIX-IN-STAGE LIBDIR-IN-STAGE
    local out=$tmp/run-out rc loaded
    rm -rf "$out" "$tmp/run-rec" && mkdir -p "$tmp/run-rec"
    (cd "$tmp" && env -u BUILD -u NCCL_NET_PLUGIN -u NCCL_DEBUG GDRTRACE_DIR="$tmp/run-rec" \
        "$1/bin/gdrtrace" run --dir "$out" -- "$OLDPWD/$BUILD/harness/harness" --abi 11 --data-only \
        --iters 2 --max-size 64K) >"$tmp/run.log" 2>&1
    rc=$?
    loaded=$(sed -n "s/.*NCCL_NET_PLUGIN: dlopen(\"$so\") loaded //p" "$tmp/run.log" | sort -u)
    [ $rc -eq 11 ] && [ "$(readlink -f "$(dirname "$loaded")")" = "$(readlink -f "$2/nccl-net-gdrtrace")" ] &&
        [ "$(ls "$out" | grep -c '\.zst$')" = 1 ] ||
        bad "gdrtrace run of $1 (exit $rc) did not load $2/nccl-net-gdrtrace/$so: '$loaded': $(tail -n 5 "$tmp/run.log")"
}
if [ -x "$BUILD/harness/harness" ]; then
    run_finds_plugin "$p" "$p/lib"
    ma=$(${CC:-gcc} -print-multiarch 2>/dev/null)
    if [ -n "$ma" ]; then
        st2=$tmp/stage-multiarch
        make --no-print-directory install SAN="$san" BUILD="$BUILD" DESTDIR="$st2" PREFIX=/usr \
            LIBDIR=/usr/lib/$ma >"$tmp/install2.log" 2>&1 || { cat "$tmp/install2.log"; bad "make install LIBDIR=/usr/lib/$ma"; }
        run_finds_plugin "$st2/usr" "$st2/usr/lib/$ma"
    fi
else
    bad "$BUILD/harness/harness not built (make tests)"
fi

make --no-print-directory uninstall SAN="$san" BUILD="$BUILD" DESTDIR="$st" PREFIX=/usr/local >"$tmp/uninstall.log" 2>&1 ||
    { cat "$tmp/uninstall.log"; bad "make uninstall failed"; }
left=$(find "$st" ! -type d)
[ -z "$left" ] || bad "make uninstall left: $left"

# For real, by name.
harness=$BUILD/harness/harness
if [ "$(id -u)" -ne 0 ]; then
    echo "note: not root: install under /usr/local not tried"
elif [ "$BUILD" != build/default ]; then
    echo "note: $BUILD: the installed-by-name run uses the default build only"
elif [ -e /usr/local/bin/gdrtrace ] || [ -e /usr/local/lib/$so ]; then
    echo "note: gdrtrace is installed in /usr/local already: left alone, not tried"
elif ldconfig -p | grep -q "$so "; then
    echo "note: another $so is in the linker cache (the Debian package?): not tried"
elif [ ! -x "$harness" ]; then
    bad "$harness not built (make tests)"
else
    real=1
    make --no-print-directory install PREFIX=/usr/local >"$tmp/real.log" 2>&1 || { cat "$tmp/real.log"; bad "make install"; }
    grep -q "NCCL_NET_PLUGIN=gdrtrace finds /usr/local/lib/$so" "$tmp/real.log" || bad "install did not say the plugin is found: $(cat "$tmp/real.log" | tail -n 3)"
    # Run from an empty folder, as a job would: no build folder at hand.
    for lp in "" /usr/local/lib/nccl-net-gdrtrace; do
        d=$tmp/rec${lp:+-ldpath}
        mkdir -p "$d"
        (cd "$tmp" && env -u BUILD LD_LIBRARY_PATH=$lp NCCL_NET_PLUGIN=gdrtrace \
            "$OLDPWD/$harness" --abi 11 --data-only --iters 4 --max-size 1M --dir "$d") >"$tmp/h.log" 2>&1 ||
            { tail -n 15 "$tmp/h.log"; bad "harness by name (LD_LIBRARY_PATH='$lp')"; continue; }
        loaded=$(sed -n "s/.*NCCL_NET_PLUGIN: dlopen(\"$so\") loaded //p" "$tmp/h.log" | head -n 1)
        [ -n "$loaded" ] && [ "$(readlink -f "$loaded")" = /usr/local/lib/$so ] ||
            bad "the harness did not load /usr/local/lib/$so by name: $(grep 'NCCL_NET_PLUGIN:' "$tmp/h.log" | head -n 1)"
        /usr/local/bin/gdrtrace verdict "$d" >"$tmp/v.log"
        rc=$?
        [ $rc -eq 11 ] || bad "verdict of the by-name run: exit $rc, expected 11 (HOST-STAGED): $(cat "$tmp/v.log")"
    done
    make --no-print-directory uninstall PREFIX=/usr/local >/dev/null 2>&1 || bad "make uninstall PREFIX=/usr/local"
    for d in $new_dirs; do rmdir "$d" 2>/dev/null; done
    real=""
    [ ! -e /usr/local/bin/gdrtrace ] && [ ! -e /usr/local/lib/$so ] && [ ! -e /usr/local/lib/nccl-net-gdrtrace ] ||
        bad "uninstall left files in /usr/local"
    ldconfig -p | grep -q "$so " && bad "the linker cache still lists $so after uninstall"
fi
# As root, a LIBDIR outside the linker's path: install adds it in
# /etc/ld.so.conf.d/gdrtrace.conf, so a job finds the plugin by name with no
# LD_LIBRARY_PATH; uninstall takes the entry away again.
conf=/etc/ld.so.conf.d/gdrtrace.conf
if [ "$(id -u)" -ne 0 ] || [ "$BUILD" != build/default ]; then
    echo "note: not root or not the default build: the ld.so.conf.d entry not tried"
elif [ -e "$conf" ] || ldconfig -p | grep -q "$so "; then
    echo "note: $conf exists or $so is in the linker cache: the ld.so.conf.d entry not tried"
elif [ -x "$harness" ]; then
    real2=$tmp/prefix
    make --no-print-directory install PREFIX="$real2" >"$tmp/conf.log" 2>&1 || { cat "$tmp/conf.log"; bad "make install PREFIX=$real2"; }
    grep -q "wrote $conf ($real2/lib); NCCL_NET_PLUGIN=gdrtrace finds $real2/lib/$so" "$tmp/conf.log" &&
        [ "$(cat "$conf" 2>/dev/null)" = "$real2/lib" ] ||
        bad "install to a LIBDIR outside the linker's path did not add $conf: $(tail -n 3 "$tmp/conf.log")"
    mkdir -p "$tmp/rec-conf"
    (cd "$tmp" && env -u BUILD -u LD_LIBRARY_PATH NCCL_NET_PLUGIN=gdrtrace "$OLDPWD/$harness" --abi 11 --data-only \
        --iters 2 --max-size 64K --dir "$tmp/rec-conf") >"$tmp/h-conf.log" 2>&1
    loaded=$(sed -n "s/.*NCCL_NET_PLUGIN: dlopen(\"$so\") loaded //p" "$tmp/h-conf.log" | sort -u)
    [ "$loaded" = "$real2/lib/$so" ] || bad "a job did not find $real2/lib/$so by name through $conf: '$loaded'"
    make --no-print-directory uninstall PREFIX="$real2" >"$tmp/unconf.log" 2>&1 || bad "make uninstall PREFIX=$real2"
    real2=""
    [ ! -e "$conf" ] || bad "uninstall left $conf"
    ldconfig -p | grep -q "$so " && bad "the linker cache still lists $so after uninstall PREFIX=$tmp/prefix"
fi
[ $fail -eq 0 ] && echo "PASS: install layout, man pages, completion, uninstall${real:+}"
exit $fail

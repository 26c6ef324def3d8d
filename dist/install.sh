#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# install.sh install|uninstall — the body of `make install` and `make
# uninstall` (layout and variables in dist/module.mk, passed in the
# environment).
#
# Invariants:
#  1. install writes the list of every file it wrote (their installed paths,
#     without DESTDIR, one a line) to MANIFEST = LIBEXECDIR/gdrtrace/
#     install-manifest; uninstall removes exactly the files that list names,
#     then the manifest, then only the folders install owns (LIBEXECDIR/
#     gdrtrace, the plugin-only folder, DOCDIR) and only when empty: a file a
#     site put beside ours (DOCDIR/SITE-NOTES.md, man1/gdrtrace-site-*.1)
#     stays, and so does its folder.  Nothing is globbed in the target tree.
#  2. Without a manifest (an install by an older make install) uninstall
#     removes the files this tree would install, by name, and says so.
#  3. A path variable holding whitespace or a control character is refused
#     before anything is written or removed: every path is quoted here, but a
#     value make split or a tool mangled must not reach rm.
set -u
what=${1:-}
vars="DESTDIR PREFIX BINDIR LIBDIR LIBEXECDIR MANDIR DOCDIR BASHCOMPDIR SYSTEMDUNITDIR"
for v in $vars; do
    val=${!v-}
    if [[ "$val" =~ [[:space:][:cntrl:]] ]]; then
        printf 'make %s: %s=%q holds whitespace or a control character: refused, nothing %s\n' \
            "$what" "$v" "$val" "$([ "$what" = install ] && echo installed || echo removed)" >&2
        exit 2
    fi
done
for v in PREFIX BINDIR LIBDIR LIBEXECDIR MANDIR DOCDIR BASHCOMPDIR SYSTEMDUNITDIR; do
    case "${!v-}" in
    /*) ;;
    *)
        echo "make $what: $v='${!v-}' is not an absolute path: refused" >&2
        exit 2
        ;;
    esac
done
D=${DESTDIR-}
PLUGINDIR=$LIBDIR/nccl-net-gdrtrace
MANIFEST=$LIBEXECDIR/gdrtrace/install-manifest
so=libnccl-net-gdrtrace.so

# What this tree installs, as "SOURCE MODE TARGET" (TARGET without DESTDIR;
# SOURCE "@link" for the plugin-only folder's link, "@unit" for the service).
files() {
    echo "$PLUGIN 0644 $LIBDIR/$so"
    echo "@link - $PLUGINDIR/$so"
    echo "$TOOL 0755 $BINDIR/gdrtrace"
    echo "dist/gdrtrace-fieldtest 0755 $BINDIR/gdrtrace-fieldtest"
    echo "$COPIER 0755 $LIBEXECDIR/gdrtrace/gdrtrace-gpumem-copier"
    for m in "$MAN_DIR"/*.1; do
        [ -f "$m" ] && echo "$m 0644 $MANDIR/man1/${m##*/}"
    done
    echo "$COMPLETION 0644 $BASHCOMPDIR/gdrtrace"
    for d in README.md docs/*.md; do
        echo "$d 0644 $DOCDIR/${d##*/}"
    done
    # the cleanup and monitoring pieces docs/operations.md and metrics.md
    # install from here: the Slurm epilog, the Kubernetes sidecar, the alerts
    echo "scripts/epilog/slurm-epilog.sh 0755 $LIBEXECDIR/gdrtrace/slurm-epilog.sh"
    echo "docs/examples/k8s-prune.yaml 0644 $DOCDIR/examples/k8s-prune.yaml"
    echo "docs/examples/prometheus-alerts.yml 0644 $DOCDIR/examples/prometheus-alerts.yml"
    echo "@unit 0644 $SYSTEMDUNITDIR/gdrtrace-export.service"
    echo "dist/systemd/gdrtrace-export.timer 0644 $SYSTEMDUNITDIR/gdrtrace-export.timer"
}

case "$what" in
install)
    install -d "$D$BINDIR" "$D$PLUGINDIR" "$D$MANDIR/man1" "$D$BASHCOMPDIR" "$D$DOCDIR/examples" \
        "$D$SYSTEMDUNITDIR" "$D$LIBEXECDIR/gdrtrace" || exit 1
    list=$(mktemp) || exit 1
    trap 'rm -f "$list"' EXIT
    while read -r src mode dst; do
        case "$src" in
        @link) ln -sfn "../$so" "$D$dst" ;;
        @unit)
            sed "s|@BINDIR@|$BINDIR|g" dist/systemd/gdrtrace-export.service.in >"$D$dst" &&
                chmod "$mode" "$D$dst"
            ;;
        *) install -m "$mode" "$src" "$D$dst" ;;
        esac || { echo "make install: could not write $D$dst" >&2; exit 1; }
        echo "$dst" >>"$list"
    done < <(files)
    echo "$MANIFEST" >>"$list"
    install -m 0644 "$list" "$D$MANIFEST" || exit 1
    dist/ldcache.sh install "$D" "$LIBDIR"
    ;;
uninstall)
    if [ -f "$D$MANIFEST" ]; then
        src="$D$MANIFEST"
    else
        echo "make uninstall: no $D$MANIFEST (an install by an older make install?):" \
            "removing the files this tree installs, by name" >&2
        src=$(mktemp) || exit 1
        trap 'rm -f "$src"' EXIT
        files | while read -r _ _ dst; do echo "$dst"; done >"$src"
    fi
    while IFS= read -r dst; do
        # Only absolute paths of files (or links), never a folder: a line a
        # hand edited into the manifest cannot make this remove a tree.
        case "$dst" in
        /*) ;;
        *) continue ;;
        esac
        [ "$dst" = "$MANIFEST" ] && continue
        if [ -L "$D$dst" ] || [ -f "$D$dst" ]; then
            rm -f -- "$D$dst"
        fi
    done <"$src"
    rm -f -- "$D$MANIFEST"
    for d in "$D$LIBEXECDIR/gdrtrace" "$D$PLUGINDIR" "$D$DOCDIR/examples" "$D$DOCDIR"; do
        rmdir -- "$d" 2>/dev/null
    done
    dist/ldcache.sh uninstall "$D" "$LIBDIR"
    ;;
*)
    echo "usage: dist/install.sh install|uninstall (from make)" >&2
    exit 64
    ;;
esac
exit 0

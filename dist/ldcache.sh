#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# ldcache.sh install|uninstall DESTDIR LIBDIR — after `make install` or
# `make uninstall`: NCCL_NET_PLUGIN=gdrtrace makes NCCL dlopen
# "libnccl-net-gdrtrace.so" by name, which the dynamic linker finds only in its
# system folders or through its cache (/etc/ld.so.cache).  So, as root and not
# staged: refresh the cache, and when LIBDIR is in none of the linker's folders
# add it in /etc/ld.so.conf.d/gdrtrace.conf (removed again by uninstall, only
# when it names that LIBDIR); then say whether the plugin is found by name, or
# the exact step that makes it so.  `gdrtrace run` needs none of this: it puts
# LIBDIR/nccl-net-gdrtrace first on the job's LD_LIBRARY_PATH.  Never fails
# the install.
set -u
what=$1
destdir=$2
libdir=$3
so=libnccl-net-gdrtrace.so
conf=/etc/ld.so.conf.d/gdrtrace.conf
if [ -n "$destdir" ]; then
    # A staged install (packaging): the package manager runs ldconfig.
    exit 0
fi
found() { ldconfig -p 2>/dev/null | grep -q "$so .*=> $libdir/$so\$"; }
if [ "$(id -u)" -ne 0 ]; then
    [ "$what" = install ] || exit 0
    if found; then
        echo "NCCL_NET_PLUGIN=gdrtrace finds $libdir/$so (linker cache)"
    else
        echo "not root: the linker cache was not refreshed; run: sudo ldconfig"
        echo "(if $libdir is not in the linker's path: echo $libdir | sudo tee $conf && sudo ldconfig)"
    fi
    exit 0
fi
if [ "$what" = uninstall ]; then
    # Ours only if it names exactly this LIBDIR (a file a site wrote stays).
    if [ -f "$conf" ] && [ "$(cat "$conf")" = "$libdir" ]; then
        rm -f "$conf" && echo "removed $conf ($libdir)"
    fi
    ldconfig || echo "ldconfig failed; run it again as root"
    exit 0
fi
ldconfig || echo "ldconfig failed; run it again as root"
# The dynamic linker's own folders need no cache (Debian: /usr/lib/<triplet>).
sys=$(ld.so --help 2>/dev/null | sed -n 's/^ *\(\/[^ ]*\) (system search path)$/\1/p')
for d in $sys; do
    [ "$(readlink -f "$d")" = "$(readlink -f "$libdir")" ] && {
        echo "NCCL_NET_PLUGIN=gdrtrace finds $libdir/$so (a system library folder)"
        exit 0
    }
done
if found; then
    echo "NCCL_NET_PLUGIN=gdrtrace finds $libdir/$so (linker cache)"
    exit 0
fi
if [ ! -e "$conf" ] && [ -d "$(dirname "$conf")" ]; then
    if printf '%s\n' "$libdir" >"$conf" && ldconfig && found; then
        echo "wrote $conf ($libdir); NCCL_NET_PLUGIN=gdrtrace finds $libdir/$so (linker cache)"
        exit 0
    fi
    rm -f "$conf"
fi
echo "NCCL_NET_PLUGIN=gdrtrace will NOT find $libdir/$so: $libdir is not in the linker's"
echo "path. Either, as root:  echo $libdir > $conf && ldconfig"
echo "or in the job's environment:  LD_LIBRARY_PATH=$libdir/nccl-net-gdrtrace:\$LD_LIBRARY_PATH"
echo "(gdrtrace run -- COMMAND does the latter by itself)"

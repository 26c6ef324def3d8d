#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# ldcache.sh install|uninstall DESTDIR LIBDIR — after `make install` or
# `make uninstall`: NCCL_NET_PLUGIN=gdrtrace makes NCCL dlopen
# "libnccl-net-gdrtrace.so" by name, which the dynamic linker finds only in its
# system folders or through its cache (/etc/ld.so.cache).  So: refresh the
# cache when we may (root, no DESTDIR), then say whether the plugin is found by
# name, or the exact step that makes it so.  Never fails the install.
set -u
what=$1
destdir=$2
libdir=$3
so=libnccl-net-gdrtrace.so
if [ -n "$destdir" ]; then
    # A staged install (packaging): the package manager runs ldconfig.
    exit 0
fi
if [ "$(id -u)" -eq 0 ]; then
    ldconfig || echo "ldconfig failed; run it again as root"
elif [ "$what" = install ]; then
    echo "not root: the linker cache was not refreshed; run: sudo ldconfig"
    exit 0
fi
[ "$what" = install ] || exit 0
# The dynamic linker's own folders need no cache (Debian: /usr/lib/<triplet>).
sys=$(ld.so --help 2>/dev/null | sed -n 's/^ *\(\/[^ ]*\) (system search path)$/\1/p')
for d in $sys; do
    [ "$(readlink -f "$d")" = "$(readlink -f "$libdir")" ] && {
        echo "NCCL_NET_PLUGIN=gdrtrace finds $libdir/$so (a system library folder)"
        exit 0
    }
done
if ldconfig -p 2>/dev/null | grep -q "$so .*=> $libdir/$so\$"; then
    echo "NCCL_NET_PLUGIN=gdrtrace finds $libdir/$so (linker cache)"
    exit 0
fi
echo "NCCL_NET_PLUGIN=gdrtrace will NOT find $libdir/$so: $libdir is not in the linker's"
echo "path. Either, as root:  echo $libdir > /etc/ld.so.conf.d/gdrtrace.conf && ldconfig"
echo "or in the job's environment:  LD_LIBRARY_PATH=$libdir/gdrtrace:\$LD_LIBRARY_PATH"

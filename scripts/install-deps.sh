#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# install-deps.sh — makes a fresh Debian 12 machine able to build, test and
# demo gdrtrace.  Installs only what is missing; as root it runs apt-get,
# otherwise it prints the exact command and fails.
set -eu
pkgs=(
    build-essential pkg-config
    libibverbs-dev libzstd-dev libcmocka-dev zstd
    liblttng-ust-dev # make bench: the LTTng-UST tracepoint the recorder is measured against
    lttng-tools # make bench: a session daemon, to measure that tracepoint enabled
    clang llvm libclang-rt-14-dev
    clang-format-14 # make check: the format check is pinned to this major version
    iproute2
    # the Soft-RoCE VM test (tests/vm): a real kernel verbs stack under QEMU
    qemu-system-x86 busybox-static rdma-core ibverbs-providers ibverbs-utils perftest cpio kmod
)
missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
cmd="apt-get install -y --no-install-recommends ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
    echo "gdrtrace needs these Debian packages; run as root:" >&2
    echo "  apt-get update && $cmd" >&2
    exit 1
fi
echo "installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
$cmd >/dev/null

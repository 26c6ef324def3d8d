#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# install-deps.sh [SET...] — makes a fresh Debian 12 machine able to build and
# run one part of gdrtrace.  Installs only what is missing; as root it runs
# apt-get, otherwise it prints the exact command and fails.
#   demo   what `make` and `make demo` need (compiler, zstd and verbs headers)
#   deb    what `make deb` needs (debhelper, dpkg-dev, fakeroot, lintian)
#   check  what `make check` needs: demo + deb (the package test) + every
#          test tool (cmocka, clang, lttng, the Soft-RoCE VM's qemu ...)
# With no SET: check.
set -eu
demo=(build-essential libibverbs-dev libzstd-dev)
deb=("${demo[@]}" debhelper dpkg-dev fakeroot lintian)
check=(
    "${deb[@]}" pkg-config libcmocka-dev zstd
    liblttng-ust-dev # make bench: the LTTng-UST tracepoint the recorder is measured against
    lttng-tools # make bench: a session daemon, to measure that tracepoint enabled
    clang llvm libclang-rt-14-dev
    clang-format-14 # make check: the format check is pinned to this major version
    bash-completion man-db # tests/install: the completion and the man pages, as a user has them
    iproute2
    prometheus # tests/reader/test-prometheus.sh: promtool check metrics on export --prometheus
    # tests/reader/test-prometheus-live.sh: export -o read by node_exporter's textfile
    # collector, scraped by prometheus, queried over its HTTP API (both on loopback)
    prometheus-node-exporter curl
    systemd # tests/install/check-systemd.sh: systemd-analyze verify on gdrtrace-export.*
    chromium python3 # tests/reader/test-report-html.sh: report's page in a headless browser, its DOM read
    # tests/slurm/test-slurm.sh: a one-node Slurm started by the test (srun, the epilog)
    slurmctld slurmd slurm-client munge
    # the Soft-RoCE VM test (tests/vm): a real kernel verbs stack under QEMU
    qemu-system-x86 busybox-static rdma-core ibverbs-providers ibverbs-utils perftest cpio kmod
)
[ $# -gt 0 ] || set -- check
pkgs=()
for set in "$@"; do
    case $set in
    demo) pkgs+=("${demo[@]}") ;;
    deb) pkgs+=("${deb[@]}") ;;
    check) pkgs+=("${check[@]}") ;;
    *)
        echo "install-deps.sh: unknown set '$set' (demo, deb or check)" >&2
        exit 64
        ;;
    esac
done
missing=()
for p in "${pkgs[@]}"; do
    case " ${missing[*]} " in *" $p "*) continue ;; esac
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
cmd="apt-get install -y --no-install-recommends ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
    echo "gdrtrace ($*) needs these Debian packages; run as root:" >&2
    echo "  apt-get update && $cmd" >&2
    exit 1
fi
echo "installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
$cmd >/dev/null

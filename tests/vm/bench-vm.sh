#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bench-vm.sh — `make bench` entry: the ib transport's bandwidth next to
# ib_write_bw on the same Soft-RoCE pair in the same VM boot (run-vm.sh --bench).
# A machine that cannot run the VM says why and does not fail the bench run.
"$(dirname "$0")/run-vm.sh" --bench
rc=$?
[ $rc -eq 77 ] && exit 0
exit $rc

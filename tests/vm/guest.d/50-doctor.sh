#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# 50-doctor.sh — `gdrtrace doctor` inside the Soft-RoCE VM (tests/vm/run-vm.sh
# runs every guest.d script with busybox sh; exit 0 pass, 77 skip, else fail).
#
# The VM has two real kernel RDMA devices (rxe0 on veth0 10.0.0.1, rxe1 on
# veth1 10.0.0.2), vgem for a real dma-buf, and no NVIDIA driver or libcuda.
# Checks that doctor, on a real verbs stack:
#  - finds both rxe devices, marks them virtual (no PCI address), reports
#    their netdev and their RoCE v2 GID holding the veth's IPv4 address;
#  - passes /dev/infiniband, the ACTIVE ports and host-memory registration
#    (the negative control);
#  - reports the DMA-BUF refusal: the fd=-1 probe and a real vgem dma-buf
#    registration both fail with errno 95 EOPNOTSUPP;
#  - says what it could not check (no libcuda) and exits 2 (a gate failed),
#    the documented code.
command -v gdrtrace >/dev/null 2>&1 || { echo "gdrtrace not in PATH"; exit 77; }
out=/tmp/doctor-vm.txt
gdrtrace doctor --dmabuf-source=vgem >"$out" 2>&1
rc=$?
cat "$out"
fail=0
want() { # pattern what
    grep -q -e "$1" "$out" || { echo "doctor VM check failed: $2 (no line matching: $1)"; fail=$((fail + 1)); }
}
[ "$rc" -eq 2 ] || { echo "doctor VM check failed: exit $rc, expected 2 (no NVIDIA driver: gate 1 fails)"; fail=$((fail + 1)); }
want '^  PASS  identity.rdma .*: 2 devices' "both rxe devices listed"
want '| rxe0@- .*netdev veth0 (virtual: no PCI device)' "rxe0 with its netdev veth0"
want '| rxe1@- .*netdev veth1 (virtual: no PCI device)' "rxe1 with its netdev veth1"
want '|     gid [0-9]* 0000:0000:0000:0000:0000:ffff:0a00:0001 RoCE v2 veth0' "rxe0's RoCE v2 GID for 10.0.0.1"
want '|     gid [0-9]* 0000:0000:0000:0000:0000:ffff:0a00:0002 RoCE v2 veth1' "rxe1's RoCE v2 GID for 10.0.0.2"
want '^  PASS  gate1.dev_infiniband' "/dev/infiniband with uverbs nodes"
want '^  PASS  gate1.rdma_active' "both ports ACTIVE"
want '^  PASS  gate1.verbs_reg_dmabuf' "libibverbs has ibv_reg_dmabuf_mr"
want '^  FAIL  gate1.dmabuf_probe' "the DMA-BUF probe fails on rxe"
want '| rxe0@-: unsupported (errno 95 EOPNOTSUPP' "rxe0's probe refused with EOPNOTSUPP"
want '| rxe1@-: unsupported (errno 95 EOPNOTSUPP' "rxe1's probe refused with EOPNOTSUPP"
want '^  PASS  gate2.host_reg' "host memory registers on rxe (negative control)"
if grep -q 'gate2.vgem_reg_dmabuf .*could not check' "$out"; then
    echo "note: no vgem in this VM: the real-fd registration was not tried (fd=-1 probe only)"
else
    want '^  FAIL  gate2.vgem_reg_dmabuf' "a real vgem dma-buf is refused"
    want 'ibv_reg_dmabuf_mr(rxe0, vgem fd [0-9]*, [0-9]* bytes): .*(EOPNOTSUPP)' "rxe0 refuses the vgem dma-buf with EOPNOTSUPP"
fi
want '^  FAIL  gate1.cuda_driver .*libcuda' "missing libcuda named"
want '^Could not check on this node:' "the list of what could not be checked"
gdrtrace doctor --json >/tmp/doctor-vm.json 2>/dev/null
grep -q '"dmabuf_probe_errno": 95' /tmp/doctor-vm.json || { echo "doctor VM check failed: --json lacks dmabuf_probe_errno 95"; fail=$((fail + 1)); }
[ "$fail" -eq 0 ] || { echo "doctor VM: $fail check(s) failed"; exit 1; }
echo "doctor VM: rxe devices, GIDs, netdevs and the EOPNOTSUPP DMA-BUF refusal reported"
exit 0

#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# 70-gpumem-vgem.sh — the GPU-memory validation layer (GDRTRACE_GPUMEM=1,
# plugin/gpumem, docs/gpumem.md) on the Soft-RoCE VM's real kernel objects
# (busybox sh; exit 0 pass, 77 skip, else fail).  Through the built plugin as
# NCCL loads it (gt_gpumem_vgem: dlopen, ncclNetPlugin_v10), over the fake
# libcuda (libfakecuda.so, GDRTRACE_CUDA_LIB: its cuMemAlloc_v2 memory is
# "device memory"; the VM has no CUDA):
#  - next to the VM's ACTIVE rxe ports the layer refuses to start: init
#    fails, the WARN names the port, and the recorder holds the refusal
#    (verdict BYPASSED, exit 16, quoting it);
#  - with /sys/class/infiniband hidden (a private tmpfs in a mount namespace
#    of that one run: the rule's input, nothing else), a real vgem dma-buf
#    over "GPU" memory is refused by the fd check: regMrDmaBuf fails with the
#    exporter the kernel names in /proc/self/fdinfo, and the recorder holds
#    errno 95, reason dmabuf-reg-failed and those words; verdict ERROR
#    (emulated), exit 14;
#  - the same fd with the emulated peermem allowed (GDRTRACE_ALLOW_PEERMEM=1
#    GDRTRACE_GPUMEM_PEERMEM=1): registered by the fallback, FALLBACK
#    (emulated), exit 13.  No fd can pass the check in this VM: only the
#    NVIDIA driver exports "nv_dmabuf".
P=/gt/bin/libnccl-net-gdrtrace.so
FC=/gt/bin/libfakecuda.so
command -v gt_gpumem_vgem >/dev/null 2>&1 || { echo "gt_gpumem_vgem not in PATH"; exit 77; }
# run-vm.sh builds and copies both; a missing one is a broken setup.
[ -f "$FC" ] && [ -f "$P" ] || { echo "gpumem VM check failed: no $FC or $P"; exit 1; }
EMU='(emulated: no NIC; GPU memory moved by CUDA copies)'
fail=0
bad() { echo "gpumem VM check failed: $*"; fail=$((fail + 1)); }
flat() { tr -s ' \n' '  ' <"$1"; } # reader outputs wrap at 100 columns
# In a mount namespace of this one command, /sys/class/infiniband is empty.
no_rdma() { unshare -m sh -c "mount -t tmpfs none /sys/class/infiniband && exec $*"; }
rm -rf /tmp/gm-active /tmp/gm-refused /tmp/gm-fallback
mkdir -p /tmp/gm-active /tmp/gm-refused /tmp/gm-fallback

# ---- 1. an ACTIVE rxe port: the layer refuses to start ---------------------
grep -q ACTIVE /sys/class/infiniband/rxe*/ports/1/state ||
    bad "no ACTIVE rxe port in the VM: the refusal rule cannot be checked"
env GDRTRACE_DIR=/tmp/gm-active GDRTRACE_GPUMEM=1 GDRTRACE_CUDA_LIB=$FC \
    gt_gpumem_vgem $P disabled >/tmp/gm-active.log 2>&1
rc=$?
cat /tmp/gm-active.log
[ $rc -eq 0 ] || bad "gt_gpumem_vgem disabled: exit $rc (output above)"
gdrtrace verdict /tmp/gm-active >/tmp/gm-active.txt 2>&1
rc=$?
cat /tmp/gm-active.txt
[ $rc -eq 16 ] || bad "verdict on the refused process: exit $rc, expected 16 (BYPASSED)"
flat /tmp/gm-active.txt | grep -Eq 'proc [^ ]+ BYPASSED .*refusing to emulate GPU Direct: RDMA device rxe[0-9] port 1 is ACTIVE' ||
    bad "the recorder's refusal does not name the ACTIVE rxe port"

# ---- 2. rxe hidden: a real vgem dma-buf is refused by the fd check ---------
no_rdma env GDRTRACE_DIR=/tmp/gm-refused GDRTRACE_GPUMEM=1 GDRTRACE_TRANSPORT=sock \
    GDRTRACE_CUDA_LIB=$FC gt_gpumem_vgem $P refused >/tmp/gm-refused.log 2>&1
rc=$?
cat /tmp/gm-refused.log
[ $rc -eq 0 ] || bad "gt_gpumem_vgem refused: exit $rc (output above)"
# The fd and the exporter as the kernel named them to the program.
fd=$(sed -n 's/^vgem dma-buf fd \([0-9]*\): exp_name: .*/\1/p' /tmp/gm-refused.log)
exp=$(sed -n 's/^vgem dma-buf fd [0-9]*: exp_name: //p' /tmp/gm-refused.log)
[ -n "$fd" ] && [ -n "$exp" ] || bad "no vgem dma-buf fd and exporter in the program's output"
gdrtrace verdict /tmp/gm-refused >/tmp/gm-refused.txt 2>&1
rc=$?
[ $rc -eq 14 ] || bad "verdict on the refusal: exit $rc, expected 14 (ERROR)"
flat /tmp/gm-refused.txt | grep -qF "all ERROR $EMU" ||
    bad "verdict is not ERROR $EMU: $(cat /tmp/gm-refused.txt)"
gdrtrace summary --full --events /tmp/gm-refused >/tmp/gm-refused-sum.txt 2>&1
flat /tmp/gm-refused-sum.txt >/tmp/gm-refused-flat.txt
grep -Eq 's error dev [0-9]+ comm-slot [0-9]+ errno 95 \(Operation not supported\) reason dmabuf-reg-failed' /tmp/gm-refused-flat.txt ||
    bad "summary --events has no error event with errno 95 and dmabuf-reg-failed"
grep -qF "gpumem: GPU buffer refused: fd $fd is a dma-buf exported by '$exp'" /tmp/gm-refused-flat.txt ||
    bad "the recorder's last error does not name the exporter '$exp' of fd $fd"
grep -Eq 'transport sock\+gpumem ' /tmp/gm-refused-flat.txt || bad "transport is not recorded as sock+gpumem"
[ $fail -eq 0 ] || cat /tmp/gm-refused-sum.txt

# ---- 3. the same fd with the emulated peermem: it falls back ---------------
no_rdma env GDRTRACE_DIR=/tmp/gm-fallback GDRTRACE_GPUMEM=1 GDRTRACE_ALLOW_PEERMEM=1 \
    GDRTRACE_GPUMEM_PEERMEM=1 GDRTRACE_CUDA_LIB=$FC gt_gpumem_vgem $P fallback \
    >/tmp/gm-fallback.log 2>&1
rc=$?
cat /tmp/gm-fallback.log
[ $rc -eq 0 ] || bad "gt_gpumem_vgem fallback: exit $rc (output above)"
gdrtrace verdict /tmp/gm-fallback >/tmp/gm-fallback.txt 2>&1
rc=$?
[ $rc -eq 13 ] || bad "verdict on the fallback: exit $rc, expected 13 (FALLBACK): $(cat /tmp/gm-fallback.txt)"
gdrtrace summary --full --events /tmp/gm-fallback >/tmp/gm-fallback-sum.txt 2>&1
flat /tmp/gm-fallback-sum.txt | grep -Eq 's fallback dev [0-9]+ comm-slot [0-9]+ errno 95 \(Operation not supported\) reason dmabuf-reg-failed' ||
    bad "summary --events has no fallback event with errno 95 and dmabuf-reg-failed: $(cat /tmp/gm-fallback-sum.txt)"

[ $fail -eq 0 ] || { echo "gpumem VM: $fail check(s) failed"; exit 1; }
echo "gpumem VM: refused next to ACTIVE rxe ports; vgem dma-buf ('$exp') refused by the fd check (ERROR, errno 95), registered by the emulated peermem fallback (FALLBACK)"

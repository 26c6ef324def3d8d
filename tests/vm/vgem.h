/* SPDX-License-Identifier: Apache-2.0 */
/*
 * vgem.h — a real dma-buf fd without a GPU: a vgem dumb buffer exported with
 * PRIME (the test kernel has no udmabuf; see docs in tests/vm/run-vm.sh).
 * Our own declarations of the three DRM ioctls (no libdrm headers needed).
 */
#ifndef GDRTRACE_TESTS_VM_VGEM_H
#define GDRTRACE_TESTS_VM_VGEM_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

struct gt_drm_create_dumb {
    uint32_t height, width, bpp, flags, handle, pitch;
    uint64_t size;
};
struct gt_drm_prime_handle {
    uint32_t handle, flags;
    int32_t fd;
};
struct gt_drm_map_dumb {
    uint32_t handle, pad;
    uint64_t offset;
};
#define GT_DRM_IOWR(nr, T) _IOWR('d', nr, T)
#define GT_DRM_IOCTL_MODE_CREATE_DUMB GT_DRM_IOWR(0xB2, struct gt_drm_create_dumb)
#define GT_DRM_IOCTL_MODE_MAP_DUMB GT_DRM_IOWR(0xB3, struct gt_drm_map_dumb)
#define GT_DRM_IOCTL_PRIME_HANDLE_TO_FD GT_DRM_IOWR(0x2d, struct gt_drm_prime_handle)

static inline int vgem_dmabuf(size_t size, void **cpu)
{
    int card = -1;
    char path[64];
    for (int i = 0; i < 8 && card < 0; i++) {
        snprintf(path, sizeof(path), "/dev/dri/card%d", i);
        card = open(path, O_RDWR | O_CLOEXEC);
    }
    if (card < 0) {
        printf("no /dev/dri/card*: %s\n", strerror(errno));
        return -1;
    }
    struct gt_drm_create_dumb cd = {.height = 1, .width = (uint32_t)(size / 4), .bpp = 32};
    if (ioctl(card, GT_DRM_IOCTL_MODE_CREATE_DUMB, &cd) != 0) {
        printf("CREATE_DUMB: %s\n", strerror(errno));
        return -1;
    }
    struct gt_drm_prime_handle ph = {.handle = cd.handle, .flags = O_CLOEXEC | O_RDWR, .fd = -1};
    if (ioctl(card, GT_DRM_IOCTL_PRIME_HANDLE_TO_FD, &ph) != 0) {
        printf("PRIME_HANDLE_TO_FD: %s\n", strerror(errno));
        return -1;
    }
    *cpu = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, ph.fd, 0);
    if (*cpu == MAP_FAILED)
        *cpu = NULL;
    return ph.fd;
}

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fake_ibverbs.c — a stand-in libibverbs (libfakeibverbs.so) for the dl seam
 * of common/dl/gt_ibv.c in a process that loads the built plugin, where a
 * test cannot call gt_ibv_install(): GDRTRACE_IBVERBS_LIB points at it.  It
 * exports every core symbol at IBVERBS_1.1 (fake_ibverbs.map) and has no
 * device: ibv_get_device_list returns an empty list, so ib refuses the
 * process as on a host without RDMA.  FAKEIBV_CRASH=devices makes the device
 * enumeration die of SIGSEGV instead (a broken provider), for the
 * post-mortem test (postmortem.sh).  Test-only; never installed.
 *
 * The signatures are verbs.h's in shape only: gt_ibv calls only
 * ibv_get_device_list and ibv_free_device_list here (no device is ever
 * returned), and the rest fail.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

EXPORT void **ibv_get_device_list(int *num)
{
    const char *c = getenv("FAKEIBV_CRASH");
    if (c && strcmp(c, "devices") == 0)
        raise(SIGSEGV);
    if (num)
        *num = 0;
    return calloc(1, sizeof(void *));
}

EXPORT void ibv_free_device_list(void **list)
{
    free(list);
}

EXPORT const char *ibv_get_device_name(void *d)
{
    (void)d;
    return "fake";
}

EXPORT unsigned long long ibv_get_device_guid(void *d)
{
    (void)d;
    return 0;
}

#define FAIL_PTR(name)                                                                             \
    EXPORT void *name(void *a)                                                                     \
    {                                                                                              \
        (void)a;                                                                                   \
        errno = ENODEV;                                                                            \
        return NULL;                                                                               \
    }
#define FAIL_INT(name)                                                                             \
    EXPORT int name(void *a)                                                                       \
    {                                                                                              \
        (void)a;                                                                                   \
        return ENODEV;                                                                             \
    }
FAIL_PTR(ibv_open_device)
FAIL_INT(ibv_close_device)
FAIL_INT(ibv_query_device)
FAIL_INT(ibv_query_port)
FAIL_INT(ibv_query_gid)
FAIL_PTR(ibv_alloc_pd)
FAIL_INT(ibv_dealloc_pd)
FAIL_PTR(ibv_reg_mr)
FAIL_INT(ibv_dereg_mr)
FAIL_PTR(ibv_create_cq)
FAIL_INT(ibv_destroy_cq)
FAIL_PTR(ibv_create_qp)
FAIL_INT(ibv_modify_qp)
FAIL_INT(ibv_destroy_qp)
FAIL_INT(ibv_fork_init)
FAIL_INT(ibv_get_async_event)

EXPORT void ibv_ack_async_event(void *e)
{
    (void)e;
}

EXPORT const char *ibv_event_type_str(int t)
{
    (void)t;
    return "fake";
}

EXPORT const char *ibv_wc_status_str(int status)
{
    (void)status;
    return "fake";
}

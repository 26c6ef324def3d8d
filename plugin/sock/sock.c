/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sock.c — gt_sock_ops: NCCL-style point-to-point messaging over TCP, host
 * memory only.  Owns the ops table, memory registration (host memory only,
 * nothing to pin) and this overview; the work is done in
 *   sock_conn.c  devices, listen/connect/accept, the hello, comm lifetime;
 *   sock_ctrl.c  the control stream: CTS and DATA headers, in and out;
 *   sock_data.c  requests, the payload queue, progress, isend/irecv/test;
 *   sock_util.c  the connection handle codec and interface selection;
 * with sock_internal.h as their private header.
 *
 * sock has one mode, the shape of NCCL's Socket transport without helper
 * threads: one TCP stream per connection carries everything (hello, CTS,
 * DATA headers and the payloads after them), receives are single (maxRecvs
 * 1) so sends go out eagerly, and test() moves bytes only up to the request
 * it was given.  The GPU measurements chose each of these over the
 * alternatives the transport once had (data sockets, grouped receives,
 * progress of everything, waiting for a writable socket); their variables
 * are retired (docs/configuration.md) and docs/results/ keeps the runs.
 *
 * Wire protocol (host byte order on the socket after the hello: both ends
 * run this build, which the hello's version pins; the handle and the hello
 * are byte-order neutral):
 *   hello   (connector -> acceptor, once): plugin/oob's 32-byte hello
 *           (magic GTH1, version, the handle's nonce, a random connection
 *           id), nothing after it.  The listener (plugin/oob) holds
 *           connections in its pending table until their hello is valid.
 *   CTS     (receiver -> sender, one per irecv until the sender went eager):
 *           wire_hdr{type CTS, sub = 1, slot, flags EAGER_OK} + one
 *           wire_cts_ent{tag, size}.  "Clear to send" into that posted
 *           receive, and the receiver's promise to post only single receives.
 *   DATA    (sender -> receiver, one per isend): wire_hdr{type DATA, sub 0,
 *           slot, flags, size, tag}, followed by the payload itself
 *           (unless flagged truncated).
 *
 * Eager sends (as NCCL's own Socket transport): until the first CTS arrives
 * an isend has nothing to go by and returns a NULL request (NCCL retries);
 * from then on a send with no CTS to match goes out without one (DATA with
 * FLAG_EAGER) and waits in the kernel's socket buffers, so the sender's
 * progress no longer depends on the receiver having posted.  Once the
 * receiver has seen an eager DATA it stops sending CTS altogether.
 *
 * The invariants are numbered once for the transport and written where they
 * apply: 1 (one stream per connection) and 3 (hello) in sock_conn.c; 1b
 * (receiver), 2, 2a, 3 and 5 in sock_ctrl.c; 1a, 1b (sender), 4, 4a, 4b and
 * 4c in sock_data.c.
 */
#include "plugin/sock/sock.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "common/log.h"
#include "plugin/sock/sock_internal.h"

struct sock_mr {
    uint32_t magic;
    void *data;
    size_t size;
};
#define MR_MAGIC 0x4d52534bu

/* ---- registration -------------------------------------------------------- */

static gt_result sock_reg_mr(void *comm, void *data, size_t size, int type, void **mhandle,
                             struct gt_reg_report *report)
{
    if (report) {
        report->asked = gt_asked_of(type, -1);
        report->method = GT_METHOD_FAILED;
    }
    if (!comm || !mhandle)
        return gt_sock_bad_arg(__func__);
    *mhandle = NULL;
    if (type != GT_PTR_HOST) {
        int reason = type == GT_PTR_CUDA ? GT_REASON_HOST_MEMORY_ONLY : GT_REASON_BAD_ARGUMENT;
        if (report)
            report->reason = reason;
        return SOCK_FAIL(GT_INTERNAL_ERROR, reason, 0,
                         "sock: regMr of %zu bytes at %p with type %d refused: the sock "
                         "transport moves host memory only (ptrSupport = HOST)",
                         size, data, type);
    }
    struct sock_mr *mr = malloc(sizeof(*mr));
    if (!mr) {
        if (report) {
            report->reason = GT_REASON_HOST_REG_FAILED;
            report->err = ENOMEM;
        }
        return SOCK_FAIL(GT_SYSTEM_ERROR, GT_REASON_HOST_REG_FAILED, ENOMEM,
                         "sock: regMr: out of memory");
    }
    *mr = (struct sock_mr){.magic = MR_MAGIC, .data = data, .size = size};
    *mhandle = mr;
    if (report)
        report->method = GT_METHOD_HOST;
    return GT_OK;
}

static gt_result sock_reg_mr_dmabuf(void *comm, void *data, size_t size, int type, uint64_t offset,
                                    int fd, void **mhandle, struct gt_reg_report *report)
{
    (void)comm;
    if (mhandle)
        *mhandle = NULL;
    if (report) {
        report->asked = gt_asked_of(type, fd);
        report->method = GT_METHOD_FAILED;
        report->reason = GT_REASON_HOST_MEMORY_ONLY;
    }
    return SOCK_FAIL(GT_INTERNAL_ERROR, GT_REASON_HOST_MEMORY_ONLY, 0,
                     "sock: regMrDmaBuf of %zu bytes at %p (type %d, fd %d, offset %llu) "
                     "refused: the sock transport moves host memory only",
                     size, data, type, fd, (unsigned long long)offset);
}

static gt_result sock_dereg_mr(void *comm, void *mhandle)
{
    (void)comm;
    struct sock_mr *mr = mhandle;
    if (!mr)
        return GT_OK;
    if (mr->magic != MR_MAGIC) {
        GT_WARN("sock: deregMr: %p is not a sock memory handle", mhandle);
        return gt_sock_bad_arg(__func__);
    }
    mr->magic = 0;
    free(mr);
    return GT_OK;
}

static gt_result sock_get_device_mr(void *comm, void *mhandle, void **dptr_mhandle)
{
    (void)comm;
    (void)mhandle;
    /* netDeviceType is HOST: there is no device-side handle; NULL says so. */
    if (dptr_mhandle)
        *dptr_mhandle = NULL;
    return GT_OK;
}

static gt_result sock_irecv_consumed(void *recv_comm, int n, void *request)
{
    (void)n;
    (void)request;
    /* Only device-offloaded (UNPACK) receives need this; ours are HOST. */
    return recv_comm ? GT_OK : GT_INVALID_ARGUMENT;
}

static gt_result sock_set_net_attr(void *ctx, void *net_attr)
{
    (void)net_attr;
    /* Flow/peer hints do not change how TCP sockets are used here. */
    return ctx ? GT_OK : GT_INVALID_ARGUMENT;
}

const struct gt_net_ops gt_sock_ops = {
    .name = "sock",
    .init = gt_sock_init,
    .devices = gt_sock_devices,
    .get_properties = gt_sock_get_properties,
    .listen = gt_sock_listen,
    .connect = gt_sock_connect,
    .accept = gt_sock_accept,
    .reg_mr = sock_reg_mr,
    .reg_mr_dmabuf = sock_reg_mr_dmabuf,
    .dereg_mr = sock_dereg_mr,
    .isend = gt_sock_isend,
    .irecv = gt_sock_irecv,
    .iflush = gt_sock_iflush,
    .test = gt_sock_test,
    .close_send = gt_sock_close_comm,
    .close_recv = gt_sock_close_comm,
    .close_listen = gt_sock_close_listen,
    .get_device_mr = sock_get_device_mr,
    .irecv_consumed = sock_irecv_consumed,
    .finalize = gt_sock_finalize,
    .set_net_attr = sock_set_net_attr,
    .get_probe = gt_sock_get_probe,
};

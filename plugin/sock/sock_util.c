/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sock_util.c — the sock transport's connection handle: plugin/oob's codec
 * with sock's magic ('GTSK') and version.  Decode never trusts a byte of the
 * handle (it may come from a corrupted bootstrap).
 */
#include "plugin/sock/sock_internal.h"

void gt_sock_handle_encode(const struct gt_sock_handle_info *info, void *handle)
{
    gt_oob_handle_encode(GT_SOCK_HANDLE_MAGIC, GT_SOCK_HANDLE_VERSION, &info->addr, info->nonce,
                         handle);
}

gt_result gt_sock_handle_decode(const void *handle, size_t len, struct gt_sock_handle_info *info,
                                char *why, size_t whylen)
{
    return gt_oob_handle_decode(handle, len, GT_SOCK_HANDLE_MAGIC, GT_SOCK_HANDLE_VERSION, "sock",
                                &info->addr, &info->nonce, why, whylen);
}

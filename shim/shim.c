/* SPDX-License-Identifier: Apache-2.0 */
/* shim.c — placeholder: forwards untraced until the recorder lands (issue 3). */
#include "shim/shim.h"

void gt_shim_set_abi_version(int abi_version)
{
    (void)abi_version;
}

const struct gt_net_ops *gt_shim_wrap(const struct gt_net_ops *inner, const char *transport_why,
                                      gt_logger_fn logger)
{
    (void)transport_why;
    (void)logger;
    return inner;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sock.h — the TCP transport (host memory only), one gt_net_ops table.
 *
 * gt_sock_ops implements every slot of common/gt_net.h over real TCP sockets:
 * devices are the usable network interfaces (GDRTRACE_SOCKET_IFNAME selects
 * them), each connection is one TCP socket, receives are single (maxRecvs 1,
 * eager sends), and all progress is made from test() (no helper threads).
 * plugin/sock/sock.c gives the wire protocol and says which file owns what;
 * each file states the invariants it keeps.
 */
#ifndef GDRTRACE_SOCK_H
#define GDRTRACE_SOCK_H

#include "common/gt_net.h"

extern const struct gt_net_ops gt_sock_ops;

#endif

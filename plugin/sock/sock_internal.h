/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sock_internal.h — the sock transport's private pieces, visible to its unit
 * tests: the connection handle codec, interface selection and a comm's
 * counters.  Nothing here is part of gt_net; only plugin/sock/ and
 * tests/unit/test_sock*.c include it.
 *
 * Handle layout (GT_NET_HANDLE_MAXSIZE = 128 bytes, multi-byte fields in
 * network byte order so a handle means the same on every host):
 *    0  u32 magic  'GTSK'          4  u16 version (GT_SOCK_HANDLE_VERSION)
 *    6  u16 family (4 or 6)        8  u16 port
 *   10  u16 reserved (0)          12  u8  addr[16] (IPv4 in the first 4)
 *   28  u64 nonce (identifies the listen comm; stray connections are refused)
 *   36  u32 checksum: FNV-1a over bytes 0..35
 *   40..63 zero (reserved, covered by no checksum but required zero)
 *   64  u64 connect-in-progress id, written by connect() between its calls
 *       (NCCL gives connect no other place to keep state); never dereferenced:
 *       it is looked up in a registry, so a corrupt value is an error, not a crash.
 */
#ifndef GDRTRACE_SOCK_INTERNAL_H
#define GDRTRACE_SOCK_INTERNAL_H

#include <net/if.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "common/gt_net.h"

#define GT_SOCK_HANDLE_MAGIC 0x4754534bu /* "GTSK" */
#define GT_SOCK_HANDLE_VERSION 1
#define GT_SOCK_HANDLE_MINLEN 40 /* bytes that must be present to decode */
#define GT_SOCK_HANDLE_STAGE_OFF 64
#define GT_SOCK_PROTO_VERSION 2 /* the hello's version; 2: eager sends (unchanged since) */

#define GT_SOCK_MAX_DEVS 32
#define GT_SOCK_DEFAULT_SPEED 10000

union gt_sock_addr {
    struct sockaddr sa;
    struct sockaddr_in in4;
    struct sockaddr_in6 in6;
};

struct gt_sock_handle_info {
    union gt_sock_addr addr; /* listen address and port */
    uint64_t nonce;
};

/* Writes the whole 128-byte handle (stage id zero). */
void gt_sock_handle_encode(const struct gt_sock_handle_info *info, void *handle);
/* Validates `len` bytes of a handle.  GT_OK, or GT_INVALID_ARGUMENT with a
 * one-line reason in why[] (truncated, bad magic, version, family, checksum...). */
gt_result gt_sock_handle_decode(const void *handle, size_t len, struct gt_sock_handle_info *info,
                                char *why, size_t whylen);
/* "a.b.c.d:port" or "[v6]:port" into buf; returns buf. */
const char *gt_sock_addr_str(const union gt_sock_addr *a, char *buf, size_t len);

/* One candidate interface address. */
struct gt_sock_if {
    char name[IF_NAMESIZE];
    union gt_sock_addr addr;
    int loopback;
};

/* 1 when `name` is selected by spec, in the spirit of NCCL_SOCKET_IFNAME:
 * a comma list of prefixes; a leading '^' excludes instead of includes; a
 * leading '=' (after the optional '^') requires exact names. */
int gt_sock_if_match(const char *spec, const char *name);
/* Picks devices from cands: one per interface name (IPv4 preferred over IPv6,
 * IPv6 link-local skipped; family AF_INET/AF_INET6 keeps only that family,
 * 0 any).  With spec: those it selects.  Without: all but loopback and
 * docker*; else docker*; else loopback.  Returns the count. */
int gt_sock_if_select(const struct gt_sock_if *cands, int ncand, const char *spec, int family,
                      struct gt_sock_if *out, int maxout);
/* The system's up interfaces with an IPv4/IPv6 address (getifaddrs). */
int gt_sock_if_system(struct gt_sock_if *out, int maxout);

/* What a comm did, logged at INFO (NET) when it closes: enough to tell a
 * transport that moves data in few large syscalls from one that spins or
 * waits (stalls: DATA that arrived before its receive was posted). */
struct gt_sock_stats {
    uint64_t msgs, bytes, eager;
    uint64_t io_calls, io_bytes, would_block; /* payload send()/recv()/sendmsg() calls */
    uint64_t ctrl_reads, ctrl_bytes; /* recv()s on the control socket, and what they read */
    uint64_t ctrl_writes;            /* send()s of headers alone, not fused with a payload */
    uint64_t progress, stalls;
};

/* A copy of a send or receive comm's counters so far. */
void gt_sock_comm_stats(const void *comm, struct gt_sock_stats *out);

#endif

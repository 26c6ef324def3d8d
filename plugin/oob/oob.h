/* SPDX-License-Identifier: Apache-2.0 */
/*
 * oob.h — the out-of-band TCP connection setup shared by the sock and ib
 * transports: the listen handle, the nonce, the hello, exact non-blocking
 * transfers with deadlines, interface selection, and a listener whose table
 * of pending connections survives hostile or careless clients.
 *
 * Who can reach the port: anyone who can route to the chosen interface's
 * address (we never bind INADDR_ANY).  So a listener treats every connection
 * as a stranger until it has sent a complete, valid hello carrying the
 * handle's 64-bit nonce (which only the NCCL bootstrap carried) plus the
 * transport's setup message, which the transport's check_body() accepted.
 *
 * Contract of a listener (struct gt_oob_listener):
 *  - Threads: one listener is used by one thread at a time (NCCL calls
 *    accept and closeListen of one listen comm from one thread).  The module
 *    has no global state but the once-read timeout.
 *  - Sockets: the listener owns its listening socket and every pending
 *    socket.  gt_oob_accept() transfers one socket to the caller (conn->fd):
 *    from then on the caller closes it.  gt_oob_listen_close() closes the
 *    listening socket and every pending one (abortively: RST).
 *  - Pending table: up to GT_OOB_MAX_PENDING connections that have not yet
 *    sent a complete valid hello.  Each has a deadline, accept time +
 *    gt_oob_timeout_ms() (GDRTRACE_OOB_TIMEOUT_MS, default 10 s).  A pending
 *    connection that closes, errs, sends bytes that are not a valid hello for
 *    this listener (magic, version, nonce, checksum, body size, check_body),
 *    repeats a connection id already seen, or stays incomplete past its
 *    deadline is dropped and logged: a WARN the first time per peer address
 *    and listener, counted afterwards (the count is logged at close).  When
 *    the table is full, a new connection evicts the oldest pending one that
 *    has not completed a valid hello.
 *  - gt_oob_accept() never blocks and never returns a pre-handshake failure:
 *    1 = a connection is authenticated (its fd, hello and body are in *conn),
 *    0 = none yet (call again), -1 = the listening socket itself failed
 *    (errno set, e.g. EBADF); running out of file descriptors is not an
 *    error (logged once, retried on the next call).
 * Wire format of the hello (GT_OOB_HELLO_BYTES, big-endian fields):
 *    0 u32 magic (the transport's)   4 u16 version   6 u16 body_len
 *    8 u64 nonce (the handle's)     16 u64 conn_id (connector's random id)
 *   24 u32 reserved (0)             28 u32 FNV-1a over bytes 0..27
 * followed by exactly body_len bytes of the transport's setup message.
 * Handle layout (GT_NET_HANDLE_MAXSIZE bytes, big-endian fields):
 *    0 u32 magic   4 u16 version   6 u16 family (4|6)   8 u16 port
 *   10 u16 0      12 u8 addr[16]  28 u64 nonce        36 u32 FNV-1a of 0..35
 *   40..63 zero; 64..127 the connector's private state (GT_OOB_HANDLE_PRIVATE).
 */
#ifndef GDRTRACE_OOB_OOB_H
#define GDRTRACE_OOB_OOB_H

#include <net/if.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "common/gt_net.h"
#include "common/settings.h"

#define GT_OOB_HELLO_BYTES 32
#define GT_OOB_BODY_MAX 512      /* largest transport setup message after the hello */
#define GT_OOB_MAX_PENDING 64    /* unauthenticated connections per listener */
#define GT_OOB_HANDLE_MINLEN 40  /* handle bytes that must be present to decode */
#define GT_OOB_HANDLE_PRIVATE 64 /* first handle byte the connector may use freely */
#define GT_OOB_TIMEOUT_MS_DEFAULT 10000

union gt_oob_addr {
    struct sockaddr sa;
    struct sockaddr_in in4;
    struct sockaddr_in6 in6;
};

/* ---- handle ------------------------------------------------------------ */

/*! gt_oob_handle_encode() : writes the whole handle (bytes from
 *  GT_OOB_HANDLE_PRIVATE on zeroed). */
void gt_oob_handle_encode(uint32_t magic, uint16_t version, const union gt_oob_addr *addr,
                          uint64_t nonce, void *handle);
/*! gt_oob_handle_decode() : validates `len` bytes of a handle written by
 *  gt_oob_handle_encode() with this magic/version.  GT_OK, or
 *  GT_INVALID_ARGUMENT with a one-line reason in why[] naming `what`
 *  ("sock", "ib").  Never trusts a byte: the handle crossed NCCL's bootstrap. */
gt_result gt_oob_handle_decode(const void *handle, size_t len, uint32_t magic, uint16_t version,
                               const char *what, union gt_oob_addr *addr, uint64_t *nonce,
                               char *why, size_t whylen);

/* ---- hello --------------------------------------------------------------- */

struct gt_oob_hello {
    uint32_t magic;
    uint16_t version;
    uint16_t body_len;
    uint64_t nonce;
    uint64_t conn_id;
};

/*! gt_oob_hello_encode() : the 32 wire bytes of h (checksum added). */
void gt_oob_hello_encode(const struct gt_oob_hello *h, uint8_t out[GT_OOB_HELLO_BYTES]);
/*! gt_oob_hello_decode() : parses and checks the checksum and reserved
 *  bytes only.  NULL on success, else a constant reason. */
const char *gt_oob_hello_decode(const uint8_t in[GT_OOB_HELLO_BYTES], struct gt_oob_hello *h);

/* What a listener expects from its connectors. */
struct gt_oob_proto {
    const char *name; /* log prefix: "sock", "ib" */
    uint32_t magic;
    uint16_t version;
    uint16_t body_len; /* exact size of the setup message after the hello, <= GT_OOB_BODY_MAX */
    /* Validates the setup message of a hello that passed every other check
     * (h->nonce is the listener's); NULL to accept, else a constant reason.
     * NULL pointer: every body is accepted. */
    const char *(*check_body)(const void *body, size_t len, const struct gt_oob_hello *h);
    /* Called on every socket before listen() (listening = 1) or right after
     * accept (0), e.g. to size buffers or set TCP_NODELAY; may be NULL. */
    void (*prepare_fd)(int fd, int listening);
};

/*! gt_oob_parse() : the pending-connection parser, pure: given the first
 *  `got` bytes a stranger sent, NULL when they are a valid prefix (*need =
 *  the total bytes the hello and body take, GT_OOB_HELLO_BYTES until the
 *  hello is complete) or a constant reason to drop the connection.  When
 *  got == *need the hello is complete and valid, and *h holds it. */
const char *gt_oob_parse(const struct gt_oob_proto *p, uint64_t nonce, const uint8_t *buf,
                         size_t got, struct gt_oob_hello *h, size_t *need);

/* ---- exact transfers, deadlines, connecting ------------------------------ */

/*! gt_oob_now_ms() : CLOCK_MONOTONIC in milliseconds. */
uint64_t gt_oob_now_ms(void);
/*! gt_oob_timeout_ms() : GDRTRACE_OOB_TIMEOUT_MS (100 … 3600000, default
 *  GT_OOB_TIMEOUT_MS_DEFAULT), read once per process. */
int gt_oob_timeout_ms(void);
/*! gt_oob_rand64() : a non-zero random 64-bit value (getrandom, with a
 *  clock/pid fallback) for nonces and connection ids. */
uint64_t gt_oob_rand64(void);

/*! gt_oob_xfer() : non-blocking transfer of buf[*off..len) (sending: send
 *  with MSG_NOSIGNAL; else recv), advancing *off.  1 = all done, 0 = call
 *  again, -1 = failed with errno (ECONNRESET for EOF, ETIMEDOUT when
 *  deadline_ms != 0 has passed with bytes still to move). */
int gt_oob_xfer(int fd, void *buf, size_t len, size_t *off, int sending, uint64_t deadline_ms);

/*! gt_oob_connect_start() : a non-blocking, close-on-exec TCP socket
 *  connecting to addr (prepare(fd, 0) called first when not NULL).  The fd,
 *  or -1 with errno. */
int gt_oob_connect_start(const union gt_oob_addr *addr, void (*prepare)(int fd, int listening));
/*! gt_oob_connect_poll() : 1 = connected, 0 = still connecting, -1 = failed
 *  (errno = the connection's error). */
int gt_oob_connect_poll(int fd);

/*! gt_oob_addr_str() : "a.b.c.d:port" or "[v6]:port" into buf; returns buf. */
const char *gt_oob_addr_str(const union gt_oob_addr *a, char *buf, size_t len);
socklen_t gt_oob_addr_len(const union gt_oob_addr *a);

/* ---- listener ------------------------------------------------------------ */

struct gt_oob_pending {
    int fd;
    uint64_t since_ms, deadline_ms;
    size_t got, need;
    union gt_oob_addr peer;
    uint8_t buf[GT_OOB_HELLO_BYTES + GT_OOB_BODY_MAX];
};

#define GT_OOB_LOGGED_PEERS 32
#define GT_OOB_SEEN_IDS 64

struct gt_oob_listener {
    int fd;
    uint64_t nonce;
    union gt_oob_addr addr; /* bound address and port */
    struct gt_oob_proto proto;
    int npend;
    struct gt_oob_pending pend[GT_OOB_MAX_PENDING]; /* oldest first */
    uint64_t seen[GT_OOB_SEEN_IDS];                 /* conn ids handed out (ring) */
    int nseen;
    union gt_oob_addr logged[GT_OOB_LOGGED_PEERS]; /* peers already WARNed about (ring) */
    int nlogged;
    int fd_warned; /* EMFILE & co. logged once */
    uint64_t dropped, evicted;
};

/* An authenticated connection, handed to the transport. */
struct gt_oob_conn {
    int fd;
    struct gt_oob_hello hello;
    uint8_t body[GT_OOB_BODY_MAX]; /* hello.body_len bytes, accepted by check_body */
    union gt_oob_addr peer;
    uint64_t deadline_ms; /* the connection's setup deadline, for the transport's next steps */
};

/*! gt_oob_listen() : binds a listening socket to addr (its port is
 *  ignored: an ephemeral one is chosen), draws the nonce and copies proto.
 *  GT_OK, or GT_SYSTEM_ERROR with a WARN naming the address and errno set
 *  (the transport describes the failure, gt_net.h F1). */
gt_result gt_oob_listen(struct gt_oob_listener *l, const union gt_oob_addr *addr,
                        const struct gt_oob_proto *proto);
/*! gt_oob_accept() : see the contract above. */
int gt_oob_accept(struct gt_oob_listener *l, struct gt_oob_conn *conn);
/*! gt_oob_listen_close() : closes everything the listener owns. */
void gt_oob_listen_close(struct gt_oob_listener *l);

/* ---- interfaces ---------------------------------------------------------- */

struct gt_oob_if {
    char name[IF_NAMESIZE];
    union gt_oob_addr addr;
    int loopback;
};

/*! gt_oob_if_system() : the system's up interfaces with an IPv4/IPv6
 *  address (getifaddrs); the count, or -1 with errno. */
int gt_oob_if_system(struct gt_oob_if *out, int maxout);
/*! gt_oob_if_match() : 1 when `name` is selected by spec, with
 *  NCCL_SOCKET_IFNAME's meaning: a comma list of prefixes ("name:port"
 *  allowed, the port selects nothing); a leading '^' excludes instead; a
 *  leading '=' (after the optional '^') requires exact names; a list without
 *  entries matches every name (so "^," excludes all). */
int gt_oob_if_match(const char *spec, const char *name);
/*! gt_oob_if_select() : sock's policy (NCCL_SOCKET_IFNAME): one entry per
 *  interface name (IPv4 preferred over IPv6, IPv6 link-local skipped;
 *  family AF_INET/AF_INET6 keeps only that family, 0 any).  With spec:
 *  those it selects.  Without, NCCL's order: ib*; else all but docker*,
 *  loopback and virbr*; else docker*; else loopback; else virbr*.  Returns
 *  the count. */
int gt_oob_if_select(const struct gt_oob_if *cands, int ncand, const char *spec, int family,
                     struct gt_oob_if *out, int maxout);
/* The interface settings in force (issue 18). */
struct gt_oob_if_settings {
    char spec[256]; /* the list, when has_spec */
    int has_spec;
    int family; /* 0 any, AF_INET, AF_INET6 */
    struct gt_setting s_ifname, s_family;
};
/*! gt_oob_if_settings_read() : NCCL_SOCKET_IFNAME (ignored, as by NCCL, when
 *  one character or less) and NCCL_SOCKET_FAMILY (AF_INET, AF_INET6, else
 *  any), each overridden by its twin when `twin` names the ifname twin
 *  (sock: "GDRTRACE_SOCKET_IFNAME", with GDRTRACE_SOCKET_FAMILY); NULL: the
 *  NCCL variables only (ib's out-of-band address). */
void gt_oob_if_settings_read(struct gt_oob_if_settings *s, const char *twin, int warn);
/*! gt_oob_if_first_ipv4() : ib's policy (GDRTRACE_IB_OOB_IF): the first IPv4
 *  interface whose name starts with `prefix`, or without prefix the first
 *  non-loopback one.  1 with *out filled, 0 when none (the caller falls
 *  back to loopback). */
int gt_oob_if_first_ipv4(const struct gt_oob_if *cands, int ncand, const char *prefix,
                         struct gt_oob_if *out);

#endif

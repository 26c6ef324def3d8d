/* SPDX-License-Identifier: Apache-2.0 */
/*
 * oob.c — the shared out-of-band setup: handle and hello codecs, exact
 * non-blocking transfers, and the listener's pending-connection table (the
 * contract is in oob.h).
 *
 * Invariants of a listener:
 *  1. pend[0..npend) are in accept order (oldest first); each owns its fd.
 *  2. An entry leaves the table only by being returned by gt_oob_accept()
 *     (the fd changes owner) or dropped (the fd is closed): nothing a
 *     stranger sends can make gt_oob_accept() report an error or wait.
 *  3. Every byte read is checked before the next is trusted: the 32-byte
 *     hello (checksum, magic, version, nonce, body size) before the body is
 *     read, the body by the transport's check before the fd is handed out.
 *  4. The work of one call is bounded: at most ACCEPT_BURST new connections
 *     and one recv() per pending connection.
 */
#include "plugin/oob/oob.h"

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "common/env.h"
#include "common/log.h"

#define ACCEPT_BURST 128

/* ---- byte codecs ---------------------------------------------------------- */

static uint32_t fnv1a(const uint8_t *p, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 16777619u;
    return h;
}

static void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}
static void put32(uint8_t *p, uint32_t v)
{
    put16(p, (uint16_t)(v >> 16));
    put16(p + 2, (uint16_t)v);
}
static void put64(uint8_t *p, uint64_t v)
{
    put32(p, (uint32_t)(v >> 32));
    put32(p + 4, (uint32_t)v);
}
static uint16_t get16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}
static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)get16(p) << 16 | get16(p + 2);
}
static uint64_t get64(const uint8_t *p)
{
    return (uint64_t)get32(p) << 32 | get32(p + 4);
}

/* ---- handle --------------------------------------------------------------- */

void gt_oob_handle_encode(uint32_t magic, uint16_t version, const union gt_oob_addr *addr,
                          uint64_t nonce, void *handle)
{
    uint8_t *h = handle;
    memset(h, 0, GT_NET_HANDLE_MAXSIZE);
    put32(h, magic);
    put16(h + 4, version);
    if (addr->sa.sa_family == AF_INET6) {
        put16(h + 6, 6);
        put16(h + 8, ntohs(addr->in6.sin6_port));
        memcpy(h + 12, &addr->in6.sin6_addr, 16);
    } else {
        put16(h + 6, 4);
        put16(h + 8, ntohs(addr->in4.sin_port));
        memcpy(h + 12, &addr->in4.sin_addr, 4);
    }
    put64(h + 28, nonce);
    put32(h + 36, fnv1a(h, 36));
}

gt_result gt_oob_handle_decode(const void *handle, size_t len, uint32_t magic, uint16_t version,
                               const char *what, union gt_oob_addr *addr, uint64_t *nonce,
                               char *why, size_t whylen)
{
    const uint8_t *h = handle;
    if (!h) {
        snprintf(why, whylen, "handle is NULL");
        return GT_INVALID_ARGUMENT;
    }
    if (len < GT_OOB_HANDLE_MINLEN) {
        snprintf(why, whylen, "handle truncated: %zu bytes, need at least %d", len,
                 GT_OOB_HANDLE_MINLEN);
        return GT_INVALID_ARGUMENT;
    }
    uint32_t m = get32(h);
    if (m != magic) {
        char want[5] = {(char)(magic >> 24), (char)(magic >> 16), (char)(magic >> 8), (char)magic,
                        0};
        snprintf(why, whylen,
                 "bad handle magic 0x%08x (want 0x%08x '%s'): not a gdrtrace %s handle", m, magic,
                 want, what);
        return GT_INVALID_ARGUMENT;
    }
    uint16_t ver = get16(h + 4);
    if (ver != version) {
        snprintf(why, whylen, "handle version %u, this build speaks %u (mixed plugin versions?)",
                 ver, version);
        return GT_INVALID_ARGUMENT;
    }
    uint32_t sum = get32(h + 36), want = fnv1a(h, 36);
    if (sum != want) {
        snprintf(why, whylen, "handle checksum 0x%08x != 0x%08x: corrupted or truncated", sum,
                 want);
        return GT_INVALID_ARGUMENT;
    }
    uint16_t fam = get16(h + 6), port = get16(h + 8);
    if (fam != 4 && fam != 6) {
        snprintf(why, whylen, "handle address family %u (want 4 or 6)", fam);
        return GT_INVALID_ARGUMENT;
    }
    if (port == 0 || get16(h + 10) != 0) {
        snprintf(why, whylen, "handle port %u / reserved 0x%04x invalid", port, get16(h + 10));
        return GT_INVALID_ARGUMENT;
    }
    memset(addr, 0, sizeof(*addr));
    if (fam == 4) {
        addr->in4.sin_family = AF_INET;
        addr->in4.sin_port = htons(port);
        memcpy(&addr->in4.sin_addr, h + 12, 4);
    } else {
        addr->in6.sin6_family = AF_INET6;
        addr->in6.sin6_port = htons(port);
        memcpy(&addr->in6.sin6_addr, h + 12, 16);
    }
    *nonce = get64(h + 28);
    return GT_OK;
}

/* ---- hello ---------------------------------------------------------------- */

void gt_oob_hello_encode(const struct gt_oob_hello *h, uint8_t out[GT_OOB_HELLO_BYTES])
{
    memset(out, 0, GT_OOB_HELLO_BYTES);
    put32(out, h->magic);
    put16(out + 4, h->version);
    put16(out + 6, h->body_len);
    put64(out + 8, h->nonce);
    put64(out + 16, h->conn_id);
    put32(out + 28, fnv1a(out, 28));
}

const char *gt_oob_hello_decode(const uint8_t in[GT_OOB_HELLO_BYTES], struct gt_oob_hello *h)
{
    if (get32(in + 28) != fnv1a(in, 28))
        return "bad hello checksum (not a gdrtrace peer, or corrupted)";
    if (get32(in + 24) != 0)
        return "reserved hello bytes set";
    h->magic = get32(in);
    h->version = get16(in + 4);
    h->body_len = get16(in + 6);
    h->nonce = get64(in + 8);
    h->conn_id = get64(in + 16);
    return NULL;
}

const char *gt_oob_parse(const struct gt_oob_proto *p, uint64_t nonce, const uint8_t *buf,
                         size_t got, struct gt_oob_hello *h, size_t *need)
{
    *need = GT_OOB_HELLO_BYTES;
    /* The magic first: obvious strangers (an HTTP request, a banner) are
     * refused at their first bytes, with the clearest reason. */
    uint8_t m[4];
    put32(m, p->magic);
    if (memcmp(buf, m, got < 4 ? got : 4) != 0)
        return "bad magic (not a gdrtrace peer)";
    if (got < GT_OOB_HELLO_BYTES)
        return NULL;
    const char *bad = gt_oob_hello_decode(buf, h);
    if (bad)
        return bad;
    if (h->version != p->version)
        return "protocol version mismatch (mixed plugin versions?)";
    if (h->nonce != nonce)
        return "nonce mismatch (a stale handle, or not our peer)";
    if (h->body_len != p->body_len)
        return "setup message size mismatch";
    if (h->conn_id == 0)
        return "connection id 0";
    *need = GT_OOB_HELLO_BYTES + (size_t)p->body_len;
    if (got < *need)
        return NULL;
    if (got > *need)
        return "bytes after the setup message";
    return p->check_body ? p->check_body(buf + GT_OOB_HELLO_BYTES, p->body_len, h) : NULL;
}

/* ---- small helpers ---------------------------------------------------------- */

uint64_t gt_oob_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

int gt_oob_timeout_ms(void)
{
    static int ms; /* benign race: every thread computes the same value */
    int v = __atomic_load_n(&ms, __ATOMIC_RELAXED);
    if (!v) {
        v = (int)gt_env_long("GDRTRACE_OOB_TIMEOUT_MS", GT_OOB_TIMEOUT_MS_DEFAULT, 100, 3600000);
        __atomic_store_n(&ms, v, __ATOMIC_RELAXED);
    }
    return v;
}

uint64_t gt_oob_rand64(void)
{
    uint64_t v = 0;
    if (getrandom(&v, sizeof(v), GRND_NONBLOCK) != (ssize_t)sizeof(v)) {
        static uint64_t ctr;
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        v = ((uint64_t)ts.tv_nsec << 20) ^ (uint64_t)ts.tv_sec ^ ((uint64_t)getpid() << 40) ^
            __atomic_add_fetch(&ctr, 0x9e3779b97f4a7c15ull, __ATOMIC_RELAXED);
    }
    return v ? v : 1;
}

int gt_oob_xfer(int fd, void *buf, size_t len, size_t *off, int sending, uint64_t deadline_ms)
{
    while (*off < len) {
        ssize_t r = sending ? send(fd, (char *)buf + *off, len - *off, MSG_DONTWAIT | MSG_NOSIGNAL)
                            : recv(fd, (char *)buf + *off, len - *off, MSG_DONTWAIT);
        if (r > 0) {
            *off += (size_t)r;
            continue;
        }
        if (r == 0) {
            errno = ECONNRESET;
            return -1;
        }
        if (errno == EINTR)
            continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK)
            return -1;
        if (deadline_ms && gt_oob_now_ms() >= deadline_ms) {
            errno = ETIMEDOUT;
            return -1;
        }
        return 0;
    }
    return 1;
}

socklen_t gt_oob_addr_len(const union gt_oob_addr *a)
{
    return a->sa.sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
}

const char *gt_oob_addr_str(const union gt_oob_addr *a, char *buf, size_t len)
{
    char ip[INET6_ADDRSTRLEN] = "?";
    if (a->sa.sa_family == AF_INET6) {
        inet_ntop(AF_INET6, &a->in6.sin6_addr, ip, sizeof(ip));
        snprintf(buf, len, "[%s]:%u", ip, ntohs(a->in6.sin6_port));
    } else {
        inet_ntop(AF_INET, &a->in4.sin_addr, ip, sizeof(ip));
        snprintf(buf, len, "%s:%u", ip, ntohs(a->in4.sin_port));
    }
    return buf;
}

int gt_oob_connect_start(const union gt_oob_addr *addr, void (*prepare)(int fd, int listening))
{
    int fd = socket(addr->sa.sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    if (prepare)
        prepare(fd, 0);
    if (connect(fd, &addr->sa, gt_oob_addr_len(addr)) != 0 && errno != EINPROGRESS &&
        errno != EINTR) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

int gt_oob_connect_poll(int fd)
{
    struct pollfd pfd = {.fd = fd, .events = POLLOUT};
    int pr = poll(&pfd, 1, 0);
    if (pr < 0)
        return errno == EINTR ? 0 : -1;
    if (pr == 0)
        return 0;
    int e = 0;
    socklen_t sl = sizeof(e);
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &sl) != 0)
        return -1;
    if (e) {
        errno = e;
        return -1;
    }
    return 1;
}

/* ---- listener --------------------------------------------------------------- */

gt_result gt_oob_listen(struct gt_oob_listener *l, const union gt_oob_addr *addr,
                        const struct gt_oob_proto *proto)
{
    char a[80];
    memset(l, 0, sizeof(*l));
    l->proto = *proto;
    l->addr = *addr;
    if (l->addr.sa.sa_family == AF_INET6)
        l->addr.in6.sin6_port = 0;
    else
        l->addr.in4.sin_port = 0;
    l->fd = socket(l->addr.sa.sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (l->fd < 0) {
        int e = errno;
        GT_WARN("%s: listen on %s: socket: %s", proto->name,
                gt_oob_addr_str(&l->addr, a, sizeof(a)), strerror(e));
        errno = e;
        return GT_SYSTEM_ERROR;
    }
    int one = 1;
    setsockopt(l->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (proto->prepare_fd)
        proto->prepare_fd(l->fd, 1);
    socklen_t len = gt_oob_addr_len(&l->addr);
    if (bind(l->fd, &l->addr.sa, len) != 0 || listen(l->fd, 1024) != 0 ||
        getsockname(l->fd, &l->addr.sa, &len) != 0) {
        int e = errno;
        GT_WARN("%s: listen on %s: %s", proto->name, gt_oob_addr_str(&l->addr, a, sizeof(a)),
                strerror(e));
        close(l->fd);
        l->fd = -1;
        errno = e;
        return GT_SYSTEM_ERROR;
    }
    l->nonce = gt_oob_rand64();
    return GT_OK;
}

static int same_host(const union gt_oob_addr *a, const union gt_oob_addr *b)
{
    if (a->sa.sa_family != b->sa.sa_family)
        return 0;
    if (a->sa.sa_family == AF_INET6)
        return memcmp(&a->in6.sin6_addr, &b->in6.sin6_addr, sizeof(a->in6.sin6_addr)) == 0;
    return a->in4.sin_addr.s_addr == b->in4.sin_addr.s_addr;
}

/* Closes pend[i] and keeps the table in accept order (invariant 1). */
static void drop(struct gt_oob_listener *l, int i, const char *why, int abortive)
{
    struct gt_oob_pending *p = &l->pend[i];
    int known = 0;
    for (int k = 0; k < l->nlogged && k < GT_OOB_LOGGED_PEERS; k++)
        known |= same_host(&l->logged[k], &p->peer);
    char a[80], b[80];
    if (!known) {
        l->logged[l->nlogged++ % GT_OOB_LOGGED_PEERS] = p->peer;
        GT_WARN("%s: listener %s dropped a connection from %s after %llu ms: %s (not a peer "
                "of this listener; further drops from this address are only counted)",
                l->proto.name, gt_oob_addr_str(&l->addr, a, sizeof(a)),
                gt_oob_addr_str(&p->peer, b, sizeof(b)),
                (unsigned long long)(gt_oob_now_ms() - p->since_ms), why);
    }
    l->dropped++;
    if (abortive) {
        struct linger lg = {1, 0};
        setsockopt(p->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
    }
    close(p->fd);
    memmove(&l->pend[i], &l->pend[i + 1], (size_t)(l->npend - i - 1) * sizeof(l->pend[0]));
    l->npend--;
}

/* Its hello (and setup message) is in and was found valid. */
static int complete(const struct gt_oob_pending *p)
{
    return p->got == p->need && p->got >= GT_OOB_HELLO_BYTES;
}

/* Reads what pend[i] sent.  1 = complete and valid, 0 = not yet, -1 = dropped. */
static int step(struct gt_oob_listener *l, int i, uint64_t now)
{
    struct gt_oob_pending *p = &l->pend[i];
    struct gt_oob_hello h;
    while (p->got < p->need) {
        ssize_t n = recv(p->fd, p->buf + p->got, p->need - p->got, MSG_DONTWAIT);
        if (n == 0) {
            drop(l, i, "closed before completing its hello", 0);
            return -1;
        }
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                break;
            char why[96];
            snprintf(why, sizeof(why), "failed before completing its hello: %s", strerror(errno));
            drop(l, i, why, 0);
            return -1;
        }
        p->got += (size_t)n;
        const char *bad = gt_oob_parse(&l->proto, l->nonce, p->buf, p->got, &h, &p->need);
        if (bad) {
            drop(l, i, bad, 1);
            return -1;
        }
    }
    if (complete(p)) {
        gt_oob_hello_decode(p->buf, &h);
        for (int k = 0; k < l->nseen && k < GT_OOB_SEEN_IDS; k++)
            if (l->seen[k] == h.conn_id) {
                drop(l, i, "duplicate hello (its connection id was already accepted)", 1);
                return -1;
            }
        return 1;
    }
    if (now >= p->deadline_ms) {
        char why[96];
        snprintf(why, sizeof(why), "incomplete hello (%zu of %zu bytes) at its deadline", p->got,
                 p->need);
        drop(l, i, why, 1);
        return -1;
    }
    return 0;
}

int gt_oob_accept(struct gt_oob_listener *l, struct gt_oob_conn *conn)
{
    uint64_t now = gt_oob_now_ms();
    int timeout = gt_oob_timeout_ms();
    int ready = -1;
    /* New connections: each is read at once, so a real peer whose hello is
     * already queued is authenticated before a flood could evict it. */
    for (int burst = 0; burst < ACCEPT_BURST; burst++) {
        union gt_oob_addr peer;
        socklen_t pl = sizeof(peer);
        memset(&peer, 0, sizeof(peer));
        int fd = accept4(l->fd, &peer.sa, &pl, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                break;
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM ||
                errno == EPERM || errno == EPROTO) {
                if (!l->fd_warned++)
                    GT_WARN("%s: accept: %s (retrying on later calls)", l->proto.name,
                            strerror(errno));
                break;
            }
            return -1;
        }
        if (l->npend == GT_OOB_MAX_PENDING) {
            int victim = -1; /* the oldest that has not completed a valid hello */
            for (int k = 0; k < l->npend && victim < 0; k++)
                if (k != ready && !complete(&l->pend[k]))
                    victim = k;
            if (victim < 0) {
                close(fd);
                continue;
            }
            l->evicted++;
            drop(l, victim, "evicted: the pending table is full", 1);
            if (ready > victim)
                ready--;
        }
        if (l->proto.prepare_fd)
            l->proto.prepare_fd(fd, 0);
        struct gt_oob_pending *p = &l->pend[l->npend++];
        p->fd = fd;
        p->since_ms = now;
        p->deadline_ms = now + (uint64_t)timeout;
        p->got = 0;
        p->need = GT_OOB_HELLO_BYTES;
        p->peer = peer;
        if (ready < 0) {
            int k = step(l, l->npend - 1, now);
            if (k > 0)
                ready = l->npend - 1;
        }
    }
    for (int i = 0; i < l->npend && ready < 0; i++) {
        int k = step(l, i, now);
        if (k > 0)
            ready = i;
        else if (k < 0)
            i--;
    }
    /* Expire the silent ones even when a ready one is returned. */
    for (int i = 0; i < l->npend; i++) {
        if (i == ready || l->pend[i].deadline_ms > now)
            continue;
        if (step(l, i, now) < 0) {
            if (ready > i)
                ready--;
            i--;
        } /* else completed at the last moment: returned by a later call */
    }
    if (ready < 0)
        return 0;
    struct gt_oob_pending *p = &l->pend[ready];
    memset(conn, 0, sizeof(*conn));
    conn->fd = p->fd;
    gt_oob_hello_decode(p->buf, &conn->hello);
    memcpy(conn->body, p->buf + GT_OOB_HELLO_BYTES, conn->hello.body_len);
    conn->peer = p->peer;
    conn->deadline_ms = p->deadline_ms;
    l->seen[l->nseen++ % GT_OOB_SEEN_IDS] = conn->hello.conn_id;
    memmove(&l->pend[ready], &l->pend[ready + 1],
            (size_t)(l->npend - ready - 1) * sizeof(l->pend[0]));
    l->npend--;
    return 1;
}

void gt_oob_listen_close(struct gt_oob_listener *l)
{
    struct linger lg = {1, 0};
    for (int i = 0; i < l->npend; i++) {
        setsockopt(l->pend[i].fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
        close(l->pend[i].fd);
    }
    l->npend = 0;
    if (l->dropped) {
        char a[80];
        GT_INFO(GT_LOGSUB_NET, "%s: listener %s dropped %llu stray connection(s), %llu evicted",
                l->proto.name, gt_oob_addr_str(&l->addr, a, sizeof(a)),
                (unsigned long long)l->dropped, (unsigned long long)l->evicted);
    }
    if (l->fd >= 0)
        close(l->fd);
    l->fd = -1;
}

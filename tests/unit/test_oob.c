/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_oob.c — the shared out-of-band module (plugin/oob) on loopback:
 * handle and hello codecs refuse damage; the listener binds only the chosen
 * address; a scanner's connect+close, an HTTP request, garbage, an idle
 * connection, 70 idle connections (more than the pending table) and a
 * duplicate hello are each dropped without accept reporting anything, and
 * the real peer then completes; silent connections are closed at their
 * deadline; a full table evicts the oldest.  GDRTRACE_OOB_TIMEOUT_MS=200.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "plugin/oob/oob.h"

#define MAGIC 0x54455354u /* "TEST" */
#define BODY 16

static const char *check_body(const void *body, size_t len, const struct gt_oob_hello *h)
{
    (void)h;
    return len == BODY && ((const uint8_t *)body)[0] == 0x42 ? NULL : "body refused";
}

static const struct gt_oob_proto proto = {
    .name = "test", .magic = MAGIC, .version = 3, .body_len = BODY, .check_body = check_body};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static struct gt_oob_listener *listener(void)
{
    static struct gt_oob_listener l;
    union gt_oob_addr a = {.in4 = {.sin_family = AF_INET}};
    a.in4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(gt_oob_listen(&l, &a, &proto), GT_OK);
    return &l;
}

static int tcp_to(const union gt_oob_addr *a)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    assert_int_equal(connect(fd, &a->sa, sizeof(a->in4)), 0);
    return fd;
}

/* A hello + body as a real connector sends them. */
static size_t real_bytes(const struct gt_oob_listener *l, uint64_t conn_id, uint8_t *out)
{
    struct gt_oob_hello h = {
        .magic = MAGIC, .version = 3, .body_len = BODY, .nonce = l->nonce, .conn_id = conn_id};
    gt_oob_hello_encode(&h, out);
    memset(out + GT_OOB_HELLO_BYTES, 0x42, BODY);
    return GT_OOB_HELLO_BYTES + BODY;
}

static int send_real(const struct gt_oob_listener *l, uint64_t conn_id)
{
    uint8_t b[GT_OOB_HELLO_BYTES + BODY];
    size_t n = real_bytes(l, conn_id, b);
    int fd = tcp_to(&l->addr);
    assert_int_equal(send(fd, b, n, MSG_NOSIGNAL), (ssize_t)n);
    return fd;
}

/* accept() until it returns a connection or `secs` pass; every other call
 * must return 0 (never -1: nothing a stranger does is an error). */
static int accept_within(struct gt_oob_listener *l, struct gt_oob_conn *c, double secs)
{
    double end = now_s() + secs;
    do {
        int k = gt_oob_accept(l, c);
        assert_int_not_equal(k, -1);
        if (k == 1)
            return 1;
        usleep(1000);
    } while (now_s() < end);
    return 0;
}

static void real_peer_completes(struct gt_oob_listener *l, uint64_t conn_id)
{
    int fd = send_real(l, conn_id);
    struct gt_oob_conn c;
    assert_int_equal(accept_within(l, &c, 3), 1);
    assert_int_equal(c.hello.conn_id, conn_id);
    assert_int_equal(c.body[0], 0x42);
    assert_true(c.fd >= 0);
    close(c.fd);
    close(fd);
}

/* 1 when the listener closed (FIN or RST) the client's socket. */
static int closed_by_listener(int fd, int wait_ms)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    if (poll(&p, 1, wait_ms) <= 0)
        return 0;
    char b[64];
    ssize_t n = recv(fd, b, sizeof(b), MSG_DONTWAIT);
    return n == 0 || (n < 0 && errno == ECONNRESET);
}

static void handle_codec(void **state)
{
    (void)state;
    uint8_t h[GT_NET_HANDLE_MAXSIZE];
    union gt_oob_addr a = {.in4 = {.sin_family = AF_INET, .sin_port = htons(4242)}}, b;
    a.in4.sin_addr.s_addr = htonl(0x0a000001);
    gt_oob_handle_encode(MAGIC, 3, &a, 0x1122334455667788ull, h);
    uint64_t nonce = 0;
    char why[200];
    assert_int_equal(
        gt_oob_handle_decode(h, sizeof(h), MAGIC, 3, "test", &b, &nonce, why, sizeof(why)), GT_OK);
    assert_int_equal(nonce, 0x1122334455667788ull);
    assert_int_equal(b.in4.sin_port, htons(4242));
    assert_int_equal(b.in4.sin_addr.s_addr, htonl(0x0a000001));
    for (int i = 0; i < 40; i++) { /* every covered byte is checked */
        h[i] ^= 0x10;
        assert_int_equal(
            gt_oob_handle_decode(h, sizeof(h), MAGIC, 3, "test", &b, &nonce, why, sizeof(why)),
            GT_INVALID_ARGUMENT);
        h[i] ^= 0x10;
    }
    assert_int_equal(gt_oob_handle_decode(h, 39, MAGIC, 3, "test", &b, &nonce, why, sizeof(why)),
                     GT_INVALID_ARGUMENT);
    assert_non_null(strstr(why, "truncated"));
    assert_int_equal(
        gt_oob_handle_decode(h, sizeof(h), MAGIC + 1, 3, "test", &b, &nonce, why, sizeof(why)),
        GT_INVALID_ARGUMENT);
    assert_non_null(strstr(why, "not a gdrtrace test handle"));
}

static void hello_parse(void **state)
{
    (void)state;
    uint8_t b[GT_OOB_HELLO_BYTES + BODY];
    struct gt_oob_listener fake = {.nonce = 99};
    size_t n = real_bytes(&fake, 7, b), need;
    struct gt_oob_hello h;
    /* byte by byte, a valid prefix is never refused */
    for (size_t got = 0; got < n; got++)
        assert_null(gt_oob_parse(&proto, 99, b, got, &h, &need));
    assert_null(gt_oob_parse(&proto, 99, b, n, &h, &need));
    assert_int_equal(need, n);
    assert_int_equal(h.conn_id, 7);
    assert_non_null(gt_oob_parse(&proto, 98, b, n, &h, &need)); /* wrong nonce */
    assert_non_null(gt_oob_parse(&proto, 99, (const uint8_t *)"GET / HTTP/1.0", 1, &h, &need));
    b[GT_OOB_HELLO_BYTES] = 0;
    assert_string_equal(gt_oob_parse(&proto, 99, b, n, &h, &need), "body refused");
    b[5] ^= 1; /* version, caught by the checksum */
    assert_non_null(gt_oob_parse(&proto, 99, b, GT_OOB_HELLO_BYTES, &h, &need));
}

static void listens_on_chosen_address_only(void **state)
{
    (void)state;
    struct gt_oob_listener *l = listener();
    union gt_oob_addr other = l->addr;
    other.in4.sin_addr.s_addr = htonl(0x7f000002); /* 127.0.0.2, same host */
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_int_equal(connect(fd, &other.sa, sizeof(other.in4)), -1);
    assert_int_equal(errno, ECONNREFUSED);
    close(fd);
    gt_oob_listen_close(l);
}

static void scanner_http_garbage(void **state)
{
    (void)state;
    struct gt_oob_listener *l = listener();
    for (int i = 0; i < 3; i++)
        close(tcp_to(&l->addr)); /* a port scanner */
    int http = tcp_to(&l->addr);
    const char req[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
    assert_int_equal(send(http, req, sizeof(req) - 1, 0), (ssize_t)sizeof(req) - 1);
    int junk = tcp_to(&l->addr);
    uint8_t j[300];
    for (size_t i = 0; i < sizeof(j); i++)
        j[i] = (uint8_t)(i * 37 + 11);
    memcpy(j, "TEST", 4); /* right magic, then nonsense: caught by the checksum */
    assert_int_equal(send(junk, j, sizeof(j), 0), (ssize_t)sizeof(j));
    struct gt_oob_conn c;
    assert_int_equal(accept_within(l, &c, 0.05), 0);
    assert_true(closed_by_listener(http, 1000));
    assert_true(closed_by_listener(junk, 1000));
    assert_int_equal(l->npend, 0);
    assert_int_equal(l->dropped, 5);
    real_peer_completes(l, 1);
    close(http);
    close(junk);
    gt_oob_listen_close(l);
}

static void idle_connection_expires(void **state)
{
    (void)state;
    struct gt_oob_listener *l = listener();
    int idle = tcp_to(&l->addr);
    struct gt_oob_conn c;
    assert_int_equal(accept_within(l, &c, 0.02), 0);
    assert_int_equal(l->npend, 1);
    real_peer_completes(l, 2);                      /* not behind the idle one */
    assert_int_equal(accept_within(l, &c, 0.4), 0); /* past its 200 ms deadline */
    assert_int_equal(l->npend, 0);
    assert_true(closed_by_listener(idle, 1000));
    close(idle);
    gt_oob_listen_close(l);
}

static void many_idle_connections(void **state)
{
    (void)state;
    struct gt_oob_listener *l = listener();
    enum { N = GT_OOB_MAX_PENDING + 6 };
    int fds[N];
    for (int i = 0; i < N; i++)
        fds[i] = tcp_to(&l->addr);
    struct gt_oob_conn c;
    assert_int_equal(accept_within(l, &c, 0.02), 0);
    assert_int_equal(l->npend, GT_OOB_MAX_PENDING);
    assert_int_equal(l->evicted, 6);
    assert_true(closed_by_listener(fds[0], 1000)); /* the oldest went first */
    assert_false(closed_by_listener(fds[N - 1], 0));
    real_peer_completes(l, 3);
    for (int i = 0; i < N; i++)
        close(fds[i]);
    gt_oob_listen_close(l);
}

/* The idle ones arrive after the real peer's hello is queued: it must not be
 * evicted by them within the same accept call. */
static void flood_after_real_peer(void **state)
{
    (void)state;
    struct gt_oob_listener *l = listener();
    int real = send_real(l, 4);
    enum { N = GT_OOB_MAX_PENDING + 20 };
    int fds[N];
    for (int i = 0; i < N; i++)
        fds[i] = tcp_to(&l->addr);
    struct gt_oob_conn c;
    assert_int_equal(accept_within(l, &c, 2), 1);
    assert_int_equal(c.hello.conn_id, 4);
    close(c.fd);
    close(real);
    for (int i = 0; i < N; i++)
        close(fds[i]);
    gt_oob_listen_close(l);
}

static void duplicate_hello(void **state)
{
    (void)state;
    struct gt_oob_listener *l = listener();
    int a = send_real(l, 5);
    struct gt_oob_conn c;
    assert_int_equal(accept_within(l, &c, 2), 1);
    assert_int_equal(c.hello.conn_id, 5);
    int b = send_real(l, 5); /* the same connection id again */
    struct gt_oob_conn d;
    assert_int_equal(accept_within(l, &d, 0.05), 0);
    assert_true(closed_by_listener(b, 1000));
    assert_int_equal(l->npend, 0);
    /* two at once with one id: the first is returned, the second dropped */
    int e = send_real(l, 6), f = send_real(l, 6);
    usleep(20000);
    assert_int_equal(accept_within(l, &d, 1), 1);
    assert_int_equal(d.hello.conn_id, 6);
    struct gt_oob_conn g;
    assert_int_equal(accept_within(l, &g, 0.05), 0);
    assert_int_equal(l->npend, 0);
    real_peer_completes(l, 7);
    close(c.fd);
    close(d.fd);
    close(a);
    close(b);
    close(e);
    close(f);
    gt_oob_listen_close(l);
}

static void xfer_deadline(void **state)
{
    (void)state;
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
    char buf[8];
    size_t off = 0;
    assert_int_equal(gt_oob_xfer(sv[0], buf, sizeof(buf), &off, 0, gt_oob_now_ms() + 1000), 0);
    assert_int_equal(send(sv[1], "abcd", 4, 0), 4);
    assert_int_equal(gt_oob_xfer(sv[0], buf, sizeof(buf), &off, 0, gt_oob_now_ms() - 1), -1);
    assert_int_equal(errno, ETIMEDOUT);
    assert_int_equal(off, 4);
    assert_int_equal(send(sv[1], "efgh", 4, 0), 4);
    assert_int_equal(gt_oob_xfer(sv[0], buf, sizeof(buf), &off, 0, 0), 1);
    assert_memory_equal(buf, "abcdefgh", 8);
    close(sv[1]);
    off = 0;
    assert_int_equal(gt_oob_xfer(sv[0], buf, sizeof(buf), &off, 0, 0), -1);
    assert_int_equal(errno, ECONNRESET);
    close(sv[0]);
}

static void if_policies(void **state)
{
    (void)state;
    struct gt_oob_if c[4], out[4];
    memset(c, 0, sizeof(c));
    const char *names[] = {"lo", "docker0", "eth0", "ib0"};
    for (int i = 0; i < 4; i++) {
        snprintf(c[i].name, sizeof(c[i].name), "%s", names[i]);
        c[i].addr.in4.sin_family = AF_INET;
        c[i].addr.in4.sin_addr.s_addr = htonl(0x0a000001 + (uint32_t)i);
    }
    c[0].loopback = 1;
    /* sock, NCCL's automatic order: ib* first */
    assert_int_equal(gt_oob_if_select(c, 4, NULL, 0, out, 4), 1);
    assert_string_equal(out[0].name, "ib0");
    /* without ib*: everything but loopback, docker and virbr */
    snprintf(c[3].name, sizeof(c[3].name), "virbr0");
    assert_int_equal(gt_oob_if_select(c, 4, NULL, 0, out, 4), 1);
    assert_string_equal(out[0].name, "eth0");
    /* then docker, then loopback, then virbr */
    assert_int_equal(gt_oob_if_select(c, 2, NULL, 0, out, 4), 1);
    assert_string_equal(out[0].name, "docker0");
    struct gt_oob_if v[2] = {c[3], c[0]};
    assert_int_equal(gt_oob_if_select(v, 2, NULL, 0, out, 4), 1);
    assert_string_equal(out[0].name, "lo");
    assert_int_equal(gt_oob_if_select(v, 1, NULL, 0, out, 4), 1);
    assert_string_equal(out[0].name, "virbr0");
    snprintf(c[3].name, sizeof(c[3].name), "ib0");
    assert_int_equal(gt_oob_if_select(c, 4, "^eth", 0, out, 4), 3);
    /* ib: the first non-loopback IPv4 (docker0 counts), or the prefix */
    assert_int_equal(gt_oob_if_first_ipv4(c, 4, NULL, out), 1);
    assert_string_equal(out[0].name, "docker0");
    assert_int_equal(gt_oob_if_first_ipv4(c, 4, "ib", out), 1);
    assert_string_equal(out[0].name, "ib0");
    assert_int_equal(gt_oob_if_first_ipv4(c, 4, "mlx", out), 0);
}

int main(void)
{
    setenv("GDRTRACE_OOB_TIMEOUT_MS", "200", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(handle_codec),
        cmocka_unit_test(hello_parse),
        cmocka_unit_test(listens_on_chosen_address_only),
        cmocka_unit_test(scanner_http_garbage),
        cmocka_unit_test(idle_connection_expires),
        cmocka_unit_test(many_idle_connections),
        cmocka_unit_test(flood_after_real_peer),
        cmocka_unit_test(duplicate_hello),
        cmocka_unit_test(xfer_deadline),
        cmocka_unit_test(if_policies),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

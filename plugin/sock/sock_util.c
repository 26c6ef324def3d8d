/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sock_util.c — the sock transport's pure logic: connection-handle encoding
 * and validation, and network interface selection (GDRTRACE_SOCKET_IFNAME).
 *
 * Invariants: decode never trusts a byte of the handle (it may come from a
 * corrupted bootstrap); selection never returns an IPv6 link-local address
 * (it would need a scope id the handle does not carry) and returns each
 * interface name at most once.
 */
#include "plugin/sock/sock_internal.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <stdio.h>
#include <string.h>

static uint32_t fnv1a(const uint8_t *p, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 16777619u;
    return h;
}

static void put16(uint8_t *p, uint16_t v)
{
    p[0] = v >> 8;
    p[1] = (uint8_t)v;
}
static void put32(uint8_t *p, uint32_t v)
{
    put16(p, v >> 16);
    put16(p + 2, (uint16_t)v);
}
static void put64(uint8_t *p, uint64_t v)
{
    put32(p, v >> 32);
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

void gt_sock_handle_encode(const struct gt_sock_handle_info *info, void *handle)
{
    uint8_t *h = handle;
    memset(h, 0, GT_NET_HANDLE_MAXSIZE);
    put32(h, GT_SOCK_HANDLE_MAGIC);
    put16(h + 4, GT_SOCK_HANDLE_VERSION);
    if (info->addr.sa.sa_family == AF_INET6) {
        put16(h + 6, 6);
        put16(h + 8, ntohs(info->addr.in6.sin6_port));
        memcpy(h + 12, &info->addr.in6.sin6_addr, 16);
    } else {
        put16(h + 6, 4);
        put16(h + 8, ntohs(info->addr.in4.sin_port));
        memcpy(h + 12, &info->addr.in4.sin_addr, 4);
    }
    put64(h + 28, info->nonce);
    put32(h + 36, fnv1a(h, 36));
}

gt_result gt_sock_handle_decode(const void *handle, size_t len, struct gt_sock_handle_info *info,
                                char *why, size_t whylen)
{
    const uint8_t *h = handle;
    if (!h) {
        snprintf(why, whylen, "handle is NULL");
        return GT_INVALID_ARGUMENT;
    }
    if (len < GT_SOCK_HANDLE_MINLEN) {
        snprintf(why, whylen, "handle truncated: %zu bytes, need at least %d", len,
                 GT_SOCK_HANDLE_MINLEN);
        return GT_INVALID_ARGUMENT;
    }
    uint32_t magic = get32(h);
    if (magic != GT_SOCK_HANDLE_MAGIC) {
        snprintf(why, whylen,
                 "bad handle magic 0x%08x (want 0x%08x 'GTSK'): not a gdrtrace sock handle", magic,
                 GT_SOCK_HANDLE_MAGIC);
        return GT_INVALID_ARGUMENT;
    }
    uint16_t ver = get16(h + 4);
    if (ver != GT_SOCK_HANDLE_VERSION) {
        snprintf(why, whylen, "handle version %u, this build speaks %u (mixed plugin versions?)",
                 ver, GT_SOCK_HANDLE_VERSION);
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
    memset(info, 0, sizeof(*info));
    if (fam == 4) {
        info->addr.in4.sin_family = AF_INET;
        info->addr.in4.sin_port = htons(port);
        memcpy(&info->addr.in4.sin_addr, h + 12, 4);
    } else {
        info->addr.in6.sin6_family = AF_INET6;
        info->addr.in6.sin6_port = htons(port);
        memcpy(&info->addr.in6.sin6_addr, h + 12, 16);
    }
    info->nonce = get64(h + 28);
    return GT_OK;
}

const char *gt_sock_addr_str(const union gt_sock_addr *a, char *buf, size_t len)
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

int gt_sock_if_match(const char *spec, const char *name)
{
    int exclude = 0, exact = 0;
    if (*spec == '^') {
        exclude = 1;
        spec++;
    }
    if (*spec == '=') {
        exact = 1;
        spec++;
    }
    int hit = 0;
    while (*spec && !hit) {
        const char *end = strchr(spec, ',');
        size_t n = end ? (size_t)(end - spec) : strlen(spec);
        /* NCCL allows "name:port"; the port part selects nothing here. */
        const char *colon = memchr(spec, ':', n);
        size_t m = colon ? (size_t)(colon - spec) : n;
        if (m > 0) {
            if (exact)
                hit = strlen(name) == m && strncmp(name, spec, m) == 0;
            else
                hit = strncmp(name, spec, m) == 0;
        }
        spec += n;
        if (*spec == ',')
            spec++;
    }
    return exclude ? !hit : hit;
}

static int usable(const struct gt_sock_if *c)
{
    if (c->addr.sa.sa_family == AF_INET6) {
        const struct in6_addr *a = &c->addr.in6.sin6_addr;
        if (IN6_IS_ADDR_LINKLOCAL(a) || IN6_IS_ADDR_UNSPECIFIED(a))
            return 0;
        return 1;
    }
    return c->addr.sa.sa_family == AF_INET;
}

/* class: 0 = ordinary, 1 = docker*, 2 = loopback */
static int if_class(const struct gt_sock_if *c)
{
    if (c->loopback)
        return 2;
    return strncmp(c->name, "docker", 6) == 0 ? 1 : 0;
}

static int pick(const struct gt_sock_if *cands, int ncand, const char *spec, int family, int cls,
                struct gt_sock_if *out, int maxout)
{
    int n = 0;
    for (int i = 0; i < ncand && n < maxout; i++) {
        const struct gt_sock_if *c = &cands[i];
        if (!usable(c) || (family && c->addr.sa.sa_family != family))
            continue;
        if (spec ? !gt_sock_if_match(spec, c->name) : if_class(c) != cls)
            continue;
        int dup = -1;
        for (int j = 0; j < n; j++)
            if (strcmp(out[j].name, c->name) == 0)
                dup = j;
        if (dup >= 0) {
            /* Prefer IPv4: a v4 address replaces an earlier v6 one. */
            if (out[dup].addr.sa.sa_family == AF_INET6 && c->addr.sa.sa_family == AF_INET)
                out[dup] = *c;
            continue;
        }
        out[n++] = *c;
    }
    return n;
}

int gt_sock_if_select(const struct gt_sock_if *cands, int ncand, const char *spec, int family,
                      struct gt_sock_if *out, int maxout)
{
    if (spec && *spec)
        return pick(cands, ncand, spec, family, 0, out, maxout);
    for (int cls = 0; cls <= 2; cls++) {
        int n = pick(cands, ncand, NULL, family, cls, out, maxout);
        if (n > 0)
            return n;
    }
    return 0;
}

int gt_sock_if_system(struct gt_sock_if *out, int maxout)
{
    struct ifaddrs *ifa = NULL;
    if (getifaddrs(&ifa) != 0)
        return -1;
    int n = 0;
    for (struct ifaddrs *p = ifa; p && n < maxout; p = p->ifa_next) {
        if (!p->ifa_addr || !(p->ifa_flags & IFF_UP))
            continue;
        int fam = p->ifa_addr->sa_family;
        if (fam != AF_INET && fam != AF_INET6)
            continue;
        struct gt_sock_if *c = &out[n];
        memset(c, 0, sizeof(*c));
        snprintf(c->name, sizeof(c->name), "%s", p->ifa_name);
        memcpy(&c->addr, p->ifa_addr,
               fam == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6));
        c->loopback = !!(p->ifa_flags & IFF_LOOPBACK);
        n++;
    }
    freeifaddrs(ifa);
    return n;
}

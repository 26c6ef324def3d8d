/* SPDX-License-Identifier: Apache-2.0 */
/*
 * oob_if.c — which interface address the out-of-band listener binds and
 * advertises: the system's candidates, sock's policy (NCCL_SOCKET_IFNAME /
 * GDRTRACE_SOCKET_IFNAME, several devices) and ib's (GDRTRACE_IB_OOB_IF,
 * else NCCL_SOCKET_IFNAME: one IPv4 address), with NCCL's meaning
 * (src/misc/socket.cc, src/os/linux.cc).
 *
 * Invariants: selection never returns an IPv6 link-local address (it would
 * need a scope id the handle does not carry) and returns each interface name
 * at most once.
 */
#include "plugin/oob/oob.h"

#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "common/log.h"
#include "common/nccl_env.h"

int gt_oob_if_match(const char *spec, const char *name)
{
    int exclude = *spec == '^';
    spec += exclude;
    int exact = *spec == '=';
    spec += exact;
    /* NCCL: a list without entries matches every name ("^," excludes all). */
    int hit = 0, entries = 0;
    while (*spec && !hit) {
        const char *end = strchr(spec, ',');
        size_t n = end ? (size_t)(end - spec) : strlen(spec);
        /* NCCL allows "name:port"; the port part selects nothing here. */
        const char *colon = memchr(spec, ':', n);
        size_t m = colon ? (size_t)(colon - spec) : n;
        if (m > 0) {
            entries++;
            if (exact)
                hit = strlen(name) == m && strncmp(name, spec, m) == 0;
            else
                hit = strncmp(name, spec, m) == 0;
        }
        spec += n;
        if (*spec == ',')
            spec++;
    }
    if (!entries)
        hit = 1;
    return exclude ? !hit : hit;
}

static int usable(const struct gt_oob_if *c)
{
    if (c->addr.sa.sa_family == AF_INET6) {
        const struct in6_addr *a = &c->addr.in6.sin6_addr;
        if (IN6_IS_ADDR_LINKLOCAL(a) || IN6_IS_ADDR_UNSPECIFIED(a))
            return 0;
        return 1;
    }
    return c->addr.sa.sa_family == AF_INET;
}

/* NCCL's automatic order: 0 = ib*, 1 = anything but docker*, lo*,
 * virbr*, 2 = docker*, 3 = loopback, 4 = virbr*. */
#define IF_CLASSES 5
static int if_class(const struct gt_oob_if *c)
{
    if (c->loopback || strncmp(c->name, "lo", 2) == 0)
        return 3;
    if (strncmp(c->name, "ib", 2) == 0)
        return 0;
    if (strncmp(c->name, "docker", 6) == 0)
        return 2;
    return strncmp(c->name, "virbr", 5) == 0 ? 4 : 1;
}

static int pick(const struct gt_oob_if *cands, int ncand, const char *spec, int family, int cls,
                struct gt_oob_if *out, int maxout)
{
    int n = 0;
    for (int i = 0; i < ncand && n < maxout; i++) {
        const struct gt_oob_if *c = &cands[i];
        if (!usable(c) || (family && c->addr.sa.sa_family != family))
            continue;
        if (spec ? !gt_oob_if_match(spec, c->name) : if_class(c) != cls)
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

int gt_oob_if_select(const struct gt_oob_if *cands, int ncand, const char *spec, int family,
                     struct gt_oob_if *out, int maxout)
{
    if (spec && *spec)
        return pick(cands, ncand, spec, family, 0, out, maxout);
    for (int cls = 0; cls < IF_CLASSES; cls++) {
        int n = pick(cands, ncand, NULL, family, cls, out, maxout);
        if (n > 0)
            return n;
    }
    return 0;
}

int gt_oob_if_first_ipv4(const struct gt_oob_if *cands, int ncand, const char *prefix,
                         struct gt_oob_if *out)
{
    for (int i = 0; i < ncand; i++) {
        const struct gt_oob_if *c = &cands[i];
        if (c->addr.sa.sa_family != AF_INET)
            continue;
        if (prefix ? strncmp(c->name, prefix, strlen(prefix)) != 0 : c->loopback)
            continue;
        *out = *c;
        return 1;
    }
    return 0;
}

int gt_oob_if_system(struct gt_oob_if *out, int maxout)
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
        struct gt_oob_if *c = &out[n];
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

void gt_oob_if_settings_read(struct gt_oob_if_settings *s, const char *twin, int warn)
{
    memset(s, 0, sizeof(*s));
    const char *spec = gt_nccl_str(&s->s_ifname, "NCCL_SOCKET_IFNAME", twin);
    /* NCCL looks at NCCL_SOCKET_IFNAME only when it is longer than one
     * character: "^" or "=" alone is the automatic choice. */
    if (spec && s->s_ifname.source != GT_SRC_GDRTRACE && strlen(spec) <= 1) {
        if (warn)
            GT_WARN("%s is too short for NCCL, which chooses automatically; so do we",
                    s->s_ifname.origin);
        spec = NULL;
    }
    if (spec)
        snprintf(s->spec, sizeof(s->spec), "%s", spec);
    else
        snprintf(s->s_ifname.value, sizeof(s->s_ifname.value),
                 "auto: ib*, else not docker/lo/virbr, else docker, lo, virbr");
    s->has_spec = spec != NULL;
    struct gt_setting tw;
    int fam = -1;
    if (twin) {
        static const char *const fams[] = {"any", "AF_INET", "AF_INET6", "4", "6", NULL};
        static const int fam_of[] = {0, AF_INET, AF_INET6, AF_INET, AF_INET6};
        int i = gt_setting_choice(&tw, "GDRTRACE_SOCKET_FAMILY", fams, -1, warn);
        if (i >= 0) {
            fam = fam_of[i];
            s->s_family = tw;
        }
    }
    if (fam < 0) {
        /* NCCL: exactly AF_INET or AF_INET6; anything else is "any". */
        const char *v = gt_nccl_str(&s->s_family, "NCCL_SOCKET_FAMILY", NULL);
        fam = 0;
        if (v && strcmp(v, "AF_INET") == 0)
            fam = AF_INET;
        else if (v && strcmp(v, "AF_INET6") == 0)
            fam = AF_INET6;
        else if (v && warn)
            GT_WARN("%s is not AF_INET or AF_INET6; any family, as NCCL", s->s_family.origin);
        if (twin)
            snprintf(s->s_family.key, sizeof(s->s_family.key), "GDRTRACE_SOCKET_FAMILY");
    }
    s->family = fam;
    snprintf(s->s_family.value, sizeof(s->s_family.value), "%s",
             fam == AF_INET    ? "AF_INET"
             : fam == AF_INET6 ? "AF_INET6"
                               : "any");
}

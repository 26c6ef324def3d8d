/* SPDX-License-Identifier: Apache-2.0 */
/*
 * collstat.c — the GPU scripts' raw view of recorders' collective sections
 * (format 1.5), independent of the gdrtrace command's renderers, so a GPU
 * run's judgement does not rest on the code it judges beyond the validator.
 *
 *   collstat FILE.rec...
 * prints, per file, tab-separated lines:
 *   status  <file> mode=<m> version=<v> inits=<n> full=<n> env_set=<0|1> env=<text>
 *   net     <file> comm_id=0x.. has_id=<0|1> sends=<n> recvs=<n>
 *   comm    <file> comm_id=0x.. rank=<r> nranks=<n> nnodes=<n> name=<s> version=<v> mode=<m>
 *           init_ns first_ns busy_ns inflight_full foreign stale_child
 *   cell    <file> comm_id=0x.. func=<f> log2=<k> count bytes timed p50 p95 p99 mean algo_proto=...
 * Exit: 0, 1 when a file does not parse (message on stderr).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "common/hist.h"
#include "tools/lib/recfile.h"

static const char *const funcs[GTR_COLL_FUNC_COUNT] = {
    "AllReduce", "AllGather", "ReduceScatter", "Broadcast", "Reduce",   "AlltoAll",
    "Gather",    "Scatter",   "Send",          "Recv",      "SendRecv", "other"};
static const char *const algos[GTR_COLL_ALGOS] = {
    "TREE", "RING", "COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS", "NVLS_TREE", "PAT", "unknown"};
static const char *const protos[GTR_COLL_PROTOS] = {"LL", "LL128", "SIMPLE", "unknown"};

int main(int argc, char **argv)
{
    int rc = 0;
    for (int a = 1; a < argc; a++) {
        struct gt_recfile r;
        char err[GT_ERRLEN];
        memset(&r, 0, sizeof(r));
        if (gt_recfile_load_file(argv[a], &r, err, sizeof(err))) {
            fprintf(stderr, "collstat: %s\n", err);
            rc = 1;
            continue;
        }
        const char *f = argv[a];
        static const struct gtr_coll_status none;
        const struct gtr_coll_status *st = r.coll_status ? r.coll_status : &none;
        printf("status\t%s\tminor=%u\thas=%d\tmode=%u\tversion=%d\tinits=%u\tfull=%u\tenv_set=%u\t"
               "env=%s\n",
               f, r.hdr.version_minor, r.coll_status != NULL, st->mode, st->version, st->inits,
               st->full, st->profiler_env_set, st->profiler_env);
        for (uint32_t i = 0; i < r.ncomm; i++) {
            const struct gtr_comm *c = &r.comms[i];
            if (c->state == GTR_COMM_FREE)
                continue;
            printf("net\t%s\tcomm_id=0x%" PRIx64 "\thas_id=%u\tsends=%" PRIu64 "\trecvs=%" PRIu64
                   "\n",
                   f, c->comm_id, c->has_comm_id, c->send_count, c->recv_count);
        }
        for (uint32_t i = 0; i < r.ncoll; i++) {
            const struct gtr_coll_comm *c = &r.colls[i];
            if (c->state == GTR_COMM_FREE)
                continue;
            printf("comm\t%s\tcomm_id=0x%" PRIx64 "\thas_id=%u\trank=%d\tnranks=%d\tnnodes=%d\t"
                   "name=%s\tversion=%d\tmode=%u\tmask=0x%x\tinit_ns=%" PRId64 "\tfirst_ns=%" PRId64
                   "\tbusy_ns=%" PRIu64 "\tinflight_full=%" PRIu64 "\tforeign=%" PRIu64
                   "\tstale_child=%" PRIu64 "\n",
                   f, c->comm_id, c->has_comm_id, c->rank, c->nranks, c->nnodes, c->comm_name,
                   c->version, c->mode, c->mask, c->init_ns, c->first_ns, c->busy_ns,
                   c->inflight_full, c->foreign, c->stale_child);
            for (unsigned k = 0; k < GTR_COLL_CELLS; k++) {
                const struct gtr_coll_cell *x = &c->cells[k];
                if (x->in_use != 1)
                    continue;
                const struct gtr_hist *h = &x->hist;
                char mix[512];
                size_t n = 0;
                mix[0] = '\0';
                for (int al = 0; al < GTR_COLL_ALGOS; al++)
                    for (int pr = 0; pr < GTR_COLL_PROTOS; pr++)
                        if (x->algo_proto[al][pr] && n < sizeof(mix))
                            n += (size_t)snprintf(mix + n, sizeof(mix) - n, "%s%s_%s:%" PRIu64,
                                                  n ? "," : "", algos[al], protos[pr],
                                                  x->algo_proto[al][pr]);
                printf("cell\t%s\tcomm_id=0x%" PRIx64 "\tfunc=%s\tlog2=%u\tcount=%" PRIu64
                       "\tbytes=%" PRIu64 "\ttimed=%" PRIu64 "\tp50=%" PRIu64 "\tp95=%" PRIu64
                       "\tp99=%" PRIu64 "\tmean=%" PRIu64 "\tmin=%" PRIu64 "\tmax=%" PRIu64
                       "\talgo_proto=%s\n",
                       f, c->comm_id, funcs[x->func < GTR_COLL_FUNC_COUNT ? x->func : 11],
                       x->size_log2, x->count, x->bytes, h->count,
                       gt_hist_percentile(h->buckets, h->min_ns, h->max_ns, 50),
                       gt_hist_percentile(h->buckets, h->min_ns, h->max_ns, 95),
                       gt_hist_percentile(h->buckets, h->min_ns, h->max_ns, 99),
                       h->count ? h->sum_ns / h->count : 0, h->count ? h->min_ns : 0, h->max_ns,
                       mix);
            }
        }
        gt_recfile_free(&r);
    }
    return rc;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_rec_tp.h — the LTTng-UST tracepoint bench_rec.c measures the
 * recorder against: the same payload as one struct gtr_event (type, slot,
 * dev, result, errno, three 64-bit arguments, aux), written by LTTng's own
 * lock-free ring buffer.  LTTng adds the timestamp itself.  Only used when
 * <lttng/tracepoint.h> is installed (liblttng-ust-dev).
 */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER gdrtrace_bench
#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "tests/bench/bench_rec_tp.h"

#if !defined(GDRTRACE_BENCH_REC_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define GDRTRACE_BENCH_REC_TP_H

#include <stdint.h>
#include <lttng/tracepoint.h>

LTTNG_UST_TRACEPOINT_EVENT(
    gdrtrace_bench, control,
    LTTNG_UST_TP_ARGS(uint16_t, type, uint16_t, slot, int16_t, dev, int32_t, result, int32_t, err,
                      uint64_t, a0, uint64_t, a1, uint64_t, a2, uint32_t, aux),
    LTTNG_UST_TP_FIELDS(lttng_ust_field_integer(uint16_t, type,
                                                type) lttng_ust_field_integer(uint16_t, slot, slot)
                            lttng_ust_field_integer(int16_t, dev, dev)
                                lttng_ust_field_integer(int32_t, result, result)
                                    lttng_ust_field_integer(int32_t, err, err)
                                        lttng_ust_field_integer(uint64_t, a0, a0)
                                            lttng_ust_field_integer(uint64_t, a1, a1)
                                                lttng_ust_field_integer(uint64_t, a2, a2)
                                                    lttng_ust_field_integer(uint32_t, aux, aux)))

#endif

#include <lttng/tracepoint-event.h>

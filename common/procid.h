/* SPDX-License-Identifier: Apache-2.0 */
/*
 * procid.h — which process this is, beyond its pid: its pid and time
 * namespaces and its start time.  The writer records them in the recorder's
 * identity (format 1.4); the reader's liveness judgement (liveness.c) holds
 * them against what it sees, so a reused pid and a pid of another namespace
 * are told apart from the writer.  Reads /proc; not for the hot path.
 */
#ifndef GDRTRACE_COMMON_PROCID_H
#define GDRTRACE_COMMON_PROCID_H

#include <stdint.h>

/*! gt_proc_ns() : the namespace `name` ("pid", "time") of this process, as
 *  st_dev and st_ino of /proc/self/ns/<name> (how namespaces are compared);
 *  both 0 when it cannot be read (no /proc, a kernel without that
 *  namespace). */
void gt_proc_ns(const char *name, uint64_t *dev, uint64_t *ino);

/*! gt_proc_start_ticks() : when process pid (0: this one) started, field 22
 *  of /proc/<pid>/stat: clock ticks since boot, as the caller's time namespace
 *  sees it; -1 when it cannot be read. */
int64_t gt_proc_start_ticks(int pid);

/*! gt_proc_cpu_ns() : user and system CPU time of process pid, fields 14
 *  and 15 of /proc/<pid>/stat (clock ticks, so 10 ms steps at the usual
 *  100 Hz), in ns; 0 or -1 when it cannot be read.  Allocates nothing and
 *  uses no stdio: the host-pressure sampler calls it from NCCL's threads. */
int gt_proc_cpu_ns(int pid, uint64_t *utime_ns, uint64_t *stime_ns);

/*! gt_helper_pid_set() / gt_helper_pid() : the process that does this
 *  process's data-path work elsewhere (the GPU-memory copier), 0 for none.
 *  Set by the layer that starts it, read by the host-pressure sampler, so
 *  neither includes the other.  One helper at a time. */
void gt_helper_pid_set(int pid);
int gt_helper_pid(void);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * inject_cpu.c — an LD_PRELOAD library that adds host CPU to every process
 * it is loaded into, children included, the way a noisy neighbour inside
 * the job would: a thread that burns AB_INJECT_CPU times the CPU the
 * process's other threads used (1.0: +100 %), measured as it goes
 * (CLOCK_PROCESS_CPUTIME_ID less its own thread clock).  A child started
 * with exec loads it again through LD_PRELOAD; a forked child gets a new
 * burner (pthread_atfork).  Used by the A/B calibration
 * (tests/ab/ab-calibration.sh); nothing in the product knows of it.
 */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

static double g_factor;

static double clk(clockid_t c)
{
    struct timespec t;
    clock_gettime(c, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void *burn(void *arg)
{
    (void)arg;
    volatile unsigned long x = 0;
    for (;;) {
        double own = clk(CLOCK_THREAD_CPUTIME_ID);
        double others = clk(CLOCK_PROCESS_CPUTIME_ID) - own;
        double want = g_factor * others;
        if (own < want) {
            /* burn up to the debt, at most 5 ms at a time */
            double stop = own + (want - own < 0.005 ? want - own : 0.005);
            while (clk(CLOCK_THREAD_CPUTIME_ID) < stop)
                for (int i = 0; i < 2000; i++)
                    x += (unsigned long)i * 2654435761u;
        } else {
            struct timespec d = {0, 1000000};
            nanosleep(&d, NULL);
        }
    }
    return NULL;
}

static void start(void)
{
    pthread_t t;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    pthread_create(&t, &a, burn, NULL);
    pthread_attr_destroy(&a);
}

__attribute__((constructor)) static void inject_cpu_init(void)
{
    const char *s = getenv("AB_INJECT_CPU");
    g_factor = s ? strtod(s, NULL) : 1.0;
    if (!(g_factor > 0))
        return;
    pthread_atfork(NULL, NULL, start);
    start();
}

# SPDX-License-Identifier: Apache-2.0
# plugin/sock: the TCP transport, its unit tests and its benchmark.
SOCK_SRCS := plugin/sock/sock.c plugin/sock/sock_conn.c plugin/sock/sock_ctrl.c plugin/sock/sock_data.c \
             plugin/sock/sock_util.c
PLUGIN_SRCS += $(SOCK_SRCS)

TESTS += test_sock
test_sock_SRCS := tests/unit/test_sock.c $(SOCK_SRCS) $(OOB_SRCS) $(BASE_SRCS)
test_sock_LIBS := -lcmocka -lpthread

BENCHES += bench_sock
bench_sock_SRCS := tests/bench/bench_sock.c $(SOCK_SRCS) $(OOB_SRCS) $(BASE_SRCS)
bench_sock_LIBS := -lpthread
BENCHES += bench_sock_pressure
bench_sock_pressure_SRCS := tests/bench/bench_sock_pressure.c $(SOCK_SRCS) $(OOB_SRCS) $(BASE_SRCS)
bench_sock_pressure_LIBS := -lpthread

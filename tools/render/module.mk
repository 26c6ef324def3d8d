# SPDX-License-Identifier: Apache-2.0
# tools/render/: the renderers.  Their sources are listed in tools/module.mk;
# the tests of its modules are here (the whole-output checks are scripts in
# tests/reader/, run against every renderer at once).

# verdict's alike lines (tools/render/alike_text.c) on hand-made lines: host ranges, numbers, problems apart
TESTS += test_alike
test_alike_SRCS = tests/unit/test_alike.c $(READER_SRCS) $(BASE_SRCS)
test_alike_LIBS := -lzstd -lm -lcmocka

# the JSON writer of every --json output (tools/render/json.c): layout, numbers,
# escaping, UTF-8 kept or replaced
TESTS += test_json
test_json_SRCS = tests/unit/test_json.c tools/render/json.c
test_json_LIBS := -lm -lcmocka

# the text renderers' shared pieces (tools/render/text.c): columns, cells,
# wrapping within GT_REPORT_COLS on generated texts, histogram bars
TESTS += test_text
test_text_SRCS = tests/unit/test_text.c $(READER_SRCS) $(BASE_SRCS)
test_text_LIBS := -lzstd -lm -lcmocka

# export's metric set and Prometheus text (tools/render/prom.c): merging,
# order, placing, values, label escaping; promtool on real output:
# tests/reader/test-prometheus.sh
TESTS += test_prom
test_prom_SRCS = tests/unit/test_prom.c tests/reader/fixture.c tools/render/prom.c $(READER_SRCS) \
                 $(BASE_SRCS)
test_prom_LIBS := -lzstd -lm -lcmocka

# the next step for each outcome (tools/render/next.c), on folded fixture jobs
TESTS += test_next
test_next_SRCS = tests/unit/test_next.c tests/reader/fixture.c $(READER_SRCS) $(BASE_SRCS)
test_next_LIBS := -lzstd -lm -lcmocka

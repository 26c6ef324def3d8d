# Reader tests (owner: reader): fixture writer + parser/verdict self-test,
# hostile-file test, and the command-line tests.
TESTS += reader_fixture
reader_fixture_SRCS = tests/reader/fx_main.c tests/reader/fixture.c $(READER_SRCS) $(BASE_SRCS)
reader_fixture_LIBS := -lzstd -lm
TEST_SCRIPTS += tests/reader/test-emulated.sh
TEST_SCRIPTS += tests/reader/test-cli.sh tests/reader/test-output.sh tests/reader/test-escape.sh
TEST_SCRIPTS += tests/reader/test-empty.sh
# a misspelt command, a path or --job that matches nothing, watch on a bad path
TEST_SCRIPTS += tests/reader/test-cli-mistakes.sh tests/reader/test-help.sh
# The three groups (host pressure) on the harness's recorders: staged vs unregistered, identical runs.
TEST_SCRIPTS += tests/reader/test-hostp.sh
# the collective sections (format 1.6) through every renderer
TEST_SCRIPTS += tests/reader/test-coll.sh
# what another local user planted, inputs that are not regular files
TEST_SCRIPTS += tests/reader/test-trust.sh
# report's HTML page: escaping, grid, packing (C); the page in a real browser (script)
TESTS += reader_html
reader_html_SRCS = tests/reader/html_test.c tests/reader/fixture.c $(READER_SRCS) $(BASE_SRCS)
reader_html_LIBS := -lzstd -lm
TEST_SCRIPTS += tests/reader/test-report-html.sh
BENCHES += reader_bench
reader_bench_SRCS = tests/reader/bench_reader.c tests/reader/fixture.c $(READER_SRCS) $(BASE_SRCS)
reader_bench_LIBS := -lzstd -lm
TEST_SCRIPTS += tests/reader/test-harness.sh
TEST_SCRIPTS += tests/reader/test-format-compat.sh
# prune's race windows, forced by wrapping the system calls of tools/cmd/cmd_prune.c
TESTS += reader_prune
reader_prune_SRCS = tests/reader/prune_race.c tests/reader/fixture.c $(READER_SRCS) $(BASE_SRCS) \
                    tools/cmd/options.c tools/render/json_prune.c
reader_prune_LIBS := -lzstd -lm
TEST_SCRIPTS += tests/reader/test-prune.sh
TEST_SCRIPTS += tests/reader/test-epilog.sh
# export --prometheus: promtool clean, conventional labels, the exited window
TEST_SCRIPTS += tests/reader/test-prometheus.sh
# GdrtraceFallbacks through promtool on real exporter output, scrape by scrape
TEST_SCRIPTS += tests/reader/test-alert-fallbacks.sh
# the same read back by a real node_exporter + Prometheus on loopback
TEST_SCRIPTS += tests/reader/test-prometheus-live.sh
# Bounded memory and scale (owner: reader): reader_scale generates sparse
# recorders and zstd bombs and measures a child's peak RSS; test-bounded.sh
# holds the regression tests, bench-scale.sh the `make bench` figures.
TESTS += reader_scale
reader_scale_SRCS = tests/reader/scale.c tests/reader/fixture.c $(READER_SRCS) $(BASE_SRCS)
reader_scale_LIBS := -lzstd -lm
TEST_SCRIPTS += tests/reader/test-bounded.sh
# ls, diff, export, summary --full/--json fold each recorder as read: peak RSS over 256 bounded
TEST_SCRIPTS += tests/reader/test-fold-mem.sh
# summary at a thousand ranks (issue 21): short, exact, ? not -1, width, order, next:
TEST_SCRIPTS += tests/reader/test-summary-scale.sh
# verdict at a thousand ranks: alike lines collapse, differing ones in full, exit and JSON as before
TEST_SCRIPTS += tests/reader/test-verdict-scale.sh
BENCH_SCRIPTS += tests/reader/bench-scale.sh
# docs/examples/ equals what gdrtrace prints now (gen-examples.sh), no dangling references.
TEST_SCRIPTS += tests/reader/check-examples.sh
# watch's frames (issue 21): rates from known counter deltas, severity order,
# the frame fits rows x cols; test-watch.sh: the command (sizes, rates between
# two frames, a pseudo-terminal: SIGWINCH, restore on q and SIGTERM; 512 recorders)
TESTS += reader_watch
reader_watch_SRCS = tests/reader/watch.c tests/reader/fixture.c $(READER_SRCS) $(BASE_SRCS)
reader_watch_LIBS := -lzstd -lm
TEST_SCRIPTS += tests/reader/test-watch.sh
# verdict/summary --nccl-log on harness recorders and on the fixtures
TEST_SCRIPTS += tests/reader/test-nccl-log.sh
# The A/B judge calibrated with real mechanisms (tests/ab/): LD_PRELOAD
# libraries that add host CPU in every process (children too) and slow the
# data path around the socket calls; ab-calibration.sh runs A/A and power
# (fast settings here, the full curve effect size x k in make bench).
AB_INJECT := $(BUILD)/tests/libab_inject_cpu.so $(BUILD)/tests/libab_inject_delay.so
$(BUILD)/tests/libab_inject_%.so: $(call obj,tests/ab/inject_%.c)
	@mkdir -p $(dir $@)
	$(call say,LD,$@)
	$(Q)$(CC) -shared -o $@ $< $(LDFLAGS) -ldl -lpthread
tests: $(AB_INJECT)
TEST_SCRIPTS += tests/reader/test-ab.sh
TEST_SCRIPTS += tests/ab/ab-calibration.sh
BENCH_SCRIPTS += tests/ab/bench-ab-calibration.sh

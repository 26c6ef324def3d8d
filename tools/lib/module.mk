# SPDX-License-Identifier: Apache-2.0
# tools/lib/: the reader's library.  Its sources are listed in tools/module.mk
# (READER_SRCS and the lists beside it); the tests of its modules are here.

# NCCL's log (tools/lib/nccllog.c): the fixtures of tests/reader/nccl-logs, launcher
# prefixes, any split of the stream, attribution, junk in bounded memory.
TESTS += test_nccllog
test_nccllog_SRCS = tests/unit/test_nccllog.c $(NCCLLOG_SRCS)
test_nccllog_LIBS := -lcmocka

# the network-filesystem table of `run` and the reader (tools/lib/netfs.c)
TESTS += test_netfs
test_netfs_SRCS = tests/run/test_netfs.c tools/lib/netfs.c

# the one open of a file read to its end (tools/lib/regfile.c): regular file
# kept, FIFO/device/directory refused without waiting, open errors kept
TESTS += test_regfile
test_regfile_SRCS = tests/unit/test_regfile.c tools/lib/regfile.c
test_regfile_LIBS := -lcmocka

# the verdict rules (tools/lib/verdict.c): each verdict from hand-made counters,
# the precedence of docs/reader.md on every pair, names and exit codes
TESTS += test_verdict
test_verdict_SRCS = tests/unit/test_verdict.c $(READER_SRCS) $(BASE_SRCS)
test_verdict_LIBS := -lzstd -lm -lcmocka

# the model's index table (tools/lib/htab.c): FNV-1a vectors, growth, collisions
TESTS += test_htab
test_htab_SRCS = tests/unit/test_htab.c tools/lib/htab.c
test_htab_LIBS := -lcmocka

# strict durations and a recorder's last activity (tools/lib/duration.c)
TESTS += test_duration
test_duration_SRCS = tests/unit/test_duration.c tools/lib/duration.c $(READER_SRCS) $(BASE_SRCS)
test_duration_LIBS := -lzstd -lm -lcmocka

# appending, natural order, number formats (tools/lib/text_util.c)
TESTS += test_text_util
test_text_util_SRCS = tests/unit/test_text_util.c tools/lib/text_util.c
test_text_util_LIBS := -lcmocka

# terminal-safe strings (tools/lib/esc.c); the commands' output: tests/reader/test-escape.sh
TESTS += test_esc
test_esc_SRCS = tests/unit/test_esc.c tools/lib/esc.c
test_esc_LIBS := -lcmocka

# the recorder parser (tools/lib/recfile.c): corrupt, truncated and hostile
# images refused with a message naming source and problem, never overread
TESTS += test_recfile
test_recfile_SRCS = tests/unit/test_recfile.c tests/reader/fixture.c $(READER_SRCS) $(BASE_SRCS)
test_recfile_LIBS := -lzstd -lm

# the read of a live recorder (tools/lib/recfile_read.c) against a writer
# lapping a 64-slot ring: no torn event accepted (also under TSan)
TESTS += test_recfile_read
test_recfile_read_SRCS = tests/unit/test_recfile_read.c $(SHIM_TEST_SRCS)
test_recfile_read_LIBS := -lpthread -ldl

# where an output may be written (tools/lib/outfile.c): what is refused, and why
TESTS += test_outfile
test_outfile_SRCS = tests/unit/test_outfile.c tools/lib/outfile.c $(RECFILE_SRCS) $(BASE_SRCS)
test_outfile_LIBS := -lzstd -lm -lcmocka

# an owner's uid as a name (tools/lib/owner.c)
TESTS += test_owner
test_owner_SRCS = tests/unit/test_owner.c tools/lib/owner.c
test_owner_LIBS := -lcmocka

# a process's fate from its recorder (tools/lib/fate.c), on fixture recorders
TESTS += test_fate
test_fate_SRCS = tests/unit/test_fate.c tests/reader/fixture.c $(READER_SRCS) $(BASE_SRCS)
test_fate_LIBS := -lzstd -lm -lcmocka

# whether a recorder's writer still runs (tools/lib/liveness.c), one rule at a
# time, this test process standing for the writer
TESTS += test_liveness
test_liveness_SRCS = tests/unit/test_liveness.c $(RECFILE_SRCS) $(BASE_SRCS)
test_liveness_LIBS := -lzstd -lm -lcmocka

# dump archives (tools/lib/archive.c) written and read back: members, sparse
# pages, the cap, truncation, replace and abort
TESTS += test_archive
test_archive_SRCS = tests/unit/test_archive.c tests/reader/fixture.c $(READER_SRCS) $(BASE_SRCS)
test_archive_LIBS := -lzstd -lm -lcmocka

# NCCL's log from streams, files and folders (tools/lib/nccllog_read.c): any
# split, long lines, what is refused or skipped, name order, the owner rule
TESTS += test_nccllog_read
test_nccllog_read_SRCS = tests/unit/test_nccllog_read.c $(NCCLLOG_SRCS)
test_nccllog_read_LIBS := -lcmocka

# the kernel's dma-buf list (tools/lib/kcorr.c): bufinfo parsed, paths refused
TESTS += test_kcorr
test_kcorr_SRCS = tests/unit/test_kcorr.c $(READER_SRCS) $(BASE_SRCS)
test_kcorr_LIBS := -lzstd -lm -lcmocka

# what NCCL's log reader keeps (tools/lib/nccllog_state.c): processes by short
# host, records and phases under their caps, the GPU Direct line
TESTS += test_nccllog_state
test_nccllog_state_SRCS = tests/unit/test_nccllog_state.c $(NCCLLOG_SRCS)
test_nccllog_state_LIBS := -lcmocka

# NCCL's recorded settings as the reader words them (tools/lib/ncclcfg.c)
TESTS += test_ncclcfg
test_ncclcfg_SRCS = tests/unit/test_ncclcfg.c tools/lib/ncclcfg.c tools/lib/text_util.c $(BASE_SRCS)
test_ncclcfg_LIBS := -lcmocka

# facts of one recorder decided once (tools/lib/recfact.c): strings before
# format 1.8, codes from it
TESTS += test_recfact
test_recfact_SRCS = tests/unit/test_recfact.c tools/lib/recfact.c common/codes.c
test_recfact_LIBS := -lcmocka

# the A/B judgement (tools/lib/ab.c) on folded fixture jobs: itself, confounders,
# the mechanism, latency beyond and within noise
TESTS += test_ab
test_ab_SRCS = tests/unit/test_ab.c tests/reader/fixture.c $(READER_SRCS) $(BASE_SRCS)
test_ab_LIBS := -lzstd -lm -lcmocka

# the fold of recorders into the job's model (tools/lib/model.c), through its
# public calls: merging by commId, report order, fold = build, the rank that differs
TESTS += test_model
test_model_SRCS = tests/unit/test_model.c tests/reader/fixture.c $(READER_SRCS) $(BASE_SRCS)
test_model_LIBS := -lzstd -lm -lcmocka

# PATH arguments to the job's model (tools/lib/load.c): whole or folded alike,
# an unreadable path, a folder with no recorder
TESTS += test_load
test_load_SRCS = tests/unit/test_load.c tests/reader/fixture.c $(READER_SRCS) $(BASE_SRCS)
test_load_LIBS := -lzstd -lm -lcmocka

# command-line paths to recorders (tools/lib/inputs.c), by its public calls:
# folders, archives, duplicates, skipped names, --job, bad paths
TESTS += test_inputs
test_inputs_SRCS = tests/unit/test_inputs.c tests/reader/fixture.c $(READER_SRCS) $(BASE_SRCS)
test_inputs_LIBS := -lzstd -lm -lcmocka

# the join's step 3b (tools/lib/nccljoin_order.c): channel lines by connection
# order on the lazy four-communicator log; the whole join: tests/reader/test-nccl-log.sh
TESTS += test_nccljoin_order
test_nccljoin_order_SRCS = tests/unit/test_nccljoin_order.c tests/reader/fixture.c $(READER_SRCS) $(BASE_SRCS)
test_nccljoin_order_LIBS := -lzstd -lm -lcmocka

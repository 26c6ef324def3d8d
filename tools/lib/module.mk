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

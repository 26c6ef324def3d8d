# Reader fuzzing (owner: reader).  fuzz_replay replays the checked-in corpus
# in every build; run-fuzz.sh builds the libFuzzer target with clang and
# fuzzes for GDRTRACE_FUZZ_SECONDS (default 30).
TESTS += fuzz_replay
fuzz_replay_SRCS = tests/fuzz/replay.c tests/fuzz/fuzz_recfile.c $(READER_SRCS) $(BASE_SRCS)
fuzz_replay_LIBS := -lzstd -lm
TEST_SCRIPTS += tests/fuzz/run-fuzz.sh

# Out-of-band setup fuzzing (owner: oob): the hello parser with ib's setup
# message check.  fuzz_oob_replay replays tests/fuzz/oob-corpus in every
# build; run-fuzz-oob.sh fuzzes it with clang's libFuzzer.
TESTS += fuzz_oob_replay
fuzz_oob_replay_SRCS := tests/fuzz/replay.c tests/fuzz/fuzz_oob.c $(IB_SRCS) $(OOB_SRCS) \
                        $(REG_SRCS) $(DL_SRCS) $(BASE_SRCS)
fuzz_oob_replay_LIBS := -ldl -lpthread
TEST_SCRIPTS += tests/fuzz/run-fuzz-oob.sh

# sock control-stream fuzzing (owner: sock): gt_sock_frame, the framing
# gt_sock_read_ctrl parses a peer's bytes with.  fuzz_sock_replay replays
# tests/fuzz/sock-corpus in every build; run-fuzz-oob.sh fuzzes it too.
TESTS += fuzz_sock_replay
fuzz_sock_replay_SRCS := tests/fuzz/replay.c tests/fuzz/fuzz_sock.c $(SOCK_SRCS) $(OOB_SRCS) \
                         $(BASE_SRCS)
fuzz_sock_replay_LIBS := -lpthread

# NCCL log reader fuzzing (owner: reader, --nccl-log): tools/lib/nccllog.c and its
# join.  fuzz_nccllog_replay replays tests/fuzz/nccllog-corpus in every build;
# run-fuzz.sh fuzzes it too.
TESTS += fuzz_nccllog_replay
fuzz_nccllog_replay_SRCS = tests/fuzz/replay.c tests/fuzz/fuzz_nccllog.c $(READER_SRCS) $(BASE_SRCS)
fuzz_nccllog_replay_LIBS := -lzstd -lm

# Reader fuzzing (owner: reader).  fuzz_replay replays the checked-in corpus
# in every build; run-fuzz.sh builds the libFuzzer target with clang and
# fuzzes for GDRTRACE_FUZZ_SECONDS (default 30).
TESTS += fuzz_replay
fuzz_replay_SRCS = tests/fuzz/replay.c tests/fuzz/fuzz_recfile.c $(READER_SRCS) $(BASE_SRCS)
fuzz_replay_LIBS := -lzstd -lm
TEST_SCRIPTS += tests/fuzz/run-fuzz.sh

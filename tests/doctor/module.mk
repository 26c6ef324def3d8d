# SPDX-License-Identifier: Apache-2.0
# doctor tests: the CLI on this machine and on fixture trees (shell), and the
# judgement with fake CUDA/verbs tables installed through plugin/dl's seam (C).
TEST_SCRIPTS += tests/doctor/doctor-cli.sh

# recursive (=): DOCTOR_SRCS is set by tools/cmd/doctor/module.mk, included after this file
TESTS += test_doctor
test_doctor_SRCS = tests/doctor/test_doctor.c $(DOCTOR_SRCS) common/dl/gt_ibv.c \
                   common/dl/gt_cuda.c $(FINGERPRINT_SRCS) $(BASE_SRCS)
test_doctor_LIBS := -ldl -lpthread

# The --compare reader on hostile documents: the fuzz target replays its
# checked-in corpus in every build; run-fuzz-doctor.sh fuzzes it with clang.
TESTS += fuzz_doctor_replay
fuzz_doctor_replay_SRCS = tests/doctor/fuzz_doctor_replay.c tools/cmd/doctor/doctor_json.c \
                          tools/cmd/doctor/compare.c tools/cmd/doctor/inventory.c $(FINGERPRINT_SRCS)
fuzz_doctor_replay_LIBS := -ldl
TEST_SCRIPTS += tests/doctor/run-fuzz-doctor.sh

# git keeps no empty folders, but real sysfs has them (a module with no
# parameters, a port with no GIDs): recreate the fixtures' empty folders,
# listed in empty-dirs.txt, before any test reads the trees.
.PHONY: doctor-fixture-dirs
doctor-fixture-dirs:
	@grep -v '^#' tests/doctor/fixtures/empty-dirs.txt | xargs -r -d '\n' mkdir -p
tests: doctor-fixture-dirs

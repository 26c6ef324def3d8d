# SPDX-License-Identifier: Apache-2.0
# doctor tests: the CLI on this machine and on fixture trees (shell), and the
# judgement with fake CUDA/verbs tables installed through plugin/dl's seam (C).
TEST_SCRIPTS += tests/doctor/doctor-cli.sh

# SPDX-License-Identifier: Apache-2.0
# tests/fieldtest: the shipped field kit (dist/gdrtrace-fieldtest) — its dry
# run on a machine with no tool, no NIC and one node says what it would run;
# a run with stand-in tools fills the evidence folder and SUMMARY.md.
TEST_SCRIPTS += tests/fieldtest/check-fieldtest.sh

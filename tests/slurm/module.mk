# SPDX-License-Identifier: Apache-2.0
# tests/slurm: the canary path under a real one-node Slurm (slurmctld,
# slurmd, munge started by the test): srun gdrtrace run per rank, the shipped
# epilog at job end, the job's verdict from its archives.
TEST_SCRIPTS += tests/slurm/test-slurm.sh

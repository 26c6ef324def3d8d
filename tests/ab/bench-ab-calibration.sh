#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bench-ab-calibration.sh — make bench: the A/B judge's full power curve,
# effect size x k = 3, 5, 10, and the A/A rate at each k
# (tests/ab/ab-calibration.sh in AB_MODE=bench; docs/results/ab-calibration.md).
AB_MODE=bench exec "$(dirname "$0")/ab-calibration.sh"

# SPDX-License-Identifier: Apache-2.0
# tests/layers: includes point only down (the rule is in docs/hacking.md).
TEST_SCRIPTS += tests/layers/check-layers.sh

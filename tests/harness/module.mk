# SPDX-License-Identifier: Apache-2.0
# tests/harness: the NCCL-like driver of the built plugin, and the export check.
TEST_SCRIPTS += tests/harness/check_exports.sh

# SPDX-License-Identifier: Apache-2.0
# tests/format: C sources match .clang-format (clang-format 14, pinned).
TEST_SCRIPTS += tests/format/check-format.sh

# SPDX-License-Identifier: Apache-2.0
# tests/docs: the user documentation stays true to the code.
TEST_SCRIPTS += tests/docs/check-config-doc.sh

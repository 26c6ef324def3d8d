# SPDX-License-Identifier: Apache-2.0
# tests/docs: the user documentation stays true to the code.
TEST_SCRIPTS += tests/docs/check-config-doc.sh
# reference docs: links resolve; no machine path, notes, issue number or commit as history
TEST_SCRIPTS += tests/docs/check-doc-links.sh

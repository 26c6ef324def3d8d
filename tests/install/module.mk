# SPDX-License-Identifier: Apache-2.0
# tests/install: what `make install` and `make deb` deliver — the man pages
# and the bash completion against --help, the install layout, and the Debian
# package installed, used by name through NCCL's lookup, and purged.
# check-quickstart.sh runs README's quick-start block line by line.
TEST_SCRIPTS += tests/install/check-man.sh tests/install/check-completion.sh \
                tests/install/check-install.sh tests/install/check-deb.sh \
                tests/install/check-quickstart.sh tests/install/check-uninstall.sh
# the shipped export timer (dist/systemd/): its command, install, systemd-analyze
TEST_SCRIPTS += tests/install/check-systemd.sh

# SPDX-License-Identifier: Apache-2.0
# dist/: what a user installs beside the binaries — the man pages and the bash
# completion, both generated from the command's own --help texts (one source,
# dist/gen-man.sh, dist/gen-completion.sh) — and the install layout:
#   $(BINDIR)/gdrtrace-fieldtest             the two-node field kit (a script,
#                                            docs/fieldtest.md)
#   $(BINDIR)/gdrtrace                       the command, never in a library folder
#                                            (NCCL dlopens the bare name "gdrtrace"
#                                            along LD_LIBRARY_PATH first)
#   $(LIBDIR)/libnccl-net-gdrtrace.so        the plugin, found by name through the
#                                            linker's path (NCCL_NET_PLUGIN=gdrtrace)
#   $(LIBDIR)/nccl-net-gdrtrace/libnccl-net-gdrtrace.so  a link to it in a folder
#                                            with nothing else, to prepend to
#                                            LD_LIBRARY_PATH (not named "gdrtrace":
#                                            the bare name is looked up there too)
#   $(LIBEXECDIR)/gdrtrace/gdrtrace-gpumem-copier  the GPU-memory validation layer's
#                                            copier process (docs/gpumem.md); the
#                                            plugin finds it from its own folder
#                                            (../libexec, ../../libexec) or by the
#                                            path compiled in
#   $(MANDIR)/man1/gdrtrace*.1, $(BASHCOMPDIR)/gdrtrace, $(DOCDIR)/
#   $(SYSTEMDUNITDIR)/gdrtrace-export.{service,timer}  export into node_exporter's
#                                            textfile folder every 30 s, installed
#                                            disabled (dist/systemd/, docs/metrics.md);
#                                            the service's @BINDIR@ becomes $(BINDIR)
# `make deb` builds the Debian package (debian/) with the same layout.
BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib
LIBEXECDIR ?= $(PREFIX)/libexec
MANDIR ?= $(PREFIX)/share/man
DOCDIR ?= $(PREFIX)/share/doc/gdrtrace
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
PLUGINDIR = $(LIBDIR)/nccl-net-gdrtrace
BUILD_PLUGINDIR := $(BUILD)/nccl-net-gdrtrace

MAN_DIR := $(BUILD)/man
MAN_STAMP := $(MAN_DIR)/.generated
COMPLETION := $(BUILD)/completion/gdrtrace

all: $(MAN_STAMP) $(COMPLETION) $(BUILD_PLUGINDIR)/libnccl-net-gdrtrace.so

# The build tree has the plugin-only folder too, beside the command as
# $(PLUGINDIR) is beside $(BINDIR)/../lib: `gdrtrace run` works uninstalled.
$(BUILD_PLUGINDIR)/libnccl-net-gdrtrace.so: | $(PLUGIN)
	@mkdir -p $(dir $@)
	$(call say,LN,$@)
	$(Q)ln -sfn ../libnccl-net-gdrtrace.so $@

$(MAN_STAMP): $(TOOL) dist/gen-man.sh dist/gdrtrace-fieldtest
	$(call say,GEN,$(MAN_DIR)/gdrtrace*.1)
	$(Q)dist/gen-man.sh $(TOOL) $(MAN_DIR) && touch $@

$(COMPLETION): $(TOOL) dist/gen-completion.sh
	@mkdir -p $(dir $@)
	$(call say,GEN,$@)
	$(Q)dist/gen-completion.sh $(TOOL) $@

.PHONY: uninstall deb
# The recipes are dist/install.sh (a manifest of what install wrote; what
# uninstall removes; a path with whitespace refused); the variables reach it
# single-quoted, so a value with a quote is refused here.
INSTALL_ENV = DESTDIR PREFIX BINDIR LIBDIR LIBEXECDIR MANDIR DOCDIR BASHCOMPDIR SYSTEMDUNITDIR \
    PLUGIN TOOL COPIER MAN_DIR COMPLETION
install_env = $(foreach v,$(INSTALL_ENV),$(if $(findstring ',$($(v))),$(error $(v) holds a quote: refused),$(v)='$($(v))'))
install: all
	@env $(install_env) dist/install.sh install

# Removes exactly what install wrote (its manifest), then our folders if empty.
uninstall:
	@env $(install_env) dist/install.sh uninstall

# The Debian package, in build/deb/ (dpkg-buildpackage writes next to the
# source tree, so it builds from a copy).  Build dependencies: install-deps.sh deb.
deb:
	@scripts/install-deps.sh deb
	@dist/build-deb.sh

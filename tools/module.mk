TOOL_SRCS += tools/main.c
# The reader (owner: reader).  READER_SRCS is the library part, shared with
# tests/reader and tests/fuzz; the cmd_*.c files define the gt_cmd_* of commands.h.
READER_SRCS := $(RECFILE_SRCS) tools/hist.c tools/archive.c tools/inputs.c \
               tools/model.c tools/ncclcfg.c tools/json.c tools/report.c tools/alike.c tools/kcorr.c tools/outfile.c tools/esc.c tools/duration.c \
               tools/html.c tools/nccllog.c tools/nccljoin.c tools/hostp.c tools/ab.c tools/html_host.c \
               tools/coll.c tools/html_coll.c \
               common/codes.c
# watch's frames (tools/watch_frame.c): the command and tests/reader/watch_frame.c
READER_SRCS += tools/watch_frame.c
TOOL_SRCS += $(READER_SRCS) tools/cmd_ls.c tools/cmd_summary.c tools/cmd_verdict.c \
             tools/cmd_dump.c tools/cmd_diff.c \
             tools/cmd_export.c tools/cmd_watch.c tools/cmd_prune.c \
             tools/cmd_html.c tools/cmd_run.c tools/netfs.c tools/runline.c
# run finds the plugin installed with it in $BINDIR/../lib/<multiarch>/ too (the
# Debian package's LIBDIR): the compiler's triplet, as dpkg's DEB_HOST_MULTIARCH.
GT_MULTIARCH := $(shell $(CC) -print-multiarch 2>/dev/null)
ifneq ($(GT_MULTIARCH),)
$(call obj,tools/cmd_run.c): CPPFLAGS += -DGT_MULTIARCH='"$(GT_MULTIARCH)"'
endif

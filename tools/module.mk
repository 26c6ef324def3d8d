TOOL_SRCS += tools/cmd/main.c
# The reader (owner: reader).  READER_SRCS is the library part, shared with
# tests/reader and tests/fuzz; the cmd_*.c files define the gt_cmd_* of commands.h.
READER_SRCS := $(RECFILE_SRCS) tools/lib/hist.c tools/lib/archive.c tools/lib/inputs.c \
               tools/lib/model.c tools/lib/ncclcfg.c tools/lib/alike.c tools/lib/kcorr.c tools/lib/outfile.c tools/lib/esc.c tools/lib/duration.c \
               tools/lib/hostp.c tools/lib/ab.c tools/lib/abstat.c tools/lib/coll.c tools/lib/load.c tools/lib/owner.c \
               common/codes.c
# NCCL's log (--nccl-log): the reader (NCCLLOG_SRCS, alone in tests/unit/test_nccllog),
# its join to the recorders, and the join's text and JSON.
NCCLLOG_SRCS := tools/lib/nccllog.c tools/lib/nccllog_state.c tools/lib/nccllog_read.c tools/lib/regfile.c
READER_SRCS += $(NCCLLOG_SRCS) tools/lib/nccljoin.c tools/lib/nccljoin_order.c \
               tools/render/nccljoin_text.c tools/render/json_nccljoin.c
# the model's parts (owner: model): verdict rules, process fate, hash table, text
READER_SRCS += tools/lib/verdict.c tools/lib/fate.c tools/lib/htab.c tools/lib/text_util.c
# the renderers (tools/render/): functions of the model, text, JSON, HTML
READER_SRCS += tools/render/text.c tools/render/next.c tools/render/json.c \
               tools/render/summary.c tools/render/summary_job.c tools/render/summary_comms.c \
               tools/render/summary_proc.c tools/render/json_summary.c \
               tools/render/ab_text.c tools/render/json_ab.c tools/render/hostp_text.c \
               tools/render/json_hostp.c tools/render/coll_text.c tools/render/json_coll.c \
               tools/render/alike_text.c \
               tools/render/html.c tools/render/html_host.c tools/render/html_coll.c \
               tools/render/html_latency.c
# watch's frames (tools/render/watch_frame.c): the command and tests/reader/watch_frame.c
READER_SRCS += tools/render/watch_frame.c
TOOL_SRCS += $(READER_SRCS) tools/cmd/cmd_ls.c tools/cmd/cmd_summary.c tools/cmd/cmd_verdict.c \
             tools/cmd/cmd_dump.c tools/cmd/cmd_diff.c tools/lib/abguard.c tools/render/ab_tables.c \
             tools/cmd/cmd_export.c tools/cmd/cmd_watch.c tools/cmd/cmd_prune.c \
             tools/cmd/cmd_report.c tools/cmd/cmd_run.c tools/lib/netfs.c tools/cmd/runline.c \
             tools/cmd/run_launch.c tools/cmd/run_collect.c
# the commands' shared options, and the JSON documents of verdict, ls, prune,
# diff and export and export's Prometheus text (owner: cmd)
TOOL_SRCS += tools/cmd/options.c tools/render/json_verdict.c tools/render/json_ls.c \
              tools/render/prom.c tools/render/json_export.c tools/render/json_diff.c \
              tools/render/json_prune.c tools/render/json_summary_nccl.c
# run finds the plugin installed with it in $BINDIR/../lib/<multiarch>/ too (the
# Debian package's LIBDIR): the compiler's triplet, as dpkg's DEB_HOST_MULTIARCH.
GT_MULTIARCH := $(shell $(CC) -print-multiarch 2>/dev/null)
ifneq ($(GT_MULTIARCH),)
$(call obj,tools/cmd/cmd_run.c): CPPFLAGS += -DGT_MULTIARCH='"$(GT_MULTIARCH)"'
endif

# The `inner` transport: forward to (and trace) another NCCL net plugin.
PLUGIN_SRCS += plugin/inner/inner.c

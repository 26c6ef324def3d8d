PLUGIN_SRCS += shim/shim.c

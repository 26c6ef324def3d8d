# Shared by the plugin, the command and the tests.
COMMON_SRCS += plugin/log.c plugin/env.c

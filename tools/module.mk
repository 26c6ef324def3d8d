TOOL_SRCS += tools/main.c

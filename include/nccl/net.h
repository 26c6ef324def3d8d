/* SPDX-License-Identifier: Apache-2.0 */
/*
 * net.h — every NCCL net plugin ABI version gdrtrace exports (v6 … v12).
 * Each version lives in its own header so a layout change is reviewed
 * against that version's facts alone.
 */
#ifndef GDRTRACE_NCCL_NET_H
#define GDRTRACE_NCCL_NET_H

#include "nccl/net_v10.h"
#include "nccl/net_v11.h"
#include "nccl/net_v12.h"
#include "nccl/net_v6.h"
#include "nccl/net_v7.h"
#include "nccl/net_v8.h"
#include "nccl/net_v9.h"

#define GT_NCCL_ABI_MIN 6
#define GT_NCCL_ABI_MAX 12

#endif /* GDRTRACE_NCCL_NET_H */

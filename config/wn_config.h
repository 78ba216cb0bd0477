/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Compile-time limits of warpnic. Runtime defaults live in config/warpnicd.conf.
 */
#ifndef WN_CONFIG_H
#define WN_CONFIG_H

#include "wn_build_config.h"

/** Largest MPA Private Data a frame may carry (RFC 5044 §7.1.1). */
#define WN_MPA_MAX_PD_LEN 512

/** Smallest and largest MULPDU (RFC 5044 §4.5). */
#define WN_MULPDU_MIN 128
#define WN_MULPDU_MAX 64768

/** Marker interval in TCP sequence space (RFC 5044 §4.2). */
#define WN_MARKER_INTERVAL 512

#endif /* WN_CONFIG_H */

/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The iWARP wire core (MPA RFC 5044 + RFC 6581, DDP RFC 5041, RDMAP RFC 5040 +
 * RFC 7306; the DDP/SCTP adaptation of RFC 5043): header layouts, encoders, strict decoders, CRC, FPDU framing.
 * Plain C without DPDK; the RFC section is named beside each layout.
 */
#ifndef WN_WIRE_H
#define WN_WIRE_H

#include "wn_wire_crc.h"
#if __has_include("wn_wire_mpa.h")
#include "wn_wire_mpa.h"
#endif
#if __has_include("wn_wire_ddp.h")
#include "wn_wire_ddp.h"
#endif
#include "wn_wire_sctp.h"

#endif /* WN_WIRE_H */

/*
 * terminal/control/probe.h
 *		A second control connection of one host (D-M2-47-7, 13): the node
 *		of the older connection probes it; no answer within
 *		bothy.terminal_host_duplicate_probe_timeout closes it with 4009 and
 *		the newer one goes on; an answer signed with the host's key is the
 *		duplicate verdict (bothy.terminal_host_duplicate): the host goes
 *		back to pairing, every node closes its connections of the host
 *		with 4110 (terminal.host_close), and this node closes the probed
 *		one with 4112.  The node of the newer connection announces it at
 *		once when it hears an older one.  Older and newer: by conn ID,
 *		UUIDv7s of the accepting nodes' clocks (the order rests on
 *		synchronised clocks).
 *
 * Two connections of a host on this same node are compared the same way
 * when the newer one reports first, in either mode.
 */
#ifndef BOTHY_GATEWAY_TERMINAL_PROBE_H
#define BOTHY_GATEWAY_TERMINAL_PROBE_H

#include <stdint.h>

#include "terminal/control/connection.h"
#include "uuid.h"

/* Another node announced conn of host (terminal.host_present). */
void		gw_tprobe_heard(const bothy_uuid *host, const bothy_uuid *conn);

/* tc reported first: the older of it and each other connection of its host here is probed. */
void		gw_tprobe_local(gw_tconn *tc);

/* probe_ack on tc while its probe runs. */
void		gw_tprobe_answered(gw_tconn *tc, const uint8_t sig[GW_TSIG_BYTES]);

/* Its probe's deadline passed without an answer. */
void		gw_tprobe_expired(gw_tconn *tc);

#endif							/* BOTHY_GATEWAY_TERMINAL_PROBE_H */

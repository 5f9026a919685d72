/*
 * keys/node_keys.h
 *		The key store of a serving node: opened at start (a loose or
 *		missing one refuses the start), re-read when older than
 *		bothy.signing_key_cache_ttl, closed at exit.  Every route that
 *		signs or verifies a token asks gw_keys() for it.
 *
 * It registers with the core as a part without paths (core/route.h:
 * init and fini only), ahead of the routes, in main.c.
 */
#ifndef BOTHY_GATEWAY_NODE_KEYS_H
#define BOTHY_GATEWAY_NODE_KEYS_H

#include "core/route.h"
#include "keys/keystore.h"

/* The key store, refreshed when older than bothy.signing_key_cache_ttl. */
const bothy_keystore *gw_keys(void);

/* Its registration: opens --keys at init, closes it at fini. */
extern const gw_route gw_keys_part;

#endif							/* BOTHY_GATEWAY_NODE_KEYS_H */

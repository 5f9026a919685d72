/*
 * keys/node_keys.c
 *		The key store of a serving node (see node_keys.h).
 */
#include <stdio.h>

#include "core/node.h"
#include "keys/node_keys.h"
#include "logline.h"

static bothy_keystore *keys;

const bothy_keystore *
gw_keys(void)
{
	static bool failing;		/* one record per run of failures */
	char		err[256];

	/* a failed re-read keeps the keys loaded before (keystore.h) */
	if (!bothy_keystore_refresh(keys, gw_now_ms(), gw.cluster.signing_key_cache_ttl,
								err, sizeof(err)))
	{
		if (!failing)
			gw_log(GW_LOG_WARN, "key store could not be re-read, keeping the keys loaded");
		failing = true;
	}
	else
		failing = false;
	return keys;
}

static bool
open_keys(void)
{
	char		err[256];

	keys = bothy_keystore_open(gw.opt.keys, err, sizeof(err));
	if (keys == NULL)
	{
		gw_log(GW_LOG_ERROR, "key store refused");
		fprintf(stderr, "bothy-gateway: key store refused: %s\n", err);
		return false;
	}
	return true;
}

static void
close_keys(void)
{
	bothy_keystore_close(keys);
	keys = NULL;
}

const gw_route gw_keys_part = {
	.name = "keys",
	.init = open_keys,
	.fini = close_keys,
};

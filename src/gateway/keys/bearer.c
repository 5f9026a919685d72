/*
 * keys/bearer.c
 *		The Bearer token of an HTTP request, verified (bearer.h).
 */
#include <string.h>

#include "core/node.h"
#include "keys/bearer.h"
#include "keys/node_keys.h"
#include "logline.h"

#define BEARER "Bearer "

bool
gw_bearer_verify(struct lws *wsi, unsigned accept, const char *missing, const char *refused,
				 bothy_token *t)
{
	char		header[BOTHY_TOKEN_MAX + sizeof(BEARER) + 8];
	int			n = lws_hdr_copy(wsi, header, sizeof(header), WSI_TOKEN_HTTP_AUTHORIZATION);
	bothy_token_result result;

	if (n <= (int) strlen(BEARER) || strncmp(header, BEARER, strlen(BEARER)) != 0)
	{
		gw_log(GW_LOG_INFO, missing);
		return false;
	}
	result = bothy_token_verify(gw_keys(), header + strlen(BEARER), (size_t) n - strlen(BEARER),
								gw_now_ms() / 1000, accept, t);
	if (result != BOTHY_TOKEN_OK)
	{
		gw_logf(GW_LOG_INFO, refused, "reason=%s", bothy_token_result_name(result));
		return false;
	}
	return true;
}

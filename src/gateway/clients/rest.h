/*
 * clients/rest.h
 *		The node's REST calls under /v1/ (docs/protocol.md, "REST"):
 *
 *		GET /v1/agent/events    the agent event long poll: each call is a
 *		                        REST poll window, a new holder of the
 *		                        agent's stream (D-M7-17-4)
 *		GET /v1/agents/presence agents' presence from the stored rows, or
 *		                        this node's memory when newer (D-M7-17-10)
 *		GET /v1/presence        who of the persons asked, able to see a
 *		                        thread, is present on which device and node
 *
 * Each authenticates with "Authorization: Bearer <token>" (an agent token
 * for the poll, a person-device token for the others), parses its query
 * strictly (an unknown, repeated or malformed argument is 400), and answers
 * JSON.  Database calls are asynchronous: the answer is written when it is
 * ready, and a client that goes away cancels what it waited for.
 */
#ifndef BOTHY_GATEWAY_REST_H
#define BOTHY_GATEWAY_REST_H

#include <libwebsockets.h>

#include "core/conn.h"
#include "uuid.h"

typedef struct gw_rest gw_rest;

/* LWS_CALLBACK_HTTP of a path under /v1/: nonzero closes the connection. */
int			gw_rest_request(struct lws *wsi, gw_conn *c, const char *path);

/* gateway.agent_event: polls of agent waiting here read again. */
void		gw_rest_agent_event(const bothy_uuid *agent);

/*
 * The agent's stream was taken by session (a consumer here, or a signal):
 * a poll of agent waiting here under another session asks the hold row
 * whether it still holds (a takeover heard late may be older than its own)
 * and answers 409 when it does not.
 */
void		gw_rest_fenced(const bothy_uuid *agent, const bothy_uuid *session);

/* After a lost listener: every waiting poll reads again. */
void		gw_rest_reconcile(void);

/*
 * The node stops: every waiting poll answers now (with what it has), and a
 * poll that takes the stream from now on answers without waiting.
 */
void		gw_rest_stop(void);

/*
 * Calls whose answer has not gone out yet: not answered (their database
 * calls run), or answered and waiting for the writeable that sends the
 * headers.  The stop waits for them; the body after the headers is
 * counted by gw_http_bodies_owed().
 */
int			gw_rest_pending(void);

/*
 * The query pool is about to be destroyed with every call in it: no REST
 * call may cancel one later.
 */
void		gw_rest_forget_calls(void);

#endif							/* BOTHY_GATEWAY_REST_H */

/*
 * core/server.h
 *		The process: one libwebsockets context with its protocols table,
 *		the start steps (settings, node registration, listener) and the
 *		orderly stop on SIGTERM.
 */
#ifndef BOTHY_GATEWAY_SERVER_H
#define BOTHY_GATEWAY_SERVER_H

/* `bothy-gateway serve ...` (argv[0] == "serve"): the exit status. */
int			gw_serve(int argc, char **argv);

/* EVENT_WAIT_CANCELLED: a signal handler woke the loop. */
void		gw_server_wakeup(void);

#endif							/* BOTHY_GATEWAY_SERVER_H */

/*
 * main.c
 *		bothy-gateway: the command word and its dispatch, and the one
 *		place that wires the rooms together: `serve` registers the parts
 *		of the node with the core (core/route.h) before it starts.
 *
 *		core/      the loop, transport, HTTP, pool, listener, metrics: no route
 *		keys/      the key store and tokens, and their commands
 *		clients/   the gateway route: people's devices and agent consumers
 *		terminal/  the terminal route: host services' control connections,
 *		           both stream sides of each session, the terminal's REST
 *
 *			bothy-gateway serve --listen ADDR:PORT --database CONNINFO --keys DIR
 *			bothy-gateway token person --person P --device D
 *			bothy-gateway token agent --agent A
 *			bothy-gateway keys rotate
 *			bothy-gateway --version
 *
 * Exit status: 0 done, 1 failed or refused to start (the reason on
 * stderr), 2 usage error.
 */
#include <stdio.h>
#include <string.h>

#include "clients/clients.h"
#include "core/route.h"
#include "core/server.h"
#include "keys/cli_keys.h"
#include "keys/node_keys.h"
#include "terminal/route.h"

static const char usage[] =
"usage: bothy-gateway COMMAND [options]\n"
"\n"
"  serve          run a gateway node (bothy-gateway serve --help)\n"
"  token person   mint a person-device token (bothy-gateway token --help)\n"
"  token agent    mint an agent token\n"
"  keys rotate    add a signing key to the key store (bothy-gateway keys --help)\n"
"  --version      print the version\n"
"  --help         this text\n";

int
main(int argc, char **argv)
{
	if (argc < 2)
	{
		fputs(usage, stderr);
		return 2;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
		strcmp(argv[1], "help") == 0)
	{
		fputs(usage, stdout);
		return 0;
	}
	/* BOTHY_VERSION: bothy.control's default_version, from gateway.mk */
	if (strcmp(argv[1], "--version") == 0)
	{
		if (argc != 2)
		{
			fprintf(stderr, "bothy-gateway: --version takes no argument\n%s", usage);
			return 2;
		}
		printf("bothy-gateway %s\n", BOTHY_VERSION);
		return 0;
	}
	if (strcmp(argv[1], "serve") == 0)
	{
		/* the key store first: every route's init may need it */
		if (!gw_route_register(&gw_keys_part) || !gw_route_register(&gw_clients_route) ||
			!gw_route_register(&gw_terminal_route))
		{
			fprintf(stderr, "bothy-gateway: the routes' tables are full\n");
			return 1;
		}
		return gw_serve(argc - 1, argv + 1);
	}
	if (strcmp(argv[1], "token") == 0)
		return bothy_cli_token(argc - 1, argv + 1);
	if (strcmp(argv[1], "keys") == 0)
		return bothy_cli_keys(argc - 1, argv + 1);
	fprintf(stderr, "bothy-gateway: unknown command\n%s", usage);
	return 2;
}

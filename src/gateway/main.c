/*
 * main.c
 *		bothy-gateway: the command word and its dispatch.
 *
 *			bothy-gateway serve --listen ADDR:PORT --database CONNINFO --keys DIR
 *			bothy-gateway token person --person P --device D
 *			bothy-gateway token agent --agent A
 *			bothy-gateway keys rotate
 *
 * Exit status: 0 done, 1 failed or refused to start (the reason on
 * stderr), 2 usage error.
 */
#include <stdio.h>
#include <string.h>

#include "cli_keys.h"
#include "server.h"

static const char usage[] =
"usage: bothy-gateway COMMAND [options]\n"
"\n"
"  serve          run a gateway node (bothy-gateway serve --help)\n"
"  token person   mint a person-device token (bothy-gateway token --help)\n"
"  token agent    mint an agent token\n"
"  keys rotate    add a signing key to the key store (bothy-gateway keys --help)\n"
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
	if (strcmp(argv[1], "serve") == 0)
		return gw_serve(argc - 1, argv + 1);
	if (strcmp(argv[1], "token") == 0)
		return bothy_cli_token(argc - 1, argv + 1);
	if (strcmp(argv[1], "keys") == 0)
		return bothy_cli_keys(argc - 1, argv + 1);
	fprintf(stderr, "bothy-gateway: unknown command\n%s", usage);
	return 2;
}

/*
 * keys/cli_keys.h
 *		The key store and token commands of bothy-gateway (docs/tokens.md):
 *			bothy-gateway token person --person P --device D [--ttl S] [--keys DIR]
 *			bothy-gateway token agent --agent A [--ttl S] [--keys DIR]
 *			bothy-gateway keys rotate [--keys DIR]
 *		and --help for each and for `token` and `keys` alone.
 *
 * main.c hands over argv from the command word on (argv[0] is "token" or
 * "keys") and exits with the status returned: 0 done, 1 failed (the reason
 * on stderr), 2 usage error.  A token or a key never goes to stderr.
 */
#ifndef BOTHY_GATEWAY_CLI_KEYS_H
#define BOTHY_GATEWAY_CLI_KEYS_H

#define BOTHY_CLI_EXIT_OK 0
#define BOTHY_CLI_EXIT_FAILURE 1
#define BOTHY_CLI_EXIT_USAGE 2

/* argv[0] == "token" */
int			bothy_cli_token(int argc, char **argv);

/* argv[0] == "keys" */
int			bothy_cli_keys(int argc, char **argv);

#endif							/* BOTHY_GATEWAY_CLI_KEYS_H */

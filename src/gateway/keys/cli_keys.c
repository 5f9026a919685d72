/*
 * keys/cli_keys.c
 *		`bothy-gateway token ...` and `bothy-gateway keys ...` (cli_keys.h).
 *
 * Parsing is strict, like the daemon's own options: getopt_long without
 * its leniencies (abbreviated long options, options after arguments), each
 * option at most once, UUIDs in their canonical form, numbers in a range.
 * Error messages name the option, never echo what was given for it: a
 * value pasted in the wrong place may be a token.
 */
#include "keys/cli_keys.h"

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sodium.h>

#include "keys/keystore.h"
#include "keys/token.h"
#include "uuid.h"

#define PROGRAM "bothy-gateway"
#define STR(x) #x
#define XSTR(x) STR(x)

/* getopt_long's values of the options; also the index into cli_args */
enum
{
	OPT_PERSON = 1,
	OPT_DEVICE,
	OPT_AGENT,
	OPT_TTL,
	OPT_KEYS,
	OPT_COUNT
};

typedef struct cli_args
{
	const char *value[OPT_COUNT];	/* by OPT_*; NULL when not given */
	bool		help;			/* --help or -h was given */
} cli_args;

typedef struct cli_command cli_command;

/* What a command does once its options parsed; the exit status. */
typedef int (*cli_run) (const cli_command *cmd, const cli_args *a);

struct cli_command
{
	const char *word;			/* "person" */
	const char *name;			/* "token person", for messages */
	const char *usage;			/* its --help text */
	const struct option *options;	/* its getopt_long table */
	cli_run		run;
};

/* A command word with its subcommands: `token`, `keys`. */
typedef struct cli_group
{
	const char *name;			/* "token" */
	const char *usage;			/* its --help text */
	const char *expected;		/* the subcommands, for "missing command" */
	const cli_command *commands;
	size_t		ncommands;
} cli_group;

#define TTL_HELP \
	"  --ttl SECONDS   lifetime, " XSTR(BOTHY_TOKEN_TTL_MIN) " to " XSTR(BOTHY_TOKEN_TTL_MAX) \
	" (365 days); default " XSTR(BOTHY_TOKEN_TTL_DEFAULT) " (1 day)\n"
#define KEYS_HELP \
	"  --keys DIR      the key store directory; default $BOTHY_KEYS\n"
#define HELP_HELP \
	"  -h, --help      show this help and exit\n"

static const char person_usage[] =
"Usage: " PROGRAM " token person --person UUID --device UUID [--ttl SECONDS] [--keys DIR]\n"
"\n"
"Mints a person-device token for one device of a person, signed with the\n"
"newest key of the key store, and prints it on stdout.\n"
"\n"
"  --person UUID   the person, a canonical lower-case UUID; required\n"
"  --device UUID   the device, a canonical lower-case UUID; required\n"
TTL_HELP KEYS_HELP HELP_HELP;

static const char agent_usage[] =
"Usage: " PROGRAM " token agent --agent UUID [--ttl SECONDS] [--keys DIR]\n"
"\n"
"Mints an agent token for an agent consumer, signed with the newest key of\n"
"the key store, and prints it on stdout.\n"
"\n"
"  --agent UUID    the agent, a canonical lower-case UUID; required\n"
TTL_HELP KEYS_HELP HELP_HELP;

static const char token_usage[] =
"Usage: " PROGRAM " token person --person UUID --device UUID [--ttl SECONDS] [--keys DIR]\n"
"       " PROGRAM " token agent --agent UUID [--ttl SECONDS] [--keys DIR]\n"
"\n"
"Mints a token for the \"identify\" op and prints it on stdout.\n"
"'" PROGRAM " token person --help' and '" PROGRAM " token agent --help' list the options.\n";

static const char rotate_usage[] =
"Usage: " PROGRAM " keys rotate [--keys DIR]\n"
"\n"
"Adds a new signing key to the key store (creating the directory 0700 when\n"
"it is missing), deletes the keys retired for 30 days, and prints the new\n"
"key's ID.  Every node signs with the new key and still verifies with the\n"
"older ones once its cache (bothy.signing_key_cache_ttl) refreshed.\n"
"\n"
KEYS_HELP HELP_HELP;

static const char keys_usage[] =
"Usage: " PROGRAM " keys rotate [--keys DIR]\n"
"\n"
"Manages the key store shared by every node.\n"
"'" PROGRAM " keys rotate --help' lists the options.\n";

static const struct option person_options[] = {
	{"person", required_argument, NULL, OPT_PERSON},
	{"device", required_argument, NULL, OPT_DEVICE},
	{"ttl", required_argument, NULL, OPT_TTL},
	{"keys", required_argument, NULL, OPT_KEYS},
	{"help", no_argument, NULL, 'h'},
	{NULL, 0, NULL, 0}
};

static const struct option agent_options[] = {
	{"agent", required_argument, NULL, OPT_AGENT},
	{"ttl", required_argument, NULL, OPT_TTL},
	{"keys", required_argument, NULL, OPT_KEYS},
	{"help", no_argument, NULL, 'h'},
	{NULL, 0, NULL, 0}
};

static const struct option rotate_options[] = {
	{"keys", required_argument, NULL, OPT_KEYS},
	{"help", no_argument, NULL, 'h'},
	{NULL, 0, NULL, 0}
};

/* --- messages ----------------------------------------------------------------- */

/* "bothy-gateway NAME: MSG[: WHAT]" and a hint on stderr; exit status 2. */
static int
usage_error(const char *name, const char *msg, const char *what)
{
	fprintf(stderr, "%s %s: %s%s%s\nTry '%s %s --help'.\n", PROGRAM, name, msg,
			what != NULL ? ": " : "", what != NULL ? what : "", PROGRAM, name);
	return BOTHY_CLI_EXIT_USAGE;
}

/* "bothy-gateway NAME: MSG" on stderr; exit status 1. */
static int
failure(const char *name, const char *msg)
{
	fprintf(stderr, "%s %s: %s\n", PROGRAM, name, msg);
	return BOTHY_CLI_EXIT_FAILURE;
}

/* Prints text on stdout; 0, or 1 when stdout cannot be written. */
static int
print_stdout(const char *name, const char *text)
{
	if (fputs(text, stdout) == EOF || fflush(stdout) != 0)
		return failure(name, "cannot write to stdout");
	return BOTHY_CLI_EXIT_OK;
}

static bool
is_help(const char *arg)
{
	return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0;
}

/* --- options ------------------------------------------------------------------ */

/* The table entry of an option value, for its name in messages. */
static const struct option *
option_by_val(const struct option *options, int val)
{
	for (; options->name != NULL; options++)
		if (options->val == val)
			return options;
	return NULL;
}

/*
 * True when the long option o just returned was written in full: GNU
 * getopt_long also takes any unambiguous prefix, which would make a later
 * option of the same prefix change what an old command line means.
 */
static bool
spelled_in_full(char **argv, const struct option *o)
{
	/* with a separate value, the option's own word is the one before it */
	const char *word = (optarg != NULL && optarg == argv[optind - 1])
		? argv[optind - 2] : argv[optind - 1];
	size_t		n = strlen(o->name);

	return strncmp(word, "--", 2) == 0 && strncmp(word + 2, o->name, n) == 0 &&
		(word[2 + n] == '\0' || word[2 + n] == '=');
}

/*
 * The name of an unknown long option, "--name" before any '=', when it is
 * short and plain enough to be no value pasted in the wrong place.
 */
static const char *
unknown_option_name(const char *word, char *buf, size_t buflen)
{
	size_t		n = strcspn(word, "=");

	if (strncmp(word, "--", 2) != 0 || n < 3 || n >= buflen || n > 32 ||
		strspn(word + 2, "abcdefghijklmnopqrstuvwxyz-") != n - 2)
		return NULL;
	memcpy(buf, word, n);
	buf[n] = '\0';
	return buf;
}

/* Why the option getopt_long refused ('?' or ':') was refused: exit status 2. */
static int
refuse_option(const cli_command *cmd, int c, char **argv)
{
	char		name[40];
	const struct option *o;

	if (c == ':')
	{
		o = option_by_val(cmd->options, optopt);
		snprintf(name, sizeof name, "--%s", o != NULL ? o->name : "?");
		return usage_error(cmd->name, "option needs a value", name);
	}
	if (optopt > ' ' && optopt < 127)
	{
		snprintf(name, sizeof name, "-%c", optopt);
		return usage_error(cmd->name, "unknown option", name);
	}
	return usage_error(cmd->name, "unknown option",
					   unknown_option_name(argv[optind - 1], name, sizeof name));
}

/* Parses argv (argv[0] is the command's word) into *a; 0, or an exit status. */
static int
parse_options(const cli_command *cmd, int argc, char **argv, cli_args *a)
{
	int			c;
	int			li = -1;

	memset(a, 0, sizeof *a);
	optind = 0;					/* glibc: 0 also resets state of an earlier parse */
	opterr = 0;					/* getopt's own messages echo the argument */
	/* '+': the first argument ends the options, so none may follow it */
	while ((c = getopt_long(argc, argv, "+:h", cmd->options, &li)) != -1)
	{
		const struct option *o;

		if (c == '?' || c == ':')
			return refuse_option(cmd, c, argv);
		if (li >= 0 && !spelled_in_full(argv, &cmd->options[li]))
			return usage_error(cmd->name, "write options in full", cmd->options[li].name);
		li = -1;
		if (c == 'h')
		{
			a->help = true;
			continue;
		}
		o = option_by_val(cmd->options, c);
		if (c <= 0 || c >= OPT_COUNT || o == NULL)
			return usage_error(cmd->name, "unknown option", NULL);
		if (a->value[c] != NULL)
			return usage_error(cmd->name, "option given twice", o->name);
		if (optarg[0] == '\0')
			return usage_error(cmd->name, "option has an empty value", o->name);
		a->value[c] = optarg;
	}
	if (optind < argc)
		return usage_error(cmd->name, "unexpected argument", NULL);
	return 0;
}

/* The key store: --keys, else $BOTHY_KEYS; NULL when neither is set. */
static const char *
keys_dir(const cli_args *a)
{
	const char *dir = a->value[OPT_KEYS];

	if (dir == NULL)
		dir = getenv("BOTHY_KEYS");
	return dir != NULL && dir[0] != '\0' ? dir : NULL;
}

/* The UUID of a required option; false (message printed) when missing or not canonical. */
static bool
uuid_option(const cli_command *cmd, const cli_args *a, int opt, bothy_uuid *u)
{
	const char *v = a->value[opt];
	const char *name = option_by_val(cmd->options, opt)->name;

	if (v == NULL)
		usage_error(cmd->name, "missing option", name);
	else if (!bothy_uuid_parse(v, strlen(v), u))
		usage_error(cmd->name, "not a canonical lower-case UUID (8-4-4-4-12 hex digits)", name);
	else
		return true;
	return false;
}

/* The lifetime of --ttl, or its default; false (message printed) when invalid. */
static bool
ttl_option(const cli_command *cmd, const cli_args *a, long *ttl)
{
	const char *v = a->value[OPT_TTL];
	long		n = 0;
	size_t		i;

	if (v == NULL)
	{
		*ttl = BOTHY_TOKEN_TTL_DEFAULT;
		return true;
	}
	/* digits only: no sign, no space, no 0x, no exponent; 9 digits cannot overflow */
	for (i = 0; v[i] != '\0' && i < 10; i++)
	{
		if (v[i] < '0' || v[i] > '9')
			break;
		n = n * 10 + (v[i] - '0');
	}
	if (v[i] != '\0' || i > 9 || n < BOTHY_TOKEN_TTL_MIN || n > BOTHY_TOKEN_TTL_MAX)
	{
		usage_error(cmd->name, "want whole seconds from " XSTR(BOTHY_TOKEN_TTL_MIN)
					" to " XSTR(BOTHY_TOKEN_TTL_MAX), "ttl");
		return false;
	}
	*ttl = n;
	return true;
}

/* --- the commands -------------------------------------------------------------- */

/* Signs t to expire ttl seconds from now with the newest key of dir; prints it. */
static int
mint(const cli_command *cmd, const char *dir, long ttl, bothy_token *t)
{
	char		err[256];
	char		text[BOTHY_TOKEN_MAX + 2];
	bothy_keystore *ks;
	time_t		now = time(NULL);
	int			status;

	if (now == (time_t) -1)
		return failure(cmd->name, "cannot read the clock");
	ks = bothy_keystore_open(dir, err, sizeof err);
	if (ks == NULL)
		return failure(cmd->name, err);
	t->expires_at = (int64_t) now + ttl;
	if (!bothy_token_sign(ks, t, text, sizeof text - 1))
		status = failure(cmd->name, "cannot sign the token");
	else
	{
		strcat(text, "\n");		/* fits: the buffer has room for it */
		status = print_stdout(cmd->name, text);
	}
	sodium_memzero(text, sizeof text);
	bothy_keystore_close(ks);
	return status;
}

/* The key store and lifetime every token command takes; false when refused. */
static bool
token_options(const cli_command *cmd, const cli_args *a, const char **dir, long *ttl)
{
	if (!ttl_option(cmd, a, ttl))
		return false;
	*dir = keys_dir(a);
	if (*dir == NULL)
	{
		usage_error(cmd->name, "no key store: give --keys DIR or set BOTHY_KEYS", NULL);
		return false;
	}
	return true;
}

static int
run_token_person(const cli_command *cmd, const cli_args *a)
{
	bothy_token t;
	const char *dir;
	long		ttl;

	memset(&t, 0, sizeof t);
	t.kind = BOTHY_TOKEN_PERSON_DEVICE;
	if (!uuid_option(cmd, a, OPT_PERSON, &t.person) ||
		!uuid_option(cmd, a, OPT_DEVICE, &t.device) ||
		!token_options(cmd, a, &dir, &ttl))
		return BOTHY_CLI_EXIT_USAGE;
	return mint(cmd, dir, ttl, &t);
}

static int
run_token_agent(const cli_command *cmd, const cli_args *a)
{
	bothy_token t;
	const char *dir;
	long		ttl;

	memset(&t, 0, sizeof t);
	t.kind = BOTHY_TOKEN_AGENT;
	if (!uuid_option(cmd, a, OPT_AGENT, &t.agent) ||
		!token_options(cmd, a, &dir, &ttl))
		return BOTHY_CLI_EXIT_USAGE;
	return mint(cmd, dir, ttl, &t);
}

static int
run_keys_rotate(const cli_command *cmd, const cli_args *a)
{
	char		id[BOTHY_KEY_ID_MAX + 2];
	char		err[256];
	const char *dir = keys_dir(a);

	if (dir == NULL)
		return usage_error(cmd->name, "no key store: give --keys DIR or set BOTHY_KEYS", NULL);
	if (!bothy_keystore_rotate(dir, id, err, sizeof err))
		return failure(cmd->name, err);
	strcat(id, "\n");			/* fits: the buffer has room for it */
	return print_stdout(cmd->name, id);
}

static const cli_command token_commands[] = {
	{"person", "token person", person_usage, person_options, run_token_person},
	{"agent", "token agent", agent_usage, agent_options, run_token_agent}
};

static const cli_command keys_commands[] = {
	{"rotate", "keys rotate", rotate_usage, rotate_options, run_keys_rotate}
};

static const cli_group token_group = {
	"token", token_usage, "person or agent", token_commands,
	sizeof token_commands / sizeof token_commands[0]
};

static const cli_group keys_group = {
	"keys", keys_usage, "rotate", keys_commands,
	sizeof keys_commands / sizeof keys_commands[0]
};

/* Runs one command from its word on (argv[0] is "person", "rotate", ...). */
static int
run_command(const cli_command *cmd, int argc, char **argv)
{
	cli_args	a;
	int			status = parse_options(cmd, argc, argv, &a);

	if (status != 0)
		return status;
	if (a.help)
		return print_stdout(cmd->name, cmd->usage);
	return cmd->run(cmd, &a);
}

/* argv[0] is the group's word, argv[1] the subcommand or --help. */
static int
dispatch(const cli_group *g, int argc, char **argv)
{
	size_t		i;

	if (argc < 2)
		return usage_error(g->name, "missing command", g->expected);
	if (is_help(argv[1]))
		return argc == 2 ? print_stdout(g->name, g->usage)
			: usage_error(g->name, "unexpected argument", NULL);
	for (i = 0; i < g->ncommands; i++)
		if (strcmp(argv[1], g->commands[i].word) == 0)
			return run_command(&g->commands[i], argc - 1, argv + 1);
	return usage_error(g->name, "unknown command, want", g->expected);
}

int
bothy_cli_token(int argc, char **argv)
{
	return dispatch(&token_group, argc, argv);
}

int
bothy_cli_keys(int argc, char **argv)
{
	return dispatch(&keys_group, argc, argv);
}

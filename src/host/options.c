/*
 * host/options.c
 *		The command line (see options.h).
 *
 * A loop of its own rather than getopt_long: getopt_long takes any
 * unambiguous prefix ("--ring" for --ring-size), and a typo must not
 * become another option; here a word is an option only when it spells a
 * name of the command in full.
 */
#include <arpa/inet.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "host/options.h"
#include "host/ring.h"
#include "intparse.h"

const char	host_usage[] =
"usage: bothy-host pair --server URL --host UUID --code CODE --key FILE [options]\n"
"       bothy-host run --server URL --key FILE [options]\n"
"       bothy-host --help | --version\n"
"\n"
"  --server URL           the edge's base URL, http://HOST:PORT or https://HOST:PORT\n"
"  --host UUID            pair: the host ID the owner registered\n"
"  --code CODE            pair: the one-time pairing code (16 characters)\n"
"  --key FILE             the key file: pair creates it (mode 0600), run reads it\n"
"  --shell PATH           run: the shell to start, an absolute path (default: the\n"
"                         user's login shell, else /bin/sh)\n"
"  --ring-size BYTES      run: output kept per session for a reattach,\n"
"                         262144..268435456 (default 1048576)\n"
"  --max-sessions N       run: shells at once, 1..32 (default 16)\n"
"  --detach-timeout MS    run: a session without a data connection this long ends,\n"
"                         60000..87000000 (default 1830000)\n"
"  --allow-root           run or pair as root (refused otherwise)\n"
"  --log-level LEVEL      debug, info, warn or error (default info)\n"
"  --help                 this text\n";

enum opt_id
{
	OPT_SERVER,
	OPT_HOST,
	OPT_CODE,
	OPT_KEY,
	OPT_SHELL,
	OPT_RING_SIZE,
	OPT_MAX_SESSIONS,
	OPT_DETACH_TIMEOUT,
	OPT_ALLOW_ROOT,
	OPT_LOG_LEVEL,
	OPT_HELP
};

/* gw_log_level's values, in order */
static const char *const level_names[] = {"debug", "info", "warn", "error"};

#define FOR_PAIR 1
#define FOR_RUN 2

typedef struct opt_spec
{
	const char *name;
	enum opt_id id;
	bool		value;			/* takes a value */
	int			commands;		/* FOR_PAIR | FOR_RUN */
} opt_spec;

static const opt_spec specs[] = {
	{"server", OPT_SERVER, true, FOR_PAIR | FOR_RUN},
	{"host", OPT_HOST, true, FOR_PAIR},
	{"code", OPT_CODE, true, FOR_PAIR},
	{"key", OPT_KEY, true, FOR_PAIR | FOR_RUN},
	{"shell", OPT_SHELL, true, FOR_RUN},
	{"ring-size", OPT_RING_SIZE, true, FOR_RUN},
	{"max-sessions", OPT_MAX_SESSIONS, true, FOR_RUN},
	{"detach-timeout", OPT_DETACH_TIMEOUT, true, FOR_RUN},
	{"allow-root", OPT_ALLOW_ROOT, false, FOR_PAIR | FOR_RUN},
	{"log-level", OPT_LOG_LEVEL, true, FOR_PAIR | FOR_RUN},
	{"help", OPT_HELP, false, FOR_PAIR | FOR_RUN},
};

bool
host_parse_url(const char *url, char *host, size_t hostlen, int *port, bool *tls)
{
	const char *p;
	const char *h;
	size_t		hlen;
	long		v;
	char		num[8];
	unsigned char bin[sizeof(struct in6_addr)];

	if (strncmp(url, "http://", 7) == 0)
	{
		*tls = false;
		p = url + 7;
	}
	else if (strncmp(url, "https://", 8) == 0)
	{
		*tls = true;
		p = url + 8;
	}
	else
		return false;
	h = p;
	if (*p == '[')
	{
		/* an IPv6 address, given to lws without its brackets */
		p = strchr(p, ']');
		if (p == NULL)
			return false;
		h++;
		hlen = (size_t) (p - h);
		p++;
	}
	else
	{
		hlen = strspn(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-");
		p += hlen;
	}
	if (hlen == 0 || hlen >= hostlen)
		return false;
	memcpy(host, h, hlen);
	host[hlen] = '\0';
	if (h[-1] == '[' && inet_pton(AF_INET6, host, bin) != 1)
		return false;
	*port = *tls ? 443 : 80;
	if (*p == ':')
	{
		size_t		nlen = strspn(p + 1, "0123456789");

		if (nlen == 0 || nlen >= sizeof(num))
			return false;
		memcpy(num, p + 1, nlen);
		num[nlen] = '\0';
		if (!bothy_parse_int(num, 1, 65535, &v))
			return false;
		*port = (int) v;
		p += 1 + nlen;
	}
	/* the edge's base: no path, query or user information */
	return *p == '\0' || strcmp(p, "/") == 0;
}

static bool
code_ok(const char *s)
{
	return strlen(s) == HOST_CODE_LEN &&
		strspn(s, "0123456789abcdefghjkmnpqrstvwxyz") == HOST_CODE_LEN;
}

/* An absolute path to an executable regular file. */
static bool
shell_ok(const char *s)
{
	struct stat st;

	return s[0] == '/' && strlen(s) < PATH_MAX && stat(s, &st) == 0 &&
		S_ISREG(st.st_mode) && access(s, X_OK) == 0;
}

static void
default_shell(host_options *o)
{
	struct passwd *pw = getpwuid(geteuid());

	if (pw != NULL && pw->pw_shell != NULL && shell_ok(pw->pw_shell))
		snprintf(o->shell, sizeof(o->shell), "%s", pw->pw_shell);
	else
		snprintf(o->shell, sizeof(o->shell), "/bin/sh");
}

static bool
set_number(const char *name, const char *value, long min, long max, long *out,
		   char *err, size_t errlen)
{
	if (bothy_parse_int(value, min, max, out))
		return true;
	snprintf(err, errlen, "--%s must be an integer from %ld to %ld", name, min, max);
	return false;
}

/* One option with its value (NULL for a flag). */
static bool
apply(host_options *o, const opt_spec *s, const char *value, bool *seen_host,
	  char *err, size_t errlen)
{
	long		v;

	switch (s->id)
	{
		case OPT_SERVER:
			if (host_parse_url(value, o->server_host, sizeof(o->server_host),
							   &o->server_port, &o->tls))
				return true;
			snprintf(err, errlen, "--server must be http://HOST:PORT or https://HOST:PORT");
			return false;
		case OPT_HOST:
			if (bothy_uuid_parse(value, strlen(value), &o->host))
			{
				*seen_host = true;
				return true;
			}
			snprintf(err, errlen, "--host must be a UUID in canonical lower case");
			return false;
		case OPT_CODE:
			if (code_ok(value))
			{
				memcpy(o->code, value, HOST_CODE_LEN + 1);
				return true;
			}
			snprintf(err, errlen,
					 "--code must be the 16-character pairing code (0-9 and a-z without i, l, o, u)");
			return false;
		case OPT_KEY:
			if (*value == '\0')
			{
				snprintf(err, errlen, "--key must name a file");
				return false;
			}
			o->key_path = value;
			return true;
		case OPT_SHELL:
			if (shell_ok(value))
			{
				snprintf(o->shell, sizeof(o->shell), "%s", value);
				return true;
			}
			snprintf(err, errlen, "--shell must be the absolute path of an executable file");
			return false;
		case OPT_RING_SIZE:
			if (!set_number(s->name, value, HOST_RING_MIN, HOST_RING_MAX, &v, err, errlen))
				return false;
			o->ring_size = (size_t) v;
			return true;
		case OPT_MAX_SESSIONS:
			if (!set_number(s->name, value, 1, HOST_SESSIONS_MAX, &v, err, errlen))
				return false;
			o->max_sessions = (int) v;
			return true;
		case OPT_DETACH_TIMEOUT:
			if (!set_number(s->name, value, HOST_DETACH_MIN_MS, HOST_DETACH_MAX_MS, &v,
							err, errlen))
				return false;
			o->detach_timeout_ms = (int) v;
			return true;
		case OPT_ALLOW_ROOT:
			o->allow_root = true;
			return true;
		case OPT_LOG_LEVEL:
			for (v = GW_LOG_DEBUG; v <= GW_LOG_ERROR; v++)
				if (strcmp(value, level_names[v]) == 0)
				{
					o->log_level = (gw_log_level) v;
					return true;
				}
			snprintf(err, errlen, "--log-level must be debug, info, warn or error");
			return false;
		case OPT_HELP:
			return true;
	}
	return false;
}

int
host_options_parse(host_options *o, int argc, char **argv, char *err, size_t errlen,
				   FILE *out)
{
	bool		seen_host = false;
	bool		seen_server = false;
	int			mask;
	int			i;

	memset(o, 0, sizeof(*o));
	o->ring_size = HOST_RING_DEFAULT;
	o->max_sessions = HOST_SESSIONS_DEFAULT;
	o->detach_timeout_ms = HOST_DETACH_DEFAULT_MS;
	o->log_level = GW_LOG_INFO;
	err[0] = '\0';
	if (argc < 2)
	{
		snprintf(err, errlen, "a command is required: pair or run");
		return -1;
	}
	if (strcmp(argv[1], "pair") == 0)
		o->command = HOST_CMD_PAIR;
	else if (strcmp(argv[1], "run") == 0)
		o->command = HOST_CMD_RUN;
	else
	{
		snprintf(err, errlen, "unknown command: the commands are pair and run");
		return -1;
	}
	mask = o->command == HOST_CMD_PAIR ? FOR_PAIR : FOR_RUN;
	if (o->command == HOST_CMD_RUN)
		default_shell(o);

	for (i = 2; i < argc; i++)
	{
		const char *word = argv[i];
		const char *value = NULL;
		const opt_spec *s = NULL;
		size_t		len;
		size_t		k;

		if (strncmp(word, "--", 2) != 0 || word[2] == '\0')
		{
			snprintf(err, errlen, "unexpected argument: every argument is an option");
			return -1;
		}
		word += 2;
		len = strcspn(word, "=");
		for (k = 0; k < sizeof(specs) / sizeof(specs[0]); k++)
			if ((specs[k].commands & mask) != 0 && strlen(specs[k].name) == len &&
				strncmp(specs[k].name, word, len) == 0)
				s = &specs[k];
		if (s == NULL)
		{
			snprintf(err, errlen, "unknown option");
			return -1;
		}
		if (s->value)
		{
			if (word[len] == '=')
				value = word + len + 1;
			else if (i + 1 < argc)
				value = argv[++i];
			else
			{
				snprintf(err, errlen, "--%s needs a value", s->name);
				return -1;
			}
		}
		else if (word[len] == '=')
		{
			snprintf(err, errlen, "--%s takes no value", s->name);
			return -1;
		}
		if (s->id == OPT_HELP)
		{
			fputs(host_usage, out);
			return 1;
		}
		if (s->id == OPT_SERVER)
			seen_server = true;
		if (!apply(o, s, value, &seen_host, err, errlen))
			return -1;
	}

	if (!seen_server || o->key_path == NULL)
	{
		snprintf(err, errlen, "--server and --key are required");
		return -1;
	}
	if (o->command == HOST_CMD_PAIR && (!seen_host || o->code[0] == '\0'))
	{
		snprintf(err, errlen, "pair needs --host and --code");
		return -1;
	}
	return 0;
}

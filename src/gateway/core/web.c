/*
 * core/web.c
 *		The page's static files and /status.json (see web.h).
 *
 * A file is read whole when its request arrives, with the same body-in-rx
 * scheme as http.c, so gw_http_writeable writes it in one piece.  The
 * files are a few small ones read from the page cache; a read on the loop
 * costs less than lws's file streaming machinery would, and the size is
 * bounded (WEB_FILE_MAX).  Names are checked against one strict pattern
 * before anything touches the file system, and the file is opened with
 * O_NOFOLLOW and must be a regular file, so neither "..", nor a
 * subdirectory, nor a link planted in DIR leads anywhere else.
 *
 * Not lws_serve_http_file: lws 4.1 opens the file by name with a plain
 * open() (it follows links, and open() of a FIFO waits for a writer) and
 * looks at nothing but its size, while this loop must never block.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "core/http.h"
#include "core/metrics.h"
#include "core/node.h"
#include "core/route.h"
#include "core/web.h"
#include "signal.h"

#define WEB_NAME_MAX 64			/* NAME.EXT, without the leading "/" */
#define WEB_FILE_MAX (1024 * 1024)

typedef struct web_type
{
	const char *ext;
	const char *mime;
	const char *cache;			/* Cache-Control */
	bool		page;			/* an HTML page: the page's security headers */
} web_type;

/*
 * Pages are never stored, so a new build of the page is seen at the next
 * load; their files are revalidated (no-cache), which for a server that
 * sends no validator means fetched again too, but lets a browser reuse
 * them for back and forward navigation.
 */
static const web_type web_types[] = {
	{"html", "text/html; charset=utf-8", "no-store", true},
	{"js", "text/javascript; charset=utf-8", "no-cache", false},
	{"css", "text/css; charset=utf-8", "no-cache", false},
	{"svg", "image/svg+xml", "no-cache", false},
	{"png", "image/png", "no-cache", false},
};
#define N_WEB_TYPES (sizeof(web_types) / sizeof(web_types[0]))

static const web_type type_json = {"json", "application/json", "no-store", false};
static const web_type type_text = {"txt", "text/plain", "no-store", false};

/*
 * The page talks only to its own origin (the REST calls and the WebSocket
 * of the node or edge that served it) and loads nothing from elsewhere.
 * 'self' in connect-src covers ws: and wss: of the same host (CSP 3).
 */
static const char page_csp[] =
"default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/*
 * node.h keeps no start time; the process is the node, so its start is
 * the node's.  A constructor notes it before main, on the monotonic clock.
 */
static struct timespec process_start;

__attribute__((constructor))
static void
note_process_start(void)
{
	clock_gettime(CLOCK_MONOTONIC, &process_start);
}

/* The type of "NAME.EXT" when it matches the pattern, else NULL. */
static const web_type *
file_type(const char *name)
{
	const char *dot = strrchr(name, '.');
	const char *p;
	size_t		i;

	if (dot == NULL || dot == name || strlen(name) > WEB_NAME_MAX)
		return NULL;
	for (p = name; p < dot; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_' || *p == '-'))
			return NULL;
	for (i = 0; i < N_WEB_TYPES; i++)
		if (strcmp(dot + 1, web_types[i].ext) == 0)
			return &web_types[i];
	return NULL;
}

/* The file name a path asks for, or NULL for a path that is not a file's. */
static const char *
file_name(const char *uri)
{
	if (strcmp(uri, "/") == 0)
		return "index.html";
	if (strcmp(uri, "/status") == 0)
		return "status.html";
	if (uri[0] == '/' && file_type(uri + 1) != NULL)
		return uri + 1;
	return NULL;
}

bool
gw_web_claims(const char *uri)
{
	return strcmp(uri, "/status.json") == 0 || file_name(uri) != NULL;
}

/* Headers for the body already in c->rx, then the body on the next writable. */
static int
reply(struct lws *wsi, gw_conn *c, unsigned status, const web_type *t)
{
	unsigned char hdr[LWS_PRE + 1024];
	unsigned char *start = hdr + LWS_PRE,
			   *p = start,
			   *end = hdr + sizeof(hdr) - 1;

	if (lws_add_http_common_headers(wsi, status, t->mime, (lws_filepos_t) c->rx_len, &p, end) ||
		lws_add_http_header_by_token(wsi, WSI_TOKEN_HTTP_CACHE_CONTROL,
									 (const unsigned char *) t->cache,
									 (int) strlen(t->cache), &p, end) ||
		lws_add_http_header_by_name(wsi, (const unsigned char *) "x-content-type-options:",
									(const unsigned char *) "nosniff", 7, &p, end))
		return 1;
	if (t->page &&
		(lws_add_http_header_by_name(wsi, (const unsigned char *) "content-security-policy:",
									 (const unsigned char *) page_csp,
									 (int) strlen(page_csp), &p, end) ||
		 lws_add_http_header_by_name(wsi, (const unsigned char *) "referrer-policy:",
									 (const unsigned char *) "no-referrer", 11, &p, end)))
		return 1;
	if (lws_finalize_write_http_header(wsi, start, &p, end))
		return 1;
	gw_http_owe_body(wsi, c);
	return 0;
}

static int
not_found(struct lws *wsi, gw_conn *c)
{
	if (!gw_http_keep_body(c, "not found\n", 10))
		return 1;
	return reply(wsi, c, HTTP_STATUS_NOT_FOUND, &type_text);
}

/*
 * DIR/name into c->rx: false when it is missing, a link, not a regular file
 * or too big.
 *
 * The verdict is fstat of what was opened, not of the name: whatever the
 * name is swapped for meanwhile, only a regular file is read.  The open
 * never blocks the loop: O_NONBLOCK (a FIFO's open would wait for a
 * writer, and with it /healthz and every client), O_NOCTTY (a terminal
 * device never becomes the node's), O_NOFOLLOW (a link is refused, the
 * name being a single component).  The lstat before it only spares a FIFO
 * or a device an open at all (it would let a waiting writer go, or run a
 * driver's open); it decides nothing.
 */
static bool
read_file(gw_conn *c, const char *name)
{
	char		path[PATH_MAX];
	struct stat st;
	size_t		got = 0;
	int			fd;

	if (snprintf(path, sizeof(path), "%s/%s", gw.opt.web, name) >= (int) sizeof(path))
		return false;
	if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return false;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return false;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > WEB_FILE_MAX)
	{
		close(fd);
		return false;
	}
	c->rx = malloc(LWS_PRE + (size_t) st.st_size);
	while (c->rx != NULL && got < (size_t) st.st_size)
	{
		ssize_t		n = read(fd, c->rx + LWS_PRE + got, (size_t) st.st_size - got);

		if (n <= 0)
		{
			/* an error, or the file shrank under us: serve nothing half */
			free(c->rx);
			c->rx = NULL;
			break;
		}
		got += (size_t) n;
	}
	close(fd);
	c->rx_len = got;
	return c->rx != NULL;
}

static int64_t
uptime_s(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (int64_t) (now.tv_sec - process_start.tv_sec);
}

static uint64_t
dropped_total(void)
{
	uint64_t	n = 0;
	int			i;

	for (i = 0; i < BOTHY_REASON_COUNT; i++)
		n += gw_stats.signals_dropped[i];
	return n;
}

/*
 * The node's state as one JSON object: what /metrics says, shaped for a
 * page.  The core's members, then each route's (route.h), then the
 * listener's counts.
 */
static char *
status_json(void)
{
	json_t	   *o;
	char	   *text = NULL;
	bool		ok;
	int			i;

	o = json_pack("{s:s, s:I, s:s?, s:b, s:b, s:b, s:b, s:b}",
				  "node", gw.id_text,
				  "uptime_s", (json_int_t) uptime_s(),
				  "cluster_mode", gw.cluster.seen == 0 ? NULL : gw.cluster.multi ? "multi" : "single",
				  "started", gw.started,
				  "stopping", gw.stopping,
				  "ready", gw_ready(),
				  "database_up", gw.db != NULL && gw_db_up(gw.db),
				  "listener_up", gw.listener != NULL && gw_listener_up(gw.listener));
	if (o == NULL)
		return NULL;
	ok = true;
	for (i = 0; ok && i < gw_route_count(); i++)
		if (gw_route_at(i)->status != NULL)
			ok = gw_route_at(i)->status(o);
	ok = ok && json_object_set_new(o, "signals_own",
								   json_integer((json_int_t) gw_stats.signals_own)) == 0;
	ok = ok && json_object_set_new(o, "signals_dropped",
								   json_integer((json_int_t) dropped_total())) == 0;
	if (ok)
		text = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	return text;
}

int
gw_web_request(struct lws *wsi, gw_conn *c, const char *uri)
{
	const char *name;

	if (strcmp(uri, "/status.json") == 0)
	{
		char	   *text = status_json();
		bool		ok = text != NULL && gw_http_keep_body(c, text, strlen(text));

		free(text);
		if (!ok)
			return 1;
		return reply(wsi, c, HTTP_STATUS_OK, &type_json);
	}
	name = file_name(uri);
	if (gw.opt.web == NULL || name == NULL || !read_file(c, name))
		return not_found(wsi, c);
	return reply(wsi, c, HTTP_STATUS_OK, file_type(name));
}

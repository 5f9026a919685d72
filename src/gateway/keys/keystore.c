/*
 * keys/keystore.c
 *		The key store shared by every node (see keystore.h, docs/tokens.md):
 *		reading and checking the directory, rotation with atomic writes,
 *		retirement, and Ed25519 signing and verifying with libsodium.
 *
 * Layout: DIR/<key ID>.key, one Ed25519 seed per file, in the text form
 *		"bothy-ed25519-v1 " base64url(32-byte seed) "\n"
 * Names starting with "." are skipped, because rotation writes its temp
 * file under such a name and a node reading at that moment must not see half
 * a key.  Any other name that is not a key file fails the whole read: the
 * directory holds secrets, and a stray file there is something to look at,
 * not to ignore.  Key files are written once and never changed, so a key ID
 * names one key for ever.
 */
#include "keys/keystore.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "base64url.h"

#define KEY_FILE_SUFFIX ".key"
#define KEY_FILE_MAGIC "bothy-ed25519-v1 "
#define KEY_FILE_MAGIC_LEN (sizeof(KEY_FILE_MAGIC) - 1)
#define KEY_FILE_LEN (KEY_FILE_MAGIC_LEN + BOTHY_B64URL_LEN(crypto_sign_SEEDBYTES) + 1)
/* YYYYMMDD-HHMMSS-mmm-xxxxxxxx: the time part, then the random part */
#define KEY_ID_TIME_LEN 19
#define KEY_ID_LEN 28
/* Room for "." + ID + ".tmp" and for ID + ".key" */
#define KEY_NAME_MAX (BOTHY_KEY_ID_MAX + 8)

#define MS_PER_S INT64_C(1000)

typedef struct bothy_key
{
	char		id[BOTHY_KEY_ID_MAX + 1];
	int64_t		created_ms;		/* the time in the ID */
	int64_t		retires_at_ms;	/* INT64_MAX for the newest key */
	uint8_t		pk[crypto_sign_PUBLICKEYBYTES];
	uint8_t		sk[crypto_sign_SECRETKEYBYTES];
} bothy_key;

/* One read of the directory, sorted by ID, so by creation: the last signs. */
typedef struct bothy_keyset
{
	bothy_key  *keys;			/* sodium_allocarray: guarded, locked, zeroed on free */
	size_t		n;
} bothy_keyset;

struct bothy_keystore
{
	char	   *dir;			/* the path given to open, read again by refresh */
	int64_t		read_at_ms;		/* caller's clock at the last read, good or failed */
	bothy_keyset set;			/* the keys in use */
	char		signing_id[BOTHY_KEY_ID_MAX + 1];	/* at one address for the handle's life */
};

typedef char bothy_key_name[BOTHY_KEY_ID_MAX + 1];

/* Puts a constant message into err; false, so that callers can return it. */
static bool
fail(char *err, size_t errlen, const char *msg)
{
	if (err != NULL && errlen > 0)
		snprintf(err, errlen, "%s", msg);
	return false;
}

static int64_t
realtime_ms(void)
{
	struct timespec ts;

	/* CLOCK_REALTIME cannot fail; 0 would only make every key look young */
	if (clock_gettime(CLOCK_REALTIME, &ts) != 0)
		return 0;
	return (int64_t) ts.tv_sec * MS_PER_S + ts.tv_nsec / 1000000;
}

/* --- key IDs --------------------------------------------------------------- */

/* Days from 1970-01-01 to a Gregorian date (H. Hinnant's days_from_civil). */
static int64_t
days_from_civil(int64_t y, int64_t m, int64_t d)
{
	int64_t		era;
	int64_t		yoe;
	int64_t		doy;
	int64_t		doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

/* "YYYYMMDD-HHMMSS-mmm" of ms in UTC; false outside the years 1970..9999. */
static bool
format_id_time(int64_t ms, char out[KEY_ID_TIME_LEN + 1])
{
	char		buf[64];
	time_t		secs;
	struct tm	tm;

	if (ms < 0)
		return false;
	secs = (time_t) (ms / MS_PER_S);
	if (gmtime_r(&secs, &tm) == NULL || tm.tm_year + 1900 > 9999)
		return false;
	snprintf(buf, sizeof buf, "%04d%02d%02d-%02d%02d%02d-%03d",
			 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
			 tm.tm_hour, tm.tm_min, tm.tm_sec, (int) (ms % MS_PER_S));
	memcpy(out, buf, KEY_ID_TIME_LEN);
	out[KEY_ID_TIME_LEN] = '\0';
	return true;
}

/* The value of n decimal digits, or -1. */
static int64_t
digits_value(const char *s, int n)
{
	int64_t		v = 0;
	int			i;

	for (i = 0; i < n; i++)
	{
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v;
}

bool
bothy_key_id_parse(const char *id, size_t len, int64_t *created_ms)
{
	int64_t		f[7];
	int64_t		ms;
	char		again[KEY_ID_TIME_LEN + 1];
	size_t		i;

	if (id == NULL || len != KEY_ID_LEN ||
		id[8] != '-' || id[15] != '-' || id[19] != '-')
		return false;
	f[0] = digits_value(id, 4);
	f[1] = digits_value(id + 4, 2);
	f[2] = digits_value(id + 6, 2);
	f[3] = digits_value(id + 9, 2);
	f[4] = digits_value(id + 11, 2);
	f[5] = digits_value(id + 13, 2);
	f[6] = digits_value(id + 16, 3);
	for (i = 0; i < 7; i++)
		if (f[i] < 0)
			return false;
	for (i = KEY_ID_TIME_LEN + 1; i < KEY_ID_LEN; i++)
		if (!((id[i] >= '0' && id[i] <= '9') || (id[i] >= 'a' && id[i] <= 'f')))
			return false;
	ms = (((days_from_civil(f[0], f[1], f[2]) * 24 + f[3]) * 60 + f[4]) * 60 + f[5])
		* MS_PER_S + f[6];

	/*
	 * No range checks: formatting always writes a real date, so only a time
	 * that exists (no month 13, no 30 February, no 24:00) comes back as the
	 * same text.
	 */
	if (!format_id_time(ms, again) || memcmp(again, id, KEY_ID_TIME_LEN) != 0)
		return false;
	*created_ms = ms;
	return true;
}

/* A fresh key ID for created_ms: its time, then 32 random bits against ties. */
static bool
make_key_id(int64_t created_ms, char id[BOTHY_KEY_ID_MAX + 1])
{
	uint8_t		rnd[4];
	char		when[KEY_ID_TIME_LEN + 1];

	if (!format_id_time(created_ms, when))
		return false;
	randombytes_buf(rnd, sizeof rnd);
	snprintf(id, BOTHY_KEY_ID_MAX + 1, "%s-%02x%02x%02x%02x",
			 when, rnd[0], rnd[1], rnd[2], rnd[3]);
	return true;
}

/* The key ID of a key file name "<ID>.key"; false for any other name. */
static bool
name_to_id(const char *name, char id[BOTHY_KEY_ID_MAX + 1])
{
	size_t		len = strlen(name);
	size_t		suffix = strlen(KEY_FILE_SUFFIX);
	int64_t		ms;

	if (len <= suffix || strcmp(name + len - suffix, KEY_FILE_SUFFIX) != 0 ||
		!bothy_key_id_parse(name, len - suffix, &ms))
		return false;
	memcpy(id, name, len - suffix);
	id[len - suffix] = '\0';
	return true;
}

/* --- reading the directory -------------------------------------------------- */

/* Opens dir for reading and refuses another owner or any access by others. */
static int
open_dir_checked(const char *dir, char *err, size_t errlen)
{
	struct stat st;
	int			fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	const char *why = NULL;

	if (fd < 0)
	{
		(void) fail(err, errlen,
					errno == ENOENT ? "key store directory does not exist" :
					errno == ENOTDIR ? "key store path is not a directory" :
					"cannot open the key store directory");
		return -1;
	}
	if (fstat(fd, &st) != 0)
		why = "cannot stat the key store directory";
	else if (st.st_uid != geteuid())
		why = "key store directory is not owned by the user running bothy-gateway";
	else if ((st.st_mode & 077) != 0)
		why = "key store directory is open to group or others (it must be 0700)";
	if (why != NULL)
	{
		(void) fail(err, errlen, why);
		close(fd);
		return -1;
	}
	return fd;
}

static int
compare_names(const void *a, const void *b)
{
	return strcmp((const char *) a, (const char *) b);
}

/*
 * The key IDs of the files in dfd, sorted; malloc'd into *ids (IDs are
 * public, no need for guarded memory).  Refuses a name that is not a key's.
 */
static bool
list_key_ids(int dfd, bothy_key_name **ids, size_t *n, char *err, size_t errlen)
{
	bothy_key_name *list;
	struct dirent *de;
	DIR		   *d;
	int			fd = dup(dfd);
	const char *why = NULL;
	size_t		count = 0;

	if (fd < 0)
		return fail(err, errlen, "cannot read the key store directory");
	d = fdopendir(fd);
	if (d == NULL)
	{
		close(fd);
		return fail(err, errlen, "cannot read the key store directory");
	}
	rewinddir(d);
	list = malloc(sizeof(bothy_key_name) * BOTHY_KEYSTORE_MAX_KEYS);
	if (list == NULL)
		why = "out of memory";
	while (why == NULL)
	{
		errno = 0;
		de = readdir(d);
		if (de == NULL)
		{
			if (errno != 0)
				why = "cannot read the key store directory";
			break;
		}
		if (de->d_name[0] == '.')
			continue;
		if (count == BOTHY_KEYSTORE_MAX_KEYS)
			why = "key store holds too many key files";
		else if (!name_to_id(de->d_name, list[count]))
			why = "key store holds a file that is not a key file";
		else
			count++;
	}
	closedir(d);
	if (why != NULL)
	{
		free(list);
		return fail(err, errlen, why);
	}
	qsort(list, count, sizeof *list, compare_names);
	*ids = list;
	*n = count;
	return true;
}

/* Reads up to cap bytes until end of file; *used is how many. */
static bool
read_all(int fd, char *buf, size_t cap, size_t *used)
{
	size_t		got = 0;

	while (got < cap)
	{
		ssize_t		r = read(fd, buf + got, cap - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return false;
		if (r == 0)
			break;
		got += (size_t) r;
	}
	*used = got;
	return true;
}

/* The seed of a key file's text; false when it is not exactly the format. */
static bool
parse_key_text(const char *text, size_t len, uint8_t seed[crypto_sign_SEEDBYTES])
{
	size_t		seedlen = 0;

	return len == KEY_FILE_LEN &&
		memcmp(text, KEY_FILE_MAGIC, KEY_FILE_MAGIC_LEN) == 0 &&
		text[KEY_FILE_LEN - 1] == '\n' &&
		bothy_b64url_decode(text + KEY_FILE_MAGIC_LEN, KEY_FILE_LEN - 1 - KEY_FILE_MAGIC_LEN,
							seed, crypto_sign_SEEDBYTES, &seedlen) &&
		seedlen == crypto_sign_SEEDBYTES;
}

/* Why the key file behind fd may not be used, or NULL. */
static const char *
check_key_file(int fd)
{
	struct stat st;

	if (fstat(fd, &st) != 0)
		return "cannot stat a key file";
	if (!S_ISREG(st.st_mode))
		return "key store holds a key file that is not a regular file";
	if (st.st_uid != geteuid())
		return "key file is not owned by the user running bothy-gateway";
	if ((st.st_mode & 077) != 0)
		return "key file is open to group or others (it must be 0600)";
	return NULL;
}

/*
 * Reads key id of dfd into *k.  *gone is set instead when the file vanished
 * since the listing: `keys rotate` on another node deleted a retired key.
 */
static bool
read_key_file(int dfd, const char *id, bothy_key *k, bool *gone, char *err, size_t errlen)
{
	char		name[KEY_NAME_MAX];
	char		text[KEY_FILE_LEN + 1]; /* one more, to see a longer file */
	uint8_t		seed[crypto_sign_SEEDBYTES];
	size_t		used = 0;
	const char *why;
	int			fd;

	*gone = false;
	snprintf(name, sizeof name, "%s%s", id, KEY_FILE_SUFFIX);
	/* O_NONBLOCK: a FIFO under a key's name must not hang the node */
	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
	{
		if (errno == ENOENT)
		{
			*gone = true;
			return true;
		}
		return fail(err, errlen, errno == ELOOP ? "key file is a symbolic link"
					: "cannot open a key file");
	}
	why = check_key_file(fd);
	if (why == NULL && !read_all(fd, text, sizeof text, &used))
		why = "cannot read a key file";
	if (why == NULL && !parse_key_text(text, used, seed))
		why = "key file does not parse";
	if (why == NULL && crypto_sign_seed_keypair(k->pk, k->sk, seed) != 0)
		why = "cannot derive a key";
	sodium_memzero(text, sizeof text);
	sodium_memzero(seed, sizeof seed);
	close(fd);
	if (why != NULL)
		return fail(err, errlen, why);
	snprintf(k->id, sizeof k->id, "%s", id);
	(void) bothy_key_id_parse(id, strlen(id), &k->created_ms);
	return true;
}

static void
free_keyset(bothy_keyset *set)
{
	sodium_free(set->keys);		/* zeroes the secret keys first */
	set->keys = NULL;
	set->n = 0;
}

/* Each key retires BOTHY_KEY_RETIRE_AFTER_S after the next newer one was made. */
static void
set_retirement(bothy_keyset *set)
{
	size_t		i;

	for (i = 0; i < set->n; i++)
		set->keys[i].retires_at_ms = i + 1 < set->n
			? set->keys[i + 1].created_ms + BOTHY_KEY_RETIRE_AFTER_S * MS_PER_S
			: INT64_MAX;
}

/* Every key of dfd into *out; allow_empty for rotation's first key. */
static bool
load_keyset(int dfd, bool allow_empty, bothy_keyset *out, char *err, size_t errlen)
{
	bothy_key_name *ids = NULL;
	bothy_keyset set = {NULL, 0};
	size_t		nids = 0;
	size_t		i;
	bool		ok = true;

	if (!list_key_ids(dfd, &ids, &nids, err, errlen))
		return false;
	set.keys = sodium_allocarray(nids > 0 ? nids : 1, sizeof(bothy_key));
	if (set.keys == NULL)
		ok = fail(err, errlen, "out of memory");
	for (i = 0; ok && i < nids; i++)
	{
		bool		gone;

		ok = read_key_file(dfd, ids[i], &set.keys[set.n], &gone, err, errlen);
		if (ok && !gone)
			set.n++;
	}
	free(ids);
	if (ok && set.n == 0 && !allow_empty)
		ok = fail(err, errlen, "key store holds no key");
	if (!ok)
	{
		free_keyset(&set);
		return false;
	}
	set_retirement(&set);
	*out = set;
	return true;
}

/* One whole read of the directory at path. */
static bool
read_store(const char *path, bothy_keyset *out, char *err, size_t errlen)
{
	int			dfd = open_dir_checked(path, err, errlen);
	bool		ok;

	if (dfd < 0)
		return false;
	ok = load_keyset(dfd, false, out, err, errlen);
	close(dfd);
	return ok;
}

/* --- the handle -------------------------------------------------------------- */

/* Replaces the keys in use by fresh ones (n > 0), taking them over. */
static void
adopt_keyset(bothy_keystore *ks, bothy_keyset *fresh)
{
	free_keyset(&ks->set);
	ks->set = *fresh;
	snprintf(ks->signing_id, sizeof ks->signing_id, "%s", ks->set.keys[ks->set.n - 1].id);
}

bothy_keystore *
bothy_keystore_open_at(const char *dir, int64_t now_ms, char *err, size_t errlen)
{
	bothy_keystore *ks;
	bothy_keyset set = {NULL, 0};

	if (sodium_init() < 0)
	{
		(void) fail(err, errlen, "cannot initialise libsodium");
		return NULL;
	}
	if (dir == NULL || dir[0] == '\0')
	{
		(void) fail(err, errlen, "no key store directory given");
		return NULL;
	}
	if (!read_store(dir, &set, err, errlen))
		return NULL;
	ks = calloc(1, sizeof *ks);
	if (ks != NULL)
		ks->dir = strdup(dir);
	if (ks == NULL || ks->dir == NULL)
	{
		free(ks);
		free_keyset(&set);
		(void) fail(err, errlen, "out of memory");
		return NULL;
	}
	adopt_keyset(ks, &set);
	ks->read_at_ms = now_ms;
	return ks;
}

bothy_keystore *
bothy_keystore_open(const char *dir, char *err, size_t errlen)
{
	return bothy_keystore_open_at(dir, realtime_ms(), err, errlen);
}

/* True while the last read is younger than max_age_ms. */
static bool
read_is_fresh(int64_t read_at_ms, int64_t now_ms, int64_t max_age_ms)
{
	/* a clock stepped back reads again: waiting for it could take hours */
	if (now_ms < read_at_ms || max_age_ms <= 0)
		return false;
	return (uint64_t) now_ms - (uint64_t) read_at_ms < (uint64_t) max_age_ms;
}

bool
bothy_keystore_refresh(bothy_keystore *ks, int64_t now_ms, int64_t max_age_ms,
					   char *err, size_t errlen)
{
	bothy_keyset fresh = {NULL, 0};

	if (ks == NULL)
		return fail(err, errlen, "no key store");
	if (read_is_fresh(ks->read_at_ms, now_ms, max_age_ms))
		return true;

	/*
	 * A failed read restarts the timer too: a broken directory is then read
	 * once per max_age_ms, not on every call, and logged as often.
	 */
	ks->read_at_ms = now_ms;
	if (!read_store(ks->dir, &fresh, err, errlen))
		return false;
	adopt_keyset(ks, &fresh);
	return true;
}

void
bothy_keystore_close(bothy_keystore *ks)
{
	if (ks == NULL)
		return;
	free_keyset(&ks->set);
	free(ks->dir);
	free(ks);
}

const char *
bothy_keystore_signing_id(const bothy_keystore *ks)
{
	return ks != NULL ? ks->signing_id : "";
}

/* --- signing and verifying ----------------------------------------------------- */

bool
bothy_keystore_sign(const bothy_keystore *ks, const uint8_t *msg, size_t len,
					uint8_t sig[64], char key_id[BOTHY_KEY_ID_MAX + 1])
{
	const bothy_key *k;

	if (ks == NULL || ks->set.n == 0)
		return false;
	k = &ks->set.keys[ks->set.n - 1];
	if (crypto_sign_detached(sig, NULL, msg, len, k->sk) != 0)
		return false;
	snprintf(key_id, BOTHY_KEY_ID_MAX + 1, "%s", k->id);
	return true;
}

/* The key named key_id, or NULL.  IDs are public: strcmp's timing is fine. */
static const bothy_key *
find_key(const bothy_keystore *ks, const char *key_id)
{
	if (ks == NULL || key_id == NULL || ks->set.n == 0)
		return NULL;
	/* bothy_key begins with its ID, so compare_names works on both */
	return bsearch(key_id, ks->set.keys, ks->set.n, sizeof(bothy_key), compare_names);
}

bothy_key_check
bothy_keystore_check(const bothy_keystore *ks, const char *key_id,
					 const uint8_t *msg, size_t len, const uint8_t sig[64], int64_t now_ms)
{
	const bothy_key *k = find_key(ks, key_id);

	if (k == NULL || now_ms >= k->retires_at_ms)
		return BOTHY_KEY_UNKNOWN;
	if (crypto_sign_verify_detached(sig, msg, len, k->pk) != 0)
		return BOTHY_KEY_BAD_SIGNATURE;
	return BOTHY_KEY_VERIFIED;
}

bool
bothy_keystore_verify(const bothy_keystore *ks, const char *key_id,
					  const uint8_t *msg, size_t len, const uint8_t sig[64])
{
	return bothy_keystore_check(ks, key_id, msg, len, sig, realtime_ms()) == BOTHY_KEY_VERIFIED;
}

/* --- rotation ------------------------------------------------------------------ */

/* Opens dir, creating it 0700 when it is missing (its parent must exist). */
static int
open_or_create_dir(const char *dir, char *err, size_t errlen)
{
	if (mkdir(dir, 0700) == 0)
	{
		/* the umask may have taken bits away; make it exactly 0700 */
		if (chmod(dir, 0700) != 0)
		{
			(void) fail(err, errlen, "cannot set the mode of the key store directory");
			return -1;
		}
	}
	else if (errno != EEXIST)
	{
		(void) fail(err, errlen, "cannot create the key store directory");
		return -1;
	}
	return open_dir_checked(dir, err, errlen);
}

static bool
write_all(int fd, const char *buf, size_t len)
{
	size_t		done = 0;

	while (done < len)
	{
		ssize_t		w = write(fd, buf + done, len - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return false;
		done += (size_t) w;
	}
	return true;
}

/*
 * Writes a fresh key named id into dfd: a hidden temp file, 0600, fsync,
 * rename, fsync of the directory, so a reader sees the whole key or none.
 */
static bool
write_key_file(int dfd, const char *id, char *err, size_t errlen)
{
	char		text[KEY_FILE_LEN + 1];
	char		tmp[KEY_NAME_MAX];
	char		name[KEY_NAME_MAX];
	uint8_t		seed[crypto_sign_SEEDBYTES];
	bool		ok;
	int			fd;

	randombytes_buf(seed, sizeof seed);
	memcpy(text, KEY_FILE_MAGIC, KEY_FILE_MAGIC_LEN);
	ok = bothy_b64url_encode(seed, sizeof seed, text + KEY_FILE_MAGIC_LEN,
							 sizeof text - KEY_FILE_MAGIC_LEN);
	text[KEY_FILE_LEN - 1] = '\n';
	sodium_memzero(seed, sizeof seed);
	snprintf(tmp, sizeof tmp, ".%s.tmp", id);
	snprintf(name, sizeof name, "%s%s", id, KEY_FILE_SUFFIX);

	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	ok = ok && fd >= 0 && fchmod(fd, 0600) == 0 &&
		write_all(fd, text, KEY_FILE_LEN) && fsync(fd) == 0;
	sodium_memzero(text, sizeof text);
	if (fd >= 0 && close(fd) != 0)
		ok = false;
	ok = ok && renameat(dfd, tmp, dfd, name) == 0;
	if (!ok)
	{
		if (fd >= 0)
			(void) unlinkat(dfd, tmp, 0);
		return fail(err, errlen, "cannot write the new key file");
	}
	if (fsync(dfd) != 0)
		return fail(err, errlen, "cannot sync the key store directory");
	return true;
}

/*
 * Deletes the old keys retired for BOTHY_KEY_DELETE_AFTER_S, given the
 * creation time of the key just added (the successor of the newest old one).
 * Retirement grows with the ID, so this always deletes the oldest first.
 */
static bool
delete_retired(int dfd, bothy_keyset *old, int64_t new_created_ms, int64_t now_ms,
			   char *err, size_t errlen)
{
	bool		deleted = false;
	size_t		i;

	if (old->n > 0)
		old->keys[old->n - 1].retires_at_ms =
			new_created_ms + BOTHY_KEY_RETIRE_AFTER_S * MS_PER_S;
	for (i = 0; i < old->n; i++)
	{
		char		name[KEY_NAME_MAX];

		if (now_ms - old->keys[i].retires_at_ms < BOTHY_KEY_DELETE_AFTER_S * MS_PER_S)
			break;
		snprintf(name, sizeof name, "%s%s", old->keys[i].id, KEY_FILE_SUFFIX);
		/* ENOENT: another node's rotation deleted it first */
		if (unlinkat(dfd, name, 0) != 0 && errno != ENOENT)
			return fail(err, errlen, "the new key was written, but a retired key file could not be deleted");
		deleted = true;
	}
	if (deleted && fsync(dfd) != 0)
		return fail(err, errlen, "cannot sync the key store directory");
	return true;
}

bool
bothy_keystore_rotate_at(const char *dir, int64_t now_ms, char new_id[BOTHY_KEY_ID_MAX + 1],
						 char *err, size_t errlen)
{
	bothy_keyset old = {NULL, 0};
	char		id[BOTHY_KEY_ID_MAX + 1];
	int64_t		created_ms = now_ms;
	bool		ok;
	int			dfd;

	new_id[0] = '\0';
	if (sodium_init() < 0)
		return fail(err, errlen, "cannot initialise libsodium");
	if (dir == NULL || dir[0] == '\0')
		return fail(err, errlen, "no key store directory given");
	dfd = open_or_create_dir(dir, err, errlen);
	if (dfd < 0)
		return false;
	ok = load_keyset(dfd, true, &old, err, errlen);
	if (ok && old.n > 0 && old.keys[old.n - 1].created_ms >= created_ms)
		created_ms = old.keys[old.n - 1].created_ms + 1;
	if (ok && !make_key_id(created_ms, id))
		ok = fail(err, errlen, "the clock is outside the years 1970 to 9999");
	ok = ok && write_key_file(dfd, id, err, errlen);
	if (ok)
		snprintf(new_id, BOTHY_KEY_ID_MAX + 1, "%s", id);
	ok = ok && delete_retired(dfd, &old, created_ms, now_ms, err, errlen);
	free_keyset(&old);
	close(dfd);
	return ok;
}

bool
bothy_keystore_rotate(const char *dir, char new_id[BOTHY_KEY_ID_MAX + 1],
					  char *err, size_t errlen)
{
	return bothy_keystore_rotate_at(dir, realtime_ms(), new_id, err, errlen);
}

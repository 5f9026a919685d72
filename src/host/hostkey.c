/*
 * host/hostkey.c
 *		The host's key file and fingerprint (see hostkey.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "host/hostkey.h"
#include "base64url.h"

#define SEED_LEN 32
#define SEED_B64_LEN 43

static void
set_err(char *err, size_t errlen, const char *msg)
{
	snprintf(err, errlen, "%s", msg);
}

bool
host_key_generate(host_key *k, const bothy_uuid *host)
{
	uint8_t		seed[SEED_LEN];

	memset(k, 0, sizeof(*k));
	k->host = *host;
	bothy_uuid_format(host, k->host_text);
	randombytes_buf(seed, sizeof(seed));
	if (crypto_sign_seed_keypair(k->pk, k->sk, seed) != 0)
	{
		sodium_memzero(seed, sizeof(seed));
		return false;
	}
	sodium_memzero(seed, sizeof(seed));
	return true;
}

void
host_key_format(const host_key *k, char out[HOST_KEY_FILE_LEN + 1])
{
	char		seed[SEED_B64_LEN + 1];

	/* libsodium's secret key begins with the seed */
	bothy_b64url_encode(k->sk, SEED_LEN, seed, sizeof(seed));
	snprintf(out, HOST_KEY_FILE_LEN + 1, "%s%s %s\n", HOST_KEY_PREFIX, k->host_text, seed);
	sodium_memzero(seed, sizeof(seed));
}

bool
host_key_parse(const char *text, size_t len, host_key *k)
{
	const size_t plen = strlen(HOST_KEY_PREFIX);
	const char *id = text + plen;
	const char *seed_text = id + BOTHY_UUID_STRLEN + 1;
	uint8_t		seed[SEED_LEN];
	size_t		used = 0;
	bool		ok;

	memset(k, 0, sizeof(*k));
	if (len != HOST_KEY_FILE_LEN || memcmp(text, HOST_KEY_PREFIX, plen) != 0 ||
		id[BOTHY_UUID_STRLEN] != ' ' || text[len - 1] != '\n' ||
		!bothy_uuid_parse(id, BOTHY_UUID_STRLEN, &k->host))
		return false;
	ok = bothy_b64url_decode(seed_text, SEED_B64_LEN, seed, sizeof(seed), &used) &&
		used == SEED_LEN && crypto_sign_seed_keypair(k->pk, k->sk, seed) == 0;
	sodium_memzero(seed, sizeof(seed));
	if (!ok)
	{
		host_key_wipe(k);
		return false;
	}
	bothy_uuid_format(&k->host, k->host_text);
	return true;
}

static bool
write_all(int fd, const char *buf, size_t len)
{
	while (len > 0)
	{
		ssize_t		n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		buf += n;
		len -= (size_t) n;
	}
	return true;
}

bool
host_key_create_file(const char *path, const host_key *k, host_key_file *f,
					 char *err, size_t errlen)
{
	char		line[HOST_KEY_FILE_LEN + 1];
	struct stat st;
	bool		ok;

	/* O_EXCL: never into a file that exists, whoever made it and however open */
	f->fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0600);
	if (f->fd < 0)
	{
		set_err(err, errlen, errno == EEXIST ?
				"the key file exists already (bothy-host never overwrites a key)" :
				"the key file could not be created");
		return false;
	}
	/* the umask only takes bits away; make the mode exact anyway */
	if (fchmod(f->fd, 0600) != 0 || fstat(f->fd, &st) != 0)
	{
		set_err(err, errlen, "the key file could not be created");
		host_key_file_remove(path, f);
		return false;
	}
	f->dev = st.st_dev;
	f->ino = st.st_ino;
	host_key_format(k, line);
	ok = write_all(f->fd, line, HOST_KEY_FILE_LEN) && fsync(f->fd) == 0;
	sodium_memzero(line, sizeof(line));
	if (!ok)
	{
		set_err(err, errlen, "the key file could not be written");
		host_key_file_remove(path, f);
		return false;
	}
	return true;
}

void
host_key_file_remove(const char *path, host_key_file *f)
{
	struct stat st;

	if (f->fd < 0)
		return;
	/* only the file this process created: the name may have been replaced */
	if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_dev == f->dev &&
		st.st_ino == f->ino)
		unlink(path);
	close(f->fd);
	f->fd = -1;
}

void
host_key_file_keep(host_key_file *f)
{
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
}

bool
host_key_load(const char *path, host_key *k, char *err, size_t errlen)
{
	char		text[HOST_KEY_FILE_LEN + 1];
	struct stat st;
	size_t		got = 0;
	int			fd;
	bool		ok;

	memset(k, 0, sizeof(*k));
	/* O_NONBLOCK: a FIFO put in the key's place must not hang the start */
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
	{
		set_err(err, errlen, errno == ELOOP ? "the key file is a symbolic link" :
				errno == ENOENT ? "the key file does not exist" :
				"the key file could not be opened");
		return false;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
	{
		set_err(err, errlen, "the key file is not a regular file");
		close(fd);
		return false;
	}
	if (st.st_uid != geteuid())
	{
		set_err(err, errlen, "the key file belongs to another user");
		close(fd);
		return false;
	}
	if ((st.st_mode & 077) != 0)
	{
		set_err(err, errlen, "the key file is open to group or others (it must be mode 0600)");
		close(fd);
		return false;
	}
	/* one byte more than a key line, to see a longer file */
	while (got < sizeof(text))
	{
		ssize_t		n = read(fd, text + got, sizeof(text) - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t) n;
	}
	close(fd);
	ok = host_key_parse(text, got, k);
	sodium_memzero(text, sizeof(text));
	if (!ok)
		set_err(err, errlen, "the key file is not a bothy-host key file");
	return ok;
}

void
host_key_fingerprint(const uint8_t pk[32], char out[HOST_FINGERPRINT_LEN + 1])
{
	uint8_t		digest[crypto_hash_sha256_BYTES];

	crypto_hash_sha256(digest, pk, 32);
	memcpy(out, "SHA256:", 7);
	sodium_bin2base64(out + 7, HOST_FINGERPRINT_LEN + 1 - 7, digest, sizeof(digest),
					  sodium_base64_VARIANT_ORIGINAL_NO_PADDING);
}

void
host_key_wipe(host_key *k)
{
	sodium_memzero(k, sizeof(*k));
}

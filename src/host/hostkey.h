/*
 * host/hostkey.h
 *		The host's identity: its host ID and Ed25519 key, the one key file
 *		that holds both, and the key's fingerprint (docs/host.md, "The key
 *		file").
 *
 * The file is one line of exactly HOST_KEY_FILE_LEN bytes,
 * "bothy-host-v1 <host ID> <base64url of the 32-byte seed>\n", written
 * once by `bothy-host pair` with mode 0600 and never rewritten.  Reading
 * refuses a symbolic link, anything but a regular file, a file of another
 * user and a file that group or others may read or write: the seed is the
 * host's only secret.  Errors are constant English text (never the path
 * or the key), ready for one line on stderr.
 */
#ifndef BOTHY_HOST_HOSTKEY_H
#define BOTHY_HOST_HOSTKEY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "uuid.h"

#define HOST_KEY_PREFIX "bothy-host-v1 "
/* prefix, host ID, a space, 43 characters of seed, a newline */
#define HOST_KEY_FILE_LEN (14 + BOTHY_UUID_STRLEN + 1 + 43 + 1)
/* "SHA256:" and 43 characters of unpadded standard base64 */
#define HOST_FINGERPRINT_LEN (7 + 43)

typedef struct host_key
{
	bothy_uuid	host;			/* the host ID the key was paired for */
	char		host_text[BOTHY_UUID_STRLEN + 1];	/* its canonical text */
	uint8_t		pk[32];			/* Ed25519 public key */
	uint8_t		sk[64];			/* libsodium's secret key (seed and public key) */
} host_key;

/* A key file created by host_key_create_file, until it is kept or removed. */
typedef struct host_key_file
{
	int			fd;
	dev_t		dev;
	ino_t		ino;
} host_key_file;

/* A fresh key for host.  False only when libsodium failed. */
bool		host_key_generate(host_key *k, const bothy_uuid *host);

/* The file's line for k: HOST_KEY_FILE_LEN bytes and a NUL. */
void		host_key_format(const host_key *k, char out[HOST_KEY_FILE_LEN + 1]);

/* Parses exactly one file's text; false unless it is a key line. */
bool		host_key_parse(const char *text, size_t len, host_key *k);

/*
 * Creates path (never an existing file, never through a symbolic link)
 * with mode 0600 and k's line, flushed to disk.  The file stays open in
 * *f so that host_key_file_remove can take it back.
 */
bool		host_key_create_file(const char *path, const host_key *k, host_key_file *f,
								 char *err, size_t errlen);

/* Removes the file f created, if path still names it; closes f. */
void		host_key_file_remove(const char *path, host_key_file *f);

/* Keeps the file f created; closes f. */
void		host_key_file_keep(host_key_file *f);

/* Loads path with every check above. */
bool		host_key_load(const char *path, host_key *k, char *err, size_t errlen);

/* "SHA256:" and the unpadded standard base64 of SHA-256 over pk. */
void		host_key_fingerprint(const uint8_t pk[32], char out[HOST_FINGERPRINT_LEN + 1]);

/* Clears the secret key from memory. */
void		host_key_wipe(host_key *k);

#endif							/* BOTHY_HOST_HOSTKEY_H */

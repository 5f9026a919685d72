/*
 * test_hostkey.c
 *		Unit tests of src/host/hostkey.c against a temporary directory: the
 *		key file's exact form and mode, no overwrite, no symbolic link, and
 *		every refusal of a file the host must not use.
 */
#define _GNU_SOURCE				/* nftw */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "host/hostkey.h"
#include "unit.h"

static char dir[] = "/tmp/bothy-host-unit.XXXXXX";
static char path[256];

static void
at(const char *name)
{
	snprintf(path, sizeof(path), "%s/%s", dir, name);
}

static void
write_file(const char *name, const char *text, size_t len, mode_t mode)
{
	int			fd;

	at(name);
	unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	if (fd < 0 || write(fd, text, len) != (ssize_t) len || fchmod(fd, mode) != 0)
	{
		perror("write_file");
		exit(2);
	}
	close(fd);
}

static int
remove_one(const char *name, const struct stat *st, int type, struct FTW *ftw)
{
	(void) st;
	(void) type;
	(void) ftw;
	return remove(name);
}

/* load refuses path with a message containing what */
static bool
refused(const char *what)
{
	host_key	k;
	char		err[256];

	return !host_key_load(path, &k, err, sizeof(err)) &&
		unit_case(strstr(err, what) != NULL, err);
}

int
main(void)
{
	bothy_uuid	host;
	host_key	k;
	host_key	loaded;
	host_key_file f;
	char		err[256];
	char		line[HOST_KEY_FILE_LEN + 1];
	char		text[HOST_KEY_FILE_LEN + 8];
	struct stat st;
	FILE	   *fp;
	size_t		n;

	unit_diag("the key file (src/host/hostkey.c)");

	if (sodium_init() < 0 || mkdtemp(dir) == NULL)
		return 2;
	bothy_uuid_parse("01890a5d-ac96-774b-bcce-b302099a8057", 36, &host);
	UNIT_OK(host_key_generate(&k, &host), "a key is generated");

	host_key_format(&k, line);
	UNIT_OK(strlen(line) == HOST_KEY_FILE_LEN && HOST_KEY_FILE_LEN == 95,
			"the key line is 95 bytes");
	UNIT_OK(strncmp(line, "bothy-host-v1 01890a5d-ac96-774b-bcce-b302099a8057 ", 51) == 0 &&
			line[94] == '\n' && strspn(line + 51, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") == 43,
			"bothy-host-v1, the host ID, 43 characters of base64url seed, a newline");
	UNIT_OK(host_key_parse(line, HOST_KEY_FILE_LEN, &loaded) &&
			memcmp(loaded.pk, k.pk, 32) == 0 && memcmp(loaded.sk, k.sk, 64) == 0 &&
			strcmp(loaded.host_text, "01890a5d-ac96-774b-bcce-b302099a8057") == 0,
			"the line parses back to the same key and host");

	/* created 0600 whatever the umask, exactly the line */
	umask(0);
	at("host.key");
	UNIT_OK(host_key_create_file(path, &k, &f, err, sizeof(err)), "the key file is created");
	host_key_file_keep(&f);
	UNIT_OK(stat(path, &st) == 0 && (st.st_mode & 07777) == 0600,
			"mode 0600 even with umask 0");
	fp = fopen(path, "r");
	n = fp != NULL ? fread(text, 1, sizeof(text), fp) : 0;
	if (fp != NULL)
		fclose(fp);
	UNIT_OK(n == HOST_KEY_FILE_LEN && memcmp(text, line, n) == 0, "its contents are the line");
	UNIT_OK(host_key_load(path, &loaded, err, sizeof(err)) && memcmp(loaded.pk, k.pk, 32) == 0,
			"it loads back");
	umask(022);

	UNIT_OK(!host_key_create_file(path, &k, &f, err, sizeof(err)) &&
			strstr(err, "exists already") != NULL, "an existing file is never overwritten");

	/* symbolic links: neither created through nor read */
	at("elsewhere.key");
	unlink(path);
	{
		char		target[256];

		snprintf(target, sizeof(target), "%s", path);
		at("link.key");
		UNIT_OK(symlink(target, path) == 0, "a link to a file that does not exist");
		UNIT_OK(!host_key_create_file(path, &k, &f, err, sizeof(err)) &&
				access(target, F_OK) != 0, "a key is not created through a link");
		unlink(path);
		at("host.key");
		snprintf(target, sizeof(target), "%s", path);
		at("link.key");
		UNIT_OK(symlink(target, path) == 0, "a link to the real key file");
		UNIT_OK(refused("symbolic link"), "a key file behind a link is refused");
	}

	/* modes looser than 0600 */
	write_file("loose.key", line, HOST_KEY_FILE_LEN, 0640);
	UNIT_OK(refused("group or others"), "a key file readable by its group is refused");
	write_file("loose.key", line, HOST_KEY_FILE_LEN, 0604);
	UNIT_OK(refused("group or others"), "a key file readable by others is refused");
	write_file("loose.key", line, HOST_KEY_FILE_LEN, 0620);
	UNIT_OK(refused("group or others"), "a key file writable by its group is refused");
	write_file("loose.key", line, HOST_KEY_FILE_LEN, 0400);
	UNIT_OK(host_key_load(path, &loaded, err, sizeof(err)), "a read-only 0400 key file is used");

	/* not a key file */
	at("missing.key");
	UNIT_OK(refused("does not exist"), "a missing file is refused");
	at("");
	UNIT_OK(refused("not a regular file"), "a directory is refused");
	at("fifo.key");
	UNIT_OK(mkfifo(path, 0600) == 0 && refused("not a regular file"),
			"a FIFO is refused without hanging");
	write_file("short.key", line, HOST_KEY_FILE_LEN - 1, 0600);
	UNIT_OK(refused("not a bothy-host key file"), "a file one byte short is refused");
	memcpy(text, line, HOST_KEY_FILE_LEN);
	text[HOST_KEY_FILE_LEN] = '\n';
	write_file("long.key", text, HOST_KEY_FILE_LEN + 1, 0600);
	UNIT_OK(refused("not a bothy-host key file"), "a file one byte long is refused");
	memcpy(text, line, HOST_KEY_FILE_LEN);
	text[94] = ' ';
	write_file("bad.key", text, HOST_KEY_FILE_LEN, 0600);
	UNIT_OK(refused("not a bothy-host key file"), "a line without its newline is refused");
	memcpy(text, line, HOST_KEY_FILE_LEN);
	text[14] = '0';
	text[15] = '1';
	text[16] = '8';
	text[17] = '9';
	text[18] = '0';
	text[19] = 'A';
	write_file("bad.key", text, HOST_KEY_FILE_LEN, 0600);
	UNIT_OK(refused("not a bothy-host key file"), "a host ID in upper case is refused");
	memcpy(text, line, HOST_KEY_FILE_LEN);
	text[60] = '+';
	write_file("bad.key", text, HOST_KEY_FILE_LEN, 0600);
	UNIT_OK(refused("not a bothy-host key file"), "a seed outside base64url is refused");
	memcpy(text, line, HOST_KEY_FILE_LEN);
	memcpy(text, "bothy-ed25519-v1", 13);
	write_file("bad.key", text, HOST_KEY_FILE_LEN, 0600);
	UNIT_OK(refused("not a bothy-host key file"), "another prefix is refused");

	/* another user's file (only root can make one) */
	if (geteuid() == 0)
	{
		write_file("theirs.key", line, HOST_KEY_FILE_LEN, 0600);
		UNIT_OK(chown(path, 65534, 65534) == 0 && refused("another user"),
				"a key file of another user is refused");
	}
	else
		UNIT_OK(true, "a key file of another user is refused # SKIP not root");

	/* a pair that failed takes back only the file it created */
	at("taken.key");
	UNIT_OK(host_key_create_file(path, &k, &f, err, sizeof(err)), "a key file for a pairing");
	host_key_file_remove(path, &f);
	UNIT_OK(access(path, F_OK) != 0 && f.fd == -1, "a failed pairing removes it");
	UNIT_OK(host_key_create_file(path, &k, &f, err, sizeof(err)), "again");
	{
		char		moved[300];

		snprintf(moved, sizeof(moved), "%s.moved", path);
		rename(path, moved);
		write_file("taken.key", "someone else's", 14, 0600);
		host_key_file_remove(path, &f);
		UNIT_OK(access(path, F_OK) == 0, "a file put in its place meanwhile is left alone");
		unlink(moved);
	}

	host_key_wipe(&k);
	UNIT_OK(sodium_is_zero((const unsigned char *) &k, sizeof(k)), "wipe clears the key");
	nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
	return unit_done();
}

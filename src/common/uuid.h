/*
 * uuid.h
 *		The UUID value shared by the extension and the gateway: strict parse
 *		of the canonical lower-case text form, formatting, and the RFC 9562
 *		version 7 checks the signal codec needs.
 *
 * Portable C99 without allocation, so the same object file links into a
 * PostgreSQL backend and into the libwebsockets daemon.  Only the canonical
 * form is accepted because every producer of a signal writes that form; a
 * second spelling of one ID would let two nodes disagree about equality.
 */
#ifndef BOTHY_UUID_H
#define BOTHY_UUID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct bothy_uuid
{
	uint8_t		b[16];			/* network byte order, as RFC 9562 lays it out */
} bothy_uuid;

/* Length of the text form without its NUL: 8-4-4-4-12 hex digits. */
#define BOTHY_UUID_STRLEN 36

/*
 * True and *out set when s[0..len) is exactly a canonical lower-case UUID;
 * len must be 36.  s need not be NUL-terminated.  *out is untouched on false.
 */
bool		bothy_uuid_parse(const char *s, size_t len, bothy_uuid *out);

/* Lower-case canonical text of u, NUL-terminated. */
void		bothy_uuid_format(const bothy_uuid *u, char out[BOTHY_UUID_STRLEN + 1]);

/* Version nibble 7 and the RFC 9562 variant (bits 10xx). */
bool		bothy_uuid_is_v7(const bothy_uuid *u);

/* The 48-bit Unix milliseconds of a UUIDv7 (its first six bytes). */
uint64_t	bothy_uuidv7_ms(const bothy_uuid *u);

/* memcmp order, which for UUIDv7 is creation order: <0, 0 or >0. */
int			bothy_uuid_compare(const bothy_uuid *a, const bothy_uuid *b);

#endif							/* BOTHY_UUID_H */

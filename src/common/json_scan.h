/*
 * json_scan.h
 *		A strict RFC 8259 validator and a reader of the members of a
 *		validated top-level object.  Internal to the signal codec.
 *
 * Nothing is allocated and nothing is copied: the reader hands out spans of
 * the caller's buffer, which need not be NUL-terminated and is never read
 * past its length.  Validation is a separate first pass so that the codec
 * can put "not JSON" before every other fault, whatever order the faults
 * appear in.
 */
#ifndef BOTHY_JSON_SCAN_H
#define BOTHY_JSON_SCAN_H

#include <stdbool.h>
#include <stddef.h>

/* Arrays and objects nest at most this deep; the top-level value is 1. */
#define BOTHY_JSON_MAX_DEPTH 32

typedef enum bothy_json_type
{
	BOTHY_JSON_INVALID = 0,
	BOTHY_JSON_OBJECT,
	BOTHY_JSON_ARRAY,
	BOTHY_JSON_STRING,
	BOTHY_JSON_NUMBER,
	BOTHY_JSON_TRUE,
	BOTHY_JSON_FALSE,
	BOTHY_JSON_NULL
} bothy_json_type;

/*
 * The type of the one JSON value that buf[0..len) holds with optional
 * whitespace around it, or BOTHY_JSON_INVALID.  Strings must be valid UTF-8
 * and their \u escapes must pair surrogates; a NUL byte is never valid.
 */
bothy_json_type bothy_json_validate(const char *buf, size_t len);

/* One member of an object, as spans of the validated buffer. */
typedef struct bothy_json_member
{
	const char *name;			/* between the quotes, escapes not decoded */
	size_t		name_len;
	bothy_json_type type;
	const char *value;			/* a string: between the quotes; else all of it */
	size_t		value_len;
} bothy_json_member;

typedef struct bothy_json_reader
{
	const char *buf;
	size_t		len;
	size_t		pos;			/* the next member starts at or after this */
} bothy_json_reader;

/* buf[0..len) must have passed bothy_json_validate as an object. */
void		bothy_json_reader_init(bothy_json_reader *r, const char *buf, size_t len);

/* The next member in payload order; false after the last one. */
bool		bothy_json_reader_next(bothy_json_reader *r, bothy_json_member *m);

/*
 * Decode the escapes of a validated string's raw content into out (cap
 * bytes, not NUL-terminated) and return the decoded length kept.
 * *truncated is set when the decoded string is longer than cap.
 */
size_t		bothy_json_unescape(const char *raw, size_t raw_len,
								char *out, size_t cap, bool *truncated);

#endif							/* BOTHY_JSON_SCAN_H */

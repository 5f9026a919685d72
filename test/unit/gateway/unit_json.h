/*
 * unit_json.h
 *		Helpers of the gateway's unit tests that read what an encoder wrote
 *		as JSON (jansson) and that spell UUIDs: one copy for every test.
 */
#ifndef BOTHY_UNIT_JSON_H
#define BOTHY_UNIT_JSON_H

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "uuid.h"

/* A UUID of the test's own text (exits when the test's text is wrong). */
static inline bothy_uuid
unit_uuid(const char *text)
{
	bothy_uuid	u;

	if (!bothy_uuid_parse(text, strlen(text), &u))
		exit(2);
	return u;
}

/* The n bytes of text as one JSON object, duplicates refused; NULL if not. */
static inline json_t *
unit_load_object(const char *text, long n)
{
	json_t	   *v;

	if (text == NULL || n < 0)
		return NULL;
	v = json_loadb(text, (size_t) n, JSON_REJECT_DUPLICATES, NULL);
	if (v != NULL && !json_is_object(v))
	{
		json_decref(v);
		return NULL;
	}
	return v;
}

/* The member name of obj is the string value, exactly (no NUL inside). */
static inline bool
unit_member_is(json_t *obj, const char *name, const char *value)
{
	json_t	   *v = json_object_get(obj, name);

	return json_is_string(v) && strcmp(json_string_value(v), value) == 0 &&
		strlen(value) == json_string_length(v);
}

#endif							/* BOTHY_UNIT_JSON_H */

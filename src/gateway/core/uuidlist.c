/*
 * core/uuidlist.c
 *		UUID lists for libpq, as text (see uuidlist.h).
 */
#include <stdlib.h>
#include <string.h>

#include "core/uuidlist.h"

char *
gw_uuid_array_literal(const bothy_uuid *ids, size_t n)
{
	char	   *text = malloc(n * (BOTHY_UUID_STRLEN + 1) + 3);
	char	   *p = text;
	size_t		i;

	if (text == NULL)
		return NULL;
	*p++ = '{';
	for (i = 0; i < n; i++)
	{
		if (i > 0)
			*p++ = ',';
		bothy_uuid_format(&ids[i], p);
		p += BOTHY_UUID_STRLEN;
	}
	*p++ = '}';
	*p = '\0';
	return text;
}

bool
gw_parse_uuid_list(const char *text, bothy_uuid **ids, size_t *n)
{
	size_t		len = strlen(text),
				count = len == 0 ? 0 : (len + 1) / (BOTHY_UUID_STRLEN + 1),
				i;
	bothy_uuid *out;

	*ids = NULL;
	*n = 0;
	if (len == 0)
		return true;
	if ((len + 1) % (BOTHY_UUID_STRLEN + 1) != 0)
		return false;
	out = malloc(count * sizeof(*out));
	if (out == NULL)
		return false;
	for (i = 0; i < count; i++)
	{
		const char *p = text + i * (BOTHY_UUID_STRLEN + 1);

		if ((i + 1 < count && p[BOTHY_UUID_STRLEN] != ',') ||
			!bothy_uuid_parse(p, BOTHY_UUID_STRLEN, &out[i]))
		{
			free(out);
			return false;
		}
	}
	*ids = out;
	*n = count;
	return true;
}

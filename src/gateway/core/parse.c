/*
 * core/parse.c
 *		The log codes of a parse status (core/parse.h).
 */
#include "core/parse.h"

const char *
gw_parse_status_code(gw_parse_status s)
{
	static const char *const codes[] = {
		[GW_PARSE_OK] = "ok",
		[GW_PARSE_NOT_JSON] = "not_json",
		[GW_PARSE_NOT_OBJECT] = "not_object",
		[GW_PARSE_NO_OP] = "no_op",
		[GW_PARSE_UNKNOWN_OP] = "unknown_op",
		[GW_PARSE_UNKNOWN_FIELD] = "unknown_field",
		[GW_PARSE_MISSING_FIELD] = "missing_field",
		[GW_PARSE_BAD_FIELD] = "bad_field",
	};

	/* unsigned: a value below zero is out of range too */
	return (unsigned) s < sizeof(codes) / sizeof(codes[0]) ? codes[s] : "unknown";
}

/*
 * intparse.h
 *		The strict decimal integer shared by bothy-gateway and bothy-host:
 *		their options, and the numbers they read back from PostgreSQL's text
 *		results and HTTP headers.
 *
 * Portable C99 without allocation, like the rest of src/common (it links
 * into the extension too, unused there).  strtol would take "10x", " 10",
 * "+10" and "0x10", and clamp on overflow; an option or a header that is
 * not exactly a number within its range is refused instead, so a mistyped
 * value is an error the operator sees, never a default silently used.
 */
#ifndef BOTHY_INTPARSE_H
#define BOTHY_INTPARSE_H

#include <stdbool.h>

/*
 * Strict integer: decimal digits only (an optional leading '-' where min
 * allows it), no blanks, within min .. max.  *out is set only on true.
 */
bool		bothy_parse_int(const char *s, long min, long max, long *out);

#endif							/* BOTHY_INTPARSE_H */

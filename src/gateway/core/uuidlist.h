/*
 * core/uuidlist.h
 *		Lists of UUIDs as they cross the libpq boundary: the array literal
 *		a uuid[] parameter takes as text, and the comma-separated text of
 *		array_to_string(uuid[], ',') an answer gives.  Pure, unit-tested in
 *		test/unit/gateway/test_events.c.  (The binary uuid[] and the sorted
 *		lists a node sent until 0.3.0's admission by node live on in
 *		bench/uuid_lists.c, for the benches that compare against them.)
 */
#ifndef BOTHY_GATEWAY_UUIDLIST_H
#define BOTHY_GATEWAY_UUIDLIST_H

#include <stdbool.h>
#include <stddef.h>

#include "uuid.h"

/* "{uuid,uuid,...}": a PostgreSQL array literal, malloc'd; NULL when out of memory. */
char	   *gw_uuid_array_literal(const bothy_uuid *ids, size_t n);

/*
 * The UUIDs of "uuid,uuid,..." (array_to_string of a uuid[]), malloc'd
 * into *ids ("" is none); false when a part is not a canonical UUID or out
 * of memory.
 */
bool		gw_parse_uuid_list(const char *text, bothy_uuid **ids, size_t *n);

#endif							/* BOTHY_GATEWAY_UUIDLIST_H */

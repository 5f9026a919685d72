/*
 * core/uuidlist.h
 *		Lists of UUIDs as they cross the libpq boundary: the array literal
 *		a uuid[] parameter takes as text, the same array in binary, the
 *		comma-separated text of array_to_string(uuid[], ',') an answer
 *		gives, and their order.  Pure, unit-tested in
 *		test/unit/gateway/test_events.c.
 */
#ifndef BOTHY_GATEWAY_UUIDLIST_H
#define BOTHY_GATEWAY_UUIDLIST_H

#include <stdbool.h>
#include <stddef.h>

#include "uuid.h"

/* "{uuid,uuid,...}": a PostgreSQL array literal, malloc'd; NULL when out of memory. */
char	   *gw_uuid_array_literal(const bothy_uuid *ids, size_t n);

/*
 * The same array in PostgreSQL's binary format of uuid[] (array_send: one
 * dimension, no NULL, element type uuid; 20 + 20 * n bytes, into *len),
 * malloc'd; NULL when out of memory.  It spares the server about 0.6 us a
 * UUID against the text literal (docs/performance.md, "The audience in the
 * database").
 */
char	   *gw_uuid_array_binary(const bothy_uuid *ids, size_t n, int *len);

/* Sorts in memcmp order (bothy_uuid_compare's), in place. */
void		gw_uuid_sort(bothy_uuid *ids, size_t n);

/*
 * The UUIDs of "uuid,uuid,..." (array_to_string of a uuid[]), malloc'd
 * into *ids ("" is none); false when a part is not a canonical UUID or out
 * of memory.
 */
bool		gw_parse_uuid_list(const char *text, bothy_uuid **ids, size_t *n);

#endif							/* BOTHY_GATEWAY_UUIDLIST_H */

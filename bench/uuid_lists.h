/*
 * bench/uuid_lists.h
 *		The lists of persons a gateway sent until 0.3.0's admission by
 *		node (then src/gateway/core/uuidlist.c): a node's persons sorted
 *		by UUID, and as a uuid[] in PostgreSQL's binary format.
 */
#ifndef BENCH_UUID_LISTS_H
#define BENCH_UUID_LISTS_H

#include <stddef.h>

#include "uuid.h"

/*
 * PostgreSQL's binary format of uuid[] (array_send: one dimension, no
 * NULL, element type uuid; 20 + 20 * n bytes, into *len), malloc'd; NULL
 * when out of memory.  It spared the server about 0.6 us a UUID against
 * the text literal.
 */
char	   *bench_uuid_array_binary(const bothy_uuid *ids, size_t n, int *len);

/* Sorts in memcmp order (bothy_uuid_compare's), in place. */
void		bench_uuid_sort(bothy_uuid *ids, size_t n);

#endif							/* BENCH_UUID_LISTS_H */

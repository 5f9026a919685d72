/*
 * members.h
 *		What the seam's C bodies share (members_sql.c, members_here.c):
 *		a result set of UUIDs, the order of UUIDs, and the tables they read
 *		opened as the executor would (the SELECT privilege checked).
 */
#ifndef BOTHY_MEMBERS_H
#define BOTHY_MEMBERS_H

#include "postgres.h"

#include "fmgr.h"
#include "funcapi.h"
#include "utils/rel.h"
#include "utils/uuid.h"

/* The call's result set: one uuid column, materialized. */
extern void bothy_begin_uuid_set(FunctionCallInfo fcinfo);
extern void bothy_put_uuid(ReturnSetInfo *rsinfo, const pg_uuid_t *id);

/* memcmp order, the order of uuid's btree operator class. */
extern int	bothy_uuid_order(const void *a, const void *b);

/* bothy.<name>, opened AccessShareLock after the SELECT privilege check. */
extern Relation bothy_open_table(const char *name);

/* The primary key of bothy.memberships, (place, person), checked. */
extern Relation bothy_open_membership_index(Relation memberships);

#endif							/* BOTHY_MEMBERS_H */

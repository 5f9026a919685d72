/*
 * bothy_ext.h
 *		Declarations shared between the extension's C files: the backend's
 *		UUIDv7 generator and the staging of signals.
 */
#ifndef BOTHY_EXT_H
#define BOTHY_EXT_H

#include "signal.h"
#include "uuid.h"

/* The channel every signal is sent on. */
#define BOTHY_SIGNAL_CHANNEL "ephemeral"

/* A fresh UUIDv7 from this backend's monotonic generator. */
extern void bothy_uuidv7_generate(bothy_uuid *out);

/*
 * Stage an encoded, validated signal (payload, the encoding of sig) to be
 * sent on the channel if and when the current (sub)transaction commits.
 */
extern void bothy_stage_signal(const char *payload, const bothy_signal *sig);
extern void bothy_stage_register_callbacks(void);

/* Wake the maintenance worker at the commit of the current transaction. */
extern void bothy_stage_wake_maintenance(void);

#endif							/* BOTHY_EXT_H */

/*
 * stage.c
 *		Staging of signals for the channel ephemeral.
 *
 * For now a staged signal is a plain NOTIFY in the caller's transaction:
 * PostgreSQL already sends it only after the commit and drops it with a
 * rollback of the transaction or of its subtransaction (D-M2-47-4).  The
 * price is NOTIFY's cluster-wide commit lock, which every notifying
 * transaction waits for; the fan-out worker (a later version) will take the
 * signals off the producer's commit path and keep these same semantics.
 */
#include "postgres.h"

#include "commands/async.h"

#include "bothy_ext.h"

void
bothy_stage_signal(const char *payload)
{
	Async_Notify(BOTHY_SIGNAL_CHANNEL, payload);
}

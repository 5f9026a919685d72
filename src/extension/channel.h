/*
 * channel.h
 *		The channel "ephemeral" belongs to bothy: its key, the signed send
 *		every NOTIFY of bothy goes through, and the guard that refuses
 *		everyone else's LISTEN and NOTIFY on it (docs/security.md).
 */
#ifndef BOTHY_CHANNEL_H
#define BOTHY_CHANNEL_H

/*
 * NOTIFY payload (a codec encoding, at most BOTHY_SIGNAL_MAX_BYTES) on
 * ephemeral in its envelope, signed with the channel key.  An ERROR when
 * the key cannot be used; call it only where an error may abort.
 */
extern void bothy_channel_notify(const char *payload);

/* The key, drawn once per server start (shmem.c). */
extern void bothy_channel_key_init(unsigned char *key);

/* Installs the guard's hooks, chained to those installed before (_PG_init). */
extern void bothy_channel_guard_install(void);

#endif							/* BOTHY_CHANNEL_H */

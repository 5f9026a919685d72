/*
 * settings.h
 *		The cluster settings of bothy: every bothy.* GUC, its checks, and the
 *		cross-setting rule that presence_ttl exceed twice the flush interval.
 *
 * The gateways read these through bothy.settings() so that the whole
 * cluster runs on one configuration, the one of the database.
 */
#ifndef BOTHY_SETTINGS_H
#define BOTHY_SETTINGS_H

typedef enum BothyClusterMode
{
	BOTHY_MODE_SINGLE = 0,
	BOTHY_MODE_MULTI
} BothyClusterMode;

/* Values in force in this process; durations are in milliseconds. */
extern char *bothy_database;
extern int	bothy_cluster_mode;
extern int	bothy_presence_flush_interval_ms;
extern int	bothy_presence_ttl_ms;
extern int	bothy_typing_ttl_ms;
extern int	bothy_agent_presence_timeout_ms;
extern int	bothy_agent_heartbeat_persist_interval_ms;
extern int	bothy_listen_reconnect_backoff_cap_ms;
extern int	bothy_signing_key_cache_ttl_ms;
extern int	bothy_consumer_lease_ms;
extern int	bothy_signal_queue_size_kb;
extern int	bothy_fanout_batch_size;
extern int	bothy_fanout_linger_ms;

/* The frozen UUIDv7 clock for race tests, or -1 when the real clock runs. */
extern int64 bothy_debug_uuidv7_frozen_ms;

extern void bothy_settings_define(void);

/*
 * Reports at elevel (ERROR, or LOG for a caller that must go on) when the
 * settings in force break a rule no single check hook can see; returns
 * whether they are consistent.
 */
extern bool bothy_settings_consistent(int elevel);

#endif							/* BOTHY_SETTINGS_H */

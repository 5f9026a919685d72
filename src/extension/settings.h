/*
 * settings.h
 *		The cluster settings of bothy: every bothy.* GUC, its checks, and the
 *		rules across two settings (presence_ttl above twice the flush
 *		interval, the terminal's open timeout above twice the duplicate probe
 *		timeout and twice the log poll interval).
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
extern int	bothy_terminal_open_timeout_ms;
extern int	bothy_terminal_host_heartbeat_interval_ms;
extern int	bothy_terminal_host_heartbeat_miss_limit;
extern int	bothy_terminal_host_duplicate_probe_timeout_ms;
extern int	bothy_terminal_idle_timeout_ms;
extern int	bothy_terminal_idle_grace_ms;
extern int	bothy_terminal_fingerprint_max_attempts;
extern int	bothy_terminal_log_poll_interval_ms;
extern int	bothy_terminal_log_retention_ms;

/* The frozen UUIDv7 clock for race tests, or -1 when the real clock runs. */
extern int64 bothy_debug_uuidv7_frozen_ms;

extern void bothy_settings_define(void);

/* Which functions a rule across two settings stops while it is broken. */
typedef enum BothySettingsScope
{
	BOTHY_SETTINGS_PRESENCE = 0x1,	/* the presence flush and read, node start */
	BOTHY_SETTINGS_TERMINAL = 0x2,	/* terminal opens and attaches */
	BOTHY_SETTINGS_ALL = 0x3
} BothySettingsScope;

/*
 * Reports at elevel (ERROR, or LOG for a caller that must go on) when the
 * settings in force break a rule no single check hook can see; returns
 * whether they are consistent.  The _in form checks the rules of some
 * scopes (BothySettingsScope bits) only.
 */
extern bool bothy_settings_consistent(int elevel);
extern bool bothy_settings_consistent_in(int elevel, unsigned scopes);

/* The sentence of the first broken rule (palloc'd), or NULL when all hold. */
extern const char *bothy_settings_broken(void);

#endif							/* BOTHY_SETTINGS_H */

/*
 * channel_guard.c
 *		Only bothy speaks on "ephemeral", and only bothy_gateway listens
 *		(docs/security.md, "The channel").
 *
 * PostgreSQL lets any login LISTEN and NOTIFY on any channel of its
 * database.  In the database named by bothy.database this guard refuses:
 *  - LISTEN ephemeral, unless the role has the privileges of bothy_gateway
 *    or is a superuser: what travels there names hosts, devices, runs and
 *    persons;
 *  - NOTIFY ephemeral, unless a superuser: bothy's own processes notify
 *    through Async_Notify() in C (channel.c), never through a command;
 *  - pg_notify('ephemeral', ...) with the channel written as a constant,
 *    unless a superuser, at parse analysis, so the obvious forgery gets the
 *    same clear error as the command.
 * A pg_notify() whose channel is computed cannot be seen before it runs
 * (fmgr calls built-in functions directly, with no hook), so the guard is
 * not the authority: every node drops a payload the channel key did not
 * sign (src/common/envelope.h).  Decisions are on role membership
 * (has_privs_of_role), as pgaudit and sepgsql decide, never on a name; the
 * previous hooks are chained, as they must be.
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type_d.h"
#include "commands/dbcommands.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "parser/analyze.h"
#include "tcop/utility.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"

#include "bothy_ext.h"
#include "channel.h"
#include "settings.h"

#define GATEWAY_ROLE "bothy_gateway"

static ProcessUtility_hook_type prev_process_utility = NULL;
static post_parse_analyze_hook_type prev_post_parse_analyze = NULL;

/* -1: not yet known in this backend; its database never changes */
static int	guarding = -1;

/*
 * Whether this backend's database is bothy's: a channel is per database, so
 * "ephemeral" in any other one is somebody else's.
 */
static bool
in_bothy_database(void)
{
	if (guarding < 0)
	{
		Oid			db;

		if (!OidIsValid(MyDatabaseId) || !IsTransactionState())
			return false;		/* decided later, inside a transaction */
		db = get_database_oid(bothy_database, true);
		guarding = OidIsValid(db) && db == MyDatabaseId ? 1 : 0;
	}
	return guarding == 1;
}

static void
refuse_notify(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("permission denied to notify on channel \"%s\"", BOTHY_SIGNAL_CHANNEL),
			 errdetail("Only bothy's own processes send on this channel."),
			 errhint("Stage a signal with an application function (bothy.run_changed and the others); see docs/security.md.")));
}

static bool
may_listen(void)
{
	Oid			gateway = get_role_oid(GATEWAY_ROLE, true);

	return superuser() || (OidIsValid(gateway) && has_privs_of_role(GetUserId(), gateway));
}

static void
guard_utility(PlannedStmt *pstmt, const char *queryString, bool readOnlyTree,
			  ProcessUtilityContext context, ParamListInfo params,
			  QueryEnvironment *queryEnv, DestReceiver *dest, QueryCompletion *qc)
{
	Node	   *stmt = pstmt->utilityStmt;

	if (IsA(stmt, NotifyStmt) &&
		strcmp(((NotifyStmt *) stmt)->conditionname, BOTHY_SIGNAL_CHANNEL) == 0 &&
		in_bothy_database() && !superuser())
		refuse_notify();
	if (IsA(stmt, ListenStmt) &&
		strcmp(((ListenStmt *) stmt)->conditionname, BOTHY_SIGNAL_CHANNEL) == 0 &&
		in_bothy_database() && !may_listen())
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to listen on channel \"%s\"", BOTHY_SIGNAL_CHANNEL),
				 errdetail("Only members of %s listen on this channel.", GATEWAY_ROLE)));

	if (prev_process_utility)
		prev_process_utility(pstmt, queryString, readOnlyTree, context, params,
							 queryEnv, dest, qc);
	else
		standard_ProcessUtility(pstmt, queryString, readOnlyTree, context, params,
								queryEnv, dest, qc);
}

/* A call of pg_notify whose first argument is the constant 'ephemeral'. */
static bool
find_constant_notify(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (IsA(node, FuncExpr) && ((FuncExpr *) node)->funcid == F_PG_NOTIFY)
	{
		Node	   *channel = linitial(((FuncExpr *) node)->args);

		if (IsA(channel, Const) && !((Const *) channel)->constisnull &&
			((Const *) channel)->consttype == TEXTOID &&
			strcmp(TextDatumGetCString(((Const *) channel)->constvalue),
				   BOTHY_SIGNAL_CHANNEL) == 0)
			return true;
	}
	if (IsA(node, Query))
		return query_tree_walker((Query *) node, find_constant_notify, context, 0);
	return expression_tree_walker(node, find_constant_notify, context);
}

static void
guard_post_parse_analyze(ParseState *pstate, Query *query, JumbleState *jstate)
{
	if (prev_post_parse_analyze)
		prev_post_parse_analyze(pstate, query, jstate);
	if (query->commandType != CMD_UTILITY && in_bothy_database() && !superuser() &&
		find_constant_notify((Node *) query, NULL))
		refuse_notify();
}

void
bothy_channel_guard_install(void)
{
	prev_process_utility = ProcessUtility_hook;
	ProcessUtility_hook = guard_utility;
	prev_post_parse_analyze = post_parse_analyze_hook;
	post_parse_analyze_hook = guard_post_parse_analyze;
}

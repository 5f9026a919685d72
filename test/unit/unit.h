/*
 * unit.h
 *		A tiny TAP producer for the C unit tests: "ok N - desc" or
 *		"not ok N - desc" per check, the plan "1..N" at the end, and a
 *		non-zero exit status when any check failed.
 *
 * Header-only so each test is one C file linked with src/common and
 * nothing else.
 */
#ifndef BOTHY_UNIT_H
#define BOTHY_UNIT_H

#include <stdio.h>

static int	unit_run;
static int	unit_failed;

/* Report one check; a failure also names the line that made it. */
#define UNIT_OK(cond, desc) unit_ok((cond) ? 1 : 0, (desc), __FILE__, __LINE__)

static void
unit_ok(int pass, const char *desc, const char *file, int line)
{
	unit_run++;
	if (pass)
	{
		printf("ok %d - %s\n", unit_run, desc);
		return;
	}
	unit_failed++;
	printf("not ok %d - %s\n", unit_run, desc);
	printf("#   failed at %s:%d\n", file, line);
}

/* A diagnostic line, which TAP consumers show but do not count. */
static void
unit_diag(const char *text)
{
	printf("# %s\n", text);
}

/* Print the plan; the exit status of main. */
static int
unit_done(void)
{
	printf("1..%d\n", unit_run);
	if (unit_failed > 0)
		printf("# %d of %d checks failed\n", unit_failed, unit_run);
	fflush(stdout);
	return unit_failed > 0 ? 1 : 0;
}

#endif							/* BOTHY_UNIT_H */

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
#include <stdlib.h>
#include <string.h>

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

/*
 * One case of a table folded into a single check: a failing case is named
 * in a diagnostic, so the check's "not ok" says which.  Returns pass.
 */
static inline int
unit_case(int pass, const char *name)
{
	if (!pass)
		printf("#   case failed: %s\n", name);
	return pass;
}

/*
 * A heap copy of exactly len bytes, so that AddressSanitizer reports a read
 * past len by the code under test (a stack or literal buffer would hide it).
 * Exits when out of memory; free() it.
 */
static inline char *
unit_exact_copy(const void *data, size_t len)
{
	char	   *copy = malloc(len > 0 ? len : 1);

	if (copy == NULL)
	{
		fprintf(stderr, "out of memory\n");
		exit(2);
	}
	if (len > 0)
		memcpy(copy, data, len);
	return copy;
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

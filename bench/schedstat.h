/*
 * bench/schedstat.h
 *		The CPU a process has used, in nanoseconds, from the first field of
 *		/proc/PID/schedstat: a backend's cost per operation wants better than
 *		/proc/PID/stat's 10 ms ticks.  Shared by the benches' C clients.
 */
#ifndef BENCH_SCHEDSTAT_H
#define BENCH_SCHEDSTAT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* false when the file cannot be read (another machine, or another user's process) */
static inline bool
bench_cpu_ns(int pid, uint64_t *ns)
{
	char		path[64];
	unsigned long long v = 0;
	FILE	   *f;
	bool		ok;

	snprintf(path, sizeof(path), "/proc/%d/schedstat", pid);
	f = fopen(path, "r");
	if (f == NULL)
		return false;
	ok = fscanf(f, "%llu", &v) == 1;
	fclose(f);
	*ns = v;
	return ok;
}

#endif

/*
 * host/pty.h
 *		Starting a shell on a new PTY (forkpty), and knowing it really runs:
 *		a close-on-exec pipe tells the parent whether exec succeeded, so
 *		session.started is sent only for a shell that runs.
 */
#ifndef BOTHY_HOST_PTY_H
#define BOTHY_HOST_PTY_H

#include <stdbool.h>
#include <sys/types.h>

/* The window size a shell starts with, until the device's first resize. */
#define HOST_PTY_ROWS 24
#define HOST_PTY_COLS 80

/*
 * Starts shell as a session leader on a new PTY, in the user's home
 * directory, with this process's environment and TERM=xterm-256color.
 * *master is the PTY's master (non-blocking, close-on-exec).  False (and
 * nothing left behind) when the PTY or the shell could not be started.
 */
bool		host_pty_spawn(const char *shell, int *master, pid_t *pid);

#endif							/* BOTHY_HOST_PTY_H */

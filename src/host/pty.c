/*
 * host/pty.c
 *		A shell on a new PTY (see pty.h).
 *
 * Between fork and exec the child calls only async-signal-safe
 * functions: the environment and the home directory are prepared before
 * the fork.  The child undoes what this process set up for itself: the
 * signal dispositions (SIGPIPE ignored survives exec), the blocked mask,
 * and every descriptor but the PTY and the exec pipe.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pty.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "host/pty.h"

extern char **environ;

/* How many entries of this process's environment the shell inherits at most. */
#define ENV_MAX 1024

static const char term[] = "TERM=xterm-256color";

static void
child(const char *shell, const char *home, char **envp, int status_fd)
{
	const int	signals[] = {SIGPIPE, SIGTERM, SIGINT, SIGHUP, SIGCHLD, SIGQUIT};
	sigset_t	none;
	size_t		i;
	int			err;

	for (i = 0; i < sizeof(signals) / sizeof(signals[0]); i++)
		signal(signals[i], SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	/* every descriptor of the service but the PTY (0-2) and the exec pipe */
	if (status_fd > 3)
		close_range(3, (unsigned) status_fd - 1, 0);
	close_range((unsigned) status_fd + 1, ~0U, 0);
	if (chdir(home) != 0 && chdir("/") != 0)
		_exit(126);
	execve(shell, (char *const[]) {(char *) shell, NULL}, envp);
	err = errno;
	if (write(status_fd, &err, sizeof(err)) < 0)
		_exit(127);
	_exit(127);
}

bool
host_pty_spawn(const char *shell, int *master, pid_t *pid)
{
	struct winsize ws = {.ws_row = HOST_PTY_ROWS, .ws_col = HOST_PTY_COLS};
	struct passwd *pw = getpwuid(geteuid());
	char		home[4096];
	char	   *envp[ENV_MAX + 2];
	size_t		n = 0;
	char	  **e;
	int			pipefd[2];
	int			err = 0;
	ssize_t		got;
	int			flags;

	snprintf(home, sizeof(home), "%s", pw != NULL && pw->pw_dir != NULL ? pw->pw_dir : "/");
	for (e = environ; *e != NULL && n < ENV_MAX; e++)
		if (strncmp(*e, "TERM=", 5) != 0)
			envp[n++] = *e;
	envp[n++] = (char *) term;
	envp[n] = NULL;

	if (pipe2(pipefd, O_CLOEXEC) != 0)
		return false;
	*pid = forkpty(master, NULL, NULL, &ws);
	if (*pid < 0)
	{
		close(pipefd[0]);
		close(pipefd[1]);
		return false;
	}
	if (*pid == 0)
	{
		close(pipefd[0]);
		child(shell, home, envp, pipefd[1]);
	}
	close(pipefd[1]);
	/* EOF: exec closed the pipe; an errno: it failed */
	do
		got = read(pipefd[0], &err, sizeof(err));
	while (got < 0 && errno == EINTR);
	close(pipefd[0]);
	flags = fcntl(*master, F_GETFL);
	if (got != 0 || flags < 0 || fcntl(*master, F_SETFL, flags | O_NONBLOCK) != 0 ||
		fcntl(*master, F_SETFD, FD_CLOEXEC) != 0)
	{
		close(*master);
		kill(*pid, SIGKILL);
		while (waitpid(*pid, NULL, 0) < 0 && errno == EINTR)
			;
		return false;
	}
	return true;
}

/*
 * transfer_process.c — a ddb-transfer process run by a job's worker: its
 * standard input and output on pipes, started with fork and execv (no
 * shell: nothing in a request is ever a shell's to read), waited for, and
 * killed when the job fails.  The child writes its output at its own pace
 * and reads its input as it comes, so that one pipe at a time is used:
 * write-export reads its rows and says only at its end (or when it stops)
 * what happened; read-items writes its lines and reads nothing.  The pipes
 * do not block: the worker waits on its latch and the pipe together, so
 * that pg_terminate_backend, a fast shutdown and the postmaster's death end
 * it however stuck the child is, and the child is killed when the backend
 * exits (a FATAL error does not unwind to the callers' cleanup).
 */
#include "postgres.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "miscadmin.h"
#include "pgstat.h"
#include "storage/ipc.h"
#include "storage/latch.h"

#include "exports.h"

/* How much one read of the child's output takes. */
#define READ_CHUNK 65536

/* The running child, killed when the backend exits (kill_at_exit). */
static pid_t running_child = -1;
static bool exit_callback_set = false;

/* Kills the running child, if any (a before_shmem_exit callback: the backend exits, after a FATAL error too). */
static void
kill_at_exit(int code, Datum arg)
{
	if (running_child > 0)
	{
		(void) kill(running_child, SIGKILL);
		while (waitpid(running_child, NULL, 0) < 0 && errno == EINTR)
			;
		running_child = -1;
	}
}

/*
 * Waits until fd is ready for event (WL_SOCKET_READABLE or
 * WL_SOCKET_WRITEABLE), or an interrupt comes, which it serves.
 */
static void
wait_for_pipe(int fd, int event)
{
	int			rc = WaitLatchOrSocket(MyLatch, WL_LATCH_SET | event | WL_EXIT_ON_PM_DEATH, fd, -1, PG_WAIT_EXTENSION);

	if (rc & WL_LATCH_SET)
		ResetLatch(MyLatch);
	CHECK_FOR_INTERRUPTS();
}

/* Makes a pipe's end non-blocking. */
static void
set_nonblocking(int fd)
{
	if (fd >= 0 && fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0)
		ereport(ERROR, (errcode_for_file_access(), errmsg("could not make a pipe non-blocking: %m")));
}

/* Runs in the child: standard input, output and error set up, then ddb-transfer; never returns. */
static pg_attribute_noreturn() void
exec_child(const char **argv, int input, int output)
{
	sigset_t	none;
	char		message[512];
	int			len;

	/* the server's signal dispositions and mask are not the program's */
	for (int s = 1; s < NSIG; s++)
		(void) signal(s, SIG_DFL);
	sigemptyset(&none);
	(void) sigprocmask(SIG_SETMASK, &none, NULL);
	if (dup2(input, 0) < 0 || dup2(output, 1) < 0 || dup2(output, 2) < 0)
		_exit(127);
	closefrom(3);
	execv(argv[0], (char *const *) argv);
	len = snprintf(message, sizeof(message), "ddb-transfer: cannot run %s: %s\n", argv[0], strerror(errno));
	if (write(2, message, len) < 0)
		_exit(127);
	_exit(127);
}

/* Starts ddb-transfer; see exports.h. */
void
transfer_start(TransferProcess *process, const char **argv, bool with_input)
{
	int			output[2];
	int			input[2] = {-1, -1};
	pid_t		pid;

	argv[0] = transfer_program();
	if (!exit_callback_set)
	{
		before_shmem_exit(kill_at_exit, (Datum) 0);
		exit_callback_set = true;
	}
	memset(process, 0, sizeof(TransferProcess));
	process->pid = -1;
	process->to_child = process->from_child = -1;
	if (pipe2(output, O_CLOEXEC) != 0)
		ereport(ERROR, (errcode_for_file_access(), errmsg("could not create a pipe: %m")));
	if (with_input ? pipe2(input, O_CLOEXEC) != 0 : (input[0] = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0)
	{
		close(output[0]);
		close(output[1]);
		ereport(ERROR, (errcode_for_file_access(), errmsg("could not open the input of %s: %m", argv[0])));
	}
	fflush(NULL);
	pid = fork();
	if (pid == 0)
		exec_child(argv, input[0], output[1]);
	close(output[1]);
	close(input[0]);
	if (pid < 0)
	{
		close(output[0]);
		if (input[1] >= 0)
			close(input[1]);
		ereport(ERROR, (errcode(ERRCODE_SYSTEM_ERROR), errmsg("could not start %s: %m", argv[0])));
	}
	process->pid = running_child = pid;
	process->to_child = input[1];
	process->from_child = output[0];
	initStringInfo(&process->pending);
	set_nonblocking(process->to_child);
	set_nonblocking(process->from_child);
}

/* Writes to the child's input; see exports.h. */
bool
transfer_write(TransferProcess *process, const char *data, size_t len)
{
	while (len > 0)
	{
		ssize_t		n = write(process->to_child, data, len);

		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		{
			wait_for_pipe(process->to_child, WL_SOCKET_WRITEABLE);
			continue;
		}
		if (n < 0 && errno == EPIPE)
			return false;
		if (n < 0)
			ereport(ERROR, (errcode_for_file_access(), errmsg("could not write to ddb-transfer: %m")));
		data += n;
		len -= n;
	}
	return true;
}

/* The next line of the child's output; see exports.h. */
char *
transfer_read_line(TransferProcess *process)
{
	StringInfo	pending = &process->pending;

	for (;;)
	{
		char	   *newline = memchr(pending->data + pending->cursor, '\n', pending->len - pending->cursor);
		ssize_t		n;

		if (newline || (process->eof && pending->cursor < pending->len))
		{
			size_t		len = newline ? (size_t) (newline - (pending->data + pending->cursor))
				: (size_t) (pending->len - pending->cursor);
			char	   *line = pnstrdup(pending->data + pending->cursor, len);

			pending->cursor += len + (newline ? 1 : 0);
			return line;
		}
		if (process->eof)
			return NULL;
		/* what was taken goes, and a chunk more is read */
		if (pending->cursor > 0)
		{
			memmove(pending->data, pending->data + pending->cursor, pending->len - pending->cursor);
			pending->len -= pending->cursor;
			pending->cursor = 0;
		}
		enlargeStringInfo(pending, READ_CHUNK);
		CHECK_FOR_INTERRUPTS();
		n = read(process->from_child, pending->data + pending->len, READ_CHUNK);
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		{
			wait_for_pipe(process->from_child, WL_SOCKET_READABLE);
			continue;
		}
		if (n < 0)
			ereport(ERROR, (errcode_for_file_access(), errmsg("could not read from ddb-transfer: %m")));
		if (n == 0)
			process->eof = true;
		pending->len += n;
		pending->data[pending->len] = '\0';
	}
}

/*
 * Waits for the child to exit; its status.  A child that was killed is
 * waited for at once; one that ended its output is polled for, with the
 * backend's interrupts served, should it never exit.
 */
static int
wait_child(TransferProcess *process, bool killed)
{
	int			status = -1;
	pid_t		done;

	while ((done = waitpid(process->pid, &status, killed ? 0 : WNOHANG)) == 0
		   || (done < 0 && errno == EINTR))
	{
		if (done == 0)
		{
			(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, 10, PG_WAIT_EXTENSION);
			ResetLatch(MyLatch);
			CHECK_FOR_INTERRUPTS();
		}
	}
	process->pid = running_child = -1;
	return status;
}

/* Finishes the child; see exports.h. */
bool
transfer_finish(TransferProcess *process, char **first_line)
{
	char	   *line;
	int			status;

	if (process->to_child >= 0)
	{
		close(process->to_child);
		process->to_child = -1;
	}
	if (first_line)
		*first_line = NULL;
	while ((line = transfer_read_line(process)) != NULL)
	{
		if (first_line && *first_line == NULL && line[0] != '\0')
			*first_line = line;
	}
	close(process->from_child);
	process->from_child = -1;
	status = wait_child(process, false);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* Ends the child; see exports.h. */
void
transfer_kill(TransferProcess *process)
{
	if (process->to_child >= 0)
		close(process->to_child);
	if (process->from_child >= 0)
		close(process->from_child);
	process->to_child = process->from_child = -1;
	if (process->pid > 0)
	{
		(void) kill(process->pid, SIGKILL);
		(void) wait_child(process, true);
	}
}

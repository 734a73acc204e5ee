/*
 * transfer_process.c — a ddb-transfer process run by a job's worker: its
 * standard input and output on pipes, started with fork and execv (no
 * shell: nothing in a request is ever a shell's to read), waited for, and
 * killed when the job fails.  The child writes its output at its own pace
 * and reads its input as it comes, so that one pipe at a time is used:
 * write-export reads its rows and says only at its end (or when it stops)
 * what happened; read-items writes its lines and reads nothing.
 */
#include "postgres.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "miscadmin.h"

#include "exports.h"

/* How much one read of the child's output takes. */
#define READ_CHUNK 65536

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
	process->pid = pid;
	process->to_child = input[1];
	process->from_child = output[0];
	initStringInfo(&process->pending);
}

/* Writes to the child's input; see exports.h. */
bool
transfer_write(TransferProcess *process, const char *data, size_t len)
{
	while (len > 0)
	{
		ssize_t		n = write(process->to_child, data, len);

		if (n < 0 && errno == EINTR)
		{
			CHECK_FOR_INTERRUPTS();
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
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			ereport(ERROR, (errcode_for_file_access(), errmsg("could not read from ddb-transfer: %m")));
		if (n == 0)
			process->eof = true;
		pending->len += n;
		pending->data[pending->len] = '\0';
	}
}

/* Waits for the child to exit; its status. */
static int
wait_child(TransferProcess *process)
{
	int			status = -1;

	while (waitpid(process->pid, &status, 0) < 0 && errno == EINTR)
		;
	process->pid = -1;
	return status;
}

/* Finishes the child; see exports.h. */
bool
transfer_finish(TransferProcess *process, char **last_line)
{
	char	   *line;
	int			status;

	if (process->to_child >= 0)
	{
		close(process->to_child);
		process->to_child = -1;
	}
	if (last_line)
		*last_line = NULL;
	while ((line = transfer_read_line(process)) != NULL)
	{
		if (last_line && line[0] != '\0')
			*last_line = line;
	}
	close(process->from_child);
	process->from_child = -1;
	status = wait_child(process);
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
		(void) wait_child(process);
	}
}

/*
 * progress.c — the progress line on standard error, when it is a terminal:
 *
 *   ddb-transfer: 120000 items, 12.3 MB of 50.1 MB (24%), 51020 items/s, 0:08 left
 *   ddb-transfer: 120000 of about 500000 items (24%), 12.3 MB, 51020 items/s, 0:08 left
 *
 * An import knows the bytes of its files, an export (about) the items of
 * its table; the time left follows from the fraction done.  The line is
 * drawn over itself with a carriage return, padded with spaces where the
 * one before was longer, and cut to the terminal's width.
 */
#include "progress.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "elapsed.h"

/* Seconds between two draws of the line. */
#define DRAW_INTERVAL 0.25

/* The progress line of the process. */
static struct
{
	int			shown;
	long long	total_bytes;	/* 0 or less when unknown */
	long		total_items;	/* an estimate; 0 or less when unknown */
	struct timespec started;
	double		drawn_at;		/* seconds after the start of the last draw */
	int			drawn_len;		/* the characters of the line on the terminal, 0 when none */
} progress;

/* Starts the clock; the line is shown only if show; a total of 0 or less is unknown (total_items is an estimate). */
void
progress_start(int show, long long total_bytes, long total_items)
{
	progress.shown = show;
	progress.total_bytes = total_bytes;
	progress.total_items = total_items;
	progress.drawn_at = 0;
	progress.drawn_len = 0;
	clock_gettime(CLOCK_MONOTONIC, &progress.started);
}

/* Whether the line is shown and due to be drawn again. */
int
progress_due(void)
{
	return progress.shown && seconds_since(&progress.started) - progress.drawn_at >= DRAW_INTERVAL;
}

/* bytes in decimal units: 512 B, 12.3 MB. */
static void
human_bytes(long long bytes, char *buf, size_t len)
{
	const char *const units[] = {"kB", "MB", "GB", "TB", "PB"};
	double		value = (double) bytes;
	int			unit = -1;

	while (value >= 1000 && unit < 4)
	{
		value /= 1000;
		unit++;
	}
	if (unit < 0)
		snprintf(buf, len, "%lld B", bytes);
	else
		snprintf(buf, len, "%.1f %s", value, units[unit]);
}

/* The line for what is done after seconds; finished: everything is done. */
static void
format_line(long items, long long bytes, double seconds, int finished, char *line, size_t len)
{
	char		done[32];
	char		total[32];
	double		fraction = -1;	/* of the work done, -1 when unknown */
	int			n;

	human_bytes(bytes, done, sizeof(done));
	if (progress.total_bytes > 0)
	{
		fraction = finished ? 1 : (double) bytes / progress.total_bytes;
		human_bytes(progress.total_bytes, total, sizeof(total));
		n = snprintf(line, len, "ddb-transfer: %ld items, %s of %s (%.0f%%)", items, done, total, 100 * fraction);
	}
	else if (progress.total_items > 0 && (finished || items < progress.total_items))
	{
		fraction = finished ? 1 : (double) items / progress.total_items;
		if (finished)
			n = snprintf(line, len, "ddb-transfer: %ld items (100%%), %s", items, done);
		else
			n = snprintf(line, len, "ddb-transfer: %ld of about %ld items (%.0f%%), %s", items,
						 progress.total_items, 100 * fraction, done);
	}
	else
		n = snprintf(line, len, "ddb-transfer: %ld items, %s", items, done);
	if (n < 0 || (size_t) n >= len)
		return;
	n += snprintf(line + n, len - n, ", %.0f items/s", seconds > 0 ? items / seconds : 0.0);
	/* the time left, at the pace so far */
	if (!finished && fraction > 0 && fraction < 1 && (size_t) n < len)
	{
		long		left = (long) (seconds * (1 - fraction) / fraction + 0.5);

		if (left >= 3600)
			snprintf(line + n, len - n, ", %ld:%02ld:%02ld left", left / 3600, left / 60 % 60, left % 60);
		else
			snprintf(line + n, len - n, ", %ld:%02ld left", left / 60, left % 60);
	}
}

/* Writes the line over the one on the terminal. */
static void
show(long items, long long bytes, int finished)
{
	double		seconds = seconds_since(&progress.started);
	char		line[256];
	struct winsize size;
	int			width = (int) sizeof(line);
	int			len;

	format_line(items, bytes, seconds, finished, line, sizeof(line));
	/* a line as wide as the terminal would wrap, and the carriage return not go back over all of it */
	if (ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 1 && size.ws_col <= width)
		width = size.ws_col - 1;
	len = (int) strnlen(line, sizeof(line));
	len = len < width ? len : width;
	if (progress.drawn_len > width)
		progress.drawn_len = width;
	fprintf(stderr, "\r%.*s%*s", len, line, progress.drawn_len > len ? progress.drawn_len - len : 0, "");
	if (len > progress.drawn_len)
		progress.drawn_len = len;
	progress.drawn_at = seconds;
}

/* Draws the line with what is done. */
void
progress_draw(long items, long long bytes)
{
	if (progress.shown)
		show(items, bytes, 0);
}

/* Erases the line, so that a message can be printed; the next draw shows it again. */
void
progress_clear(void)
{
	if (progress.drawn_len > 0)
		fprintf(stderr, "\r%*s\r", progress.drawn_len, "");
	progress.drawn_len = 0;
}

/* progress_message with its arguments as a va_list. */
void
progress_vmessage(const char *format, va_list args)
{
	progress_clear();
	fputs("ddb-transfer: ", stderr);
	vfprintf(stderr, format, args);
	fputc('\n', stderr);
}

/* Prints "ddb-transfer: <message>" on stderr, the line erased first. */
void
progress_message(const char *format,...)
{
	va_list		args;

	va_start(args, format);
	progress_vmessage(format, args);
	va_end(args);
}

/* Draws the line a last time, with everything done, and ends it with a newline. */
void
progress_finish(long items, long long bytes)
{
	if (!progress.shown)
		return;
	show(items, bytes, 1);
	fputc('\n', stderr);
	progress.drawn_len = 0;
	progress.shown = 0;
}

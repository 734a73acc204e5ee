/*
 * progress.h — the progress line of an import or export on a terminal:
 * items and bytes done, the rate, and the time left when a total is known,
 * rewritten in place at most four times a second.  One line per process.
 */
#ifndef DDB_TRANSFER_PROGRESS_H
#define DDB_TRANSFER_PROGRESS_H

#include <stdarg.h>

/* Starts the clock; the line is shown only if show; a total of 0 or less is unknown (total_items is an estimate). */
extern void progress_start(int show, long long total_bytes, long total_items);

/* Whether the line is shown and due to be drawn again. */
extern int	progress_due(void);

/* Draws the line with what is done. */
extern void progress_draw(long items, long long bytes);

/* Erases the line, so that a message can be printed; the next draw shows it again. */
extern void progress_clear(void);

/* Prints "ddb-transfer: <message>" on stderr, the line erased first (every message of the tool goes through it). */
extern void progress_message(const char *format,...) __attribute__((format(printf, 1, 2)));

/* progress_message with its arguments as a va_list. */
extern void progress_vmessage(const char *format, va_list args) __attribute__((format(printf, 1, 0)));

/* Draws the line a last time, with everything done, and ends it with a newline. */
extern void progress_finish(long items, long long bytes);

#endif

/*
 * elapsed.h — wall-clock seconds for the summaries import and export print.
 */
#ifndef DDB_TRANSFER_ELAPSED_H
#define DDB_TRANSFER_ELAPSED_H

#include <time.h>

/* Seconds since start (CLOCK_MONOTONIC). */
static inline double
seconds_since(const struct timespec *start)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - start->tv_sec) + (now.tv_nsec - start->tv_nsec) / 1e9;
}

#endif

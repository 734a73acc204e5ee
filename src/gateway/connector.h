/*
 * connector.h — opens the lanes' connections off their event threads: a
 * connection attempt blocks for up to the connect timeout (a host that
 * does not answer, the hosts of a multi-host dsn tried in turn), so each
 * runs on a short-lived thread of its own and the connection is delivered
 * to the lane's thread through its inbox.
 */
#ifndef DDB_GATEWAY_CONNECTOR_H
#define DDB_GATEWAY_CONNECTOR_H

#include <pthread.h>

#include "lane.h"

/* Connections delivered to one event thread, which its wake_fd (an eventfd) wakes. */
struct ConnectInbox
{
	pthread_mutex_t lock;
	struct Delivery *head;
	int			wake_fd;
};

/*
 * Sets what every connection is readied with: the primary's dsn (whose
 * loss and return are said on stderr) and DescribeEndpoints' address.
 */
extern void connector_configure(const char *primary_dsn, const char *endpoint_address);

/* An empty inbox waking wake_fd. */
extern void connector_inbox_init(ConnectInbox *inbox, int wake_fd);

/* Connects lane to dsn on a thread of its own; the result reaches the lane through inbox. */
extern void connector_open(Lane *lane, const char *dsn, unsigned int generation, ConnectInbox *inbox);

/* Hands each delivered connection to its lane (lane_connected), in the inbox's thread. */
extern void connector_collect(ConnectInbox *inbox);

#endif

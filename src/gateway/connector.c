/*
 * connector.c — the lanes' connection attempts, each on a thread of its
 * own (connector.h).
 */
#include "connector.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "connect.h"

/* A connection made for a lane, waiting in its thread's inbox. */
typedef struct Delivery
{
	Lane	   *lane;
	const char *dsn;
	unsigned int generation;
	ConnectInbox *inbox;
	PGconn	   *conn;
	struct Delivery *next;
} Delivery;

static const char *primary_dsn;
static const char *endpoint_address;

/* The last attempt to reach the primary succeeded (said on stderr when that changes). */
static int	primary_reachable = 1;

/* Sets the primary's dsn and DescribeEndpoints' address, before any lane connects. */
void
connector_configure(const char *primary, const char *endpoint)
{
	primary_dsn = primary;
	endpoint_address = endpoint;
}

/* An empty inbox waking wake_fd. */
void
connector_inbox_init(ConnectInbox *inbox, int wake_fd)
{
	pthread_mutex_init(&inbox->lock, NULL);
	inbox->head = NULL;
	inbox->wake_fd = wake_fd;
}

/* Says once when the primary cannot be reached, and once when it can again. */
static void
note_primary(PGconn *conn)
{
	int			ok = conn != NULL && PQstatus(conn) == CONNECTION_OK;

	if (!ok && __atomic_exchange_n(&primary_reachable, 0, __ATOMIC_RELAXED))
		fprintf(stderr, "ddb-gateway: cannot connect to the database (requests get 503 until it is back): %s",
				conn ? PQerrorMessage(conn) : "out of memory\n");
	else if (ok && !__atomic_exchange_n(&primary_reachable, 1, __ATOMIC_RELAXED))
		fprintf(stderr, "ddb-gateway: connected to the database again\n");
}

/* Puts a connection (or NULL: none) into its lane's inbox and wakes the inbox's thread. */
static void
deliver(Delivery *delivery, PGconn *conn)
{
	ConnectInbox *inbox = delivery->inbox;
	uint64_t	one = 1;

	delivery->conn = conn;
	pthread_mutex_lock(&inbox->lock);
	delivery->next = inbox->head;
	inbox->head = delivery;
	pthread_mutex_unlock(&inbox->lock);
	if (write(inbox->wake_fd, &one, sizeof(one)) < 0)
		perror("ddb-gateway: cannot wake an event thread");
}

/* A connecting thread: connects, readies the connection, and delivers it. */
static void *
connect_main(void *arg)
{
	Delivery   *delivery = arg;
	PGconn	   *conn = db_connect(delivery->dsn);

	if (PQstatus(conn) == CONNECTION_OK && lane_setup(conn, endpoint_address) != 0)
	{
		PQfinish(conn);
		conn = NULL;
	}
	if (delivery->dsn == primary_dsn)
		note_primary(conn);
	deliver(delivery, conn);
	return NULL;
}

/* Connects lane to dsn on a thread of its own; without one, the attempt fails (delivered as such). */
void
connector_open(Lane *lane, const char *dsn, unsigned int generation, ConnectInbox *inbox)
{
	Delivery   *delivery = calloc(1, sizeof(Delivery));
	pthread_t	thread;

	if (delivery == NULL)
	{
		fprintf(stderr, "ddb-gateway: out of memory\n");
		abort();
	}
	*delivery = (Delivery) {.lane = lane, .dsn = dsn, .generation = generation, .inbox = inbox};
	if (pthread_create(&thread, NULL, connect_main, delivery) != 0)
	{
		fprintf(stderr, "ddb-gateway: cannot start a thread to connect to the database\n");
		deliver(delivery, NULL);
		return;
	}
	pthread_detach(thread);
}

/* Hands each delivered connection to its lane. */
void
connector_collect(ConnectInbox *inbox)
{
	Delivery   *delivery;

	pthread_mutex_lock(&inbox->lock);
	delivery = inbox->head;
	inbox->head = NULL;
	pthread_mutex_unlock(&inbox->lock);
	while (delivery)
	{
		Delivery   *next = delivery->next;

		lane_connected(delivery->lane, delivery->conn, delivery->generation);
		free(delivery);
		delivery = next;
	}
}

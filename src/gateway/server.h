/*
 * server.h — the gateway's listening socket and its event threads' HTTP
 * daemons (plain or TLS): opened with a message that says what to do when
 * it cannot be, replaced on SIGHUP (new TLS files) without dropping a
 * connection, and stopped after the requests in flight.
 */
#ifndef DDB_GATEWAY_SERVER_H
#define DDB_GATEWAY_SERVER_H

#include "handler.h"
#include "settings.h"

typedef struct Server Server;

/* Binds and listens on the settings' address; the socket, or -1 with one line on stderr. */
extern int	server_listen(const GatewaySettings *settings);

/*
 * Raises the file-descriptor limit to what --max-connections needs; 0, or
 * -1 with one line on stderr that says what to do.
 */
extern int	server_raise_fd_limit(const GatewaySettings *settings);

/*
 * Starts serving the socket (HTTPS when the settings have TLS files) with
 * the settings' event threads, their lanes to the primary and to the
 * standbys (or NULL); NULL with one line on stderr.
 */
extern Server *server_start(const GatewaySettings *settings, int listen_fd, ReplicaSet *replicas);

/*
 * Stops accepting, waits up to timeout seconds for the requests in flight,
 * then stops.  listen_fd is closed at once when it is not -1 (stopping for
 * good); with -1 the socket stays open for the server that replaces this one.
 */
extern void server_stop(Server *server, int timeout_seconds, int listen_fd);

#endif

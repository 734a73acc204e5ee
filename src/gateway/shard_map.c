/*
 * shard_map.c — the router's partition map and the tables' partition keys
 * in the gateway (shard_map.h).
 *
 * A listener thread connects to the router's database, LISTENs on
 * ddb_router_map (which the router's map, placements and reference tables
 * notify on every change), then reads the map in one snapshot and puts it in
 * place of the last one; it reads it again on each notification, and every
 * 10 seconds (a table made since; the read also finds a connection that no
 * longer answers).  Without the connection there is no map: every request
 * goes through the router.  A map once read is never changed; readers take
 * it under a mutex.
 */
#include "shard_map.h"

#include <jansson.h>
#include <libpq-fe.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "connect.h"
#include "shard_hash.h"
#include "string_hash.h"

#define SHARD_MAP_CHANNEL "ddb_router_map"
/* The listening connection's application_name (pg_stat_activity) */
#define SHARD_MAP_LISTENER_NAME "ddb-gateway shard map"
/* How long the map is kept without a notification before it is read again, in milliseconds. */
#define SHARD_MAP_REFRESH_MS 10000
#define SHARD_MAP_TABLE_BUCKETS 256

/* The partition map: each partition's node, and whether the node serves it directly. */
#define MAP_SQL \
	"SELECT p.partition, p.direct AND NOT p.moving, n.node_name, n.connstr " \
	"FROM ddb_router.partitions p JOIN ddb_router.nodes n ON n.node_name OPERATOR(pg_catalog.=) p.node_name " \
	"ORDER BY p.partition"

/*
 * The tables: partition key and its type, whether a request of the table
 * may go straight to a node (not a model's table, which keeps rules across
 * items, nor one the router treats apart: a reference table, a table with
 * a unique attribute, one with placements), and its local indexes, one a
 * line.
 */
#define TABLES_SQL \
	"SELECT t.table_name, t.hash_key, t.attribute_types OPERATOR(pg_catalog.->>) t.hash_key, " \
	"  t.model IS NULL" \
	"  AND NOT EXISTS (SELECT FROM ddb_router.reference_tables r WHERE r.table_name OPERATOR(pg_catalog.=) t.table_name)" \
	"  AND NOT EXISTS (SELECT FROM ddb_router.unique_attributes u WHERE u.table_name OPERATOR(pg_catalog.=) t.table_name)" \
	"  AND NOT EXISTS (SELECT FROM ddb_router.placements l WHERE t.table_name OPERATOR(pg_catalog.~~) " \
	"    pg_catalog.replace(pg_catalog.replace(pg_catalog.replace(pg_catalog.replace(l.table_pattern, " \
	"      '\\', '\\\\'), '%', '\\%'), '_', '\\_'), '*', '%')), " \
	"  coalesce((SELECT pg_catalog.string_agg(i.index_name, E'\\n') FROM ddb.indexes i " \
	"            WHERE i.table_name OPERATOR(pg_catalog.=) t.table_name AND i.local), '') " \
	"FROM ddb.tables t"

typedef struct TableEntry
{
	struct TableEntry *next;
	char	   *name;
	char	   *hash_key;
	char		hash_type;		/* 'S', 'N' or 'B' */
	int			direct;			/* its requests may go straight to a node */
	char	   *local_indexes;	/* "\n" + names + "\n", each followed by a newline */
} TableEntry;

typedef struct ShardMap
{
	int			partition_count;	/* a power of two */
	int		   *node_of;		/* by partition: the node's place, or -1 when not served directly */
	int			nnodes;
	char	  **dsn;			/* by node: its connection string as the gateway's user */
	TableEntry *tables[SHARD_MAP_TABLE_BUCKETS];
} ShardMap;

static pthread_mutex_t map_lock = PTHREAD_MUTEX_INITIALIZER;
static ShardMap *current_map;	/* NULL while not listening */
static char *router_dsn;

/* The bucket of a table name. */
static unsigned
bucket_of(const char *name)
{
	return string_hash(name) % SHARD_MAP_TABLE_BUCKETS;
}

/* Frees a map. */
static void
map_free(ShardMap *map)
{
	if (map == NULL)
		return;
	for (int i = 0; i < SHARD_MAP_TABLE_BUCKETS; i++)
		while (map->tables[i])
		{
			TableEntry *t = map->tables[i];

			map->tables[i] = t->next;
			free(t->name);
			free(t->hash_key);
			free(t->local_indexes);
			free(t);
		}
	for (int i = 0; i < map->nnodes; i++)
		free(map->dsn[i]);
	free(map->dsn);
	free(map->node_of);
	free(map);
}

/* Puts a map in place of the current one (NULL: none), freeing the old. */
static void
map_install(ShardMap *map)
{
	ShardMap   *old;

	pthread_mutex_lock(&map_lock);
	old = current_map;
	current_map = map;
	pthread_mutex_unlock(&map_lock);
	map_free(old);
}

/* Appends a conninfo keyword and its value, quoted, to out; 0 when it does not fit. */
static int
append_option(char *out, size_t size, const char *keyword, const char *value)
{
	size_t		n = strlen(out);

	n += snprintf(out + n, n < size ? size - n : 0, "%s%s='", n ? " " : "", keyword);
	for (const char *c = value; *c && n < size; c++)
	{
		if (*c == '\'' || *c == '\\')
			out[n++] = '\\';
		if (n < size)
			out[n++] = *c;
	}
	if (n + 2 > size)
		return 0;
	out[n++] = '\'';
	out[n] = '\0';
	return 1;
}

/*
 * A node's connection string for the gateway: the router's (which PL/Proxy
 * and the moves use) with the user of the gateway's own connection to the
 * router, and its password when it gave one; NULL when it does not parse.
 */
static char *
node_dsn(const char *connstr, PGconn *router)
{
	PQconninfoOption *options = PQconninfoParse(connstr, NULL);
	char		out[SHARD_DSN_MAX] = "";
	const char *password = PQpass(router);
	int			fits = options != NULL;

	for (PQconninfoOption *o = options; fits && o->keyword; o++)
		if (o->val && o->val[0] && strcmp(o->keyword, "user") != 0 && strcmp(o->keyword, "password") != 0)
			fits = append_option(out, sizeof(out), o->keyword, o->val);
	fits = fits && append_option(out, sizeof(out), "user", PQuser(router));
	if (fits && password && password[0])
		fits = append_option(out, sizeof(out), "password", password);
	PQconninfoFree(options);
	return fits ? strdup(out) : NULL;
}

/* Reads the partition map into map; 0 when it cannot. */
static int
read_partitions(PGconn *conn, ShardMap *map)
{
	PGresult   *res = db_query(conn, MAP_SQL);
	int			n = PQresultStatus(res) == PGRES_TUPLES_OK ? PQntuples(res) : 0;
	char	  **names;
	int			ok = n > 0 && (n & (n - 1)) == 0;

	map->partition_count = n;
	map->node_of = calloc(n > 0 ? n : 1, sizeof(int));
	map->dsn = calloc(n > 0 ? n : 1, sizeof(char *));
	names = calloc(n > 0 ? n : 1, sizeof(char *));
	ok = ok && map->node_of && map->dsn && names;
	for (int i = 0; ok && i < n; i++)
	{
		const char *name = PQgetvalue(res, i, 2);
		int			node = 0;

		/* the partitions are numbered 0 to n - 1 (the router's CHECK and create_partitions) */
		ok = atoi(PQgetvalue(res, i, 0)) == i;
		while (node < map->nnodes && strcmp(names[node], name) != 0)
			node++;
		if (ok && node == map->nnodes)
		{
			names[node] = (char *) name;
			map->dsn[node] = node_dsn(PQgetvalue(res, i, 3), conn);
			ok = map->dsn[node] != NULL;
			map->nnodes++;
		}
		map->node_of[i] = strcmp(PQgetvalue(res, i, 1), "t") == 0 ? node : -1;
	}
	if (!ok && PQresultStatus(res) != PGRES_TUPLES_OK)
		fprintf(stderr, "ddb-gateway: cannot read the router's partition map: %s", PQerrorMessage(conn));
	free(names);
	PQclear(res);
	return ok;
}

/* Reads the tables into map; 0 when it cannot. */
static int
read_tables(PGconn *conn, ShardMap *map)
{
	PGresult   *res = db_query(conn, TABLES_SQL);
	int			ok = PQresultStatus(res) == PGRES_TUPLES_OK;

	if (!ok)
		fprintf(stderr, "ddb-gateway: cannot read the router's tables: %s", PQerrorMessage(conn));
	for (int i = 0; ok && i < PQntuples(res); i++)
	{
		TableEntry *t = calloc(1, sizeof(TableEntry));
		const char *indexes = PQgetvalue(res, i, 4);
		unsigned	b;

		if (t == NULL)
			return PQclear(res), 0;
		t->name = strdup(PQgetvalue(res, i, 0));
		t->hash_key = strdup(PQgetvalue(res, i, 1));
		t->hash_type = PQgetvalue(res, i, 2)[0];
		t->direct = strcmp(PQgetvalue(res, i, 3), "t") == 0;
		t->local_indexes = malloc(strlen(indexes) + 3);
		if (t->local_indexes)
			sprintf(t->local_indexes, "\n%s\n", indexes);
		b = bucket_of(t->name ? t->name : "");
		t->next = map->tables[b];
		map->tables[b] = t;
		ok = t->name && t->hash_key && t->local_indexes;
	}
	PQclear(res);
	return ok;
}

/* Reads the whole map in one snapshot and puts it in place; 0 when it cannot. */
static int
reload(PGconn *conn)
{
	ShardMap   *map = calloc(1, sizeof(ShardMap));
	PGresult   *res = db_query(conn, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
	int			ok = map && PQresultStatus(res) == PGRES_COMMAND_OK;

	PQclear(res);
	ok = ok && read_partitions(conn, map) && read_tables(conn, map);
	res = db_query(conn, "COMMIT");
	ok = ok && PQresultStatus(res) == PGRES_COMMAND_OK;
	PQclear(res);
	if (!ok)
	{
		map_free(map);
		return 0;
	}
	map_install(map);
	return 1;
}

/*
 * The listener thread: listens, reads the map, reads it again on each
 * notification and every SHARD_MAP_REFRESH_MS; when the connection is lost
 * or a read fails, drops the map (every request goes through the router)
 * and reconnects (every second at first, backing off to 30).
 */
static void *
listener_main(void *arg)
{
	int			wait_seconds = 1;

	(void) arg;
	for (;;)
	{
		PGconn	   *conn = db_listen(router_dsn, "SET application_name = '" SHARD_MAP_LISTENER_NAME "'; "
									 "SET search_path = pg_catalog, pg_temp; LISTEN " SHARD_MAP_CHANNEL,
									 "requests go through the router", "read its map");

		if (conn != NULL && reload(conn))
		{
			wait_seconds = 1;
			for (;;)
			{
				struct pollfd pfd = {PQsocket(conn), POLLIN, 0};
				PGnotify   *notify;
				int			ready = poll(&pfd, 1, SHARD_MAP_REFRESH_MS);

				if (ready < 0)
					continue;
				if (ready > 0 && !PQconsumeInput(conn))
					break;
				while ((notify = PQnotifies(conn)) != NULL)
					PQfreemem(notify);
				if (!reload(conn))
					break;
			}
			fprintf(stderr, "ddb-gateway: requests go through the router, lost the connection that reads its map: %s",
					PQerrorMessage(conn));
		}
		map_install(NULL);
		PQfinish(conn);
		sleep(wait_seconds);
		wait_seconds = wait_seconds < 30 ? wait_seconds * 2 : 30;
	}
	return NULL;
}

/* Starts the listener thread; see shard_map.h. */
int
shard_map_start(const char *dsn)
{
	pthread_t	thread;

	router_dsn = strdup(dsn);
	if (router_dsn == NULL || pthread_create(&thread, NULL, listener_main, NULL) != 0)
		return -1;
	pthread_detach(thread);
	return 0;
}

/* A table of the map by name, or NULL. */
static const TableEntry *
find_table(const ShardMap *map, const char *name)
{
	for (const TableEntry *t = map->tables[bucket_of(name)]; t; t = t->next)
		if (strcmp(t->name, name) == 0)
			return t;
	return NULL;
}

/* A token of a key condition expression. */
typedef struct Token
{
	char		kind;			/* 'n' a name (#name or attribute), ':' a placeholder, '=' equals, 'o' anything else */
	const char *start;
	size_t		len;
} Token;

/* The next token of an expression at *s, advancing it; 0 at its end. */
static int
next_token(const char **s, Token *tok)
{
	const char *c = *s;

	while (*c == ' ' || *c == '\t' || *c == '\n' || *c == '\r')
		c++;
	if (*c == '\0')
		return 0;
	tok->start = c;
	if (*c == '#' || *c == ':' || *c == '_' || (*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') ||
		(*c >= '0' && *c <= '9'))
	{
		tok->kind = *c == ':' ? ':' : 'n';
		c++;
		while (*c == '_' || (*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9'))
			c++;
	}
	else if ((*c == '<' || *c == '>' || *c == '!') && c[1] == '=')
	{
		tok->kind = 'o';
		c += 2;
	}
	else
	{
		tok->kind = *c == '=' ? '=' : 'o';
		c++;
	}
	tok->len = (size_t) (c - tok->start);
	*s = c;
	return 1;
}

/* True when a name token (an attribute, or a #name of ExpressionAttributeNames) names attribute. */
static int
names_attribute(const Token *tok, json_t *names, const char *attribute)
{
	char		name[256];
	const char *resolved;

	if (tok->kind != 'n' || tok->len >= sizeof(name))
		return 0;
	memcpy(name, tok->start, tok->len);
	name[tok->len] = '\0';
	resolved = name[0] == '#' ? json_string_value(json_object_get(names, name)) : name;
	return resolved && strcmp(resolved, attribute) == 0;
}

/* The value of a placeholder token in ExpressionAttributeValues, or NULL. */
static json_t *
placeholder_value(const Token *tok, json_t *values)
{
	char		name[256];

	if (tok->kind != ':' || tok->len >= sizeof(name))
		return NULL;
	memcpy(name, tok->start, tok->len);
	name[tok->len] = '\0';
	return json_object_get(values, name);
}

/*
 * The AttributeValue a Query's key condition sets the partition key to
 * (KeyConditionExpression's "key = :v" or ":v = key", or KeyConditions'
 * EQ), or NULL.  The node checks it again: a value read wrong here costs a
 * refusal and a trip through the router, never a wrong answer.
 */
static json_t *
query_key_value(json_t *request, const char *hash_key)
{
	const char *expression = json_string_value(json_object_get(request, "KeyConditionExpression"));
	json_t	   *names = json_object_get(request, "ExpressionAttributeNames");
	json_t	   *values = json_object_get(request, "ExpressionAttributeValues");
	Token		tok[3];
	int			n = 0;

	if (expression == NULL)
	{
		json_t	   *condition = json_object_get(json_object_get(request, "KeyConditions"), hash_key);
		const char *op = json_string_value(json_object_get(condition, "ComparisonOperator"));

		return op && strcmp(op, "EQ") == 0 ?
			json_array_get(json_object_get(condition, "AttributeValueList"), 0) : NULL;
	}
	while (next_token(&expression, &tok[n < 3 ? n : 2]))
	{
		if (n < 3)
			n++;
		if (n == 3)
		{
			if (tok[1].kind == '=' && names_attribute(&tok[0], names, hash_key))
				return placeholder_value(&tok[2], values);
			if (tok[1].kind == '=' && names_attribute(&tok[2], names, hash_key))
				return placeholder_value(&tok[0], values);
			tok[0] = tok[1];
			tok[1] = tok[2];
		}
	}
	return NULL;
}

/* The string of a one-member AttributeValue of type ({"S": "..."}), its length in *len; NULL for anything else. */
static const char *
attribute_string(json_t *av, char type, size_t *len)
{
	char		member[2] = {type, '\0'};
	json_t	   *value = json_object_get(av, member);

	if (!json_is_object(av) || json_object_size(av) != 1 || !json_is_string(value))
		return NULL;
	*len = json_string_length(value);
	return json_string_value(value);
}

/* The partition key's AttributeValue of a request that may go straight to a node, or NULL. */
static json_t *
request_key_value(const char *operation, json_t *request, const TableEntry *table)
{
	if (strcmp(operation, "GetItem") == 0 || strcmp(operation, "DeleteItem") == 0 ||
		strcmp(operation, "UpdateItem") == 0)
		return json_object_get(json_object_get(request, "Key"), table->hash_key);
	if (strcmp(operation, "PutItem") == 0)
		return json_object_get(json_object_get(request, "Item"), table->hash_key);
	if (strcmp(operation, "Query") == 0)
	{
		json_t	   *index = json_object_get(request, "IndexName");
		char		line[300];

		/* a local index has the table's partition key; a global one is read on every node */
		if (index != NULL &&
			(!json_is_string(index) || json_string_length(index) > 255 ||
			 (snprintf(line, sizeof(line), "\n%s\n", json_string_value(index)),
			  strstr(table->local_indexes, line) == NULL)))
			return NULL;
		return query_key_value(request, table->hash_key);
	}
	return NULL;
}

/* Where a request may go straight to; see shard_map.h. */
int
shard_map_route(const char *operation, const char *body, size_t len, ShardTarget *out)
{
	json_t	   *request;
	const char *table_name;
	int			routed = 0;

	if (strcmp(operation, "GetItem") != 0 && strcmp(operation, "PutItem") != 0 &&
		strcmp(operation, "UpdateItem") != 0 && strcmp(operation, "DeleteItem") != 0 &&
		strcmp(operation, "Query") != 0)
		return 0;
	request = json_loadb(body, len, 0, NULL);
	table_name = json_string_value(json_object_get(request, "TableName"));
	pthread_mutex_lock(&map_lock);
	if (current_map != NULL && table_name != NULL)
	{
		const TableEntry *table = find_table(current_map, table_name);
		const char *value;
		size_t		value_len;
		uint32_t	hash;

		if (table && table->direct &&
			(value = attribute_string(request_key_value(operation, request, table), table->hash_type, &value_len)) &&
			shard_key_hash(table->hash_type, value, value_len, &hash))
		{
			out->partition = (int) (hash & (uint32_t) (current_map->partition_count - 1));
			out->node = current_map->node_of[out->partition];
			if (out->node >= 0)
			{
				snprintf(out->dsn, sizeof(out->dsn), "%s", current_map->dsn[out->node]);
				routed = 1;
			}
		}
	}
	pthread_mutex_unlock(&map_lock);
	json_decref(request);
	return routed;
}

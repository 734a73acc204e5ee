/*
 * settings.c — ddb-gateway's settings (settings.h): one table of them,
 * applied from the config file, then the environment, then the command
 * line, so that the last wins.  Every value is checked where it is read,
 * and a bad one is refused with where it came from.
 */
#include "settings.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ENV_PREFIX "DDB_GATEWAY_"

typedef enum SettingKind
{
	SETTING_TEXT,
	SETTING_NUMBER,
	SETTING_FLAG,
	SETTING_METRICS,
	SETTING_REPLICA				/* one more each time it is given; in the environment, separated by ';' */
} SettingKind;

/* One setting: its name (the flag without "--"), kind, field and bounds. */
typedef struct Setting
{
	const char *name;
	SettingKind kind;
	size_t		offset;
	int			min;
	int			max;
	const char *help;
} Setting;

#define FIELD(f) offsetof(GatewaySettings, f)

/*
 * Where settings are being read from now (1 the file, 2 the environment, 3
 * the command line), and where the replicas were: a list given by a later
 * source replaces the earlier one's, as a single value does.
 */
static int	reading_source;
static int	replicas_source;

static const Setting settings_table[] = {
	{"listen", SETTING_TEXT, FIELD(listen), 0, 0, "IPv4 HOST:PORT to listen on (default 127.0.0.1:8000)"},
	{"endpoint-address", SETTING_TEXT, FIELD(endpoint_address), 0, 0, "the address DescribeEndpoints gives clients (default: listen's)"},
	{"dsn", SETTING_TEXT, FIELD(dsn), 0, 0, "libpq connection string (default: libpq's defaults and PG* variables)"},
	{"pool", SETTING_NUMBER, FIELD(pool), 1, 256, "database connections to the primary (and to each replica), shared by the event threads; requests are pipelined on them (default 4)"},
	{"threads", SETTING_NUMBER, FIELD(threads), 1, 256, "event threads (default: the machine's cores; at most --pool)"},
	{"max-connections", SETTING_NUMBER, FIELD(max_connections), 1, 1000000, "client connections served at once (default 4096)"},
	{"connection-memory", SETTING_NUMBER, FIELD(connection_memory), 2048, 1048576, "bytes each client connection keeps for a request's headers and its response's (default 4096: headers up to about 3 kB; more is answered 431)"},
	{"tls-cert", SETTING_TEXT, FIELD(tls_cert), 0, 0, "PEM certificate (chain) file: serve HTTPS"},
	{"tls-key", SETTING_TEXT, FIELD(tls_key), 0, 0, "PEM private key file of --tls-cert"},
	{"insecure-listen", SETTING_FLAG, FIELD(insecure_listen), 0, 0, "allow plain HTTP on an address beyond loopback"},
	{"development", SETTING_FLAG, FIELD(development), 0, 0, "development mode: any access key (or none) is taken and requests run as the dsn's role; loopback only, or with --insecure-listen"},
	{"access-log", SETTING_TEXT, FIELD(access_log), 0, 0, "access log: a file, - for stderr (default), or off"},
	{"connect-timeout", SETTING_NUMBER, FIELD(connect_timeout), 2, 3600, "seconds one attempt to connect to the database may take, over all the dsn's hosts (default 10)"},
	{"request-timeout", SETTING_NUMBER, FIELD(request_timeout), 1, 3600, "seconds a statement may take before its connection is given up and the request answered 503 (default 10)"},
	{"shutdown-timeout", SETTING_NUMBER, FIELD(shutdown_timeout), 0, 3600, "seconds SIGTERM waits for requests in flight (default 30)"},
	{"metrics", SETTING_METRICS, FIELD(metrics), 0, 0, "who may GET /metrics: loopback (default), any or off"},
	{"replica", SETTING_REPLICA, 0, 0, 0, "libpq connection string of a hot standby for eventually consistent reads (repeatable)"},
	{"max-replica-lag", SETTING_NUMBER, FIELD(max_replica_lag), 0, 3600, "seconds a standby may lag and still serve reads (default 5)"},
	{"cors", SETTING_TEXT, FIELD(cors), 0, 0, "origins whose web pages may call the gateway: scheme://host[:port],... or * (loopback or --development only); default off"},
};

#define NSETTINGS (sizeof(settings_table) / sizeof(settings_table[0]))

/* Prints what the program is, its usage and where its documentation is, on stdout; exits 0. */
static void
usage(void)
{
	printf("ddb-gateway serves DynamoDB's HTTP API (the AWS SDKs, the AWS CLI) from a PostgreSQL database with ddb_model.\n"
		   "\n"
		   "usage: ddb-gateway [--config FILE] [--NAME VALUE | --FLAG] ...\n"
		   "  --config FILE          settings as `name = value` lines (also DDB_GATEWAY_CONFIG)\n");
	for (size_t i = 0; i < NSETTINGS; i++)
		printf("  --%-20s %s\n", settings_table[i].name, settings_table[i].help);
	printf("  --help                 this text\n"
		   "  --version              the version\n"
		   "Each setting is also DDB_GATEWAY_<NAME> in the environment (capitals, '_' for '-').\n"
		   "The command line wins over the environment, which wins over the file.\n"
		   "\n"
		   "Documentation: docs/gateway.md and docs/operations.md of the source (in /usr/share/doc/ddb-gateway/\n"
		   "with the Debian package), and the manual page ddb-gateway(1).\n");
	exit(0);
}

/* Refuses a setting: one line naming where it came from, exit 2. */
static void
refuse(const char *source, const char *what)
{
	fprintf(stderr, "ddb-gateway: %s: %s\n", source, what);
	exit(2);
}

/* The setting of a name, or NULL. */
static const Setting *
setting_named(const char *name)
{
	for (size_t i = 0; i < NSETTINGS; i++)
		if (strcmp(settings_table[i].name, name) == 0)
			return &settings_table[i];
	return NULL;
}

/* Sets a setting from its text value, as read from source. */
static void
apply(GatewaySettings *settings, const Setting *setting, const char *value, const char *source)
{
	char	   *field = (char *) settings + setting->offset;
	char		what[256];

	switch (setting->kind)
	{
		case SETTING_TEXT:
			*(char **) field = strdup(value);
			break;
		case SETTING_NUMBER:
			{
				char	   *end;
				long		n;

				errno = 0;
				n = strtol(value, &end, 10);
				if (errno || end == value || *end != '\0' || n < setting->min || n > setting->max)
				{
					snprintf(what, sizeof(what), "%s takes a whole number from %d to %d, not \"%.40s\"",
							 setting->name, setting->min, setting->max, value);
					refuse(source, what);
				}
				*(int *) field = (int) n;
				break;
			}
		case SETTING_FLAG:
			if (strcmp(value, "true") == 0 || strcmp(value, "1") == 0 || strcmp(value, "yes") == 0 ||
				strcmp(value, "on") == 0)
				*(int *) field = 1;
			else if (strcmp(value, "false") == 0 || strcmp(value, "0") == 0 || strcmp(value, "no") == 0 ||
					 strcmp(value, "off") == 0)
				*(int *) field = 0;
			else
			{
				snprintf(what, sizeof(what), "%s takes true or false, not \"%.40s\"", setting->name, value);
				refuse(source, what);
			}
			break;
		case SETTING_REPLICA:
			if (replicas_source != reading_source)
			{
				settings->nreplicas = 0;
				replicas_source = reading_source;
			}
			if (settings->nreplicas == MAX_REPLICAS)
			{
				snprintf(what, sizeof(what), "at most %d replicas", MAX_REPLICAS);
				refuse(source, what);
			}
			settings->replicas[settings->nreplicas++] = strdup(value);
			break;
		case SETTING_METRICS:
			if (strcmp(value, "loopback") == 0)
				*(MetricsAccess *) field = METRICS_LOOPBACK;
			else if (strcmp(value, "any") == 0)
				*(MetricsAccess *) field = METRICS_ANY;
			else if (strcmp(value, "off") == 0)
				*(MetricsAccess *) field = METRICS_OFF;
			else
			{
				snprintf(what, sizeof(what), "%s takes loopback, any or off, not \"%.40s\"", setting->name, value);
				refuse(source, what);
			}
			break;
	}
}

/* Trims white space at both ends of s, in place. */
static char *
trim(char *s)
{
	char	   *end;

	while (isspace((unsigned char) *s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char) end[-1]))
		*--end = '\0';
	return s;
}

/* Applies the config file's `name = value` lines ('#' starts a comment line). */
static void
apply_file(GatewaySettings *settings, const char *path)
{
	FILE	   *file = fopen(path, "r");
	char		line[4096];
	char		source[1200];
	int			lineno = 0;

	if (file == NULL)
	{
		snprintf(source, sizeof(source), "cannot read the config file %s: %s", path, strerror(errno));
		refuse("--config", source);
	}
	while (fgets(line, sizeof(line), file) != NULL)
	{
		char	   *text = trim(line);
		char	   *equals = strchr(text, '=');
		const Setting *setting;

		lineno++;
		snprintf(source, sizeof(source), "%s line %d", path, lineno);
		if (*text == '\0' || *text == '#')
			continue;
		if (equals == NULL)
			refuse(source, "a setting is `name = value`");
		*equals = '\0';
		setting = setting_named(trim(text));
		if (setting == NULL)
			refuse(source, "no such setting (ddb-gateway --help lists them)");
		apply(settings, setting, trim(equals + 1), source);
	}
	fclose(file);
}

/* Applies the DDB_GATEWAY_<NAME> environment variables that are set. */
static void
apply_environment(GatewaySettings *settings)
{
	for (size_t i = 0; i < NSETTINGS; i++)
	{
		char		variable[64] = ENV_PREFIX;
		size_t		n = strlen(variable);
		const char *value;

		for (const char *c = settings_table[i].name; *c && n < sizeof(variable) - 1; c++)
			variable[n++] = *c == '-' ? '_' : toupper((unsigned char) *c);
		variable[n] = '\0';
		value = getenv(variable);
		if (value == NULL)
			continue;
		if (settings_table[i].kind == SETTING_REPLICA)
		{
			/* several standbys in one variable, separated by ';' */
			char	   *list = strdup(value);
			char	   *saveptr = NULL;

			for (char *one = strtok_r(list, ";", &saveptr); one; one = strtok_r(NULL, ";", &saveptr))
				apply(settings, &settings_table[i], trim(one), variable);
			free(list);
		}
		else
			apply(settings, &settings_table[i], value, variable);
	}
}

/* Parses HOST:PORT into an IPv4 socket address; 0 on success. */
static int
parse_listen(const char *text, struct sockaddr_in *addr)
{
	const char *colon = strrchr(text, ':');
	char		host[64];
	char	   *end;
	long		port;

	if (colon == NULL || colon - text >= (long) sizeof(host))
		return -1;
	memcpy(host, text, colon - text);
	host[colon - text] = '\0';
	port = strtol(colon + 1, &end, 10);
	if (*end != '\0' || port <= 0 || port > 65535)
		return -1;
	memset(addr, 0, sizeof(*addr));
	addr->sin_family = AF_INET;
	addr->sin_port = htons((uint16_t) port);
	return inet_pton(AF_INET, host, &addr->sin_addr) == 1 ? 0 : -1;
}

/* True when the address is on loopback (127.0.0.0/8). */
int
settings_is_loopback(const struct sockaddr_in *address)
{
	return ntohl(address->sin_addr.s_addr) >> 24 == 127;
}

/* Fills and checks the settings: file, environment, command line. */
void
settings_load(int argc, char **argv, GatewaySettings *settings)
{
	const char *config = getenv(ENV_PREFIX "CONFIG");

	memset(settings, 0, sizeof(*settings));
	settings->listen = "127.0.0.1:8000";
	settings->dsn = "";
	settings->pool = 4;
	settings->max_connections = 4096;
	settings->connection_memory = 4096;
	settings->access_log = "-";
	settings->connect_timeout = 10;
	settings->request_timeout = 10;
	settings->shutdown_timeout = 30;
	settings->metrics = METRICS_LOOPBACK;
	settings->max_replica_lag = 5;

	/* the file first, wherever --config stands */
	for (int i = 1; i < argc; i++)
	{
		if (strcmp(argv[i], "--help") == 0)
			usage();
		if (strcmp(argv[i], "--version") == 0)
		{
			printf("ddb-gateway %s\n", DDB_MODEL_VERSION);
			exit(0);
		}
		if (strcmp(argv[i], "--config") == 0)
		{
			if (i + 1 == argc)
				refuse("--config", "takes a file");
			config = argv[++i];
		}
	}
	reading_source = 1;
	if (config != NULL && config[0] != '\0')
		apply_file(settings, config);
	reading_source = 2;
	apply_environment(settings);
	reading_source = 3;
	for (int i = 1; i < argc; i++)
	{
		const Setting *setting;
		char		what[128];

		if (strcmp(argv[i], "--config") == 0)
		{
			i++;
			continue;
		}
		setting = strncmp(argv[i], "--", 2) == 0 ? setting_named(argv[i] + 2) : NULL;
		if (setting == NULL)
		{
			snprintf(what, sizeof(what), "unknown argument \"%.60s\" (ddb-gateway --help lists the settings)", argv[i]);
			refuse("command line", what);
		}
		if (setting->kind == SETTING_FLAG)
			apply(settings, setting, "true", argv[i]);
		else if (i + 1 == argc)
			refuse(argv[i], "takes a value");
		else
		{
			apply(settings, setting, argv[i + 1], argv[i]);
			i++;
		}
	}

	/* each event thread has a connection of its own at least */
	if (settings->threads == 0)
		settings->threads = (int) sysconf(_SC_NPROCESSORS_ONLN) > 0 ? (int) sysconf(_SC_NPROCESSORS_ONLN) : 1;
	if (settings->threads > settings->pool)
		settings->threads = settings->pool;
	if (parse_listen(settings->listen, &settings->address) != 0)
		refuse("listen", "takes an IPv4 HOST:PORT, such as 127.0.0.1:8000");
	if (settings->endpoint_address == NULL)
		settings->endpoint_address = settings->listen;
	if (settings->endpoint_address[0] == '\0' || strlen(settings->endpoint_address) > 255)
		refuse("endpoint-address", "takes the HOST[:PORT] clients reach the gateway at, such as dynamodb.example.com:8443");
	if ((settings->tls_cert == NULL) != (settings->tls_key == NULL))
		refuse("tls-cert", "--tls-cert and --tls-key go together: give both PEM files");
	/* anyone who reaches a development gateway acts as its database role: beyond loopback only when asked twice */
	if (settings->development && !settings->insecure_listen && !settings_is_loopback(&settings->address))
		refuse("development", "--development lets anyone who reaches the gateway act as its database role, and is "
			   "taken on a loopback listen address only, or with --insecure-listen as well");
	if (settings->cors != NULL && settings->cors[0] != '\0')
	{
		char		what[512];

		if (cors_parse(settings->cors, &settings->cors_policy, what, sizeof(what)) != 0)
			refuse("cors", what);
		if (settings->cors_policy.any && !settings->development && !settings_is_loopback(&settings->address))
			refuse("cors", "* lets the pages of every web site call the gateway, and is taken on a loopback "
				   "listen address or in development mode only: list the origins that may, such as --cors https://app.example.com");
	}
	if (settings->tls_cert == NULL && !settings->insecure_listen && !settings_is_loopback(&settings->address))
		refuse("listen", "plain HTTP is served on loopback only: give --tls-cert and --tls-key for HTTPS, "
			   "or --insecure-listen to serve plain HTTP there anyway");
}

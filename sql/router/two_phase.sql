-- ---------------------------------------------------------------------------
-- Two-phase commit across the shard nodes (docs/scale-out.md, "Transactions
-- across shards").  A request that changes several nodes at once (a
-- TransactWriteItems or ExecuteTransaction over their items, a table change)
-- has a part on each of its nodes and one on the router's own database (the
-- catalog change, the ClientRequestToken, the decision).  Each part runs in
-- a remote transaction over a dblink connection this backend keeps, and is
-- prepared as <gid>_<participant>: gid is ddb_<system identifier>_<router
-- database oid>_<router transaction id>_<number>, participant the node's
-- name or @router.  The router's part is prepared last and holds a row of
-- ddb_router.in_doubt per node part: its COMMIT PREPARED is the decision to
-- commit, durable and made once (PostgreSQL finishes a prepared transaction
-- once), by the coordinating backend only.  Then the node parts are
-- committed and the rows deleted.  ddb_router.recover_in_doubt() finishes
-- what a router that stopped midway left prepared.
-- ---------------------------------------------------------------------------

CREATE TABLE ddb_router.in_doubt (
    gid text PRIMARY KEY,               -- a node part's prepared transaction
    node_name text NOT NULL,            -- its node
    decided_at timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE ddb_router.in_doubt IS
    'The decisions to commit of transactions across shard nodes: a row per node part not known to be committed yet';

-- Numbers the transactions across nodes of one router transaction (a gid's last number).
CREATE SEQUENCE ddb_router.transaction_number;

-- The C side (src/router/coordinator.c).

-- Ends the backend (FATAL) when the setting ddb_router.failpoint names the point: a test hook.
CREATE FUNCTION ddb_router.failpoint(point text) RETURNS void
    AS 'MODULE_PATHNAME', 'ddb_router_failpoint' LANGUAGE C VOLATILE STRICT;

-- Raises an error as a node raised it (no context); a DynamoDB error without its body gets one.
CREATE FUNCTION ddb_router.raise_error(sqlstate text, message text, detail text, hint text) RETURNS void
    AS 'MODULE_PATHNAME', 'ddb_router_raise_error' LANGUAGE C VOLATILE;

-- Raises ServiceUnavailable (retryable) for a node that could not be reached; the reason goes to the hint.
CREATE FUNCTION ddb_router.raise_unavailable(reason text) RETURNS void
    AS 'MODULE_PATHNAME', 'ddb_router_raise_unavailable' LANGUAGE C VOLATILE;

-- Raises TransactionCanceledException with one reason per action of the whole request, as a node does.
CREATE FUNCTION ddb_router.raise_cancelled(reasons jsonb) RETURNS void
    AS 'MODULE_PATHNAME', 'ddb_router_raise_cancelled' LANGUAGE C VOLATILE STRICT;

-- One recovery of transactions in doubt at a time: a lock until the transaction ends, one of the
-- server's own (src/ddb_locks.h), which no SQL takes; for the router's owner and its code only.
CREATE FUNCTION ddb_router.lock_recovery() RETURNS void
    AS 'MODULE_PATHNAME', 'ddb_router_lock_recovery' LANGUAGE C VOLATILE;
REVOKE ALL ON FUNCTION ddb_router.lock_recovery() FROM PUBLIC;

-- The prefix of this router's prepared transactions, ddb_<system identifier>_<database oid>_: the
-- databases of routers and nodes may share a PostgreSQL cluster, whose prepared transactions share names.
CREATE FUNCTION ddb_router.gid_prefix() RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
RETURN format('ddb_%s_%s_', (SELECT system_identifier FROM pg_control_system()),
              (SELECT oid FROM pg_database WHERE datname = current_database()));

-- A new transaction across nodes: its gid (this router's prefix, the router transaction's id, a number).
CREATE FUNCTION ddb_router.new_gid() RETURNS text
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
RETURN ddb_router.gid_prefix() || pg_current_xact_id() || '_' || nextval('ddb_router.transaction_number');

-- The router transaction that coordinates the transaction of a gid (of this router's).
CREATE FUNCTION ddb_router.gid_xact(gid text) RETURNS xid8
LANGUAGE sql IMMUTABLE STRICT
SET search_path = pg_catalog, pg_temp
RETURN split_part(gid, '_', 4)::xid8;

-- The transaction a part's gid belongs to: the gid without its participant.
CREATE FUNCTION ddb_router.gid_transaction(gid text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT
SET search_path = pg_catalog, pg_temp
RETURN substring(gid FROM '^ddb_[0-9]+_[0-9]+_[0-9]+_[0-9]+');

-- A value quoted for a libpq connection string.
CREATE FUNCTION ddb_router.conninfo_quote(value text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT
SET search_path = pg_catalog, pg_temp
RETURN '''' || replace(replace(value, E'\\', E'\\\\'), '''', E'\\''') || '''';

-- The libpq connection string of a participant: a node's (ddb_router.nodes), or the router's own
-- database for @router (ddb_router.loopback_connstr, or this server's first unix socket directory and
-- port, with this database's name); as the router's user unless it names one (as a move connects).
CREATE FUNCTION ddb_router.participant_connstr(participant text) RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    connstr text;
BEGIN
    IF participant = '@router' THEN
        connstr := coalesce(nullif(current_setting('ddb_router.loopback_connstr', true), ''),
                            format('host=%s port=%s',
                                   ddb_router.conninfo_quote(coalesce(nullif(trim(split_part(
                                       current_setting('unix_socket_directories'), ',', 1)), ''), 'localhost')),
                                   current_setting('port')));
        IF connstr !~ '(^|\s)dbname\s*=' THEN
            connstr := connstr || ' dbname=' || ddb_router.conninfo_quote(current_database());
        END IF;
    ELSE
        connstr := (SELECT n.connstr FROM ddb_router.nodes n WHERE n.node_name = participant);
        IF connstr IS NULL THEN
            RAISE EXCEPTION 'the cluster has no shard node %', participant USING ERRCODE = 'undefined_object';
        END IF;
    END IF;
    IF connstr !~ '(^|\s)user\s*=' AND connstr !~ '^postgres(ql)?://' THEN
        connstr := connstr || ' user=' || ddb_router.conninfo_quote(current_user);
    END IF;
    RETURN connstr;
END
$$;

-- Closes this backend's dblink connections to a participant.
CREATE FUNCTION ddb_router.disconnect(participant text) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    lib name := ddb_router.dblink_schema();
    conn text;
BEGIN
    FOR conn IN EXECUTE format('SELECT c FROM unnest(%I.dblink_get_connections()) c WHERE starts_with(c, $1)', lib)
                USING 'ddbr:' || participant || ':' LOOP
        EXECUTE format('SELECT %I.dblink_disconnect($1)', lib) USING conn;
    END LOOP;
END
$$;

-- This backend's dblink connection to a participant (named ddbr:<participant>:<hash of its connection
-- string>), opened when it has none and kept for the transactions that follow, its search_path
-- pg_catalog's; one opened with an earlier connection string is closed.  The router's own must lead
-- to this very database.
CREATE FUNCTION ddb_router.connection(participant text) RETURNS text
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    lib name := ddb_router.dblink_schema();
    connstr text := ddb_router.participant_connstr(participant);
    conn text := 'ddbr:' || participant || ':' || left(md5(connstr), 12);
    existing text[];
    same boolean;
BEGIN
    EXECUTE format('SELECT %I.dblink_get_connections()', lib) INTO existing;
    IF conn = ANY (existing) THEN
        RETURN conn;
    END IF;
    PERFORM ddb_router.disconnect(participant);
    EXECUTE format('SELECT %I.dblink_connect($1, $2)', lib) USING conn, connstr;
    EXECUTE format('SELECT %I.dblink_exec($1, $2)', lib) USING conn, 'SET search_path = pg_catalog, pg_temp';
    IF participant = '@router' THEN
        EXECUTE format('SELECT r FROM %I.dblink($1, $2) AS t(r boolean)', lib) INTO same USING conn,
            format('SELECT (SELECT system_identifier FROM pg_catalog.pg_control_system()) OPERATOR(pg_catalog.=) %s '
                   'AND pg_catalog.current_database() OPERATOR(pg_catalog.=) %L',
                   (SELECT system_identifier FROM pg_control_system()), current_database());
        IF NOT same THEN
            EXECUTE format('SELECT %I.dblink_disconnect($1)', lib) USING conn;
            RAISE EXCEPTION 'the router''s connection to itself leads to another database'
                USING ERRCODE = 'invalid_parameter_value',
                      HINT = 'ddb_router.loopback_connstr must name this database of this server.';
        END IF;
    END IF;
    RETURN conn;
END
$$;

-- Runs a command, or a query of one text value, on a participant, in whatever remote transaction is
-- open there, and answers its value.  The participant's error is raised as it raised it; one that
-- cannot be reached is ServiceUnavailable (its connection closed).  With retry, a command that could
-- not reach it is sent once more on a new connection (for commands that are harmless to repeat).
CREATE FUNCTION ddb_router.remote(participant text, command text, retry boolean DEFAULT false) RETURNS text
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    answer text;
    state text;
    message text;
    detail text;
    hint text;
BEGIN
    BEGIN
        EXECUTE format('SELECT r FROM %I.dblink($1, $2) AS t(r text)', ddb_router.dblink_schema())
            INTO answer USING ddb_router.connection(participant), command;
        RETURN answer;
    EXCEPTION WHEN OTHERS THEN
        GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, message = MESSAGE_TEXT,
                                detail = PG_EXCEPTION_DETAIL, hint = PG_EXCEPTION_HINT;
    END;
    -- dblink gives a lost connection class 08; a node shutting down ends the session with 57P0x
    IF state LIKE '08%' OR state IN ('57P01', '57P02', '57P03') THEN
        PERFORM ddb_router.disconnect(participant);
        IF retry THEN
            RETURN ddb_router.remote(participant, command);
        END IF;
        PERFORM ddb_router.raise_unavailable(concat_ws(': ', participant, message, nullif(detail, '')));
    END IF;
    PERFORM ddb_router.raise_error(state, message, nullif(detail, ''), nullif(hint, ''));
END
$$;

-- Ends the parts of a transaction across nodes that was not decided: the open ones rolled back (their
-- connection closed when that fails, even by a cancel, so that no later request of this backend finds
-- a remote transaction open), the prepared ones rolled back prepared (left, with a warning, to
-- ddb_router.recover_in_doubt() when that fails).
CREATE FUNCTION ddb_router.abandon(gid text, opened text[], prepared text[]) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    participant text;
BEGIN
    FOREACH participant IN ARRAY opened LOOP
        BEGIN
            PERFORM ddb_router.remote(participant, 'ROLLBACK');
        EXCEPTION WHEN OTHERS OR query_canceled THEN
            PERFORM ddb_router.disconnect(participant);
        END;
    END LOOP;
    FOREACH participant IN ARRAY prepared LOOP
        BEGIN
            PERFORM ddb_router.remote(participant, format('ROLLBACK PREPARED %L', gid || '_' || participant), true);
        EXCEPTION WHEN OTHERS OR query_canceled THEN
            RAISE WARNING 'the part on % of cancelled transaction % across shard nodes stays prepared: %',
                participant, gid, SQLERRM
                USING HINT = 'ddb_router.recover_in_doubt() rolls it back.';
        END;
    END LOOP;
END
$$;

-- Commits the node parts of a transaction decided to commit, then deletes its decision's rows; a part
-- that cannot be committed now is left, with a warning, to ddb_router.recover_in_doubt() (decided, it
-- will commit).
CREATE FUNCTION ddb_router.finish(gid text, nodes text[]) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    node text;
    done text[] := '{}';
BEGIN
    FOREACH node IN ARRAY nodes LOOP
        BEGIN
            PERFORM ddb_router.remote(node, format('COMMIT PREPARED %L', gid || '_' || node), true);
            done := done || (gid || '_' || node);
        EXCEPTION
            WHEN undefined_object THEN
                -- committed already (by ddb_router.recover_in_doubt(): nothing else ends a decided part)
                done := done || (gid || '_' || node);
            WHEN OTHERS THEN
                RAISE WARNING 'the part on % of transaction % across shard nodes is decided but not committed yet: %',
                    node, gid, SQLERRM
                    USING HINT = 'ddb_router.recover_in_doubt() commits it.';
        END;
    END LOOP;
    BEGIN
        PERFORM ddb_router.remote('@router', format('DELETE FROM ddb_router.in_doubt WHERE gid OPERATOR(pg_catalog.=) ANY (%L::text[])',
                                                    done), true);
    EXCEPTION WHEN OTHERS THEN
        RAISE WARNING 'the decision of transaction % across shard nodes stays recorded: %', gid, SQLERRM
            USING HINT = 'ddb_router.recover_in_doubt() deletes it.';
    END;
END
$$;

-- Runs the parts of a request across nodes with two-phase commit, all committed or none: router_query
-- first, in the router's own part (a null answer: nothing is to be done, and nothing is), then each
-- node's request (parts: {node: request}) with ddb.execute_metered, node after node in ascending order
-- of name.  Answers {participant: answer} ("@router": router_query's); when a node's part fails,
-- {"failed": node, "error": {sqlstate, message, detail, hint}} with every part rolled back.  Any other
-- error is raised, every part rolled back, except after the decision: then the parts commit.
CREATE FUNCTION ddb_router.two_phase_commit(role_name name, operation text, router_query text, parts jsonb) RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    gid text := ddb_router.new_gid();
    nodes text[] := ARRAY(SELECT k FROM jsonb_object_keys(coalesce(parts, '{}')) k ORDER BY k COLLATE "C");
    node text;
    opened text[] := '{}';      -- parts whose remote transaction is open
    prepared text[] := '{}';    -- parts prepared, nothing decided
    answers jsonb := '{}';
    answer text;
    failure jsonb;
    state text;
    message text;
    detail text;
    hint text;
BEGIN
    BEGIN
        PERFORM ddb_router.remote('@router', 'BEGIN', true);
        opened := '{@router}';
        IF router_query IS NOT NULL THEN
            answer := ddb_router.remote('@router', router_query);
            IF answer IS NULL THEN
                PERFORM ddb_router.remote('@router', 'ROLLBACK');
                RETURN '{"@router": null}';
            END IF;
            answers := jsonb_build_object('@router', answer);
        END IF;
        FOREACH node IN ARRAY nodes LOOP
            PERFORM ddb_router.remote(node, 'BEGIN', true);
            opened := opened || node;
            BEGIN
                answer := ddb_router.remote(node, format('SELECT ddb.execute_metered(%L, %L, %L)',
                                                         role_name, operation, parts->node));
            EXCEPTION WHEN OTHERS THEN
                GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, message = MESSAGE_TEXT,
                                        detail = PG_EXCEPTION_DETAIL, hint = PG_EXCEPTION_HINT;
                failure := jsonb_build_object('failed', node, 'error', jsonb_build_object(
                    'sqlstate', state, 'message', message, 'detail', nullif(detail, ''), 'hint', nullif(hint, '')));
                RAISE;
            END;
            answers := answers || jsonb_build_object(node, answer);
            PERFORM ddb_router.remote(node, format('PREPARE TRANSACTION %L', gid || '_' || node));
            opened := array_remove(opened, node);
            prepared := prepared || node;
        END LOOP;
        -- the decision's rows, in the router's part, prepared last
        PERFORM ddb_router.remote('@router', format(
            'INSERT INTO ddb_router.in_doubt (gid, node_name) SELECT %L || ''_'' || n, n FROM pg_catalog.unnest(%L::text[]) n',
            gid, nodes));
        PERFORM ddb_router.remote('@router', format('PREPARE TRANSACTION %L', gid || '_@router'));
        opened := '{}';
    EXCEPTION WHEN OTHERS OR query_canceled THEN
        GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, message = MESSAGE_TEXT,
                                detail = PG_EXCEPTION_DETAIL, hint = PG_EXCEPTION_HINT;
        PERFORM ddb_router.abandon(gid, opened, prepared);
        IF failure IS NOT NULL THEN
            RETURN failure;
        END IF;
        PERFORM ddb_router.raise_error(state, message, nullif(detail, ''), nullif(hint, ''));
    END;
    PERFORM ddb_router.failpoint('after_prepare');
    -- the decision.  Only this backend ends its router's part while its transaction runs, so a part
    -- gone when asked again is committed; any other failure leaves the outcome to the recovery.
    BEGIN
        PERFORM ddb_router.remote('@router', format('COMMIT PREPARED %L', gid || '_@router'), true);
    EXCEPTION
        WHEN undefined_object THEN
            NULL;
        WHEN OTHERS OR query_canceled THEN
            GET STACKED DIAGNOSTICS message = MESSAGE_TEXT;
            RAISE EXCEPTION 'the outcome of transaction % across shard nodes is not known yet: %', gid, message
                USING ERRCODE = 'internal_error',
                      HINT = 'ddb_router.recover_in_doubt() commits or rolls back its prepared parts.';
    END;
    PERFORM ddb_router.failpoint('after_decision');
    PERFORM ddb_router.finish(gid, nodes);
    RETURN answers;
END
$$;

-- Finishes the transactions across nodes that a router left prepared when it stopped between PREPARE
-- and its last COMMIT PREPARED (docs/scale-out.md).  Every prepared part of this router's, on the
-- router and on each node, is committed when its decision is recorded; rolled back when the router
-- transaction that coordinated it (the gid's transaction id) had ended before the router's parts were
-- listed, without a decision (the router's part first: rolling it back is the decision to abort, and
-- nothing commits it after that); and left while that transaction still runs.  The decisions whose
-- parts are all committed are deleted.  Answers what it did: (gid, node, action), @router for the
-- router's own parts.
CREATE FUNCTION ddb_router.recover_in_doubt() RETURNS TABLE (gid text, node_name text, action text)
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    list text := format('SELECT coalesce(pg_catalog.jsonb_agg(gid ORDER BY gid), ''[]'')::text FROM pg_catalog.pg_prepared_xacts '
                        'WHERE database OPERATOR(pg_catalog.=) pg_catalog.current_database() AND pg_catalog.starts_with(gid, %L)',
                        ddb_router.gid_prefix());
    nodes text[] := ARRAY(SELECT n.node_name FROM ddb_router.nodes n ORDER BY n.node_name COLLATE "C");
    reachable text[] := '{}';
    ended xid8[] := '{}';       -- coordinating transactions that had ended before the router's parts were listed
    unsettled text[] := '{}';   -- transactions whose router part could not be rolled back
    decided text[];
    left_prepared text[] := '{}';
    part text;
    node text;
    command text;
BEGIN
    -- one recovery at a time
    PERFORM ddb_router.lock_recovery();
    -- which coordinators of the parts prepared now have ended (before the router's parts are listed again)
    ended := ARRAY(SELECT DISTINCT ddb_router.gid_xact(g)
                   FROM jsonb_array_elements_text(ddb_router.remote('@router', list, true)::jsonb) g
                   WHERE pg_xact_status(ddb_router.gid_xact(g)) IS DISTINCT FROM 'in progress');
    FOREACH node IN ARRAY nodes LOOP
        BEGIN
            ended := ended || ARRAY(SELECT DISTINCT ddb_router.gid_xact(g)
                                    FROM jsonb_array_elements_text(ddb_router.remote(node, list, true)::jsonb) g
                                    WHERE pg_xact_status(ddb_router.gid_xact(g)) IS DISTINCT FROM 'in progress');
            reachable := reachable || node;
        EXCEPTION WHEN OTHERS THEN
            RETURN QUERY SELECT NULL::text, node, 'unreachable: ' || SQLERRM;
        END;
    END LOOP;
    -- the router's parts of ended coordinators are rolled back: the decision to abort
    FOR part IN SELECT jsonb_array_elements_text(ddb_router.remote('@router', list, true)::jsonb) LOOP
        IF ddb_router.gid_xact(part) <> ALL (ended) THEN
            RETURN QUERY SELECT part, '@router', 'left: its router transaction is running';
            CONTINUE;
        END IF;
        BEGIN
            PERFORM ddb_router.remote('@router', format('ROLLBACK PREPARED %L', part), true);
            RETURN QUERY SELECT part, '@router', 'rolled back';
        EXCEPTION WHEN OTHERS THEN
            unsettled := unsettled || ddb_router.gid_transaction(part);
            RETURN QUERY SELECT part, '@router', 'left: ' || SQLERRM;
        END;
    END LOOP;
    -- the decisions, read after that: none can appear for a transaction of an ended coordinator
    decided := ARRAY(SELECT jsonb_array_elements_text(ddb_router.remote('@router',
                     'SELECT coalesce(pg_catalog.jsonb_agg(gid), ''[]'')::text FROM ddb_router.in_doubt', true)::jsonb));
    FOREACH node IN ARRAY reachable LOOP
        BEGIN
            FOR part IN SELECT jsonb_array_elements_text(ddb_router.remote(node, list, true)::jsonb) LOOP
                IF part = ANY (decided) THEN
                    command := 'COMMIT PREPARED';
                ELSIF ddb_router.gid_xact(part) <> ALL (ended) THEN
                    left_prepared := left_prepared || part;
                    RETURN QUERY SELECT part, node, 'left: its router transaction is running';
                    CONTINUE;
                ELSIF ddb_router.gid_transaction(part) = ANY (unsettled) THEN
                    left_prepared := left_prepared || part;
                    RETURN QUERY SELECT part, node, 'left: its router part was not rolled back';
                    CONTINUE;
                ELSE
                    command := 'ROLLBACK PREPARED';
                END IF;
                BEGIN
                    PERFORM ddb_router.remote(node, format('%s %L', command, part), true);
                    RETURN QUERY SELECT part, node, CASE command WHEN 'COMMIT PREPARED' THEN 'committed' ELSE 'rolled back' END;
                EXCEPTION WHEN OTHERS THEN
                    left_prepared := left_prepared || part;
                    RETURN QUERY SELECT part, node, 'left: ' || SQLERRM;
                END;
            END LOOP;
        EXCEPTION WHEN OTHERS THEN
            reachable := array_remove(reachable, node);
            RETURN QUERY SELECT NULL::text, node, 'unreachable: ' || SQLERRM;
        END;
    END LOOP;
    -- the decisions of parts all committed now (every part was prepared before its decision)
    RETURN QUERY
        SELECT d->>0, d->>1, 'decision deleted'
        FROM jsonb_array_elements(ddb_router.remote('@router', format(
            'WITH d AS (DELETE FROM ddb_router.in_doubt WHERE gid OPERATOR(pg_catalog.=) ANY (%L::text[]) '
            'AND node_name OPERATOR(pg_catalog.=) ANY (%L::text[]) AND gid OPERATOR(pg_catalog.<>) ALL (%L::text[]) '
            'RETURNING gid, node_name) SELECT coalesce(pg_catalog.jsonb_agg(pg_catalog.jsonb_build_array(gid, node_name)), ''[]'')::text FROM d',
            decided, reachable, left_prepared), true)::jsonb) d;
END
$$;
COMMENT ON FUNCTION ddb_router.recover_in_doubt() IS
    'Commits or rolls back the parts of transactions across shard nodes that a router left prepared (docs/scale-out.md)';

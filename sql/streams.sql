-- ---------------------------------------------------------------------------
-- DynamoDB Streams (docs/streams.md): a table's item changes as stream
-- records, read with ListStreams, DescribeStream, GetShardIterator and
-- GetRecords.
--
-- A table with a stream carries the trigger ddb_stream, which collects its
-- changes for the commit: a change rolled back leaves no record, and a
-- committed one is numbered at commit, one writer of the stream at a time
-- until its records are in the index (not until its commit ends), so a
-- reader that stops at the first record still being committed
-- (ddb.stream_horizon) never passes a record that is still to come.  One
-- shard per stream; records are kept 24 hours (ddb.trim_stream_records
-- removes older ones).
-- ---------------------------------------------------------------------------

CREATE TABLE ddb.stream_records (
    table_name text NOT NULL,
    stream_label text NOT NULL,
    sequence_number bigint NOT NULL,
    -- INSERT, MODIFY or REMOVE: written only by ddb.stream_capture, so no CHECK (a check
    -- constraint's expression is read again at every INSERT through SPI: 6% of a streamed write)
    event_name text NOT NULL,
    keys jsonb NOT NULL,            -- DynamoDB JSON
    new_image jsonb,
    old_image jsonb,
    size_bytes integer NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (table_name, stream_label, sequence_number)
);
COMMENT ON TABLE ddb.stream_records IS 'DynamoDB Streams: the item changes of tables with a stream, 24 hours of them';
CREATE SEQUENCE ddb.stream_sequence;

-- Waits for the writers of a table that are committing stream records, for a
-- reader that may read the table, and returns the last sequence number given
-- out before the wait (GetShardIterator LATEST): writers hold the stream's
-- lock shared from before numbering their records until their commit ends
-- (ddb.stream_capture, src/table/stream_capture.c); the reader takes no
-- lock, so it stalls no writer.  The lock is one of the server's own
-- (src/ddb_locks.h): no SQL takes it.
CREATE FUNCTION ddb.await_stream_writers(table_name text) RETURNS bigint
    AS 'MODULE_PATHNAME', 'ddb_await_stream_writers' LANGUAGE C VOLATILE STRICT;

-- How far the caller's snapshot may read a stream after a sequence number,
-- page records at most: up to the first record whose writer it sees still
-- running, for a reader that may read the table; it waits for nobody
-- (src/table/stream_horizon.c).
CREATE FUNCTION ddb.stream_horizon(table_name text, label text, after bigint, page integer) RETURNS bigint
    AS 'MODULE_PATHNAME', 'ddb_stream_horizon' LANGUAGE C VOLATILE STRICT;

-- A stream's ARN: the table's, /stream/, its label.
CREATE FUNCTION ddb.stream_arn(table_name text, label text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
RETURN ddb.table_arn(table_name) || '/stream/' || label;

-- The one shard of a stream.
CREATE FUNCTION ddb.stream_shard_id(label text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
RETURN 'shardId-00000001-' || translate(label, '-:.T', '');

-- A sequence number as DynamoDB prints them: 21 digits.
CREATE FUNCTION ddb.stream_sequence_text(n bigint) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
RETURN lpad(n::text, 21, '0');

-- Records an item change of a table with a stream, written when its
-- transaction commits: the trigger ddb_stream (argument: the table's
-- DynamoDB name), in C (src/table/stream_capture.c).
CREATE FUNCTION ddb.stream_capture() RETURNS trigger
    AS 'MODULE_PATHNAME', 'ddb_stream_capture' LANGUAGE C;
REVOKE ALL ON FUNCTION ddb.stream_capture() FROM PUBLIC;

-- Enables or disables a table's stream from a StreamSpecification (CreateTable, UpdateTable).
CREATE FUNCTION ddb.set_stream(table_name text, spec jsonb) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t ddb.tables;
    enabled boolean;
    view_type text := spec->>'StreamViewType';
BEGIN
    SELECT * INTO t FROM ddb.tables WHERE tables.table_name = set_stream.table_name FOR UPDATE;
    IF jsonb_typeof(spec) IS DISTINCT FROM 'object' OR jsonb_typeof(spec->'StreamEnabled') IS DISTINCT FROM 'boolean' THEN
        PERFORM ddb.validation_error('1 validation error detected: Value null at ''streamSpecification.streamEnabled'' failed to satisfy constraint: Member must not be null');
    END IF;
    enabled := (spec->>'StreamEnabled')::boolean;
    IF view_type IS NOT NULL AND view_type NOT IN ('NEW_IMAGE', 'OLD_IMAGE', 'NEW_AND_OLD_IMAGES', 'KEYS_ONLY') THEN
        PERFORM ddb.validation_error(format(
            '1 validation error detected: Value ''%s'' at ''streamSpecification.streamViewType'' failed to satisfy constraint: Member must satisfy enum value set: [NEW_IMAGE, OLD_IMAGE, NEW_AND_OLD_IMAGES, KEYS_ONLY]',
            view_type));
    END IF;
    IF enabled AND view_type IS NULL THEN
        PERFORM ddb.validation_error('One or more parameter values were invalid: You must specify a StreamViewType when enabling a stream');
    END IF;
    IF NOT enabled AND view_type IS NOT NULL THEN
        PERFORM ddb.validation_error('One or more parameter values were invalid: You cannot modify StreamViewType when disabling a stream');
    END IF;
    IF enabled AND t.stream_view_type IS NOT NULL THEN
        PERFORM ddb.validation_error(format('Table already has an enabled stream: %s', ddb.stream_arn(t.table_name, t.stream_label)));
    END IF;
    IF NOT enabled AND t.stream_view_type IS NULL THEN
        PERFORM ddb.validation_error('One or more parameter values were invalid: The stream is already disabled');
    END IF;
    IF enabled THEN
        -- a new stream: a new label, so its records are apart from an earlier stream's
        UPDATE ddb.tables SET stream_view_type = view_type,
                              stream_label = to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS')
        WHERE tables.table_name = t.table_name;
        PERFORM ddb.attach_trigger(t.table_name, 'ddb_stream');
    ELSE
        UPDATE ddb.tables SET stream_view_type = NULL WHERE tables.table_name = t.table_name;
    END IF;
END $$;

-- The stream members of a DescribeTable: StreamSpecification, LatestStreamArn, LatestStreamLabel.
CREATE FUNCTION ddb.stream_description(t ddb.tables) RETURNS jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
RETURN CASE WHEN t.stream_view_type IS NOT NULL
            THEN jsonb_build_object('StreamSpecification',
                                    jsonb_build_object('StreamEnabled', true, 'StreamViewType', t.stream_view_type))
            ELSE '{}'::jsonb END
       || CASE WHEN t.stream_label IS NOT NULL
               THEN jsonb_build_object('LatestStreamArn', ddb.stream_arn(t.table_name, t.stream_label),
                                       'LatestStreamLabel', t.stream_label)
               ELSE '{}'::jsonb END;

-- The table of a stream ARN; YD004 (resource not found) when it names no stream.
CREATE FUNCTION ddb.stream_table(arn text) RETURNS ddb.tables
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t ddb.tables;
BEGIN
    IF arn IS NULL THEN
        PERFORM ddb.validation_error('1 validation error detected: Value null at ''streamArn'' failed to satisfy constraint: Member must not be null');
    END IF;
    SELECT * INTO t FROM ddb.tables
    WHERE stream_label IS NOT NULL AND ddb.stream_arn(tables.table_name, stream_label) = arn;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'YD004', MESSAGE = format('Requested resource not found: Stream: %s not found', arn);
    END IF;
    RETURN t;
END $$;

-- ListStreams: the streams of every table, or of one (TableName), in ARN order.
CREATE FUNCTION ddb.api_list_streams(request jsonb) RETURNS jsonb
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    page_size integer := ddb.request_limit(request, 100, 100);
    streams jsonb;
    last_arn text;
BEGIN
    IF request ? 'TableName' THEN
        PERFORM ddb.require_table(coalesce(request->>'TableName', ''));
        PERFORM ddb.check_table_access(request->>'TableName', 'ListStreams', 'read');
    END IF;
    SELECT jsonb_agg(jsonb_build_object('StreamArn', arn, 'TableName', table_name, 'StreamLabel', stream_label) ORDER BY arn),
           CASE WHEN count(*) = page_size THEN max(arn) END
    INTO streams, last_arn
    FROM (SELECT ddb.stream_arn(table_name, stream_label) AS arn, table_name, stream_label
          FROM ddb.tables
          WHERE stream_label IS NOT NULL
            AND (NOT request ? 'TableName' OR table_name = request->>'TableName')
            AND ddb.table_privilege(schema_name, relation_name, 'SELECT')
            AND ddb.stream_arn(table_name, stream_label) > coalesce(request->>'ExclusiveStartStreamArn', '')
          ORDER BY 1 LIMIT page_size) s;
    RETURN jsonb_build_object('Streams', coalesce(streams, '[]'))
        || CASE WHEN last_arn IS NOT NULL THEN jsonb_build_object('LastEvaluatedStreamArn', last_arn) ELSE '{}' END;
END $$;

-- DescribeStream: the stream, its status and its one shard.
CREATE FUNCTION ddb.api_describe_stream(request jsonb) RETURNS jsonb
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t ddb.tables := ddb.stream_table(request->>'StreamArn');
    first_sequence bigint;
BEGIN
    PERFORM ddb.check_table_access(t.table_name, 'DescribeStream', 'read');
    SELECT min(sequence_number) INTO first_sequence FROM ddb.stream_records r
    WHERE r.table_name = t.table_name AND r.stream_label = t.stream_label AND r.created_at > now() - interval '24 hours';
    RETURN jsonb_build_object('StreamDescription', jsonb_build_object(
        'StreamArn', ddb.stream_arn(t.table_name, t.stream_label),
        'StreamLabel', t.stream_label,
        'StreamStatus', CASE WHEN t.stream_view_type IS NOT NULL THEN 'ENABLED' ELSE 'DISABLED' END,
        'StreamViewType', coalesce(t.stream_view_type, 'KEYS_ONLY'),
        'CreationRequestDateTime', extract(epoch FROM (t.stream_label || 'Z')::timestamptz),
        'TableName', t.table_name,
        'KeySchema', ddb.key_schema(t.hash_key, t.range_key),
        'Shards', jsonb_build_array(jsonb_build_object(
            'ShardId', ddb.stream_shard_id(t.stream_label),
            'SequenceNumberRange', jsonb_build_object(
                'StartingSequenceNumber', ddb.stream_sequence_text(coalesce(first_sequence, 1)))))));
END $$;

-- A shard iterator: where a reader is in a stream, sealed with the server's
-- secret (src/request/tokens.c), for a caller that may read the table (as
-- GetShardIterator asks), of the table's latest stream.
CREATE FUNCTION ddb.stream_iterator(table_name text, label text, after_sequence bigint) RETURNS text
    AS 'MODULE_PATHNAME', 'ddb_stream_iterator' LANGUAGE C STABLE STRICT;

-- The table, stream label and sequence number of a shard iterator
-- ddb.stream_iterator sealed; NULLs for anything else (edited, forged, or
-- not exactly the object it seals).
CREATE FUNCTION ddb.open_stream_iterator(token text, OUT table_name text, OUT label text, OUT after_sequence bigint)
    AS 'MODULE_PATHNAME', 'ddb_open_stream_iterator' LANGUAGE C STABLE STRICT;

-- GetShardIterator: TRIM_HORIZON, LATEST, AT_SEQUENCE_NUMBER, AFTER_SEQUENCE_NUMBER.
CREATE FUNCTION ddb.api_get_shard_iterator(request jsonb) RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t ddb.tables := ddb.stream_table(request->>'StreamArn');
    kind text := request->>'ShardIteratorType';
    after_sequence bigint;
BEGIN
    PERFORM ddb.check_table_access(t.table_name, 'GetShardIterator', 'read');
    IF request->>'ShardId' IS DISTINCT FROM ddb.stream_shard_id(t.stream_label) THEN
        RAISE EXCEPTION USING ERRCODE = 'YD004',
            MESSAGE = format('Requested resource not found: Shard does not exist: %s', request->>'ShardId');
    END IF;
    IF kind IS NULL OR kind NOT IN ('TRIM_HORIZON', 'LATEST', 'AT_SEQUENCE_NUMBER', 'AFTER_SEQUENCE_NUMBER') THEN
        PERFORM ddb.validation_error(format(
            '1 validation error detected: Value ''%s'' at ''shardIteratorType'' failed to satisfy constraint: Member must satisfy enum value set: [TRIM_HORIZON, LATEST, AT_SEQUENCE_NUMBER, AFTER_SEQUENCE_NUMBER]',
            kind));
    END IF;
    IF kind IN ('AT_SEQUENCE_NUMBER', 'AFTER_SEQUENCE_NUMBER') THEN
        IF request->>'SequenceNumber' IS NULL OR request->>'SequenceNumber' !~ '^[0-9]{1,21}$'
           OR (request->>'SequenceNumber')::numeric NOT BETWEEN 1 AND 9223372036854775807 THEN
            PERFORM ddb.validation_error('Invalid SequenceNumber for ShardIteratorType ' || kind);
        END IF;
        after_sequence := (request->>'SequenceNumber')::numeric - CASE WHEN kind = 'AT_SEQUENCE_NUMBER' THEN 1 ELSE 0 END;
    ELSIF kind = 'LATEST' THEN
        -- after every record committed so far: once its writers are done, every number given out
        after_sequence := ddb.await_stream_writers(t.table_name);
    ELSE
        after_sequence := 0;
    END IF;
    RETURN jsonb_build_object('ShardIterator', ddb.stream_iterator(t.table_name, t.stream_label, after_sequence));
END $$;

-- GetRecords: the records after a shard iterator, in sequence order, up to
-- the first one still being committed, and the iterator after them.
CREATE FUNCTION ddb.api_get_records(request jsonb) RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    position record;
    t ddb.tables;
    page_size integer := ddb.request_limit(request, 1000, 1000);
    records jsonb;
    horizon bigint;
BEGIN
    IF request->>'ShardIterator' IS NULL THEN
        PERFORM ddb.validation_error('1 validation error detected: Value null at ''shardIterator'' failed to satisfy constraint: Member must not be null');
    END IF;
    -- the table, label and sequence ddb.stream_iterator sealed; NULLs for anything else
    SELECT * INTO position FROM ddb.open_stream_iterator(request->>'ShardIterator');
    IF position.table_name IS NULL THEN
        PERFORM ddb.validation_error('Invalid ShardIterator');
    END IF;
    SELECT * INTO t FROM ddb.tables WHERE table_name = position.table_name AND stream_label = position.label;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'YD004', MESSAGE = 'Requested resource not found: the stream of this iterator is gone';
    END IF;
    PERFORM ddb.check_table_access(t.table_name, 'GetRecords', 'read');
    -- no further than the first record still being committed: nothing appears behind the reader
    horizon := ddb.stream_horizon(t.table_name, t.stream_label, position.after_sequence, page_size);
    SELECT jsonb_agg(jsonb_build_object(
               'eventID', md5(r.table_name || r.stream_label || r.sequence_number),
               'eventName', r.event_name,
               'eventVersion', '1.1',
               'eventSource', 'aws:dynamodb',
               'awsRegion', 'ddb-model',
               'dynamodb', jsonb_strip_nulls(jsonb_build_object(
                   'ApproximateCreationDateTime', floor(extract(epoch FROM r.created_at)),
                   'Keys', r.keys,
                   'NewImage', r.new_image,
                   'OldImage', r.old_image,
                   'SequenceNumber', ddb.stream_sequence_text(r.sequence_number),
                   'SizeBytes', r.size_bytes,
                   'StreamViewType', coalesce(t.stream_view_type, 'KEYS_ONLY'))))
               ORDER BY r.sequence_number)
    INTO records
    FROM (SELECT * FROM ddb.stream_records r
          WHERE r.table_name = t.table_name AND r.stream_label = t.stream_label
            AND r.sequence_number > position.after_sequence AND r.sequence_number <= horizon
            AND r.created_at > now() - interval '24 hours'
          ORDER BY r.sequence_number LIMIT page_size) r;
    RETURN jsonb_build_object('Records', coalesce(records, '[]'))
        || CASE WHEN t.stream_view_type IS NOT NULL OR records IS NOT NULL
                THEN jsonb_build_object('NextShardIterator',
                         ddb.stream_iterator(t.table_name, t.stream_label, horizon))
                ELSE '{}'::jsonb END;
END $$;

-- Removes stream records older than 24 hours (DynamoDB's retention); schedule it like ddb.expire.
CREATE FUNCTION ddb.trim_stream_records() RETURNS bigint
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    WITH gone AS (DELETE FROM ddb.stream_records WHERE created_at <= now() - interval '24 hours' RETURNING 1)
    SELECT count(*) FROM gone;
END;

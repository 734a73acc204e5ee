/*
 * import_sql.h — the statement that writes one item of DynamoDB JSON into a
 * table, shared by the two imports so that they write an item alike:
 * ddb-transfer import's (src/transfer/import.c, a client of libpq) and the
 * server's ImportTable job (src/exports/import_job.c, through SPI).  Text
 * only: it includes nothing of the client's nor of the server's.
 */
#ifndef DDB_TRANSFER_IMPORT_SQL_H
#define DDB_TRANSFER_IMPORT_SQL_H

/* $1 the table's name, $2 the item in DynamoDB JSON: ddb.put_item of its natural jsonb. */
#define IMPORT_ITEM_SQL "SELECT ddb.put_item($1, ddb.from_dynamodb($2::jsonb))"

#endif

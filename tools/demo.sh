#!/usr/bin/env bash
# The main job: installs what is missing, builds and installs ddb_model,
# starts a throwaway cluster in .cluster/demo, runs the demo (the key type, a
# table, then each model with the seed's example data and its access patterns), and
# leaves the cluster running for psql.
CLUSTER_NAME=demo
source "$(dirname "${BASH_SOURCE[0]}")/cluster.sh"

install_packages
build_and_install
start_cluster
cluster_psql -q -c "CREATE DATABASE ddb_demo"
cluster_psql -q -d ddb_demo -c "CREATE EXTENSION ddb_model"
cluster_psql -q -v ON_ERROR_STOP=1 -d ddb_demo -f "$ROOT/tools/demo.sql"
# each model's example data and access patterns
for model_demo in "$ROOT"/tools/demo/*.sql; do
    cluster_psql -q -v ON_ERROR_STOP=1 -d ddb_demo -f "$model_demo"
done

cat <<MSG

The demo cluster is running.
  connect:  psql -h $SOCKET_DIR -p $PGPORT_NUM -U postgres ddb_demo
  stop:     runuser -u postgres -- $PGBIN/pg_ctl -D $PGDATA_DIR stop
MSG

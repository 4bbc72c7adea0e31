#!/usr/bin/env bash
# Starts or stops the PostGraphile peers that `make bench` measures hbgraph
# beside: PostgreSQL with PostGraphile 4 on 127.0.0.1:5050 and PostGraphile 5
# on 127.0.0.1:5051, over the peers' own dataset. As root (their start.sh
# installs PostgreSQL with apt-get and acts as the postgres user).
#
#   bench/peers.sh up     copy $PEERS_SRC (../shared/peers) to bench/data/peers once, start both
#   bench/peers.sh down   stop both
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
src=${PEERS_SRC:-../shared/peers}
dst=bench/data/peers
case "${1:-}" in
up)
  if [ ! -d "$dst/postgraphile5" ]; then
    [ -d "$src/postgraphile" ] && [ -d "$src/postgraphile5" ] ||
      { echo "peers: $src holds no postgraphile/ and postgraphile5/ (set PEERS_SRC)" >&2; exit 1; }
    mkdir -p "$dst"
    # The source may be read-only; the peers write their data and PIDs beside their scripts.
    cp -r "$src/postgraphile" "$src/postgraphile5" "$dst/"
    chmod -R u+w "$dst"
  fi
  "$dst/postgraphile5/start.sh"
  ;;
down)
  [ -d "$dst/postgraphile5" ] || exit 0
  "$dst/postgraphile5/stop.sh" || true
  "$dst/postgraphile/stop.sh"
  ;;
*)
  echo "usage: bench/peers.sh up|down" >&2
  exit 2
  ;;
esac

#!/usr/bin/env bash
# Throwaway TLS material for a local cluster, a test or a benchmark, made with the openssl command:
#   deploy/tls-certs.sh DIR [--server-cn CN] [AGENT_NAME...]
# DIR/ca.pem + ca.key       a CA (made only when DIR has none, so certificates can be re-issued)
# DIR/server.pem + .key     the daemon's: CN (default trainyard-daemon), valid for 127.0.0.1, ::1 and
#                           localhost; made anew on every run (to try a SIGHUP reload)
# DIR/agent-NAME.pem + .key an agent's client certificate: CN and DNS name NAME, its node name
# Keys are EC P-256 without a passphrase, mode 0600; certificates last 30 days. Not for production.
set -euo pipefail

dir=${1:?usage: tls-certs.sh DIR [--server-cn CN] [AGENT_NAME...]}
shift
server_cn=trainyard-daemon
if [[ ${1:-} == --server-cn ]]; then
  server_cn=${2:?--server-cn needs a value}
  shift 2
fi
mkdir -p "$dir"
umask 077

new_key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }

# issue NAME CN EXTENSIONS: DIR/NAME.pem signed by the CA, for DIR/NAME.key.
issue() {
  local name=$1 cn=$2 extensions=$3
  new_key "$dir/$name.key"
  openssl req -new -key "$dir/$name.key" -subj "/CN=$cn" -out "$dir/$name.csr"
  printf '%s\n' "$extensions" >"$dir/$name.ext"
  openssl x509 -req -in "$dir/$name.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" -CAcreateserial -days 30 \
    -extfile "$dir/$name.ext" -out "$dir/$name.pem" 2>/dev/null
  rm -f "$dir/$name.csr" "$dir/$name.ext"
}

if [[ ! -s $dir/ca.pem ]]; then
  new_key "$dir/ca.key"
  openssl req -x509 -new -key "$dir/ca.key" -subj "/CN=Trainyard throwaway CA $(date +%s)-$$" -days 30 \
    -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign -out "$dir/ca.pem"
fi
issue server "$server_cn" "basicConstraints=CA:FALSE
extendedKeyUsage=serverAuth
subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost"
for agent in "$@"; do
  issue "agent-$agent" "$agent" "basicConstraints=CA:FALSE
extendedKeyUsage=clientAuth
subjectAltName=DNS:$agent"
done
chmod 0644 "$dir"/*.pem

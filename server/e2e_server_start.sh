# Sourced by the end-to-end scripts (stats_job_e2e.sh, tokens_e2e.sh), in their work folder:
#   start_server_on_free_port SERVER_BINARY ARGS...
# starts SERVER_BINARY --listen 127.0.0.1:0 ARGS... in the background (log server.log, pid
# server.pid), reads the port it bound from its log ("listening on ... (port N)"), exports
# COLLATZ_SERVER=127.0.0.1:N and returns once `$CTL status` answers; returns 1 if the server
# exits or does not answer within 30 s. Needs CTL (collatzctl) set.
start_server_on_free_port() {
  local server=$1 port _
  shift
  : > server.log  # exists before the loop reads it (under set -e a failed sed would end the script)
  "$server" --listen 127.0.0.1:0 "$@" 2>>server.log &
  echo $! > server.pid
  for _ in $(seq 150); do
    port=$(sed -n 's/.*listening on .* (port \([0-9]*\)).*/\1/p' server.log | head -1)
    if [ -n "$port" ]; then
      export COLLATZ_SERVER=127.0.0.1:$port
      "$CTL" status >/dev/null 2>&1 && return 0
    fi
    kill -0 "$(cat server.pid)" 2>/dev/null || return 1
    sleep 0.2
  done
  return 1
}

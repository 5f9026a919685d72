# bench/gateway_connections_lib.sh: what bench/gateway_connections,
# bench/gateway_reconnect_storm and bench/audience_cost share, sourced from
# the top of the checkout: the work directory with the binaries built, the
# run as postgres, the private PostgreSQL, nodes (and the floor server)
# started on free ports, the load client's commands
# (bench/gateway_connections_client.c), and the CPU time of processes.
#
#   BOTHY_GATEWAY=PATH    measure that gateway binary instead of building
#                         src/gateway/bothy-gateway
# A bench with a load client of its own sets BENCH_CLIENT to its source file
# before bench_setup (it is built as $work/bin/client the same way).

# descriptors a node needs beside its clients: listening socket, pool and
# listener connections, the loop's pipes, stdio
RESERVE=64
# connections per source address: each has ~28,000 ephemeral ports toward
# the node's one port, and even small runs use more than one
PER_SOURCE=10000

# bench_setup SCRIPT ARGS...: the first run builds the node, the client and
# the floor server into a work directory and, as root, runs SCRIPT again
# there as postgres; every run ends with $work set.
bench_setup() {
    local script=$1
    shift
    if [ -z "${BOTHY_BENCH_WORK:-}" ]; then
        work=$(mktemp -d /tmp/bothy-bench-conns.XXXXXX)
        trap 'rm -rf "$work"' EXIT  # until bench_start takes it over
        mkdir "$work/bin"
        local gateway=${BOTHY_GATEWAY:-src/gateway/bothy-gateway}
        [ -n "${BOTHY_GATEWAY:-}" ] || make -s "$gateway"
        cp "$gateway" "$work/bin/bothy-gateway"
        # the client signs tokens with the gateway's own token and key store code
        cc -std=gnu11 -O2 -Wall -Wextra -Werror -Wmissing-prototypes -iquote src/common \
            -iquote src/gateway -iquote bench -o "$work/bin/client" \
            "${BENCH_CLIENT:-bench/gateway_connections_client.c}" \
            bench/wsclient.c src/gateway/keys/token.c src/gateway/keys/keystore.c \
            src/common/base64url.c src/common/intparse.c src/common/uuid.c -ljansson -lsodium
        cc -std=gnu11 -O2 -Wall -Wextra -Werror -iquote bench -o "$work/bin/floor" \
            bench/fanout_floor_server.c -lcrypto
        if [ "$(id -u)" -eq 0 ]; then
            cp -r test bench "$work"/; chown -R postgres "$work"
            exec runuser -u postgres -- env BOTHY_BENCH_WORK="$work" "$work/bench/$script" "$@"
        fi
        export BOTHY_BENCH_WORK=$work
    fi
    work=$BOTHY_BENCH_WORK
    pg=$work/pg
    pids=()
    client_pid=
    trap bench_cleanup EXIT
    # as many descriptors as this process may have: the nodes and the client inherit it
    hard=$(ulimit -Hn)
    [ "$hard" = unlimited ] && hard=1048576
    ulimit -n "$hard"
}

bench_cleanup() {
    set +e                      # every step runs, whatever is already gone
    [ -n "$client_pid" ] && kill "$client_pid" 2>/dev/null
    local i
    for ((i = ${#pids[@]} - 1; i >= 0; i--)); do stop_pid "${pids[i]}"; done
    test/lib/pg-temp stop "$pg" >/dev/null 2>&1
    rm -rf "$work"
}

# stop_pid PID: TERM, then KILL after 30 s
stop_pid() {
    kill -TERM "$1" 2>/dev/null || return 0
    for _ in $(seq 300); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$1" 2>/dev/null || true
    wait "$1" 2>/dev/null || true
}

# bench_database CONF_LINES: the private PostgreSQL with those lines, the
# environment to reach it, and the key store
bench_database() {
    printf "%s\n" "$1" > "$work/pg.conf"
    test/lib/pg-temp start "$pg" "$work/pg.conf"
    eval "$(test/lib/pg-temp env "$pg")"
    "$work/bin/bothy-gateway" keys rotate --keys "$work/keys" >/dev/null
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# start_listening NAME READY CMD...: `CMD... PORT` in the background (the
# last argument is its port), its stderr to $work/NAME.log, on a port the
# kernel just called free, until `READY PORT` succeeds (within 30 s); when
# it died and said "could not listen" (another process had the port first),
# again on another port, up to 5 times.  Sets started_pid and started_port.
start_listening() {
    local name=$1 ready=$2 port pid
    shift 2
    for _ in 1 2 3 4 5; do
        port=$(free_port)
        "$@" "$port" 2>>"$work/$name.log" &
        pid=$!
        for _ in $(seq 300); do
            if "$ready" "$port"; then
                pids+=("$pid"); started_pid=$pid; started_port=$port; return 0
            fi
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        kill -KILL "$pid" 2>/dev/null || true
        grep -q "could not listen" "$work/$name.log" || break
    done
    echo "$BENCH: $name did not start" >&2; cat "$work/$name.log" >&2
    exit 1
}

# launch_node ARGS... PORT: a node with the bench's database and keys
launch_node() {
    local port=${*: -1}
    exec "$work/bin/bothy-gateway" serve --listen "127.0.0.1:$port" \
        --database "host=$pg port=$PGPORT dbname=bothy_test user=postgres" --keys "$work/keys" \
        --db-timeout 60000 --identify-timeout 600000 --stop-timeout 30000 \
        --max-connections $((hard - RESERVE)) --log-level warn "${@:1:$#-1}"
}
node_ready() { curl -fs -o /dev/null "http://127.0.0.1:$1/readyz"; }
# the floor server answers no HTTP: ready once it accepts a TCP connection
floor_ready() { python3 -c "import socket, sys; socket.create_connection(('127.0.0.1', $1), 1)" 2>/dev/null; }
launch_floor() {
    exec "$work/bin/floor" --node "$(python3 -c 'import uuid; print(uuid.uuid4())')" \
        --commands "$work/floor.fifo" --port "$1"
}

# start_client COUNT: the load client (its stdout and stdin as a coprocess)
start_client() {
    coproc CLIENT { exec "$work/bin/client" --keys "$work/keys" --count "$1" \
        --sources $(($1 / PER_SOURCE + 2)) --inflight 200 2>>"$work/client.err"; }
    # shellcheck disable=SC2153 # CLIENT_PID is set by coproc
    client_pid=$CLIENT_PID
}

# ask COMMAND: the client's answer, its words in got (not in a subshell:
# the coprocess's descriptors are not there)
ask() {
    echo "$1" >&"${CLIENT[1]}"
    if ! read -r -t 900 -a got <&"${CLIENT[0]}"; then
        echo "$BENCH: the client stopped at: $1" >&2; cat "$work/client.err" >&2; exit 1
    fi
}

# word NAME: the number after NAME in the last answer
word() {
    local i
    for ((i = 0; i < ${#got[@]} - 1; i++)); do
        [ "${got[i]}" = "$1" ] && { echo "${got[i + 1]}"; return; }
    done
    echo "$BENCH: no $1 in: ${got[*]}" >&2; exit 1
}

# no_failures: the last answer counted none
no_failures() {
    if [ "$(word failed)" != 0 ]; then
        echo "$BENCH: $(word failed) connections failed: ${got[*]}" >&2; cat "$work/client.err" >&2; exit 1
    fi
}

# cpu_snap PID...: PID:NS for each of those processes still running, NS its
# nanoseconds on a CPU (every thread)
cpu_snap() {
    local p t sum ns
    for p in "$@"; do
        sum=0
        for t in /proc/"$p"/task/*/schedstat; do
            { read -r ns _ < "$t"; } 2>/dev/null || continue
            sum=$((sum + ns))
        done
        [ -d "/proc/$p" ] && printf '%s:%s ' "$p" "$sum"
    done
    echo
}

# cpu_ms BEFORE AFTER: milliseconds on a CPU between two cpu_snap, of the
# processes in both (one that ended or began between them is left out)
cpu_ms() {
    awk -v a="$1" -v b="$2" 'BEGIN {
        n = split(a, x, " "); for (i = 1; i <= n; i++) { split(x[i], f, ":"); t[f[1]] = f[2] }
        n = split(b, y, " "); for (i = 1; i <= n; i++) { split(y[i], f, ":"); if (f[1] in t) s += f[2] - t[f[1]] }
        printf "%.1f", s / 1e6 }'
}

# pg_pids: the postmaster of the bench's instance and its children
pg_pids() {
    local master
    master=$(head -1 "$pg/data/postmaster.pid")
    echo "$master" $(pgrep -P "$master")
}

now_s() { date +%s.%N; }

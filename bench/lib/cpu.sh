# bench/lib/cpu.sh — CPU accounting for benchmarks, sourced by them: the
# clock ticks (getconf CLK_TCK a second) that processes have used.

# User and system ticks the given processes have used.
cpu_ticks() {  # pid...
    for pid in "$@"; do cat "/proc/$pid/stat" 2>/dev/null || true; done |
        sed 's/^.*) //' | awk '{ ticks += $12 + $13 } END { print ticks + 0 }'
}

# Ticks a PostgreSQL cluster has used: the postmaster, its live children,
# and the children it has reaped (a backend that ended since counts there).
cluster_ticks() {  # postmaster pid
    local own children
    own=$(sed 's/^.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 + $14 + $15 }')
    children=$(cpu_ticks $(pgrep -P "$1"))
    echo $((own + children))
}

# Ticks the whole machine has been busy (all CPUs, everything but idle and iowait).
busy_ticks() {
    awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 }' /proc/stat
}

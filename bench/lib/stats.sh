# bench/lib/stats.sh — figures over rounds, sourced by benchmarks: each takes
# the rounds' values as one space-separated string.

# The median of the values.
median() { tr ' ' '\n' <<<"$1" | grep . | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
# The lowest and highest of the values, as "lo–hi".
spread() { tr ' ' '\n' <<<"$1" | grep . | sort -n | awk 'NR == 1 { lo = $1 } { hi = $1 } END { print lo "–" hi }'; }

# Shared by the benchmark scripts: source it.

best_of_3() { # command... -> seconds (best of three)
  local best=""
  for _ in 1 2 3; do
    local s e
    s=$(date +%s.%N); "$@" >/dev/null; e=$(date +%s.%N)
    best=$(awk -v a="$best" -v b="$(echo "$e - $s" | bc)" 'BEGIN { print (a == "" || b < a) ? b : a }')
  done
  echo "$best"
}

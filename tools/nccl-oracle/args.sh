# Sourced by compare.sh and compare_connect.sh: splits "[NAME=VALUE ...] [-- FILE...]" into ENVS
# (settings for both programs) and FILES (default: every *.xml under $WEFT_CORPUS_DIR/topologies,
# else ../shared/corpus beside the repository).
oracle_args() {
  ENVS=()
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do ENVS+=("$1"); shift; done
  [ "${1:-}" = "--" ] && shift
  if [ $# -gt 0 ]; then FILES=("$@"); else
    local corpus=${WEFT_CORPUS_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/../shared/corpus}
    mapfile -t FILES < <(find "$corpus/topologies" -name '*.xml' | sort)
  fi
}

# After a DIFF: the whole diff (weft's lines "<", NCCL's ">") in DIFF_FILE, and on stdout how many
# lines differ and the first of each side.
report_diff() {
  local weft=$1 nccl=$2 diffFile=$3
  diff "$weft" "$nccl" > "$diffFile"
  echo "    $(grep -c '^<' "$diffFile") weft lines / $(grep -c '^>' "$diffFile") oracle lines differ; first:"
  grep -m1 '^<' "$diffFile" | cut -c1-300 | sed 's/^</    weft:  /'
  grep -m1 '^>' "$diffFile" | cut -c1-300 | sed 's/^>/    nccl:  /'
}

# The result for one file, from both programs' exit codes and the two files to compare (the
# oracle's empty: nothing it printed to compare, counted as its failure): BOTHFAIL, ORACLEFAIL,
# WEFTFAIL, SAME or DIFF.
compare_result() {
  local orc=$1 wrc=$2 nccl=$3 weft=$4
  if [ "$orc" -ne 0 ] && [ "$wrc" -ne 0 ]; then echo BOTHFAIL
  elif [ "$orc" -ne 0 ]; then echo ORACLEFAIL
  elif [ "$wrc" -ne 0 ]; then echo WEFTFAIL
  elif [ ! -s "$nccl" ]; then echo ORACLEFAIL
  elif cmp -s "$nccl" "$weft"; then echo SAME
  else echo DIFF; fi
}

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

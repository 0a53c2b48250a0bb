// `weft perf`: where this process's rank, the number of ranks and the communicator's id come
// from: ranks it forks itself (--np), a launcher's environment (mpirun, srun, torchrun), or a
// single rank. Uses only libweft's C API.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.h"
#include "weft/weft.h"

namespace weft::tool::perf {

// A Status for a failed weft_* call: "<call> returned weftInvalidUsage (invalid usage): <weft_last_error()>".
Status weftError(std::string_view call, weft_result_t result);

struct Ranks {
  int rank = 0;
  int nranks = 1;
  weft_unique_id_t id{};
  std::string source;           // where rank and size came from ("--np", "OMPI_COMM_WORLD_RANK/SIZE", …)
  std::vector<pid_t> children;  // --np, rank 0: the processes of ranks 1 … np-1, in order
};

// Forks np - 1 processes before libweft is used (no thread exists yet), makes the id in this
// process (rank 0) and hands it to the others through pipes. A child whose parent dies is killed.
// Returns in every process, with its own rank.
Result<Ranks> forkLocalRanks(int np);

// Rank and size from OMPI_COMM_WORLD_RANK/SIZE, PMI_RANK/SIZE, SLURM_PROCID/NTASKS or RANK/WORLD_SIZE
// (the first pair set), else one rank. Several ranks need a rendezvous every process can compute:
// NCCL_COMM_ID, else MASTER_ADDR:MASTER_PORT (+1 under torchrun, whose agent holds MASTER_PORT),
// which it exports as NCCL_COMM_ID before weft_get_unique_id.
Result<Ranks> ranksFromEnvironment();

// "OMPI_COMM_WORLD_SIZE=4" when a launcher's variables say this process is one of several ranks.
std::optional<std::string> launcherJob();

// Waits for the children of forkLocalRanks. Returns false if any failed; names those killed by a
// signal on stderr (the others said why themselves). graceSeconds >= 0: kills those still running
// after that long (rank 0 failed and they may wait for it).
bool waitForChildren(const std::vector<pid_t>& children, double graceSeconds);

}  // namespace weft::tool::perf

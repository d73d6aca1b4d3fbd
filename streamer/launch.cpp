#include "streamer/launch.h"

#include <fmt/format.h>
#include <unistd.h>

#include <climits>
#include <string>
#include <vector>

namespace tilestream {

bool IsSpawnedTileRank() {
  MPI_Comm parent;
  MPI_Comm_get_parent(&parent);
  return parent != MPI_COMM_NULL;
}

Result<WallComm> JoinWall(int argc, char** argv, uint32_t tiles) {
  WallComm w;
  MPI_Comm parent;
  MPI_Comm_get_parent(&parent);
  if (parent != MPI_COMM_NULL) {
    MPI_Intercomm_merge(parent, 1, &w.comm);
    w.spawned = true;
    w.inter = parent;
  } else {
    int world = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &world);
    if (world == 1) {
      // Spawn the tile ranks running this same binary with the same flags.
      char self[PATH_MAX] = {};
      const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
      std::string exe = n > 0 ? std::string(self, static_cast<size_t>(n)) : std::string(argv[0]);
      std::vector<char*> args(argv + 1, argv + argc);
      args.push_back(nullptr);
      MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
      MPI_Comm inter;
      std::vector<int> errors(tiles, MPI_SUCCESS);
      const int rc = MPI_Comm_spawn(exe.c_str(), args.data(), static_cast<int>(tiles),
                                    MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter, errors.data());
      if (rc != MPI_SUCCESS) {
        return Status::Unsupported(fmt::format(
            "could not spawn {} tile ranks (MPI_Comm_spawn failed): run `mpirun -n 2 streamer "
            "...` (one rank streams every tile), `mpirun -n 1 --oversubscribe streamer ...`, or "
            "list {} slots in a hostfile",
            tiles, tiles + 1));
      }
      MPI_Intercomm_merge(inter, 0, &w.comm);
      w.spawned = true;
      w.inter = inter;
    } else {
      MPI_Comm_dup(MPI_COMM_WORLD, &w.comm);
    }
  }
  MPI_Comm_rank(w.comm, &w.rank);
  MPI_Comm_size(w.comm, &w.size);
  return w;
}

void LeaveWall(WallComm* w) {
  if (w->comm != MPI_COMM_NULL) MPI_Comm_free(&w->comm);
  if (w->inter != MPI_COMM_NULL) MPI_Comm_disconnect(&w->inter);
}

}  // namespace tilestream

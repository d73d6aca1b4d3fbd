// The tile store: a movie cut into one file per tile (docs/tile_store.md).
//
//   DIR/movie.toml       manifest: layout, tile size, fps, frames, stride,
//                        the file of each tile
//   tile_r0_c0.rgb ...   frames of one tile back to back, RGB24 rows with no
//                        padding, each frame padded to a 4096-byte stride so
//                        O_DIRECT reads land in aligned buffers with no copy
//
// Tile files may live in other directories (SSD mounts); the manifest then
// names them by absolute path. A store is valid only once movie.toml exists:
// the writer writes tile files under ".partial" names, renames them and
// writes the manifest last, and removes everything it wrote if it is aborted.
//
// TileStoreWriter and TileReader are movable, not copyable, and used by one
// thread at a time.
//
// The store in three rooms: movie_manifest.h (the manifest), tile_store_writer.h
// (writing a movie), tile_reader.h (reading a tile's frames).
#pragma once

#include "common/store/movie_manifest.h"
#include "common/store/tile_reader.h"
#include "common/store/tile_store_writer.h"

# Compiling in batches (a unity build of our own, scripts/batches.py;
# docs/decisions.md, "CI time"): the wings, the programs' libraries and the
# tests are compiled a few files at once, so the headers they share (gtest,
# the wings, CLI11, nlohmann) are parsed and compiled once a batch, not
# once a file. A batch includes its files by their path from it, so it
# reads the same in every clone and hits the compiler cache a developer's
# build filled; files that declare names the others use stay apart.
option(TILESTREAM_BATCHES "Compile the wings, the programs' libraries and the tests in batches (scripts/batches.py)" ON)
find_package(Python3 COMPONENTS Interpreter)

# Call once, after the targets have all their sources.
function(tilestream_in_batches)
  if(NOT TILESTREAM_BATCHES OR NOT Python3_Interpreter_FOUND)
    return()
  endif()
  set(groups "")
  set(in_tree_all "")
  foreach(target IN LISTS ARGN)
    if(NOT TARGET ${target})
      continue()
    endif()
    get_target_property(sources ${target} SOURCES)
    get_target_property(dir ${target} SOURCE_DIR)
    set(generated_${target} "")
    list(APPEND groups "${target}:")
    foreach(s IN LISTS sources)
      cmake_path(ABSOLUTE_PATH s BASE_DIRECTORY ${dir} NORMALIZE OUTPUT_VARIABLE a)
      cmake_path(IS_PREFIX CMAKE_BINARY_DIR ${a} generated)
      if(generated)
        list(APPEND generated_${target} ${a})
      else()
        list(APPEND groups ${a})
        list(APPEND in_tree_all ${a})
      endif()
    endforeach()
  endforeach()
  execute_process(
    COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/scripts/batches.py plan --top ${PROJECT_SOURCE_DIR}
            --out ${CMAKE_BINARY_DIR}/batches ${groups}
    OUTPUT_VARIABLE planned RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "scripts/batches.py could not plan the batches")
  endif()
  string(REPLACE "\n" ";" lines "${planned}")
  foreach(line IN LISTS lines)
    if(line MATCHES "^([^\t]+)\t(.*)$")
      set(target ${CMAKE_MATCH_1})
      string(REPLACE "," ";" compiled "${CMAKE_MATCH_2}")
      set_property(TARGET ${target} PROPERTY SOURCES ${compiled} ${generated_${target}})
    endif()
  endforeach()
  # A file's new name can part two files of a batch: plan again on an edit.
  set_property(DIRECTORY ${PROJECT_SOURCE_DIR} APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
               ${in_tree_all} ${PROJECT_SOURCE_DIR}/scripts/batches.py)
endfunction()

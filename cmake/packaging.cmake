# Installed programs and Debian packages (docs/operations.md, "Installing
# from packages"): `cmake --install build --prefix P`, and
# scripts/package.sh for tilestream-server and tilestream-display in
# build/packages/. Installed programs carry the project's prefix.
include(GNUInstallDirs)

# Installed renamed, so as a file rather than a target: what CMake does to
# an installed target is done here to the copy: the build's RUNPATH (Open
# MPI's library directory; its libraries are on the loader's path) taken
# out, and stripped when the install strips (cmake --install --strip, CPack).
function(tilestream_install_program target name component)
  install(PROGRAMS $<TARGET_FILE:${target}> DESTINATION ${CMAKE_INSTALL_BINDIR} RENAME ${name}
          COMPONENT ${component})
  set(installed "\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}/${name}")
  install(CODE "file(RPATH_REMOVE FILE \"${installed}\")
if(CMAKE_INSTALL_DO_STRIP)
  execute_process(COMMAND \"${CMAKE_STRIP}\" \"${installed}\")
endif()" COMPONENT ${component})
endfunction()

# The server: the streamer, the cutter, the control client, the launcher
# (scripts/streamer.sh: mpirun with the config's hostfile, Ctrl-C as
# SIGTERM) and its systemd unit; the example configs.
tilestream_install_program(streamer tilestream-streamer server)
tilestream_install_program(wallcut tilestream-wallcut server)
tilestream_install_program(wallctl tilestream-wallctl server)
install(PROGRAMS scripts/streamer.sh DESTINATION ${CMAKE_INSTALL_BINDIR} RENAME tilestream-launch
        COMPONENT server)
install(FILES configs/systemd/tilestream-streamer.service DESTINATION lib/systemd/system
        COMPONENT server)
install(FILES configs/wall.toml DESTINATION ${CMAKE_INSTALL_FULL_SYSCONFDIR}/tilestream COMPONENT server)
install(FILES configs/demo-5x3.toml configs/sara-5x3.toml configs/test-2x2.toml
              configs/hostfile.example configs/prometheus.yml configs/grafana-dashboard.json
        DESTINATION ${CMAKE_INSTALL_DOCDIR}-server/examples COMPONENT server)
# A display node: the receiver, the joystick client, the receiver's unit.
tilestream_install_program(receiver tilestream-receiver display)
tilestream_install_program(joystick tilestream-joystick display)
install(FILES configs/systemd/tilestream-receiver@.service DESTINATION lib/systemd/system
        COMPONENT display)
install(FILES configs/test-2x2.toml DESTINATION ${CMAKE_INSTALL_DOCDIR}-display/examples
        COMPONENT display)

# Debian wants a copyright file and a compressed changelog in each
# package's documentation.
set(changelog_gz ${CMAKE_BINARY_DIR}/changelog.gz)
execute_process(COMMAND gzip -9nc ${PROJECT_SOURCE_DIR}/cmake/debian/changelog
                OUTPUT_FILE ${changelog_gz})
foreach(component server display)
  install(FILES cmake/debian/copyright ${changelog_gz}
          DESTINATION ${CMAKE_INSTALL_DOCDIR}-${component} COMPONENT ${component})
endforeach()

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME tilestream)
set(CPACK_PACKAGE_VENDOR "tilestream")
set(CPACK_PACKAGE_CONTACT "tilestream maintainers <tilestream@example.org>")
set(CPACK_PACKAGE_HOMEPAGE_URL "https://tilestream.example.org/")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_OUTPUT_FILE_PREFIX ${CMAKE_BINARY_DIR}/packages)
set(CPACK_STRIP_FILES ON)  # tilestream_install_program strips its copies then
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL server display)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION video)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# Each program's shared libraries, from the binaries (dpkg-shlibdeps), so
# that `apt-get install ./tilestream-*.deb` pulls them on a fresh machine.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_SERVER_PACKAGE_NAME tilestream-server)
set(CPACK_DEBIAN_SERVER_PACKAGE_DEPENDS "openmpi-bin")
set(CPACK_DEBIAN_SERVER_PACKAGE_CONTROL_EXTRA ${PROJECT_SOURCE_DIR}/cmake/debian/server/conffiles)
set(CPACK_COMPONENT_SERVER_DESCRIPTION "parallel UDP streaming server for tiled display walls
One MPI job streams uncompressed movies as paced RTP (RFC 4175) over
several NICs, a rank per tile: the streamer, the movie cutter, the
control client, the launcher and its systemd unit.")
set(CPACK_DEBIAN_DISPLAY_PACKAGE_NAME tilestream-display)
set(CPACK_COMPONENT_DISPLAY_DESCRIPTION "display node daemon of a tilestream wall
Receives a wall's tile streams, repairs lost packets and shows every
tile the same frame at the same moment (SDL2 and OpenGL): the
receiver, its systemd unit and the joystick client.")
include(CPack)

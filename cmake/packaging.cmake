# Installed programs and Debian packages (docs/operations.md, "Installing
# from packages"): `cmake --install build --prefix P`, and
# scripts/package.sh for tilestream-server and tilestream-display in
# build/packages/. Installed programs carry the project's prefix.
include(GNUInstallDirs)

function(tilestream_install_program target name component)
  install(PROGRAMS $<TARGET_FILE:${target}> DESTINATION ${CMAKE_INSTALL_BINDIR} RENAME ${name}
          COMPONENT ${component})
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

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME tilestream)
set(CPACK_PACKAGE_VENDOR "tilestream")
set(CPACK_PACKAGE_CONTACT "tilestream maintainers <tilestream@localhost>")
set(CPACK_PACKAGE_HOMEPAGE_URL "https://localhost/tilestream")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_OUTPUT_FILE_PREFIX ${CMAKE_BINARY_DIR}/packages)
set(CPACK_STRIP_FILES ON)
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
set(CPACK_COMPONENT_SERVER_DESCRIPTION
    "parallel UDP streaming server for tiled display walls\n"
    "One MPI job streams uncompressed movies as paced RTP (RFC 4175) over\n"
    "several NICs, a rank per tile: the streamer, the movie cutter, the\n"
    "control client, the launcher and its systemd unit.")
set(CPACK_DEBIAN_DISPLAY_PACKAGE_NAME tilestream-display)
set(CPACK_COMPONENT_DISPLAY_DESCRIPTION
    "display node daemon of a tilestream wall\n"
    "Receives a wall's tile streams, repairs lost packets and shows every\n"
    "tile the same frame at the same moment (SDL2 and OpenGL): the\n"
    "receiver, its systemd unit and the joystick client.")
include(CPack)

# `cmake --install` (GNUInstallDirs layout) and `cpack -G DEB`. With the default prefix /usr/local,
# or -DCMAKE_INSTALL_PREFIX=/usr as the .deb uses:
#   bin/                                     trainyard-daemon, trainyard-agent, trainyard
#   share/doc/trainyard/examples/            daemon.json, agent.json, agent-node.env, demo-training.json
#   share/trainyard/dashboard/               the dashboard's built files, web/dist (TRAINYARD_INSTALL_DASHBOARDDIR)
#   share/trainyard/{grafana,prometheus}/    deploy/grafana and deploy/prometheus
#   lib/systemd/system/                      trainyard-daemon.service, trainyard-agent@.service
#   lib/sysusers.d/trainyard.conf            the daemon's system account
# Configuration is the operator's: /etc/trainyard/ is not written; the units read
# /etc/trainyard/daemon.json and agent.json, made from the examples.
include(GNUInstallDirs)

set(TRAINYARD_INSTALL_DASHBOARDDIR ${CMAKE_INSTALL_DATADIR}/trainyard/dashboard
    CACHE STRING "Where the dashboard's static files go, relative to the prefix")
# The daemon serves them from there, relative to the prefix its binary is installed in (so the .deb's
# /usr and a /usr/local install both work), unless told otherwise (--dashboard-dir).
target_compile_definitions(trainyard_daemon_main PRIVATE TRAINYARD_DASHBOARD_RELDIR="${TRAINYARD_INSTALL_DASHBOARDDIR}")
set(TRAINYARD_INSTALL_SYSTEMDDIR lib/systemd/system CACHE STRING "Where systemd units go, relative to the prefix")

install(TARGETS trainyard-daemon trainyard-agent trainyard RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES deploy/examples/daemon.json deploy/examples/agent.json deploy/examples/agent-node.env
              deploy/examples/demo-training.json
        DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples)
# web/dist exists once deploy/build.sh built the dashboard (npm run build).
install(DIRECTORY web/dist/ DESTINATION ${TRAINYARD_INSTALL_DASHBOARDDIR} OPTIONAL)
install(FILES README.md docs/ARCHITECTURE.md docs/DESIGN.md docs/STYLE.md docs/STATUS.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
# Beside them, so their links to decisions/NNN-*.md resolve in the installed copy too.
install(DIRECTORY docs/decisions DESTINATION ${CMAKE_INSTALL_DOCDIR} FILES_MATCHING PATTERN "*.md")
install(FILES deploy/systemd/trainyard-daemon.service deploy/systemd/trainyard-agent@.service
        DESTINATION ${TRAINYARD_INSTALL_SYSTEMDDIR})
install(FILES deploy/systemd/trainyard.sysusers.conf DESTINATION lib/sysusers.d RENAME trainyard.conf)
# The jobs' `trainyard` module, importable on the host too (the agent also writes it for every job).
install(DIRECTORY python/trainyard DESTINATION lib/python3/dist-packages FILES_MATCHING PATTERN "*.py")
foreach(folder grafana prometheus)
  install(DIRECTORY deploy/${folder}/ DESTINATION ${CMAKE_INSTALL_DATADIR}/trainyard/${folder})
endforeach()

set(CPACK_PACKAGE_NAME trainyard)
set(CPACK_PACKAGE_VENDOR "Trainyard")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Cluster job orchestrator for training jobs: daemon, node agent and CLI")
set(CPACK_PACKAGE_CONTACT "Trainyard maintainers <trainyard@localhost>")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
# Library dependencies (spdlog, SQLite, OpenSSL ...) from the binaries, by dpkg-shlibdeps.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${PROJECT_SOURCE_DIR}/deploy/debian/postinst)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
include(CPack)

# The Debian package (deploy/package.sh): install rules for every file the package holds, the
# man pages generated from the program's own --help (help2man), the bash completion generated
# from its command line, and CPack's DEB generator, which packages the build tree as it is (no
# second compile). Included by the top-level CMakeLists.txt after the layers.
include(GNUInstallDirs)

# Relative destinations land under the package's /usr (CPACK_PACKAGING_INSTALL_PREFIX); /etc and
# the systemd unit directory are absolute, as Debian has them.
set(PGWAITPROF_SHARE_DIR share/pgwaitprof)
install(TARGETS pgwaitprof RUNTIME DESTINATION bin)
install(FILES ${CMAKE_SOURCE_DIR}/config/pgwaitprof.example.yaml DESTINATION /etc/pgwaitprof
  RENAME pgwaitprof.yaml)
install(FILES ${CMAKE_SOURCE_DIR}/config/pgwaitprof.example.yaml
  ${CMAKE_SOURCE_DIR}/config/matrix.example.yaml DESTINATION ${PGWAITPROF_SHARE_DIR}/examples)
install(FILES ${CMAKE_SOURCE_DIR}/deploy/systemd/pgwaitprof.service DESTINATION /lib/systemd/system)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/config/plans/ DESTINATION ${PGWAITPROF_SHARE_DIR}/plans
  FILES_MATCHING PATTERN "*.yaml")
# The workloads are compiled into the binary; the scripts are here to read and to copy.
install(DIRECTORY ${CMAKE_SOURCE_DIR}/loadgen/workloads/ DESTINATION ${PGWAITPROF_SHARE_DIR}/workloads)
install(FILES ${CMAKE_SOURCE_DIR}/deploy/grafana/pgwaitprof.json
  ${CMAKE_SOURCE_DIR}/deploy/grafana/pgwaitprof-history.json DESTINATION ${PGWAITPROF_SHARE_DIR}/grafana)
install(FILES ${CMAKE_SOURCE_DIR}/deploy/prometheus/rules.yml
  ${CMAKE_SOURCE_DIR}/deploy/prometheus/prometheus.yml DESTINATION ${PGWAITPROF_SHARE_DIR}/prometheus)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/deploy/prometheus/remote-write/
  DESTINATION ${PGWAITPROF_SHARE_DIR}/prometheus/remote-write)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/docs/schema/ DESTINATION ${PGWAITPROF_SHARE_DIR}/schema
  FILES_MATCHING PATTERN "*.schema.json")
install(FILES ${CMAKE_SOURCE_DIR}/deploy/debian/copyright DESTINATION share/doc/pgwaitprof)

# Debian's changelog, compressed reproducibly (no name, no time stamp in the gzip header).
set(PGWAITPROF_CHANGELOG ${CMAKE_BINARY_DIR}/package/changelog.gz)
add_custom_command(OUTPUT ${PGWAITPROF_CHANGELOG}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/package
  COMMAND gzip -9nc ${CMAKE_SOURCE_DIR}/deploy/debian/changelog > ${PGWAITPROF_CHANGELOG}
  DEPENDS ${CMAKE_SOURCE_DIR}/deploy/debian/changelog VERBATIM)
add_custom_target(pgwaitprof_changelog ALL DEPENDS ${PGWAITPROF_CHANGELOG})
install(FILES ${PGWAITPROF_CHANGELOG} DESTINATION share/doc/pgwaitprof)

# Man pages from the program's own help, so they cannot drift from it: pgwaitprof(1) and one
# per subcommand (pgwaitprof-run(1), ...), help2man reading `pgwaitprof SUBCOMMAND --help`.
find_program(HELP2MAN_PROGRAM help2man)
set(PGWAITPROF_MAN_SUBCOMMANDS daemon run record report matrix compare runs trend results explain)
if(HELP2MAN_PROGRAM)
  set(man_dir ${CMAKE_BINARY_DIR}/package/man)
  set(man_pages)
  set(see_also "[SEE ALSO]\n")
  foreach(subcommand ${PGWAITPROF_MAN_SUBCOMMANDS})
    string(APPEND see_also ".BR pgwaitprof-${subcommand} (1)\n")
  endforeach()
  file(WRITE ${man_dir}/see-also.h2m "${see_also}")
  foreach(page pgwaitprof ${PGWAITPROF_MAN_SUBCOMMANDS})
    if(page STREQUAL "pgwaitprof")
      set(page_name pgwaitprof)
      set(help2man_arguments "--name=wait-event sampling profiler for PostgreSQL benchmarks"
        --include=${man_dir}/see-also.h2m $<TARGET_FILE:pgwaitprof>)
    else()
      # help2man names a page after the program it runs: a wrapper per subcommand.
      set(page_name pgwaitprof-${page})
      file(GENERATE OUTPUT ${man_dir}/${page_name}
        CONTENT "#!/bin/sh\nexec \"$<TARGET_FILE:pgwaitprof>\" ${page} \"$@\"\n"
        FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE
          WORLD_READ WORLD_EXECUTE)
      set(help2man_arguments "--name=the ${page} subcommand of pgwaitprof"
        --version-string=${PROJECT_VERSION} ${man_dir}/${page_name})
    endif()
    set(output ${man_dir}/${page_name}.1)
    add_custom_command(OUTPUT ${output}.gz
      COMMAND ${HELP2MAN_PROGRAM} --no-info --no-discard-stderr --output=${output}
        ${help2man_arguments}
      COMMAND gzip -9nf ${output}
      DEPENDS pgwaitprof VERBATIM)
    list(APPEND man_pages ${output}.gz)
  endforeach()
  add_custom_target(pgwaitprof_man ALL DEPENDS ${man_pages})
  install(FILES ${man_pages} DESTINATION share/man/man1)
else()
  message(STATUS "help2man not found: no man pages (Debian package help2man)")
endif()

# The bash completion, from the command line that parses the words it completes.
set(PGWAITPROF_COMPLETION ${CMAKE_BINARY_DIR}/package/pgwaitprof.bash-completion)
add_custom_command(OUTPUT ${PGWAITPROF_COMPLETION}
  COMMAND pgwaitprof_completion > ${PGWAITPROF_COMPLETION}
  DEPENDS pgwaitprof_completion VERBATIM)
add_custom_target(pgwaitprof_bash_completion ALL DEPENDS ${PGWAITPROF_COMPLETION})
install(FILES ${PGWAITPROF_COMPLETION} DESTINATION share/bash-completion/completions
  RENAME pgwaitprof)

# Everything the package installs that is built, as one target: packaging (deploy/package.sh)
# and deploy/install.sh --no-package build it, not every test program of `all` first.
add_custom_target(pgwaitprof_package_files)
add_dependencies(pgwaitprof_package_files pgwaitprof pgwaitprof_changelog pgwaitprof_bash_completion)
if(TARGET pgwaitprof_man)
  add_dependencies(pgwaitprof_package_files pgwaitprof_man)
endif()
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME pgwaitprof)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_PACKAGE_CONTACT "pgwaitprof maintainers <maintainers@users.noreply.a-seed-c1ffd15c.example>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "wait-event sampling profiler for PostgreSQL benchmarks")
set(CPACK_PACKAGE_DESCRIPTION "pgwaitprof samples the wait events of a PostgreSQL server at up to 10 kHz
while pgbench (or another load generator) runs, and writes a report per run:
the wait events with their errors, a timeline with stalls and their causes,
and the environment. It sweeps client counts and variants, compares runs,
and exports continuous profiles to Prometheus as a daemon.")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION database)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# Depends: the shared libraries the binary links (dpkg-shlibdeps), pgbench, and what the
# maintainer scripts run.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "postgresql-client, adduser")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "bash-completion")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${CMAKE_SOURCE_DIR}/deploy/debian/conffiles
  ${CMAKE_SOURCE_DIR}/deploy/debian/postinst ${CMAKE_SOURCE_DIR}/deploy/debian/prerm
  ${CMAKE_SOURCE_DIR}/deploy/debian/postrm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_STRIP_FILES ON)
set(CPACK_OUTPUT_FILE_PREFIX ${CMAKE_BINARY_DIR}/package)
include(CPack)

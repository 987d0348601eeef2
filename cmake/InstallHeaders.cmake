# Installs the public headers (run by `cmake --install`; AmpcInstall.cmake
# sets AMPC_SOURCE_DIR, AMPC_BINARY_DIR and AMPC_PUBLIC_HEADERS).
#
# Inside the repository, headers include each other from the repository's
# root ("compiler/GraphBuilder.h"). Installed, they live under include/ampc/
# and include each other as "ampc/compiler/GraphBuilder.h", so that a user's
# project adds one folder to its include path and none of our folder names
# (compiler/, runtime/, models/) can clash with its own. The walk starts
# from the public headers and follows every include of ours, generated
# headers (the dialect's .inc files, Version.h) included. The umbrella
# headers compiler/Builder.h and runtime/Runtime.h install as ampc/Builder.h
# and ampc/Runtime.h (no header of ours includes them).
cmake_policy(VERSION 3.20)
set(ours "^(compiler|models|ops|passes|runtime)/")
set(prefix "$ENV{DESTDIR}${CMAKE_INSTALL_PREFIX}/include/ampc")
set(queue ${AMPC_PUBLIC_HEADERS})
set(done)
while(queue)
  list(POP_FRONT queue header)
  if(header IN_LIST done)
    continue()
  endif()
  list(APPEND done ${header})
  if(EXISTS "${AMPC_SOURCE_DIR}/${header}")
    file(READ "${AMPC_SOURCE_DIR}/${header}" text)
  elseif(EXISTS "${AMPC_BINARY_DIR}/${header}")
    file(READ "${AMPC_BINARY_DIR}/${header}" text)
  else()
    message(FATAL_ERROR "ampc: error: ${header}: a public header includes it, and it is "
                        "neither in the sources nor generated in the build")
  endif()
  string(REGEX MATCHALL "#include \"[^\"]+\"" includes "${text}")
  foreach(line IN LISTS includes)
    string(REGEX REPLACE "#include \"([^\"]+)\"" "\\1" included "${line}")
    if(included MATCHES "${ours}")
      list(APPEND queue ${included})
    endif()
  endforeach()
  string(REGEX REPLACE "#include \"((compiler|models|ops|passes|runtime)/)" "#include \"ampc/\\1"
         text "${text}")
  set(destination "${prefix}/${header}")
  if(header STREQUAL "compiler/Builder.h")
    set(destination "${prefix}/Builder.h")
  elseif(header STREQUAL "runtime/Runtime.h")
    set(destination "${prefix}/Runtime.h")
  endif()
  # Unchanged headers keep their time, so users' builds do not redo work.
  file(WRITE "${destination}.new" "${text}")
  file(COPY_FILE "${destination}.new" "${destination}" ONLY_IF_DIFFERENT)
  file(REMOVE "${destination}.new")
  message(STATUS "Installing: ${destination}")
  list(APPEND CMAKE_INSTALL_MANIFEST_FILES "${destination}")
endwhile()

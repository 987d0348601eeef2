// Shared helpers of the unit tests.
#ifndef AMPC_TESTS_UNIT_TESTUTIL_H
#define AMPC_TESTS_UNIT_TESTUTIL_H

#include <string>

#include <gtest/gtest.h>

#include "compiler/Diagnostics.h"

/// Runs `stmt`, expecting a GraphError whose message contains `needle`.
#define EXPECT_GRAPH_ERROR(stmt, needle)                                       \
  do {                                                                         \
    try {                                                                      \
      stmt;                                                                    \
      ADD_FAILURE() << "expected GraphError containing: " << (needle);        \
    } catch (const ampc::GraphError &e) {                                      \
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos)        \
          << "message: " << e.what();                                          \
    }                                                                          \
  } while (0)

#endif

// Compiles the tests' precompiled header (tests/CMakeLists.txt: flowrag_test_pch).

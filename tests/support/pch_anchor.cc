// The target that builds the test binaries' shared precompiled header (tests/CMakeLists.txt,
// cmake/pch.cmake); it compiles nothing of its own.

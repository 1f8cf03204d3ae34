// The lmoracle program's main, callable: tools/lmoracle.cc's main() and the Python module's
// `python -m lmoracle` (python/src/module.cc) run the very same command line.
#pragma once

// argv[0] is the program's name; returns the exit code (0 success, 1 a verdict failed, 2 bad
// usage or input). Writes to std::cout and std::cerr.
int lmoracle_main(int argc, char** argv);

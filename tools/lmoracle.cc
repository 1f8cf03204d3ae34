// lmoracle: the command-line program (tools/cli_main.cc).
#include "cli_main.h"

int main(int argc, char** argv) { return lmoracle_main(argc, argv); }

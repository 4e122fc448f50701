// goodputctl: the goodput command-line tool. See cli/goodputctl.h.
#include <iostream>

#include "cli/goodputctl.h"

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  return goodput::cli::RunGoodputctl(argc, argv, std::cin, std::cout,
                                     std::cerr);
}

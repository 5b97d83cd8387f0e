/* main.c: the gk-replay binary (see gk_replay_cli.h). */
#include "gk_replay_cli.h"

int main(int argc, char **argv) {
  return gk_replay_cli(argc, argv, stdout, stderr);
}

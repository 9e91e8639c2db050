// Hostile input (issue 11): crafted messages an outside sender or a local user could send.
// Each case checks the promised result: structure unchanged, parts intact, limits held.
#include "helpers.hh"

#include <doctest/doctest.h>

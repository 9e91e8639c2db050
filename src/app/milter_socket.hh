// The service's listening socket, as libmilter opened it.
//   unix_path()       the file of a unix socket spec, for its owner and mode
//   find_listeners()  the listening sockets libmilter opened (no worker keeps them), with
//                     TCP_NODELAY set on a TCP one (its connections inherit it) and
//                     TCP_QUICKACK after each read on its connections (milter_quickack.c)
#pragma once

#include <string>
#include <vector>

namespace mimeuri::milter {

// The path of a unix socket spec ("unix:/p", "local:/p", "/p"), or "" for an inet one.
std::string unix_path(const std::string &spec);

// The listening sockets among this process's descriptors.
std::vector<int> find_listeners();

} // namespace mimeuri::milter

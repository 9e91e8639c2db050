/* Quick ACKs on the MTA's TCP connections to the service (milter_quickack.c). */
#pragma once

#ifdef __cplusplus
extern "C" {
#endif

/* Connections accepted on listening socket fd get TCP_QUICKACK after each read. */
void milter_quickack_listen(int fd);
/* Whether fd is such a connection (for the tests). */
int milter_quickack_marked(int fd);

#ifdef __cplusplus
}
#endif

/* Quick ACKs on the MTA's TCP connections to the service (milter_quickack.c). */
#pragma once

#ifdef __cplusplus
extern "C" {
#endif

/* Connections accepted on listening socket fd get TCP_QUICKACK after each read. */
void milter_quickack_listen(int fd);
/* Connections accepted on listening socket fd (a unix one) are watched for silence too. */
void milter_watch_listen(int fd);
/* Shuts down, from a thread of its own (in the process that accepts), every watched
 * connection that neither read nor wrote for `seconds` (0: none). */
void milter_idle_timeout(int seconds);
/* Connections shut down for their silence so far. */
unsigned long milter_timed_out(void);
/* Whether fd is such a connection (for the tests). */
int milter_quickack_marked(int fd);
/* At most `bound` connections at once per client address on those listening sockets (0:
 * none): at the bound the client's oldest connection that has sent nothing yet is shut
 * down to make room, or, when all of them are in use, the new one is closed at once. */
void milter_bound_clients(int bound);
/* Connections shut down, and refused, at the bound so far (in this process). */
unsigned long milter_bound_evicted(void);
unsigned long milter_bound_refused(void);

#ifdef __cplusplus
}
#endif

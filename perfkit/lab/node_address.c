/* Loaded with LD_PRELOAD into the cluster shape's node daemons (DataNodes, NodeManagers) and their containers: it
 * puts a process on its node's loopback address, PERFKIT_BIND_HOST (127.0.0.2, 127.0.0.3, ...), as a cluster node's
 * process sits on its node's address.
 *
 * - A bind to the wildcard address (0.0.0.0 or ::) becomes a bind to the node's address. MapReduce's ShuffleHandler
 *   and the MapReduce ApplicationMaster's servers bind to the wildcard with no setting to change it, and every lab
 *   daemon must listen on loopback only. An explicit address (every port the lab configures) passes untouched.
 * - A TCP connection to a loopback address leaves from the node's address (the kernel would pick 127.0.0.1). The
 *   NameNode registers a DataNode by the address its connection came from, and a DataNode counts a read as local
 *   when the reader's address is its own: without this every node would look like 127.0.0.1.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dlfcn.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

typedef int (*bind_fn)(int, const struct sockaddr *, socklen_t);
typedef int (*connect_fn)(int, const struct sockaddr *, socklen_t);

static int node_address(struct in_addr *node) {
    const char *host = getenv("PERFKIT_BIND_HOST");
    return host != NULL && inet_pton(AF_INET, host, node) == 1;
}

static void as_mapped(struct in6_addr *out, struct in_addr ip) {  /* ::ffff:a.b.c.d, Java's dual-stack form */
    memset(out, 0, 10);
    memset((char *)out + 10, 0xff, 2);
    memcpy((char *)out + 12, &ip, 4);
}

static int real_bind(int fd, const struct sockaddr *addr, socklen_t len) {
    static bind_fn next;
    if (!next) next = (bind_fn)dlsym(RTLD_NEXT, "bind");
    return next(fd, addr, len);
}

int bind(int fd, const struct sockaddr *addr, socklen_t len) {
    struct in_addr node;
    if (addr == NULL || !node_address(&node)) return real_bind(fd, addr, len);
    if (addr->sa_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
        struct sockaddr_in a;
        memcpy(&a, addr, sizeof a);
        if (a.sin_addr.s_addr == htonl(INADDR_ANY)) {
            a.sin_addr = node;
            return real_bind(fd, (const struct sockaddr *)&a, sizeof a);
        }
    } else if (addr->sa_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
        struct sockaddr_in6 a;
        memcpy(&a, addr, sizeof a);
        if (IN6_IS_ADDR_UNSPECIFIED(&a.sin6_addr)) {
            as_mapped(&a.sin6_addr, node);
            return real_bind(fd, (const struct sockaddr *)&a, sizeof a);
        }
    }
    return real_bind(fd, addr, len);
}

/* Whether `addr` is a loopback IPv4 address (plain, or IPv4-mapped on an IPv6 socket). */
static int to_loopback(const struct sockaddr *addr, socklen_t len) {
    if (addr->sa_family == AF_INET && len >= sizeof(struct sockaddr_in))
        return (ntohl(((const struct sockaddr_in *)addr)->sin_addr.s_addr) >> 24) == 127;
    if (addr->sa_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
        const struct in6_addr *a = &((const struct sockaddr_in6 *)addr)->sin6_addr;
        return IN6_IS_ADDR_V4MAPPED(a) && ((const unsigned char *)a)[12] == 127;
    }
    return 0;
}

int connect(int fd, const struct sockaddr *addr, socklen_t len) {
    static connect_fn next;
    if (!next) next = (connect_fn)dlsym(RTLD_NEXT, "connect");
    struct in_addr node;
    int type = 0;
    socklen_t type_len = sizeof type;
    struct sockaddr_storage mine;
    socklen_t mine_len = sizeof mine;
    if (addr != NULL && node_address(&node) && to_loopback(addr, len)
        && getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &type_len) == 0 && type == SOCK_STREAM
        && getsockname(fd, (struct sockaddr *)&mine, &mine_len) == 0) {
        /* only a socket not bound yet: an explicit bind of the program's own wins */
        if (mine.ss_family == AF_INET && ((struct sockaddr_in *)&mine)->sin_port == 0) {
            struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = 0, .sin_addr = node};
            real_bind(fd, (const struct sockaddr *)&a, sizeof a);
        } else if (mine.ss_family == AF_INET6 && ((struct sockaddr_in6 *)&mine)->sin6_port == 0) {
            struct sockaddr_in6 a = {.sin6_family = AF_INET6, .sin6_port = 0};
            as_mapped(&a.sin6_addr, node);
            real_bind(fd, (const struct sockaddr *)&a, sizeof a);
        }
    }
    return next(fd, addr, len);
}

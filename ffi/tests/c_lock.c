/* A C program that locks through zoolock's C ABI, for tests/c_abi.rs: built
 * natively against the .so and, with mingw-w64, against the Windows DLL to
 * run under Wine. Standard C plus one thread, so it builds on both.
 *   c_lock CONNECT single PATH     one process, two holders: timeout, cancel, hand-over
 *   c_lock CONNECT hold PATH       holds, prints its token and session, then every
 *                                  state change; stdin "release" releases, EOF ends
 *   c_lock CONNECT wait PATH MS    waits at most MS: "held TOKEN" or "timeout"
 * Every line it prints is flushed at once: the test reads them as events. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _WIN32
#include <windows.h>
#else
#include <pthread.h>
#include <time.h>
#endif

#include "zoolock.h"

#define SESSION_TIMEOUT_MS 6000

static void say(const char *format, long long value) {
    printf(format, value);
    printf("\n");
    fflush(stdout);
}

static void fail(const char *what, int32_t status) {
    const uint8_t *text = NULL;
    uint32_t len = 0;
    zl_last_error(&text, &len);
    printf("failed %s: status %d: %.*s\n", what, (int)status, (int)len, (const char *)text);
    fflush(stdout);
    exit(1);
}

static void check(int32_t status, const char *what) {
    if (status != ZL_OK) fail(what, status);
}

static struct ZlSession *connect_to(const char *connect) {
    struct ZlSession *session = NULL;
    check(zl_session_connect((const uint8_t *)connect, (uint32_t)strlen(connect), SESSION_TIMEOUT_MS, 0, &session),
          "zl_session_connect");
    return session;
}

static struct ZlHolder *lock_on(struct ZlSession *session, const char *path, const char *identifier) {
    struct ZlHolder *holder = NULL;
    check(zl_lock_new(session, (const uint8_t *)path, (uint32_t)strlen(path), ZL_KIND_MUTEX, ZL_SCHEME_KAZOO,
                      (const uint8_t *)identifier, (uint32_t)strlen(identifier), 0, &holder),
          "zl_lock_new");
    return holder;
}

static int acquire(struct ZlHolder *holder, int64_t timeout_ms, const struct ZlCancel *cancel, int32_t *status) {
    uint8_t acquired = 0;
    *status = zl_holder_acquire(holder, timeout_ms, -1, 0, cancel, &acquired);
    return acquired;
}

static long long token_of(struct ZlHolder *holder) {
    int64_t token = 0;
    uint8_t held = 0;
    check(zl_lock_fencing_token(holder, &token, &held), "zl_lock_fencing_token");
    return held ? (long long)token : -1;
}

/* How many contenders the path's queue shows (a list of u32-length items). */
static int queued(struct ZlHolder *holder) {
    uint8_t *list = NULL;
    uint32_t len = 0, at = 0;
    int count = 0;
    check(zl_holder_queue(holder, &list, &len), "zl_holder_queue");
    while (at + 4 <= len) {
        uint32_t item = (uint32_t)list[at] | (uint32_t)list[at + 1] << 8 | (uint32_t)list[at + 2] << 16 |
                        (uint32_t)list[at + 3] << 24;
        at += 4 + item;
        count++;
    }
    zl_bytes_free(list, len);
    return count;
}

static void pause_ms(unsigned ms) {
#ifdef _WIN32
    Sleep(ms);
#else
    struct timespec pause = {0, (long)ms * 1000000L};
    nanosleep(&pause, NULL);
#endif
}

struct canceller {
    struct ZlHolder *waiter;
    struct ZlCancel *cancel;
};

/* Fires the token once the waiter's node is queued behind the holder's. */
static void fire_when_queued(struct canceller *c) {
    while (queued(c->waiter) < 2) pause_ms(10);
    check(zl_cancel_fire(c->cancel), "zl_cancel_fire");
}

#ifdef _WIN32
static DWORD WINAPI canceller_main(LPVOID arg) {
    fire_when_queued((struct canceller *)arg);
    return 0;
}
#else
static void *canceller_main(void *arg) {
    fire_when_queued((struct canceller *)arg);
    return NULL;
}
#endif

static int single(const char *connect, const char *path) {
    struct ZlSession *session = connect_to(connect);
    struct ZlHolder *first = lock_on(session, path, "first");
    struct ZlHolder *second = lock_on(session, path, "second");
    int32_t status;
    if (!acquire(first, -1, NULL, &status)) fail("first acquire", status);
    long long first_token = token_of(first);
    say("first held %lld", first_token);

    if (acquire(second, 0, NULL, &status) || status != ZL_OK) fail("a try while held", status);
    if (acquire(second, 300, NULL, &status) || status != ZL_OK) fail("a wait of 300 ms while held", status);
    say("timeout, queue %lld", (long long)queued(first));

    struct canceller c = {second, NULL};
    check(zl_cancel_new(&c.cancel), "zl_cancel_new");
#ifdef _WIN32
    HANDLE thread = CreateThread(NULL, 0, canceller_main, &c, 0, NULL);
    if (thread == NULL) fail("CreateThread", -1);
#else
    pthread_t thread;
    if (pthread_create(&thread, NULL, canceller_main, &c) != 0) fail("pthread_create", -1);
#endif
    if (acquire(second, -1, c.cancel, &status) || status != ZL_CANCELLED) fail("a cancelled wait", status);
#ifdef _WIN32
    WaitForSingleObject(thread, INFINITE);
    CloseHandle(thread);
#else
    pthread_join(thread, NULL);
#endif
    zl_cancel_free(c.cancel);
    say("cancelled, queue %lld", (long long)queued(first));

    uint8_t released = 0;
    check(zl_holder_release(first, 0, &released), "release");
    if (!acquire(second, 10000, NULL, &status)) fail("the acquire after a release", status);
    long long second_token = token_of(second);
    if (second_token <= first_token) fail("the next token is not larger", -1);
    say("second held %lld", second_token);
    check(zl_holder_release(second, 0, &released), "release");
    zl_holder_free(first);
    zl_holder_free(second);
    zl_session_free(session);
    say("shutdown %lld", (long long)zl_shutdown());
    return 0;
}

static void on_state(void *user_data, int32_t state) {
    (void)user_data;
    say("state %lld", (long long)state);
}

static int hold(const char *connect, const char *path) {
    struct ZlSession *session = connect_to(connect);
    struct ZlHolder *holder = lock_on(session, path, "holder");
    int32_t status;
    if (!acquire(holder, -1, NULL, &status)) fail("acquire", status);
    /* Set after the acquire, so that every state printed comes after "held". */
    check(zl_holder_set_listener(holder, on_state, NULL), "zl_holder_set_listener");
    int64_t id = 0;
    check(zl_session_status(session, NULL, &id, NULL), "zl_session_status");
    printf("held %lld session %lld\n", token_of(holder), (long long)id);
    fflush(stdout);
    char line[64];
    while (fgets(line, sizeof line, stdin) != NULL) {
        if (strncmp(line, "release", 7) == 0) {
            uint8_t released = 0;
            check(zl_holder_release(holder, 0, &released), "release");
            if (!released) fail("release: it did not hold", -1);
        }
    }
    zl_holder_free(holder);
    zl_session_free(session);
    say("shutdown %lld", (long long)zl_shutdown());
    return 0;
}

static int wait_for(const char *connect, const char *path, int64_t timeout_ms) {
    struct ZlSession *session = connect_to(connect);
    struct ZlHolder *holder = lock_on(session, path, "waiter");
    int32_t status;
    if (acquire(holder, timeout_ms, NULL, &status)) {
        say("held %lld", token_of(holder));
    } else {
        if (status != ZL_OK) fail("acquire", status);
        say("timeout, queue %lld", (long long)queued(holder));
    }
    zl_holder_free(holder);
    zl_session_free(session);
    say("shutdown %lld", (long long)zl_shutdown());
    return 0;
}

int main(int argc, char **argv) {
    if (argc >= 4 && strcmp(argv[2], "single") == 0) return single(argv[1], argv[3]);
    if (argc >= 4 && strcmp(argv[2], "hold") == 0) return hold(argv[1], argv[3]);
    if (argc >= 5 && strcmp(argv[2], "wait") == 0) return wait_for(argv[1], argv[3], atoll(argv[4]));
    fprintf(stderr, "usage: c_lock CONNECT single|hold|wait PATH [MS]\n");
    return 2;
}

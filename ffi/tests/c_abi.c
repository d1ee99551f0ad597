/* A C caller of zoolock, for tests/c_abi.rs: compiles against the generated
 * header with every warning an error, links the cdylib (the .so, or the
 * Windows DLL under Wine), and checks the boundary's own answers, which need
 * no server. Standard C only. Prints "ok" and exits 0. */
#include <stdio.h>
#include <string.h>

#include "zoolock.h"

static int failures = 0;

static void expect(int32_t got, int32_t want, const char *what) {
    if (got != want) {
        fprintf(stderr, "%s: status %d, expected %d\n", what, (int)got, (int)want);
        failures++;
    }
}

static int contains(const uint8_t *text, uint32_t len, const char *needle) {
    size_t n = strlen(needle);
    for (size_t at = 0; at + n <= len; at++) {
        if (memcmp(text + at, needle, n) == 0) return 1;
    }
    return 0;
}

static void expect_message(const char *needle) {
    const uint8_t *text = NULL;
    uint32_t len = 0;
    expect(zl_last_error(&text, &len), ZL_OK, "zl_last_error");
    if (!contains(text, len, needle)) {
        fprintf(stderr, "last error \"%.*s\" lacks \"%s\"\n", (int)len, (const char *)text, needle);
        failures++;
    }
}

int main(void) {
    const uint8_t *version = NULL;
    uint32_t version_len = 0;
    expect(zl_version(&version, &version_len), ZL_OK, "zl_version");
    if (version_len == 0) {
        fprintf(stderr, "empty version\n");
        failures++;
    }

    struct ZlSession *session = NULL;
    const char *bad = "host:99999";
    expect(zl_session_connect((const uint8_t *)bad, (uint32_t)strlen(bad), 0, 0, &session),
           ZL_INVALID_CONNECT_STRING, "zl_session_connect");
    expect_message("host:99999");

    struct ZlHolder *holder = NULL;
    const char *path = "/locks/c";
    expect(zl_lock_new(NULL, (const uint8_t *)path, (uint32_t)strlen(path), ZL_KIND_MUTEX, ZL_SCHEME_KAZOO, NULL, 0, 0,
                       &holder),
           ZL_INVALID_ARGUMENT, "zl_lock_new without a session");
    expect_message("session handle is null");
    uint8_t acquired = 0;
    expect(zl_holder_acquire(NULL, -1, -1, 0, NULL, &acquired), ZL_INVALID_ARGUMENT, "zl_holder_acquire");
    expect_message("holder handle is null");
    int64_t token = 0;
    uint8_t held = 0;
    expect(zl_lock_fencing_token(NULL, &token, &held), ZL_INVALID_ARGUMENT, "zl_lock_fencing_token");

    uint8_t found = 0;
    struct ZlStat stat;
    expect(zl_session_exists(NULL, (const uint8_t *)path, (uint32_t)strlen(path), &found, &stat), ZL_INVALID_ARGUMENT,
           "zl_session_exists");
    struct ZlTransaction *transaction = NULL;
    expect(zl_holder_fenced(NULL, &transaction), ZL_INVALID_ARGUMENT, "zl_holder_fenced");
    expect_message("holder handle is null");
    struct ZlLeadership *leadership = NULL;
    expect(zl_election_lead(NULL, -1, NULL, &leadership), ZL_INVALID_ARGUMENT, "zl_election_lead");
    expect_message("election handle is null");

    struct ZlCancel *cancel = NULL;
    expect(zl_cancel_new(&cancel), ZL_OK, "zl_cancel_new");
    expect(zl_cancel_fire(cancel), ZL_OK, "zl_cancel_fire");
    zl_cancel_free(cancel);
    uint8_t *buffer = NULL;
    uint32_t buffer_len = 0;
    expect(zl_session_metrics(NULL, &buffer, &buffer_len), ZL_INVALID_ARGUMENT, "zl_session_metrics");
    expect(zl_inspect(NULL, (const uint8_t *)path, (uint32_t)strlen(path), &buffer, &buffer_len), ZL_INVALID_ARGUMENT,
           "zl_inspect");
    expect(zl_set_log_callback(ZL_LOG_OFF, NULL, NULL), ZL_OK, "zl_set_log_callback");
    zl_holder_free(NULL);
    zl_transaction_free(NULL);
    zl_leadership_free(NULL);
    zl_election_free(NULL);
    zl_session_free(NULL);
    zl_bytes_free(NULL, 0);
    expect(zl_shutdown(), ZL_OK, "zl_shutdown");

    if (failures != 0) return 1;
    printf("ok\n");
    return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_regfile.c — the reader's one open of a file it reads to the end
 * (tools/lib/regfile.h): a regular file is kept, readable, O_NONBLOCK
 * cleared; a FIFO with no writer is refused without waiting; /dev/null (a
 * device), a directory and a socket are refused with what they are; a
 * missing file and a symbolic link under O_NOFOLLOW fail at the open with
 * its errno; a path relative to a folder descriptor is opened there; no
 * refusal leaves a descriptor open.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "tools/lib/regfile.h"
#include "tests/unit/scratch_dir.h"

static void path_of(char *out, size_t n, const char *name)
{
    snprintf(out, n, "%s/%s", g_dir, name);
}

/* The lowest free descriptor: equal before and after a call means the call
 * left nothing open. */
static int next_fd(void)
{
    int fd = dup(0);
    assert_true(fd >= 0);
    close(fd);
    return fd;
}

static void regular_file_is_kept(void **state)
{
    (void)state;
    char p[128];
    path_of(p, sizeof(p), "plain");
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs("hello\n", f);
    fclose(f);
    struct gt_regfile rf;
    assert_int_equal(gt_regfile_open(AT_FDCWD, p, 0, &rf), GT_REGFILE_OK);
    assert_true(rf.fd >= 0);
    assert_int_equal(rf.err, 0);
    assert_true(S_ISREG(rf.st.st_mode));
    assert_int_equal(rf.st.st_size, 6);
    int fl = fcntl(rf.fd, F_GETFL);
    assert_true(fl >= 0);
    assert_int_equal(fl & O_NONBLOCK, 0);
    assert_int_equal(fl & O_ACCMODE, O_RDONLY);
    assert_int_not_equal(fcntl(rf.fd, F_GETFD) & FD_CLOEXEC, 0);
    char b[16];
    assert_int_equal(read(rf.fd, b, sizeof(b)), 6);
    assert_memory_equal(b, "hello\n", 6);
    close(rf.fd);
    assert_string_equal(gt_regfile_what(rf.st.st_mode), "a regular file");
}

static void fifo_is_refused_without_waiting(void **state)
{
    (void)state;
    char p[128];
    path_of(p, sizeof(p), "fifo");
    assert_int_equal(mkfifo(p, 0600), 0);
    int before = next_fd();
    struct gt_regfile rf;
    /* with no writer, a blocking open would never return */
    assert_int_equal(gt_regfile_open(AT_FDCWD, p, 0, &rf), GT_REGFILE_TYPE);
    assert_int_equal(rf.fd, -1);
    assert_true(S_ISFIFO(rf.st.st_mode));
    assert_string_equal(gt_regfile_what(rf.st.st_mode), "a FIFO");
    assert_int_equal(next_fd(), before);
}

static void device_is_refused(void **state)
{
    (void)state;
    int before = next_fd();
    struct gt_regfile rf;
    assert_int_equal(gt_regfile_open(AT_FDCWD, "/dev/null", 0, &rf), GT_REGFILE_TYPE);
    assert_int_equal(rf.fd, -1);
    assert_true(S_ISCHR(rf.st.st_mode));
    assert_string_equal(gt_regfile_what(rf.st.st_mode), "a device");
    assert_int_equal(next_fd(), before);
}

static void directory_is_refused(void **state)
{
    (void)state;
    int before = next_fd();
    struct gt_regfile rf;
    assert_int_equal(gt_regfile_open(AT_FDCWD, g_dir, 0, &rf), GT_REGFILE_TYPE);
    assert_int_equal(rf.fd, -1);
    assert_true(S_ISDIR(rf.st.st_mode));
    assert_string_equal(gt_regfile_what(rf.st.st_mode), "a directory");
    assert_int_equal(next_fd(), before);
}

static void socket_is_refused(void **state)
{
    (void)state;
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    path_of(sa.sun_path, sizeof(sa.sun_path), "sock");
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_true(s >= 0);
    assert_int_equal(bind(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
    struct gt_regfile rf;
    /* a socket cannot be opened: the open's errno (ENXIO), not the type */
    enum gt_regfile_fail fail = gt_regfile_open(AT_FDCWD, sa.sun_path, 0, &rf);
    close(s);
    assert_int_equal(fail, GT_REGFILE_OPEN);
    assert_int_equal(rf.err, ENXIO);
    assert_int_equal(rf.fd, -1);
    struct stat st;
    assert_int_equal(stat(sa.sun_path, &st), 0);
    assert_string_equal(gt_regfile_what(st.st_mode), "a socket");
}

static void missing_file_fails_at_open(void **state)
{
    (void)state;
    char p[128];
    path_of(p, sizeof(p), "absent");
    struct gt_regfile rf;
    assert_int_equal(gt_regfile_open(AT_FDCWD, p, 0, &rf), GT_REGFILE_OPEN);
    assert_int_equal(rf.err, ENOENT);
    assert_int_equal(rf.fd, -1);
}

static void symlink_refused_under_nofollow(void **state)
{
    (void)state;
    char target[128], link[128];
    path_of(target, sizeof(target), "target");
    path_of(link, sizeof(link), "link");
    FILE *f = fopen(target, "w");
    assert_non_null(f);
    fclose(f);
    assert_int_equal(symlink(target, link), 0);
    struct gt_regfile rf;
    assert_int_equal(gt_regfile_open(AT_FDCWD, link, O_NOFOLLOW, &rf), GT_REGFILE_OPEN);
    assert_int_equal(rf.err, ELOOP);
    /* without it the link is followed to the regular file */
    assert_int_equal(gt_regfile_open(AT_FDCWD, link, 0, &rf), GT_REGFILE_OK);
    close(rf.fd);
}

static void relative_to_a_folder(void **state)
{
    (void)state;
    char p[128];
    path_of(p, sizeof(p), "inside");
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs("abc", f);
    fclose(f);
    int dfd = open(g_dir, O_RDONLY | O_DIRECTORY);
    assert_true(dfd >= 0);
    struct gt_regfile rf;
    assert_int_equal(gt_regfile_open(dfd, "inside", 0, &rf), GT_REGFILE_OK);
    assert_int_equal(rf.st.st_size, 3);
    close(rf.fd);
    assert_int_equal(gt_regfile_open(dfd, "nope", 0, &rf), GT_REGFILE_OPEN);
    assert_int_equal(rf.err, ENOENT);
    close(dfd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(regular_file_is_kept),
        cmocka_unit_test(fifo_is_refused_without_waiting),
        cmocka_unit_test(device_is_refused),
        cmocka_unit_test(directory_is_refused),
        cmocka_unit_test(socket_is_refused),
        cmocka_unit_test(missing_file_fails_at_open),
        cmocka_unit_test(symlink_refused_under_nofollow),
        cmocka_unit_test(relative_to_a_folder),
    };
    return cmocka_run_group_tests(tests, scratch_setup, scratch_teardown);
}

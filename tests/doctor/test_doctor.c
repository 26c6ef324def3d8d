/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_doctor.c — doctor's judgement on the fixture trees with the CUDA and
 * verbs parts supplied through plugin/dl's fault-injection seam
 * (gt_cu_install / gt_ibv_install): each scenario states what the driver and
 * the NIC answer, and the test checks the status of every check, the exit
 * code, and that doctor released every context, PD, MR, fd and GPU buffer it
 * took.  Also: the PCI-path classification on hand-made chains, and the JSON
 * reader on malformed documents.
 *
 * Runs from the repository root (fixtures at tests/doctor/fixtures/).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/check.h"

#include "common/dl/gt_cuda.h"
#include "common/dl/gt_ibv.h"
#include "tools/cmd/doctor/doctor.h"
#include "tools/cmd/doctor/doctor_json.h"

static int failures;

/* ---- the scenario the fakes play ------------------------------------------ */

struct fake_nic {
    const char *name;
    int probe_errno;  /* answer to ibv_reg_dmabuf_mr(fd = -1) */
    int dmabuf_errno; /* answer to a real fd; 0 = registered */
    int host_errno;   /* ibv_reg_mr on host memory */
    int va_errno;     /* ibv_reg_mr on a GPU address (peermem) */
};

struct expect {
    const char *id;
    int status;
};

struct scenario {
    const char *what;
    const char *fixture;
    int no_cuda_lib, no_verbs_lib;
    int cuda_version;
    int ngpu;
    const char *bus[4]; /* as cuDeviceGetPCIBusId spells it */
    int attr[4];
    int export_err; /* CUresult of cuMemGetHandleForAddressRange */
    const char *exp_name;
    int has_dmabuf_sym;
    struct fake_nic nics[4];
    int nnics;
    int peermem;
    struct expect expect[24];
    int exit_code;
};

static const struct scenario *sc;
static struct ibv_device fake_devs[4];
static struct ibv_device *fake_list[5];
static int live_objs; /* contexts + PDs + MRs + GPU buffers + retained contexts outstanding */
static int fds[16], nfds;
/* fake GPU addresses: a range no host allocation uses (heap 0x55.., mmap 0x7f..,
 * ASan 0x6..); never dereferenced */
#define GPU_BASE 0x10000000000ull
#define IS_GPU(a) ((uintptr_t)(a) >= GPU_BASE && (uintptr_t)(a) < GPU_BASE + (1ull << 36))

static const struct fake_nic *nic_of(struct ibv_pd *pd)
{
    for (int i = 0; i < sc->nnics; i++)
        if (!strcmp(sc->nics[i].name, pd->context->device->name))
            return &sc->nics[i];
    return NULL;
}

static struct ibv_device **f_get_device_list(int *n)
{
    for (int i = 0; i < sc->nnics; i++) {
        memset(&fake_devs[i], 0, sizeof(fake_devs[i]));
        snprintf(fake_devs[i].name, sizeof(fake_devs[i].name), "%s", sc->nics[i].name);
        fake_list[i] = &fake_devs[i];
    }
    fake_list[sc->nnics] = NULL;
    *n = sc->nnics;
    return fake_list;
}
static void f_free_device_list(struct ibv_device **l)
{
    (void)l;
}
static const char *f_get_device_name(struct ibv_device *d)
{
    return d->name;
}
static struct ibv_context *f_open_device(struct ibv_device *d)
{
    struct ibv_context *c = calloc(1, sizeof(*c));
    c->device = d;
    live_objs++;
    return c;
}
static int f_close_device(struct ibv_context *c)
{
    free(c);
    live_objs--;
    return 0;
}
static struct ibv_pd *f_alloc_pd(struct ibv_context *c)
{
    struct ibv_pd *pd = calloc(1, sizeof(*pd));
    pd->context = c;
    live_objs++;
    return pd;
}
static int f_dealloc_pd(struct ibv_pd *pd)
{
    free(pd);
    live_objs--;
    return 0;
}
static struct ibv_mr *new_mr(struct ibv_pd *pd)
{
    struct ibv_mr *mr = calloc(1, sizeof(*mr));
    mr->pd = pd;
    live_objs++;
    return mr;
}
static struct ibv_mr *f_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t off, size_t len, uint64_t iova,
                                      int fd, int access)
{
    (void)off, (void)len, (void)iova, (void)access;
    const struct fake_nic *n = nic_of(pd);
    int e = fd < 0 ? n->probe_errno : n->dmabuf_errno;
    if (e) {
        errno = e;
        return NULL;
    }
    return new_mr(pd);
}
static struct ibv_mr *f_reg_mr(struct ibv_pd *pd, void *addr, size_t len, int access)
{
    (void)len, (void)access;
    const struct fake_nic *n = nic_of(pd);
    int e = IS_GPU(addr) ? n->va_errno : n->host_errno;
    if (e) {
        errno = e;
        return NULL;
    }
    return new_mr(pd);
}
static int f_dereg_mr(struct ibv_mr *mr)
{
    free(mr);
    live_objs--;
    return 0;
}

static gt_CUresult c_init(unsigned f)
{
    (void)f;
    return 0;
}
static gt_CUresult c_ver(int *v)
{
    *v = sc->cuda_version;
    return 0;
}
static gt_CUresult c_count(int *n)
{
    *n = sc->ngpu;
    return 0;
}
static gt_CUresult c_get(gt_CUdevice *d, int i)
{
    *d = i;
    return i < sc->ngpu ? 0 : 101;
}
static gt_CUresult c_busid(char *b, int len, gt_CUdevice d)
{
    snprintf(b, (size_t)len, "%s", sc->bus[d]);
    return 0;
}
static gt_CUresult c_attr(int *v, int a, gt_CUdevice d)
{
    *v = a == GT_CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED ? sc->attr[d] : 0;
    return 0;
}
static gt_CUresult c_retain(gt_CUcontext *c, gt_CUdevice d)
{
    *c = (gt_CUcontext)(uintptr_t)(0x1000 + d);
    live_objs++;
    return 0;
}
static gt_CUresult c_release(gt_CUdevice d)
{
    (void)d;
    live_objs--;
    return 0;
}
static gt_CUresult c_set(gt_CUcontext c)
{
    (void)c;
    return 0;
}
static int nalloc;
static gt_CUresult c_alloc(gt_CUdeviceptr *p, size_t n)
{
    *p = GPU_BASE + (gt_CUdeviceptr)n * (gt_CUdeviceptr)nalloc++;
    live_objs++;
    return 0;
}
static gt_CUresult c_free(gt_CUdeviceptr p)
{
    (void)p;
    live_objs--;
    return 0;
}
static gt_CUresult c_handle(void *h, gt_CUdeviceptr p, size_t n, int type, unsigned long long fl)
{
    (void)p, (void)n, (void)fl;
    if (type != GT_CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD)
        return GT_CUDA_ERROR_INVALID_VALUE;
    if (sc->export_err)
        return sc->export_err;
    int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (nfds < 16)
        fds[nfds++] = fd;
    *(int *)h = fd;
    return 0;
}
static int fake_exporter(int fd, char *name, size_t len)
{
    (void)fd;
    snprintf(name, len, "%s", sc->exp_name ? sc->exp_name : "nv_dmabuf");
    return 0;
}

static void install(const struct scenario *s)
{
    sc = s;
    gt_ibv_reset();
    gt_cu_reset();
    if (s->no_verbs_lib) {
        setenv("GDRTRACE_IBVERBS_LIB", "/nonexistent/libibverbs.so.1", 1);
    } else {
        struct gt_ibv_fns f = {
            .get_device_list = f_get_device_list,
            .free_device_list = f_free_device_list,
            .get_device_name = f_get_device_name,
            .open_device = f_open_device,
            .close_device = f_close_device,
            .alloc_pd = f_alloc_pd,
            .dealloc_pd = f_dealloc_pd,
            .reg_mr = f_reg_mr,
            .dereg_mr = f_dereg_mr,
            .reg_dmabuf_mr = s->has_dmabuf_sym ? f_reg_dmabuf_mr : NULL,
        };
        gt_ibv_install(&f);
    }
    if (s->no_cuda_lib) {
        setenv("GDRTRACE_CUDA_LIB", "/nonexistent/libcuda.so.1", 1);
    } else {
        struct gt_cu_fns c = {
            .init = c_init,
            .driver_get_version = c_ver,
            .device_get = c_get,
            .device_get_count = c_count,
            .device_get_attribute = c_attr,
            .device_get_pci_bus_id = c_busid,
            .mem_alloc = c_alloc,
            .mem_free = c_free,
            .ctx_set_current = c_set,
            .primary_ctx_retain = c_retain,
            .primary_ctx_release = c_release,
            .mem_get_handle_for_address_range = c_handle,
        };
        gt_cu_install(&c);
    }
    dr_fd_exporter = fake_exporter;
}

static void run_scenario(const struct scenario *s)
{
    printf("scenario: %s (fixture %s)\n", s->what, s->fixture);
    int failures_before = failures;
    install(s);
    live_objs = 0;
    nfds = 0;
    nalloc = 0;
    char root[512];
    snprintf(root, sizeof(root), "tests/doctor/fixtures/%s", s->fixture);
    struct dr_inventory *inv = malloc(sizeof(*inv));
    struct dr_topology *topo = malloc(sizeof(*topo));
    struct dr_live *live = malloc(sizeof(*live));
    struct dr_report *rep = malloc(sizeof(*rep));
    struct dr_options opt = {.reg_size = 2u << 20, .peermem = s->peermem};
    dr_inventory_collect(inv, root);
    dr_topo_compute(inv, topo);
    dr_live_run(inv, topo, &opt, live);
    dr_checks_judge(inv, topo, live, &opt, rep);

    for (int i = 0; s->expect[i].id; i++) {
        const struct dr_check *c = dr_report_find(rep, s->expect[i].id);
        CHECK(c != NULL, "check %s missing", s->expect[i].id);
        if (!c)
            continue;
        CHECK(c->status == s->expect[i].status, "%s is %s, expected %s (%s)", c->id,
              dr_status_name(c->status), dr_status_name(s->expect[i].status), c->summary);
        CHECK(c->status == DR_PASS || c->status == DR_SKIP || c->next[0],
              "%s is %s without a next step", c->id, dr_status_name(c->status));
    }
    CHECK(rep->exit_code == s->exit_code, "exit code %d, expected %d", rep->exit_code,
          s->exit_code);
    CHECK(live_objs == 0, "%d contexts/PDs/MRs/GPU buffers not released", live_objs);
    for (int i = 0; i < nfds; i++)
        CHECK(fcntl(fds[i], F_GETFD) == -1, "dma-buf fd %d left open", fds[i]);
    if (failures != failures_before)
        dr_report_text(stdout, inv, topo, live, rep);
    dr_report_free(rep);
    free(rep);
    free(live);
    free(topo);
    free(inv);
    unsetenv("GDRTRACE_IBVERBS_LIB");
    unsetenv("GDRTRACE_CUDA_LIB");
}

#define OK_NIC(n)                                                                                  \
    {                                                                                              \
        n, EBADF, 0, 0, EFAULT                                                                     \
    }

static const struct scenario scenarios[] = {
    {"open module + mlx5: every step succeeds",
     "open-mlx5",
     0,
     0,
     12080,
     2,
     {"00000000:18:00.0", "00000000:9A:00.0"},
     {1, 1},
     0,
     NULL,
     1,
     {OK_NIC("mlx5_0"), OK_NIC("mlx5_1")},
     2,
     0,
     {{"identity.kernel", DR_PASS},        {"identity.nvidia_module", DR_PASS},
      {"identity.peermem", DR_PASS},       {"identity.cuda_driver", DR_PASS},
      {"identity.gpus", DR_PASS},          {"identity.rdma", DR_PASS},
      {"topology.gpu_nic", DR_PASS},       {"gate1.open_module", DR_PASS},
      {"gate1.kernel", DR_PASS},           {"gate1.cuda_driver", DR_PASS},
      {"gate1.cuda_dmabuf_attr", DR_PASS}, {"gate1.verbs_reg_dmabuf", DR_PASS},
      {"gate1.dev_infiniband", DR_PASS},   {"gate1.rdma_active", DR_PASS},
      {"gate1.dmabuf_probe", DR_PASS},     {"gate1.single_path", DR_PASS},
      {"gate2.cuda_export", DR_PASS},      {"gate2.host_reg", DR_PASS},
      {"gate2.gpu_reg_dmabuf", DR_PASS},   {NULL, 0}},
     DR_EXIT_PASS},
    {"open module + mlx5, --peermem without nvidia_peermem: the GPU address is refused",
     "open-mlx5",
     0,
     0,
     12080,
     2,
     {"0000:18:00.0", "0000:9a:00.0"},
     {1, 1},
     0,
     NULL,
     1,
     {OK_NIC("mlx5_0"), OK_NIC("mlx5_1")},
     2,
     1,
     {{"gate2.gpu_reg_dmabuf", DR_PASS}, {"gate2.gpu_reg_peermem", DR_FAIL}, {NULL, 0}},
     DR_EXIT_FAIL},
    {"open module + mlx5, the NIC refuses the GPU dma-buf (EFAULT)",
     "open-mlx5",
     0,
     0,
     12080,
     2,
     {"0000:18:00.0", "0000:9a:00.0"},
     {1, 1},
     0,
     NULL,
     1,
     {{"mlx5_0", EBADF, EFAULT, 0, EFAULT}, {"mlx5_1", EBADF, EFAULT, 0, EFAULT}},
     2,
     0,
     {{"gate1.dmabuf_probe", DR_PASS},
      {"gate2.cuda_export", DR_PASS},
      {"gate2.host_reg", DR_PASS},
      {"gate2.gpu_reg_dmabuf", DR_FAIL},
      {NULL, 0}},
     DR_EXIT_FAIL},
    {"open module + mlx5, the fd is not GPU memory (exp_name udmabuf)",
     "open-mlx5",
     0,
     0,
     12080,
     2,
     {"0000:18:00.0", "0000:9a:00.0"},
     {1, 1},
     0,
     "udmabuf",
     1,
     {OK_NIC("mlx5_0"), OK_NIC("mlx5_1")},
     2,
     0,
     {{"gate2.cuda_export", DR_FAIL}, {NULL, 0}},
     DR_EXIT_FAIL},
    {"open module + mlx5, old rdma-core without ibv_reg_dmabuf_mr, CUDA 11.4",
     "open-mlx5",
     0,
     0,
     11040,
     2,
     {"0000:18:00.0", "0000:9a:00.0"},
     {1, 1},
     0,
     NULL,
     0,
     {OK_NIC("mlx5_0"), OK_NIC("mlx5_1")},
     2,
     0,
     {{"gate1.cuda_driver", DR_FAIL},
      {"gate1.verbs_reg_dmabuf", DR_FAIL},
      {"gate1.dmabuf_probe", DR_FAIL},
      {"gate2.host_reg", DR_PASS},
      {NULL, 0}},
     DR_EXIT_FAIL},
    {"open module + mlx5 tree, no libcuda and no libibverbs",
     "open-mlx5",
     1,
     1,
     0,
     0,
     {0},
     {0},
     0,
     NULL,
     0,
     {{0}},
     0,
     0,
     {{"identity.cuda_driver", DR_SKIP},
      {"gate1.cuda_driver", DR_FAIL},
      {"gate1.cuda_dmabuf_attr", DR_SKIP},
      {"gate1.verbs_reg_dmabuf", DR_FAIL},
      {"gate1.dmabuf_probe", DR_SKIP},
      {"gate1.dev_infiniband", DR_PASS},
      {"gate2.cuda_export", DR_SKIP},
      {"gate2.host_reg", DR_SKIP},
      {"gate2.gpu_reg_dmabuf", DR_SKIP},
      {NULL, 0}},
     DR_EXIT_FAIL},
    {"proprietary module + nvidia_peermem: legacy path works, DMA-BUF refused",
     "prop-peermem",
     0,
     0,
     12020,
     1,
     {"0000:43:00.0"},
     {0},
     GT_CUDA_ERROR_NOT_SUPPORTED,
     NULL,
     1,
     {{"mlx5_0", EBADF, 0, 0, 0}},
     1,
     1,
     {{"identity.nvidia_module", DR_PASS},
      {"identity.peermem", DR_PASS},
      {"topology.gpu_nic", DR_PASS},
      {"gate1.open_module", DR_FAIL},
      {"gate1.kernel", DR_PASS},
      {"gate1.cuda_driver", DR_PASS},
      {"gate1.cuda_dmabuf_attr", DR_FAIL},
      {"gate1.verbs_reg_dmabuf", DR_PASS},
      {"gate1.dev_infiniband", DR_PASS},
      {"gate1.rdma_active", DR_PASS},
      {"gate1.dmabuf_probe", DR_PASS},
      {"gate1.single_path", DR_PASS},
      {"gate2.cuda_export", DR_FAIL},
      {"gate2.host_reg", DR_PASS},
      {"gate2.gpu_reg_dmabuf", DR_SKIP},
      {"gate2.gpu_reg_peermem", DR_PASS},
      {NULL, 0}},
     DR_EXIT_FAIL},
    {"no NIC (the GPU test machine): export works, nothing to register on",
     "no-nic",
     0,
     0,
     13000,
     1,
     {"00000000:01:00.0"},
     {1},
     0,
     NULL,
     1,
     {{0}},
     0,
     0,
     {{"identity.gpus", DR_PASS},
      {"identity.rdma", DR_WARN},
      {"topology.gpu_nic", DR_SKIP},
      {"gate1.open_module", DR_PASS},
      {"gate1.cuda_dmabuf_attr", DR_PASS},
      {"gate1.verbs_reg_dmabuf", DR_PASS},
      {"gate1.dev_infiniband", DR_FAIL},
      {"gate1.rdma_active", DR_FAIL},
      {"gate1.dmabuf_probe", DR_SKIP},
      {"gate1.single_path", DR_PASS},
      {"gate2.cuda_export", DR_PASS},
      {"gate2.host_reg", DR_SKIP},
      {"gate2.gpu_reg_dmabuf", DR_SKIP},
      {NULL, 0}},
     DR_EXIT_FAIL},
    {"mixed: peermem beside the open module, a down port, a far GPU, rxe refuses DMA-BUF",
     "mixed",
     0,
     0,
     12080,
     2,
     {"0000:18:00.0", "0000:9a:00.0"},
     {1, 1},
     0,
     NULL,
     1,
     {OK_NIC("mlx5_0"), OK_NIC("mlx5_1"), {"rxe0", EOPNOTSUPP, EOPNOTSUPP, 0, EFAULT}},
     3,
     0,
     {{"identity.rdma", DR_PASS},
      {"topology.gpu_nic", DR_WARN},
      {"gate1.open_module", DR_PASS},
      {"gate1.rdma_active", DR_WARN},
      {"gate1.dmabuf_probe", DR_WARN},
      {"gate1.single_path", DR_WARN},
      {"gate2.cuda_export", DR_PASS},
      {"gate2.host_reg", DR_PASS},
      {"gate2.gpu_reg_dmabuf", DR_WARN},
      {NULL, 0}},
     DR_EXIT_WARN},
};

/* ---- topology on hand-made chains ----------------------------------------- */

static struct dr_pci mk(const char *root, int numa, const char *chain)
{
    struct dr_pci p;
    memset(&p, 0, sizeof(p));
    snprintf(p.root, sizeof(p.root), "%s", root);
    p.numa_node = numa;
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", chain);
    for (char *save, *t = strtok_r(buf, "/", &save); t; t = strtok_r(NULL, "/", &save))
        snprintf(p.chain[p.chain_len++], sizeof(p.chain[0]), "%s", t);
    memcpy(p.bdf, p.chain[p.chain_len - 1], sizeof(p.bdf));
    return p;
}

static void test_topology(void)
{
    printf("topology: PIX/PXB/PHB/SYS from PCI chains\n");
    struct dr_pci gpu = mk("pci0000:15", 0, "0000:15:01.0/0000:16:00.0/0000:17:00.0/0000:18:00.0");
    struct dr_pci pix = mk("pci0000:15", 0, "0000:15:01.0/0000:16:00.0/0000:17:01.0/0000:19:00.0");
    struct dr_pci pxb = mk("pci0000:15", 0,
                           "0000:15:01.0/0000:16:00.0/0000:17:02.0/0000:1a:00.0/0000:1b:00.0/"
                           "0000:1c:00.0");
    struct dr_pci phb = mk("pci0000:15", 0, "0000:15:03.0/0000:1d:00.0");
    struct dr_pci phb2 = mk("pci0000:20", 0, "0000:20:01.0/0000:21:00.0");
    struct dr_pci sys = mk("pci0000:97", 1, "0000:97:01.0/0000:98:00.0");
    struct dr_pci virt;
    memset(&virt, 0, sizeof(virt));
    CHECK(dr_topo_path(&gpu, &pix) == DR_PATH_PIX, "one switch: %s",
          dr_path_name(dr_topo_path(&gpu, &pix)));
    CHECK(dr_topo_path(&gpu, &pxb) == DR_PATH_PXB, "nested switches: %s",
          dr_path_name(dr_topo_path(&gpu, &pxb)));
    CHECK(dr_topo_path(&gpu, &phb) == DR_PATH_PHB, "other root port: %s",
          dr_path_name(dr_topo_path(&gpu, &phb)));
    CHECK(dr_topo_path(&gpu, &phb2) == DR_PATH_PHB, "other root complex, same socket: %s",
          dr_path_name(dr_topo_path(&gpu, &phb2)));
    CHECK(dr_topo_path(&gpu, &sys) == DR_PATH_SYS, "other socket: %s",
          dr_path_name(dr_topo_path(&gpu, &sys)));
    CHECK(dr_topo_path(&gpu, &virt) == DR_PATH_NA, "virtual device: %s",
          dr_path_name(dr_topo_path(&gpu, &virt)));
    CHECK(dr_topo_path(&pix, &gpu) == DR_PATH_PIX, "symmetric");
}

/* ---- the JSON reader ------------------------------------------------------- */

static void test_json(void)
{
    printf("json: malformed documents are refused with a line number, valid ones read\n");
    static const char *const bad[] = {
        "",
        "{",
        "[1,]",
        "{\"a\" 1}",
        "{\"a\":}",
        "\"abc",
        "\"\\x\"",
        "[1 2]",
        "{} x",
        "\"\\u12\"",
        "[\"\x01\"]",
        "tru",
        "-",
        "{\"a\":1,}",
        "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
        "[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char err[200];
        struct dj *v = dj_parse(bad[i], strlen(bad[i]), err, sizeof(err));
        CHECK(v == NULL, "accepted malformed document #%zu \"%s\"", i, bad[i]);
        CHECK(v != NULL || strncmp(err, "line ", 5) == 0, "error \"%s\" names no line", err);
        dj_free(v);
    }
    const char *good = "{\"s\": \"a\\u00e9\\ud83d\\ude00\\n\", \"n\": -12.5e1, \"b\": true, "
                       "\"z\": null, \"a\": [1, {\"k\": \"v\"}]}";
    char err[200];
    struct dj *v = dj_parse(good, strlen(good), err, sizeof(err));
    CHECK(v != NULL, "valid document refused: %s", err);
    if (v) {
        CHECK(!strcmp(dj_str(v, "s"), "a\xc3\xa9\xf0\x9f\x98\x80\n"), "unicode escapes decoded");
        CHECK(dj_num(v, "n", 0) == -125, "number %g", dj_num(v, "n", 0));
        CHECK(dj_num(v, "b", 0) == 1, "true");
        CHECK(!strcmp(dj_str(dj_at(dj_get(v, "a"), 1), "k"), "v"), "nested lookup");
        CHECK(dj_at(dj_get(v, "a"), 2) == NULL, "out-of-range index gives NULL");
        CHECK(dj_get(v, "missing") == NULL && !strcmp(dj_str(v, "missing"), ""), "absent key");
    }
    dj_free(v);
}

/* ---- the checks table against docs/doctor.md -------------------------------- */

/* The table in checks.c is the list of checks: ids unique, in gate order (the
 * text report starts a heading where the gate changes), and each one a row of
 * docs/doctor.md under its own gate's heading, and no row there that the table
 * lacks. */
static void test_check_table(void)
{
    printf("checks table: ids unique, in gate order, each documented under its gate\n");
    FILE *f = fopen("docs/doctor.md", "r");
    CHECK(f != NULL, "cannot open docs/doctor.md");
    if (!f)
        return;
    char ids[DR_MAX_CHECKS][64];
    int gates[DR_MAX_CHECKS], documented[DR_MAX_CHECKS] = {0}, n = 0, gate;
    for (const char *id; (id = dr_check_id(n, &gate)) != NULL; n++) {
        CHECK(n < DR_MAX_CHECKS, "more checks than DR_MAX_CHECKS");
        if (n >= DR_MAX_CHECKS)
            break;
        snprintf(ids[n], sizeof(ids[n]), "%s", id);
        gates[n] = gate;
        CHECK(n == 0 || gates[n - 1] <= gate, "%s (gate %d) after gate %d", id, gate, gates[n - 1]);
        for (int j = 0; j < n; j++)
            CHECK(strcmp(ids[j], id) != 0, "id %s twice", id);
    }
    CHECK(n >= 19, "only %d checks in the table", n);
    char line[4096];
    int section = -1;
    while (fgets(line, sizeof(line), f)) {
        if (sscanf(line, "### Gate %d", &section) == 1)
            continue;
        if (strncmp(line, "| `", 3) != 0)
            continue;
        char tok[64];
        if (sscanf(line + 3, "%63[^`]", tok) != 1 || !strchr(tok, '.'))
            continue; /* another table's row (variables, exit codes) */
        int k = 0;
        while (k < n && strcmp(ids[k], tok) != 0)
            k++;
        CHECK(k < n, "docs/doctor.md documents %s, which the table lacks", tok);
        if (k == n)
            continue;
        CHECK(gates[k] == section, "%s is gate %d, documented under gate %d", tok, gates[k],
              section);
        documented[k]++;
    }
    fclose(f);
    for (int k = 0; k < n; k++)
        CHECK(documented[k] == 1, "%s has %d rows in docs/doctor.md, not 1", ids[k], documented[k]);
}

int main(void)
{
    if (access("tests/doctor/fixtures/open-mlx5/sys", F_OK) != 0) {
        printf("fixtures not found: run from the repository root\n");
        return 1;
    }
    test_topology();
    test_json();
    test_check_table();
    for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++)
        run_scenario(&scenarios[i]);
    if (failures) {
        printf("%d failure(s)\n", failures);
        return 1;
    }
    printf("all doctor scenarios passed\n");
    return 0;
}

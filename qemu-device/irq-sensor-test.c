/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * QTest for the irqrig irq-sensor PCI device (hw/misc/irq-sensor.c).
 *
 * Under qtest the virtual clock only moves on clock_step, so every time,
 * latency and histogram bucket below is exact.
 */

#include "qemu/osdep.h"
#include <glib/gstdio.h>
#include "libqtest.h"
#include "libqos/pci.h"
#include "libqos/pci-pc.h"
#include "qapi/error.h"
#include "qapi/qmp/qdict.h"
#include "qapi/qmp/qlist.h"
#include "qapi/qmp/qnum.h"
#include "qapi/qmp/qbool.h"
#include "qapi/qmp/qstring.h"
#include "qapi/qmp/qjson.h"
#include "hw/pci/pci_regs.h"
#include "hw/misc/irq_sensor_regs.h"

#define SENSOR_PATH     "/machine/peripheral/sensor"
#define SENSOR_SLOT     4
#define MSG_ADDR        0x1000000   /* guest RAM receiving MSI/MSI-X writes */
#define MSG_DATA        0x4d5a

#define STAGE_HARD      IRQ_SENSOR_STAGE_HARD
#define STAGE_THREAD    IRQ_SENSOR_STAGE_THREAD
#define STAGE_USER      IRQ_SENSOR_STAGE_USER

typedef struct Sensor {
    QTestState *qts;
    QPCIBus *bus;
    QPCIDevice *dev;
    QPCIBar bar;
} Sensor;

static void sensor_map(Sensor *s)
{
    uint64_t size;

    qpci_device_enable(s->dev);
    s->bar = qpci_iomap(s->dev, 0, &size);
    g_assert_cmpuint(size, ==, IRQ_SENSOR_MMIO_SIZE);
}

/*
 * The QEMU build has no firmware blobs (--disable-install-blobs): point it
 * at the distribution's seabios and option ROMs when they are installed.
 */
static char *firmware_args(void)
{
    static const char *const dirs[] = {
        "/usr/share/seabios", "/usr/share/qemu",
    };
    GString *args = g_string_new("-nic none");
    int i;

    for (i = 0; i < ARRAY_SIZE(dirs); i++) {
        if (g_file_test(dirs[i], G_FILE_TEST_IS_DIR)) {
            g_string_append_printf(args, " -L %s", dirs[i]);
        }
    }
    return g_string_free(args, false);
}

/* @devopts: extra -device options; @log_path: event log file or NULL */
static Sensor *sensor_start_machine(const char *machine, const char *devopts,
                                    const char *log_path)
{
    Sensor *s = g_new0(Sensor, 1);
    g_autofree char *chardev = log_path ?
        g_strdup_printf(" -chardev file,id=sensorlog,path=%s", log_path) :
        g_strdup("");
    g_autofree char *firmware = firmware_args();

    s->qts = qtest_initf("%s -machine %s -device irq-sensor,id=sensor,"
                         "addr=%d.0%s%s%s%s", firmware, machine, SENSOR_SLOT,
                         log_path ? ",log=sensorlog" : "",
                         devopts ? "," : "", devopts ? devopts : "",
                         chardev);
    s->bus = qpci_new_pc(s->qts, NULL);
    s->dev = qpci_device_find(s->bus, QPCI_DEVFN(SENSOR_SLOT, 0));
    g_assert(s->dev);
    sensor_map(s);
    qtest_irq_intercept_in(s->qts, "ioapic");
    return s;
}

static Sensor *sensor_start(const char *devopts, const char *log_path)
{
    return sensor_start_machine("q35", devopts, log_path);
}

static void sensor_stop(Sensor *s)
{
    g_free(s->dev);
    qpci_free_pc(s->bus);
    qtest_quit(s->qts);
    g_free(s);
}

static uint32_t rd32(Sensor *s, uint64_t reg)
{
    return qpci_io_readl(s->dev, s->bar, reg);
}

static void wr32(Sensor *s, uint64_t reg, uint32_t val)
{
    qpci_io_writel(s->dev, s->bar, reg, val);
}

static uint64_t rd64(Sensor *s, uint64_t reg)
{
    return qpci_io_readq(s->dev, s->bar, reg);
}

static void wr64(Sensor *s, uint64_t reg, uint64_t val)
{
    qpci_io_writeq(s->dev, s->bar, reg, val);
}

static int64_t now(Sensor *s)
{
    return rd64(s, IRQ_SENSOR_REG_NOW);
}

static int64_t step(Sensor *s, int64_t ns)
{
    return qtest_clock_step(s->qts, ns);
}

static void fire(Sensor *s)
{
    wr32(s, IRQ_SENSOR_REG_CTRL,
         rd32(s, IRQ_SENSOR_REG_CTRL) | IRQ_SENSOR_CTRL_FIRE);
}

static void ack(Sensor *s, int stage, uint32_t seq)
{
    wr32(s, IRQ_SENSOR_REG_ACK(stage), seq);
}

static uint32_t head_seq(Sensor *s)
{
    return rd32(s, IRQ_SENSOR_REG_SAMPLE_SEQ);
}

static uint32_t latch_count(Sensor *s)
{
    return rd32(s, IRQ_SENSOR_REG_LATCH_COUNT);
}

static uint64_t stats64(Sensor *s, int stage, unsigned off)
{
    return rd64(s, IRQ_SENSOR_REG_STATS(stage) + off);
}

static uint32_t hist(Sensor *s, int stage, int bucket)
{
    return rd32(s, IRQ_SENSOR_REG_STATS(stage) + IRQ_SENSOR_STATS_HIST +
                4 * bucket);
}

/* INTx: PCI interrupts reach IO-APIC pins 16..23 on q35 */
static bool intx(Sensor *s)
{
    unsigned pins = 0;
    int i;

    for (i = 16; i < 24; i++) {
        if (qtest_get_irq(s->qts, i)) {
            pins |= 1u << i;
        }
    }
    g_assert(!(pins & (pins - 1)));     /* at most one line */
    return pins != 0;
}

/* QOM over QMP */

static QObject *qom_get(Sensor *s, const char *prop)
{
    QDict *resp = qtest_qmp(s->qts, "{'execute':'qom-get','arguments':"
                            "{'path':%s,'property':%s}}", SENSOR_PATH, prop);
    QObject *ret;

    g_assert(qdict_haskey(resp, "return"));
    ret = qdict_get(resp, "return");
    qobject_ref(ret);
    qobject_unref(resp);
    return ret;
}

static uint64_t qom_get_uint(Sensor *s, const char *prop)
{
    QObject *o = qom_get(s, prop);
    uint64_t v;

    g_assert(qnum_get_try_uint(qobject_to(QNum, o), &v));
    qobject_unref(o);
    return v;
}

static bool qom_get_bool(Sensor *s, const char *prop)
{
    QObject *o = qom_get(s, prop);
    bool v = qbool_get_bool(qobject_to(QBool, o));

    qobject_unref(o);
    return v;
}

static char *qom_get_str(Sensor *s, const char *prop)
{
    QObject *o = qom_get(s, prop);
    char *v = g_strdup(qstring_get_str(qobject_to(QString, o)));

    qobject_unref(o);
    return v;
}

/* NULL on success, else the error description */
static char *qom_set(Sensor *s, const char *prop, const char *json)
{
    QDict *resp = qtest_qmp(s->qts, "{'execute':'qom-set','arguments':"
                            "{'path':%s,'property':%s,'value':%p}}",
                            SENSOR_PATH, prop,
                            qobject_from_json(json, &error_abort));
    char *err = NULL;

    if (qdict_haskey(resp, "error")) {
        err = g_strdup(qdict_get_str(qdict_get_qdict(resp, "error"),
                                     "desc"));
    } else {
        g_assert(qdict_haskey(resp, "return"));
    }
    qobject_unref(resp);
    return err;
}

static void qom_set_ok(Sensor *s, const char *prop, const char *json)
{
    g_autofree char *err = qom_set(s, prop, json);

    g_assert_null(err);
}

static void qom_set_fails(Sensor *s, const char *prop, const char *json)
{
    g_autofree char *err = qom_set(s, prop, json);

    g_assert_nonnull(err);
    g_test_message("qom-set %s %s: %s", prop, json, err);
}

/* MSI-X / MSI plumbing */

static bool msix_pending(Sensor *s)
{
    return qpci_msix_pending(s->dev, 0);
}

static void msix_entry_setup(Sensor *s)
{
    uint64_t e = s->dev->msix_table_off;

    qpci_io_writel(s->dev, s->dev->msix_table_bar,
                   e + PCI_MSIX_ENTRY_LOWER_ADDR, MSG_ADDR);
    qpci_io_writel(s->dev, s->dev->msix_table_bar,
                   e + PCI_MSIX_ENTRY_UPPER_ADDR, 0);
    qpci_io_writel(s->dev, s->dev->msix_table_bar,
                   e + PCI_MSIX_ENTRY_DATA, MSG_DATA);
}

static void msix_mask(Sensor *s, bool mask)
{
    qpci_io_writel(s->dev, s->dev->msix_table_bar,
                   s->dev->msix_table_off + PCI_MSIX_ENTRY_VECTOR_CTRL,
                   mask ? PCI_MSIX_ENTRY_CTRL_MASKBIT : 0);
}

static uint32_t msg_mem(Sensor *s)
{
    return qtest_readl(s->qts, MSG_ADDR);
}

static void msg_mem_clear(Sensor *s)
{
    qtest_writel(s->qts, MSG_ADDR, 0);
}

/* Tests */

static void test_id(void)
{
    static const struct {
        const char *opts;
        uint32_t caps;
    } modes[] = {
        { NULL, IRQ_SENSOR_CAP_MSIX | IRQ_SENSOR_CAP_INTX },
        { "irq-mode=msix", IRQ_SENSOR_CAP_MSIX | IRQ_SENSOR_CAP_INTX },
        { "irq-mode=msi", IRQ_SENSOR_CAP_MSI | IRQ_SENSOR_CAP_INTX },
        { "irq-mode=intx", IRQ_SENSOR_CAP_INTX },
    };
    int i;

    for (i = 0; i < ARRAY_SIZE(modes); i++) {
        Sensor *s = sensor_start(modes[i].opts, NULL);
        uint32_t caps = modes[i].caps |
            (IRQ_SENSOR_LATCH_MAX << IRQ_SENSOR_CAP_LATCH_MAX_SHIFT);

        g_assert_cmphex(qpci_config_readw(s->dev, PCI_VENDOR_ID), ==,
                        IRQ_SENSOR_VENDOR_ID);
        g_assert_cmphex(qpci_config_readw(s->dev, PCI_DEVICE_ID), ==,
                        IRQ_SENSOR_DEVICE_ID);
        g_assert_cmphex(qpci_config_readb(s->dev, PCI_REVISION_ID), ==,
                        IRQ_SENSOR_REVISION);
        g_assert_cmphex(qpci_config_readb(s->dev, PCI_INTERRUPT_PIN), ==, 1);
        g_assert_cmphex(rd32(s, IRQ_SENSOR_REG_ID), ==, IRQ_SENSOR_ID_MAGIC);
        g_assert_cmphex(rd32(s, IRQ_SENSOR_REG_VERSION), ==,
                        IRQ_SENSOR_VERSION);
        g_assert_cmphex(rd32(s, IRQ_SENSOR_REG_CAPS), ==, caps);
        g_assert_cmpuint(!!qpci_find_capability(s->dev, PCI_CAP_ID_MSIX, 0),
                         ==, !!(caps & IRQ_SENSOR_CAP_MSIX));
        g_assert_cmpuint(!!qpci_find_capability(s->dev, PCI_CAP_ID_MSI, 0),
                         ==, !!(caps & IRQ_SENSOR_CAP_MSI));
        if (caps & IRQ_SENSOR_CAP_MSIX) {
            qpci_msix_enable(s->dev);
            g_assert_cmpuint(qpci_msix_table_size(s->dev), ==,
                             IRQ_SENSOR_MSIX_VECTORS);
            g_assert_cmpuint(s->dev->msix_table_bar.addr, !=,
                             s->bar.addr);
            qpci_msix_disable(s->dev);
        } else {
            g_assert_cmphex(qpci_config_readl(s->dev, PCI_BASE_ADDRESS_1),
                            ==, 0);
        }
        sensor_stop(s);
    }
}

static void test_machine_pc(void)
{
    Sensor *s = sensor_start_machine("pc", NULL, NULL);

    g_assert_cmphex(rd32(s, IRQ_SENSOR_REG_ID), ==, IRQ_SENSOR_ID_MAGIC);
    fire(s);
    g_assert_cmpuint(head_seq(s), ==, 1);
    sensor_stop(s);
}

static void test_manual(void)
{
    Sensor *s = sensor_start(NULL, NULL);
    int64_t t;

    /* defaults */
    g_assert_cmpuint(rd32(s, IRQ_SENSOR_REG_MODE), ==,
                     IRQ_SENSOR_MODE_MANUAL);
    g_assert_cmpuint(latch_count(s), ==, 0);
    g_assert_cmpuint(head_seq(s), ==, 0);
    g_assert_cmphex(rd32(s, IRQ_SENSOR_REG_STATUS), ==, 0);

    /* RUN in manual mode produces nothing */
    wr32(s, IRQ_SENSOR_REG_CTRL, IRQ_SENSOR_CTRL_RUN);
    step(s, 50 * 1000 * 1000);
    g_assert_cmpuint(latch_count(s), ==, 0);
    g_assert_cmpuint(rd64(s, IRQ_SENSOR_REG_CNT_SAMPLES), ==, 0);

    t = now(s);
    fire(s);
    g_assert_cmpuint(rd32(s, IRQ_SENSOR_REG_CTRL), ==, IRQ_SENSOR_CTRL_RUN);
    g_assert_cmpuint(latch_count(s), ==, 1);
    g_assert_cmpuint(head_seq(s), ==, 1);
    g_assert_cmphex(rd32(s, IRQ_SENSOR_REG_SAMPLE_VALUE), ==,
                    IRQ_SENSOR_SAMPLE_VALUE(1));
    g_assert_cmpuint(rd64(s, IRQ_SENSOR_REG_SAMPLE_T_RAISE), ==, t);
    g_assert_cmphex(rd32(s, IRQ_SENSOR_REG_STATUS), ==,
                    IRQ_SENSOR_STATUS_SAMPLE);
    g_assert_cmpuint(rd64(s, IRQ_SENSOR_REG_CNT_SAMPLES), ==, 1);
    /* IRQ_EN is off: sampled but no interrupt */
    g_assert_cmpuint(rd64(s, IRQ_SENSOR_REG_CNT_IRQS), ==, 0);

    ack(s, STAGE_HARD, 1);
    g_assert_cmpuint(latch_count(s), ==, 0);
    g_assert_cmphex(rd32(s, IRQ_SENSOR_REG_STATUS), ==, 0);
    step(s, 10);
    fire(s);
    g_assert_cmpuint(head_seq(s), ==, 2);
    g_assert_cmphex(rd32(s, IRQ_SENSOR_REG_SAMPLE_VALUE), ==,
                    IRQ_SENSOR_SAMPLE_VALUE(2));
    g_assert_cmpuint(rd64(s, IRQ_SENSOR_REG_SAMPLE_T_RAISE), ==, t + 10);
    sensor_stop(s);
}

static void test_periodic(void)
{
    Sensor *s = sensor_start(NULL, NULL);
    const uint64_t period = 100000;
    int64_t t0;
    int k;

    wr64(s, IRQ_SENSOR_REG_PERIOD, period);
    wr32(s, IRQ_SENSOR_REG_LATCH_DEPTH, 16);
    wr32(s, IRQ_SENSOR_REG_MODE, IRQ_SENSOR_MODE_PERIODIC);
    t0 = now(s);
    wr32(s, IRQ_SENSOR_REG_CTRL, IRQ_SENSOR_CTRL_RUN);
    step(s, period - 1);
    g_assert_cmpuint(latch_count(s), ==, 0);
    step(s, 1);
    g_assert_cmpuint(latch_count(s), ==, 1);
    step(s, 5 * period);
    g_assert_cmpuint(latch_count(s), ==, 6);
    for (k = 1; k <= 6; k++) {
        g_assert_cmpuint(head_seq(s), ==, k);
        g_assert_cmpuint(rd64(s, IRQ_SENSOR_REG_SAMPLE_T_RAISE), ==,
                         t0 + k * period);
        ack(s, STAGE_HARD, k);
    }

    /* stop */
    wr32(s, IRQ_SENSOR_REG_CTRL, 0);
    step(s, 10 * period);
    g_assert_cmpuint(latch_count(s), ==, 0);
    g_assert_cmpuint(rd64(s, IRQ_SENSOR_REG_CNT_SAMPLES), ==, 6);
    sensor_stop(s);
}

/*
 * late-skip-ns only skips events QEMU runs late; qtest runs every timer at
 * its deadline, so even a 1 ns bound skips nothing and the schedule is the
 * plain periodic one.
 */
static void test_periodic_on_time_is_not_skipped(void)
{
    Sensor *s = sensor_start("late-skip-ns=1", NULL);
    const uint64_t period = 100000;
    int k;

    wr64(s, IRQ_SENSOR_REG_PERIOD, period);
    wr32(s, IRQ_SENSOR_REG_LATCH_DEPTH, 16);
    wr32(s, IRQ_SENSOR_REG_MODE, IRQ_SENSOR_MODE_PERIODIC);
    wr32(s, IRQ_SENSOR_REG_CTRL, IRQ_SENSOR_CTRL_RUN);
    step(s, 10 * period);
    g_assert_cmpuint(latch_count(s), ==, 10);
    for (k = 1; k <= 10; k++) {
        g_assert_cmpuint(head_seq(s), ==, k);
        ack(s, STAGE_HARD, k);
    }
    g_assert_cmpuint(rd64(s, IRQ_SENSOR_REG_CNT_HOST_LATE), ==, 0);
    g_assert_cmpuint(qom_get_uint(s, "host-late"), ==, 0);
    sensor_stop(s);
}

/*
 * A stopped VM's virtual clock runs no timers: stepping it while stopped
 * and then continuing makes the generator's timer run late, as a host
 * that kept QEMU's main loop away would.  With a 250 us bound, of the ten
 * overdue events (due 100..1000 us) only the three due within 250 us of
 * "now" (800, 900, 1000 us) are raised.
 */
static void test_periodic_late_is_skipped(void)
{
    Sensor *s = sensor_start("late-skip-ns=250000", NULL);
    const uint64_t period = 100000;

    wr64(s, IRQ_SENSOR_REG_PERIOD, period);
    wr32(s, IRQ_SENSOR_REG_LATCH_DEPTH, 16);
    wr32(s, IRQ_SENSOR_REG_MODE, IRQ_SENSOR_MODE_PERIODIC);
    wr32(s, IRQ_SENSOR_REG_CTRL, IRQ_SENSOR_CTRL_RUN);
    qtest_qmp_assert_success(s->qts, "{'execute':'stop'}");
    step(s, 10 * period);
    qtest_qmp_assert_success(s->qts, "{'execute':'cont'}");
    step(s, 1);
    g_assert_cmpuint(rd64(s, IRQ_SENSOR_REG_CNT_HOST_LATE), ==, 7);
    g_assert_cmpuint(rd64(s, IRQ_SENSOR_REG_CNT_SAMPLES), ==, 3);
    g_assert_cmpuint(rd64(s, IRQ_SENSOR_REG_CNT_LOST_OVERFLOW), ==, 0);
    /* sequence numbers are not used up by skipped events */
    g_assert_cmpuint(head_seq(s), ==, 1);
    sensor_stop(s);
}

static void test_periodic_jitter(void)
{
    Sensor *s = sensor_start(NULL, NULL);
    const int64_t period = 100000, jitter = 20000;
    int64_t t0, off, min_off = INT64_MAX, max_off = INT64_MIN;
    int k;

    wr64(s, IRQ_SENSOR_REG_PERIOD, period);
    wr32(s, IRQ_SENSOR_REG_JITTER, jitter);
    wr32(s, IRQ_SENSOR_REG_LATCH_DEPTH, 16);
    wr32(s, IRQ_SENSOR_REG_MODE, IRQ_SENSOR_MODE_PERIODIC);
    t0 = now(s);
    wr32(s, IRQ_SENSOR_REG_CTRL, IRQ_SENSOR_CTRL_RUN);
    /* sample k lies in [k P - J, k P + J]: 10.5 P holds exactly 10 */
    step(s, 10 * period + period / 2);
    g_assert_cmpuint(latch_count(s), ==, 10);
    for (k = 1; k <= 10; k++) {
        off = rd64(s, IRQ_SENSOR_REG_SAMPLE_T_RAISE) - (t0 + k * period);
        g_assert_cmpint(off, >=, -jitter);
        g_assert_cmpint(off, <=, jitter);
        min_off = MIN(min_off, off);
        max_off = MAX(max_off, off);
        ack(s, STAGE_HARD, head_seq(s));
    }
    g_assert_cmpint(min_off, <, max_off);       /* jitter is applied */
    g_assert_cmpuint(rd64(s, IRQ_SENSOR_REG_CNT_LOST_OVERFLOW), ==, 0);
    sensor_stop(s);
}

/* Gaps of @n Poisson samples, measured from the RUN write */
static void poisson_run(Sensor *s, uint32_t seed, int n, int64_t *gaps)
{
    const int64_t period = 20000;
    int64_t last;
    int got = 0;

    wr32(s, IRQ_SENSOR_REG_CTRL, 0);
    wr32(s, IRQ_SENSOR_REG_SEED, seed);
    last = now(s);
    wr32(s, IRQ_SENSOR_REG_CTRL, IRQ_SENSOR_CTRL_RUN);
    while (got < n) {
        step(s, 5 * period);
        while (latch_count(s) && got < n) {
            int64_t t = rd64(s, IRQ_SENSOR_REG_SAMPLE_T_RAISE);

            gaps[got++] = t - last;
            last = t;
            ack(s, STAGE_HARD, head_seq(s));
        }
    }
    wr32(s, IRQ_SENSOR_REG_CTRL, 0);
    /* drain what is left */
    while (latch_count(s)) {
        ack(s, STAGE_HARD, head_seq(s));
    }
}

static void test_poisson(void)
{
    Sensor *s = sensor_start(NULL, NULL);
    Sensor *s2;
    enum { N = 50 };
    int64_t a[N], b[N], c[N], d[N], sum = 0;
    int i, same = 0;

    wr64(s, IRQ_SENSOR_REG_PERIOD, 20000);
    wr32(s, IRQ_SENSOR_REG_LATCH_DEPTH, 16);
    wr32(s, IRQ_SENSOR_REG_MODE, IRQ_SENSOR_MODE_POISSON);
    poisson_run(s, 42, N, a);
    poisson_run(s, 42, N, b);       /* RUN restarts the PRNG from SEED */
    poisson_run(s, 43, N, c);
    g_assert_cmpuint(rd64(s, IRQ_SENSOR_REG_CNT_LOST_OVERFLOW), ==, 0);
    for (i = 0; i < N; i++) {
        g_assert_cmpint(a[i], ==, b[i]);
        same += a[i] == c[i];
        sum += a[i];
    }
    g_assert_cmpint(same, <, N / 2);
    /* exponential gaps: mean near PERIOD, and they do vary */
    g_assert_cmpint(sum / N, >, 20000 / 2);
    g_assert_cmpint(sum / N, <, 20000 * 2);
    g_assert_cmpint(a[0], !=, a[1]);
    sensor_stop(s);

    /* the same seed in another QEMU gives the same gaps */
    s2 = sensor_start(NULL, NULL);
    wr64(s2, IRQ_SENSOR_REG_PERIOD, 20000);
    wr32(s2, IRQ_SENSOR_REG_LATCH_DEPTH, 16);
    wr32(s2, IRQ_SENSOR_REG_MODE, IRQ_SENSOR_MODE_POISSON);
    step(s2, 12345);
    poisson_run(s2, 42, N, d);
    for (i = 0; i < N; i++) {
        g_assert_cmpint(a[i], ==, d[i]);
    }
    sensor_stop(s2);
}

static void test_burst(void)
{
    Sensor *s = sensor_start(NULL, NULL);
    const int64_t period = 100000, gap = 1000;
    int64_t t0;
    int b, i;

    wr64(s, IRQ_SENSOR_REG_PERIOD, period);
    wr32(s, IRQ_SENSOR_REG_BURST_COUNT, 3);
    wr32(s, IRQ_SENSOR_REG_BURST_GAP, gap);
    wr32(s, IRQ_SENSOR_REG_LATCH_DEPTH, 16);
    wr32(s, IRQ_SENSOR_REG_MODE, IRQ_SENSOR_MODE_BURST);
    t0 = now(s);
    wr32(s, IRQ_SENSOR_REG_CTRL, IRQ_SENSOR_CTRL_RUN);
    step(s, period - 1);
    g_assert_cmpuint(latch_count(s), ==, 0);
    step(s, period + 2 * gap + 1);
    g_assert_cmpuint(latch_count(s), ==, 6);
    for (b = 1; b <= 2; b++) {
        for (i = 0; i < 3; i++) {
            g_assert_cmpuint(rd64(s, IRQ_SENSOR_REG_SAMPLE_T_RAISE), ==,
                             t0 + b * period + i * gap);
            ack(s, STAGE_HARD, head_seq(s));
        }
    }
    sensor_stop(s);
}

static void test_storm(void)
{
    Sensor *s = sensor_start(NULL, NULL);
    int64_t t0, t1, t;
    uint32_t seq;
    int i;

    wr32(s, IRQ_SENSOR_REG_BURST_GAP, 5000);
    wr32(s, IRQ_SENSOR_REG_MODE, IRQ_SENSOR_MODE_STORM);
    t0 = now(s);
    wr32(s, IRQ_SENSOR_REG_CTRL, IRQ_SENSOR_CTRL_RUN | IRQ_SENSOR_CTRL_IRQ_EN);
    /* the first sample comes with RUN */
    g_assert_cmpuint(head_seq(s), ==, 1);
    g_assert_cmpuint(rd64(s, IRQ_SENSOR_REG_SAMPLE_T_RAISE), ==, t0);
    /* nothing more until it is acked */
    step(s, 50000);
    g_assert_cmpuint(rd64(s, IRQ_SENSOR_REG_CNT_SAMPLES), ==, 1);
    t1 = now(s);
    ack(s, STAGE_HARD, 1);
    g_assert_cmpuint(rd64(s, IRQ_SENSOR_REG_STAMP(STAGE_HARD)), ==, t1);
    step(s, 4999);
    g_assert_cmpuint(latch_count(s), ==, 0);
    step(s, 1);
    g_assert_cmpuint(head_seq(s), ==, 2);
    g_assert_cmpuint(rd64(s, IRQ_SENSOR_REG_SAMPLE_T_RAISE), ==, t1 + 5000);

    /* BURST_GAP 0: back to back, still through the timer */
    wr32(s, IRQ_SENSOR_REG_BURST_GAP, 0);
    for (i = 0; i < 20; i++) {
        seq = head_seq(s);
        t = now(s);
        ack(s, STAGE_HARD, seq);
        step(s, 1);
        g_assert_cmpuint(head_seq(s), ==, seq + 1);
        g_assert_cmpuint(rd64(s, IRQ_SENSOR_REG_SAMPLE_T_RAISE), ==, t);
    }
    g_assert_cmpuint(rd64(s, IRQ_SENSOR_REG_CNT_SAMPLES), ==, 22);

    /* stopped: an ack raises nothing */
    wr32(s, IRQ_SENSOR_REG_CTRL, IRQ_SENSOR_CTRL_IRQ_EN);
    ack(s, STAGE_HARD, head_seq(s));
    step(s, 100000);
    g_assert_cmpuint(latch_count(s), ==, 0);
    g_assert_cmpuint(rd64(s, IRQ_SENSOR_REG_CNT_SAMPLES), ==, 22);

    /* a sample lost at its deadline also keeps the storm going */
    wr64(s, IRQ_SENSOR_REG_DEADLINE, 1000);
    wr32(s, IRQ_SENSOR_REG_BURST_GAP, 5000);
    t = now(s);
    wr32(s, IRQ_SENSOR_REG_CTRL, IRQ_SENSOR_CTRL_RUN | IRQ_SENSOR_CTRL_IRQ_EN);
    g_assert_cmpuint(head_seq(s), ==, 23);
    step(s, 1000);
    g_assert_cmpuint(latch_count(s), ==, 0);
    g_assert_cmpuint(rd64(s, IRQ_SENSOR_REG_CNT_LOST_DEADLINE), ==, 1);
    step(s, 4999);
    g_assert_cmpuint(latch_count(s), ==, 0);
    step(s, 1);
    g_assert_cmpuint(head_seq(s), ==, 24);
    g_assert_cmpuint(rd64(s, IRQ_SENSOR_REG_SAMPLE_T_RAISE), ==, t + 6000);
    sensor_stop(s);
}

static void test_latch_overflow(void)
{
    Sensor *s = sensor_start(NULL, NULL);
    int64_t t0 = now(s);
    int i;

    wr32(s, IRQ_SENSOR_REG_LATCH_DEPTH, 3);
    for (i = 0; i < 5; i++) {
        fire(s);
        step(s, 10);
    }
    g_assert_cmpuint(latch_count(s), ==, 3);
    g_assert_cmpuint(head_seq(s), ==, 3);
    g_assert_cmpuint(rd64(s, IRQ_SENSOR_REG_SAMPLE_T_RAISE), ==, t0 + 20);
    g_assert_cmpuint(rd64(s, IRQ_SENSOR_REG_CNT_LOST_OVERFLOW), ==, 2);
    g_assert_cmphex(rd32(s, IRQ_SENSOR_REG_STATUS), ==,
                    IRQ_SENSOR_STATUS_SAMPLE | IRQ_SENSOR_STATUS_LOST);
    /* a lost sample cannot be acked */
    ack(s, STAGE_HARD, 1);
    g_assert_cmpuint(rd64(s, IRQ_SENSOR_REG_CNT_BAD_ACKS), ==, 1);

    /* shrinking the latch pushes out the oldest */
    wr32(s, IRQ_SENSOR_REG_LATCH_DEPTH, 1);
    g_assert_cmpuint(latch_count(s), ==, 1);
    g_assert_cmpuint(head_seq(s), ==, 5);
    g_assert_cmpuint(rd64(s, IRQ_SENSOR_REG_CNT_LOST_OVERFLOW), ==, 4);
    ack(s, STAGE_HARD, 5);
    g_assert_cmpuint(latch_count(s), ==, 0);
    g_assert_cmpuint(stats64(s, STAGE_HARD, IRQ_SENSOR_STATS_COUNT), ==, 1);

    /* LOST is write-1-to-clear */
    wr32(s, IRQ_SENSOR_REG_STATUS, IRQ_SENSOR_STATUS_LOST);
    g_assert_cmphex(rd32(s, IRQ_SENSOR_REG_STATUS), ==, 0);
    sensor_stop(s);
}

static void test_latch_deadline(void)
{
    Sensor *s = sensor_start(NULL, NULL);
    int64_t t0;

    wr32(s, IRQ_SENSOR_REG_LATCH_DEPTH, 4);
    wr64(s, IRQ_SENSOR_REG_DEADLINE, 10000);
    t0 = now(s);
    fire(s);                    /* seq 1, expires at t0 + 10000 */
    step(s, 4000);
    fire(s);                    /* seq 2, expires at t0 + 14000 */
    step(s, 5999);
    g_assert_cmpuint(latch_count(s), ==, 2);
    g_assert_cmphex(rd32(s, IRQ_SENSOR_REG_STATUS), ==,
                    IRQ_SENSOR_STATUS_SAMPLE);
    step(s, 1);
    g_assert_cmpuint(latch_count(s), ==, 1);
    g_assert_cmpuint(head_seq(s), ==, 2);
    g_assert_cmpuint(rd64(s, IRQ_SENSOR_REG_CNT_LOST_DEADLINE), ==, 1);
    g_assert_cmphex(rd32(s, IRQ_SENSOR_REG_STATUS), ==,
                    IRQ_SENSOR_STATUS_SAMPLE | IRQ_SENSOR_STATUS_LOST);
    ack(s, STAGE_HARD, 1);      /* too late */
    g_assert_cmpuint(rd64(s, IRQ_SENSOR_REG_CNT_BAD_ACKS), ==, 1);
    step(s, 3999);
    ack(s, STAGE_HARD, 2);      /* 1 ns before its deadline */
    g_assert_cmpuint(stats64(s, STAGE_HARD, IRQ_SENSOR_STATS_MAX), ==, 9999);
    g_assert_cmpuint(rd64(s, IRQ_SENSOR_REG_STAMP(STAGE_HARD)), ==,
                     t0 + 13999);
    g_assert_cmpuint(rd64(s, IRQ_SENSOR_REG_CNT_LOST_DEADLINE), ==, 1);

    /* a shorter deadline expires a waiting sample at once */
    fire(s);
    step(s, 500);
    wr64(s, IRQ_SENSOR_REG_DEADLINE, 400);
    g_assert_cmpuint(latch_count(s), ==, 0);
    g_assert_cmpuint(rd64(s, IRQ_SENSOR_REG_CNT_LOST_DEADLINE), ==, 2);

    /* deadline 0: samples wait forever */
    wr64(s, IRQ_SENSOR_REG_DEADLINE, 0);
    fire(s);
    step(s, 1000 * 1000 * 1000);
    g_assert_cmpuint(latch_count(s), ==, 1);
    sensor_stop(s);
}

static void test_ack_stages(void)
{
    Sensor *s = sensor_start(NULL, NULL);
    int64_t t0, t1;
    QObject *obj;
    QDict *js, *stages, *hard;
    QList *hl;
    g_autofree char *json = NULL;

    t0 = now(s);
    fire(s);
    step(s, 1500);
    ack(s, STAGE_HARD, 1);
    step(s, 2000);
    ack(s, STAGE_THREAD, 1);
    step(s, 10000);
    ack(s, STAGE_USER, 1);
    g_assert_cmpuint(rd64(s, IRQ_SENSOR_REG_STAMP(STAGE_HARD)), ==, t0 + 1500);
    g_assert_cmpuint(rd64(s, IRQ_SENSOR_REG_STAMP(STAGE_THREAD)), ==,
                     t0 + 3500);
    g_assert_cmpuint(rd64(s, IRQ_SENSOR_REG_STAMP(STAGE_USER)), ==,
                     t0 + 13500);

    t1 = now(s);
    fire(s);
    step(s, 100);
    ack(s, STAGE_HARD, 2);
    step(s, 100);
    ack(s, STAGE_THREAD, 2);
    step(s, 100);
    ack(s, STAGE_USER, 2);
    g_assert_cmpuint(rd64(s, IRQ_SENSOR_REG_STAMP(STAGE_USER)), ==, t1 + 300);

    g_assert_cmpuint(stats64(s, STAGE_HARD, IRQ_SENSOR_STATS_COUNT), ==, 2);
    g_assert_cmpuint(stats64(s, STAGE_HARD, IRQ_SENSOR_STATS_MIN), ==, 100);
    g_assert_cmpuint(stats64(s, STAGE_HARD, IRQ_SENSOR_STATS_MAX), ==, 1500);
    g_assert_cmpuint(stats64(s, STAGE_HARD, IRQ_SENSOR_STATS_SUM), ==, 1600);
    g_assert_cmpuint(hist(s, STAGE_HARD, 6), ==, 1);     /* 100: [64,128) */
    g_assert_cmpuint(hist(s, STAGE_HARD, 10), ==, 1);    /* 1500 */
    g_assert_cmpuint(stats64(s, STAGE_THREAD, IRQ_SENSOR_STATS_MIN), ==, 200);
    g_assert_cmpuint(stats64(s, STAGE_THREAD, IRQ_SENSOR_STATS_MAX), ==,
                     3500);
    g_assert_cmpuint(stats64(s, STAGE_THREAD, IRQ_SENSOR_STATS_SUM), ==,
                     3700);
    g_assert_cmpuint(hist(s, STAGE_THREAD, 7), ==, 1);
    g_assert_cmpuint(hist(s, STAGE_THREAD, 11), ==, 1);
    g_assert_cmpuint(stats64(s, STAGE_USER, IRQ_SENSOR_STATS_COUNT), ==, 2);
    g_assert_cmpuint(stats64(s, STAGE_USER, IRQ_SENSOR_STATS_MIN), ==, 300);
    g_assert_cmpuint(stats64(s, STAGE_USER, IRQ_SENSOR_STATS_MAX), ==, 13500);
    g_assert_cmpuint(stats64(s, STAGE_USER, IRQ_SENSOR_STATS_SUM), ==, 13800);
    g_assert_cmpuint(hist(s, STAGE_USER, 8), ==, 1);
    g_assert_cmpuint(hist(s, STAGE_USER, 13), ==, 1);

    /* 0 ns goes to bucket 0, >= 2^32 ns to bucket 31 */
    fire(s);
    ack(s, STAGE_HARD, 3);
    fire(s);
    step(s, 5000000000LL);
    ack(s, STAGE_HARD, 4);
    g_assert_cmpuint(hist(s, STAGE_HARD, 0), ==, 1);
    g_assert_cmpuint(hist(s, STAGE_HARD, 31), ==, 1);
    g_assert_cmpuint(stats64(s, STAGE_HARD, IRQ_SENSOR_STATS_MIN), ==, 0);
    g_assert_cmpuint(stats64(s, STAGE_HARD, IRQ_SENSOR_STATS_MAX), ==,
                     5000000000ULL);

    /* two 4-byte reads (low first) give the 8-byte value */
    g_assert_cmpuint(rd32(s, IRQ_SENSOR_REG_STATS(0) + IRQ_SENSOR_STATS_SUM) |
                     (uint64_t)rd32(s, IRQ_SENSOR_REG_STATS(0) +
                                    IRQ_SENSOR_STATS_SUM + 4) << 32, ==,
                     5000001600ULL);

    /* the same numbers over QOM */
    json = qom_get_str(s, "stats");
    obj = qobject_from_json(json, &error_abort);
    js = qobject_to(QDict, obj);
    g_assert(js);
    g_assert_cmpint(qdict_get_int(js, "samples"), ==, 4);
    g_assert_cmpint(qdict_get_int(js, "bad-acks"), ==, 0);
    stages = qdict_get_qdict(js, "stages");
    hard = qdict_get_qdict(stages, "hard");
    g_assert_cmpint(qdict_get_int(hard, "count"), ==, 4);
    g_assert_cmpint(qdict_get_int(hard, "max"), ==, 5000000000LL);
    g_assert_cmpint(qdict_get_int(hard, "sum"), ==, 5000001600LL);
    hl = qdict_get_qlist(hard, "hist");
    g_assert_cmpuint(qlist_size(hl), ==, IRQ_SENSOR_HIST_BUCKETS);
    g_assert_cmpint(qdict_get_int(qdict_get_qdict(stages, "user"), "sum"),
                    ==, 13800);
    qobject_unref(obj);
    g_assert_cmpuint(qom_get_uint(s, "samples"), ==, 4);

    /* CLEAR_STATS zeroes counters and stats */
    wr32(s, IRQ_SENSOR_REG_CTRL, IRQ_SENSOR_CTRL_CLEAR_STATS);
    g_assert_cmpuint(rd64(s, IRQ_SENSOR_REG_CNT_SAMPLES), ==, 0);
    g_assert_cmpuint(stats64(s, STAGE_HARD, IRQ_SENSOR_STATS_COUNT), ==, 0);
    g_assert_cmpuint(stats64(s, STAGE_USER, IRQ_SENSOR_STATS_SUM), ==, 0);
    g_assert_cmpuint(hist(s, STAGE_HARD, 31), ==, 0);
    sensor_stop(s);
}

static void test_ack_bad(void)
{
    Sensor *s = sensor_start(NULL, NULL);
    int i;

    wr32(s, IRQ_SENSOR_REG_LATCH_DEPTH, 2);
    fire(s);
    fire(s);
    ack(s, STAGE_HARD, 2);          /* not the head */
    ack(s, STAGE_HARD, 99);         /* unknown */
    ack(s, STAGE_HARD, 0);          /* never a sequence */
    ack(s, STAGE_THREAD, 1);        /* before hard */
    ack(s, STAGE_USER, 1);          /* before thread */
    g_assert_cmpuint(rd64(s, IRQ_SENSOR_REG_CNT_BAD_ACKS), ==, 5);
    g_assert_cmpuint(latch_count(s), ==, 2);

    ack(s, STAGE_HARD, 1);
    ack(s, STAGE_HARD, 1);          /* duplicate */
    ack(s, STAGE_USER, 1);          /* thread missing */
    ack(s, STAGE_THREAD, 1);
    ack(s, STAGE_THREAD, 1);        /* duplicate */
    ack(s, STAGE_USER, 1);
    ack(s, STAGE_USER, 1);          /* duplicate */
    g_assert_cmpuint(rd64(s, IRQ_SENSOR_REG_CNT_BAD_ACKS), ==, 9);
    for (i = 0; i < IRQ_SENSOR_NR_STAGES; i++) {
        g_assert_cmpuint(stats64(s, i, IRQ_SENSOR_STATS_COUNT), ==, 1);
    }
    g_assert_cmpuint(head_seq(s), ==, 2);
    ack(s, STAGE_HARD, 2);

    /*
     * Only the last 1024 samples are remembered: an ack of an older one is
     * stale (raised, but no longer measurable), not bad; a sequence never
     * raised stays bad.
     */
    for (i = 0; i < 1030; i++) {
        fire(s);
    }
    ack(s, STAGE_THREAD, 2);
    ack(s, STAGE_USER, 2);
    g_assert_cmpuint(rd64(s, IRQ_SENSOR_REG_CNT_STALE_ACKS), ==, 2);
    g_assert_cmpuint(qom_get_uint(s, "stale-acks"), ==, 2);
    ack(s, STAGE_THREAD, 1033);     /* not raised yet */
    ack(s, STAGE_THREAD, 0xffffff00); /* nor this, whose slot holds 768 */
    g_assert_cmpuint(rd64(s, IRQ_SENSOR_REG_CNT_BAD_ACKS), ==, 11);
    g_assert_cmpuint(rd64(s, IRQ_SENSOR_REG_CNT_STALE_ACKS), ==, 2);
    g_assert_cmpuint(stats64(s, STAGE_THREAD, IRQ_SENSOR_STATS_COUNT), ==, 1);
    g_assert_cmpuint(qom_get_uint(s, "bad-acks"), ==, 11);
    sensor_stop(s);
}

static void test_spurious(void)
{
    Sensor *s = sensor_start("irq-mode=intx", NULL);
    const uint64_t period = 10000;

    wr64(s, IRQ_SENSOR_REG_PERIOD, period);
    wr32(s, IRQ_SENSOR_REG_SPURIOUS_EVERY, 3);
    wr32(s, IRQ_SENSOR_REG_LATCH_DEPTH, 16);
    wr32(s, IRQ_SENSOR_REG_MODE, IRQ_SENSOR_MODE_PERIODIC);
    wr32(s, IRQ_SENSOR_REG_CTRL, IRQ_SENSOR_CTRL_RUN | IRQ_SENSOR_CTRL_IRQ_EN);
    step(s, 2 * period);
    g_assert_cmpuint(latch_count(s), ==, 2);
    g_assert_cmphex(rd32(s, IRQ_SENSOR_REG_STATUS), ==,
                    IRQ_SENSOR_STATUS_SAMPLE);
    ack(s, STAGE_HARD, 1);
    ack(s, STAGE_HARD, 2);
    g_assert(!intx(s));
    step(s, period);            /* the 3rd event: no sample */
    g_assert_cmpuint(latch_count(s), ==, 0);
    g_assert_cmphex(rd32(s, IRQ_SENSOR_REG_STATUS), ==,
                    IRQ_SENSOR_STATUS_SPURIOUS);
    g_assert(intx(s));
    g_assert_cmpuint(rd64(s, IRQ_SENSOR_REG_CNT_SPURIOUS), ==, 1);
    g_assert_cmpuint(rd64(s, IRQ_SENSOR_REG_CNT_SAMPLES), ==, 2);
    g_assert_cmpuint(rd64(s, IRQ_SENSOR_REG_CNT_IRQS), ==, 3);
    wr32(s, IRQ_SENSOR_REG_STATUS, IRQ_SENSOR_STATUS_SPURIOUS);
    g_assert(!intx(s));
    g_assert_cmphex(rd32(s, IRQ_SENSOR_REG_STATUS), ==, 0);
    step(s, 3 * period);        /* events 4, 5, 6 */
    g_assert_cmpuint(latch_count(s), ==, 2);
    g_assert_cmpuint(head_seq(s), ==, 3);
    g_assert_cmpuint(rd64(s, IRQ_SENSOR_REG_CNT_SPURIOUS), ==, 2);
    g_assert_cmpuint(qom_get_uint(s, "spurious"), ==, 2);
    sensor_stop(s);
}

static void test_dropped(void)
{
    Sensor *s = sensor_start("irq-mode=intx", NULL);

    wr32(s, IRQ_SENSOR_REG_LATCH_DEPTH, 4);
    wr32(s, IRQ_SENSOR_REG_DROP_EVERY, 2);
    wr32(s, IRQ_SENSOR_REG_CTRL, IRQ_SENSOR_CTRL_IRQ_EN);
    fire(s);
    g_assert(intx(s));
    ack(s, STAGE_HARD, 1);
    g_assert(!intx(s));
    fire(s);                    /* seq 2: latched, but no interrupt */
    g_assert(!intx(s));
    g_assert_cmpuint(head_seq(s), ==, 2);
    g_assert_cmphex(rd32(s, IRQ_SENSOR_REG_STATUS), ==,
                    IRQ_SENSOR_STATUS_SAMPLE);
    g_assert_cmpuint(rd64(s, IRQ_SENSOR_REG_CNT_DROPPED), ==, 1);
    g_assert_cmpuint(rd64(s, IRQ_SENSOR_REG_CNT_IRQS), ==, 1);
    fire(s);                    /* seq 3 interrupts again */
    g_assert(intx(s));
    ack(s, STAGE_HARD, 2);
    g_assert(intx(s));
    ack(s, STAGE_HARD, 3);
    g_assert(!intx(s));
    g_assert_cmpuint(rd64(s, IRQ_SENSOR_REG_CNT_SAMPLES), ==, 3);
    g_assert_cmpuint(rd64(s, IRQ_SENSOR_REG_CNT_IRQS), ==, 2);
    g_assert_cmpuint(qom_get_uint(s, "dropped"), ==, 1);
    sensor_stop(s);
}

static void test_intx(void)
{
    Sensor *s = sensor_start("irq-mode=intx", NULL);
    uint16_t cmd;

    wr32(s, IRQ_SENSOR_REG_LATCH_DEPTH, 2);
    fire(s);
    g_assert(!intx(s));         /* IRQ_EN off */
    wr32(s, IRQ_SENSOR_REG_CTRL, IRQ_SENSOR_CTRL_IRQ_EN);
    g_assert(intx(s));          /* level follows the pending sample */
    wr32(s, IRQ_SENSOR_REG_CTRL, 0);
    g_assert(!intx(s));
    wr32(s, IRQ_SENSOR_REG_CTRL, IRQ_SENSOR_CTRL_IRQ_EN);
    fire(s);
    g_assert(intx(s));
    ack(s, STAGE_HARD, 1);
    g_assert(intx(s));          /* seq 2 still waits */
    ack(s, STAGE_HARD, 2);
    g_assert(!intx(s));

    /* the PCI INTx-disable bit masks the line */
    fire(s);
    g_assert(intx(s));
    cmd = qpci_config_readw(s->dev, PCI_COMMAND);
    qpci_config_writew(s->dev, PCI_COMMAND, cmd | PCI_COMMAND_INTX_DISABLE);
    g_assert(!intx(s));
    qpci_config_writew(s->dev, PCI_COMMAND, cmd);
    g_assert(intx(s));
    ack(s, STAGE_HARD, 3);
    g_assert(!intx(s));
    sensor_stop(s);
}

static void test_stuck_intx(void)
{
    Sensor *s = sensor_start(NULL, NULL);

    /* independent of irq-mode, IRQ_EN and MSI-X */
    qpci_msix_enable(s->dev);
    g_assert(!intx(s));
    qom_set_ok(s, "stuck-intx", "true");
    g_assert(intx(s));
    g_assert_cmphex(rd32(s, IRQ_SENSOR_REG_FAULTS), ==,
                    IRQ_SENSOR_FAULT_STUCK_INTX);
    g_assert(qom_get_bool(s, "stuck-intx"));
    wr32(s, IRQ_SENSOR_REG_FAULTS, 0);
    g_assert(!intx(s));
    g_assert(!qom_get_bool(s, "stuck-intx"));
    wr32(s, IRQ_SENSOR_REG_FAULTS, IRQ_SENSOR_FAULT_STUCK_INTX);
    g_assert(intx(s));
    ack(s, STAGE_HARD, 1);      /* acks do not release it */
    g_assert(intx(s));
    wr32(s, IRQ_SENSOR_REG_CTRL, IRQ_SENSOR_CTRL_RESET);
    g_assert(!intx(s));
    sensor_stop(s);
}

static void test_msix(void)
{
    Sensor *s = sensor_start(NULL, NULL);
    uint8_t cap = qpci_find_capability(s->dev, PCI_CAP_ID_MSIX, 0);
    uint16_t flags;

    qpci_msix_enable(s->dev);
    msix_entry_setup(s);
    g_assert(qpci_msix_masked(s->dev, 0));      /* masked after reset */
    wr32(s, IRQ_SENSOR_REG_CTRL, IRQ_SENSOR_CTRL_IRQ_EN);

    /* masked: the PBA bit is set, nothing is delivered */
    msg_mem_clear(s);
    fire(s);
    g_assert(msix_pending(s));
    g_assert_cmphex(msg_mem(s), ==, 0);
    g_assert(!intx(s));

    /* unmasking delivers the pending message */
    msix_mask(s, false);
    g_assert_cmphex(msg_mem(s), ==, MSG_DATA);
    g_assert(!msix_pending(s));

    /* unmasked: one message per raise */
    msg_mem_clear(s);
    fire(s);
    g_assert_cmphex(msg_mem(s), ==, MSG_DATA);
    g_assert_cmpuint(rd64(s, IRQ_SENSOR_REG_CNT_IRQS), ==, 2);

    /* IRQ_EN off: no message */
    wr32(s, IRQ_SENSOR_REG_CTRL, 0);
    msg_mem_clear(s);
    fire(s);
    g_assert_cmphex(msg_mem(s), ==, 0);
    g_assert(!msix_pending(s));
    wr32(s, IRQ_SENSOR_REG_CTRL, IRQ_SENSOR_CTRL_IRQ_EN);

    /* dropped sample (seq 4): no message; seq 5 again */
    wr32(s, IRQ_SENSOR_REG_DROP_EVERY, 2);
    fire(s);
    g_assert_cmpuint(head_seq(s), ==, 4);
    g_assert_cmphex(msg_mem(s), ==, 0);
    fire(s);
    g_assert_cmphex(msg_mem(s), ==, MSG_DATA);
    wr32(s, IRQ_SENSOR_REG_DROP_EVERY, 0);

    /* function mask: pending, delivered on unmask */
    flags = qpci_config_readw(s->dev, cap + PCI_MSIX_FLAGS);
    qpci_config_writew(s->dev, cap + PCI_MSIX_FLAGS,
                       flags | PCI_MSIX_FLAGS_MASKALL);
    msg_mem_clear(s);
    fire(s);
    g_assert(msix_pending(s));
    g_assert_cmphex(msg_mem(s), ==, 0);
    qpci_config_writew(s->dev, cap + PCI_MSIX_FLAGS, flags);
    g_assert_cmphex(msg_mem(s), ==, MSG_DATA);
    g_assert(!msix_pending(s));

    /* MSI-X disabled: a waiting sample is signalled on INTx */
    g_assert(!intx(s));
    qpci_msix_disable(s->dev);
    g_assert(intx(s));
    ack(s, STAGE_HARD, head_seq(s));
    g_assert(!intx(s));
    sensor_stop(s);
}

static void test_msi(void)
{
    Sensor *s = sensor_start("irq-mode=msi", NULL);
    uint8_t cap = qpci_find_capability(s->dev, PCI_CAP_ID_MSI, 0);
    uint16_t flags;

    g_assert_cmpuint(cap, !=, 0);
    flags = qpci_config_readw(s->dev, cap + PCI_MSI_FLAGS);
    g_assert(flags & PCI_MSI_FLAGS_64BIT);
    g_assert(flags & PCI_MSI_FLAGS_MASKBIT);
    qpci_config_writel(s->dev, cap + PCI_MSI_ADDRESS_LO, MSG_ADDR);
    qpci_config_writel(s->dev, cap + PCI_MSI_ADDRESS_HI, 0);
    qpci_config_writew(s->dev, cap + PCI_MSI_DATA_64, MSG_DATA);
    qpci_config_writew(s->dev, cap + PCI_MSI_FLAGS,
                       flags | PCI_MSI_FLAGS_ENABLE);
    wr32(s, IRQ_SENSOR_REG_CTRL, IRQ_SENSOR_CTRL_IRQ_EN);
    wr32(s, IRQ_SENSOR_REG_LATCH_DEPTH, 4);

    msg_mem_clear(s);
    fire(s);
    g_assert_cmphex(msg_mem(s), ==, MSG_DATA);
    g_assert(!intx(s));

    /* per-vector mask: pending bit, delivered on unmask */
    qpci_config_writel(s->dev, cap + PCI_MSI_MASK_64, 1);
    msg_mem_clear(s);
    fire(s);
    g_assert_cmphex(msg_mem(s), ==, 0);
    g_assert_cmphex(qpci_config_readl(s->dev, cap + PCI_MSI_PENDING_64), ==,
                    1);
    qpci_config_writel(s->dev, cap + PCI_MSI_MASK_64, 0);
    g_assert_cmphex(msg_mem(s), ==, MSG_DATA);
    g_assert_cmphex(qpci_config_readl(s->dev, cap + PCI_MSI_PENDING_64), ==,
                    0);

    /* MSI disabled: INTx takes over */
    qpci_config_writew(s->dev, cap + PCI_MSI_FLAGS, flags);
    g_assert(intx(s));
    ack(s, STAGE_HARD, 1);
    ack(s, STAGE_HARD, 2);
    g_assert(!intx(s));
    sensor_stop(s);
}

static void clock_sync(Sensor *s, int64_t *virt, int64_t *host)
{
    g_autofree char *json = qom_get_str(s, "clock-sync");
    QObject *obj = qobject_from_json(json, &error_abort);
    QDict *d = qobject_to(QDict, obj);

    g_assert(d);
    *virt = qdict_get_int(d, "virtual");
    *host = qdict_get_int(d, "host");
    qobject_unref(obj);
}

/* clock-sync pairs the virtual clock with the host's monotonic clock */
static void test_clock_sync(void)
{
    Sensor *s = sensor_start(NULL, NULL);
    int64_t v0, h0, v1, h1;

    clock_sync(s, &v0, &h0);
    g_assert_cmpint(v0, ==, now(s));
    g_assert_cmpint(h0, >, 0);
    step(s, 12345);
    clock_sync(s, &v1, &h1);
    /* under qtest the virtual clock moves only when stepped */
    g_assert_cmpint(v1 - v0, ==, 12345);
    g_assert_cmpint(h1, >=, h0);
    sensor_stop(s);
}

static void test_qom(void)
{
    Sensor *s = sensor_start("irq-mode=intx", NULL);
    static const char *const props[] = {
        "mode", "period-ns", "jitter-ns", "burst-count", "burst-gap-ns",
        "seed", "deadline-ns", "latch-depth", "spurious-every", "drop-every",
        "stuck-intx", "irq-enable", "run", "fire", "clear-stats", "samples",
        "irqs", "lost-deadline", "lost-overflow", "spurious", "dropped",
        "bad-acks", "host-late", "stale-acks", "stats", "clock-sync",
        "irq-mode", "log", "late-skip-ns",
    };
    g_autofree char *mode = NULL;
    g_autofree char *hmp = NULL;
    QDict *resp;
    QList *list;
    QListEntry *e;
    int i, found = 0;

    /* every property is listed with a description */
    resp = qtest_qmp(s->qts, "{'execute':'device-list-properties',"
                     "'arguments':{'typename':'irq-sensor'}}");
    list = qdict_get_qlist(resp, "return");
    QLIST_FOREACH_ENTRY(list, e) {
        QDict *p = qobject_to(QDict, qlist_entry_obj(e));

        for (i = 0; i < ARRAY_SIZE(props); i++) {
            if (!strcmp(qdict_get_str(p, "name"), props[i])) {
                g_assert(qdict_haskey(p, "description"));
                found++;
            }
        }
    }
    g_assert_cmpint(found, ==, ARRAY_SIZE(props));
    qobject_unref(resp);

    /* host and guest see the same knobs */
    qom_set_ok(s, "period-ns", "250000");
    g_assert_cmpuint(rd64(s, IRQ_SENSOR_REG_PERIOD), ==, 250000);
    wr64(s, IRQ_SENSOR_REG_PERIOD, 300000);
    g_assert_cmpuint(qom_get_uint(s, "period-ns"), ==, 300000);
    qom_set_ok(s, "mode", "\"burst\"");
    g_assert_cmpuint(rd32(s, IRQ_SENSOR_REG_MODE), ==, IRQ_SENSOR_MODE_BURST);
    wr32(s, IRQ_SENSOR_REG_MODE, IRQ_SENSOR_MODE_STORM);
    mode = qom_get_str(s, "mode");
    g_assert_cmpstr(mode, ==, "storm");
    qom_set_ok(s, "jitter-ns", "77");
    g_assert_cmpuint(rd32(s, IRQ_SENSOR_REG_JITTER), ==, 77);
    qom_set_ok(s, "burst-count", "5");
    g_assert_cmpuint(rd32(s, IRQ_SENSOR_REG_BURST_COUNT), ==, 5);
    qom_set_ok(s, "burst-gap-ns", "1234");
    g_assert_cmpuint(rd32(s, IRQ_SENSOR_REG_BURST_GAP), ==, 1234);
    qom_set_ok(s, "seed", "99");
    g_assert_cmpuint(rd32(s, IRQ_SENSOR_REG_SEED), ==, 99);
    qom_set_ok(s, "deadline-ns", "5000000000");
    g_assert_cmpuint(rd64(s, IRQ_SENSOR_REG_DEADLINE), ==, 5000000000ULL);
    qom_set_ok(s, "latch-depth", "16");
    g_assert_cmpuint(rd32(s, IRQ_SENSOR_REG_LATCH_DEPTH), ==, 16);
    qom_set_ok(s, "spurious-every", "7");
    g_assert_cmpuint(rd32(s, IRQ_SENSOR_REG_SPURIOUS_EVERY), ==, 7);
    wr32(s, IRQ_SENSOR_REG_DROP_EVERY, 8);
    g_assert_cmpuint(qom_get_uint(s, "drop-every"), ==, 8);
    wr32(s, IRQ_SENSOR_REG_DROP_EVERY, 0);

    /* bad values are refused with an error and change nothing */
    qom_set_fails(s, "period-ns", "999");
    qom_set_fails(s, "period-ns", "0");
    qom_set_fails(s, "latch-depth", "0");
    qom_set_fails(s, "latch-depth", "17");
    qom_set_fails(s, "burst-count", "0");
    qom_set_fails(s, "mode", "\"bogus\"");
    qom_set_fails(s, "jitter-ns", "4294967296");
    qom_set_fails(s, "samples", "3");
    g_assert_cmpuint(rd64(s, IRQ_SENSOR_REG_PERIOD), ==, 300000);
    g_assert_cmpuint(rd32(s, IRQ_SENSOR_REG_LATCH_DEPTH), ==, 16);
    g_assert_cmpuint(rd32(s, IRQ_SENSOR_REG_MODE), ==, IRQ_SENSOR_MODE_STORM);

    /* HMP qom-set fire raises an interrupt */
    wr32(s, IRQ_SENSOR_REG_MODE, IRQ_SENSOR_MODE_MANUAL);
    qom_set_ok(s, "irq-enable", "true");
    g_assert_cmphex(rd32(s, IRQ_SENSOR_REG_CTRL), ==, IRQ_SENSOR_CTRL_IRQ_EN);
    g_assert(!intx(s));
    hmp = qtest_hmp(s->qts, "qom-set %s fire true", SENSOR_PATH);
    g_assert_cmpstr(hmp, ==, "");
    g_assert(intx(s));
    g_assert_cmpuint(head_seq(s), ==, 1);
    g_assert_cmpuint(qom_get_uint(s, "samples"), ==, 1);
    g_assert_cmpuint(qom_get_uint(s, "irqs"), ==, 1);
    g_assert(!qom_get_bool(s, "fire"));
    ack(s, STAGE_HARD, 1);
    g_assert(!intx(s));

    /* run from the host */
    qom_set_ok(s, "mode", "\"periodic\"");
    qom_set_ok(s, "period-ns", "10000");
    qom_set_ok(s, "jitter-ns", "0");
    qom_set_ok(s, "run", "true");
    g_assert_cmphex(rd32(s, IRQ_SENSOR_REG_CTRL), ==,
                    IRQ_SENSOR_CTRL_IRQ_EN | IRQ_SENSOR_CTRL_RUN);
    step(s, 10000);
    g_assert_cmpuint(head_seq(s), ==, 2);
    g_assert(intx(s));
    wr32(s, IRQ_SENSOR_REG_CTRL, IRQ_SENSOR_CTRL_IRQ_EN);
    g_assert(!qom_get_bool(s, "run"));
    g_assert(qom_get_bool(s, "irq-enable"));

    /* read-only counters and clear-stats */
    g_assert_cmpuint(qom_get_uint(s, "lost-overflow"), ==, 0);
    g_assert_cmpuint(qom_get_uint(s, "lost-deadline"), ==, 0);
    qom_set_ok(s, "clear-stats", "true");
    g_assert_cmpuint(qom_get_uint(s, "samples"), ==, 0);
    g_assert_cmpuint(rd64(s, IRQ_SENSOR_REG_CNT_IRQS), ==, 0);
    sensor_stop(s);
}

static void check_defaults(Sensor *s)
{
    int i;

    g_assert_cmphex(rd32(s, IRQ_SENSOR_REG_CTRL), ==, 0);
    g_assert_cmpuint(rd32(s, IRQ_SENSOR_REG_MODE), ==,
                     IRQ_SENSOR_MODE_MANUAL);
    g_assert_cmpuint(rd64(s, IRQ_SENSOR_REG_PERIOD), ==, 1000000);
    g_assert_cmpuint(rd32(s, IRQ_SENSOR_REG_JITTER), ==, 0);
    g_assert_cmpuint(rd32(s, IRQ_SENSOR_REG_BURST_COUNT), ==, 1);
    g_assert_cmpuint(rd32(s, IRQ_SENSOR_REG_BURST_GAP), ==, 1000);
    g_assert_cmpuint(rd32(s, IRQ_SENSOR_REG_SEED), ==, 1);
    g_assert_cmpuint(rd64(s, IRQ_SENSOR_REG_DEADLINE), ==, 0);
    g_assert_cmpuint(rd32(s, IRQ_SENSOR_REG_LATCH_DEPTH), ==, 1);
    g_assert_cmphex(rd32(s, IRQ_SENSOR_REG_FAULTS), ==, 0);
    g_assert_cmpuint(rd32(s, IRQ_SENSOR_REG_SPURIOUS_EVERY), ==, 0);
    g_assert_cmpuint(rd32(s, IRQ_SENSOR_REG_DROP_EVERY), ==, 0);
    g_assert_cmphex(rd32(s, IRQ_SENSOR_REG_STATUS), ==, 0);
    g_assert_cmpuint(latch_count(s), ==, 0);
    g_assert_cmpuint(head_seq(s), ==, 0);
    for (i = IRQ_SENSOR_REG_CNT_SAMPLES; i <= IRQ_SENSOR_REG_CNT_BAD_ACKS;
         i += 8) {
        g_assert_cmpuint(rd64(s, i), ==, 0);
    }
    for (i = 0; i < IRQ_SENSOR_NR_STAGES; i++) {
        g_assert_cmpuint(stats64(s, i, IRQ_SENSOR_STATS_COUNT), ==, 0);
        g_assert_cmpuint(stats64(s, i, IRQ_SENSOR_STATS_SUM), ==, 0);
        g_assert_cmpuint(hist(s, i, 10), ==, 0);
    }
    g_assert(!intx(s));
    g_assert(!qom_get_bool(s, "run"));
    g_assert(!qom_get_bool(s, "irq-enable"));
}

static void mess_up(Sensor *s)
{
    wr64(s, IRQ_SENSOR_REG_PERIOD, 5000);
    wr32(s, IRQ_SENSOR_REG_JITTER, 100);
    wr32(s, IRQ_SENSOR_REG_BURST_COUNT, 4);
    wr32(s, IRQ_SENSOR_REG_BURST_GAP, 2000);
    wr32(s, IRQ_SENSOR_REG_SEED, 9);
    wr64(s, IRQ_SENSOR_REG_DEADLINE, 1000000);
    wr32(s, IRQ_SENSOR_REG_LATCH_DEPTH, 8);
    wr32(s, IRQ_SENSOR_REG_SPURIOUS_EVERY, 3);
    wr32(s, IRQ_SENSOR_REG_DROP_EVERY, 5);
    wr32(s, IRQ_SENSOR_REG_MODE, IRQ_SENSOR_MODE_PERIODIC);
    wr32(s, IRQ_SENSOR_REG_CTRL, IRQ_SENSOR_CTRL_IRQ_EN | IRQ_SENSOR_CTRL_RUN);
    step(s, 20000);
    g_assert_cmpuint(latch_count(s), >, 0);
    ack(s, STAGE_HARD, head_seq(s));
    ack(s, STAGE_HARD, 12345);
    fire(s);
    wr32(s, IRQ_SENSOR_REG_FAULTS, IRQ_SENSOR_FAULT_STUCK_INTX);
    g_assert(intx(s));
}

static void test_reset(void)
{
    Sensor *s = sensor_start("irq-mode=intx", NULL);
    QDict *resp;

    mess_up(s);
    wr32(s, IRQ_SENSOR_REG_CTRL, IRQ_SENSOR_CTRL_RESET);
    check_defaults(s);
    /* timers are stopped, the seq ring is cleared */
    step(s, 10 * 1000 * 1000);
    g_assert_cmpuint(rd64(s, IRQ_SENSOR_REG_CNT_SAMPLES), ==, 0);
    ack(s, STAGE_THREAD, 1);
    g_assert_cmpuint(rd64(s, IRQ_SENSOR_REG_CNT_BAD_ACKS), ==, 1);
    fire(s);
    g_assert_cmpuint(head_seq(s), ==, 1);

    /* a machine reset resets the device the same way */
    mess_up(s);
    resp = qtest_qmp(s->qts, "{'execute':'system_reset'}");
    qobject_unref(resp);
    qtest_qmp_eventwait(s->qts, "RESET");
    sensor_map(s);              /* config space was reset too */
    check_defaults(s);
    step(s, 10 * 1000 * 1000);
    g_assert_cmpuint(rd64(s, IRQ_SENSOR_REG_CNT_SAMPLES), ==, 0);
    sensor_stop(s);
}

static void test_bad_input(void)
{
    Sensor *s = sensor_start(NULL, NULL);
    static const uint32_t unknown[] = {
        0x014, 0x074, 0x090, 0x0fc, 0x138, 0x1fc, 0x220, 0x27c, 0x500,
        0x800, 0xffc,
    };
    QDict *resp;
    int i;

    for (i = 0; i < ARRAY_SIZE(unknown); i++) {
        g_assert_cmphex(rd32(s, unknown[i]), ==, 0);
        wr32(s, unknown[i], 0xdeadbeef);
        g_assert_cmphex(rd32(s, unknown[i]), ==, 0);
    }
    g_assert_cmphex(rd64(s, 0x800), ==, 0);
    wr64(s, 0x800, ~0ULL);

    /* invalid knob values are ignored */
    wr32(s, IRQ_SENSOR_REG_MODE, IRQ_SENSOR_MODE_MAX + 1);
    wr32(s, IRQ_SENSOR_REG_MODE, 0xffffffff);
    wr64(s, IRQ_SENSOR_REG_PERIOD, 0);
    wr32(s, IRQ_SENSOR_REG_PERIOD, 0);
    wr32(s, IRQ_SENSOR_REG_PERIOD, 999);
    wr32(s, IRQ_SENSOR_REG_LATCH_DEPTH, 0);
    wr32(s, IRQ_SENSOR_REG_LATCH_DEPTH, 17);
    wr32(s, IRQ_SENSOR_REG_BURST_COUNT, 0);
    /* read-only registers */
    wr32(s, IRQ_SENSOR_REG_ID, 0);
    wr32(s, IRQ_SENSOR_REG_CAPS, 0);
    wr64(s, IRQ_SENSOR_REG_NOW, 0);
    wr64(s, IRQ_SENSOR_REG_CNT_SAMPLES, 1000);
    wr32(s, IRQ_SENSOR_REG_STATS(0) + IRQ_SENSOR_STATS_HIST, 5);
    /* reserved bits */
    wr32(s, IRQ_SENSOR_REG_CTRL, 0x7ffffc00);
    wr32(s, IRQ_SENSOR_REG_FAULTS, 0xfffffffe);
    check_defaults(s);
    g_assert_cmphex(rd32(s, IRQ_SENSOR_REG_ID), ==, IRQ_SENSOR_ID_MAGIC);

    /* garbage acks are only counted */
    ack(s, STAGE_HARD, 0xffffffff);
    ack(s, STAGE_USER, 0);
    g_assert_cmpuint(rd64(s, IRQ_SENSOR_REG_CNT_BAD_ACKS), ==, 2);

    /* and QEMU is still alive */
    resp = qtest_qmp(s->qts, "{'execute':'query-status'}");
    g_assert(qdict_haskey(resp, "return"));
    qobject_unref(resp);
    fire(s);
    g_assert_cmpuint(head_seq(s), ==, 1);
    sensor_stop(s);
}

static void test_reg64_halves(void)
{
    Sensor *s = sensor_start(NULL, NULL);
    uint32_t lo, hi;
    uint64_t t;

    /* two 4-byte writes, low word first */
    wr32(s, IRQ_SENSOR_REG_PERIOD, 0x23456789);
    wr32(s, IRQ_SENSOR_REG_PERIOD + 4, 0x1);
    g_assert_cmphex(rd64(s, IRQ_SENSOR_REG_PERIOD), ==, 0x123456789ULL);
    g_assert_cmphex(rd32(s, IRQ_SENSOR_REG_PERIOD), ==, 0x23456789);
    g_assert_cmphex(rd32(s, IRQ_SENSOR_REG_PERIOD + 4), ==, 0x1);
    /* one 4-byte write sets a 32-bit value */
    wr32(s, IRQ_SENSOR_REG_PERIOD, 50000);
    g_assert_cmphex(rd64(s, IRQ_SENSOR_REG_PERIOD), ==, 50000);
    wr32(s, IRQ_SENSOR_REG_DEADLINE, 0x10);
    wr32(s, IRQ_SENSOR_REG_DEADLINE + 4, 0x2);
    g_assert_cmphex(qom_get_uint(s, "deadline-ns"), ==, 0x200000010ULL);

    /* reading the low word latches the high word */
    t = now(s);
    lo = rd32(s, IRQ_SENSOR_REG_NOW);
    step(s, 1ULL << 33);
    hi = rd32(s, IRQ_SENSOR_REG_NOW + 4);
    g_assert_cmphex(((uint64_t)hi << 32) | lo, ==, t);
    hi = rd32(s, IRQ_SENSOR_REG_NOW + 4);
    g_assert_cmphex(hi, ==, (t + (1ULL << 33)) >> 32);
    sensor_stop(s);
}

static char *log_file(const char *dir, const char *name)
{
    return g_build_filename(dir, name, NULL);
}

static void test_log_format(void)
{
    g_autofree char *dir = g_dir_make_tmp("irq-sensor-XXXXXX", NULL);
    g_autofree char *path = log_file(dir, "log.jsonl");
    g_autofree char *got = NULL;
    g_autofree char *want = NULL;
    Sensor *s = sensor_start(NULL, path);
    int64_t t = now(s);

    qom_set_ok(s, "irq-enable", "true");
    wr32(s, IRQ_SENSOR_REG_LATCH_DEPTH, 2);
    wr32(s, IRQ_SENSOR_REG_CTRL, IRQ_SENSOR_CTRL_IRQ_EN | IRQ_SENSOR_CTRL_FIRE);
    step(s, 100);
    ack(s, STAGE_HARD, 1);
    ack(s, STAGE_HARD, 1);
    wr32(s, IRQ_SENSOR_REG_DROP_EVERY, 2);
    fire(s);
    fire(s);
    fire(s);
    wr64(s, IRQ_SENSOR_REG_DEADLINE, 1000);
    step(s, 1000);
    wr32(s, IRQ_SENSOR_REG_MODE, IRQ_SENSOR_MODE_PERIODIC);
    wr32(s, IRQ_SENSOR_REG_SPURIOUS_EVERY, 1);
    wr64(s, IRQ_SENSOR_REG_PERIOD, 5000);
    wr32(s, IRQ_SENSOR_REG_CTRL, IRQ_SENSOR_CTRL_IRQ_EN | IRQ_SENSOR_CTRL_RUN);
    step(s, 5000);
    wr32(s, IRQ_SENSOR_REG_CTRL, IRQ_SENSOR_CTRL_RESET);
    sensor_stop(s);

    want = g_strdup_printf(
        "{\"ev\":\"reset\",\"t\":0}\n"
        "{\"ev\":\"config\",\"t\":%1$" PRId64 ",\"key\":\"irq-enable\","
        "\"value\":true,\"src\":\"host\"}\n"
        "{\"ev\":\"config\",\"t\":%1$" PRId64 ",\"key\":\"latch-depth\","
        "\"value\":2,\"src\":\"guest\"}\n"
        "{\"ev\":\"raise\",\"t\":%1$" PRId64 ",\"seq\":1,"
        "\"value\":2654435761,\"irq\":true}\n"
        "{\"ev\":\"ack\",\"t\":%2$" PRId64 ",\"stage\":\"hard\",\"seq\":1,"
        "\"lat\":100}\n"
        "{\"ev\":\"bad_ack\",\"t\":%2$" PRId64 ",\"stage\":\"hard\","
        "\"seq\":1,\"why\":\"duplicate ack\"}\n"
        "{\"ev\":\"config\",\"t\":%2$" PRId64 ",\"key\":\"drop-every\","
        "\"value\":2,\"src\":\"guest\"}\n"
        "{\"ev\":\"raise\",\"t\":%2$" PRId64 ",\"seq\":2,"
        "\"value\":1013904226,\"irq\":false}\n"
        "{\"ev\":\"raise\",\"t\":%2$" PRId64 ",\"seq\":3,"
        "\"value\":3668339987,\"irq\":true}\n"
        "{\"ev\":\"lost\",\"t\":%2$" PRId64 ",\"seq\":2,"
        "\"why\":\"overflow\"}\n"
        "{\"ev\":\"raise\",\"t\":%2$" PRId64 ",\"seq\":4,"
        "\"value\":2027808452,\"irq\":false}\n"
        "{\"ev\":\"config\",\"t\":%2$" PRId64 ",\"key\":\"deadline-ns\","
        "\"value\":1000,\"src\":\"guest\"}\n"
        "{\"ev\":\"lost\",\"t\":%3$" PRId64 ",\"seq\":3,"
        "\"why\":\"deadline\"}\n"
        "{\"ev\":\"lost\",\"t\":%3$" PRId64 ",\"seq\":4,"
        "\"why\":\"deadline\"}\n"
        "{\"ev\":\"config\",\"t\":%3$" PRId64 ",\"key\":\"mode\","
        "\"value\":\"periodic\",\"src\":\"guest\"}\n"
        "{\"ev\":\"config\",\"t\":%3$" PRId64 ",\"key\":\"spurious-every\","
        "\"value\":1,\"src\":\"guest\"}\n"
        "{\"ev\":\"config\",\"t\":%3$" PRId64 ",\"key\":\"period-ns\","
        "\"value\":5000,\"src\":\"guest\"}\n"
        "{\"ev\":\"config\",\"t\":%3$" PRId64 ",\"key\":\"run\","
        "\"value\":true,\"src\":\"guest\"}\n"
        "{\"ev\":\"spurious\",\"t\":%4$" PRId64 "}\n"
        "{\"ev\":\"reset\",\"t\":%4$" PRId64 "}\n",
        t, t + 100, t + 1100, t + 6100);
    g_assert(g_file_get_contents(path, &got, NULL, NULL));
    g_assert_cmpstr(got, ==, want);
    g_assert_cmpuint(IRQ_SENSOR_SAMPLE_VALUE(2), ==, 1013904226u);
    g_assert_cmpuint(IRQ_SENSOR_SAMPLE_VALUE(3), ==, 3668339987u);
    g_assert_cmpuint(IRQ_SENSOR_SAMPLE_VALUE(4), ==, 2027808452u);
    g_unlink(path);
    g_rmdir(dir);
}

/* One scenario touching every mode and fault; the guest acks most samples */
static void determinism_scenario(Sensor *s)
{
    int i;

    qom_set_ok(s, "latch-depth", "2");
    wr64(s, IRQ_SENSOR_REG_DEADLINE, 12000);
    wr32(s, IRQ_SENSOR_REG_SEED, 7);
    wr64(s, IRQ_SENSOR_REG_PERIOD, 40000);
    wr32(s, IRQ_SENSOR_REG_SPURIOUS_EVERY, 5);
    wr32(s, IRQ_SENSOR_REG_DROP_EVERY, 4);
    wr32(s, IRQ_SENSOR_REG_MODE, IRQ_SENSOR_MODE_POISSON);
    wr32(s, IRQ_SENSOR_REG_CTRL, IRQ_SENSOR_CTRL_IRQ_EN | IRQ_SENSOR_CTRL_RUN);
    for (i = 0; i < 300; i++) {
        if (i == 100) {
            wr32(s, IRQ_SENSOR_REG_JITTER, 15000);
            wr32(s, IRQ_SENSOR_REG_MODE, IRQ_SENSOR_MODE_PERIODIC);
        } else if (i == 200) {
            qom_set_ok(s, "burst-count", "3");
            wr32(s, IRQ_SENSOR_REG_BURST_GAP, 2000);
            wr32(s, IRQ_SENSOR_REG_MODE, IRQ_SENSOR_MODE_BURST);
        } else if (i == 250) {
            wr32(s, IRQ_SENSOR_REG_BURST_GAP, 3000);
            qom_set_ok(s, "mode", "\"storm\"");
        }
        step(s, 7000 + (i % 5) * 1000);
        if ((rd32(s, IRQ_SENSOR_REG_STATUS) & IRQ_SENSOR_STATUS_SAMPLE) &&
            i % 4 != 3) {
            uint32_t seq = head_seq(s);

            ack(s, STAGE_HARD, seq);
            step(s, 500);
            ack(s, STAGE_THREAD, seq);
            if (i % 2) {
                step(s, 700);
                ack(s, STAGE_USER, seq);
            }
        }
        wr32(s, IRQ_SENSOR_REG_STATUS, IRQ_SENSOR_STATUS_SPURIOUS |
             IRQ_SENSOR_STATUS_LOST);
    }
    wr32(s, IRQ_SENSOR_REG_CTRL, 0);
}

static void test_determinism(void)
{
    g_autofree char *dir = g_dir_make_tmp("irq-sensor-XXXXXX", NULL);
    g_autofree char *p1 = log_file(dir, "run1.jsonl");
    g_autofree char *p2 = log_file(dir, "run2.jsonl");
    g_autofree char *l1 = NULL;
    g_autofree char *l2 = NULL;
    static const char *const events[] = {
        "\"ev\":\"raise\"", "\"irq\":false", "\"ev\":\"spurious\"",
        "\"stage\":\"hard\"", "\"stage\":\"thread\"", "\"stage\":\"user\"",
        "\"why\":\"deadline\"", "\"why\":\"overflow\"", "\"ev\":\"config\"",
    };
    gsize n1, n2;
    Sensor *s;
    int i;

    s = sensor_start(NULL, p1);
    determinism_scenario(s);
    sensor_stop(s);
    s = sensor_start(NULL, p2);
    determinism_scenario(s);
    sensor_stop(s);

    g_assert(g_file_get_contents(p1, &l1, &n1, NULL));
    g_assert(g_file_get_contents(p2, &l2, &n2, NULL));
    g_assert_cmpuint(n1, >, 1000);
    g_assert_cmpuint(n1, ==, n2);
    g_assert(memcmp(l1, l2, n1) == 0);
    for (i = 0; i < ARRAY_SIZE(events); i++) {
        if (!strstr(l1, events[i])) {
            g_test_message("no %s in the log", events[i]);
        }
        g_assert_nonnull(strstr(l1, events[i]));
    }
    g_unlink(p1);
    g_unlink(p2);
    g_rmdir(dir);
}

/*
 * Zero-gap generators re-arm at the current instant; under qtest (and
 * icount) the clock does not move inside a timer run.  The device must
 * still make progress: IRQ_SENSOR_INSTANT_MAX events, then a throttle.
 * Before the throttle, each clock_step below never returned.
 */
static void test_throttle_storm(void)
{
    Sensor *s = sensor_start(NULL, NULL);
    uint64_t irqs;

    wr32(s, IRQ_SENSOR_REG_BURST_GAP, 0);
    wr32(s, IRQ_SENSOR_REG_SPURIOUS_EVERY, 1);
    wr32(s, IRQ_SENSOR_REG_MODE, IRQ_SENSOR_MODE_STORM);
    wr32(s, IRQ_SENSOR_REG_CTRL, IRQ_SENSOR_CTRL_RUN | IRQ_SENSOR_CTRL_IRQ_EN);
    step(s, 10 * IRQ_SENSOR_THROTTLE_NS);
    irqs = rd64(s, IRQ_SENSOR_REG_CNT_SPURIOUS);
    /* at most INSTANT_MAX per instant, one instant per throttle step */
    g_assert_cmpuint(irqs, >=, IRQ_SENSOR_INSTANT_MAX);
    g_assert_cmpuint(irqs, <=, 11 * IRQ_SENSOR_INSTANT_MAX);
    g_assert_cmpuint(rd64(s, IRQ_SENSOR_REG_CNT_THROTTLED), >=, 10);
    g_assert_cmpuint(rd64(s, IRQ_SENSOR_REG_CNT_SAMPLES), ==, 0);
    sensor_stop(s);
}

static void test_throttle_burst(void)
{
    /* the runner's late-skip-ns: a held-back event is not the host's */
    Sensor *s = sensor_start("late-skip-ns=2000", NULL);
    uint64_t samples;

    wr64(s, IRQ_SENSOR_REG_PERIOD, 1000);
    wr32(s, IRQ_SENSOR_REG_BURST_COUNT, UINT32_MAX);
    wr32(s, IRQ_SENSOR_REG_BURST_GAP, 0);
    wr32(s, IRQ_SENSOR_REG_LATCH_DEPTH, 16);
    wr32(s, IRQ_SENSOR_REG_MODE, IRQ_SENSOR_MODE_BURST);
    wr32(s, IRQ_SENSOR_REG_CTRL, IRQ_SENSOR_CTRL_RUN);
    step(s, 1000 + 5 * IRQ_SENSOR_THROTTLE_NS);
    samples = rd64(s, IRQ_SENSOR_REG_CNT_SAMPLES);
    g_assert_cmpuint(samples, ==, 6 * IRQ_SENSOR_INSTANT_MAX);
    g_assert_cmpuint(rd64(s, IRQ_SENSOR_REG_CNT_THROTTLED), ==, 6);
    /* well past late-skip-ns behind its schedule, and not host-late */
    step(s, 10 * IRQ_SENSOR_THROTTLE_NS);
    g_assert_cmpuint(rd64(s, IRQ_SENSOR_REG_CNT_HOST_LATE), ==, 0);
    samples = rd64(s, IRQ_SENSOR_REG_CNT_SAMPLES);
    /* the registers still answer: the guest can stop it */
    wr32(s, IRQ_SENSOR_REG_CTRL, 0);
    step(s, 100000);
    g_assert_cmpuint(rd64(s, IRQ_SENSOR_REG_CNT_SAMPLES), ==, samples);
    sensor_stop(s);
}

/* The event log stops at log-max-bytes, and says so in its last line */
static void test_log_cap(void)
{
    g_autofree char *dir = g_dir_make_tmp("irq-sensor-XXXXXX", NULL);
    g_autofree char *path = log_file(dir, "log.jsonl");
    g_autofree char *got = NULL;
    g_auto(GStrv) lines = NULL;
    Sensor *s = sensor_start("log-max-bytes=2000,late-skip-ns=0", path);
    gsize len;
    int n;

    wr64(s, IRQ_SENSOR_REG_PERIOD, 1000);
    wr32(s, IRQ_SENSOR_REG_MODE, IRQ_SENSOR_MODE_PERIODIC);
    wr32(s, IRQ_SENSOR_REG_CTRL, IRQ_SENSOR_CTRL_RUN | IRQ_SENSOR_CTRL_IRQ_EN);
    step(s, 200 * 1000);
    g_assert_cmpuint(rd64(s, IRQ_SENSOR_REG_CNT_SAMPLES), ==, 200);
    sensor_stop(s);
    g_assert(g_file_get_contents(path, &got, &len, NULL));
    g_assert_cmpuint(len, <=, 2000 + 100);
    lines = g_strsplit(got, "\n", -1);
    n = g_strv_length(lines);
    g_assert_cmpint(n, >=, 3);
    g_assert_cmpstr(lines[n - 1], ==, "");
    g_assert_nonnull(strstr(lines[n - 2], "\"ev\":\"log_full\""));
    g_assert_null(strstr(lines[n - 3], "log_full"));
    g_unlink(path);
    g_rmdir(dir);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);

    qtest_add_func("irq-sensor/id", test_id);
    qtest_add_func("irq-sensor/machine-pc", test_machine_pc);
    qtest_add_func("irq-sensor/mode/manual", test_manual);
    qtest_add_func("irq-sensor/mode/periodic", test_periodic);
    qtest_add_func("irq-sensor/mode/periodic-on-time",
                   test_periodic_on_time_is_not_skipped);
    qtest_add_func("irq-sensor/mode/periodic-late",
                   test_periodic_late_is_skipped);
    qtest_add_func("irq-sensor/mode/periodic-jitter", test_periodic_jitter);
    qtest_add_func("irq-sensor/mode/poisson", test_poisson);
    qtest_add_func("irq-sensor/mode/burst", test_burst);
    qtest_add_func("irq-sensor/mode/storm", test_storm);
    qtest_add_func("irq-sensor/throttle/storm", test_throttle_storm);
    qtest_add_func("irq-sensor/throttle/burst", test_throttle_burst);
    qtest_add_func("irq-sensor/latch/overflow", test_latch_overflow);
    qtest_add_func("irq-sensor/latch/deadline", test_latch_deadline);
    qtest_add_func("irq-sensor/ack/stages", test_ack_stages);
    qtest_add_func("irq-sensor/ack/bad", test_ack_bad);
    qtest_add_func("irq-sensor/fault/spurious", test_spurious);
    qtest_add_func("irq-sensor/fault/dropped", test_dropped);
    qtest_add_func("irq-sensor/fault/stuck-intx", test_stuck_intx);
    qtest_add_func("irq-sensor/irq/intx", test_intx);
    qtest_add_func("irq-sensor/irq/msix", test_msix);
    qtest_add_func("irq-sensor/irq/msi", test_msi);
    qtest_add_func("irq-sensor/qom", test_qom);
    qtest_add_func("irq-sensor/clock-sync", test_clock_sync);
    qtest_add_func("irq-sensor/reset", test_reset);
    qtest_add_func("irq-sensor/bad-input", test_bad_input);
    qtest_add_func("irq-sensor/reg64-halves", test_reg64_halves);
    qtest_add_func("irq-sensor/log/format", test_log_format);
    qtest_add_func("irq-sensor/log/cap", test_log_cap);
    qtest_add_func("irq-sensor/determinism", test_determinism);

    return g_test_run();
}
